"""Ops that index with tensors: gather (and its gradient, scatter_add), argmax, argmin, one_hot."""

from tracer import dtypes
from tracer.dtypes import as_dtype
from tracer.ops import array_ops, shapes
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import primitive


def _infer_gather(attrs, params, indices):
    axis = attrs["axis"]
    if not indices.dtype.is_integer:
        raise TypeError(f"indices must be int32 or int64, got {indices.dtype.name}")
    if not 0 <= axis < len(params.shape):
        raise ValueError(f"axis {axis} is out of range for params of shape {params.shape}")
    return params.shape[:axis] + tuple(indices.shape) + params.shape[axis + 1 :], params.dtype


def _infer_scatter_add(attrs, updates, indices):
    return attrs["shape"], updates.dtype


def _gather_grad(node, g, indices):
    attrs = {"axis": node.attrs["axis"], "shape": node.inputs[0].shape}
    return apply(SCATTER_ADD, (g, indices), attrs), None


def _scatter_add_grad(node, g, indices):
    return apply(GATHER, (g, indices), {"axis": node.attrs["axis"]}), None


def _infer_arg(attrs, x):
    axis = attrs["axis"]
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"axis {axis} is out of range for a tensor of shape {x.shape}")
    return x.shape[:axis] + x.shape[axis + 1 :], attrs["output_type"]


GATHER = primitive("gather", _infer_gather, _gather_grad, saves=(1,))
SCATTER_ADD = primitive("scatter_add", _infer_scatter_add, _scatter_add_grad, saves=(1,))
ARGMAX = primitive("argmax", _infer_arg)
ARGMIN = primitive("argmin", _infer_arg)


def gather(params, indices, axis=None, batch_dims=0, name=None):
    """Slices of `params` at `indices` along `axis` (default 0).

    The gradient with respect to `params` is dense inside graphs; `tape.gradient` hands it
    to the user as `tt.IndexedSlices` when gather is the source's only use.

    >>> tt.gather(tt.constant([10.0, 20.0, 30.0]), [2, 0]).numpy()
    array([30., 10.], dtype=float32)
    """
    if batch_dims:
        raise ValueError("gather: batch_dims is not supported")
    params = as_tensor(params)
    indices = as_tensor(indices)
    (axis,) = shapes.normalize_axes(0 if axis is None else int(axis), params.ndim)
    _check_indices(indices, params.shape[axis])
    return apply(GATHER, (params, indices), {"axis": axis})


def _check_indices(indices, size):
    """Out-of-range indices raise here (TensorFlow raises InvalidArgumentError), never read past."""
    if indices._value is None or indices._value.size == 0:
        return
    low, high = int(indices._value.min()), int(indices._value.max())
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise IndexError(f"gather: index {bad} is out of range [0, {size})")


def argmax(input, axis=None, output_type=dtypes.int64, name=None):
    x = as_tensor(input)
    (axis,) = shapes.normalize_axes(0 if axis is None else int(axis), x.ndim)
    return apply(ARGMAX, (x,), {"axis": axis, "output_type": as_dtype(output_type)})


def argmin(input, axis=None, output_type=dtypes.int64, name=None):
    x = as_tensor(input)
    (axis,) = shapes.normalize_axes(0 if axis is None else int(axis), x.ndim)
    return apply(ARGMIN, (x,), {"axis": axis, "output_type": as_dtype(output_type)})


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A new last axis of size `depth` with `on_value` at each index (default 1) and `off_value` (0)."""
    from tracer.ops import math_ops

    indices = as_tensor(indices)
    dtype = as_dtype(dtype) if dtype is not None else dtypes.float32
    positions = array_ops.range_(int(depth), dtype=indices.dtype)
    hits = math_ops.equal(array_ops.expand_dims(indices, -1), positions)
    on = 1 if on_value is None else on_value
    off = 0 if off_value is None else off_value
    result = math_ops.where(hits, array_ops.cast(on, dtype), array_ops.cast(off, dtype))
    if axis is not None and axis != -1:
        result = array_ops.transpose(result, _move_last_to(result.ndim, axis))
    return result


def _move_last_to(ndim, axis):
    axis %= ndim
    order = list(range(ndim - 1))
    order.insert(axis, ndim - 1)
    return tuple(order)
