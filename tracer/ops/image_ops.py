"""`tt.image`'s ops, as TensorFlow 2.21's `tf.image`: compositions of existing primitives
(reverse, transpose, slices, pad, gather, casts and arithmetic), so their gradients, batching
and C come from those. docs/image.md lists what exists and where tracer differs.

Images are [height, width, channels] or a batch [batch, height, width, channels]. Sizes,
offsets and `k` are Python ints (or eager tensors): the crops, pads and resizes compute
their indices and weights from the image's static height and width while they are traced.

Floating images are [0, 1) and integer ones [0, MAX] (`convert_image_dtype`); the
adjustments (brightness, contrast, grayscale) compute float16 and float32 images in their
own dtype and every other dtype in float32, converting back as TensorFlow does (so a float64
image is adjusted with float32's precision, as in TensorFlow).
"""

import numpy as np

from tracer import dtypes
from tracer.dtypes import as_dtype
from tracer.ops import dynamic_slices, resize_weights
from tracer.ops.array_ops import cast, expand_dims, squeeze
from tracer.ops.array_ops import transpose as _transpose
from tracer.ops.broadcast_ops import tile
from tracer.ops.convert import as_tensor
from tracer.ops.einsum_ops import einsum
from tracer.ops.index_ops import gather
from tracer.ops.layout_ops import pad, reverse
from tracer.ops.math_composites import tensordot
from tracer.ops.math_ops import clip_by_value, floordiv, maximum, rsqrt
from tracer.ops.reduction_ops import reduce_mean, reduce_std
from tracer.tensor import Tensor, convert_to_tensor

# --- shapes and arguments -------------------------------------------------------------------


def _images(image, function, ranks=(3, 4)):
    """`image` as a tensor of rank 3 or 4 (`ranks`), or ValueError naming `function`."""
    image = as_tensor(image)
    if image.ndim < 3:
        raise ValueError(
            f"tt.image.{function}: 'image' (shape {list(image.shape)}) must be at least "
            "three-dimensional: [height, width, channels] or [batch, height, width, channels]"
        )
    if image.ndim not in ranks:
        raise ValueError(
            f"tt.image.{function}: 'image' (shape {list(image.shape)}) must have either 3 or "
            "4 dimensions"
        )
    return image


def _static_size(image, axis, function):
    """The static size of `image`'s axis `axis` (a trace may leave it symbolic)."""
    size = image.shape[axis]
    if not isinstance(size, (int, np.integer)):
        raise ValueError(
            f"tt.image.{function} needs the image's height and width when it is traced, not "
            f"shape {list(image.shape)}: give the tt.function an input_signature with them"
        )
    return int(size)


def _height_width(image, function):
    return _static_size(image, -3, function), _static_size(image, -2, function)


def _python_int(value, what, function):
    """A Python int for `value` (an int, a numpy integer or an eager integer tensor)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"tt.image.{function}: {what} must be an integer, not {value!r}")
    if isinstance(value, (int, np.integer)):
        return int(value)
    tensor = as_tensor(value)
    if tensor._value is None:
        raise ValueError(
            f"tt.image.{function}: {what} must be known when the function is traced (a "
            "Python int), not a tensor computed in the trace"
        )
    if not tensor.dtype.is_integer or tensor.ndim != 0:
        raise TypeError(f"tt.image.{function}: {what} must be a scalar integer, not {tensor}")
    return int(tensor._value)


def _check(condition, function, message):
    """TensorFlow's `_assert` on static values: a ValueError with its message."""
    if not condition:
        raise ValueError(f"tt.image.{function}: {message}")


def _limits(dtype):
    """(min, max) of a numeric dtype, as `tf.DType.min` and `.max`."""
    info = np.iinfo if dtype.is_integer else np.finfo
    limits = info(dtype.as_numpy_dtype)
    return limits.min, limits.max


# --- dtype conversion -------------------------------------------------------------------------


def _saturate_cast(value, dtype):
    """`value` clamped to what `dtype` holds, then cast (tf.saturate_cast): the limits are
    written in value's dtype and nudged toward zero where they round outside `dtype`'s range
    (float32's nearest to int32's max is 2^31, so int32 saturates at 2147483520)."""
    in_np = value.dtype.as_numpy_dtype
    (in_min, in_max), (out_min, out_max) = _limits(value.dtype), _limits(dtype)
    promoted = np.promote_types(in_np, dtype.as_numpy_dtype)
    low = in_np(np.maximum(in_min, out_min))
    if np.array([low, out_min], promoted)[0] < np.array([low, out_min], promoted)[1]:
        low = np.nextafter(low, in_np(0), dtype=in_np)
    high = in_np(np.minimum(float(in_max), float(out_max)))
    if np.array([high, out_max], promoted)[0] > np.array([high, out_max], promoted)[1]:
        high = np.nextafter(high, in_np(0), dtype=in_np)
    low = convert_to_tensor(np.asarray(low, in_np), value.dtype)
    high = convert_to_tensor(np.asarray(high, in_np), value.dtype)
    return cast(clip_by_value(value, low, high), dtype)


def _constant(value, dtype):
    return convert_to_tensor(np.asarray(value, dtype.as_numpy_dtype), dtype)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """`image` converted to `dtype`, scaled between the ranges images have: [0, 1) for
    floating dtypes, [0, MAX] for integer ones (as tf.image.convert_image_dtype).

    Integer to floating multiplies by 1 / MAX; floating to integer by MAX + 0.5, then casts
    (truncating). Integer to integer divides (floor) or multiplies by the ratio of the two
    ranges. `saturate` clamps to `dtype`'s range before a cast that could overflow (floating
    to integer, or to a narrower integer); without it such a cast wraps as tf.cast does.

    >>> tt.image.convert_image_dtype(tt.constant([0, 51, 255], tt.uint8), tt.float32).numpy()
    array([0.        , 0.20000002, 1.        ], dtype=float32)
    """
    image = as_tensor(image)
    dtype = as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError(
            f"tt.image.convert_image_dtype: dtype must be either floating point or integer, "
            f"not {dtype.name}"
        )
    source = image.dtype
    if not (source.is_floating or source.is_integer):
        raise AttributeError(
            f"tt.image.convert_image_dtype: image dtype must be either floating point or "
            f"integer, not {source.name}"
        )
    if source == dtype:
        return image
    if source.is_integer and dtype.is_integer:
        scale_in, scale_out = int(_limits(source)[1]), int(_limits(dtype)[1])
        if scale_in > scale_out:
            scaled = floordiv(image, _constant((scale_in + 1) // (scale_out + 1), source))
            return _saturate_cast(scaled, dtype) if saturate else cast(scaled, dtype)
        widened = _saturate_cast(image, dtype) if saturate else cast(image, dtype)
        return widened * _constant((scale_out + 1) // (scale_in + 1), dtype)
    if source.is_floating and dtype.is_floating:
        return cast(image, dtype)
    if source.is_integer:  # the Python double 1 / MAX, rounded to dtype
        return cast(image, dtype) * _constant(1.0 / float(_limits(source)[1]), dtype)
    scaled = image * _constant(float(_limits(dtype)[1]) + 0.5, source)
    return _saturate_cast(scaled, dtype) if saturate else cast(scaled, dtype)


def _as_float(image):
    """The image the float adjustments work on: float16 and float32 as they are, others
    converted to float32 (scaled, for integers)."""
    if image.dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


# --- flips, rotations, transposition ---------------------------------------------------------


def flip_left_right(image):
    """`image` mirrored along its width: [h, w, c] or [batch, h, w, c].

    >>> tt.image.flip_left_right(tt.constant([[[1.0], [2.0]]])).numpy()[..., 0]
    array([[2., 1.]], dtype=float32)
    """
    image = _images(image, "flip_left_right")
    return reverse(image, [image.ndim - 2])


def flip_up_down(image):
    """`image` mirrored along its height: [h, w, c] or [batch, h, w, c]."""
    image = _images(image, "flip_up_down")
    return reverse(image, [image.ndim - 3])


def _swap_height_width(image):
    perm = [0, 2, 1, 3] if image.ndim == 4 else [1, 0, 2]
    return _transpose(image, perm)


def transpose(image, name=None):
    """`image` with height and width swapped: [h, w, c] -> [w, h, c] (batched alike)."""
    return _swap_height_width(_images(image, "transpose"))


def rot90(image, k=1, name=None):
    """`image` rotated counter-clockwise by `k` quarter turns (any int; taken modulo 4).
    `k` is a Python int or an eager tensor (TensorFlow also takes one computed in a graph).

    >>> tt.image.rot90(tt.reshape(tt.range(4.0), [2, 2, 1]))[..., 0].numpy()
    array([[1., 3.],
           [0., 2.]], dtype=float32)
    """
    image = _images(image, "rot90")
    k = _python_int(k, "k", "rot90") % 4
    height, width = image.ndim - 3, image.ndim - 2
    if k == 1:
        return _swap_height_width(reverse(image, [width]))
    if k == 2:
        return reverse(image, [height, width])
    if k == 3:
        return reverse(_swap_height_width(image), [width])
    return image


# --- crops and pads -----------------------------------------------------------------------


def _window(image, top, left, height, width):
    """image[..., top:top + height, left:left + width, :]: a slice, whose gradient pads."""
    return image[..., top : top + height, left : left + width, :]


def _box(image, offset_height, offset_width, target_height, target_width, name):
    """(image, its height and width, and the box's top, left, rows and columns as ints) for
    crop_to_bounding_box and pad_to_bounding_box."""
    image = _images(image, name)
    height, width = _height_width(image, name)
    top, left, rows, columns = (
        _python_int(value, what, name)
        for value, what in (
            (offset_height, "offset_height"),
            (offset_width, "offset_width"),
            (target_height, "target_height"),
            (target_width, "target_width"),
        )
    )
    return image, height, width, top, left, rows, columns


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The [target_height, target_width] window of `image` whose top-left corner is at
    (offset_height, offset_width), as tf.image.crop_to_bounding_box.

    >>> tt.image.crop_to_bounding_box(tt.zeros([5, 6, 3]), 1, 2, 3, 3).shape
    TensorShape([3, 3, 3])
    """
    name = "crop_to_bounding_box"
    if not (_known(offset_height) and _known(offset_width)):
        return _crop_at_run_time(image, offset_height, offset_width, target_height, target_width)
    image, height, width, top, left, rows, columns = _box(
        image, offset_height, offset_width, target_height, target_width, name
    )
    _check(left >= 0, name, "offset_width must be >= 0.")
    _check(top >= 0, name, "offset_height must be >= 0.")
    _check(columns > 0, name, "target_width must be > 0.")
    _check(rows > 0, name, "target_height must be > 0.")
    _check(width >= columns + left, name, "width must be >= target + offset.")
    _check(height >= rows + top, name, "height must be >= target + offset.")
    return _window(image, top, left, rows, columns)


def _known(value):
    return not isinstance(value, Tensor) or value._value is not None


def _crop_at_run_time(image, offset_height, offset_width, target_height, target_width):
    """crop_to_bounding_box with offsets computed while a traced function runs: a window of
    the target's size (known when tracing) at those offsets, checked when it runs."""
    name = "crop_to_bounding_box"
    image = _images(image, name)
    height, width = _height_width(image, name)
    rows = _python_int(target_height, "target_height", name)
    columns = _python_int(target_width, "target_width", name)
    _check(0 < rows <= height and 0 < columns <= width, name, "the target must fit in the image.")
    top, left = (cast(as_tensor(offset), dtypes.int32) for offset in (offset_height, offset_width))
    axis = image.ndim - 3
    return dynamic_slices.window(image, {axis: (top, rows), axis + 1: (left, columns)})


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`image` placed at (offset_height, offset_width) in a [target_height, target_width]
    image of zeros, as tf.image.pad_to_bounding_box."""
    name = "pad_to_bounding_box"
    image, height, width, top, left, rows, columns = _box(
        image, offset_height, offset_width, target_height, target_width, name
    )
    bottom, right = rows - top - height, columns - left - width
    _check(top >= 0, name, "offset_height must be >= 0")
    _check(left >= 0, name, "offset_width must be >= 0")
    _check(right >= 0, name, "width must be <= target - offset")
    _check(bottom >= 0, name, "height must be <= target - offset")
    paddings = [[0, 0]] * (image.ndim - 3) + [[top, bottom], [left, right], [0, 0]]
    return pad(image, paddings)


def central_crop(image, central_fraction):
    """The central `central_fraction` (in (0, 1]) of `image`'s height and width: the
    border cut on each side is int((size - size * fraction) / 2), as tf.image.central_crop."""
    name = "central_crop"
    image = as_tensor(image)
    fraction = float(central_fraction)
    _check(0.0 < fraction <= 1.0, name, "central_fraction must be within (0, 1]")
    if fraction == 1.0:
        return image
    image = _images(image, name)
    height, width = _height_width(image, name)
    top = int((float(height) - float(height) * fraction) / 2)
    left = int((float(width) - float(width) * fraction) / 2)
    return _window(image, top, left, height - 2 * top, width - 2 * left)


def _sized(image, target_height, target_width, name):
    """(images, height, width, target rows, target columns), the targets checked positive."""
    image = _images(image, name)
    height, width = _height_width(image, name)
    rows = _python_int(target_height, "target_height", name)
    columns = _python_int(target_width, "target_width", name)
    _check(columns > 0, name, "target_width must be > 0.")
    _check(rows > 0, name, "target_height must be > 0.")
    return image, height, width, rows, columns


def resize_with_crop_or_pad(image, target_height, target_width):
    """`image` cut or padded with zeros (evenly on both sides, the odd pixel after) to
    [target_height, target_width], as tf.image.resize_with_crop_or_pad."""
    image, height, width, rows, columns = _sized(
        image, target_height, target_width, "resize_with_crop_or_pad"
    )
    crop_top, crop_left = max((height - rows) // 2, 0), max((width - columns) // 2, 0)
    pad_top, pad_left = max((rows - height) // 2, 0), max((columns - width) // 2, 0)
    cropped = _window(image, crop_top, crop_left, min(rows, height), min(columns, width))
    return pad_to_bounding_box(cropped, pad_top, pad_left, rows, columns)


# --- color ------------------------------------------------------------------------------------

_RGB_WEIGHTS = np.array([0.2989, 0.5870, 0.1140], np.float32)


def rgb_to_grayscale(images, name=None):
    """The luma 0.2989 R + 0.5870 G + 0.1140 B of RGB `images` [..., 3], as [..., 1] of their
    dtype (computed in float32, integers scaled as by convert_image_dtype)."""
    images = as_tensor(images)
    if images.ndim < 1 or images.shape[-1] != 3:
        raise ValueError(
            f"tt.image.rgb_to_grayscale takes RGB images [..., 3], not shape {list(images.shape)}"
        )
    pixels = convert_image_dtype(images, dtypes.float32)
    gray = tensordot(pixels, _constant(_RGB_WEIGHTS, dtypes.float32), [[-1], [-1]])
    return convert_image_dtype(expand_dims(gray, -1), images.dtype)


def grayscale_to_rgb(images, name=None):
    """Grayscale `images` [..., 1] as RGB [..., 3]: the one channel three times."""
    images = as_tensor(images)
    if images.ndim < 2 or images.shape[-1] != 1:
        raise ValueError(
            "tt.image.grayscale_to_rgb takes grayscale images [..., 1] of rank at least 2, "
            f"not shape {list(images.shape)}"
        )
    return tile(images, [1] * (images.ndim - 1) + [3])


# the linear color transforms, each a 3 x 3 matrix (a row per channel in, a column per
# channel out), as TensorFlow 2.21's functions give them applied to the identity in float64
_COLOR_MATRICES = {
    "rgb_to_yuv": [
        [0.299, -0.14714119, 0.61497538],
        [0.587, -0.28886916, -0.51496512],
        [0.114, 0.43601035, -0.10001026],
    ],
    "yuv_to_rgb": [
        [1.0, 1.0, 1.0],
        [0.0, -0.394642334, 2.03206185],
        [1.13988303, -0.58062185, 0.0],
    ],
    "rgb_to_yiq": [
        [0.299, 0.59590059, 0.2115],
        [0.587, -0.27455667, -0.52273617],
        [0.114, -0.32134392, 0.31119955],
    ],
    "yiq_to_rgb": [
        [1.0, 1.0, 1.0],
        [0.95598634, -0.27201283, -1.10674021],
        [0.6208248, -0.64720424, 1.70423049],
    ],
}


def _color_transform(name):
    matrix = np.array(_COLOR_MATRICES[name])

    def transform(images, name=None):
        images = as_tensor(images)
        if not images.dtype.is_floating or images.ndim < 1 or images.shape[-1] != 3:
            raise ValueError(
                f"tt.image.{transform.__name__} takes float images [..., 3], not "
                f"{images.dtype.name} of shape {list(images.shape)}"
            )
        kernel = _constant(matrix.astype(images.dtype.as_numpy_dtype), images.dtype)
        return tensordot(images, kernel, [[-1], [0]])

    transform.__name__ = name
    transform.__doc__ = f"""`{name}` of float `images` [..., 3]: their last axis times
    TensorFlow's matrix for it."""
    return transform


rgb_to_yuv = _color_transform("rgb_to_yuv")
yuv_to_rgb = _color_transform("yuv_to_rgb")
rgb_to_yiq = _color_transform("rgb_to_yiq")
yiq_to_rgb = _color_transform("yiq_to_rgb")


# --- adjustments ----------------------------------------------------------------------------


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma, as tf.image.adjust_gamma: float16 and float32 images in their
    dtype, others converted to [0, 1) float32 first and saturated back; a gamma known to be
    negative is TensorFlow's ValueError."""
    image = as_tensor(image)
    known = as_tensor(gamma)._value
    if known is not None and np.any(known < 0):
        raise ValueError("Gamma should be a non-negative real number.")
    pixels = image if image.dtype in (dtypes.float16, dtypes.float32) else _as_float(image)
    gamma, gain = (cast(as_tensor(v), pixels.dtype) for v in (gamma, gain))
    return convert_image_dtype(gain * pixels**gamma, image.dtype, saturate=True)


def adjust_brightness(image, delta):
    """`delta` added to every value of `image` (integer images are converted to [0, 1)
    float32 first and saturated back), as tf.image.adjust_brightness.

    >>> tt.image.adjust_brightness(tt.constant([[[0.5]]]), 0.25).numpy().item()
    0.75
    """
    image = as_tensor(image)
    pixels = _as_float(image)
    adjusted = pixels + cast(as_tensor(delta), pixels.dtype)
    return convert_image_dtype(adjusted, image.dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """Each channel of each image moved away from its mean by `contrast_factor`:
    `(x - mean) * contrast_factor + mean`, the mean over the image's height and width (axes
    -3 and -2 of [..., height, width, channels]), as tf.image.adjust_contrast. float16 and
    float32 images are computed in their dtype, others in float32 (integers scaled to
    [0, 1) and saturated back: int32's brightest is 2147483520, float32's largest below
    2^31)."""
    images = as_tensor(images)
    if images.ndim < 3:
        raise ValueError(
            "tt.image.adjust_contrast takes images [..., height, width, channels], not a "
            f"tensor of shape {list(images.shape)}"
        )
    pixels = _as_float(images)
    factor = cast(as_tensor(contrast_factor), pixels.dtype)
    mean = reduce_mean(pixels, axis=[-3, -2], keepdims=True)
    adjusted = (pixels - mean) * factor + mean
    return convert_image_dtype(adjusted, images.dtype, saturate=True)


def per_image_standardization(image):
    """Each image [h, w, c] of `image` scaled to mean 0 and variance 1, as float32:
    (x - mean) / max(stddev, 1 / sqrt(h * w * c)) over the image's values (TensorFlow casts
    every dtype to float32 first, integers unscaled)."""
    image = as_tensor(image)
    if image.ndim < 3:
        raise ValueError(
            f"tt.image.per_image_standardization: 'image' (shape {list(image.shape)}) must "
            "be at least three-dimensional"
        )
    height, width = _height_width(image, "per_image_standardization")
    pixels = cast(image, dtypes.float32)
    count = height * width * _static_size(image, -1, "per_image_standardization")
    mean = reduce_mean(pixels, axis=[-1, -2, -3], keepdims=True)
    stddev = reduce_std(pixels, axis=[-1, -2, -3], keepdims=True)
    floor = rsqrt(_constant(count, dtypes.float32))
    return (pixels - mean) / maximum(stddev, floor)


# --- resize -------------------------------------------------------------------------------


class ResizeMethod:
    """The names `tt.image.resize` takes for `method` (tf.image.ResizeMethod)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_METHODS = (
    "bilinear",
    "nearest",
    "bicubic",
    "area",
    "lanczos3",
    "lanczos5",
    "gaussian",
    "mitchellcubic",
)


def _bilinear_taps(in_size, out_size):
    """ResizeBilinear's taps with half-pixel centers, in float32 as its kernel computes them:
    source = (i + 0.5) * (in / out) - 0.5, lower = max(floor(source), 0), upper =
    min(ceil(source), in - 1), weight of upper = source - floor(source)."""
    scale = np.float32(in_size) / np.float32(out_size)
    source = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    floor = np.floor(source)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(source).astype(np.int64), in_size - 1)
    return lower.astype(np.int32), upper.astype(np.int32), (source - floor).astype(np.float32)


def _nearest_taps(in_size, out_size):
    """ResizeNearestNeighbor's source pixel with half-pixel centers: floor((i + 0.5) *
    (in / out)) in float32, within [0, in - 1]."""
    scale = np.float32(in_size) / np.float32(out_size)
    source = np.floor((np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale)
    return np.clip(source.astype(np.int64), 0, in_size - 1).astype(np.int32)


def _lerp_along(images, axis, in_size, out_size):
    """The linear interpolation of `images` along `axis` from in_size to out_size values:
    low + (high - low) * weight, two gathers whose gradient scatters back."""
    if in_size == out_size:  # every weight 0: the images as they are
        return images
    lower, upper, weight = _bilinear_taps(in_size, out_size)
    low = gather(images, _constant(lower, dtypes.int32), axis=axis)
    high = gather(images, _constant(upper, dtypes.int32), axis=axis)
    weight = weight.reshape((out_size,) + (1,) * (images.ndim - 1 - axis))
    return low + (high - low) * _constant(weight, dtypes.float32)


def _aspect_size(height, width, size):
    """preserve_aspect_ratio's size: the image scaled by the smaller of the two factors, in
    float32 and rounded half to even, as TensorFlow computes it."""
    scale = min(np.float32(size[0]) / np.float32(height), np.float32(size[1]) / np.float32(width))
    return int(np.round(scale * np.float32(height))), int(np.round(scale * np.float32(width)))


def resize(
    images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False, name=None
):
    """`images` [h, w, c] or [batch, h, w, c] resized to `size` [new_height, new_width], as
    TensorFlow 2's tf.image.resize (half-pixel centers).

    "nearest" keeps the dtype; every other method gives float32 (any input dtype, as
    TensorFlow) and has gradients with respect to the images. "bilinear" is two gathers and
    a blend; "bicubic", "area", "lanczos3", "lanczos5", "gaussian" and "mitchellcubic", and
    bilinear with `antialias`, are TensorFlow's kernels as one weight matrix per axis
    (tracer/ops/resize_weights.py); `antialias` widens the kernel where an image shrinks
    (area and nearest ignore it, as TensorFlow's). With `preserve_aspect_ratio` the image is
    scaled by the smaller factor so that it fits in `size`.

    >>> tt.image.resize(tt.reshape(tt.constant([0.0, 4.0]), [1, 2, 1]), [1, 4])[0, :, 0].numpy()
    array([0., 1., 3., 4.], dtype=float32)
    """
    method = str(getattr(method, "value", method)).lower()
    if method not in _METHODS:
        raise ValueError(f"tt.image.resize: Resize method is not implemented: {method}")
    images = as_tensor(images)
    if images.ndim not in (3, 4):
        raise ValueError(
            f"tt.image.resize: 'images' must have either 3 or 4 dimensions, not shape "
            f"{list(images.shape)}"
        )
    size = _size_pair(size)
    height, width = _height_width(images, "resize")
    if preserve_aspect_ratio:
        size = _aspect_size(height, width, size)
    if min(size) <= 0 or min(height, width) <= 0:
        raise ValueError(
            f"tt.image.resize: input and output sizes must be positive, not {[height, width]} "
            f"to {list(size)}"
        )
    batched = images.ndim == 4
    # NOTE: a batch axis even for one image: a gather along axis 0 that is the image's only
    # use would give tape.gradient an IndexedSlices, where TensorFlow's gradient is dense
    images = images if batched else expand_dims(images, 0)
    if method == "nearest":
        for axis, before, after in ((1, height, size[0]), (2, width, size[1])):
            if before != after:
                taps = _constant(_nearest_taps(before, after), dtypes.int32)
                images = gather(images, taps, axis=axis)
    elif method != "bilinear" or antialias:
        rows = _constant(resize_weights.weights(method, height, size[0], antialias), dtypes.float32)
        columns = _constant(
            resize_weights.weights(method, width, size[1], antialias), dtypes.float32
        )
        images = einsum("oh,bhwc,pw->bopc", rows, cast(images, dtypes.float32), columns)
    else:
        across = _lerp_along(cast(images, dtypes.float32), 2, width, size[1])
        images = _lerp_along(across, 1, height, size[0])
    return images if batched else squeeze(images, [0])


def resize_with_pad(image, target_height, target_width, method="bilinear", antialias=False):
    """`image` resized (by `resize`'s `method`) to fit [target_height, target_width] with
    its aspect ratio kept, then padded with zeros to that size, centred (the odd pixel
    after), as tf.image.resize_with_pad: the scaled size and the padding are floored from
    float32 arithmetic, as TensorFlow computes them.

    >>> tt.image.resize_with_pad(tt.ones([2, 4, 1]), 4, 4)[:, 0, 0].numpy()
    array([0., 1., 1., 0.], dtype=float32)
    """
    image, height, width, rows, columns = _sized(
        image, target_height, target_width, "resize_with_pad"
    )
    f_height, f_width = np.float32(height), np.float32(width)
    f_rows, f_columns = np.float32(rows), np.float32(columns)
    ratio = max(f_width / f_columns, f_height / f_rows)
    resized_height, resized_width = f_height / ratio, f_width / ratio
    top = max(0, int(np.floor((f_rows - resized_height) / np.float32(2))))
    left = max(0, int(np.floor((f_columns - resized_width) / np.float32(2))))
    size = (int(np.floor(resized_height)), int(np.floor(resized_width)))
    resized = resize(image, size, method=method, antialias=antialias)
    return pad_to_bounding_box(resized, top, left, rows, columns)


def _size_pair(size):
    """`size` as two Python ints [new_height, new_width]."""
    if hasattr(size, "numpy") or not isinstance(size, (list, tuple)):
        tensor = as_tensor(size)
        if tensor._value is None:
            raise ValueError(
                "tt.image.resize: 'size' must be known when the function is traced (Python "
                "ints), not a tensor computed in the trace"
            )
        size = np.asarray(tensor._value).tolist()
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise ValueError(
            f"tt.image.resize: 'size' must be a 1-D Tensor of 2 elements: new_height, "
            f"new_width, not {size!r}"
        )
    return tuple(_python_int(s, "size", "resize") for s in size)
