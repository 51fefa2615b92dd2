"""A tape built with `watch_accessed_variables=False` that watches one of two variables, with
the sources given as a dict (seed 001, the autodiff guide notebook, cell In [14])."""

import tracer as tt

left = tt.Variable(0.0)
right = tt.Variable(10.0)

with tt.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(right)
    total = tt.reduce_sum(tt.math.sin(left) + tt.nn.softplus(right))

grads = tape.gradient(total, {"x0": left, "x1": right})
for key in ("x0", "x1"):
    found = grads[key]
    print(f"dy/d{key}:", found if found is None else found.numpy())
