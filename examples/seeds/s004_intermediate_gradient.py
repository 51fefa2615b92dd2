"""A gradient with respect to an intermediate value: d(s**2)/ds = 8.0 for s, the sum of a (2, 2)
tensor of ones (seed 004, the older eager-mode tutorial, "Gradient tapes")."""

import tracer as tt

ones = tt.ones((2, 2))
with tt.GradientTape() as tape:
    tape.watch(ones)
    total = tt.reduce_sum(ones)  # kept by name, to differentiate with respect to it
    total_squared = total**2

grad_wrt_total = tape.gradient(total_squared, total)

assert grad_wrt_total.numpy() == 8.0, grad_wrt_total
