"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [19], "3. Took gradients
through an integer or string": an int32 source gets a None gradient."""

import tracer as tf

# The x0 variable has an `int` dtype.
x = tf.Variable([[2, 2], [2, 2]])

with tf.GradientTape() as tape:
    # The path to x1 is blocked by the `int` dtype here.
    y = tf.cast(x, tf.float32)
    y = tf.reduce_sum(x)

print(tape.gradient(y, x))
