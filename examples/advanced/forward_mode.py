"""tf.autodiff.ForwardAccumulator's documented examples, with only the import changed:
a Jacobian-vector product of a Dense layer's loss, and a Hessian-vector product by
forward-over-backward."""

import numpy as np

import tracer as tf

x = tf.constant([[2.0, 3.0], [1.0, 4.0]])
targets = tf.constant([[1.0], [-1.0]])
dense = tf.keras.layers.Dense(1)
dense.build([None, 2])
with tf.autodiff.ForwardAccumulator(
    primals=dense.kernel, tangents=tf.constant([[1.0], [0.0]])
) as acc:
    loss = tf.reduce_sum((dense(x) - targets) ** 2.0)
print(acc.jvp(loss))
# d loss / d kernel[0] = sum(2 (dense(x) - targets) x[:, 0])
residual = x.numpy() @ dense.kernel.numpy() + dense.bias.numpy() - targets.numpy()
np.testing.assert_allclose(
    acc.jvp(loss).numpy(), np.sum(2 * residual[:, 0] * x.numpy()[:, 0]), rtol=1e-5
)

v = tf.Variable([1.0, 2.0])
with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 3.0])) as acc:
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v**3.0)
    backward = tape.gradient(y, v)
print(backward)  # gradient from backprop
print(acc.jvp(backward))  # forward-over-backward Hessian-vector product
np.testing.assert_allclose(backward.numpy(), [3.0, 12.0])
np.testing.assert_allclose(acc.jvp(backward).numpy(), [6.0, 36.0])

# the functional form, and the product compiled
print(tf.jvp(lambda x: x * x, [tf.constant(3.0)], [tf.constant(1.0)]))


@tf.function
def hvp(v, direction):
    with tf.autodiff.ForwardAccumulator(v, direction) as acc:
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = tf.reduce_sum(v**3.0)
        backward = tape.gradient(y, v)
    return acc.jvp(backward)


np.testing.assert_allclose(
    hvp(tf.constant([1.0, 2.0]), tf.constant([1.0, 3.0])).numpy(), [6.0, 36.0]
)
