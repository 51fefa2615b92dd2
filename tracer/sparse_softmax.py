"""`tt.sparse.softmax`: TensorFlow's softmax of a SparseTensor over its last dimension, of
the stored entries only (the implicit zeros take no part), each group of entries that share
their other coordinates on its own.

It is a segment max (held out of the gradient: softmax does not change when every value of
a group moves together), an exponential and a segment sum over the groups, so it runs in
every backend with gradients to the values. The groups are numbered by the entries' row-major
position without the last coordinate: compactly where the indices are known, else over every
position of the dense shape's leading dimensions.
"""

import numpy as np

from tracer.errors import InvalidArgumentError
from tracer.ops import array_ops, index_ops, math_ops, segment_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import convert_to_tensor


def softmax(sp_input, name=None):
    """The softmax of each group of entries that differ only in their last coordinate, in
    the entries' own order: a SparseTensor of the same indices.

    >>> s = tt.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 1.0, 5.0], [2, 3])
    >>> tt.sparse.softmax(s).values.numpy().tolist()
    [0.5, 0.5, 1.0]
    """
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(
            f"tt.sparse.softmax: expected a SparseTensor, not {type(sp_input).__name__}"
        )
    sp = sp_input
    if sp.ndim < 2:
        raise InvalidArgumentError(
            None, None, f"Input should have rank >= 2, but received shape: {list(sp._dense_shape)}"
        )
    if not sp.dtype.is_floating:
        raise TypeError(f"tt.sparse.softmax: the values must be floats, not {sp.dtype.name}")
    groups, count = _groups(sp)
    largest = segment_ops.unsorted_segment_max(sp.values, groups, count)
    shifted = sp.values - array_ops.stop_gradient(index_ops.gather(largest, groups))
    exponentials = math_ops.exp(shifted)
    totals = segment_ops.unsorted_segment_sum(exponentials, groups, count)
    return sp.with_values(exponentials / index_ops.gather(totals, groups))


def _groups(sp):
    """Each entry's group (int64) and the count of groups."""
    outer = sp._dense_shape[:-1]
    strides = np.asarray([int(np.prod(outer[k + 1 :])) for k in range(len(outer))], np.int64)
    known = sp.indices._value
    if known is not None:
        _, ids = np.unique(np.asarray(known)[:, :-1] @ strides, return_inverse=True)
        ids = ids.reshape(-1).astype(np.int64)
        return convert_to_tensor(ids), int(ids.max()) + 1 if ids.size else 0
    positions = reduce_sum(sp.indices[:, :-1] * convert_to_tensor(strides), 1)
    return positions, int(np.prod(outer))
