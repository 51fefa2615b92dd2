"""Seed 002_7eeabeffb04482a9.txt (TF 1.x-era `tf.GradientTape` API page), method
`stop_recording`: a gradient computed inside the context of a persistent tape, but not traced.

The seed leaves `model` and `compute_loss` undefined; here the model is a Dense layer
(`tf.keras.layers.Dense`) and the loss the mean of its squared
output. The script checks the gradients against the closed form, and that the gradient
computation was not recorded (its results have no gradient on the tape).
"""

import numpy as np

import tracer as tf

model = tf.keras.layers.Dense(2)
inputs = tf.constant([[1.0, 2.0, 3.0]])


def compute_loss(model):
    return tf.reduce_mean(model(inputs) ** 2)


with tf.GradientTape(persistent=True) as t:
    loss = compute_loss(model)
    with t.stop_recording():
        # The gradient computation below is not traced, saving memory.
        grads = t.gradient(loss, model.variables)

kernel, bias = (v.numpy() for v in model.variables)
x = inputs.numpy()
dl_dy = 2 * (x @ kernel + bias) / 2  # d mean(y**2) / dy for y of shape (1, 2)
np.testing.assert_allclose(grads[0].numpy(), x.T @ dl_dy, rtol=1e-5)
np.testing.assert_allclose(grads[1].numpy(), dl_dy.sum(axis=0), rtol=1e-5)
assert t.gradient(grads, model.variables) == [None, None]
