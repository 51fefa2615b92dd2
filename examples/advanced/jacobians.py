"""TensorFlow's advanced autodiff guide, "Jacobians" and "Batch Jacobian", with only the
import changed (the plots left out): a scalar source, a layer's kernel as the source, a
Hessian of a layer's kernel, and batch jacobians against the full jacobian."""

import numpy as np

import tracer as tf

# scalar source
x = tf.linspace(-10.0, 10.0, 200 + 1)
delta = tf.Variable(0.0)

with tf.GradientTape() as tape:
    y = tf.nn.sigmoid(x + delta)

dy_dx = tape.jacobian(y, delta)
print(y.shape)
print(dy_dx.shape)
assert y.shape == (201,) and dy_dx.shape == (201,)

# tensor source
x = tf.random.normal([7, 5])
layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)

with tf.GradientTape(persistent=True) as tape:
    y = layer(x)

print(y.shape)
print(layer.kernel.shape)
j = tape.jacobian(y, layer.kernel)
print(j.shape)
g = tape.gradient(y, layer.kernel)
print("g.shape:", g.shape)

j_sum = tf.reduce_sum(j, axis=[0, 1])
delta = tf.reduce_max(abs(g - j_sum)).numpy()
assert delta < 1e-3
print("delta:", delta)
assert j.shape == (7, 10, 5, 10)

# Hessian of a layer's kernel
x = tf.random.normal([7, 5])
layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)

with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        x = layer1(x)
        x = layer2(x)
        loss = tf.reduce_mean(x**2)

    g = t1.gradient(loss, layer1.kernel)

h = t2.jacobian(g, layer1.kernel)
print(f"layer.kernel.shape: {layer1.kernel.shape}")
print(f"h.shape: {h.shape}")
assert h.shape == (5, 8, 5, 8)
n_params = tf.reduce_prod(layer1.kernel.shape)
h_mat = tf.reshape(h, [n_params, n_params])
np.testing.assert_allclose(h_mat.numpy(), h_mat.numpy().T, atol=1e-5)  # a Hessian is symmetric

# batch jacobian
x = tf.random.normal([7, 5])
layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
    tape.watch(x)
    y = layer1(x)
    y = layer2(y)

print(y.shape)
j = tape.jacobian(y, x)
print(j.shape)
j_sum = tf.reduce_sum(j, axis=2)
print(j_sum.shape)
jb = tape.batch_jacobian(y, x)
print(jb.shape)
error = tf.reduce_max(abs(jb - j_sum))
assert error < 1e-3
print(error.numpy())
