"""TensorFlow's advanced autodiff guide, "Controlling gradient recording" (stop_recording,
reset) and "Stop gradient", and tf.recompute_grad, with only the import changed."""

import numpy as np

import tracer as tf

# stop_recording
x = tf.Variable(2.0)
y = tf.Variable(3.0)

with tf.GradientTape() as t:
    x_sq = x * x
    with t.stop_recording():
        y_sq = y * y
    z = x_sq + y_sq

grad = t.gradient(z, {"x": x, "y": y})

print("dz/dx:", grad["x"])  # 2*x => 4
print("dz/dy:", grad["y"])
assert grad["x"].numpy() == 4.0 and grad["y"] is None

# reset
reset = True

with tf.GradientTape() as t:
    y_sq = y * y
    if reset:
        # Throw out all the tape recorded so far.
        t.reset()
    z = x * x + y_sq

grad = t.gradient(z, {"x": x, "y": y})

print("dz/dx:", grad["x"])  # 2*x => 4
print("dz/dy:", grad["y"])
assert grad["x"].numpy() == 4.0 and grad["y"] is None

# stop_gradient
with tf.GradientTape() as t:
    y_sq = y**2
    z = x**2 + tf.stop_gradient(y_sq)

grad = t.gradient(z, {"x": x, "y": y})

print("dz/dx:", grad["x"])  # 2*x => 4
print("dz/dy:", grad["y"])
assert grad["x"].numpy() == 4.0 and grad["y"] is None

# recompute_grad: the tape keeps the block's input only; the backward computes it again


def block(x):
    for _ in range(4):
        x = tf.tanh(tf.matmul(x, kernel))
    return x


kernel = tf.Variable(tf.random.normal([16, 16], seed=1) * 0.3)
inputs = tf.random.normal([8, 16], seed=2)
checkpointed = tf.recompute_grad(block)

with tf.GradientTape() as tape:
    loss = tf.reduce_sum(checkpointed(checkpointed(inputs)))
recomputed = tape.gradient(loss, kernel)

with tf.GradientTape() as tape:
    loss = tf.reduce_sum(block(block(inputs)))
kept = tape.gradient(loss, kernel)

print("largest difference:", float(tf.reduce_max(tf.abs(recomputed - kept))))
np.testing.assert_allclose(recomputed.numpy(), kept.numpy(), rtol=1e-5, atol=1e-6)
