"""`tt.math.confusion_matrix`: counts of (label, prediction) pairs, as TensorFlow's."""

import numpy as np

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.ops import array_ops, scatter_nd_ops, structure_ops
from tracer.ops.convert import as_tensor, static_int


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=dtypes.int32, name=None):  # fmt: skip
    """The [num_classes, num_classes] matrix whose (i, j) entry counts the samples labelled i
    and predicted j (sums their `weights` where given), of `dtype`. Without `num_classes` it
    is one more than the largest label or prediction, which must then be known (eagerly, or
    constants of a traced function). Labels and predictions known now are checked: negative
    ones, or ones not below num_classes, are TensorFlow's InvalidArgumentError."""
    labels, predictions = as_tensor(labels), as_tensor(predictions)
    dtype = dtypes.as_dtype(dtype)
    for what, t in (("labels", labels), ("predictions", predictions)):
        if not t.dtype.is_integer:
            raise TypeError(
                f"tt.math.confusion_matrix: {what} must be integers, not {t.dtype.name}"
            )
        if t.shape.rank != 1:
            raise ValueError(f"tt.math.confusion_matrix: {what} must be of rank 1, not {t.shape}")
    known = [t._value for t in (labels, predictions)]
    if num_classes is None:
        if any(v is None for v in known):
            raise TypeError(
                "tt.math.confusion_matrix: give num_classes in a traced function, where the "
                "labels and predictions are known only when it runs"
            )
        num_classes = int(max([np.max(v, initial=-1) for v in known])) + 1
    num_classes = static_int(num_classes)
    for what, value in zip(("labels", "predictions"), known):
        if value is not None and value.size and value.min() < 0:
            raise InvalidArgumentError(None, None, f"`{what}` contains negative values")
        if value is not None and value.size and value.max() >= num_classes:
            raise InvalidArgumentError(
                None, None, f"`{what}` out of bound: not below {num_classes}"
            )
    pairs = structure_ops.stack(
        [array_ops.cast(labels, dtypes.int64), array_ops.cast(predictions, dtypes.int64)], axis=1
    )
    updates = (
        array_ops.ones_like(labels, dtype=dtype)
        if weights is None
        else array_ops.cast(as_tensor(weights), dtype)
    )
    return scatter_nd_ops.scatter_nd(pairs, updates, [num_classes, num_classes])
