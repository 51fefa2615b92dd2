"""Sorting: argsort (the primitive), and sort and top_k composed from it and gather.

`argsort` orders each line along an axis by a stable merge sort: equal values keep the order
of their positions, in both directions (so top_k breaks ties by the lower index first, as
TensorFlow's TopKV2 does). NaN is greater than every number, +inf included, and NaNs are
equal to one another: ascending puts them last, descending (and top_k) first. That is
numpy's order, which tracer's kernel and C code share exactly.

With `count`, the primitive gives each line's first `count` positions only: top_k's k, a
partial selection (a heap in C, a partition in numpy) instead of a sort of the whole line.

sort and top_k take the values at the sorted positions with one gather from the flattened
tensor, through positions the primitive gives as flat offsets (`flat=True`), so that their
gradient is gather's: each value's cotangent goes back to the position it came from.

    %1: i64[2,3] = argsort[axis=1, direction='ASCENDING', flat=True, output_type=tt.int64] %0
    %2: f32[6] = reshape[shape=(6,)] %0
    %3: f32[2,3] = gather[axis=0] %2, %1
"""

import collections

import numpy as np

from codegen import forms
from codegen.affine import contiguous_strides
from codegen.ctypes import compute, storage
from tracer import dtypes
from tracer.dtypes import as_dtype
from tracer.ir import dims
from tracer.ops import array_ops, index_ops, math_ops
from tracer.ops.convert import as_tensor, static_int
from tracer.ops.core import apply
from tracer.ops.registry import NotVectorizable, primitive
from tracer.tensor import Tensor

DIRECTIONS = ("ASCENDING", "DESCENDING")
RUN = 16  # the C sort's runs sorted by insertion before merging


def _infer_argsort(attrs, x):
    if x.dtype.is_bool or x.dtype.is_complex:
        raise TypeError(f"values must be real numbers (integer or floating), got {x.dtype.name}")
    axis, count = attrs["axis"], attrs.get("count")
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"axis {axis} is out of range for a tensor of shape {x.shape}")
    if count is None:
        return x.shape, attrs["output_type"]
    if not 0 <= count <= x.shape[axis]:
        raise ValueError(f"count {count} is not in [0, {x.shape[axis]}], the axis' size")
    return (*x.shape[:axis], count, *x.shape[axis + 1 :]), attrs["output_type"]


def _stable_order(x, axis, direction):
    """numpy's stable argsort, or for DESCENDING the same order reversed with equal values
    still in the order of their positions (an argsort of the flipped line, flipped back)."""
    if direction == "ASCENDING":
        return np.argsort(x, axis=axis, kind="stable")
    flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return x.shape[axis] - 1 - np.flip(flipped, axis)


def _first_of_order(x, axis, direction, count):
    """The first `count` positions of each line's stable order, without sorting whole lines:
    a partition finds each line's count-th key, the keys up to it (ties included, a few more
    where NaN and inf share a key) are the candidates, and only they are sorted."""
    n = x.shape[axis]
    lines = np.moveaxis(x, axis, -1).reshape(-1, n)
    if np.issubdtype(x.dtype, np.floating):
        key = lines if direction == "ASCENDING" else -lines
        key = np.where(np.isnan(lines), np.inf if direction == "ASCENDING" else -np.inf, key)
    else:
        key = lines if direction == "ASCENDING" else -lines.astype(np.float64)
    kth = np.partition(key, count - 1, axis=-1)[:, count - 1 : count]
    rows, columns = np.nonzero(key <= kth)  # by line, then by position
    per_line = np.bincount(rows, minlength=len(lines))
    within = np.arange(len(rows)) - np.repeat(np.cumsum(per_line) - per_line, per_line)
    # candidates in position order, each line padded at its end with values that sort last
    # among equals (stability puts them after every real one)
    pad = np.nan if direction == "ASCENDING" else -np.inf
    if not np.issubdtype(x.dtype, np.floating):
        info = np.iinfo(x.dtype)
        pad = info.max if direction == "ASCENDING" else info.min
    values = np.full((len(lines), per_line.max()), pad, x.dtype)
    positions = np.zeros(values.shape, np.int64)
    values[rows, within] = lines[rows, columns]
    positions[rows, within] = columns
    chosen = _stable_order(values, -1, direction)[:, :count]
    order = np.take_along_axis(positions, chosen, -1)
    shape = np.moveaxis(x, axis, -1).shape[:-1] + (count,)
    return np.moveaxis(order.reshape(shape), -1, axis)


def _argsort_kernel(x, axis, direction, flat, output_type, count=None):
    x = np.asarray(x)
    if count is not None and 0 < count and 8 * count < x.shape[axis] and x.size:
        order = _first_of_order(x, axis, direction, count)
    else:
        order = _stable_order(x, axis, direction)
        if count is not None:
            order = np.take(order, np.arange(count), axis=axis)
    if flat:  # the offset of each element in the flattened tensor
        strides = contiguous_strides(x.shape)
        grid = np.indices(x.shape, sparse=True, dtype=np.int64) if x.ndim else []
        order = sum(
            (order if k == axis else grid[k]) * strides[k] for k in range(x.ndim)
        ) + np.zeros(order.shape, np.int64)
    return np.asarray(order).astype(output_type.as_numpy_dtype)


def _before(dtype, direction):
    """C condition: value p goes before value q (NaN above every number)."""
    if not dtype.is_floating:
        return "p < q" if direction == "ASCENDING" else "p > q"
    if direction == "ASCENDING":
        return "p < q || (q != q && p == p)"
    return "p > q || (p != p && q == q)"


def _argsort_c(node, blas):
    """templates/argsort.c.j2: per line, a stable merge sort of (value, position) pairs."""
    (x,) = node.inputs
    axis = node.attrs["axis"]
    count = node.attrs.get("count")
    return dict(
        T=storage(x.dtype),
        C=compute(x.dtype),
        O=storage(node.dtype),
        outer=dims.size(x.shape[:axis]),
        n=x.shape[axis],
        count=x.shape[axis] if count is None else count,
        select=count is not None and count < x.shape[axis],
        inner=dims.size(x.shape[axis + 1 :]),
        run=RUN,
        before=_before(x.dtype, node.attrs["direction"]),
        position=f"(o * n + at) * {dims.size(x.shape[axis + 1 :])} + i"
        if node.attrs["flat"]
        else "at",
    )


def _argsort_batch(node, args, flags, size):
    """Along the shifted axis; flat offsets are made relative to each batch element's own
    flattened tensor again (the batch element b starts at b * its size)."""
    attrs = dict(node.attrs, axis=node.attrs["axis"] + 1)
    order = apply(ARGSORT, (args[0],), attrs)
    if not node.attrs["flat"]:
        return order
    each = dims.size(node.inputs[0].shape)
    if isinstance(each, dims.Dim) or isinstance(size, dims.Dim):
        raise NotVectorizable("argsort of flat offsets with sizes known only when it runs")
    starts = np.arange(size, dtype=np.int64).reshape((size,) + (1,) * len(node.shape)) * each
    return order - Tensor(starts.astype(node.dtype.as_numpy_dtype))


ARGSORT = primitive(
    "argsort",
    _infer_argsort,
    batch=_argsort_batch,
    kernel=_argsort_kernel,
    c=forms.Template(
        "argsort.c.j2",
        _argsort_c,
        error=lambda node: (MemoryError, "argsort: no memory for the sort's scratch space"),
    ),
)


def _direction(direction, function):
    if direction not in DIRECTIONS:
        raise ValueError(
            f"{function}: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}"
        )
    return direction


def _sortable(values, axis, function, argument="values"):
    """(tensor, its non-negative axis) with TensorFlow's checks, as clear errors."""
    x = as_tensor(values)
    if x.ndim == 0:
        raise ValueError(f"{function}: {argument} must have rank 1 or more, got a scalar")
    if x.dtype.is_bool or x.dtype.is_complex:
        raise TypeError(
            f"{function}: {argument} must be real numbers (integer or floating), got {x.dtype.name}"
        )
    position = static_int(axis)
    if position is None:
        raise ValueError(f"{function}: axis must be known when the function is traced")
    if not -x.ndim <= position < x.ndim:
        raise ValueError(
            f"{function}: axis {position} is out of range for a tensor of rank {x.ndim}"
        )
    return x, position % x.ndim


def _flat_order(x, axis, direction, count=None):
    """The flat offsets of `x`'s elements in sorted order along `axis`; with `count`, of the
    first `count` of each line only (a partial selection in C)."""
    attrs = {"axis": axis, "direction": direction, "flat": True, "output_type": dtypes.int64}
    if count is not None:
        attrs["count"] = count
    return apply(ARGSORT, (x,), attrs)


def _take(x, flat_positions):
    """The elements of `x` at flat offsets: one gather, whose gradient is a scatter_add, of
    rows of one element, so that the gradient reaches `x` through a reshape: a dense
    Tensor, as TensorFlow's sort and top_k give it (a gather straight from a vector would
    give the user IndexedSlices)."""
    column = array_ops.reshape(x, (dims.size(x.shape), 1))
    taken = apply(index_ops.GATHER, (column, flat_positions), {"axis": 0})
    return array_ops.reshape(taken, flat_positions.shape)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`values` sorted along `axis`; a value's gradient goes back to where it came from.

    >>> tt.sort(tt.constant([3.0, 1.0, 2.0]), direction="DESCENDING").numpy()
    array([3., 2., 1.], dtype=float32)
    """
    direction = _direction(direction, "sort")
    x, axis = _sortable(values, axis, "sort")
    return _take(x, _flat_order(x, axis, direction))


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 positions that sort `values` along `axis`. The sort is always stable (equal
    values keep the order of their positions), whatever `stable` says, as in TensorFlow.

    >>> tt.argsort(tt.constant([3.0, 1.0, 2.0])).numpy()
    array([1, 2, 0], dtype=int32)
    """
    direction = _direction(direction, "argsort")
    x, axis = _sortable(values, axis, "argsort")
    attrs = {"axis": axis, "direction": direction, "flat": False, "output_type": dtypes.int32}
    return apply(ARGSORT, (x,), attrs)


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):
    """The `k` largest entries of the last axis and their positions, largest first; equal
    values come in the order of their positions (the lower index first). `sorted=False`
    gives them sorted too (TensorFlow leaves that order unspecified).

    >>> result = tt.math.top_k(tt.constant([1.0, 3.0, 2.0, 3.0]), k=2)
    >>> result.values.numpy(), result.indices.numpy()
    (array([3., 3.], dtype=float32), array([1, 3], dtype=int32))
    """
    x = as_tensor(input)
    if x.ndim == 0:
        raise ValueError("top_k: input must have rank 1 or more, got a scalar")
    if isinstance(k, float) or (hasattr(k, "dtype") and not as_dtype(k.dtype).is_integer):
        raise TypeError(f"top_k: k must be an integer, got {k!r}")
    count = static_int(k)
    if count is None:
        raise ValueError("top_k: k must be known when the function is traced")
    size = x.shape[-1]
    if isinstance(size, dims.Dim):
        raise ValueError(
            f"top_k: the last axis of shape {x.shape} is known only when the function runs"
        )
    if count < 0:
        raise ValueError(f"top_k: k must be >= 0, got {count}")
    if count > size:
        raise ValueError(
            f"top_k: input must have at least k={count} entries along its last axis, it has {size}"
        )
    x, axis = _sortable(x, -1, "top_k", "input")
    order = _flat_order(x, axis, "DESCENDING", count if count < size else None)
    positions = math_ops.floormod(order, size) if size else order
    return TopKV2(_take(x, order), array_ops.cast(positions, as_dtype(index_type)))
