"""Seed 002_7eeabeffb04482a9.txt (TF 1.x-era `tf.GradientTape` API page), first example:
the gradient of y = x * x at x = 3.0. The seed only states the value in a comment, so the
script asserts it."""

import numpy as np

import tracer as tf

x = tf.constant(3.0)
with tf.GradientTape() as g:
    g.watch(x)
    y = x * x
dy_dx = g.gradient(y, x)  # Will compute to 6.0

np.testing.assert_allclose(dy_dx.numpy(), 6.0)
