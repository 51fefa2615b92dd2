"""TensorFlow's advanced autodiff guide, "Multiple tapes" and "Higher-order gradients"
(with the input gradient regularization example), with only the import changed."""

import tracer as tf

x0 = tf.constant(0.0)
x1 = tf.constant(0.0)

with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
    tape0.watch(x0)
    tape1.watch(x1)

    y0 = tf.math.sin(x0)
    y1 = tf.nn.sigmoid(x1)

    y = y0 + y1

    ys = tf.reduce_sum(y)

dys_dx0 = tape0.gradient(ys, x0).numpy()
dys_dx1 = tape1.gradient(ys, x1).numpy()
print(dys_dx0)  # cos(x) => 1.0
print(dys_dx1)  # sigmoid(x1)*(1-sigmoid(x1)) => 0.25
assert dys_dx0 == 1.0 and dys_dx1 == 0.25

x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0

with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        y = x * x * x

    # Compute the gradient inside the outer `t2` context manager
    # which means the gradient computation is differentiable as well.
    dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)

print("dy_dx:", dy_dx.numpy())  # 3 * x**2 => 3.0
print("d2y_dx2:", d2y_dx2.numpy())  # 6 * x => 6.0
assert dy_dx.numpy() == 3.0 and d2y_dx2.numpy() == 6.0

# input gradient regularization
x = tf.random.normal([7, 5])

layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)

with tf.GradientTape() as t2:
    # The inner tape only takes the gradient with respect to the input,
    # not the variables.
    with tf.GradientTape(watch_accessed_variables=False) as t1:
        t1.watch(x)
        y = layer(x)
        out = tf.reduce_sum(layer(x) ** 2)
    # 1. Calculate the input gradient.
    g1 = t1.gradient(out, x)
    # 2. Calculate the magnitude of the input gradient.
    g1_mag = tf.norm(g1)

# 3. Calculate the gradient of the magnitude with respect to the model.
dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
print([var.shape for var in dg1_mag])
assert [var.shape for var in dg1_mag] == [(5, 10), (10,)]
