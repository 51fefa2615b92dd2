"""`tt.keras.utils`: Keras's utilities that tracer has: `get_file` (tracer/keras/downloads.py),
`Progbar`, and `to_categorical`."""

import numpy as np

from tracer.keras.downloads import get_file
from tracer.keras.progbar import Progbar
from tracer.ops.array_ops import reshape
from tracer.ops.index_ops import one_hot
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


__all__ = ["Progbar", "get_file", "to_categorical"]
