"""`tt.gather` and `tt.ragged.boolean_mask` with RaggedTensors, as TensorFlow's: rows of a
ragged tensor picked by dense indices, rows of any tensor picked by ragged indices (the
result has the indices' rows), and the elements a mask keeps, whose row lengths become
ragged.

Rows of a ragged tensor are taken by their known row splits (tracer/ragged_indexing.py),
and the count of values a result keeps depends on them, or on the indices' or the mask's
values: known when a traced function is traced (constants there), else the function runs
as Python (`length_value`). Ragged indices of dense params gather the flat indices alone,
which traces with any splits. The values are gathered by ops, so gradients reach them (a
dense params' as IndexedSlices).
"""

import numpy as np

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.ops import array_ops, index_ops, segment_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import length_value
from tracer.ops.mask_composites import boolean_mask as dense_boolean_mask
from tracer.ragged_indexing import take_rows
from tracer.ragged_tensor import RaggedTensor, require_same_rows
from tracer.tensor import convert_to_tensor


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """`params`' rows (axis 0) at `indices`: ragged indices give a ragged tensor of their
    rows (of ragged params' rows, a ragged rank more); dense indices of ragged params give
    those rows, a dimension for each of the indices' (uniform ones after the first).

    >>> tt.gather(tt.ragged.constant([[1, 2], [], [3]]), [2, 0]).to_list()
    [[3], [1, 2]]
    """
    if axis not in (None, 0) or batch_dims != 0:
        raise NotImplementedError(
            "tt.gather of a RaggedTensor: tracer gathers rows (axis 0, batch_dims 0)"
        )
    if isinstance(indices, RaggedTensor):
        return indices.with_flat_values(_gathered(params, indices.flat_values))
    return _gathered(params, indices)


def _gathered(params, indices):
    if not isinstance(params, RaggedTensor):
        return index_ops.gather(params, indices)
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise TypeError(f"tt.gather: indices must be integers, not {indices.dtype.name}")
    rows = np.asarray(length_value(indices, "tt.gather's indices of a RaggedTensor"))
    splits = params._splits_when_run("gather")
    count = len(splits[0]) - 1
    bad = rows.reshape(-1)[(rows.reshape(-1) < 0) | (rows.reshape(-1) >= count)]
    if bad.size:
        k = int(np.flatnonzero(rows.reshape(-1) == bad[0])[0])
        raise InvalidArgumentError(None, None, f"indices[{k}] = {bad[0]} is not in [0, {count})")
    return _uniform_outer(take_rows(params, rows.reshape(-1)), rows.shape)


def _uniform_outer(rows, shape):
    """`rows` (prod(shape) of them) grouped into `shape`'s dimensions: uniform rows, as
    many ragged dimensions more as `shape` has after its first."""
    for depth in range(len(shape) - 1, 0, -1):
        splits = _uniform_splits(int(np.prod(shape[:depth])), int(shape[depth]))
        rows = RaggedTensor.from_row_splits(rows, splits, validate=False)
    return rows


def _uniform_splits(rows, width):
    return np.arange(rows + 1, dtype=np.int64) * width


def boolean_mask(data, mask, name=None):
    """The elements of `data` where `mask` (of `data`'s outer dimensions) is true: a mask
    of rank 1 keeps rows (a dense tensor of a dense `data`); one of rank k keeps elements
    of the k-th dimension, whose rows become ragged (a ragged tensor of ragged rank k - 1,
    the dimensions between uniform); a ragged mask of a ragged `data` of the same rows
    keeps elements of its innermost rows.

    >>> tt.ragged.boolean_mask([[1, 2, 3], [4, 5, 6]], [[True, False, True], [False] * 3]).to_list()
    [[1, 3], []]
    """
    if isinstance(mask, RaggedTensor):
        return _ragged_mask(data, mask)
    mask = convert_to_tensor(mask)
    if mask.dtype != dtypes.bool:
        raise TypeError(f"tt.ragged.boolean_mask: mask must be bool, not {mask.dtype.name}")
    if mask.ndim == 0:
        raise ValueError("tt.ragged.boolean_mask: mask cannot be a scalar")
    if isinstance(data, RaggedTensor):
        if mask.ndim != 1:
            raise NotImplementedError(
                "tt.ragged.boolean_mask of a RaggedTensor: tracer takes a mask of its rows "
                "(rank 1) or a ragged mask of its shape"
            )
        flags = np.asarray(length_value(mask, "tt.ragged.boolean_mask's mask"))
        data._splits_when_run("boolean_mask")
        return take_rows(data, np.flatnonzero(flags))
    data = convert_to_tensor(data)
    if mask.ndim == 1:
        return dense_boolean_mask(data, mask)
    return _dense_mask(data, mask)


def _dense_mask(data, mask):
    """A dense `data` by a dense mask of rank k > 1: its first k dimensions' elements kept,
    each row of the k-th dimension a ragged row, the dimensions between uniform."""
    k = mask.ndim
    outer = list(data.shape[:k])
    if outer != list(mask.shape):
        raise ValueError(f"Shapes {tuple(data.shape)} and {tuple(mask.shape)} are incompatible")
    flat = array_ops.reshape(data, [-1, *data.shape[k:]])
    kept = dense_boolean_mask(flat, array_ops.reshape(mask, [-1]))
    lengths = array_ops.reshape(reduce_sum(array_ops.cast(mask, dtypes.int64), -1), [-1])
    return _uniform_outer(RaggedTensor.from_row_lengths(kept, lengths, validate=False), outer[:-1])


def _ragged_mask(data, mask):
    """A ragged `data` by a ragged mask of its shape: the flat values the mask keeps, the
    innermost rows' lengths counted again."""
    if not isinstance(data, RaggedTensor) or data.ragged_rank != mask.ragged_rank:
        raise NotImplementedError(
            "tt.ragged.boolean_mask: a ragged mask takes a ragged tensor of its ragged rank"
        )
    if mask.flat_values.ndim != 1:
        raise NotImplementedError("tt.ragged.boolean_mask: the mask's flat values must be a vector")
    require_same_rows(data, mask)
    kept = dense_boolean_mask(data.flat_values, mask.flat_values)
    innermost = _innermost(mask)
    counts = segment_ops.unsorted_segment_sum(
        array_ops.cast(mask.flat_values, dtypes.int64),
        innermost.value_rowids(),
        innermost.nrows(),
    )
    rows = RaggedTensor.from_row_lengths(kept, counts, validate=False)
    for splits in reversed(mask.nested_row_splits[:-1]):
        rows = RaggedTensor.from_row_splits(rows, splits, validate=False)
    return rows


def _innermost(rt):
    while isinstance(rt.values, RaggedTensor):
        rt = rt.values
    return rt
