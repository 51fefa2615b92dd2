"""The derivative of (sum of x)**2 with respect to a (2, 2) tensor of ones is 2 * 4 = 8.0 in
every entry (seed 004, the older eager-mode tutorial, "Gradient tapes").

tracer always runs eagerly; the seed's TF 1.x setup call is not needed.
"""

import tracer as tt

ones = tt.ones((2, 2))
with tt.GradientTape() as tape:
    tape.watch(ones)
    total_squared = tt.square(tt.reduce_sum(ones))

grad_wrt_ones = tape.gradient(total_squared, ones)

assert grad_wrt_ones.numpy().tolist() == [[8.0, 8.0], [8.0, 8.0]], grad_wrt_ones
