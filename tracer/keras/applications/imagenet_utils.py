"""`tt.keras.applications.imagenet_utils.preprocess_input`: images scaled as an ImageNet
model of Keras expects them, by one of three conventions (`mode`):

- "tf": pixels from [0, 255] to [-1, 1] (x / 127.5 - 1);
- "torch": pixels to [0, 1], then each channel less ImageNet's mean, over its deviation;
- "caffe": channels from RGB to BGR, less ImageNet's mean of each (BGR) channel, unscaled.

As Keras 3 does it: a numpy array of a floating dtype is preprocessed in place (and
returned); one of another dtype is first converted to float32; a tensor gives a new tensor
of its own dtype. `data_format` "channels_last" (the default) or "channels_first".

    >>> import numpy as np, tracer as tt
    >>> preprocess_input(np.array([[[0, 127.5, 255]]]), mode="tf").tolist()
    [[[-1.0, 0.0, 1.0]]]
"""

import numpy as np

from tracer.keras import backend
from tracer.ops.array_ops import reshape
from tracer.ops.convert import as_tensor
from tracer.ops.layout_ops import reverse
from tracer.tensor import constant

# ImageNet's channel means and deviations, as the models' conventions use them
_CAFFE_MEAN_BGR = (103.939, 116.779, 123.68)
_TORCH_MEAN = (0.485, 0.456, 0.406)
_TORCH_STD = (0.229, 0.224, 0.225)
MODES = ("caffe", "tf", "torch")


def preprocess_input(x, data_format=None, mode="caffe"):
    """`x` (a batch of images or one image, 3-D or 4-D) preprocessed by `mode` (see the
    module's text)."""
    if mode not in MODES:
        raise ValueError(
            f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}"
        )
    if data_format is None:
        data_format = backend.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(
            "Expected data_format to be one of `channels_first` or `channels_last`. "
            f"Received: data_format={data_format}"
        )
    if isinstance(x, np.ndarray):
        return _preprocess_array(x, data_format, mode)
    return _preprocess_tensor(as_tensor(x), data_format, mode)


def _channel_axis(ndim, data_format):
    """The axis of the channels of an image or a batch of `ndim` dimensions."""
    if data_format == "channels_last":
        return ndim - 1
    return 0 if ndim == 3 else 1


def _channel_shape(ndim, data_format):
    """The shape that broadcasts one value a channel against an image of `ndim` dimensions."""
    shape = [1] * ndim
    shape[_channel_axis(ndim, data_format)] = 3
    return shape


def _preprocess_array(x, data_format, mode):
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(backend.floatx())
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    shape = _channel_shape(x.ndim, data_format)
    if mode == "torch":
        x /= 255.0
        x -= np.reshape(_TORCH_MEAN, shape).astype(x.dtype)
        x /= np.reshape(_TORCH_STD, shape).astype(x.dtype)
        return x
    x = np.flip(x, _channel_axis(x.ndim, data_format))  # RGB -> BGR (a view, as Keras's)
    x -= np.reshape(_CAFFE_MEAN_BGR, shape).astype(x.dtype)
    return x


def _preprocess_tensor(x, data_format, mode):
    if not x.dtype.is_floating:
        raise TypeError(
            f"preprocess_input: a tensor of images must be of a floating dtype, not "
            f"{x.dtype.name} (cast it, or give a numpy array, which is converted to float32)"
        )
    if mode == "tf":
        return x / 127.5 - 1.0
    shape = _channel_shape(x.ndim, data_format)
    if mode == "torch":
        mean = reshape(constant(_TORCH_MEAN, dtype=x.dtype), shape)
        std = reshape(constant(_TORCH_STD, dtype=x.dtype), shape)
        return (x / 255.0 - mean) / std
    x = reverse(x, [_channel_axis(x.ndim, data_format)])
    return x - reshape(constant(_CAFFE_MEAN_BGR, dtype=x.dtype), shape)


__all__ = ["preprocess_input"]
