"""Seed 003_787b89f0f120e7e4.txt (TF 2.4 `tf.GradientTape` page), first example: the gradient of
y = x * x at x = 3.0.

The page's scrape dropped the `with` line and the `gradient` call; they are put back as in
the same example in seed 000.
"""

import tracer as tf

x = tf.constant(3.0)
with tf.GradientTape() as g:
    g.watch(x)
    y = x * x
dy_dx = g.gradient(y, x)
print(dy_dx)
