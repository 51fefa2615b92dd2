"""Shape and data-movement ops: reshape, transpose, broadcast_to, slicing, cast, creation."""

import numpy as np

from tracer import dtypes
from tracer.dtypes import as_dtype
from tracer.ops import shapes
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import primitive

# --- primitives -------------------------------------------------------------------------


def _reshape_grad(node, g):
    return (reshape(g, node.inputs[0].shape),)


def _transpose_grad(node, g):
    return (transpose(g, tuple(int(p) for p in np.argsort(node.attrs["perm"]))),)


def _broadcast_to_grad(node, g):
    from tracer.ops.reduction_ops import unbroadcast

    return (unbroadcast(g, node.inputs[0].shape),)


def _cast_grad(node, g):
    source = node.inputs[0].dtype
    return (cast(g, source) if source.is_differentiable else None,)


def _identity_grad(node, g):
    return (g,)


def _slice_grad(node, g):
    return (apply(SLICE_GRAD, (g,), {"index": node.attrs["index"], "shape": node.inputs[0].shape}),)


def _slice_grad_grad(node, g):
    return (apply(SLICE, (g,), {"index": node.attrs["index"]}),)


def _tile_grad(node, g):
    """Sum the copies: view g as (m0, d0, m1, d1, ...) and reduce the m axes."""
    from tracer.ops.reduction_ops import reduce_sum

    shape = node.inputs[0].shape
    split = tuple(d for pair in zip(node.attrs["multiples"], shape) for d in pair)
    return (reduce_sum(reshape(g, split), tuple(range(0, 2 * len(shape), 2))),)


def _infer_tile(attrs, x):
    multiples = attrs["multiples"]
    return tuple(d * m for d, m in zip(x.shape, multiples)), x.dtype


def _infer_slice(attrs, x):
    shape, axis = [], 0
    for item in attrs["index"]:
        if item is None:
            shape.append(1)
        elif isinstance(item, tuple):
            shape.append(len(range(item[0], item[1], item[2])))
            axis += 1
        else:
            axis += 1
    return tuple(shape) + tuple(x.shape[axis:]), x.dtype


def _infer_slice_grad(attrs, g):
    return attrs["shape"], g.dtype


RESHAPE = primitive("reshape", shapes.reshape, _reshape_grad)
TRANSPOSE = primitive("transpose", shapes.transpose, _transpose_grad)
BROADCAST_TO = primitive("broadcast_to", shapes.broadcast_to, _broadcast_to_grad)
CAST = primitive("cast", shapes.cast, _cast_grad, elementwise=True)
IDENTITY = primitive("identity", shapes.unary, _identity_grad, elementwise=True)
STOP_GRADIENT = primitive("stop_gradient", shapes.unary, None, elementwise=True)
SLICE = primitive("slice", _infer_slice, _slice_grad)
SLICE_GRAD = primitive("slice_grad", _infer_slice_grad, _slice_grad_grad)
FILL = primitive("fill", shapes.creation)
TILE = primitive("tile", _infer_tile, _tile_grad)


# --- public functions -------------------------------------------------------------------


def _shape_tuple(shape):
    if hasattr(shape, "numpy"):
        shape = shape.numpy()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def reshape(tensor, shape, name=None):
    """`tensor` with a new shape of the same size; one dimension may be -1.

    >>> tt.reshape(tt.ones((2, 3)), [3, -1]).shape
    (3, 2)
    """
    x = as_tensor(tensor)
    shape = _shape_tuple(shape)
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        size = int(np.prod(x.shape))
        if shape.count(-1) > 1 or known == 0 or size % known:
            raise ValueError(
                f"reshape: cannot reshape a tensor of shape {x.shape} into shape {shape}"
            )
        shape = tuple(size // known if d == -1 else d for d in shape)
    if shape == x.shape:
        return x
    return apply(RESHAPE, (x,), {"shape": shape})


def transpose(a, perm=None, conjugate=False, name=None):
    x = as_tensor(a)
    perm = tuple(reversed(range(x.ndim))) if perm is None else tuple(int(p) for p in perm)
    return apply(TRANSPOSE, (x,), {"perm": perm})


def broadcast_to(input, shape, name=None):
    x = as_tensor(input)
    shape = _shape_tuple(shape)
    if shape == x.shape:
        return x
    return apply(BROADCAST_TO, (x,), {"shape": shape})


def expand_dims(input, axis, name=None):
    x = as_tensor(input)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError(f"expand_dims: axis {axis} is out of range for a tensor of rank {x.ndim}")
    axis = axis % (x.ndim + 1)
    return reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])


def squeeze(input, axis=None, name=None):
    x = as_tensor(input)
    if axis is None:
        axes = {i for i, d in enumerate(x.shape) if d == 1}
    else:
        axes = set(shapes.normalize_axes(axis, x.ndim))
        bad = [a for a in sorted(axes) if x.shape[a] != 1]
        if bad:
            raise ValueError(
                f"squeeze: axis {bad[0]} of shape {x.shape} has size {x.shape[bad[0]]}, not 1"
            )
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def cast(x, dtype, name=None):
    """`x` converted to `dtype`; the gradient flows back only between floating/complex dtypes."""
    x = as_tensor(x)
    dtype = as_dtype(dtype)
    if x.dtype == dtype:
        return x
    return apply(CAST, (x,), {"dtype": dtype})


def identity(input, name=None):
    return apply(IDENTITY, (as_tensor(input),), {})


def stop_gradient(input, name=None):
    """`input`, through which no gradient flows: tapes do not record it."""
    return apply(STOP_GRADIENT, (as_tensor(input),), {})


def canonical_index(key, shape):
    """A hashable, normalised form of a numpy basic index for `shape`.

    Each item is an int (a non-negative position), a `(start, stop, step)` triple as
    `slice.indices` gives it, or None (a new axis of size 1); `...` is expanded.
    """
    key = key if isinstance(key, tuple) else (key,)
    for item in key:
        if not (item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice))):
            if hasattr(item, "dtype") and item.dtype.is_integer and item.ndim == 0:
                continue
            raise TypeError(
                f"only ints, slices, None and ... can index a tensor, not {type(item).__name__}; "
                "use tt.gather to index with a tensor"
            )
    consumed = sum(1 for item in key if item is not None and item is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"too many indices ({consumed}) for a tensor of shape {shape}")
    if sum(1 for item in key if item is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    result, axis = [], 0
    for item in key:
        if item is Ellipsis:
            for _ in range(len(shape) - consumed):
                result.append(slice(None).indices(shape[axis]))
                axis += 1
        elif item is None:
            result.append(None)
        elif isinstance(item, slice):
            result.append(item.indices(shape[axis]))
            axis += 1
        else:
            position = int(item)
            if not -shape[axis] <= position < shape[axis]:
                raise IndexError(
                    f"index {position} is out of bounds for axis {axis} with size {shape[axis]}"
                )
            result.append(position % shape[axis])
            axis += 1
    return tuple(result)


def getitem(tensor, key):
    x = as_tensor(tensor)
    return apply(SLICE, (x,), {"index": canonical_index(key, x.shape)})


def fill(dims, value, name=None):
    from tracer.tensor import convert_to_tensor

    value = convert_to_tensor(value)
    return apply(
        FILL, (), {"shape": _shape_tuple(dims), "dtype": value.dtype, "value": value.numpy().item()}
    )


def zeros(shape, dtype=dtypes.float32, name=None):
    return apply(FILL, (), {"shape": _shape_tuple(shape), "dtype": as_dtype(dtype), "value": 0})


def ones(shape, dtype=dtypes.float32, name=None):
    return apply(FILL, (), {"shape": _shape_tuple(shape), "dtype": as_dtype(dtype), "value": 1})


def zeros_like(input, dtype=None, name=None):
    x = as_tensor(input)
    return zeros(x.shape, dtype or x.dtype)


def ones_like(input, dtype=None, name=None):
    x = as_tensor(input)
    return ones(x.shape, dtype or x.dtype)


def shape(input, out_type=dtypes.int32, name=None):
    from tracer.tensor import Tensor

    return Tensor(np.array(as_tensor(input).shape, dtype=as_dtype(out_type).as_numpy_dtype))


def size(input, out_type=dtypes.int32, name=None):
    from tracer.tensor import Tensor

    return Tensor(
        np.array(int(np.prod(as_tensor(input).shape)), dtype=as_dtype(out_type).as_numpy_dtype)
    )


def range_(start, limit=None, delta=1, dtype=None, name=None):
    """`tt.range`: like Python's range, as a tensor; the dtype follows the arguments (int32 or float32)."""
    from tracer.tensor import Tensor, _from_python

    if limit is None:
        start, limit = 0, start
    values = [v.numpy() if hasattr(v, "numpy") else v for v in (start, limit, delta)]
    dtype = as_dtype(dtype) if dtype is not None else _from_python(values, None).dtype
    return Tensor(np.arange(*values).astype(as_dtype(dtype).as_numpy_dtype))


def tile(input, multiples, name=None):
    """`input` repeated `multiples[i]` times along axis i."""
    x = as_tensor(input)
    multiples = _shape_tuple(multiples)
    if len(multiples) != x.ndim:
        raise ValueError(f"tile: {len(multiples)} multiples for a tensor of rank {x.ndim}")
    return apply(TILE, (x,), {"multiples": multiples})
