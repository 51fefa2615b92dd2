"""Keras's CategoryEncoding layer: integer categories as one-hot rows, or as rows that mark
(multi_hot) or count (count) the categories of each sample, as Keras 3.15 encodes them on
TensorFlow.

- one_hot: a scalar is one sample; a last axis of size 1 (beyond the first) is the
  category's own axis and is replaced by the encoding; otherwise each value gets one.
- multi_hot and count: a vector is one sample, a matrix one sample per row; beyond, the
  second axis is the one summed over, as Keras's general path does.
- A category at or past num_tokens gives a row of zeros; a negative one is TensorFlow's
  InvalidArgumentError for multi_hot and count of a vector or matrix, where the values are
  known (eagerly, or constants of a traced function); one_hot gives zeros, as TensorFlow's.
- `count_weights` weighs each value's count.
"""

import numpy as np

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.keras.layers.layer import Layer
from tracer.ops import array_ops, index_ops, math_ops, reduction_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.tensor import convert_to_tensor

_MODES = ("one_hot", "multi_hot", "count")


def encoded(inputs, mode, depth, dtype, count_weights=None, what="CategoryEncoding"):
    """Integer categories `inputs` encoded by `mode` (one_hot, multi_hot or count) over
    `depth` categories, of `dtype`, as the module's docstring says."""
    x = convert_to_tensor(inputs)
    if not x.dtype.is_integer:
        x = array_ops.cast(x, dtypes.int32)
    if x.shape.rank == 0:
        x = array_ops.expand_dims(x, 0)
    if mode == "one_hot":
        if x.shape.rank >= 2 and x.shape[-1] == 1:
            x = array_ops.squeeze(x, -1)
        return index_ops.one_hot(x, depth, dtype=dtype)
    if x.shape.rank <= 2 and x._value is not None and x._value.size and np.min(x._value) < 0:
        raise InvalidArgumentError(None, None, f"{what}: Input arr must be non-negative!")
    rows = index_ops.one_hot(x, depth, dtype=dtype)
    axis = 1 if x.shape.rank > 1 else 0
    if mode == "multi_hot":
        return reduction_ops.reduce_max(rows, axis=axis)
    if count_weights is not None:
        weights = array_ops.cast(convert_to_tensor(count_weights), dtype)
        rows = math_ops.multiply(rows, array_ops.expand_dims(weights, -1))
    return reduce_sum(rows, axis=axis)


class CategoryEncoding(Layer):
    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if num_tokens is None:
            raise ValueError("CategoryEncoding: num_tokens must be set to use this layer")
        if int(num_tokens) < 1:
            raise ValueError(f"CategoryEncoding: num_tokens must be at least 1, not {num_tokens}")
        if output_mode not in _MODES:
            raise ValueError(
                f"CategoryEncoding: output_mode must be one of {_MODES}, not {output_mode!r}"
            )
        if sparse:
            raise NotImplementedError(
                "CategoryEncoding: sparse=True gives a SparseTensor, which tracer does not have"
            )
        self.num_tokens, self.output_mode, self.sparse = int(num_tokens), output_mode, False

    def call(self, inputs, count_weights=None):
        return encoded(inputs, self.output_mode, self.num_tokens, self.dtype, count_weights)

    def get_config(self):
        return {
            **self._base_config(),
            "num_tokens": self.num_tokens,
            "output_mode": self.output_mode,
        }
