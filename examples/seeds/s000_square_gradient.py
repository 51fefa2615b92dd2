"""Seed 000_d39a0e4e55900ac5.txt (the current `tf.GradientTape` reference page), first example:
the gradient of y = x * x at x = 3.0, with `watch` on a constant."""

import tracer as tf

x = tf.constant(3.0)
with tf.GradientTape() as g:
    g.watch(x)
    y = x * x
dy_dx = g.gradient(y, x)
print(dy_dx)
