"""Seed 000_d39a0e4e55900ac5.txt (the current `tf.GradientTape` reference page), section on
nested tapes: a second derivative from two nested tapes that both watch x."""

import tracer as tf

x = tf.constant(5.0)
with tf.GradientTape() as g:
    g.watch(x)
    with tf.GradientTape() as gg:
        gg.watch(x)
        y = x * x
    dy_dx = gg.gradient(y, x)  # dy_dx = 2 * x
d2y_dx2 = g.gradient(dy_dx, x)  # d2y_dx2 = 2
print(dy_dx)
print(d2y_dx2)
