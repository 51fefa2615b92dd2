"""Seed 002_7eeabeffb04482a9.txt (TF 1.x-era `tf.GradientTape` API page), method `reset`:
resetting inside control flow (`if loss > k: t.reset()`).

The seed's fragment leaves `loss` (`...`) and `k` undefined; here loss = w * w = 4.0 and
k = 1.0, so the tape is reset, and the gradient of the loss recorded before the reset is
None (the reset tape recorded nothing).
"""

import tracer as tf

w = tf.Variable(2.0)
k = 1.0

with tf.GradientTape() as t:
    loss = w * w
    if loss > k:
        t.reset()

grad = t.gradient(loss, w)
assert grad is None, grad
