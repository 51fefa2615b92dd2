"""Images resampled through a projective transform, as TensorFlow's
ImageProjectiveTransformV3 samples them (what Keras's RandomRotation, RandomZoom and
RandomTranslation call through `keras.ops.image.affine_transform`).

Each image's transform is eight numbers [a0, a1, a2, b0, b1, b2, c0, c1] that map an output
pixel (x, y) (x the column, y the row) to the input point

    k = c0 x + c1 y + 1        x_in = (a0 x + a1 y + a2) / k        y_in = (b0 x + b1 y + b2) / k

(computed in float32 in that order; k == 0 reads the fill value). `fill_mode` maps a point
outside the image back onto it, one axis of n pixels at a time:

- "constant": not mapped; the pixels outside read `fill_value`.
- "nearest": clamped to [0, n - 1].
- "reflect": mirrored about the image's edges (d c b a | a b c d | d c b a), with period 2n.
- "wrap": shifted by n (a b c d | a b c d), as TensorFlow does it: the shift counts periods
  of n - 1 pixels, so a point more than one period out lands outside and is clamped
  (n = 5: x_in = 8 reads pixel 0, where a true modulo would read 3).

Reflected and wrapped points end clamped to [0, n - 1], so neither interpolates across the
seam. "nearest" interpolation reads the pixel at the point rounded half away from zero;
"bilinear" blends the four pixels around it, each outside pixel read as `fill_value` (which
only a "constant" point can reach with a weight that is not zero).

It is a composition of tracer's ops (elementwise arithmetic and `gather_nd` over the
batch), so it runs in every backend and differentiates with respect to the images; the
coordinates, made of floors and comparisons, carry no gradient.
"""

import numpy as np

from tracer.ops import math_ops
from tracer.ops.array_ops import cast, reshape, zeros_like
from tracer.ops.convert import as_tensor
from tracer.ops.scatter_nd_ops import gather_nd
from tracer.ops.structure_ops import stack

FILL_MODES = ("reflect", "wrap", "constant", "nearest")
INTERPOLATIONS = ("nearest", "bilinear")


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant",
                     fill_value=0.0):  # fmt: skip
    """`images` [batch, height, width, channels] (or one image [height, width, channels])
    resampled through `transform` ([batch, 8], one row for every image, or [8])."""
    if interpolation not in INTERPOLATIONS:
        raise ValueError(
            f"affine_transform: interpolation must be one of {INTERPOLATIONS}, not "
            f"{interpolation!r}"
        )
    if fill_mode not in FILL_MODES:
        raise ValueError(
            f"affine_transform: fill_mode must be one of {FILL_MODES}, not {fill_mode!r}"
        )
    images = as_tensor(images)
    if images.ndim not in (3, 4):
        raise ValueError(
            f"affine_transform: images must have rank 3 or 4 (height, width, channels), not "
            f"shape {tuple(images.shape)}"
        )
    if images.ndim == 3:
        out = affine_transform(images[None], transform, interpolation, fill_mode, fill_value)
        return out[0]
    height, width = images.shape[1], images.shape[2]
    if not isinstance(height, int) or not isinstance(width, int):
        raise ValueError(
            "affine_transform: the images' height and width must be known when the function "
            f"is traced, not {tuple(images.shape)}"
        )
    transform = cast(as_tensor(transform), "float32")
    if transform.ndim == 1:
        transform = transform[None]
    if transform.ndim != 2 or transform.shape[1] != 8:
        raise ValueError(
            f"affine_transform: transform must have shape [batch, 8] or [8], not "
            f"{tuple(transform.shape)}"
        )
    x_in, y_in, defined = _sampled_points(images, transform, height, width)
    x_in = _mapped(x_in, width, fill_mode)
    y_in = _mapped(y_in, height, fill_mode)
    fill = cast(as_tensor(fill_value), images.dtype)
    if interpolation == "nearest":
        out = _read(images, _round_half_away(y_in), _round_half_away(x_in), fill)
    else:
        x0, y0 = math_ops.floor(x_in), math_ops.floor(y_in)
        fx, fy = (x_in - x0)[..., None], (y_in - y0)[..., None]
        fx, fy = cast(fx, images.dtype), cast(fy, images.dtype)
        top = (1.0 - fx) * _read(images, y0, x0, fill) + fx * _read(images, y0, x0 + 1.0, fill)
        bottom = (1.0 - fx) * _read(images, y0 + 1.0, x0, fill) + fx * _read(
            images, y0 + 1.0, x0 + 1.0, fill
        )
        out = (1.0 - fy) * top + fy * bottom
    return math_ops.where(defined[..., None], out, fill)


def _sampled_points(images, transform, height, width):
    """(x_in, y_in, defined), each [batch, height, width]: the input point of every output
    pixel, and whether its k is not zero."""
    x = as_tensor(np.arange(width, dtype=np.float32).reshape(1, 1, width))
    y = as_tensor(np.arange(height, dtype=np.float32).reshape(1, height, 1))
    rows = [reshape(transform[:, i], (-1, 1, 1)) for i in range(8)]
    a0, a1, a2, b0, b1, b2, c0, c1 = rows
    k = (c0 * x + c1 * y) + 1.0
    batch = cast(zeros_like(images[:, :1, :1, 0]), "float32")  # [batch, 1, 1]: per image
    defined = math_ops.not_equal(k + batch, 0.0)
    k = math_ops.where(defined, k + batch, 1.0)
    x_in = ((a0 * x + a1 * y) + a2) / k
    y_in = ((b0 * x + b1 * y) + b2) / k
    return x_in + batch, y_in + batch, defined


def _mapped(c, n, fill_mode):
    """The coordinates `c` of an axis of `n` pixels, mapped back onto it by `fill_mode`."""
    if fill_mode == "constant":
        return c
    last = float(n - 1)
    if fill_mode == "nearest" or n <= 1:
        return math_ops.clip_by_value(c, 0.0, last)
    if fill_mode == "reflect":
        period = float(2 * n)
        below = c + period * math_ops.floor(-c / period)
        below = math_ops.where(below < -float(n), below + period, -below - 1.0)
        above = c - period * math_ops.floor(c / period)
        above = math_ops.where(above >= float(n), period - above - 1.0, above)
    else:  # wrap
        below = c + float(n) * (math_ops.floor(-c / last) + 1.0)
        above = c - float(n) * math_ops.floor(c / last)
    mapped = math_ops.where(c < 0.0, below, math_ops.where(c > last, above, c))
    return math_ops.clip_by_value(mapped, 0.0, last)


def _round_half_away(c):
    """C's `round`: halves away from zero (the fraction compared with 1/2, which is exact,
    where adding 1/2 first would round -0.49999997 to -1)."""
    size = abs(c)
    whole = math_ops.floor(size)
    whole = math_ops.where(size - whole >= 0.5, whole + 1.0, whole)
    return math_ops.where(c < 0.0, -whole, whole)


def _read(images, rows, columns, fill):
    """images[b, rows, columns] ([batch, height, width, channels]) where (rows, columns),
    whole numbers held as floats, fall inside the image; `fill` elsewhere."""
    height, width = images.shape[1], images.shape[2]
    inside = math_ops.logical_and(
        math_ops.logical_and(rows >= 0.0, rows <= float(height - 1)),
        math_ops.logical_and(columns >= 0.0, columns <= float(width - 1)),
    )
    rows = cast(math_ops.clip_by_value(rows, 0.0, float(height - 1)), "int32")
    columns = cast(math_ops.clip_by_value(columns, 0.0, float(width - 1)), "int32")
    values = gather_nd(images, stack([rows, columns], axis=-1), batch_dims=1)
    return math_ops.where(inside[..., None], values, fill)
