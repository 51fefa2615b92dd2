"""`tt.math.bincount` of a RaggedTensor, as TensorFlow's: the counts of all its values
(axis None or 0), or of each row's (axis -1, a matrix of ragged rank 1: a dense
[rows, bins] tensor).

The count of bins is the largest value + 1 (between `minlength` and `maxlength`), known
from the values as the dense bincount's is (tracer/ops/segment_ops.py); each row's counts
are one segment sum over row * bins + value, so weights get gradients.
"""

from tracer import dtypes
from tracer.ops import array_ops, math_ops, segment_ops
from tracer.ops.segment_ops import _bincount_length
from tracer.ragged_tensor import RaggedTensor, _row_count, require_same_rows


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32, name=None, axis=None, binary_output=False):  # fmt: skip
    """How often each value 0, 1, ... occurs in the ragged tensor `arr` (the sum of the
    `weights`, a ragged tensor of its rows, where given), over all of it or in each row.

    >>> tt.math.bincount(tt.ragged.constant([[1, 1], [], [0]]), axis=-1).numpy().tolist()
    [[0, 2], [0, 0], [1, 0]]
    """
    flat = arr.flat_values
    flat_weights = None
    if weights is not None:
        if not isinstance(weights, RaggedTensor):
            raise TypeError("tt.math.bincount: weights of a RaggedTensor must be ragged too")
        require_same_rows(arr, weights)
        flat_weights = weights.flat_values
    if axis in (None, 0):
        return segment_ops.bincount(
            flat, flat_weights, minlength, maxlength, dtype, binary_output=binary_output
        )
    if axis != -1:
        raise ValueError(f"tt.math.bincount: axis must be None, 0 or -1, got {axis!r}")
    if arr.ragged_rank != 1 or flat.ndim != 1:
        raise ValueError(
            "tt.math.bincount: axis=-1 counts the rows of a ragged matrix (ragged rank 1)"
        )
    if binary_output and weights is not None:
        raise ValueError("bincount: binary_output and weights are mutually exclusive")
    return _row_counts(arr, flat, flat_weights, minlength, maxlength, dtype, binary_output)


def _row_counts(arr, flat, weights, minlength, maxlength, dtype, binary_output):
    """[rows, bins]: each row's count of each value (values from `bins` up not counted)."""
    bins = _bincount_length(flat, minlength, maxlength)
    rows = _row_count(arr)
    flat = array_ops.cast(flat, dtypes.int64)
    inside = flat < bins
    ones = array_ops.ones_like(flat, dtype=dtypes.as_dtype(dtype))
    amounts = ones if weights is None else weights
    amounts = math_ops.where(inside, amounts, array_ops.zeros_like(amounts))
    places = arr.value_rowids() * bins + math_ops.where(inside, flat, array_ops.zeros_like(flat))
    count = rows * bins
    counts = segment_ops.unsorted_segment_sum(amounts, places, count)
    counts = array_ops.reshape(counts, [-1, bins])
    if binary_output:
        return array_ops.cast(counts > 0, dtypes.as_dtype(dtype))
    return counts
