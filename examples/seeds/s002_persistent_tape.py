"""Two gradients from one persistent tape, after which the tape is dropped (seed 002, the TF
1.x-era `GradientTape` page, persistent tapes). The seed states the values in comments; the
script asserts them."""

import tracer as tt

point = tt.constant(3.0)
with tt.GradientTape(persistent=True) as tape:
    tape.watch(point)
    squared = point * point
    fourth = squared * squared

grad_fourth = tape.gradient(fourth, point)  # 4 * 3**3
grad_square = tape.gradient(squared, point)  # 2 * 3
del tape  # a persistent tape keeps its recording until it is released

assert grad_fourth.numpy() == 108.0, grad_fourth
assert grad_square.numpy() == 6.0, grad_square
