"""Ops that index with tensors: gather (and its gradient, scatter_add), argmax, argmin, one_hot."""

import numpy as np

from codegen import forms
from codegen.ctypes import compute, storage
from runtime.kernels import element_array
from tracer import dtypes
from tracer.dtypes import as_dtype
from tracer.errors import as_tf
from tracer.ir import dims, match
from tracer.ops import array_ops, batching, math_ops, shapes
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import NotVectorizable, primitive
from tracer.ops.scatter_nd_ops import gather_nd
from tracer.ops.tangent_rules import LINEAR


def _indexed_shape(node):
    """The shape the indices index: gather's params, or scatter_add's result (an attribute)."""
    return node.attrs["shape"] if "shape" in node.attrs else node.inputs[0].shape


def _out_of_range(name, size):
    return f"{name}: an index is out of range [0, {size})"


def _checked(name, indices, size):
    """`indices`, or IndexError when one is out of range (negative ones included): the same
    error in every backend, never a read or a write past the data."""
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise as_tf(IndexError)(_out_of_range(name, size))
    return indices


def _gather_c(template):
    """The context of a gather-like template: rows of `params` (gather) or of the result
    (scatter_add) picked by `indices` along `axis`; the C function returns `error` for an
    index out of range."""

    def context(node, blas):
        axis, full = node.attrs["axis"], _indexed_shape(node)
        return dict(
            T=storage(node.dtype),
            I=storage(node.inputs[1].dtype),
            outer=dims.size(full[:axis]),
            size=full[axis],
            inner=dims.size(full[axis + 1 :]),
            count=dims.size(node.inputs[1].shape),
        )

    def error(node):
        return IndexError, _out_of_range(node.op, _indexed_shape(node)[node.attrs["axis"]])

    return forms.Template(template, context, error=error)


# --- gather and scatter_add -------------------------------------------------------------


def _infer_gather(attrs, params, indices):
    axis = attrs["axis"]
    if not indices.dtype.is_integer:
        raise TypeError(f"indices must be int32 or int64, got {indices.dtype.name}")
    if not 0 <= axis < len(params.shape):
        raise ValueError(f"axis {axis} is out of range for params of shape {params.shape}")
    return params.shape[:axis] + tuple(indices.shape) + params.shape[axis + 1 :], params.dtype


def _gather_simplify(node):
    """gather at one known position in range is that slice of params (x[k], a view)."""
    params, indices = node.inputs
    k, axis = match.literal(indices), node.attrs["axis"]
    size = params.shape[axis]
    if k is None or np.ndim(k) != 0 or not isinstance(size, int) or not 0 <= int(k) < size:
        return None
    if not all(isinstance(s, int) for s in params.shape[:axis]):
        return None
    index = (*((0, s, 1) for s in params.shape[:axis]), int(k))
    return match.derived(node, "slice", (params,), node.shape, index=index)


def _gather_batch(node, args, flags, size):
    if flags[1]:
        raise NotVectorizable("gather with batched indices")
    return apply(GATHER, tuple(args), {"axis": node.attrs["axis"] + 1})


GATHER = primitive(
    "gather",
    _infer_gather,
    strings=True,
    grad=lambda node, g, indices: (
        apply(
            SCATTER_ADD, (g, indices), {"axis": node.attrs["axis"], "shape": node.inputs[0].shape}
        ),
        None,
    ),
    saves=(1,),
    jvp=LINEAR,
    batch=_gather_batch,
    simplify=_gather_simplify,
    kernel=lambda params, indices, axis: element_array(
        np.take(params, _checked("gather", indices, params.shape[axis]), axis=axis)
    ),
    c=_gather_c("gather.c.j2"),
)


def _scatter_add_kernel(updates, indices, axis, shape):
    """Zeros of `shape` (gather's params) with `updates` summed in at `indices` along `axis`.

    `updates` is shaped like gather's result, params[:axis] + indices + params[axis+1:];
    repeated indices add up.
    """
    updates, indices = (
        np.asarray(updates),
        _checked("scatter_add", np.asarray(indices), shape[axis]),
    )
    out = np.zeros(shape, dtype=updates.dtype)
    index_axes = list(range(axis, axis + indices.ndim))
    other_axes = [a for a in range(updates.ndim) if a not in index_axes]
    np.add.at(np.moveaxis(out, axis, 0), indices, np.transpose(updates, index_axes + other_axes))
    return out


def _scatter_add_batch(node, args, flags, size):
    if flags[1]:
        raise NotVectorizable("scatter_add with batched indices")
    attrs = {"axis": node.attrs["axis"] + 1, "shape": (size,) + node.attrs["shape"]}
    return apply(SCATTER_ADD, tuple(args), attrs)


SCATTER_ADD = primitive(
    "scatter_add",
    lambda attrs, updates, indices: (attrs["shape"], updates.dtype),
    grad=lambda node, g, indices: (
        apply(GATHER, (g, indices), {"axis": node.attrs["axis"]}),
        None,
    ),
    saves=(1,),
    jvp=LINEAR,
    batch=_scatter_add_batch,
    kernel=_scatter_add_kernel,
    c=_gather_c("scatter_add.c.j2"),
)


# --- check_indices: the row indices of a sparse gradient ----------------------------------


def _check_indices_c(node, blas):
    return dict(
        I=storage(node.dtype), size=node.attrs["size"], count=dims.size(node.inputs[0].shape)
    )


CHECK_INDICES = primitive(
    "check_indices",
    lambda attrs, indices: (indices.shape, indices.dtype),
    batch=lambda node, args, flags, size: apply(CHECK_INDICES, tuple(args), node.attrs),
    kernel=lambda indices, size: _checked("gather", indices, size),
    c=forms.Template(
        "check_indices.c.j2",
        _check_indices_c,
        error=lambda node: (IndexError, _out_of_range("gather", node.attrs["size"])),
    ),
)
"""The indices of the rows of gather's gradient kept sparse (`tt.IndexedSlices`), passed
through, or IndexError for one out of range. A traced gradient's rows go through it
(`tracer.backprop`): where the forward gather is dead code (a compiled function that
returns only the gradient), it raises at the call, with gather's message, as the forward
would, rather than an IndexedSlices that fails only when densified."""


def gather(params, indices, axis=None, batch_dims=0, name=None):
    """Slices of `params` at `indices` along `axis` (default 0).

    The gradient with respect to `params` is dense inside graphs; `tape.gradient` hands it
    to the user as `tt.IndexedSlices` when gather is the source's only use.

    >>> tt.gather(tt.constant([10.0, 20.0, 30.0]), [2, 0]).numpy()
    array([30., 10.], dtype=float32)
    """
    params = as_tensor(params)
    indices = as_tensor(indices)
    if batch_dims:
        return _batched_gather(params, indices, axis, batch_dims)
    (axis,) = shapes.normalize_axes(0 if axis is None else int(axis), params.ndim)
    _check_indices(params, indices, params.shape[axis])
    return apply(GATHER, (params, indices), {"axis": axis})


def _batched_gather(params, indices, axis, batch_dims):
    """`gather` whose first `batch_dims` axes of `params` and `indices` are batch axes they
    share, as TensorFlow's: out[b, m, i, r] = params[b, m, indices[b, i], r] (b the batch
    axes, m the axes of params before `axis`, i the other axes of indices, r params' last).
    It is gather_nd of the indices with depth 1 on params with `axis` moved next to the batch
    axes, the result's axes then put in that order."""
    if isinstance(batch_dims, (bool, np.bool_)) or not isinstance(batch_dims, (int, np.integer)):
        raise TypeError(f"gather: batch_dims must be an int, got {batch_dims!r}")
    batch = int(batch_dims) + (indices.ndim if batch_dims < 0 else 0)
    if not 0 <= batch <= indices.ndim:
        raise ValueError(
            f"gather: batch_dims {batch_dims} is out of range for indices of rank {indices.ndim}"
        )
    (axis,) = shapes.normalize_axes(batch if axis is None else int(axis), params.ndim)
    if axis < batch:
        raise ValueError(f"gather: batch_dims ({batch}) must be at most axis ({axis})")
    moved = list(range(batch)) + [axis] + list(range(batch, axis))
    moved += list(range(axis + 1, params.ndim))
    picked = gather_nd(
        array_ops.transpose(params, moved), array_ops.expand_dims(indices, -1), batch_dims=batch
    )
    # picked's axes: batch, indices' own (k of them), params' between batch and axis, the rest
    k = indices.ndim - batch
    between = list(range(batch + k, batch + k + axis - batch))
    order = list(range(batch)) + between + list(range(batch, batch + k))
    order += list(range(batch + k + axis - batch, picked.ndim))
    return array_ops.transpose(picked, order)


def _check_indices(params, indices, size):
    """Out-of-range indices raise here (TensorFlow raises InvalidArgumentError), never read
    past. In a traced function (symbolic `params`) the op checks when it runs, as
    TensorFlow's does: a gather whose result nothing uses is pruned, and raises nothing."""
    if params._value is None or indices._value is None or indices._value.size == 0:
        return
    low, high = int(indices._value.min()), int(indices._value.max())
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise as_tf(IndexError)(f"gather: index {bad} is out of range [0, {size})")


# --- argmax, argmin ---------------------------------------------------------------------


@shapes.ordered
def _infer_arg(attrs, x):
    axis = attrs["axis"]
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"axis {axis} is out of range for a tensor of shape {x.shape}")
    if dims.equals(x.shape[axis], 0):  # an unknown size: a trace's assumption that it is not
        raise ValueError(f"axis {axis} of shape {x.shape} is empty: there is no extreme to find")
    return x.shape[:axis] + x.shape[axis + 1 :], attrs["output_type"]


def _arg_c(compare):
    """templates/argreduce.c.j2: the first extreme element, a NaN taken for the least extreme
    value, as TensorFlow's."""

    def context(node, blas):
        (x,) = node.inputs
        axis = node.attrs["axis"]
        return dict(
            T=storage(x.dtype),
            C=compute(x.dtype),
            O=storage(node.dtype),
            outer=dims.size(x.shape[:axis]),
            n=x.shape[axis],
            inner=dims.size(x.shape[axis + 1 :]),
            compare=compare,
            nan_fill=("-INFINITY" if compare == ">" else "INFINITY")
            if x.dtype.is_floating
            else None,
        )

    return forms.Template("argreduce.c.j2", context)


def _arg(name, numpy_arg, nan_arg, compare):
    def kernel(x, axis, output_type):
        """The first extreme element, a NaN taken for the least extreme value (TensorFlow's:
        numpy's argmax takes the first NaN), 0 where all are NaN."""
        nan = np.isnan(x) if x.dtype.kind == "f" else None
        if nan is None or not nan.any():
            found = numpy_arg(x, axis=axis)
        else:
            all_nan = np.expand_dims(nan.all(axis=axis), axis)
            found = nan_arg(np.where(all_nan, 0, x), axis=axis)
        return found.astype(output_type.as_numpy_dtype)

    return primitive(
        name,
        _infer_arg,
        batch=batching.shifted_axis("axis"),
        kernel=kernel,
        c=_arg_c(compare),
    )


ARGMAX = _arg("argmax", np.argmax, np.nanargmax, ">")
ARGMIN = _arg("argmin", np.argmin, np.nanargmin, "<")


def argmax(input, axis=None, output_type=dtypes.int64, name=None):
    x = as_tensor(input)
    (axis,) = shapes.normalize_axes(0 if axis is None else int(axis), x.ndim)
    return apply(ARGMAX, (x,), {"axis": axis, "output_type": as_dtype(output_type)})


def argmin(input, axis=None, output_type=dtypes.int64, name=None):
    x = as_tensor(input)
    (axis,) = shapes.normalize_axes(0 if axis is None else int(axis), x.ndim)
    return apply(ARGMIN, (x,), {"axis": axis, "output_type": as_dtype(output_type)})


# --- one_hot (a composition) ------------------------------------------------------------


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A new last axis of size `depth` with `on_value` at each index (default 1) and
    `off_value` (0); of `dtype`, else of on_value's or off_value's (a Python int's is
    int32, as TensorFlow's), else float32."""
    indices = as_tensor(indices)
    given = [as_tensor(v) for v in (on_value, off_value) if v is not None]
    if dtype is None and len(given) == 2 and given[0].dtype != given[1].dtype:
        raise TypeError(
            f"dtype {given[0].dtype!r} of on_value does not match dtype {given[1].dtype!r} "
            "of off_value"
        )
    if dtype is not None:
        dtype = as_dtype(dtype)
    else:
        dtype = given[0].dtype if given else dtypes.float32
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
