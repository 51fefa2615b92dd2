"""Keras's random image augmentation layers: RandomFlip, RandomRotation, RandomZoom,
RandomTranslation, RandomContrast, RandomBrightness and RandomCrop, as Keras 3.15 defines
them (docs/keras_layers.md, "Image augmentation").

As in Keras, they augment unless called with `training=False`: `layer(x)`, a model called
without `training` and a `tt.data` map augment; `predict` and `evaluate` do not. Each image
of a batch [batch, height, width, channels] takes its own draw (RandomCrop one for the
batch); one image [height, width, channels] is a batch of one. The draws come from a seed
held in a variable of the layer, moved on at each draw (as Dropout's), so a compiled training
step draws anew at each call; they are tracer's stream, not TensorFlow's.
"""

import math

import numpy as np

from tracer import random as tt_random
from tracer.keras.layers.core import seed_state
from tracer.keras.layers.layer import Layer
from tracer.ops import math_ops
from tracer.ops.affine_image import FILL_MODES, INTERPOLATIONS, affine_transform
from tracer.ops.array_ops import cast, reshape
from tracer.ops.image_ops import resize
from tracer.ops.index_ops import gather
from tracer.ops.layout_ops import reverse
from tracer.ops.reduction_ops import reduce_mean
from tracer.ops.structure_ops import stack
from tracer.tensor import convert_to_tensor


class _RandomImageLayer(Layer):
    """What the random layers share: the seed, the per-image draws, the batch of one."""

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(
                f"{type(self).__name__}: tracer's image layers take channels_last images, "
                f"not data_format={data_format!r}"
            )
        self.seed = seed
        self.data_format = "channels_last"
        self.seed_state = None

    def build(self, input_shape):
        self.seed_state = seed_state(self, self.seed)
        self.built = True

    def call(self, inputs, training=True):
        inputs = images_of(self, inputs)
        if inputs.ndim == 3:
            return self.call(inputs[None], training=training)[0]
        return self._augment(inputs) if training else self._inference(inputs)

    def _inference(self, images):
        return cast(images, self._compute_dtype)

    def _uniform(self, images, low, high, per_image=True):
        """Draws from U[low, high): one per image ([batch]), or one for the batch ([])."""
        shape = (images.shape[0],) if per_image else ()
        draws = tt_random.stateless_uniform(shape, self.seed_state, low, high, "float32")
        self.seed_state.assign_add([0, 1])
        return draws

    def _config(self, **arguments):
        return {**self._base_config(), "data_format": self.data_format, **arguments}


def images_of(layer, inputs):
    """`inputs` as a tensor of images of rank 3 (height, width, channels) or 4 (a batch)."""
    inputs = convert_to_tensor(inputs)
    if inputs.ndim not in (3, 4):
        raise ValueError(
            f"{type(layer).__name__}: expected images of rank 3 (height, width, channels) "
            f"or 4 (batch, height, width, channels), not shape {tuple(inputs.shape)}"
        )
    return inputs


class RandomFlip(_RandomImageLayer):
    """Each image mirrored with probability 1/2: "horizontal" along its width, "vertical"
    along its height, "horizontal_and_vertical" along both on the same draw (as Keras 3.15:
    an image is left as it is or turned half a turn)."""

    MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(seed, data_format, **kwargs)
        if mode not in self.MODES:
            raise ValueError(f"RandomFlip: mode must be one of {self.MODES}, not {mode!r}")
        self.mode = mode

    def _augment(self, images):
        images = cast(images, self._compute_dtype)
        axes = {"horizontal": [2], "vertical": [1]}.get(self.mode, [1, 2])
        flips = reshape(self._uniform(images, 0.0, 1.0) < 0.5, (-1, 1, 1, 1))
        return math_ops.where(flips, reverse(images, axes), images)

    def get_config(self):
        return self._config(seed=self.seed, mode=self.mode)


def _range(factor, bounds, name):
    """Keras's (lower, upper) of a factor given as a number f (-|f|, |f|, the lower end not
    below bounds[0]) or a pair (sorted)."""
    if isinstance(factor, (int, float, np.integer, np.floating)):
        if not bounds[0] <= factor <= bounds[1]:
            raise ValueError(f"{name}: factor must be in [{bounds[0]}, {bounds[1]}], not {factor}")
        return (max(-abs(float(factor)), float(bounds[0])), abs(float(factor)))
    if isinstance(factor, (list, tuple)) and len(factor) == 2:
        lower, upper = sorted(float(f) for f in factor)
        if lower > bounds[1] or upper < bounds[0]:
            raise ValueError(
                f"{name}: factor {tuple(factor)} is outside [{bounds[0]}, {bounds[1]}]"
            )
        return (lower, upper)
    raise ValueError(f"{name}: factor must be a number or a pair of numbers, not {factor!r}")


class _AffineLayer(_RandomImageLayer):
    """RandomRotation, RandomZoom and RandomTranslation: a transform per image, sampled
    through tracer/ops/affine_image.py."""

    def __init__(self, fill_mode, interpolation, fill_value, seed, data_format, **kwargs):
        super().__init__(seed, data_format, **kwargs)
        name = type(self).__name__
        if fill_mode not in FILL_MODES:
            raise NotImplementedError(
                f"{name}: fill_mode must be one of {FILL_MODES}, not {fill_mode!r}"
            )
        if interpolation not in INTERPOLATIONS:
            raise NotImplementedError(
                f"{name}: interpolation must be one of {INTERPOLATIONS}, not {interpolation!r}"
            )
        self.fill_mode, self.interpolation = fill_mode, interpolation
        self.fill_value = float(fill_value)

    def _augment(self, images):
        images = cast(images, self._compute_dtype)
        _, height, width, _ = images.shape
        transform = self._transform(images, height, width)
        return affine_transform(
            images, transform, self.interpolation, self.fill_mode, self.fill_value
        )

    def _affine_config(self, **arguments):
        return self._config(
            **arguments,
            fill_mode=self.fill_mode,
            interpolation=self.interpolation,
            seed=self.seed,
            fill_value=self.fill_value,
        )


def _matrix(a0, a1, a2, b0, b1, b2):
    """[batch, 8] transforms from [batch] entries (no perspective: c0 = c1 = 0)."""
    zero = a0 * 0.0
    return stack([a0, a1, a2, b0, b1, b2, zero, zero], axis=1)


class RandomRotation(_AffineLayer):
    """Each image turned about its centre by an angle drawn from [360 lower, 360 upper]
    degrees (`factor` a fraction of a full turn: f for [-f, f], or a pair); a positive angle
    turns the picture counter-clockwise."""

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):  # fmt: skip
        super().__init__(fill_mode, interpolation, fill_value, seed, data_format, **kwargs)
        self.factor = _range(factor, (-1.0, 1.0), "RandomRotation")

    def _transform(self, images, height, width):
        lower, upper = self.factor
        degrees = self._uniform(images, lower * 360.0, upper * 360.0)
        radians = degrees * np.float32(math.pi / 180.0)
        cos, sin = math_ops.cos(radians), math_ops.sin(radians)
        cx, cy = np.float32(0.5 * (width - 1)), np.float32(0.5 * (height - 1))
        return _matrix(cos, -sin, (cx - cx * cos) - cy * -sin, sin, cos, (cy - cx * sin) - cy * cos)

    def get_config(self):
        return self._affine_config(factor=self.factor)


def _factor_pair(factor, minus_one_allowed, name, what):
    """RandomZoom's and RandomTranslation's (lower, upper) of `factor`, each in [-1, 1]
    (RandomTranslation's) or in (-1, 1] (RandomZoom's, whose zoom 1 + lower must stay
    positive)."""
    pair = (-abs(factor), abs(factor)) if isinstance(factor, (int, float)) else factor
    if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
        raise ValueError(f"{name}: {what} must be a number or a pair of numbers, not {factor!r}")
    lower, upper = sorted(float(f) for f in pair)
    if (lower < -1.0 if minus_one_allowed else lower <= -1.0) or upper > 1.0:
        interval = "[-1, 1]" if minus_one_allowed else "(-1, 1]"
        raise ValueError(f"{name}: {what} must be in {interval}, not {factor!r}")
    return lower, upper


class RandomZoom(_AffineLayer):
    """Each image scaled about its centre: the point of an output pixel is z times as far
    from the centre, z = 1 + a draw from `height_factor`'s range (a positive factor zooms
    out, a negative one in); the width's z is drawn from `width_factor`'s range, or is the
    height's where it is None."""

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(fill_mode, interpolation, fill_value, seed, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height = _factor_pair(height_factor, False, "RandomZoom", "height_factor")
        self._width = (
            None
            if width_factor is None
            else _factor_pair(width_factor, False, "RandomZoom", "width_factor")
        )

    def _transform(self, images, height, width):
        zoom_height = 1.0 + self._uniform(images, *self._height)
        zoom_width = (
            zoom_height if self._width is None else 1.0 + self._uniform(images, *self._width)
        )
        cx, cy = np.float32((width - 1) / 2.0), np.float32((height - 1) / 2.0)
        zero = zoom_height * 0.0
        return _matrix(zoom_width, zero, cx * (1.0 - zoom_width), zero, zoom_height,
                       cy * (1.0 - zoom_height))  # fmt: skip

    def get_config(self):
        return self._affine_config(height_factor=self.height_factor, width_factor=self.width_factor)


class RandomTranslation(_AffineLayer):
    """Each image shifted by a draw from `height_factor`'s range times its height (positive:
    down) and one from `width_factor`'s times its width (positive: right)."""

    def __init__(self, height_factor, width_factor, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(fill_mode, interpolation, fill_value, seed, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height = _factor_pair(height_factor, True, "RandomTranslation", "height_factor")
        self._width = _factor_pair(width_factor, True, "RandomTranslation", "width_factor")

    def _transform(self, images, height, width):
        down = self._uniform(images, *self._height) * float(height)
        right = self._uniform(images, *self._width) * float(width)
        one, zero = down * 0.0 + 1.0, down * 0.0
        return _matrix(one, zero, -right, zero, one, -down)

    def get_config(self):
        return self._affine_config(height_factor=self.height_factor, width_factor=self.width_factor)


class RandomContrast(_RandomImageLayer):
    """Each image's contrast scaled by c, drawn from [1 - lower, 1 + upper] (`factor` f gives
    (0, f): Keras 3.15's, which only raises the contrast), about each channel's mean over
    the image; the result clipped to `value_range`. Integer images are computed in the
    layer's dtype (Keras's own call fails on them)."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed, kwargs.pop("data_format", None), **kwargs)
        self.factor = _range(factor, (0.0, 1.0), "RandomContrast")
        self.value_range = value_range

    def _inference(self, images):
        return images

    def _augment(self, images):
        if not images.dtype.is_floating:
            images = cast(images, self._compute_dtype)
        lower, upper = self.factor
        contrast = reshape(self._uniform(images, 1.0 - lower, 1.0 + upper), (-1, 1, 1, 1))
        contrast = cast(contrast, images.dtype)
        mean = reduce_mean(images, axis=(1, 2), keepdims=True)
        out = (images - mean) * contrast + mean
        return math_ops.clip_by_value(out, self.value_range[0], self.value_range[1])

    def get_config(self):
        return self._config(factor=self.factor, value_range=self.value_range, seed=self.seed)


class RandomBrightness(_RandomImageLayer):
    """Each image plus a delta drawn from [lower, upper) times the width of `value_range`,
    clipped to it. Integer images take the delta truncated to an integer, added without
    wrapping (Keras 3.15 adds it in the image's dtype, so uint8 wraps past 255)."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed, kwargs.pop("data_format", None), **kwargs)
        if not (isinstance(value_range, (list, tuple)) and len(value_range) == 2):
            raise ValueError(
                f"RandomBrightness: value_range must be a pair (low, high), not {value_range!r}"
            )
        self.factor = _range(factor, (-1.0, 1.0), "RandomBrightness")
        self.value_range = sorted(value_range)

    def _inference(self, images):
        return images

    def _augment(self, images):
        low, high = self.value_range
        delta = self._uniform(images, *self.factor) * float(high - low)
        delta = reshape(delta, (-1, 1, 1, 1))
        if images.dtype.is_floating:
            return math_ops.clip_by_value(images + cast(delta, images.dtype), low, high)
        wide = cast(images, "float32") + math_ops.sign(delta) * math_ops.floor(abs(delta))
        return cast(math_ops.clip_by_value(wide, float(low), float(high)), images.dtype)

    def get_config(self):
        return self._config(factor=self.factor, value_range=self.value_range, seed=self.seed)


class RandomCrop(_RandomImageLayer):
    """In training, a [height, width] window of the images at an offset drawn for the batch
    (uniform over the windows that fit), when the images are larger on both sides; otherwise
    Keras 3.15's fixed window near the centre, stretched to the size where it is smaller.
    With `training=False` the images are returned as they are (Keras 3.15's, whatever its
    docstring says)."""

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(seed, data_format, name=name, **kwargs)
        self.height, self.width = int(height), int(width)

    def _inference(self, images):
        return images

    def _augment(self, images):
        images = cast(images, self._compute_dtype)
        _, height, width, _ = images.shape
        if height > self.height and width > self.width:
            top = math_ops.floor(self._uniform(images, 0.0, height - self.height + 1.0, False))
            left = math_ops.floor(self._uniform(images, 0.0, width - self.width + 1.0, False))
            rows = cast(top, "int32") + np.arange(self.height, dtype=np.int32)
            columns = cast(left, "int32") + np.arange(self.width, dtype=np.int32)
            return gather(gather(images, rows, axis=1), columns, axis=2)
        top, left, _, _ = aspect_window(height, width, self.height, self.width)
        window = images[:, top : top + self.height, left : left + self.width, :]
        return _resized(window, self.height, self.width)

    def get_config(self):
        return self._config(height=self.height, width=self.width, seed=self.seed)


def aspect_window(height, width, target_height, target_width):
    """(top, left, rows, columns) of the largest window near the centre of a height x width
    image with the target's aspect ratio (Keras's smart_resize crop)."""
    rows = min(max(int(width * target_height / target_width), 1), height)
    columns = min(max(int(height * target_width / target_height), 1), width)
    return int((height - rows) / 2), int((width - columns) / 2), rows, columns


def _resized(images, height, width):
    """`images` bilinearly resized to height x width, unless they have that size."""
    if tuple(images.shape[1:3]) == (height, width):
        return images
    return resize(images, (height, width))
