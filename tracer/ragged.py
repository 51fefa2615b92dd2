"""`tt.ragged`: TensorFlow's functions that build and map ragged tensors
(tracer/ragged_tensor.py): `constant` of nested Python lists, `range` of rows of ranges,
`stack`, `map_flat_values`, `boolean_mask` (tracer/ragged_gather.py) and the conversions
between row splits and row ids.
"""

import builtins

import numpy as np

from tracer import dtypes
from tracer.ops import array_ops
from tracer.ops.convert import known_value
from tracer.ragged_gather import boolean_mask
from tracer.ragged_ops import _require_same_rows, stack_rows
from tracer.ragged_ops import stack as _stack_ragged
from tracer.ragged_tensor import RaggedTensor, RaggedTensorSpec, require_int64_splits
from tracer.tensor import convert_to_tensor

__all__ = [
    "RaggedTensorSpec", "boolean_mask", "constant", "map_flat_values", "range",
    "row_splits_to_segment_ids", "segment_ids_to_row_splits", "stack",
]  # fmt: skip


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=dtypes.int64):  # fmt: skip
    """A RaggedTensor of nested Python lists: its scalars all at one depth; the lists at
    the last `rank - 1 - ragged_rank` depths (all but the innermost by default: every
    dimension after the first is ragged) of one length each.

    >>> tt.ragged.constant([[1, 2], [3]]).to_list()
    [[1, 2], [3]]
    """
    require_int64_splits(row_splits_dtype, "tt.ragged.constant")
    depth = _scalar_depth(pylist)
    if depth is None:  # no scalar anywhere: a rank from the lists, or from inner_shape
        depth = _list_depth(pylist) + (len(inner_shape) if inner_shape else 0)
    if depth == 0:
        raise ValueError("tt.ragged.constant: give a nested list, not a scalar")
    inner = len(inner_shape) if inner_shape is not None else 0
    ragged_rank = depth - 1 - inner if ragged_rank is None else int(ragged_rank)
    if not 0 <= ragged_rank < depth:
        raise ValueError(
            f"tt.ragged.constant: ragged_rank {ragged_rank} for a list of depth {depth}"
        )
    level, nested = pylist, []
    for _ in builtins.range(ragged_rank):
        splits, parts = [0], []
        for item in level:
            if not isinstance(item, (list, tuple)):
                raise ValueError("tt.ragged.constant: all scalars must be at one nesting depth")
            parts.extend(item)
            splits.append(len(parts))
        nested.append(np.array(splits, np.int64))
        level = parts
    flat = _flat_values(level, dtype, depth - ragged_rank, inner_shape)
    if ragged_rank == 0:
        return flat
    return RaggedTensor.from_nested_row_splits(flat, nested, validate=False)


def _flat_values(items, dtype, rank, inner_shape):
    """The innermost values: a tensor of `rank` whose dimensions after the first are
    uniform; a ValueError where they are not, or where the scalars are of mixed kinds."""
    if not items:
        shape = [0, *(inner_shape or [0] * (rank - 1))]
        return convert_to_tensor(np.zeros(shape, np.float32), dtype=dtype)
    kinds = {type(v) for v in _scalars(items)}
    if str in kinds or bytes in kinds:
        if kinds - {str, bytes}:
            raise ValueError(
                "tt.ragged.constant: the values mix strings and numbers: "
                f"{sorted(k.__name__ for k in kinds)}"
            )
    try:
        array = np.array(items, dtype=object if kinds & {str, bytes} else None)
    except ValueError:
        array = None
    if array is None or array.ndim != rank or array.dtype == object and not (kinds & {str, bytes}):
        raise ValueError(
            "tt.ragged.constant: the inner dimensions (those not ragged) must be uniform: "
            "each list at one depth of one length"
        )
    if inner_shape is not None:
        array = array.reshape([-1, *inner_shape])
    return convert_to_tensor(array.tolist() if array.dtype != object else array, dtype=dtype)


def _scalars(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _scalars(item)
        else:
            yield item


def _scalar_depth(value):
    """The depth of the scalars in nested lists; a ValueError where it differs."""
    if not isinstance(value, (list, tuple)):
        return 0
    depths = {_scalar_depth(v) for v in value} - {None}
    if len(depths) > 1:
        raise ValueError("tt.ragged.constant: all scalars must be at one nesting depth")
    return depths.pop() + 1 if depths else None


def _list_depth(value):
    if not isinstance(value, (list, tuple)):
        return 0
    return 1 + max((_list_depth(v) for v in value), default=0)


def range(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype=dtypes.int64):
    """Row i: the range from starts[i] to limits[i] by deltas[i] (each a scalar or one
    per row), as tt.range.

    >>> tt.ragged.range([3, 1]).to_list()
    [[0, 1, 2], [0]]
    """
    require_int64_splits(row_splits_dtype, "tt.ragged.range")
    if limits is None:
        starts, limits = 0, starts
    bounds = [convert_to_tensor(b) for b in (starts, limits, deltas)]
    kind = dtypes.as_dtype(dtype) if dtype is not None else _widest(bounds)
    values = [np.asarray(known_value(b, "tt.ragged.range: a bound")) for b in bounds]
    starts, limits, deltas = np.broadcast_arrays(*values)
    if np.any(deltas == 0):
        raise ValueError("tt.ragged.range: deltas must not be 0")
    bounds = zip(starts.reshape(-1), limits.reshape(-1), deltas.reshape(-1))
    rows = [np.arange(start, limit, delta) for start, limit, delta in bounds]
    lengths = np.array([len(r) for r in rows], np.int64)
    flat = np.concatenate(rows + [np.zeros(0)]).astype(kind.as_numpy_dtype)
    return RaggedTensor.from_row_lengths(flat, lengths, validate=False)


def _widest(bounds):
    order = ("int32", "int64", "float32", "float64")
    names = [b.dtype.name for b in bounds]
    return dtypes.as_dtype(max(names, key=lambda n: order.index(n) if n in order else 0))


def stack(values, axis=0, name=None):
    """Tensors or ragged tensors (of one rank) stacked along a new `axis` (0 or 1) into a
    ragged tensor: rows of different lengths may be stacked.

    >>> tt.ragged.stack([[1, 2], [3]]).to_list()
    [[1, 2], [3]]
    """
    if int(axis) == 0:
        return stack_rows(values)
    return _stack_ragged(values, axis)


def map_flat_values(op, *args, **kwargs):
    """`op` of the flat values of the ragged tensors among the arguments (all of the same
    row splits), the others passed as they are: a ragged tensor of those rows."""
    ragged = [a for a in (*args, *kwargs.values()) if isinstance(a, RaggedTensor)]
    if not ragged:
        raise ValueError("tt.ragged.map_flat_values: give at least one RaggedTensor")
    for other in ragged[1:]:
        _require_same_rows(ragged[0], other)

    def flat(a):
        return a.flat_values if isinstance(a, RaggedTensor) else a

    values = op(*(flat(a) for a in args), **{k: flat(v) for k, v in kwargs.items()})
    return ragged[0].with_flat_values(values)


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The row of each value of row splits `splits`."""
    rt = RaggedTensor.from_row_splits(
        array_ops.zeros([int(np.asarray(known_value(convert_to_tensor(splits), "splits"))[-1])]),
        splits,
    )
    ids = rt.value_rowids()
    return ids if out_type is None else array_ops.cast(ids, out_type)


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """The row splits of sorted row ids `segment_ids`."""
    ids = convert_to_tensor(segment_ids)
    rt = RaggedTensor.from_value_rowids(array_ops.zeros(ids.shape), ids, nrows=num_segments)
    splits = rt.row_splits
    return splits if out_type is None else array_ops.cast(splits, out_type)
