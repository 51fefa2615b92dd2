"""Keras's reshaping layers: Permute, RepeatVector, ZeroPadding1D and 2D, Cropping1D and 2D,
UpSampling1D and UpSampling2D, composed of tracer's transpose, tile, repeat, pad, slicing and
(for bilinear upsampling) `tt.image.resize`.

The 2-D layers take `data_format` "channels_last" (the default, as Keras's
`image_data_format()`) or "channels_first", and hold it as Keras writes it in a config.
"""

from tracer.keras.layers.layer import Layer
from tracer.ops.array_ops import expand_dims, reshape, transpose
from tracer.ops.broadcast_ops import tile
from tracer.ops.image_ops import resize
from tracer.ops.layout_ops import pad
from tracer.ops.sequence_composites import repeat


class Permute(Layer):
    """Each example's axes reordered: `dims` (1-based, the batch axis not counted) lists the
    input axis each output axis takes, as `transpose(inputs, (0, *dims))`."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(
                f"Permute: dims must hold each of 1..{len(self.dims)} once, not {list(dims)}"
            )

    def call(self, inputs):
        return transpose(inputs, (0, *self.dims))

    def get_config(self):
        return {**self._base_config(), "dims": list(self.dims)}


class RepeatVector(Layer):
    """(batch, features) -> (batch, n, features): each example repeated `n` times."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"RepeatVector: n must be an int, not {type(n).__name__}")
        if n <= 0:
            raise ValueError(f"RepeatVector: n must be positive, not {n}")
        self.n = n

    def call(self, inputs):
        if inputs.ndim != 2:
            raise ValueError(f"RepeatVector takes inputs of rank 2, not {inputs.shape}")
        return tile(expand_dims(inputs, 1), (1, self.n, 1))

    def get_config(self):
        return {**self._base_config(), "n": self.n}


class ZeroPadding2D(Layer):
    """Zeros added around each image: `padding` is an int, (height, width) or
    ((top, bottom), (left, right))."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(padding, "padding")
        self.data_format = _data_format(data_format)

    def call(self, inputs):
        paddings = _spatial(self.data_format, [0, 0], *self.padding)
        return pad(inputs, [list(p) for p in paddings])

    def get_config(self):
        padding = [list(p) for p in self.padding]
        return {**self._base_config(), "padding": padding, "data_format": self.data_format}


class Cropping2D(Layer):
    """Rows and columns cut from each image's edges: `cropping` is an int, (height, width) or
    ((top, bottom), (left, right))."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping, "cropping")
        self.data_format = _data_format(data_format)

    def call(self, inputs):
        rows, columns = (slice(before, -after or None) for before, after in self.cropping)
        index = _spatial(self.data_format, slice(None), rows, columns)
        return inputs[tuple(index)]

    def get_config(self):
        cropping = [list(p) for p in self.cropping]
        return {**self._base_config(), "cropping": cropping, "data_format": self.data_format}


class UpSampling2D(Layer):
    """Each image enlarged `size[0]` times down and `size[1]` times across: by repeating each
    pixel (interpolation "nearest", Keras's default), or, with "bilinear", "bicubic",
    "lanczos3" or "lanczos5", by `tt.image.resize` to that size (as Keras's). The
    image's height, width and channels must be known when the layer is called."""

    _INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "lanczos3", "lanczos5")

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        size = (size, size) if isinstance(size, int) else tuple(size)
        if len(size) != 2 or not all(isinstance(s, int) and s > 0 for s in size):
            raise ValueError(f"UpSampling2D: size must be a positive int or two, not {size}")
        if interpolation.lower() not in self._INTERPOLATIONS:
            raise ValueError(
                f"UpSampling2D: tracer supports interpolation {self._INTERPOLATIONS}, not "
                f"{interpolation!r}"
            )
        self.size = size
        self.data_format = _data_format(data_format)
        self.interpolation = interpolation.lower()

    def call(self, inputs):
        first = self.data_format == "channels_first"
        x = transpose(inputs, (0, 2, 3, 1)) if first else inputs
        _, height, width, channels = x.shape
        if None in (height, width, channels) or not all(
            isinstance(d, int) for d in (height, width, channels)
        ):
            raise ValueError(f"UpSampling2D needs the image's size known, not {inputs.shape}")
        fh, fw = self.size
        if self.interpolation != "nearest":
            x = resize(x, (height * fh, width * fw), self.interpolation)
        else:
            x = tile(expand_dims(expand_dims(x, 2), 4), (1, 1, fh, 1, fw, 1))
            x = reshape(x, (-1, height * fh, width * fw, channels))
        return transpose(x, (0, 3, 1, 2)) if first else x

    def get_config(self):
        return {
            **self._base_config(),
            "size": list(self.size),
            "data_format": self.data_format,
            "interpolation": self.interpolation,
        }


_DATA_FORMATS = ("channels_last", "channels_first")


def _data_format(value):
    value = "channels_last" if value is None else str(value).lower()
    if value not in _DATA_FORMATS:
        raise ValueError(f"data_format must be one of {_DATA_FORMATS}, not {value!r}")
    return value


def _spatial(data_format, other, rows, columns):
    """Per-axis items of a 4-D image tensor: `other` for the batch and channel axes."""
    if data_format == "channels_first":
        return [other, other, rows, columns]
    return [other, rows, columns, other]


def _pairs(value, what):
    """An int, (height, width) or ((top, bottom), (left, right)) as the last."""
    if isinstance(value, int):
        value = ((value, value), (value, value))
    if not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"{what} must be an int, two ints or two pairs of ints, not {value!r}")
    pairs = tuple((v, v) if isinstance(v, int) else tuple(v) for v in value)
    if any(len(p) != 2 or any(not isinstance(v, int) or v < 0 for v in p) for p in pairs):
        raise ValueError(f"{what} must hold non-negative ints, not {value!r}")
    return pairs


class ZeroPadding1D(Layer):
    """Zeros added before and after each sequence (batch, steps, features): `padding` is an
    int or (before, after)."""

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pair(padding, "padding")
        self.data_format = _data_format(data_format)

    def call(self, inputs):
        steps = list(self.padding)
        paddings = (
            [[0, 0], steps, [0, 0]]
            if self.data_format == "channels_last"
            else [[0, 0], [0, 0], steps]
        )
        return pad(inputs, paddings)

    def get_config(self):
        return {
            **self._base_config(),
            "padding": list(self.padding),
            "data_format": self.data_format,
        }


class Cropping1D(Layer):
    """Steps cut from the start and end of each sequence: `cropping` is an int or
    (start, end)."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pair(cropping, "cropping")

    def call(self, inputs):
        start, end = self.cropping
        if start + end >= inputs.shape[1]:
            raise ValueError(f"Cropping1D {self.cropping} leaves no step of {inputs.shape[1]}")
        return inputs[:, start : inputs.shape[1] - end]

    def get_config(self):
        return {**self._base_config(), "cropping": list(self.cropping)}


class UpSampling1D(Layer):
    """Each step repeated `size` times (batch, steps * size, features)."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = int(size)

    def call(self, inputs):
        return repeat(inputs, self.size, axis=1)

    def get_config(self):
        return {**self._base_config(), "size": self.size}


def _pair(value, what):
    """An int or a pair of non-negative ints, as a pair."""
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or any(not isinstance(v, int) or v < 0 for v in pair):
        raise ValueError(f"{what} must be a non-negative int or a pair of them, not {value!r}")
    return pair
