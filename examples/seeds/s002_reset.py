"""Seed 002_7eeabeffb04482a9.txt (TF 1.x-era `tf.GradientTape` API page), method `reset`:
two equivalent blocks, a second tape context versus `t.reset()` inside one context.

The seed leaves `loss_fn`, `other_loss_fn` and the gradient's sources (`...`) undefined;
here they are a loss of w * w (gradient 4.0 at w = 2) and a loss of 3 * w (gradient 3.0),
so "only differentiates other_loss_fn, not loss_fn" means a gradient of 3.0, not 7.0.
"""

import numpy as np

import tracer as tf

w = tf.Variable(2.0)


def loss_fn():
    return w * w


def other_loss_fn():
    return 3.0 * w


with tf.GradientTape() as t:
    loss = loss_fn()
with tf.GradientTape() as t:
    loss += other_loss_fn()
grad_two_tapes = t.gradient(loss, w)  # Only differentiates other_loss_fn, not loss_fn


# The following is equivalent to the above
with tf.GradientTape() as t:
    loss = loss_fn()
    t.reset()
    loss += other_loss_fn()
grad_reset = t.gradient(loss, w)  # Only differentiates other_loss_fn, not loss_fn

np.testing.assert_allclose(grad_two_tapes.numpy(), 3.0)
np.testing.assert_allclose(grad_reset.numpy(), 3.0)
