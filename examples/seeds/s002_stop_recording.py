"""Gradients taken inside `stop_recording()` of a persistent tape are not themselves recorded
(seed 002, the TF 1.x-era `GradientTape` page, method `stop_recording`).

The seed leaves the model and its loss abstract; here they are a Dense layer and the mean of
its squared outputs. The script checks the gradients against a hand-derived formula, and that
the tape cannot differentiate them.
"""

import numpy as np

import tracer as tt

layer = tt.keras.layers.Dense(2)
batch = tt.constant([[1.0, 2.0, 3.0]])


def mean_square_output(dense):
    return tt.reduce_mean(tt.square(dense(batch)))


with tt.GradientTape(persistent=True) as tape:
    cost = mean_square_output(layer)
    with tape.stop_recording():
        layer_grads = tape.gradient(cost, layer.variables)

# The cost averages y**2 over two outputs, so d(cost)/dy = y.
inputs = batch.numpy()
kernel, bias = (v.numpy() for v in layer.variables)
outputs = inputs @ kernel + bias
np.testing.assert_allclose(layer_grads[0].numpy(), inputs.T @ outputs, rtol=1e-5)
np.testing.assert_allclose(layer_grads[1].numpy(), outputs[0], rtol=1e-5)
assert tape.gradient(layer_grads, layer.variables) == [None, None]
