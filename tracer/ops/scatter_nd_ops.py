"""N-dimensional gather and scatter, as TensorFlow's: gather_nd, scatter_nd and the
tensor_scatter_nd_* family.

The last axis of `indices` holds coordinates into the first K axes of the indexed tensor
(after `batch_dims` leading axes that `indices` shares with it); each coordinate picks, or
receives, a slice of the remaining axes:

    gather_nd(params, indices)[j] = params[indices[j]]        shape indices.shape[:-1] + params.shape[K:]
    scatter_nd(indices, updates, shape): zeros, updates[j] added at indices[j]

Four primitives, sharing two C templates: `gather_nd` (templates/gather_nd.c.j2) and its
transpose `scatter_nd`; `tensor_scatter_nd_update` (duplicates: the last update wins) and
`tensor_scatter_nd_add` (duplicates add up), which copy `tensor` instead of zeroing
(templates/scatter_nd.c.j2). `tensor_scatter_nd_sub` adds the negated updates. All take
`batch_dims`, which is also how their batching rules run a batch at once.

A coordinate out of range (negative ones included) is an IndexError naming the op, the
argument and the valid ranges, the same message in every backend (compiled code returns
the error code gather uses); nothing is ever read or written out of bounds.
"""

import numpy as np

from codegen import forms
from codegen.ctypes import storage
from tracer import nest
from tracer.errors import as_tf
from tracer.ir import dims
from tracer.ops import math_ops
from tracer.ops.array_ops import cast, shape_tuple, zeros_like
from tracer.ops.broadcast_ops import broadcast_to
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import OPS, primitive
from tracer.ops.tangent_rules import LINEAR
from tracer.tensor import is_tensor_like

# --- the shape rule and the index check, shared ------------------------------------------


def _layout(indices_shape, shape, batch_dims):
    """(batches, count, the sizes indexed, inner): the indexed tensor seen as
    [batches, *sizes, inner] and the coordinates as [batches, count, K]."""
    depth = indices_shape[-1]
    return (
        dims.size(shape[:batch_dims]),
        dims.size(indices_shape[batch_dims:-1]),
        tuple(shape[batch_dims : batch_dims + depth]),
        dims.size(shape[batch_dims + depth :]),
    )


def _check_indices(indices, shape, batch_dims, what):
    """ValueError/TypeError when `indices` cannot index a tensor of `shape` (named `what`)."""
    if not indices.dtype.is_integer:
        raise TypeError(f"indices must be int32 or int64, got {indices.dtype.name}")
    if not isinstance(batch_dims, int) or batch_dims < 0:
        raise ValueError(f"batch_dims must be a non-negative int, got {batch_dims!r}")
    ishape = tuple(indices.shape)
    if len(ishape) < batch_dims + 1:
        raise ValueError(
            f"indices of shape {ishape} need at least batch_dims + 1 = {batch_dims + 1} axes "
            "(the last holds the coordinates)"
        )
    depth = ishape[-1]
    if not isinstance(depth, int):
        raise ValueError(f"the last axis of indices (the coordinates) must be known, not {depth}")
    if batch_dims + depth > len(shape):
        raise ValueError(
            f"indices.shape[-1] = {depth} coordinates (after batch_dims = {batch_dims}) are "
            f"more than {what} of shape {tuple(shape)} has axes"
        )
    if ishape[:batch_dims] != tuple(shape[:batch_dims]):
        raise ValueError(
            f"the batch dimensions of indices {ishape[:batch_dims]} and of {what} "
            f"{tuple(shape[:batch_dims])} differ (batch_dims = {batch_dims})"
        )


def out_of_range(op, what, shape, batch_dims, depth):
    """The message of an index out of range: the same eagerly, interpreted and compiled
    (compiled code reports one fixed message per node, so it names the valid ranges, not
    the value)."""
    ranges = ", ".join(f"indices[..., {k}] in [0, {shape[batch_dims + k]})" for k in range(depth))
    indexed = "the result" if what == "shape" else what
    return (
        f"{op}: an index in indices is out of range for {indexed} of shape {tuple(shape)}; "
        f"the valid ranges are {ranges}"
    )


def _rows(op, what, indices, shape, batch_dims):
    """The row of each coordinate in the indexed tensor seen as [batches * prod(sizes),
    inner], as a flat int64 array; IndexError if one is out of range."""
    depth = indices.shape[-1]
    batches, count, sizes, _ = _layout(indices.shape, shape, batch_dims)
    coordinates = np.asarray(indices, dtype=np.int64).reshape(batches, count, depth)
    rows = np.broadcast_to(np.arange(batches, dtype=np.int64)[:, None], (batches, count))
    for k, size in enumerate(sizes):
        column = coordinates[:, :, k]
        if column.size and (column.min() < 0 or column.max() >= size):
            raise as_tf(IndexError)(out_of_range(op, what, shape, batch_dims, depth))
        rows = rows * size + column
    return rows.reshape(-1)


def _table(array, axes):
    """`array` as one row per index of its first `axes` axes (a view)."""
    return array.reshape((int(np.prod(array.shape[:axes])), *array.shape[axes:]))


def _nd_template(template, what, indices_at, shape_of, **values):
    """The C form of an op of `template`: coordinates in input `indices_at` into a tensor
    of shape `shape_of(node)` (named `what` in the index error)."""

    def context(node, blas):
        indices = node.inputs[indices_at]
        batches, count, sizes, inner = _layout(
            indices.shape, shape_of(node), node.attrs["batch_dims"]
        )
        return dict(
            T=storage(node.dtype),
            I=storage(indices.dtype),
            batches=batches,
            count=count,
            depth=indices.shape[-1],
            sizes=sizes,
            inner=inner,
            total=dims.size(shape_of(node)),
            **values,
        )

    def error(node):
        depth = node.inputs[indices_at].shape[-1]
        message = out_of_range(node.op, what, shape_of(node), node.attrs["batch_dims"], depth)
        return IndexError, message

    return forms.Template(template, context, error=error)


def _batched(arg, flag, size):
    """`arg` with the leading batch axis, broadcast there when it has none."""
    return arg if flag else broadcast_to(arg, (size, *arg.shape))


def batch_along_batch_dims(node, args, flags, size):
    """The batching rule of an op whose inputs all line up along `batch_dims`: the unbatched
    inputs are broadcast along the batch, which becomes one more batch dimension."""
    attrs = dict(node.attrs, batch_dims=node.attrs["batch_dims"] + 1)
    if "shape" in attrs:
        attrs["shape"] = (size, *attrs["shape"])
    return apply(OPS[node.op], tuple(_batched(a, f, size) for a, f in zip(args, flags)), attrs)


# --- gather_nd -----------------------------------------------------------------------------


def _infer_gather_nd(attrs, params, indices):
    batch_dims = attrs["batch_dims"]
    _check_indices(indices, params.shape, batch_dims, "params")
    depth = indices.shape[-1]
    return tuple(indices.shape[:-1]) + tuple(params.shape[batch_dims + depth :]), params.dtype


def _gather_nd_kernel(params, indices, batch_dims):
    params, indices = np.asarray(params), np.asarray(indices)
    rows = _rows("gather_nd", "params", indices, params.shape, batch_dims)
    table = _table(params, batch_dims + indices.shape[-1])
    return table[rows].reshape(indices.shape[:-1] + table.shape[1:])


def _gather_nd_batch(node, args, flags, size):
    params, indices = args
    if flags == [False, True] and node.attrs["batch_dims"] == 0:
        return apply(GATHER_ND, (params, indices), node.attrs)  # one more axis of coordinates
    return batch_along_batch_dims(node, args, flags, size)


GATHER_ND = primitive(
    "gather_nd",
    _infer_gather_nd,
    strings=True,
    grad=lambda node, g, indices: (
        apply(
            SCATTER_ND,
            (indices, g),
            {"shape": node.inputs[0].shape, "batch_dims": node.attrs["batch_dims"]},
        ),
        None,
    ),
    saves=(1,),
    jvp=LINEAR,
    batch=_gather_nd_batch,
    kernel=_gather_nd_kernel,
    c=_nd_template("gather_nd.c.j2", "params", 1, lambda node: node.inputs[0].shape),
)


def gather_nd(params, indices, batch_dims=0, name=None):
    """Slices of `params` at the coordinates in the last axis of `indices`.

    The first `batch_dims` axes of `params` and `indices` are batch axes they share.

    >>> tt.gather_nd(tt.constant([[1.0, 2.0], [3.0, 4.0]]), [[1, 0], [0, 1]]).numpy()
    array([3., 2.], dtype=float32)
    """
    params, indices = as_tensor(params), as_tensor(indices)
    return apply(GATHER_ND, (params, indices), {"batch_dims": _static_batch_dims(batch_dims)})


def _static_batch_dims(batch_dims):
    if isinstance(batch_dims, (bool, np.bool_)) or not isinstance(batch_dims, (int, np.integer)):
        raise TypeError(f"gather_nd: batch_dims must be an int, got {batch_dims!r}")
    return int(batch_dims)


# --- scatter_nd and tensor_scatter_nd_* -----------------------------------------------------


def _check_updates(indices, updates, shape, batch_dims, what):
    _check_indices(indices, shape, batch_dims, what)
    depth = indices.shape[-1]
    expected = tuple(indices.shape[:-1]) + tuple(shape[batch_dims + depth :])
    if tuple(updates.shape) != expected:
        raise ValueError(
            f"updates of shape {tuple(updates.shape)} do not fit indices of shape "
            f"{tuple(indices.shape)} into {what} of shape {tuple(shape)}: updates must have "
            f"shape indices.shape[:-1] + {what}.shape[{batch_dims + depth}:] = {expected}"
        )


def _infer_scatter_nd(attrs, indices, updates):
    _check_updates(indices, updates, attrs["shape"], attrs["batch_dims"], "shape")
    return tuple(attrs["shape"]), updates.dtype


def _infer_tensor_scatter(attrs, tensor, indices, updates):
    if updates.dtype is not tensor.dtype:
        raise TypeError(
            f"updates ({updates.dtype.name}) must have the dtype of tensor ({tensor.dtype.name})"
        )
    _check_updates(indices, updates, tensor.shape, attrs["batch_dims"], "tensor")
    return tuple(tensor.shape), tensor.dtype


def _scatter_kernel(op, what, combine):
    """The numpy kernel of a scatter into `out` (zeros, or a copy of the tensor): each update
    combined in at its row (`add`: summed, duplicates too; `assign`: the last one wins)."""

    def run(out, indices, updates, batch_dims):
        indices, updates = np.asarray(indices), np.asarray(updates)
        rows = _rows(op, what, indices, out.shape, batch_dims)
        table = _table(out, batch_dims + indices.shape[-1])
        values = updates.reshape((rows.size, *table.shape[1:]))
        if combine == "add":
            np.add.at(table, rows, values)
        else:  # the last update of each row wins
            last = rows.size - 1 - np.unique(rows[::-1], return_index=True)[1]
            table[rows[last]] = values[last]
        return out

    return run


def _scatter_nd_kernel(indices, updates, shape, batch_dims):
    updates = np.asarray(updates)
    out = np.zeros(shape, dtype=updates.dtype)
    return _scatter_kernel("scatter_nd", "shape", "add")(out, indices, updates, batch_dims)


def _tensor_scatter_kernel(op, combine):
    scatter = _scatter_kernel(op, "tensor", combine)
    # NOTE: a C-ordered copy: the scatter writes through a reshaped view of it, and a copy
    # in the tensor's own order (a transpose's, say) would reshape into another copy
    return lambda tensor, indices, updates, batch_dims: scatter(
        np.array(tensor, copy=True, order="C"), indices, updates, batch_dims
    )


def _scatter_c(base, combine):
    """templates/scatter_nd.c.j2: start from zeros (`base` None) or a copy of the tensor,
    then each update's slice combined in with `combine` (a C assignment operator)."""
    what, indices_at = ("shape", 0) if base is None else ("tensor", 1)
    return _nd_template(
        "scatter_nd.c.j2", what, indices_at, lambda node: node.shape, base=base, combine=combine
    )


SCATTER_ND = primitive(
    "scatter_nd",
    _infer_scatter_nd,
    grad=lambda node, g, indices: (
        None,
        apply(GATHER_ND, (g, indices), {"batch_dims": node.attrs["batch_dims"]}),
    ),
    saves=(0,),
    jvp=LINEAR,
    batch=batch_along_batch_dims,
    kernel=_scatter_nd_kernel,
    c=_scatter_c(None, "+="),
)


def _tensor_scatter_update_grad(node, g, indices):
    """TensorFlow's rule: the updated positions pass nothing to `tensor`; each update gets
    the cotangent at its coordinates (duplicates included, though only the last one shows)."""
    batch = {"batch_dims": node.attrs["batch_dims"]}
    gathered = apply(GATHER_ND, (g, indices), batch)
    return (
        apply(TENSOR_SCATTER_ND_UPDATE, (g, indices, zeros_like(gathered)), batch),
        None,
        gathered,
    )


TENSOR_SCATTER_ND_UPDATE = primitive(
    "tensor_scatter_nd_update",
    _infer_tensor_scatter,
    grad=_tensor_scatter_update_grad,
    saves=(1,),
    jvp=LINEAR,
    batch=batch_along_batch_dims,
    kernel=_tensor_scatter_kernel("tensor_scatter_nd_update", "assign"),
    c=_scatter_c("tensor", "="),
)

TENSOR_SCATTER_ND_ADD = primitive(
    "tensor_scatter_nd_add",
    _infer_tensor_scatter,
    grad=lambda node, g, indices: (
        g,
        None,
        apply(GATHER_ND, (g, indices), {"batch_dims": node.attrs["batch_dims"]}),
    ),
    saves=(1,),
    jvp=LINEAR,
    batch=batch_along_batch_dims,
    kernel=_tensor_scatter_kernel("tensor_scatter_nd_add", "add"),
    c=_scatter_c("tensor", "+="),
)


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with `updates` added at the coordinates of `indices`; repeated
    coordinates add up, as in TensorFlow.

    >>> tt.scatter_nd([[1], [3], [1]], tt.constant([1.0, 2.0, 3.0]), [5]).numpy()
    array([0., 4., 0., 2., 0.], dtype=float32)
    """
    indices, updates = as_tensor(indices), as_tensor(updates)
    attrs = {"shape": _static_shape(shape), "batch_dims": 0}
    return apply(SCATTER_ND, (indices, updates), attrs)


def _static_shape(shape):
    if is_tensor_like(shape) and as_tensor(shape)._value is None:
        raise ValueError(
            "scatter_nd: shape must be known when the function is traced (it is the result's "
            "shape), not a tensor computed in it"
        )
    return shape_tuple(as_tensor(shape).numpy() if is_tensor_like(shape) else shape)


def _like(tensor, updates):
    """`updates` as a Tensor; Python values take `tensor`'s dtype, as TensorFlow converts them.
    A list holding tensors is stacked as a tensor (numpy's array of it would cut them off
    the tape: their gradients were lost)."""
    if is_tensor_like(updates):
        return as_tensor(updates)
    if any(is_tensor_like(leaf) for leaf in nest.flatten(updates)):
        return cast(as_tensor(updates), tensor.dtype)
    return as_tensor(np.asarray(updates, dtype=tensor.dtype.as_numpy_dtype))


def _tensor_scatter(op, tensor, indices, updates):
    tensor = as_tensor(tensor)
    return apply(op, (tensor, as_tensor(indices), _like(tensor, updates)), {"batch_dims": 0})


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of `tensor` with the slices at the coordinates of `indices` replaced by
    `updates`. Of repeated coordinates the last update wins (TensorFlow leaves the order
    undefined). The gradient to `tensor` is zero at the updated positions.

    >>> tt.tensor_scatter_nd_update(tt.zeros([3]), [[2], [0]], [5.0, 7.0]).numpy()
    array([7., 0., 5.], dtype=float32)
    """
    return _tensor_scatter(TENSOR_SCATTER_ND_UPDATE, tensor, indices, updates)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` added at the coordinates of `indices` (repeated
    ones add up)."""
    return _tensor_scatter(TENSOR_SCATTER_ND_ADD, tensor, indices, updates)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """A copy of `tensor` with `updates` subtracted at the coordinates of `indices`: the
    negated updates added (an index error names tensor_scatter_nd_add)."""
    tensor = as_tensor(tensor)
    negated = math_ops.negative(_like(tensor, updates))
    return _tensor_scatter(TENSOR_SCATTER_ND_ADD, tensor, indices, negated)
