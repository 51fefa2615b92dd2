"""`tt.keras.utils.array_to_img` and `img_to_array`: one image between a numpy array (or a
tensor) and a PIL image, as Keras's image utilities convert them (tutorials show their images
and masks so). PIL is optional: it is imported when one of these is called.

>>> img = tt.keras.utils.array_to_img(np.zeros((2, 3, 1)))  # doctest: +SKIP
>>> img.size, img.mode  # doctest: +SKIP
((3, 2), 'L')
"""

import numpy as np

from tracer.keras import backend

# The PIL mode of an image by its number of channels (one channel is "L", or "I" above 255)
_MODES = {4: "RGBA", 3: "RGB", 1: "L"}


def _pil_image(what):
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(
            f"{what} needs PIL (the Pillow package), which is not installed"
        ) from None
    return Image


def _data_format(data_format):
    data_format = backend.image_data_format() if data_format is None else data_format.lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            f"data_format must be 'channels_last' or 'channels_first', not {data_format!r}"
        )
    return data_format


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A PIL image of the rank-3 array `x` (height, width, channels; or channels first).

    With `scale` the values are first stretched to [0, 255] (less their minimum, over their
    maximum when it is not zero); then they are cast to uint8, as Keras does (so values outside
    [0, 255] wrap). 4 channels give an RGBA image, 3 an RGB one, 1 a grayscale "L" one, or
    a 32-bit "I" one where a value exceeds 255."""
    image = _pil_image("array_to_img")
    data_format = _data_format(data_format)
    x = np.array(x, dtype=dtype or backend.floatx())
    if x.ndim != 3:
        raise ValueError(f"array_to_img takes one image of rank 3; the array has shape {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - x.min()
        if x.max() != 0:
            x = x / x.max()
        x = x * 255
    channels = x.shape[2]
    if channels not in _MODES:
        raise ValueError(f"array_to_img takes 1, 3 or 4 channels, not {channels}")
    if channels == 1:
        if x.max() > 255:
            return image.fromarray(x[:, :, 0].astype(np.int32), "I")
        return image.fromarray(x[:, :, 0].astype(np.uint8), "L")
    return image.fromarray(x.astype(np.uint8), _MODES[channels])


def img_to_array(img, data_format=None, dtype=None):
    """The rank-3 numpy array (float32 unless `dtype`) of a PIL image, or of anything numpy
    converts: a grayscale image gets a channel axis of size 1."""
    data_format = _data_format(data_format)
    x = np.asarray(img, dtype=dtype or backend.floatx())
    if x.ndim == 2:
        x = x[:, :, None]
    elif x.ndim != 3:
        raise ValueError(f"img_to_array takes an image of rank 2 or 3, not shape {x.shape}")
    return x.transpose(2, 0, 1) if data_format == "channels_first" else x


__all__ = ["array_to_img", "img_to_array"]
