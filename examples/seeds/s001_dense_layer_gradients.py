"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [4], "Gradients w.r.t. a
model": gradients of a Dense layer's loss with respect to its trainable variables, as printed
in the seed (only the import changed).
"""

import tracer as tf

layer = tf.keras.layers.Dense(2, activation="relu")
x = tf.constant([[1.0, 2.0, 3.0]])

with tf.GradientTape() as tape:
    # Forward pass
    y = layer(x)
    loss = tf.reduce_mean(y**2)

# Calculate gradients with respect to every trainable variable
grad = tape.gradient(loss, layer.trainable_variables)

for var, g in zip(layer.trainable_variables, grad):
    print(f"{var.name}, shape: {g.shape}")
