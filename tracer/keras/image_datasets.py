"""`tt.keras.utils.image_dataset_from_directory`: a tt.data pipeline of the image files of a
directory, labelled by their subdirectories, as Keras's image tutorials load their data.

The files are indexed and read as Keras does (directory_index.py): Keras's extensions
(.bmp, .gif, .jpeg, .jpg, .png), its order, and the files a seed's validation_split picks.
Each file is decoded by `tt.image.decode_image` (`color_mode` "rgb", "rgba" or "grayscale"
channels) and resized to `image_size` by `tt.image.resize` (`interpolation`): float32
values from 0 to 255, as Keras gives them. tracer decodes PNG files only: a JPEG, GIF or BMP among them is decode_image's
NotImplementedError when its element is made. `crop_to_aspect_ratio` and
`pad_to_aspect_ratio` are refused with a message.
"""

from tracer import dtypes
from tracer.keras import directory_index
from tracer.ops import array_ops, image_ops, png_codec, string_ops

FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_CHANNELS = {"rgb": 3, "rgba": 4, "grayscale": 1}


def image_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, color_mode="rgb", batch_size=32,
                                 image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear",
                                 follow_links=False, crop_to_aspect_ratio=False,
                                 pad_to_aspect_ratio=False, data_format=None, verbose=True):  # fmt: skip
    """A dataset of (images, labels) batches from the image files under `directory` (images
    float32 [batch, height, width, channels]), its `class_names` attribute the labels'
    names (two datasets, training and validation, with `subset="both"`)."""
    if color_mode not in _CHANNELS:
        raise ValueError(f"color_mode must be one of {tuple(_CHANNELS)}, not {color_mode!r}")
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        raise NotImplementedError(
            "image_dataset_from_directory: crop_to_aspect_ratio and pad_to_aspect_ratio are "
            "not supported; resize the images, or crop them in a map"
        )
    if data_format not in (None, "channels_last"):
        raise NotImplementedError(
            "image_dataset_from_directory: images are channels_last in tracer"
        )
    height, width = (int(s) for s in image_size)
    channels = _CHANNELS[color_mode]

    def read(path):
        image = png_codec.decode_image(string_ops.read_file(path), channels=channels)
        resized = image_ops.resize(image, (height, width), method=interpolation)
        return array_ops.cast(resized, dtypes.float32)  # values 0 to 255, as Keras's

    files = directory_index.Files(FORMATS, "image", read, lambda d, size: d.batch(size))
    return directory_index.datasets(
        files, directory, labels, label_mode, class_names, batch_size, shuffle, seed,
        validation_split, subset, follow_links, verbose,
    )  # fmt: skip
