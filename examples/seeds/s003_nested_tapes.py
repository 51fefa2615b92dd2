"""Seed 003_787b89f0f120e7e4.txt (TF 2.4 `tf.GradientTape` page), nested tapes: a second
derivative from two nested tapes that both watch x.

The page's scrape dropped the two `with` lines; they are put back as in seed 000.
"""

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
