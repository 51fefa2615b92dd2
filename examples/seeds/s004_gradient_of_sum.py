"""Seed 004_b8d273961b668fdb.txt (older eager-mode tutorial), "Gradient tapes": the derivative
of z = (sum x)^2 with respect to x = ones((2, 2)) is 8.0 everywhere.

The seed's `assert` is at the same indentation as the inner `for`, an IndentationError; it
is written inside the inner loop, as intended. `tf.enable_eager_execution()` (TF 1.x setup)
is not needed: tracer is always eager.
"""

import tracer as tf

x = tf.ones((2, 2))
with tf.GradientTape() as t:
    t.watch(x)
    y = tf.reduce_sum(x)
    z = tf.multiply(y, y)

# Derivative of z with respect to the original input tensor x
dz_dx = t.gradient(z, x)
for i in [0, 1]:
    for j in [0, 1]:
        assert dz_dx[i][j].numpy() == 8.0
