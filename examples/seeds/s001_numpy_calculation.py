"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [18], "2. Did calculations
outside of TensorFlow": a numpy step breaks the gradient path."""

import numpy as np

import tracer as tf

x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)

with tf.GradientTape() as tape:
    x2 = x**2

    # This step is calculated with NumPy
    y = np.mean(x2, axis=0)

    # Like most ops, reduce_mean will cast the NumPy array to a constant tensor
    # using `tf.convert_to_tensor`.
    y = tf.reduce_mean(y, axis=0)

print(tape.gradient(y, x))
