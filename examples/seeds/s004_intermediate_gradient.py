"""Seed 004_b8d273961b668fdb.txt (older eager-mode tutorial), "Gradient tapes": the derivative of
z with respect to the intermediate value y = sum(x)."""

import tracer as tf

x = tf.ones((2, 2))
with tf.GradientTape() as t:
    t.watch(x)
    y = tf.reduce_sum(x)
    z = tf.multiply(y, y)

# Use the tape to compute the derivative of z with respect to the
# intermediate value y.
dz_dy = t.gradient(z, y)
assert dz_dy.numpy() == 8.0
