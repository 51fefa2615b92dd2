"""`tt.sparse`: TensorFlow's functions of sparse tensors (tracer/sparse_tensor.py).

Each is written with tracer's ops on the components, so it runs eagerly, in a tape and in
a compiled function alike, and a gradient reaches the values: `to_dense` is a scatter,
`sparse_dense_matmul` a gather and a segment sum, `reorder` a sort of the entries' linear
positions. Where the entries a result keeps depend on the data (`from_dense`, `slice`,
`retain`, `add` of two sparse tensors, `fill_empty_rows`), their positions are worked out
from the indices' (or the dense tensor's) values, so those must be known when a function is
traced; the kept values are gathered by an op, so their gradients flow (docs/sparse.md).
`softmax`, `split`, `bincount`, `cross` and `cross_hashed` are modules of their own
(tracer/sparse_*.py).
"""

import numpy as np

from tracer import dtypes
from tracer.ops import (
    array_ops,
    broadcast_ops,
    index_ops,
    math_ops,
    reduction_ops,
    scatter_nd_ops,
    segment_ops,
    sort_ops,
    structure_ops,
)
from tracer.ops.convert import known_value
from tracer.sparse_bincount import bincount
from tracer.sparse_cross import cross, cross_hashed
from tracer.sparse_softmax import softmax
from tracer.sparse_split import split
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import convert_to_tensor

__all__ = [
    "SparseTensor", "add", "bincount", "concat", "cross", "cross_hashed", "expand_dims", "eye",
    "fill_empty_rows", "from_dense", "map_values", "maximum", "minimum", "reduce_max",
    "reduce_sum", "reorder", "reshape", "retain", "segment_mean", "segment_sqrt_n",
    "segment_sum", "slice", "softmax", "sparse_dense_matmul", "split", "to_dense",
    "to_indicator", "transpose",
]  # fmt: skip


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor: each entry's value at its index, `default_value` (0) elsewhere.
    With `validate_indices`, eagerly known indices must be in row-major order without
    repeats, as TensorFlow checks."""
    sp = _sparse(sp_input, "to_dense")
    if validate_indices:
        _check_ordered(sp, "tt.sparse.to_dense")
    if sp.dtype.is_string:
        return _dense_strings(sp, default_value)
    dense = scatter_nd_ops.scatter_nd(sp.indices, sp.values, sp._dense_shape)
    if default_value is None:
        return dense
    default = convert_to_tensor(default_value, dtype=sp.dtype)
    ones = array_ops.ones_like(sp.values, dtype=dtypes.int32)
    present = scatter_nd_ops.scatter_nd(sp.indices, ones, sp._dense_shape) > 0
    return math_ops.where(present, dense, default)


def _dense_strings(sp, default_value):
    """The dense tensor of a sparse one of strings, `default_value` ('') elsewhere: made in
    numpy from the entries (strings have no gradient, and tracer's scatter takes numbers)."""
    default = b"" if default_value is None else default_value
    default = default.encode() if isinstance(default, str) else default
    out = np.full(sp._dense_shape, default, dtype=object)
    values = known_value(sp.values, "tt.sparse.to_dense: the strings")
    out[tuple(_indices(sp, "to_dense").T)] = np.asarray(values, dtype=object)
    return convert_to_tensor(out)


def from_dense(tensor, name=None):
    """The nonzero (nonempty, for strings) elements of `tensor`, in row-major order (their
    count is its values', so the tensor must be known when a function is traced)."""
    tensor = convert_to_tensor(tensor)
    value = np.asarray(known_value(tensor, "tt.sparse.from_dense: tensor", _DATA_COUNT))
    nonzero = value.astype(bool) if value.dtype.kind in "OSU" else value != 0  # (b"" is 0)
    indices = np.argwhere(nonzero).astype(np.int64).reshape(-1, value.ndim)
    values = scatter_nd_ops.gather_nd(tensor, indices)
    return SparseTensor(indices, values, value.shape)


def reorder(sp_input, name=None):
    """The same tensor with its entries in row-major order (a stable sort)."""
    sp = _sparse(sp_input, "reorder")
    order = sort_ops.argsort(_linear_positions(sp.indices, sp._dense_shape), stable=True)
    return SparseTensor(
        index_ops.gather(sp.indices, order), index_ops.gather(sp.values, order), sp._dense_shape
    )


def map_values(op, *args, **kwargs):
    """`op` applied to the values of the sparse tensors among `args` and `kwargs` (all of
    the same indices and shape), the others passed as they are."""
    sparse = [a for a in (*args, *kwargs.values()) if isinstance(a, SparseTensor)]
    if not sparse:
        raise ValueError("tt.sparse.map_values: give at least one SparseTensor")
    first = sparse[0]
    for other in sparse[1:]:
        if not _same_entries(first, other):
            raise ValueError(
                "tt.sparse.map_values: the SparseTensors must have the same indices and dense_shape"
            )

    def unwrap(a):
        return a.values if isinstance(a, SparseTensor) else a

    values = op(*(unwrap(a) for a in args), **{k: unwrap(v) for k, v in kwargs.items()})
    return first.with_values(values)


def add(a, b, threshold=0, name=None):
    """a + b. Both sparse: a SparseTensor of the entries of both in row-major order, the
    values at a common index added, such a sum whose magnitude is under `threshold` dropped
    (their indices must be known when a function is traced). One sparse and one dense: the
    dense sum."""
    if not isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        raise TypeError("tt.sparse.add: give at least one SparseTensor")
    if not isinstance(a, SparseTensor) or not isinstance(b, SparseTensor):
        sp, dense = (a, b) if isinstance(a, SparseTensor) else (b, a)
        return math_ops.add(to_dense(sp, validate_indices=False), convert_to_tensor(dense))
    if a._dense_shape != b._dense_shape:
        raise ValueError(
            f"tt.sparse.add: the dense shapes differ: {list(a._dense_shape)} and "
            f"{list(b._dense_shape)}"
        )
    indices = np.concatenate([_indices(a, "add"), _indices(b, "add")])
    values = structure_ops.concat([a.values, convert_to_tensor(b.values, dtype=a.dtype)], 0)
    keys = _linear_numbers(indices, a._dense_shape)
    unique, ids = np.unique(keys, return_inverse=True)
    sums = segment_ops.unsorted_segment_sum(values, ids.astype(np.int32), len(unique))
    first = np.zeros(len(unique), np.int64)
    first[ids[::-1]] = np.arange(len(ids))[::-1]
    kept = indices[first]
    if threshold:  # only a sum of two entries is tested, as TensorFlow's
        magnitudes = np.abs(np.asarray(known_value(sums, "tt.sparse.add: threshold's sums")))
        alone = np.bincount(ids, minlength=len(unique)) == 1
        keep = np.flatnonzero(alone | (magnitudes >= threshold))
        return SparseTensor(kept[keep], index_ops.gather(sums, keep), a._dense_shape)
    return SparseTensor(kept, sums, a._dense_shape)


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The product of a sparse and a dense matrix (either may be the sparse one), adjoint
    meaning the conjugate transpose, as TensorFlow's: a dense matrix."""
    if not isinstance(sp_a, SparseTensor):
        if not isinstance(b, SparseTensor):
            raise TypeError("tt.sparse.sparse_dense_matmul: give one SparseTensor")
        # a @ B = (B^H @ a^H)^H
        product = sparse_dense_matmul(b, sp_a, adjoint_a=not adjoint_b, adjoint_b=not adjoint_a)
        return _adjoint(product)
    if sp_a.ndim != 2:
        raise ValueError(
            f"tt.sparse.sparse_dense_matmul: the sparse operand must be a matrix, not of "
            f"shape {list(sp_a._dense_shape)}"
        )
    b = convert_to_tensor(b, dtype=sp_a.dtype)
    if adjoint_b:
        b = _adjoint(b)
    rows, columns = (
        index_ops.gather(sp_a.indices, 0, axis=1),
        index_ops.gather(sp_a.indices, 1, axis=1),
    )
    height, inner = sp_a._dense_shape
    values = sp_a.values
    if adjoint_a:
        rows, columns, height, inner = columns, rows, inner, height
        values = math_ops.conj(values) if sp_a.dtype.is_complex else values
    if b.shape[0] != inner:
        raise ValueError(
            f"tt.sparse.sparse_dense_matmul: the sparse matrix's {inner} columns and the "
            f"dense matrix's {b.shape[0]} rows differ"
        )
    terms = array_ops.expand_dims(values, 1) * index_ops.gather(b, columns)
    return segment_ops.unsorted_segment_sum(terms, rows, height)


def reduce_sum(sp_input, axis=None, keepdims=False, output_is_sparse=False, name=None):
    """The sum over `axis` (all axes where None), as the dense tensor's; with
    `output_is_sparse`, as a SparseTensor of its nonzero sums."""
    sp = _sparse(sp_input, "reduce_sum")
    result = broadcast_ops.reduce_sum(to_dense(sp, validate_indices=False), axis, keepdims)
    return from_dense(result) if output_is_sparse else result


def reduce_max(sp_input, axis=None, keepdims=False, output_is_sparse=False, name=None):
    """The largest of the entries over `axis` (all axes where None), as TensorFlow's: the
    implicit zeros take no part; a reduction over no entry gives 0."""
    sp = _sparse(sp_input, "reduce_max")
    lowest = _lowest(sp.dtype)
    filled = to_dense(sp, default_value=lowest, validate_indices=False)
    largest = reduction_ops.reduce_max(filled, axis, keepdims)
    result = math_ops.where(largest == lowest, array_ops.zeros_like(largest), largest)
    return from_dense(result) if output_is_sparse else result


def concat(axis, sp_inputs, expand_nonconcat_dims=False, name=None):
    """The sparse tensors joined along `axis`, in row-major order; with
    `expand_nonconcat_dims`, the other dimensions the largest of the inputs'."""
    inputs = [_sparse(s, "concat") for s in sp_inputs]
    rank = inputs[0].ndim
    if any(s.ndim != rank for s in inputs):
        raise ValueError("tt.sparse.concat: the sparse tensors must have one rank")
    axis = int(axis) + rank if int(axis) < 0 else int(axis)
    shapes = [s._dense_shape for s in inputs]
    others = [tuple(d for k, d in enumerate(shape) if k != axis) for shape in shapes]
    if not expand_nonconcat_dims and len(set(others)) > 1:
        raise ValueError(
            f"tt.sparse.concat: the dimensions other than {axis} differ: "
            f"{[list(s) for s in shapes]} (expand_nonconcat_dims=True takes the largest)"
        )
    shape = list(np.max(np.array(shapes), axis=0))
    shape[axis] = sum(s[axis] for s in shapes)
    offsets = np.cumsum([0] + [s[axis] for s in shapes[:-1]])
    shifted = [
        s.indices + np.eye(rank, dtype=np.int64)[axis] * offset
        for s, offset in zip(inputs, offsets)
    ]
    joined = SparseTensor(
        structure_ops.concat(shifted, 0),
        structure_ops.concat([s.values for s in inputs], 0),
        shape,
    )
    return reorder(joined)


def slice(sp_input, start, size, name=None):
    """The entries within [start, start + size) on every axis, their indices made relative
    to `start`, the shape cut to what lies inside the dense shape."""
    sp = _sparse(sp_input, "slice")
    indices = _indices(sp, "slice")
    start = np.asarray(start, np.int64).reshape(-1)
    size = np.asarray(size, np.int64).reshape(-1)
    shape = np.asarray(sp._dense_shape, np.int64)
    end = np.minimum(start + size, shape)
    inside = np.all((indices >= start) & (indices < end), axis=1)
    keep = np.flatnonzero(inside)
    return SparseTensor(
        indices[keep] - start, index_ops.gather(sp.values, keep), np.maximum(end - start, 0)
    )


def retain(sp_input, to_retain):
    """The entries whose flag in `to_retain` (a bool vector, one an entry) is true."""
    sp = _sparse(sp_input, "retain")
    flags = np.asarray(known_value(to_retain, "tt.sparse.retain: to_retain", _DATA_COUNT))
    keep = np.flatnonzero(flags.astype(bool))
    return SparseTensor(
        index_ops.gather(sp.indices, keep), index_ops.gather(sp.values, keep), sp._dense_shape
    )


def transpose(sp_input, perm=None, name=None):
    """The sparse tensor with its axes permuted by `perm` (reversed where None), in
    row-major order."""
    sp = _sparse(sp_input, "transpose")
    perm = list(range(sp.ndim))[::-1] if perm is None else [int(p) for p in perm]
    if sorted(perm) != list(range(sp.ndim)):
        raise ValueError(f"tt.sparse.transpose: perm {perm} is not a permutation of its axes")
    indices = index_ops.gather(sp.indices, perm, axis=1)
    return reorder(SparseTensor(indices, sp.values, [sp._dense_shape[p] for p in perm]))


def reshape(sp_input, shape, name=None):
    """The same entries in a tensor of `shape` (one dimension may be -1), each at the
    position of the same row-major number."""
    sp = _sparse(sp_input, "reshape")
    shape = [int(d) for d in np.asarray(known_value(shape, "tt.sparse.reshape: shape"))]
    total = int(np.prod(sp._dense_shape))
    if shape.count(-1) == 1:
        rest = int(np.prod([d for d in shape if d != -1]))
        shape[shape.index(-1)] = total // rest if rest else 0
    if int(np.prod(shape)) != total:
        raise ValueError(
            f"tt.sparse.reshape: a tensor of shape {list(sp._dense_shape)} ({total} elements) "
            f"cannot take shape {shape}"
        )
    linear = _linear_positions(sp.indices, sp._dense_shape)
    strides = _strides(shape)
    coordinates = [
        math_ops.floormod(math_ops.floordiv(linear, stride), size)
        for stride, size in zip(strides, shape)
    ]
    indices = structure_ops.stack(coordinates, 1) if shape else array_ops.zeros([0, 0], "int64")
    return SparseTensor(indices, sp.values, shape)


def expand_dims(sp_input, axis=None, name=None):
    """The sparse tensor with a dimension of size 1 inserted at `axis`."""
    sp = _sparse(sp_input, "expand_dims")
    axis = -1 if axis is None else int(axis)
    axis = axis + sp.ndim + 1 if axis < 0 else axis
    zeros = array_ops.expand_dims(array_ops.zeros_like(sp.values, dtype=dtypes.int64), 1)
    parts = [sp.indices[:, :axis], zeros, sp.indices[:, axis:]]
    shape = [*sp._dense_shape[:axis], 1, *sp._dense_shape[axis:]]
    return SparseTensor(structure_ops.concat(parts, 1), sp.values, shape)


def eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    """The identity matrix [num_rows, num_columns] as a SparseTensor."""
    rows = int(num_rows)
    columns = rows if num_columns is None else int(num_columns)
    diagonal = np.arange(min(rows, columns), dtype=np.int64)
    values = array_ops.ones([len(diagonal)], dtype)
    return SparseTensor(np.stack([diagonal, diagonal], 1), values, [rows, columns])


def fill_empty_rows(sp_input, default_value, name=None):
    """(sparse, empty_row_indicator): an entry of `default_value` at column 0 of each row
    (first dimension) that has none, in row-major order, and which rows were empty."""
    sp = _sparse(sp_input, "fill_empty_rows")
    indices = _indices(sp, "fill_empty_rows")
    empty = np.ones(sp._dense_shape[0], bool)
    empty[indices[:, 0]] = False
    added = np.zeros((int(empty.sum()), sp.ndim), np.int64)
    added[:, 0] = np.flatnonzero(empty)
    defaults = broadcast_ops.broadcast_to(
        convert_to_tensor(default_value, dtype=sp.dtype), [len(added)]
    )
    joined = SparseTensor(
        np.concatenate([indices, added]),
        structure_ops.concat([sp.values, defaults], 0),
        sp._dense_shape,
    )
    return reorder(joined), convert_to_tensor(empty)


def to_indicator(sp_input, vocab_size, name=None):
    """bool [..., vocab_size]: whether each row (the last dimension's entries) holds each
    id among its values."""
    sp = _sparse(sp_input, "to_indicator")
    rows = sp.indices[:, : sp.ndim - 1]
    ids = array_ops.expand_dims(array_ops.cast(sp.values, dtypes.int64), 1)
    positions = structure_ops.concat([rows, ids], 1)
    ones = array_ops.ones_like(sp.values, dtype=dtypes.int32)
    shape = [*sp._dense_shape[:-1], int(vocab_size)]
    return scatter_nd_ops.scatter_nd(positions, ones, shape) > 0


def segment_sum(data, indices, segment_ids, num_segments=None, name=None):
    """Sums of the rows `data[indices]` by `segment_ids` (sorted ids, or any ids with
    `num_segments`), as TensorFlow's sparse segment reductions."""
    rows = index_ops.gather(data, indices)
    if num_segments is None:
        return segment_ops.segment_sum(rows, segment_ids)
    return segment_ops.unsorted_segment_sum(rows, segment_ids, num_segments)


def segment_mean(data, indices, segment_ids, num_segments=None, name=None):
    """Means of the rows `data[indices]` by `segment_ids`; 0 for an empty segment."""
    rows = index_ops.gather(data, indices)
    if num_segments is None:
        return segment_ops.segment_mean(rows, segment_ids)
    return segment_ops.unsorted_segment_mean(rows, segment_ids, num_segments)


def segment_sqrt_n(data, indices, segment_ids, num_segments=None, name=None):
    """Sums of the rows `data[indices]` by `segment_ids`, each divided by the square root of
    its segment's count (1 for an empty one)."""
    rows = index_ops.gather(data, indices)
    ids = convert_to_tensor(segment_ids)
    ones = array_ops.ones_like(ids, dtype=rows.dtype)
    if num_segments is None:
        total, count = segment_ops.segment_sum(rows, ids), segment_ops.segment_sum(ones, ids)
    else:
        total = segment_ops.unsorted_segment_sum(rows, ids, num_segments)
        count = segment_ops.unsorted_segment_sum(ones, ids, num_segments)
    scale = 1.0 / math_ops.sqrt(math_ops.maximum(count, array_ops.ones_like(count)))
    return total * array_ops.reshape(scale, [-1, *[1] * (rows.ndim - 1)])


def maximum(sp_a, sp_b, name=None):
    """The elementwise maximum of two sparse tensors of one shape: an entry at each index of
    either, an index the other lacks read as its zero, in row-major order, as TensorFlow's
    (whose indices must be known when a function is traced, unless they are the same).

    >>> a = tt.SparseTensor([[0], [2]], [1.0, -2.0], [4])
    >>> tt.sparse.maximum(a, tt.SparseTensor([[1]], [3.0], [4])).values.numpy().tolist()
    [1.0, 3.0, 0.0]
    """
    return _elementwise(sp_a, sp_b, math_ops.maximum, "maximum")


def minimum(sp_a, sp_b, name=None):
    """The elementwise minimum of two sparse tensors of one shape, as `maximum` combines
    them."""
    return _elementwise(sp_a, sp_b, math_ops.minimum, "minimum")


def _elementwise(sp_a, sp_b, combine, what):
    a, b = _sparse(sp_a, what), _sparse(sp_b, what)
    if a._dense_shape != b._dense_shape:
        raise ValueError(
            f"tt.sparse.{what}: the dense shapes differ: {list(a._dense_shape)} and "
            f"{list(b._dense_shape)}"
        )
    b_values = convert_to_tensor(b.values, dtype=a.dtype)
    if _same_entries(a, b):
        return a.with_values(combine(a.values, b_values))
    a_indices, b_indices = _indices(a, what), _indices(b, what)
    indices = np.concatenate([a_indices, b_indices])
    unique, ids = np.unique(_linear_numbers(indices, a._dense_shape), return_inverse=True)
    first = np.zeros(len(unique), np.int64)
    first[ids[::-1]] = np.arange(len(ids))[::-1]
    ids = ids.astype(np.int32)
    # each operand's values at the union's entries, zeros where it has none
    spread_a = segment_ops.unsorted_segment_sum(a.values, ids[: len(a_indices)], len(unique))
    spread_b = segment_ops.unsorted_segment_sum(b_values, ids[len(a_indices) :], len(unique))
    return SparseTensor(indices[first], combine(spread_a, spread_b), a._dense_shape)


# --- helpers --------------------------------------------------------------------------

_DATA_COUNT = (
    ": the count of entries of the result depends on it, and compiled code has shapes known "
    "when it is traced"
)


def _sparse(value, what):
    if not isinstance(value, SparseTensor):
        raise TypeError(f"tt.sparse.{what}: expected a SparseTensor, not {type(value).__name__}")
    return value


def _known(tensor):
    return tensor._read()._value


def _same_entries(a, b):
    """Whether two sparse tensors have the same shape and the same indices: the same
    tensor, or equal values where both are known."""
    if a._dense_shape != b._dense_shape:
        return False
    if a.indices is b.indices:
        return True
    first, second = _known(a.indices), _known(b.indices)
    return first is not None and second is not None and np.array_equal(first, second)


def _indices(sp, what):
    """The entries' indices as an int64 numpy array, which `what` needs known."""
    return np.asarray(known_value(sp.indices, f"tt.sparse.{what}: the indices", _DATA_COUNT))


def _strides(shape):
    return [int(np.prod(shape[k + 1 :])) for k in range(len(shape))]


def _linear_numbers(indices, shape):
    """Each entry's row-major position in the dense tensor (numpy)."""
    return indices @ np.asarray(_strides(shape), np.int64)


def _linear_positions(indices, shape):
    """Each entry's row-major position in the dense tensor (an int64 op)."""
    strides = convert_to_tensor(np.asarray(_strides(shape), np.int64))
    return broadcast_ops.reduce_sum(indices * strides, 1)


def _check_ordered(sp, what):
    """A ValueError for eagerly known indices out of the dense shape, out of row-major order
    or repeated, as TensorFlow's kernels check."""
    indices = _known(sp.indices)
    if indices is None or len(indices) == 0:
        return
    shape = np.asarray(sp._dense_shape)
    outside = np.flatnonzero(np.any((indices < 0) | (indices >= shape), axis=1))
    if len(outside):
        k = int(outside[0])
        raise ValueError(
            f"{what}: indices[{k}] = {indices[k].tolist()} is out of bounds: need 0 <= index "
            f"< {shape.tolist()}"
        )
    keys = _linear_numbers(indices, sp._dense_shape)
    steps = np.flatnonzero(np.diff(keys) <= 0)
    if len(steps):
        k = int(steps[0]) + 1
        kind = "repeated" if keys[k] == keys[k - 1] else "out of order"
        raise ValueError(
            f"{what}: indices[{k}] = {indices[k].tolist()} is {kind}. Many sparse ops require "
            "sorted indices. Use `tt.sparse.reorder` to create a correctly ordered copy."
        )


def _adjoint(matrix):
    transposed = array_ops.transpose(matrix)
    return math_ops.conj(transposed) if matrix.dtype.is_complex else transposed


def _lowest(dtype):
    if dtype.is_floating:
        return -np.inf
    return np.iinfo(dtype.as_numpy_dtype).min
