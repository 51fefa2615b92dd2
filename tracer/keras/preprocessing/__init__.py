"""`tt.keras.preprocessing`: the names Keras 3 keeps under `keras.preprocessing` (TF 2.21's
`tf.keras.preprocessing`), each the same function as in `tt.keras.utils`:
`sequence.pad_sequences`, `image_dataset_from_directory`, `text_dataset_from_directory` and
`timeseries_dataset_from_array`. Keras's legacy `image` and `text` modules
(ImageDataGenerator, Tokenizer) are not in tracer.

    >>> import tracer as tt
    >>> tt.keras.preprocessing.sequence.pad_sequences([[1, 2], [3]]).tolist()
    [[1, 2], [0, 3]]
"""

from tracer.keras.image_datasets import image_dataset_from_directory
from tracer.keras.preprocessing import sequence
from tracer.keras.sequence_utils import timeseries_dataset_from_array
from tracer.keras.text_datasets import text_dataset_from_directory

_LEGACY = {"image": "ImageDataGenerator, load_img, ...", "text": "Tokenizer, one_hot, ..."}


def __getattr__(name):
    if name in _LEGACY:
        raise AttributeError(
            f"tt.keras.preprocessing.{name} ({_LEGACY[name]}): Keras's legacy preprocessing "
            "module is not in tracer; use tt.keras.layers' preprocessing layers and "
            "tt.keras.utils"
        )
    raise AttributeError(f"module 'tracer.keras.preprocessing' has no attribute {name!r}")


__all__ = [
    "image_dataset_from_directory",
    "sequence",
    "text_dataset_from_directory",
    "timeseries_dataset_from_array",
]
