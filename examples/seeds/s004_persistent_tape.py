"""Seed 004_b8d273961b668fdb.txt (older eager-mode tutorial), "Gradient tapes": a persistent tape
with two gradient() calls. The values are stated in comments; the script asserts them."""

import numpy as np

import tracer as tf

x = tf.constant(3.0)
with tf.GradientTape(persistent=True) as t:
    t.watch(x)
    y = x * x
    z = y * y
dz_dx = t.gradient(z, x)  # 108.0 (4*x^3 at x = 3)
dy_dx = t.gradient(y, x)  # 6.0
del t  # Drop the reference to the tape

np.testing.assert_allclose(dz_dx.numpy(), 108.0)
np.testing.assert_allclose(dy_dx.numpy(), 6.0)
