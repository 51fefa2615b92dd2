"""`tt.keras.utils`: Keras's utilities that tracer has: `get_file` (tracer/keras/downloads.py),
`Progbar`, `to_categorical`, `normalize`, `set_random_seed`, the registry of one's own
classes for files (tracer/keras/registration.py) and Keras's entries of objects
(tracer/keras/saving/serialization.py), `pad_sequences` and
`timeseries_dataset_from_array` (tracer/keras/sequence_utils.py), `PyDataset` and its alias
`Sequence`, the data fit reads by index (tracer/keras/py_dataset.py), `array_to_img` and
`img_to_array` (tracer/keras/image_utils.py), `plot_model` and `model_to_dot` (which do not
draw: tracer/keras/model_visualization.py), and the datasets of a directory's text, audio
and image files (text_datasets.py, audio_datasets.py, image_datasets.py)."""

import random

import numpy as np

from tracer import random as tt_random
from tracer.keras.audio_datasets import audio_dataset_from_directory
from tracer.keras.downloads import get_file
from tracer.keras.image_datasets import image_dataset_from_directory
from tracer.keras.image_utils import array_to_img, img_to_array
from tracer.keras.model_visualization import model_to_dot, plot_model
from tracer.keras.progbar import Progbar
from tracer.keras.py_dataset import PyDataset, Sequence
from tracer.keras.registration import (
    CustomObjectScope,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
)
from tracer.keras.saving.serialization import deserialize_keras_object, serialize_keras_object
from tracer.keras.sequence_utils import pad_sequences, timeseries_dataset_from_array
from tracer.keras.text_datasets import text_dataset_from_directory
from tracer.ops.array_ops import ones_like, reshape
from tracer.ops.index_ops import one_hot
from tracer.ops.math_ops import equal, where
from tracer.tensor import Tensor


def to_categorical(x, num_classes=None):
    """Class labels as one-hot rows, as Keras 3 makes them: a numpy array (float64) for
    labels given as numbers or arrays, a float32 tensor (`tt.one_hot`) for a tensor; a last
    axis of size 1 is dropped first; `num_classes` defaults to the largest label + 1. A
    label outside [0, num_classes) is a ValueError (Keras's numpy path takes -1 as the last
    class)."""
    shape = tuple(np.shape(x._value)) if isinstance(x, Tensor) else np.shape(x)
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    if isinstance(x, Tensor):
        if num_classes is None:
            raise ValueError("to_categorical: give num_classes for labels in a tensor")
        return one_hot(reshape(x, shape), num_classes)
    labels = np.asarray(x, dtype=np.int64).reshape(-1)
    count = int(labels.max()) + 1 if num_classes is None and labels.size else num_classes or 0
    outside = labels[(labels < 0) | (labels >= count)]
    if outside.size:
        raise ValueError(
            f"to_categorical: the label {int(outside[0])} is not one of the {count} classes"
        )
    rows = np.zeros((labels.size, count))
    rows[np.arange(labels.size), labels] = 1
    return rows.reshape(shape + (count,))


def normalize(x, axis=-1, order=2):
    """`x` divided by its `order`-norm along `axis` (a zero norm divides by 1), as Keras's:
    a numpy array for an array, a tensor for a tensor."""
    if isinstance(x, Tensor):
        from tracer.linalg import norm  # (tracer.linalg builds on the layers' modules)

        size = norm(x, ord=order, axis=axis, keepdims=True)
        return x / where(equal(size, 0.0), ones_like(size), size)
    x = np.asarray(x)
    size = np.atleast_1d(np.linalg.norm(x, order, axis))
    size[size == 0] = 1
    return x / np.expand_dims(size, axis)


def set_random_seed(seed):
    """Seed Python's `random`, numpy's global generator and tracer's (`tt.random.set_seed`),
    as Keras's seeds Python, numpy and the backend."""
    if not isinstance(seed, int):
        raise ValueError(f"set_random_seed: seed must be an integer, not {seed!r}")
    random.seed(seed)
    np.random.seed(seed)
    tt_random.set_seed(seed)


__all__ = [
    "CustomObjectScope",
    "Progbar",
    "PyDataset",
    "Sequence",
    "array_to_img",
    "audio_dataset_from_directory",
    "custom_object_scope",
    "deserialize_keras_object",
    "get_custom_objects",
    "get_file",
    "get_registered_name",
    "get_registered_object",
    "image_dataset_from_directory",
    "img_to_array",
    "model_to_dot",
    "normalize",
    "pad_sequences",
    "plot_model",
    "register_keras_serializable",
    "serialize_keras_object",
    "set_random_seed",
    "text_dataset_from_directory",
    "timeseries_dataset_from_array",
    "to_categorical",
]
