"""`tt.sparse.bincount`: TensorFlow's counts of the values of a SparseTensor (or of a dense
or ragged tensor) as a SparseTensor of the bins that occur: over all of them (axis 0), or
for each row (axis -1: the first index of a sparse tensor, the row of a matrix or of a
ragged matrix).

The bins are 0 to the largest value (at least `minlength`, at most `maxlength`, values from
there up left out), and which occur depends on the values: known when a function is traced
(constants there), else it runs as Python (`length_value`). With `weights` each bin holds
the sum of its values' weights, a segment sum, so the weights get gradients.
"""

import numpy as np

from tracer.errors import InvalidArgumentError
from tracer.ops import array_ops, index_ops, segment_ops
from tracer.ops.convert import length_value
from tracer.ragged_tensor import RaggedTensor
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import convert_to_tensor


def bincount(values, weights=None, axis=0, minlength=None, maxlength=None, binary_output=False, name=None):  # fmt: skip
    """A SparseTensor of each bin's count (or sum of weights, or 1 with `binary_output`):
    shape [bins] for axis 0, [rows, bins] for axis -1.

    >>> s = tt.SparseTensor([[0, 0], [0, 1], [1, 0]], tt.constant([2, 2, 0], tt.int64), [2, 3])
    >>> tt.sparse.bincount(s, axis=-1).values.numpy().tolist()
    [2, 1]
    """
    if axis not in (0, -1):
        raise ValueError(
            f"Unsupported value for argument axis={axis}. Only 0 and -1 are currently supported."
        )
    if binary_output and weights is not None:
        raise ValueError("tt.sparse.bincount: binary_output and weights are mutually exclusive")
    flat, rows, count, weighted = _entries(values, weights, axis)
    known = np.asarray(length_value(flat, "tt.sparse.bincount's values")).astype(np.int64)
    if np.any(known < 0):
        raise InvalidArgumentError(None, None, "Input values must all be non-negative")
    bins = (int(known.max()) if known.size else 0) + 1
    bins = max(bins, int(minlength or 0))
    bins = bins if maxlength is None else min(bins, int(maxlength))
    rows = np.zeros(len(known), np.int64) if rows is None else rows
    kept = np.flatnonzero(known < bins)
    unique, slots = np.unique(rows[kept] * bins + known[kept], return_inverse=True)
    slots = slots.reshape(-1).astype(np.int64)
    if count is None:
        indices, shape = (unique % bins)[:, None], [bins]
    else:
        indices, shape = np.stack([unique // bins, unique % bins], 1), [count, bins]
    if weighted is None:
        tallies = (
            np.ones(len(unique)) if binary_output else np.bincount(slots, minlength=len(unique))
        )
        sums = convert_to_tensor(tallies.astype(flat.dtype.as_numpy_dtype))
    else:
        picked = index_ops.gather(weighted, kept.astype(np.int64))
        sums = segment_ops.unsorted_segment_sum(picked, slots, len(unique))
    return SparseTensor(indices.astype(np.int64).reshape(-1, len(shape)), sums, shape)


def _entries(values, weights, axis):
    """(the values as a flat tensor; each value's row, numpy, None for axis 0; the count of
    rows, None for axis 0; the weights, flat, or None)."""
    if isinstance(values, SparseTensor):
        if weights is not None and not isinstance(weights, SparseTensor):
            raise ValueError(
                "Argument `weights` must be a SparseTensor if `values` is a SparseTensor. "
                f"Received weights={weights!r} of type: {type(weights).__name__}"
            )
        weighted = None if weights is None else weights.values
        if axis == 0 or values.ndim == 1:
            return values.values, None, None, weighted
        indices = np.asarray(length_value(values.indices, "tt.sparse.bincount's indices"))
        return values.values, indices[:, 0], values._dense_shape[0], weighted
    if isinstance(values, RaggedTensor):
        weighted = None if weights is None else weights.flat_values
        if axis == 0:
            return values.flat_values, None, None, weighted
        lengths = np.diff(values._splits_when_run("bincount")[0])
        rows = np.repeat(np.arange(len(lengths)), lengths)
        return values.flat_values, rows, len(lengths), weighted
    values = convert_to_tensor(values)
    weighted = None if weights is None else array_ops.reshape(convert_to_tensor(weights), [-1])
    flat = array_ops.reshape(values, [-1])
    if axis == 0 or values.ndim < 2:
        return flat, None, None, weighted
    count = int(values.shape[0])
    rows = np.repeat(np.arange(count), int(np.prod(values.shape[1:])))
    return flat, rows, count, weighted
