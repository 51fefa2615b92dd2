"""Seed 002_7eeabeffb04482a9.txt (TF 1.x-era `tf.GradientTape` API page), nested tapes.

In this old example only the inner tape watches x. The seed's comment says the second
derivative "will compute to 2.0", but in TensorFlow 2.x (the contract, API.md "Details that
follow TensorFlow 2.x") an outer tape differentiates the inner gradient only if it watches x
itself, so d2y_dx2 is None. The script asserts the TF 2.x values: dy_dx == 6.0 and
d2y_dx2 is None.
"""

import numpy as np

import tracer as tf

x = tf.constant(3.0)
with tf.GradientTape() as g:
    with tf.GradientTape() as gg:
        gg.watch(x)
        y = x * x
    dy_dx = gg.gradient(y, x)  # Will compute to 6.0
d2y_dx2 = g.gradient(dy_dx, x)  # Will compute to 2.0 (TF 1.x); None in TF 2.x

np.testing.assert_allclose(dy_dx.numpy(), 6.0)
assert d2y_dx2 is None, d2y_dx2
