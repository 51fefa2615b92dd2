"""An integer variable gets no gradient: integer values are not differentiable (seed 001, the
autodiff guide notebook, cell In [19], the third cause of a None gradient)."""

import tracer as tt

counts = tt.Variable([[2, 2], [2, 2]])  # int32

with tt.GradientTape() as tape:
    total = tt.reduce_sum(counts)

print(tape.gradient(total, counts))
