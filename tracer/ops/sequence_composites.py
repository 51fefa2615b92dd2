"""TensorFlow functions that index or count along an axis, composed of tracer's primitives:
`repeat`, `searchsorted` and `histogram_fixed_width`. Their output shapes follow from the
shapes and static arguments alone, so each runs eagerly, compiled and in exported C, and
`repeat` differentiates through its gather."""

import numpy as np

from tracer import dtypes
from tracer.ops import array_ops, math_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor, length_value
from tracer.ops.index_ops import gather
from tracer.ops.segment_ops import unsorted_segment_sum


def repeat(input, repeats, axis=None, name=None):
    """Each element of `input` repeated along `axis` (flattened first when None), `repeats`
    times: one count for all, or one per element along the axis. The counts must be known
    when tracing (the output's length is their sum).

    >>> tt.repeat([[1, 2], [3, 4]], [1, 2], axis=0).numpy().tolist()
    [[1, 2], [3, 4], [3, 4]]
    """
    tensor = as_tensor(input)
    if axis is None:
        tensor, axis = array_ops.reshape(tensor, (-1,)), 0
    axis = int(axis) % max(tensor.ndim, 1)
    counts = length_value(repeats, "tt.repeat's repeats")
    counts = np.asarray(counts, dtype=np.int64)
    length = tensor.shape[axis]
    if not isinstance(length, int):
        raise ValueError(
            f"tt.repeat: the size of axis {axis} must be known when tracing, not {length}"
        )
    if counts.ndim > 1 or (counts.ndim == 1 and counts.size not in (1, length)):
        raise ValueError(
            f"tt.repeat: repeats must be one count or {length} (one per element of axis "
            f"{axis}), not of shape {counts.shape}"
        )
    if np.any(counts < 0):
        raise ValueError(f"tt.repeat: repeats must not be negative, not {counts.tolist()}")
    indices = np.repeat(np.arange(length), np.broadcast_to(counts.reshape(-1), (length,)))
    return gather(tensor, indices.astype(np.int32), axis=axis)


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """For each of `values`, the index in `sorted_sequence` (sorted along its last axis,
    which its leading axes share with `values`) where it would go to keep the order: before
    equal elements with `side="left"`, after them with "right" (numpy's searchsorted, row by
    row). A count of the smaller elements, so it costs len(sequence) x len(values) a row.

    >>> tt.searchsorted([1.0, 3.0, 5.0], [0.0, 3.0, 6.0]).numpy().tolist()
    [0, 1, 3]
    """
    if side not in ("left", "right"):
        raise ValueError(f'tt.searchsorted: side must be "left" or "right", not {side!r}')
    sequence, values = as_tensor(sorted_sequence), as_tensor(values)
    if sequence.ndim == 0 or values.ndim == 0 or sequence.ndim != values.ndim:
        raise ValueError(
            "tt.searchsorted: sorted_sequence and values must be of one rank, 1 or more, not "
            f"{tuple(sequence.shape)} and {tuple(values.shape)}"
        )
    before = math_ops.less if side == "left" else math_ops.less_equal
    below = before(sequence[..., None, :], values[..., :, None])
    return reduce_sum(array_ops.cast(below, out_type), axis=-1)


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The counts of `values` in `nbins` equal bins spanning `value_range` [lo, hi]; values
    below lo count in the first bin and those at or above hi in the last (TensorFlow's).

    >>> tt.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0], [0.0, 5.0], nbins=5).numpy().tolist()
    [2, 1, 1, 0, 1]
    """
    bins = int(length_value(nbins, "tt.histogram_fixed_width's nbins"))
    if bins < 1:
        raise ValueError(f"tt.histogram_fixed_width: nbins must be positive, not {bins}")
    values = array_ops.reshape(as_tensor(values), (-1,))
    limits = array_ops.cast(as_tensor(value_range), values.dtype)
    low, high = limits[0], limits[1]
    scaled = math_ops.floor((values - low) / (high - low) * float(bins))
    # clipped as floats first: a value far outside the range fits no int32
    index = array_ops.cast(math_ops.clip_by_value(scaled, 0.0, float(bins - 1)), dtypes.int32)
    ones = array_ops.ones_like(index, dtype=dtype)
    return unsorted_segment_sum(ones, index, bins)
