"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [20], "Getting a gradient of
None": a target that is not connected to the source."""

import tracer as tf

# When a target is not connected to a source you will get a gradient of None.
x = tf.Variable(2.0)
y = tf.Variable(3.0)

with tf.GradientTape() as tape:
    z = y * y
print(tape.gradient(z, x))
