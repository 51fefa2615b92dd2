"""TensorFlow functions whose output's length is a count of the data: `boolean_mask`,
`where` with only a condition (with x and y it is `math_ops.where`), `unique` and
`unique_with_counts`.

Their shapes depend on values, and tracer's compiled code has shapes known when it is
traced; so the values that set the length (the mask, the condition, the elements to make
unique) are known: always eagerly, and in a traced function where they are constants.
The rest is tracer's primitives: a gather at positions numpy finds, so a masked tensor's
gradient flows back through it, eagerly and compiled. Where a traced function computes such
a value when it runs, the function runs as Python at each call (`convert.length_value`),
with a log line that names what keeps the shape instead.
"""

import collections

import numpy as np

from tracer import dtypes
from tracer.ops import array_ops, math_ops
from tracer.ops.convert import as_tensor, known_value, length_value
from tracer.ops.index_ops import gather
from tracer.ops.scatter_nd_ops import gather_nd

_KEEP_THE_SHAPE = (
    " (tt.where(mask, tensor, zeros) keeps the shape, and a sum or mean over the mask is "
    "tt.reduce_sum(tt.where(mask, tensor, 0)) over tt.reduce_sum(tt.cast(mask, dtype)))"
)

Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def boolean_mask(tensor, mask, axis=None, name=None):
    """The elements (or slices) of `tensor` where `mask` is true: the axes `axis` to
    `axis + mask.ndim` of `tensor`, which must have mask's shape, become one axis of the
    true positions, in row-major order.

    >>> tt.boolean_mask(tt.constant([[1, 2], [3, 4], [5, 6]]), [True, False, True]).numpy()
    array([[1, 2],
           [5, 6]], dtype=int32)
    """
    tensor = as_tensor(tensor)
    flags = np.asarray(length_value(mask, "tt.boolean_mask's mask", _KEEP_THE_SHAPE))
    axis = 0 if axis is None else int(known_value(axis, "tt.boolean_mask: axis"))
    if flags.ndim == 0:
        raise ValueError("tt.boolean_mask: mask cannot be a scalar")
    if axis < 0:
        axis += tensor.ndim
    masked = tuple(tensor.shape[axis : axis + flags.ndim])
    if not 0 <= axis <= tensor.ndim - flags.ndim or masked != flags.shape:
        raise ValueError(
            f"tt.boolean_mask: mask of shape {flags.shape} must have the shape of the tensor's "
            f"axes {axis} to {axis + flags.ndim - 1}, which are {masked} (the tensor's shape is "
            f"{tuple(tensor.shape)})"
        )
    if flags.dtype != np.bool_:
        raise TypeError(f"tt.boolean_mask: mask must be bool, not {flags.dtype}")
    before, after = tuple(tensor.shape[:axis]), tuple(tensor.shape[axis + flags.ndim :])
    merged = array_ops.reshape(tensor, (*before, flags.size, *after))
    # gather_nd with the axes before as batch axes: its gradient is dense, as TensorFlow's
    # boolean_mask gives it (a gather of a variable would hand back IndexedSlices)
    positions = np.flatnonzero(flags).astype(np.int64)[:, None]
    return gather_nd(merged, np.broadcast_to(positions, (*before, *positions.shape)), axis)


def where(condition, x=None, y=None, name=None):
    """Elements of `x` where `condition` holds, else of `y` (all three broadcast together);
    with neither x nor y, the coordinates of condition's true (nonzero) elements, int64
    [count, condition.ndim], in row-major order.

    >>> tt.where([[True, False], [False, True]]).numpy().tolist()
    [[0, 0], [1, 1]]
    """
    if x is None and y is None:
        return _where_true(condition)
    return math_ops.where(condition, x, y)


def _where_true(condition):
    flags = np.asarray(
        length_value(condition, "tt.where's condition (with no x and y)", _KEEP_THE_SHAPE)
    )
    if flags.ndim == 0:
        raise ValueError("tt.where: a condition with no x and y needs at least one dimension")
    return as_tensor(np.argwhere(flags).astype(np.int64))


def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct elements of the vector `x` in the order they first appear,
    and for each element of `x` the position of its value in y.

    >>> tt.unique([1, 1, 2, 4, 4, 4, 7, 8, 8]).y.numpy()
    array([1, 2, 4, 7, 8], dtype=int32)
    """
    y, idx, _ = _unique(x, out_idx, "tt.unique")
    return Unique(y, idx)


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """(y, idx, count): tt.unique's, and how many times each element of y appears."""
    return UniqueWithCounts(*_unique(x, out_idx, "tt.unique_with_counts"))


def _unique(x, out_idx, what):
    x = as_tensor(x)
    values = np.asarray(length_value(x, f"{what}'s x"))
    if values.ndim != 1:
        raise ValueError(f"{what}: x must be a vector, not of shape {values.shape}")
    out_idx = dtypes.as_dtype(out_idx)
    if out_idx not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{what}: out_idx must be int32 or int64, not {out_idx.name}")
    first, inverse, counts = _first_occurrences(values)
    index = out_idx.as_numpy_dtype
    return gather(x, first), as_tensor(inverse.astype(index)), as_tensor(counts.astype(index))


def _first_occurrences(values):
    """(the position of each distinct value's first occurrence, in the order they appear;
    each element's distinct value's rank in that order; each distinct value's count)."""
    seen = {}
    inverse = np.empty(len(values), np.int64)
    for position, value in enumerate(values.tolist()):
        inverse[position] = seen.setdefault(value, len(seen))
    first = np.empty(len(seen), np.int64)
    first[inverse[::-1]] = np.arange(len(values) - 1, -1, -1)
    return first, inverse, np.bincount(inverse, minlength=len(seen))


array_ops.boolean_mask_index[0] = boolean_mask  # `x[mask]`, as TensorFlow's indexing
