"""Held-out: random draws in tf.data maps: a uniform noise added to each element, and
tf.image.random_flip_left_right as an augmentation, each drawn anew for every element and
epoch; `tf` = tensorflow or tracer (the first argument)."""

import numpy as np
from engine import tf, which

x = np.arange(12, dtype=np.float32).reshape(6, 2)
ds = (
    tf.data.Dataset.from_tensor_slices(x)
    .map(lambda v: v + tf.random.uniform((2,), 0, 0.1))
    .batch(3)
)
a = [b.numpy() for b in ds]
b = [b.numpy() for b in ds]
print(
    which,
    "epochs differ:",
    not np.array_equal(a[0], b[0]),
    "rows differ:",
    len({tuple(np.round(r - np.floor(r), 4)) for r in np.concatenate(a)}),
)


def aug(img):
    return tf.image.random_flip_left_right(img)


imgs = np.arange(2 * 4 * 4 * 1, dtype=np.float32).reshape(2, 4, 4, 1)
ds2 = tf.data.Dataset.from_tensor_slices(imgs).map(aug).batch(2)
flips = [int((bb.numpy()[0] != imgs[0]).any()) for _ in range(20) for bb in ds2]
print(which, "flip fraction over 20 epochs:", sum(flips) / len(flips))
