"""TensorFlow's advanced autodiff guide, "Custom gradients", and tf.custom_gradient's own
example, with only the import changed. The values the guide states are asserted."""

import tracer as tf


# Establish an identity operation, but clip during the gradient pass.
@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)

    return y, backward


v = tf.Variable(2.0)
with tf.GradientTape() as t:
    output = clip_gradients(v * v)
clipped = t.gradient(output, v)
print(clipped)  # calls "backward", which clips 4 to 2
assert clipped.numpy() == 2.0


# tf.custom_gradient's example: log(1 + e^x) with a gradient that is stable at x = 100
@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), grad


x = tf.constant(100.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = log1pexp(x)
dy_dx = tape.gradient(y, x)  # Will be 1.0 (not NaN)
print(dy_dx)
assert dy_dx.numpy() == 1.0


# the same, compiled: the gradient function is traced into the compiled step
@tf.function
def step(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    return tape.gradient(y, x)


assert step(x).numpy() == 1.0
