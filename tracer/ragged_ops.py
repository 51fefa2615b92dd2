"""TensorFlow's ops on RaggedTensors, as TensorFlow dispatches them: `tt.add(rt, 3)`,
`rt + rt`, `tt.reduce_mean(rt, axis=1)`, `tt.concat([rt, rt], axis=1)`, `tt.tile`,
`tt.map_fn`, `tt.nn.embedding_lookup`, `tt.strings.substr` and the other elementwise ops;
`tt.size`, `tt.rank`, `tt.expand_dims` (tracer/ragged_dims.py), `tt.gather`,
`tt.boolean_mask` (tracer/ragged_gather.py), `tt.math.bincount` (tracer/ragged_bincount.py)
and reductions over an outer ragged dimension (tracer/ragged_segments.py) have modules of
their own.

Elementwise ops act on the flat values (a dense operand broadcast to them: through the
row ids where it has a size for the rows), reductions over a ragged dimension are segment
reductions by row ids, and joins gather the values; all of it tracer's ops on the
components, so they run in every backend with gradients to the flat values.

`install()` puts a dispatching function in the place of each of these in tracer's
namespaces: it calls the dense op first, and the ragged one only where the dense op refused
an argument and an argument is a RaggedTensor, so a call without one costs one Python call
more (benchmarks/RESULTS.md). It is installed when tracer is imported: an op whose argument
is the program's first RaggedTensor must dispatch too, and Python looks the op up first.
"""

import functools
import inspect

import numpy as np

from tracer import dtypes, embedding_sparse, ragged_dims, ragged_gather, ragged_shape
from tracer.autograph import CONVERTED as autograph_converted
from tracer.errors import InvalidArgumentError
from tracer.ops import (
    array_ops,
    broadcast_ops,
    index_ops,
    layout_ops,
    math_ops,
    scan_ops,
    segment_ops,
    string_ops,
    structure_ops,
)
from tracer.ragged_bincount import bincount
from tracer.ragged_indexing import getitem, take_rows
from tracer.ragged_segments import reduce_outer
from tracer.ragged_tensor import RaggedTensor, RaggedTensorSpec, _row_count, positions
from tracer.ragged_tensor import require_same_rows as _require_same_rows
from tracer.tensor import TensorLike, convert_to_tensor

# --- elementwise --------------------------------------------------------------------------


def unary(dense):
    """`dense` applied to the flat values of its first argument."""

    def op(x, *args, **kwargs):
        return x.with_flat_values(dense(x.flat_values, *args, **kwargs))

    return op


def binary(dense):
    """`dense` of two operands, one or both ragged (see `elementwise`)."""

    def op(x, y, *args, **kwargs):
        return elementwise(dense, x, y, *args, **kwargs)

    return op


def elementwise(dense, x, y, *args, **kwargs):
    """`dense(x, y)` where one or both are ragged: two ragged operands of the same row
    splits, or a ragged one and a dense one that broadcasts to it (its sizes on the ragged
    dimensions 1, on the rows 1 or the count of rows)."""
    if isinstance(x, RaggedTensor) and isinstance(y, RaggedTensor):
        _require_same_rows(x, y)
        return x.with_flat_values(dense(x.flat_values, y.flat_values, *args, **kwargs))
    if isinstance(x, RaggedTensor):
        return x.with_flat_values(dense(x.flat_values, _spread(y, x), *args, **kwargs))
    return y.with_flat_values(dense(_spread(x, y), y.flat_values, *args, **kwargs))


def _spread(other, rt):
    """A dense operand `other` made to broadcast against `rt`'s flat values."""
    if type(other) in (int, float, bool, complex):
        return other
    try:
        other = convert_to_tensor(other, dtype=rt.dtype)
    except (TypeError, ValueError):
        other = convert_to_tensor(other)
    inner = rt.ndim - rt.ragged_rank - 1
    if other.ndim <= inner:
        return other
    full = [1] * (rt.ndim - other.ndim) + list(other.shape)
    ragged = full[1 : rt.ragged_rank + 1]
    if any(d != 1 for d in ragged) or other.ndim > rt.ndim:
        raise InvalidArgumentError(
            None,
            None,
            f"a dense operand of shape {list(other.shape)} does not broadcast to a ragged "
            f"tensor of shape {rt.shape}: its sizes on the ragged dimensions must be 1",
        )
    rows = array_ops.reshape(other, [full[0], *full[rt.ragged_rank + 1 :]])
    if full[0] == 1:
        return rows[0]
    ids, level = rt.value_rowids(), rt.values
    while isinstance(level, RaggedTensor):
        ids = index_ops.gather(ids, level.value_rowids())
        level = level.values
    return index_ops.gather(rows, ids)


def _aligned_flat_values(operands, keep_numbers):
    """The first RaggedTensor of `operands`, and each operand's values on its flat values:
    a ragged one's own (of the same rows), a dense one spread to them (`_spread`), a Python
    number as it is where `keep_numbers`."""
    first = next(v for v in operands if isinstance(v, RaggedTensor))
    flats = []
    for v in operands:
        if isinstance(v, RaggedTensor):
            _require_same_rows(first, v)
            flats.append(v.flat_values)
        elif keep_numbers and type(v) in (int, float, bool):
            flats.append(v)
        else:
            flats.append(_spread(v, first))
    return first, flats


def where(condition, x=None, y=None, name=None):
    """x where `condition` holds, else y, elementwise: the ragged ones among the three of
    the same rows, the others broadcast to them (`where(condition)` alone is refused: its
    coordinates of a ragged tensor are not tracer's)."""
    operands = (condition, x, y)
    if x is None or y is None:
        raise NotImplementedError("tt.where of a RaggedTensor: give x and y as well")
    first, flats = _aligned_flat_values(operands, keep_numbers=True)
    return first.with_flat_values(math_ops.where(*flats))


# --- reductions ---------------------------------------------------------------------------


def _segment_mean(data, ids, count):
    total = segment_ops.unsorted_segment_sum(data, ids, count)
    ones = array_ops.ones_like(ids, dtype=data.dtype)
    sizes = segment_ops.unsorted_segment_sum(ones, ids, count)
    sizes = array_ops.reshape(sizes, [count] + [1] * (data.ndim - 1))
    return math_ops.divide(total, sizes)


def _segment_logical(reduce):
    """any (all) of each segment as the max (min) of its values as 0 and 1: an empty
    segment's extreme integer is the identity's answer by its sign (False for any, True
    for all)."""

    def op(data, ids, count):
        as_ints = array_ops.cast(data, dtypes.int32)
        return math_ops.greater(reduce(as_ints, ids, count), 0)

    return op


_SEGMENT_REDUCTIONS = {
    "reduce_sum": segment_ops.unsorted_segment_sum,
    "reduce_prod": segment_ops.unsorted_segment_prod,
    "reduce_max": segment_ops.unsorted_segment_max,
    "reduce_min": segment_ops.unsorted_segment_min,
    "reduce_mean": _segment_mean,
    "reduce_all": _segment_logical(segment_ops.unsorted_segment_min),
    "reduce_any": _segment_logical(segment_ops.unsorted_segment_max),
}


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """The strings of a ragged tensor joined: all of them (axis None), those of each row of
    its innermost ragged dimension (a tensor or ragged tensor of one dimension less), or
    along a dimension further in."""
    rt = inputs
    if axis is None:
        return string_ops.reduce_join(rt.flat_values, None, keepdims, separator)
    axis = int(axis) + rt.ndim if int(axis) < 0 else int(axis)
    if axis >= 2:
        inner = reduce_join if isinstance(rt.values, RaggedTensor) else string_ops.reduce_join
        return rt.with_values(inner(rt.values, axis - 1, keepdims, separator))
    if axis != 1 or isinstance(rt.values, RaggedTensor) or rt.values.ndim != 1 or keepdims:
        raise NotImplementedError(
            f"tt.strings.reduce_join of a RaggedTensor along axis {axis}: tracer joins all "
            "its strings, those of each innermost row, or along a uniform inner dimension"
        )
    text = separator.encode() if isinstance(separator, str) else separator
    splits = rt._known_splits("reduce_join")
    strings = list(np.asarray(rt.values.numpy(), object))
    rows = [text.join(strings[a:b]) for a, b in zip(splits[:-1], splits[1:])]
    return convert_to_tensor(np.array(rows, dtype=object).reshape(len(rows)))


def reduction(dense, kind):
    """A reduction of a ragged tensor (`kind`, as "reduce_sum"): over all its values, over
    the rows (axis 0), within the rows (axis 1), or over a dimension further in."""
    segment = _SEGMENT_REDUCTIONS[kind]

    def op(input_tensor, axis=None, keepdims=False, name=None):
        if axis is None:
            if keepdims:
                raise NotImplementedError(f"tt.{kind} of a RaggedTensor: keepdims with no axis")
            return dense(input_tensor.flat_values)
        axes = [int(a) for a in np.asarray(axis).reshape(-1)]
        if kind == "reduce_mean" and len(axes) > 1:  # the sum of their values over their
            summed = reduction(broadcast_ops.reduce_sum, "reduce_sum")  # count, not a mean
            ones = input_tensor.with_flat_values(array_ops.ones_like(input_tensor.flat_values))
            total, count = (summed(t, axes, keepdims) for t in (input_tensor, ones))
            return math_ops.divide(total, count)  # of means
        result = input_tensor
        for a in sorted((a + input_tensor.ndim if a < 0 else a for a in axes), reverse=True):
            result = _reduce_axis(kind, dense, segment, result, a, keepdims)
        return result

    return op


def _reduce_axis(kind, dense, segment, rt, axis, keepdims):
    if not isinstance(rt, RaggedTensor):
        if kind == "reduce_mean":  # as the ragged means: a sum over a count (ints give floats)
            total = broadcast_ops.reduce_sum(rt, axis=axis, keepdims=keepdims)
            return math_ops.divide(total, rt.shape[axis])
        return dense(rt, axis=axis, keepdims=keepdims)
    if axis >= 2:
        return rt.with_values(_reduce_axis(kind, dense, segment, rt.values, axis - 1, keepdims))
    if rt.ragged_rank > 1:  # elements that are rows themselves: tracer/ragged_segments.py
        result = reduce_outer(segment, rt, axis)
        return ragged_dims.expand_dims(result, axis) if keepdims else result
    rowids = rt.value_rowids()
    if axis == 1:
        result = segment(rt.values, rowids, _row_count(rt))
    else:
        splits = rt._known_splits(kind)
        lengths = np.diff(splits)
        longest = int(lengths.max()) if len(lengths) else 0
        columns = positions(rt.values) - index_ops.gather(rt.row_splits, rowids)
        result = segment(rt.values, columns, longest)
    return array_ops.expand_dims(result, axis) if keepdims else result


# --- joins --------------------------------------------------------------------------------


def concat(values, axis, name=None):
    """Ragged tensors (and dense ones of the same rank) joined along `axis`: the rows one
    after the other (axis 0), the rows of each side by side (axis 1), or the elements."""
    parts = _as_ragged_list(values, "tt.concat")
    axis = int(axis) + parts[0].ndim if int(axis) < 0 else int(axis)
    if axis == 0:
        return _join_rows(parts)
    if axis == 1:
        return _join_within_rows(parts)
    for p in parts[1:]:
        _require_same_rows(parts[0], p, levels=1)
    inner = concat if isinstance(parts[0].values, RaggedTensor) else structure_ops.concat
    return parts[0].with_values(inner([p.values for p in parts], axis - 1))


def stack(values, axis=0, name=None):
    """Ragged tensors (and dense ones of the same rank) stacked along a new `axis` (0 or
    1): a ragged tensor of one more ragged dimension."""
    parts = _as_ragged_list(values, "tt.stack")
    axis = int(axis) + parts[0].ndim + 1 if int(axis) < 0 else int(axis)
    counts = [_known_rows(p) for p in parts]
    if axis == 0:
        splits = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return RaggedTensor.from_row_splits(_join_rows(parts), splits, validate=False)
    if axis == 1:
        if len(set(counts)) > 1:
            raise ValueError(f"tt.stack: axis 1 of ragged tensors of {counts} rows")
        joined = _join_rows(parts)
        offsets = np.cumsum([0] + counts[:-1])
        order = [offset + r for r in range(counts[0]) for offset in offsets]
        rows = take_rows(joined, order)
        width = len(parts)
        uniform = np.arange(0, counts[0] * width + 1, width, dtype=np.int64)
        return RaggedTensor.from_row_splits(rows, uniform, validate=False)
    raise NotImplementedError(f"tt.stack of RaggedTensors along axis {axis}: tracer takes 0 or 1")


def _known_rows(rt):
    return len(rt._known_splits("stack")) - 1


def _as_ragged_list(values, what):
    """The operands as RaggedTensors of one rank and ragged rank (dense ones cut into
    rows of their full length)."""
    values = list(values)
    first = next(v for v in values if isinstance(v, RaggedTensor))
    parts = [
        v if isinstance(v, RaggedTensor)
        else RaggedTensor.from_tensor(_dense_like(v, first), ragged_rank=first.ragged_rank)
        for v in values
    ]  # fmt: skip
    ranks = {p.ndim for p in parts}
    if len(ranks) > 1 or len({p.ragged_rank for p in parts}) > 1:
        raise ValueError(f"{what}: the tensors must have one rank, not {sorted(ranks)}")
    dtypes_ = {p.dtype for p in parts}
    if len(dtypes_) > 1:
        raise TypeError(f"{what}: the tensors must have one dtype, not {sorted(map(str, dtypes_))}")
    return parts


def _dense_like(value, rt):
    if isinstance(value, TensorLike):
        return convert_to_tensor(value)
    return convert_to_tensor(value, dtype=rt.dtype)


def _join_rows(parts):
    """The rows of each part one after the other."""
    if not isinstance(parts[0], RaggedTensor):
        return structure_ops.concat(parts, 0)
    splits, offset = [parts[0].row_splits], parts[0].row_splits[-1:]
    for p in parts[1:]:
        splits.append(p.row_splits[1:] + offset)
        offset = offset + p.row_splits[-1:]
    joined = structure_ops.concat(splits, 0)
    return RaggedTensor.from_row_splits(
        _join_rows([p.values for p in parts]), joined, validate=False
    )


def _join_within_rows(parts):
    """Row r: the elements of row r of each part, one part after the other. Where the
    elements are dense, the positions are worked out with ops (so it traces with row
    splits known only when the function runs); else from the known row splits."""
    if not isinstance(parts[0].values, RaggedTensor):
        return _join_dense_within_rows(parts)
    return _join_ragged_within_rows(parts)


def _join_dense_within_rows(parts):
    counts = {p.shape[0] for p in parts} - {None}
    if len(counts) > 1:
        raise InvalidArgumentError(
            None, None, f"tt.concat along axis 1: the tensors have {sorted(counts)} rows"
        )
    joined = structure_ops.concat([p.values for p in parts], 0)
    lengths = [p.row_lengths() for p in parts]
    total = lengths[0]
    for more in lengths[1:]:
        total = total + more
    splits = structure_ops.concat([_zero(), scan_ops.cumsum(total)], 0)
    at = positions(joined)
    rows = RaggedTensor.from_row_splits(joined, splits, validate=False)
    ids = rows.value_rowids()
    offset = at - index_ops.gather(splits, ids)
    index, base, start = None, 0, array_ops.zeros_like(total)
    for part, length in zip(parts, lengths):
        first = index_ops.gather(start, ids)
        candidate = base + index_ops.gather(part.row_splits, ids) + offset - first
        index = candidate if index is None else math_ops.where(offset >= first, candidate, index)
        base, start = base + _row_count(part.values), start + length
    return RaggedTensor.from_row_splits(index_ops.gather(joined, index), splits, validate=False)


def _zero():
    return convert_to_tensor(np.zeros(1, np.int64))


def _join_ragged_within_rows(parts):
    splits = [p._known_splits("concat") for p in parts]
    counts = {len(s) - 1 for s in splits}
    if len(counts) > 1:
        raise InvalidArgumentError(
            None, None, f"tt.concat along axis 1: the tensors have {sorted(counts)} rows"
        )
    joined = _join_rows([p.values for p in parts])
    offsets = np.cumsum([0] + [int(s[-1]) for s in splits[:-1]])
    positions = [
        np.arange(offset + s[r], offset + s[r + 1])
        for r in range(counts.pop())
        for s, offset in zip(splits, offsets)
    ]
    lengths = np.sum([np.diff(s) for s in splits], axis=0).astype(np.int64)
    flat = np.concatenate(positions + [np.zeros(0, np.int64)]).astype(np.int64)
    return RaggedTensor.from_row_lengths(take_rows(joined, flat), lengths, validate=False)


def reverse(tensor, axis, name=None):
    """The order of the rows (axis 0), of each row's elements (axis 1) or of a dimension
    further in, reversed."""
    rt = tensor
    for a in sorted({int(a) + rt.ndim if int(a) < 0 else int(a) for a in np.reshape(axis, -1)}):
        rt = _reverse_axis(rt, a)
    return rt


def _reverse_axis(rt, axis):
    if axis >= 2:
        inner = reverse if isinstance(rt.values, RaggedTensor) else layout_ops.reverse
        return rt.with_values(inner(rt.values, [axis - 1]))
    if axis == 1 and not isinstance(rt.values, RaggedTensor):
        ids = rt.value_rowids()
        ends = index_ops.gather(rt.row_splits[:-1] + rt.row_splits[1:] - 1, ids)
        return rt.with_values(index_ops.gather(rt.values, ends - positions(rt.values)))
    splits = rt._known_splits("reverse")
    rows = np.arange(len(splits) - 1)
    if axis == 0:
        order = np.concatenate([np.arange(splits[r], splits[r + 1]) for r in rows[::-1]] + [[]])
        lengths = np.diff(splits)[::-1]
    else:
        order = np.concatenate([np.arange(splits[r], splits[r + 1])[::-1] for r in rows] + [[]])
        lengths = np.diff(splits)
    values = take_rows(rt.values, order.astype(np.int64))
    return RaggedTensor.from_row_lengths(values, lengths.astype(np.int64), validate=False)


def tile(input, multiples, name=None):
    """The rows repeated multiples[0] times, each row's elements multiples[1] times, and
    the dimensions further in as a dense tile's."""
    rt = input
    times = [int(m) for m in np.asarray(convert_to_tensor(multiples).numpy()).reshape(-1)]
    if len(times) != rt.ndim:
        raise ValueError(f"tt.tile: {len(times)} multiples for a tensor of rank {rt.ndim}")
    splits = rt._known_splits("tile")
    rows = np.tile(np.arange(len(splits) - 1), times[0])
    positions = [np.tile(np.arange(splits[r], splits[r + 1]), times[1]) for r in rows]
    lengths = np.array([len(p) for p in positions], np.int64)
    flat = np.concatenate(positions + [np.zeros(0, np.int64)]).astype(np.int64)
    values = take_rows(rt.values, flat)
    if any(m != 1 for m in times[2:]):
        inner = tile if isinstance(values, RaggedTensor) else broadcast_ops.tile
        values = inner(values, [1, *times[2:]])
    return RaggedTensor.from_row_lengths(values, lengths, validate=False)


# --- other dispatched functions -------------------------------------------------------------


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True, name=None, fn_output_signature=None):  # fmt: skip
    """`fn` of each row of `elems` (a ragged or dense tensor, or a tuple of them of one
    count of rows), one row at a time, the results stacked as `fn_output_signature` (or
    `dtype`) says, as TensorFlow's: as the rows of a ragged tensor for a RaggedTensorSpec
    (and without a signature: the rows' own, of ragged elems), into a dense tensor for a
    dtype or a TensorSpec; a tuple of them for a tuple. The count of rows must be known:
    when the function is traced, or it runs as Python."""
    parts = list(elems) if isinstance(elems, (tuple, list)) else [elems]
    count = _rows_when_run(parts[0])

    def element(r):
        rows = [p[r] for p in parts]
        return type(elems)(rows) if isinstance(elems, (tuple, list)) else rows[0]

    signature = fn_output_signature if fn_output_signature is not None else dtype
    return _stacked([fn(element(r)) for r in range(count)], signature)


def _rows_when_run(value):
    if isinstance(value, RaggedTensor):
        return len(value._splits_when_run("map_fn")[0]) - 1
    rows = convert_to_tensor(value).shape[0]
    if not isinstance(rows, int):
        raise TypeError("tt.map_fn: the count of rows must be known when the function is traced")
    return rows


def _stacked(results, signature):
    """The results of each row stacked as `signature` says (see `map_fn`)."""
    if isinstance(signature, (tuple, list)) or (
        signature is None and results and isinstance(results[0], (tuple, list))
    ):
        width = len(signature) if signature is not None else len(results[0])
        specs = signature if signature is not None else [None] * width
        return tuple(_stacked([r[k] for r in results], specs[k]) for k in range(width))
    if signature is None or isinstance(signature, RaggedTensorSpec):
        return stack_rows(results)
    wanted = dtypes.as_dtype(getattr(signature, "dtype", signature))
    tensors = [convert_to_tensor(r) for r in results]
    for t in tensors:
        if t.dtype != wanted:
            raise InvalidArgumentError(
                None,
                None,
                f"tt.map_fn: fn_output_signature's dtype is {wanted.name} but fn returned "
                f"{t.dtype.name}",
            )
    if not tensors:
        shape = [0, *getattr(signature, "shape", [])]
        return array_ops.zeros(shape, wanted)
    return structure_ops.stack(tensors, 0)


def stack_rows(values):
    """Tensors (or ragged tensors) of one rank stacked as the rows of a ragged tensor:
    rows of different lengths may be stacked."""
    values = list(values)
    if any(isinstance(v, RaggedTensor) for v in values):
        return stack(values, 0)
    rows = [
        RaggedTensor.from_tensor(array_ops.expand_dims(convert_to_tensor(v), 0)) for v in values
    ]
    return _join_rows(rows)


def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows of `params` for each id of a ragged tensor of ids: a ragged tensor."""
    return ids.with_flat_values(
        embedding_sparse.embedding_lookup(params, ids.flat_values, max_norm)
    )


def boolean_mask(tensor, mask, axis=None, name=None):
    """tt.boolean_mask of ragged operands: tt.ragged.boolean_mask's (tracer/ragged_gather.py)."""
    if axis not in (None, 0):
        raise NotImplementedError("tt.boolean_mask of a RaggedTensor: axis 0 only")
    return ragged_gather.boolean_mask(tensor, mask)


def strings_join(inputs, separator="", name=None):
    """The strings of ragged tensors of the same rows joined elementwise."""
    first, flats = _aligned_flat_values(list(inputs), keep_numbers=False)
    return first.with_flat_values(string_ops.join(flats, separator=separator))


# the dispatched names, by module, and how each is made of its dense op
_BINARY = (
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "mod", "floormod", "pow",
    "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "squared_difference",
    "divide_no_nan", "atan2",
)  # fmt: skip
_UNARY = (
    "abs", "negative", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "sin", "cos", "tan",
    "tanh", "sigmoid", "sign", "round", "floor", "ceil", "logical_not", "cast", "expm1",
    "reciprocal", "softplus", "erf", "erfc", "is_nan", "is_inf", "is_finite", "relu", "relu6", "elu",
    "gelu", "selu", "softsign", "silu", "swish", "identity", "stop_gradient", "as_string",
    "substr", "to_hash_bucket_fast", "to_hash_bucket_strong", "length", "lower", "upper",
    "strip", "regex_replace", "regex_full_match", "to_number", "ones_like", "zeros_like",
)  # fmt: skip
_REDUCTIONS = tuple(_SEGMENT_REDUCTIONS)
_OTHERS = {
    "concat": lambda dense: concat,
    "stack": lambda dense: stack,
    "tile": lambda dense: tile,
    "reverse": lambda dense: reverse,
    "where": lambda dense: where,
    "shape": lambda dense: ragged_shape.shape,
    "zeros": lambda dense: ragged_shape.zeros,
    "ones": lambda dense: ragged_shape.ones,
    "fill": lambda dense: ragged_shape.fill,
    "reshape": lambda dense: ragged_shape.reshape,
    "reduce_join": lambda dense: reduce_join,
    "map_fn": lambda dense: map_fn,
    "embedding_lookup": lambda dense: embedding_lookup,
    "size": lambda dense: ragged_dims.size,
    "rank": lambda dense: ragged_dims.rank,
    "expand_dims": lambda dense: ragged_dims.expand_dims,
    "gather": lambda dense: ragged_gather.gather,
    "boolean_mask": lambda dense: boolean_mask,
    "bincount": lambda dense: bincount,
}


def _ragged_version(name, module_name, dense):
    if name == "join" and module_name == "tracer.strings":
        return strings_join
    if name in _OTHERS:
        return _OTHERS[name](dense)
    if name in _BINARY:
        return binary(dense)
    if name in _UNARY:
        return unary(dense)
    if name in _REDUCTIONS:
        return reduction(dense, name)
    return None


_RAGGED_KINDS = (RaggedTensor, ragged_shape.DynamicRaggedShape)
# tt.map_fn takes the ragged way for a ragged output signature of dense elems too
_RAGGED_OR_SPEC = (*_RAGGED_KINDS, RaggedTensorSpec)


def _holds_ragged(args, kwargs, kinds=_RAGGED_KINDS):
    for value in (*args, *kwargs.values()):
        if isinstance(value, kinds):
            return True
        if isinstance(value, (list, tuple)) and any(isinstance(v, kinds) for v in value):
            return True
    return False


def dispatching(dense, ragged, ragged_first=False):
    """`dense`, which hands a call that it refuses and that holds a RaggedTensor to
    `ragged`; with `ragged_first`, one that holds a RaggedTensor at once (for a function
    that would take a ragged tensor as a structure of its components: tt.map_fn).

    The function is written with `dense`'s own parameters (`_same_parameters`), so that a
    call passes its arguments on as they came instead of packing them into a tuple and a
    dict: the dispatch costs a dense op's eager call one Python call (tracer's ops are C
    functions, tracer/ops/_fast_apply.c, that a call of packed arguments slows more)."""

    def refused(args, kwargs):
        if not _holds_ragged(args, kwargs):
            raise
        return ragged(*args, **kwargs)

    if ragged_first:

        def op(*args, **kwargs):
            if _holds_ragged(args, kwargs, _RAGGED_OR_SPEC):
                return ragged(*args, **kwargs)
            try:
                return dense(*args, **kwargs)
            except (TypeError, ValueError):
                return refused(args, kwargs)

        return functools.wraps(dense)(op)
    return _same_parameters(dense, refused)


def _same_parameters(dense, refused):
    """A function that calls `dense` with its arguments as they came, or
    `refused(args, kwargs)` where `dense` raises a TypeError or a ValueError (with that
    exception being handled, so that a bare `raise` re-raises it). Its parameters are
    `dense`'s leading ones without defaults, then `*more, **named`: a call of only those
    passes them on without packing a tuple and a dict (a C op function's call is then its
    fast one), and any other passes the rest on as given, by position or by name (tf_op
    reads `name` from the keywords alone). Its code is counted as this file's, a library
    file that an error's user line skips, and marked as autograph's own
    (`autograph_converted`)."""
    required = []
    for parameter in inspect.signature(dense).parameters.values():
        if (
            parameter.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD
            or parameter.default is not inspect.Parameter.empty
        ):
            break
        required.append(parameter.name)
    namespace = {"_dense": dense, "_refused": refused}
    exec(_dispatching_code(tuple(required)), namespace)
    op = functools.wraps(dense)(namespace["op"])
    # its code names this file, whose lines are not its source: autograph, which reads the
    # source of a function tt.function traces (tt.function(tt.square)), takes it as it is
    setattr(op, autograph_converted, True)
    return op


@functools.cache
def _dispatching_code(required):
    """The compiled code that defines `_same_parameters`'s function for these leading
    parameters: compiled once for each list of them (the ops share a few; compiling one for
    each op was 3% of `import tracer`)."""
    given = "".join(f"{name}, " for name in required)
    source = (
        f"def op({given}*_more, **_named):\n"
        "    try:\n"
        "        if _more or _named:\n"
        f"            return _dense({given}*_more, **_named)\n"
        f"        return _dense({given})\n"
        "    except (TypeError, ValueError):\n"
        f"        return _refused(({given}*_more), _named)\n"
    )
    return compile(source, __file__, "exec")


def install(modules):
    """Each dispatched function of `modules` replaced by its dispatching form (one per
    function, however many modules name it), and RaggedTensor's operators set."""
    for name, method in operators().items():
        setattr(RaggedTensor, name, method)
    made = {}
    for module in modules:
        for name in (*_BINARY, *_UNARY, *_REDUCTIONS, *_OTHERS, "join"):
            dense = getattr(module, name, None)
            if dense is None:
                continue
            ragged = _ragged_version(name, module.__name__, dense)
            if ragged is None:
                continue
            if id(dense) not in made:
                made[id(dense)] = dispatching(dense, ragged, ragged_first=name == "map_fn")
            setattr(module, name, made[id(dense)])


def operators():
    """RaggedTensor's operator methods, each the dispatched op of its name, its indexing
    (tracer/ragged_indexing.py) and `merge_dims` (tracer/ragged_dims.py)."""
    pairs = {
        "add": math_ops.add, "sub": math_ops.subtract, "mul": math_ops.multiply,
        "truediv": math_ops.divide, "floordiv": math_ops.floordiv, "mod": math_ops.floormod,
        "pow": math_ops.pow, "and": math_ops.logical_and, "or": math_ops.logical_or,
    }  # fmt: skip
    methods = {}
    for name, dense in pairs.items():
        methods[f"__{name}__"] = _method(dense, reflected=False)
        methods[f"__r{name}__"] = _method(dense, reflected=True)
    comparisons = {
        "lt": math_ops.less, "le": math_ops.less_equal, "gt": math_ops.greater,
        "ge": math_ops.greater_equal,
    }  # fmt: skip
    for name, dense in comparisons.items():
        methods[f"__{name}__"] = _method(dense, reflected=False)
    methods["__getitem__"] = getitem
    methods["merge_dims"] = ragged_dims.merge_dims
    methods["__neg__"] = lambda self: self.with_flat_values(math_ops.negative(self.flat_values))
    methods["__abs__"] = lambda self: self.with_flat_values(math_ops.abs(self.flat_values))
    methods["__invert__"] = lambda self: self.with_flat_values(
        math_ops.logical_not(self.flat_values)
    )
    return methods


def _method(dense, reflected):
    if reflected:
        return lambda self, other: elementwise(dense, other, self)
    return lambda self, other: elementwise(dense, self, other)
