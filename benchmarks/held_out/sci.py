"""Held-out: scientific autodiff idioms: custom_gradient (a clipped gradient), a persistent
tape, jacobian and batch_jacobian, a hessian by nested tapes, tf.while_loop with a
TensorArray, stop_gradient; float64."""

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
x0 = tf.constant(rng.standard_normal(4))


@tf.custom_gradient
def clip_grad_norm(x):
    def grad(dy):
        return tf.clip_by_norm(dy, 1.0)

    return tf.identity(x), grad


def energy(x):
    return tf.reduce_sum(tf.sin(x) * tf.exp(-x * x / 4.0)) + 0.5 * tf.reduce_sum(x * x) ** 1.5


@tf.function
def rollout(x, steps):
    ta = tf.TensorArray(tf.float64, size=steps)
    for i in tf.range(steps):
        with tf.GradientTape() as tape:
            tape.watch(x)
            e = energy(clip_grad_norm(x))
        g = tape.gradient(e, x)
        x = x - 0.1 * g
        ta = ta.write(i, e)
    return x, ta.stack()


with tf.GradientTape(persistent=True) as outer:
    outer.watch(x0)
    with tf.GradientTape() as inner:
        inner.watch(x0)
        e = energy(x0)
    g = inner.gradient(e, x0)
    y = tf.stack([tf.reduce_sum(g * g), tf.reduce_sum(tf.stop_gradient(g) * x0)])
hess = outer.jacobian(g, x0)
jac = outer.jacobian(y, x0)
xb = tf.constant(rng.standard_normal((3, 4)))
with tf.GradientTape() as bt:
    bt.watch(xb)
    yb = tf.tanh(tf.matmul(xb, tf.constant(rng.standard_normal((4, 2)))))
bj = bt.batch_jacobian(yb, xb)
xf, es = rollout(x0, 25)
print(which, "hess", np.round(hess.numpy()[0], 6).tolist())
print(which, "jac ", np.round(jac.numpy(), 6).tolist()[1])
print(which, "bj  ", np.round(bj.numpy()[1, 0], 6).tolist())
print(which, "roll", np.round(es.numpy()[::6], 6).tolist(), np.round(xf.numpy(), 6).tolist())
