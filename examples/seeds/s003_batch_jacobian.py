"""Seed 003_787b89f0f120e7e4.txt (TF 2.4 `tf.GradientTape` page), method `batch_jacobian`:
per-example jacobians of y = x * x. The value is stated in a comment; the script asserts it.

The page's scrape lost the indentation of the `with` body; it is put back as in TensorFlow's
page.
"""

import numpy as np

import tracer as tf

with tf.GradientTape() as g:
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    g.watch(x)
    y = x * x
batch_jacobian = g.batch_jacobian(y, x)
# batch_jacobian is [[[2,  0], [0,  4]], [[6,  0], [0,  8]]]

np.testing.assert_allclose(batch_jacobian.numpy(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])
assert batch_jacobian.shape == (2, 2, 2)
