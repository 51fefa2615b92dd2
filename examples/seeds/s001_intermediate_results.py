"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [15], "Intermediate
results": the gradient of z with respect to the intermediate value y."""

import tracer as tf

x = tf.constant(3.0)

with tf.GradientTape() as tape:
    tape.watch(x)
    y = x * x
    z = y * y

# Use the tape to compute the gradient of z with respect to the
# intermediate value y.
# dz_dx = 2 * y, where y = x ** 2
print(tape.gradient(z, y).numpy())
