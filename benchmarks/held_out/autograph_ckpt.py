"""Held-out: autograph (a Python for over tf.range with an if on a tensor, a while with
break), tf.TensorSpec(None) signatures, tf.print, tf.train.Checkpoint with a
CheckpointManager restoring mid-training."""

import tempfile

import numpy as np
from engine import tf, which


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def collatz_like(x):
    total = tf.constant(0.0)
    for i in tf.range(tf.shape(x)[0]):
        if x[i] > 0:
            total += x[i] * 2.0
        else:
            total -= x[i]
    n = tf.constant(0)
    while total > 1.0:
        total = total / 2.0
        n += 1
        if n > 50:
            break
    return total, n


print(
    which,
    [np.round(v.numpy(), 5).tolist() for v in collatz_like(tf.constant([1.0, -2.0, 3.5]))],
    [
        np.round(v.numpy(), 5).tolist()
        for v in collatz_like(tf.constant([0.25, -0.1, 7.0, 8.0, -9.0]))
    ],
)

w = tf.Variable(np.ones(3, np.float32))
opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
ckpt = tf.train.Checkpoint(w=w, opt=opt)
folder = tempfile.mkdtemp()
manager = tf.train.CheckpointManager(ckpt, folder, max_to_keep=2)


@tf.function
def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum((w - tf.constant([1.0, 2.0, 3.0])) ** 2)
    opt.apply_gradients([(tape.gradient(loss, w), w)])
    return loss


for i in range(6):
    step()
    if i % 2 == 1:
        manager.save()
saved = w.numpy().copy()
for _ in range(3):
    step()
ckpt.restore(manager.latest_checkpoint)
print(
    which,
    "restored equal:",
    np.allclose(w.numpy(), saved),
    "kept:",
    len(manager.checkpoints),
    f"next loss {float(step()):.6f}",
)
