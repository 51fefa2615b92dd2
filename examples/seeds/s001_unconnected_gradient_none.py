"""A gradient with respect to a variable the result does not depend on is None (seed 001, the
autodiff guide notebook, cell In [20], getting a gradient of None)."""

import tracer as tt

unused = tt.Variable(2.0)
used = tt.Variable(3.0)

with tt.GradientTape() as tape:
    result = used * used

print(tape.gradient(result, unused))
