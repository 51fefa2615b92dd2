"""Copies and their sums: broadcast_to, tile and reduce_sum, which are each other's gradients,
and `unbroadcast`, which sums a gradient back to an input's shape."""

import math

import numpy as np

from codegen import array_math, forms
from codegen.affine import Affine, broadcast_map
from codegen.ctypes import storage
from codegen.loops import INDEX, copy_nest
from runtime.kernels import same_type
from tracer.ops import array_ops, batching, shapes
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import primitive
from tracer.ops.tangent_rules import LINEAR


def _kept_shape(node):
    """A reduced node's input shape with the reduced axes kept as size 1."""
    axes = node.attrs["axis"]
    return tuple(1 if i in axes else d for i, d in enumerate(node.inputs[0].shape))


def reduce_attrs(x, axis, keepdims):
    """The attributes of a reduction of `x` over `axis` (None: every axis), or None when it
    reduces nothing and keeps the shape (then it is `x` itself)."""
    axes = shapes.normalize_axes(axis, x.ndim)
    if not axes and not keepdims:
        return None
    return {"axis": axes, "keepdims": bool(keepdims)}


# --- reduce_sum -------------------------------------------------------------------------


def _reduce_sum_grad(node, g):
    x_shape = node.inputs[0].shape
    return (broadcast_to(array_ops.reshape(g, _kept_shape(node)), x_shape),)


# elements from which a float sum over leading axes is the installed column sums' (compiled
# code's order, in double; below, numpy's sum is as quick)
LEADING_SUMS_FROM = 1 << 16
# a float sum over consecutive axes after others is summed block by block (`_middle_sums`)
# where the blocks are at most MIDDLE_SUM_BLOCKS (each is a call), each of at least
# MIDDLE_SUM_BLOCK_SIZE elements and MIDDLE_SUM_COLUMNS columns (numpy's is quicker for less)
MIDDLE_SUM_BLOCKS = 64
MIDDLE_SUM_BLOCK_SIZE = 1 << 15
MIDDLE_SUM_COLUMNS = 8


def _reduce_sum_kernel(x, axis, keepdims):
    """np.sum's result (what it calls) without its Python wrapper, a large part of a small
    sum's time; a large float sum over leading axes (a bias's gradient), or over consecutive
    axes after a few (the image axes of an NHWC batch: GlobalAveragePooling, an instance
    norm's moments), in C."""
    x = np.asarray(x)
    summed = None
    if axis and x.size >= LEADING_SUMS_FROM and axis == tuple(range(axis[0], axis[0] + len(axis))):
        if axis[0] == 0:
            summed = array_math.leading_sums(x, len(axis))
        else:
            summed = _middle_sums(x, axis)
    if summed is None:
        return same_type(x.dtype, np.add.reduce(x, axis=axis, keepdims=keepdims))
    if keepdims:
        return summed.reshape(tuple(1 if i in axis else d for i, d in enumerate(x.shape)))
    return summed


def _middle_sums(x, axis):
    """The sums of a float array over its consecutive `axis` after others, those of each
    block before them by the installed column sums (each column's terms in the order of the
    rows, in double, as compiled code sums them: numpy adds rows one after another in the
    array's type, 50 times the error over an NHWC batch's 64 x 64 image); None where the
    blocks are too many or too small (above), or the column sums are not installed."""
    before, columns = math.prod(x.shape[: axis[0]]), math.prod(x.shape[axis[-1] + 1 :])
    if (
        before > MIDDLE_SUM_BLOCKS
        or x.size // before < MIDDLE_SUM_BLOCK_SIZE
        or columns < MIDDLE_SUM_COLUMNS
    ):
        return None
    kept = x.shape[: axis[0]] + x.shape[axis[-1] + 1 :]
    blocks = np.ascontiguousarray(x).reshape(before, -1, columns)
    sums = [array_math.leading_sums(block, 1) for block in blocks]
    return None if sums[0] is None else np.stack(sums).reshape(kept)


REDUCE_SUM = primitive(
    "reduce_sum",
    shapes.reduction,
    grad=_reduce_sum_grad,
    jvp=LINEAR,
    fusion="reduction",
    batch=batching.shifted_axis("axis"),
    kernel=_reduce_sum_kernel,
    # sums may be reassociated (vectorized) by the compiler
    c=forms.Reduction("{acc} += {value};", lambda dtype: "0", wide=True, simd="reduction(+:{acc})"),
)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum over `axis` (all axes when None).

    >>> tt.reduce_sum(tt.ones((2, 3)), axis=1).numpy()
    array([3., 3.], dtype=float32)
    """
    x = as_tensor(input_tensor)
    attrs = reduce_attrs(x, axis, keepdims)
    return x if attrs is None else apply(REDUCE_SUM, (x,), attrs)


def unbroadcast(g, shape):
    """Sum `g` over the axes that broadcasting added or stretched, giving a tensor of `shape`."""
    dims = g._dims()
    if dims == shape:
        return g
    lead = len(dims) - len(shape)
    stretched = tuple(lead + i for i, d in enumerate(shape) if d == 1 and dims[lead + i] != 1)
    summed = reduce_sum(g, tuple(range(lead)) + stretched, keepdims=True)
    return array_ops.reshape(summed, shape)


# --- broadcast_to ----------------------------------------------------------------------


def _broadcast_to_batch(node, args, flags, size):
    (x,) = batching.aligned(node, args, flags)
    return broadcast_to(x, (size,) + node.attrs["shape"])


# results of fewer elements are copies: numpy's broadcast view takes longer to make than a
# copy of that many elements (the same values; a view keeps a large result's memory)
BROADCAST_COPIED_BELOW = 4096


def _broadcast_to_kernel(x, shape):
    """np.broadcast_to(x, shape)'s values: a copy of its own below BROADCAST_COPIED_BELOW
    elements, numpy's read-only view from there."""
    if math.prod(shape) < BROADCAST_COPIED_BELOW:
        out = np.empty(shape, x.dtype)
        out[...] = x
        return out
    return np.broadcast_to(x, shape)


BROADCAST_TO = primitive(
    "broadcast_to",
    shapes.broadcast_to,
    strings=True,
    grad=lambda node, g: (unbroadcast(g, node.inputs[0].shape),),
    jvp=LINEAR,
    fusion="view",
    batch=_broadcast_to_batch,
    simplify=array_ops.same_as_input,
    kernel=_broadcast_to_kernel,
    c=forms.View(lambda node, out_map: broadcast_map(out_map, node.shape, node.inputs[0].shape)),
)


def broadcast_to(input, shape, name=None):
    x = as_tensor(input)
    shape = array_ops.shape_tuple(shape)
    if shape == x.shape:
        return x
    return apply(BROADCAST_TO, (x,), {"shape": shape})


# --- tile -------------------------------------------------------------------------------


def _tile_grad(node, g):
    """Sum the copies: view g as (m0, d0, m1, d1, ...) and reduce the m axes."""
    shape = node.inputs[0].shape
    split = tuple(d for pair in zip(node.attrs["multiples"], shape) for d in pair)
    return (reduce_sum(array_ops.reshape(g, split), tuple(range(0, 2 * len(shape), 2))),)


def _infer_tile(attrs, x):
    multiples = attrs["multiples"]
    return tuple(d * m for d, m in zip(x.shape, multiples)), x.dtype


def _tile_nests(node):
    """Loops over (copy, element) pairs of every axis, writing each element to every copy."""
    (x,) = node.inputs
    multiples, rank = node.attrs["multiples"], len(x.shape)
    copies = [Affine.index(2 * d) for d in range(rank)]
    within = [Affine.index(2 * d + 1) for d in range(rank)]
    out_map = tuple(c * x.shape[d] + w for d, (c, w) in enumerate(zip(copies, within)))
    extents = (e for d in range(rank) for e in (multiples[d], x.shape[d]))
    loops = [(INDEX[i], extent) for i, extent in enumerate(extents)]
    nest = copy_nest("p0", x.shape, tuple(within), out_map, node.shape, loops)
    return [(storage(x.dtype), "p0")], [nest]


TILE = primitive(
    "tile",
    _infer_tile,
    strings=True,
    grad=_tile_grad,
    jvp=LINEAR,
    batch=lambda node, args, flags, size: tile(args[0], (1,) + node.attrs["multiples"]),
    kernel=lambda x, multiples: np.tile(x, multiples),
    c=forms.LoopNests(_tile_nests),
)


def tile(input, multiples, name=None):
    """`input` repeated `multiples[i]` times along axis i."""
    x = as_tensor(input)
    multiples = array_ops.shape_tuple(multiples)
    if len(multiples) != x.ndim:
        raise ValueError(f"tile: {len(multiples)} multiples for a tensor of rank {x.ndim}")
    return apply(TILE, (x,), {"multiples": multiples})
