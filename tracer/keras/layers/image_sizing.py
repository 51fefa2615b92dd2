"""Keras's Resizing and CenterCrop layers: images brought to a fixed size, in training and
inference alike (docs/keras_layers.md, "Image augmentation")."""

import numpy as np

from tracer.keras.layers.augmentation import aspect_window, images_of
from tracer.keras.layers.layer import Layer
from tracer.ops import math_ops
from tracer.ops.array_ops import cast
from tracer.ops.image_ops import resize
from tracer.ops.layout_ops import pad


class _SizingLayer(Layer):
    """A target height and width for images [batch, height, width, channels] or one image."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(
                f"{type(self).__name__}: tracer's image layers take channels_last images, "
                f"not data_format={data_format!r}"
            )
        self.height, self.width = int(height), int(width)
        self.data_format = "channels_last"

    def call(self, inputs):
        inputs = images_of(self, inputs)
        if inputs.ndim == 3:
            return self._sized(inputs[None])[0]
        return self._sized(inputs)


class Resizing(_SizingLayer):
    """Images resized to [height, width] as tf.image.resize does (Keras's interpolations);
    with `crop_to_aspect_ratio` the largest window near the centre with the target's aspect
    ratio is resized, with `pad_to_aspect_ratio` the image padded with `fill_value` to that
    ratio first. Integer images keep their dtype (rounded half to even, saturated), as in
    Keras."""

    _INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5")

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
                 antialias=False, data_format=None, **kwargs):  # fmt: skip
        super().__init__(height, width, data_format, **kwargs)
        if interpolation not in self._INTERPOLATIONS:
            raise ValueError(
                f"Resizing: interpolation must be one of {', '.join(self._INTERPOLATIONS)}, "
                f"not {interpolation!r}"
            )
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Resizing: give crop_to_aspect_ratio or pad_to_aspect_ratio, not both")
        if fill_mode != "constant":
            raise ValueError(f"Resizing: fill_mode must be 'constant', not {fill_mode!r}")
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_mode, self.fill_value = fill_mode, float(fill_value)
        self.antialias = bool(antialias)

    def _sized(self, images):
        _, height, width, _ = images.shape
        integer = not images.dtype.is_floating
        if self.crop_to_aspect_ratio:
            top, left, rows, columns = aspect_window(height, width, self.height, self.width)
            images = images[:, top : top + rows, left : left + columns, :]
        elif self.pad_to_aspect_ratio:
            images = self._padded(images, height, width)
        out = resize(
            images, (self.height, self.width), self.interpolation, antialias=self.antialias
        )
        if integer and out.dtype.is_floating:
            limits = np.iinfo(images.dtype.as_numpy_dtype)
            out = math_ops.clip_by_value(math_ops.round(out), float(limits.min), float(limits.max))
            return cast(out, images.dtype)
        return out if integer else cast(out, self._compute_dtype)

    def _padded(self, images, height, width):
        """Keras's padding to the target's aspect ratio: the same rows above and below, the
        same columns left and right (so one may be missing, and the resize stretch it)."""
        rows = max(height, int(width * self.height / self.width))
        columns = max(width, int(height * self.width / self.height))
        top, left = int((rows - height) / 2), int((columns - width) / 2)
        if not images.dtype.is_floating:
            images = cast(images, self._compute_dtype)
        paddings = [[0, 0], [top, top], [left, left], [0, 0]]
        return pad(images, paddings, constant_values=self.fill_value)

    def get_config(self):
        return {
            **self._base_config(),
            "data_format": self.data_format,
            "height": self.height,
            "width": self.width,
            "interpolation": self.interpolation,
            "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
            "pad_to_aspect_ratio": self.pad_to_aspect_ratio,
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
            "antialias": self.antialias,
        }


class CenterCrop(_SizingLayer):
    """The [height, width] window at the centre of the images (offsets rounded down); where
    an image is smaller on a side, the largest window near its centre with the target's
    aspect ratio, bilinearly resized (Keras's smart_resize). The output is in the layer's
    dtype."""

    def _sized(self, images):
        images = cast(images, self._compute_dtype)
        _, height, width, _ = images.shape
        if height >= self.height and width >= self.width:
            top, left = (height - self.height) // 2, (width - self.width) // 2
            return images[:, top : top + self.height, left : left + self.width, :]
        top, left, rows, columns = aspect_window(height, width, self.height, self.width)
        window = images[:, top : top + rows, left : left + columns, :]
        return resize(window, (self.height, self.width))

    def get_config(self):
        return {
            **self._base_config(),
            "data_format": self.data_format,
            "height": self.height,
            "width": self.width,
        }
