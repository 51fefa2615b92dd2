"""`tt.image`'s random augmentations: random_flip_left_right, random_flip_up_down,
random_brightness and random_contrast, as tf.image defines them.

Their draws are `tt.random.uniform`'s: eagerly numpy's, and inside a tt.function (a
tf.data map's function included) stateless draws of a seed that each call advances, so that
every call, every element of a dataset and every epoch draws anew (tracer/random.py). The
values are the plain ops' on the drawn flips and factors; the draws are tracer's stream, not
TensorFlow's.
"""

from tracer import random
from tracer.ops import image_ops, math_ops
from tracer.ops.array_ops import reshape
from tracer.ops.convert import as_tensor
from tracer.ops.layout_ops import reverse


def random_flip_left_right(image, seed=None):
    """`image` mirrored along its width with probability 1/2; each image of a batch
    [batch, height, width, channels] on its own draw."""
    return _random_flip(image, -2, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """`image` mirrored along its height with probability 1/2; each image of a batch
    [batch, height, width, channels] on its own draw."""
    return _random_flip(image, -3, seed, "random_flip_up_down")


def _random_flip(image, axis, seed, name):
    image = image_ops._images(image, name)
    count = image.shape[0] if image.ndim == 4 else 1
    flips = random.uniform((count,), 0, 1.0, seed=seed) < 0.5
    if image.ndim == 4:
        flips = reshape(flips, (count, 1, 1, 1))
    else:
        flips = reshape(flips, (1, 1, 1))
    return math_ops.where(flips, reverse(image, [image.ndim + axis]), image)


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("tt.image.random_brightness: max_delta must be non-negative.")
    delta = random.uniform((), -max_delta, max_delta, seed=seed)
    return image_ops.adjust_brightness(as_tensor(image), delta)


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("tt.image.random_contrast: upper must be > lower.")
    if lower < 0:
        raise ValueError("tt.image.random_contrast: lower must be non-negative.")
    factor = random.uniform((), lower, upper, seed=seed)
    return image_ops.adjust_contrast(as_tensor(image), factor)
