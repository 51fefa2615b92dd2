"""`tt.nn.embedding_lookup_sparse` and `tt.nn.safe_embedding_lookup_sparse`: TensorFlow's
bags of embeddings, where row i of a SparseTensor of ids (its first index) lists the ids
whose embeddings (rows of `params`, optionally weighted) are combined into row i of the
result, by their sum, mean or sum over the square root of the count ("sqrtn").

Both are a gather of the params' rows by id and a segment sum by the ids' rows, so a
gradient reaches the params as IndexedSlices (the gather is their only use), as
TensorFlow's does, and the weights' values get one too. `params` may be a list of tensors,
one table cut into consecutive blocks of rows ("div", the partitioning of TensorFlow 2's
`tf.nn`): the blocks are joined and the ids read as rows of the whole table.

`embedding_lookup_sparse`'s result has a row for each row up to the last that holds an id
(TensorFlow's sorted segment sum), a count that depends on the ids' indices: known when a
function is traced where they are constants, else the function runs as Python
(`length_value`). The safe one keeps every row of the ids' dense shape (empty or pruned rows
zero, or the embedding of `default_id`), so it compiles with indices known only when the
function runs.
"""

import numpy as np

from tracer import dtypes
from tracer.clipping import clip_by_norm
from tracer.errors import InvalidArgumentError
from tracer.ops import array_ops, index_ops, math_ops, segment_ops, structure_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import length_value
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import convert_to_tensor

_COMBINERS = ("mean", "sqrtn", "sum")


def embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=None, max_norm=None, name=None, allow_fast_lookup=False):  # fmt: skip
    """Row r of the result: the embeddings `params[id]` of the ids of row r of `sp_ids`
    (each times its weight in `sp_weights`, a SparseTensor of the same indices, where
    given) combined by `combiner`: "sum", "mean" (the default: the sum over the sum of the
    weights) or "sqrtn" (the sum over the square root of the sum of squared weights). An
    empty row is zeros; rows after the last that holds an id are not in the result.

    >>> ids = tt.SparseTensor([[0, 0], [0, 1], [2, 0]], tt.constant([1, 3, 0], tt.int64), [3, 2])
    >>> tt.nn.embedding_lookup_sparse(tt.eye(4), ids, None, combiner="sum").numpy().tolist()
    [[0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]
    """
    combiner = _checked_combiner(combiner)
    ids, weights = _checked_sparse(sp_ids, sp_weights, "tt.nn.embedding_lookup_sparse")
    rows = index_ops.gather(ids.indices, 0, axis=1)
    count = _rows_up_to_last(rows)
    embeddings = embedding_lookup(params, ids.values, max_norm)
    if weights is None:
        weights = array_ops.ones_like(ids.values, dtype=embeddings.dtype)
    else:
        weights = _weights_of(weights.values, embeddings.dtype)
    return _combined(embeddings, weights, rows, count, combiner)


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None, combiner="mean", default_id=None, max_norm=None, name=None, allow_fast_lookup=False):  # fmt: skip
    """`embedding_lookup_sparse` that leaves out negative ids (and, with `sparse_weights`,
    ids of a weight that is not positive), keeps a row for every row of the ids' dense
    shape (zeros for a row left without ids, or the embedding of `default_id` where it is
    given), and takes ids of rank 3 and more: the result has the ids' dense shape without
    its last dimension, then the embedding's.

    >>> ids = tt.SparseTensor([[0, 0], [1, 0]], tt.constant([2, -1], tt.int64), [3, 2])
    >>> tt.nn.safe_embedding_lookup_sparse(tt.eye(3), ids).numpy().tolist()
    [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    combiner = _checked_combiner(combiner)
    what = "tt.nn.safe_embedding_lookup_sparse"
    ids, weights = _checked_sparse(sparse_ids, sparse_weights, what)
    if ids.ndim < 2:
        raise ValueError(f"{what}: sparse_ids must have rank 2 or more, not {ids.ndim}")
    outer = ids._dense_shape[:-1]
    count = int(np.prod(outer))
    rows = _linear_rows(ids.indices, outer)
    valid = ids.values >= 0
    dtype = _table(embedding_weights).dtype
    if weights is not None:
        weights = _weights_of(weights.values, dtype)
        valid = math_ops.logical_and(valid, weights > 0)
    else:
        weights = array_ops.ones_like(ids.values, dtype=dtype)
    # a left-out id reads row 0 with weight 0: the result and the gradient are as if it
    # were pruned, with sizes that do not depend on which ids are left out
    kept = math_ops.where(valid, ids.values, array_ops.zeros_like(ids.values))
    weights = math_ops.where(valid, weights, array_ops.zeros_like(weights))
    embeddings = embedding_lookup(embedding_weights, kept, max_norm)
    result = _combined(embeddings, weights, rows, count, combiner)
    if default_id is not None:
        present = segment_ops.unsorted_segment_sum(array_ops.cast(valid, dtypes.int32), rows, count)
        ids_of_default = array_ops.fill([count], np.int64(default_id))
        default = embedding_lookup(embedding_weights, ids_of_default, max_norm)
        empty = _along_rows(present == 0, result.ndim)
        result = math_ops.where(empty, default, result)
    return array_ops.reshape(result, [*outer, *result.shape[1:]])


def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows `ids` of `params` (a tensor, or a list of tensors: one table cut into
    consecutive blocks of rows, TensorFlow 2's "div" partitioning), each scaled down to an
    L2 norm of at most `max_norm` where it is given: `tt.nn.embedding_lookup`.

    >>> blocks = [tt.constant([[0.0], [1.0]]), tt.constant([[2.0]])]
    >>> tt.nn.embedding_lookup(blocks, [2, 0]).numpy().tolist()
    [[2.0], [0.0]]
    """
    ids = convert_to_tensor(ids)
    if isinstance(params, (list, tuple)) and len(params) > 1:
        blocks = _tensors(params)
        ids = _div_positions(ids, [int(p.shape[0]) for p in blocks])
        table = structure_ops.concat(blocks, 0)
    else:
        table = _table(params)
    rows = index_ops.gather(table, ids)
    if max_norm is None:
        return rows
    # each embedding alone: the axes after the ids' (none for a table of scalars: each clipped
    # to its magnitude), as TensorFlow's clip of the gathered rows
    return clip_by_norm(rows, max_norm, axes=list(range(ids.ndim, rows.ndim)))


# --- helpers --------------------------------------------------------------------------------


def _checked_combiner(combiner):
    combiner = "mean" if combiner is None else combiner
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    return combiner


def _checked_sparse(ids, weights, what):
    if not isinstance(ids, SparseTensor):
        raise TypeError(f"{what}: the ids must be a SparseTensor, not {type(ids).__name__}")
    if weights is not None and not isinstance(weights, SparseTensor):
        raise TypeError(
            f"{what}: the weights must be a SparseTensor or None, not {type(weights).__name__}"
        )
    if weights is not None and weights._dense_shape != ids._dense_shape:
        raise ValueError(
            f"{what}: the weights' dense shape {list(weights._dense_shape)} is not the ids' "
            f"{list(ids._dense_shape)}"
        )
    if not ids.dtype.is_integer:
        raise TypeError(f"{what}: the ids must be integers, not {ids.dtype.name}")
    return ids, weights


def _tensors(params):
    return [convert_to_tensor(p) for p in params]


def _table(params):
    """`params`, or its first block (which has the table's dtype and inner shape)."""
    if not isinstance(params, (list, tuple)):
        return convert_to_tensor(params)
    if not params:
        raise ValueError("embedding lookup: params must not be an empty list")
    return convert_to_tensor(params[0])


def _div_positions(ids, sizes):
    """Each id's row in the joined blocks: TensorFlow's "div" partitioning gives the first
    `total % n` blocks `total // n + 1` ids each and the others `total // n`, in order; a
    block's own size need not be that, so an id is placed by the partitioning and read at
    its block's start in the joined table."""
    total, n = sum(sizes), len(sizes)
    per, extra = total // n, total % n
    bound = (per + 1) * extra
    if ids._value is not None:
        _check_blocks(np.asarray(ids._value, np.int64).reshape(-1), sizes, per, extra, bound)
    ids64 = array_ops.cast(ids, dtypes.int64)
    block = math_ops.where(
        ids64 < bound, ids64 // (per + 1), extra + (ids64 - bound) // max(per, 1)
    )
    first = math_ops.where(ids64 < bound, block * (per + 1), bound + (block - extra) * per)
    starts = convert_to_tensor(np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64))
    return index_ops.gather(starts, block) + ids64 - first


def _check_blocks(ids, sizes, per, extra, bound):
    """An InvalidArgumentError for a known id outside the table, or past the end of the
    block the partitioning puts it in (blocks of other sizes than the partitioning's)."""
    block = np.where(ids < bound, ids // (per + 1), extra + (ids - bound) // max(per, 1))
    first = np.where(ids < bound, block * (per + 1), bound + (block - extra) * per)
    inside = (ids >= 0) & (block < len(sizes))
    inside &= ids - first < np.asarray(sizes)[np.clip(block, 0, len(sizes) - 1)]
    if not inside.all():
        bad = int(ids[~inside][0])
        raise InvalidArgumentError(
            None, None, f"embedding lookup: id {bad} is outside its block of params {sizes}"
        )


def _weights_of(values, dtype):
    if values.dtype != dtype:
        raise TypeError(
            f"the weights ({values.dtype.name}) must have the embeddings' dtype ({dtype.name})"
        )
    return values


def _rows_up_to_last(rows):
    """The count of result rows: the last row that holds an id, plus one. Its ids' rows
    must not decrease (TensorFlow's sorted segments)."""
    known = np.asarray(
        length_value(rows, "tt.nn.embedding_lookup_sparse: the ids' indices", _ROWS_HINT)
    )
    if np.any(np.diff(known) < 0):
        raise InvalidArgumentError(None, None, "segment ids are not increasing")
    return int(known[-1]) + 1 if known.size else 0


_ROWS_HINT = " (the result has a row up to the last that holds an id)"


def _linear_rows(indices, outer):
    """Each entry's row of the result: its index without the last coordinate, numbered in
    row-major order over the dense shape's `outer` dimensions."""
    strides = [int(np.prod(outer[k + 1 :])) for k in range(len(outer))]
    coordinates = indices[:, : len(outer)]
    return reduce_sum(coordinates * convert_to_tensor(np.asarray(strides, np.int64)), 1)


def _along_rows(vector, ndim):
    return array_ops.reshape(vector, [-1, *[1] * (ndim - 1)])


def _combined(embeddings, weights, rows, count, combiner):
    """The weighted embeddings summed by row (`count` rows), then divided as `combiner`
    says: by the sum of the weights ("mean") or the square root of the sum of their
    squares ("sqrtn"), 0 for a row whose divisor is 0."""
    spread = _along_rows(weights, embeddings.ndim)
    total = segment_ops.unsorted_segment_sum(embeddings * spread, rows, count)
    if combiner == "sum":
        return total
    divisor = weights if combiner == "mean" else weights * weights
    divisor = segment_ops.unsorted_segment_sum(divisor, rows, count)
    if combiner == "sqrtn":
        divisor = math_ops.sqrt(divisor)
    divisor = _along_rows(divisor, total.ndim)
    safe = math_ops.where(divisor == 0, array_ops.ones_like(divisor), divisor)
    return math_ops.where(divisor == 0, array_ops.zeros_like(total), total / safe)
