"""A persistent tape over a two-element vector, asked for two gradients in turn (seed 001, the
autodiff guide notebook, cell In [16])."""

import tracer as tt

values = tt.constant([1.0, 3.0])
with tt.GradientTape(persistent=True) as tape:
    tape.watch(values)
    squares = values * values
    fourths = squares * squares

for target in (fourths, squares):
    print(tape.gradient(target, values).numpy())
