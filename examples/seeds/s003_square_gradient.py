"""The derivative of a square at 3.0, from a tape that watches a constant (seed 003, the TF 2.4
`tf.GradientTape` page, its first example)."""

import tracer as tt

point = tt.constant(3.0)
tape = tt.GradientTape()
with tape:
    tape.watch(point)
    area = tt.square(point)

print(tape.gradient(area, point))
