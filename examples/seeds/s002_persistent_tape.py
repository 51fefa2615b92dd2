"""Seed 002_7eeabeffb04482a9.txt (TF 1.x-era `tf.GradientTape` API page), persistent tapes:
two gradient() calls, then `del g`. The values are stated in comments; the script asserts them."""

import numpy as np

import tracer as tf

x = tf.constant(3.0)
with tf.GradientTape(persistent=True) as g:
    g.watch(x)
    y = x * x
    z = y * y
dz_dx = g.gradient(z, x)  # 108.0 (4*x^3 at x = 3)
dy_dx = g.gradient(y, x)  # 6.0
del g  # Drop the reference to the tape

np.testing.assert_allclose(dz_dx.numpy(), 108.0)
np.testing.assert_allclose(dy_dx.numpy(), 6.0)
