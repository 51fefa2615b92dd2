"""A gradient taken with respect to a value computed on the tape rather than its input (seed
001, the autodiff guide notebook, cell In [15], intermediate results)."""

import tracer as tt

start = tt.constant(3.0)
with tt.GradientTape() as tape:
    tape.watch(start)
    middle = start * start
    end = middle * middle

# d(end)/d(middle) = 2 * middle = 18 at start = 3.
print(tape.gradient(end, middle).numpy())
