"""`tt.sparse.split`: a SparseTensor cut along one dimension into `num_split` parts, as
TensorFlow's: the first `size % num_split` parts one longer than the others, each part's
entries in the input's order, their coordinate along the axis made relative to the part.

Which entries fall in each part depends on the indices' values: known when a function is
traced (constants there), else it runs as Python (`length_value`). The values are gathered
by an op, so gradients reach them (TensorFlow's split has none).
"""

import numpy as np

from tracer.errors import InvalidArgumentError
from tracer.ops import index_ops
from tracer.ops.convert import length_value
from tracer.sparse_tensor import SparseTensor


def split(sp_input=None, num_split=None, axis=None, name=None):
    """A list of `num_split` SparseTensors, `sp_input` cut along `axis`.

    >>> s = tt.SparseTensor([[0, 0], [1, 3]], [1.0, 2.0], [2, 4])
    >>> [p.indices.numpy().tolist() for p in tt.sparse.split(sp_input=s, num_split=2, axis=1)]
    [[[0, 0]], [[1, 1]]]
    """
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("Input must be a SparseTensor.")
    sp = sp_input
    axis = int(axis) + sp.ndim if int(axis) < 0 else int(axis)
    if not 0 <= axis < sp.ndim:
        raise ValueError(f"tt.sparse.split: axis {axis} of a tensor of rank {sp.ndim}")
    size, parts = sp._dense_shape[axis], int(num_split)
    if not 1 <= parts <= size:
        raise InvalidArgumentError(
            None,
            None,
            f"Input num_split should be between 1 and the splitting dimension size ({size}), "
            f"got {parts}",
        )
    indices = np.asarray(length_value(sp.indices, "tt.sparse.split: the indices"))
    lengths = [size // parts + (1 if k < size % parts else 0) for k in range(parts)]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    result = []
    for start, length in zip(starts, lengths):
        keep = np.flatnonzero((indices[:, axis] >= start) & (indices[:, axis] < start + length))
        kept = indices[keep].reshape(-1, sp.ndim).copy()
        kept[:, axis] -= start
        shape = list(sp._dense_shape)
        shape[axis] = length
        result.append(SparseTensor(kept, index_ops.gather(sp.values, keep.astype(np.int64)), shape))
    return result
