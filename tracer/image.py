"""`tt.image`: image ops, as in `tf.image`."""

import numpy as np

from tracer.ops import convert
from tracer.ops.array_ops import cast
from tracer.ops.conv_ops import extract_patches
from tracer.ops.math_ops import clip_by_value
from tracer.ops.reduction_ops import reduce_mean

__all__ = ["adjust_contrast", "extract_patches"]


def adjust_contrast(images, contrast_factor):
    """Each channel of each image moved away from its mean by `contrast_factor`:
    `(x - mean) * contrast_factor + mean`, the mean over the image's height and width (axes
    -3 and -2 of [..., height, width, channels]), as tf.image.adjust_contrast. Floating
    images are computed in their own dtype (TF computes float64 ones in float32), integer
    ones in float32, cast back and cut to their dtype's range."""
    images = convert.as_tensor(images)
    if len(images.shape) < 3:
        raise ValueError(
            "tt.image.adjust_contrast takes images [..., height, width, channels], not a "
            f"tensor of shape {list(images.shape)}"
        )
    dtype = images.dtype
    pixels = images if dtype.is_floating else cast(images, "float32")
    factor = cast(convert.as_tensor(contrast_factor), pixels.dtype)
    mean = reduce_mean(pixels, axis=[-3, -2], keepdims=True)
    adjusted = (pixels - mean) * factor + mean
    if dtype.is_floating:
        return adjusted
    if dtype.is_integer:
        limits = np.iinfo(dtype.as_numpy_dtype)
        adjusted = clip_by_value(adjusted, float(limits.min), float(limits.max))
    return cast(adjusted, dtype)
