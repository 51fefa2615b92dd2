"""Seed 003_787b89f0f120e7e4.txt (TF 2.4 `tf.GradientTape` page), method `jacobian`: the jacobian
of y = x * x. The value is stated in a comment; the script asserts it.

The page's scrape lost the indentation of the `with` body; it is put back as in TensorFlow's
page.
"""

import numpy as np

import tracer as tf

with tf.GradientTape() as g:
    x = tf.constant([1.0, 2.0])
    g.watch(x)
    y = x * x
jacobian = g.jacobian(y, x)
# jacobian value is [[2., 0.], [0., 4.]]

np.testing.assert_allclose(jacobian.numpy(), [[2.0, 0.0], [0.0, 4.0]])
assert jacobian.shape == (2, 2)
