"""Gradients of a cost with respect to all trainable variables of a Keras-style Dense layer,
listed by variable name (seed 001, the autodiff guide notebook, cell In [4], gradients with
respect to a model)."""

import tracer as tt

dense = tt.keras.layers.Dense(2, activation="relu")
batch = tt.constant([[1.0, 2.0, 3.0]])

with tt.GradientTape() as tape:
    cost = tt.reduce_mean(tt.square(dense(batch)))

params = dense.trainable_variables
for param, param_grad in zip(params, tape.gradient(cost, params)):
    print(param.name + ", shape:", param_grad.shape)
