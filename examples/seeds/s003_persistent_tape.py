"""Seed 003_787b89f0f120e7e4.txt (TF 2.4 `tf.GradientTape` page), persistent tapes: two
gradient() calls on one persistent tape.

The page's scrape dropped the `with` line and the `dy_dx = g.gradient(y, x)` line; they are
put back as in seed 000.
"""

import tracer as tf

x = tf.constant(3.0)
with tf.GradientTape(persistent=True) as g:
    g.watch(x)
    y = x * x
    z = y * y
dz_dx = g.gradient(z, x)  # (4*x^3 at x = 3)
print(dz_dx)
dy_dx = g.gradient(y, x)
print(dy_dx)
