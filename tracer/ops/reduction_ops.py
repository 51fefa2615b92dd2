"""Reductions, and `unbroadcast`, which sums a gradient back to an input's shape."""

from tracer.ops import array_ops, shapes
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import OUT, primitive


def _kept_shape(node):
    """The reduced node's shape with the reduced axes kept as size 1."""
    axes = node.attrs["axis"]
    return tuple(1 if i in axes else d for i, d in enumerate(node.inputs[0].shape))


def _reduce_sum_grad(node, g):
    x_shape = node.inputs[0].shape
    return (array_ops.broadcast_to(array_ops.reshape(g, _kept_shape(node)), x_shape),)


def _reduce_extremum_grad(node, g, x, out):
    """TensorFlow's rule: the gradient is split equally between tied extrema."""
    from tracer.ops import math_ops

    kept = _kept_shape(node)
    hits = array_ops.cast(math_ops.equal(x, array_ops.reshape(out, kept)), g.dtype)
    count = reduce_sum(hits, node.attrs["axis"], keepdims=True)
    return (math_ops.divide(hits, count) * array_ops.reshape(g, kept),)


REDUCE_SUM = primitive("reduce_sum", shapes.reduction, _reduce_sum_grad)
REDUCE_MAX = primitive("reduce_max", shapes.reduction, _reduce_extremum_grad, saves=(0, OUT))
REDUCE_MIN = primitive("reduce_min", shapes.reduction, _reduce_extremum_grad, saves=(0, OUT))


def _reduce(op, input_tensor, axis, keepdims):
    x = as_tensor(input_tensor)
    axes = shapes.normalize_axes(axis, x.ndim)
    if not axes and not keepdims:
        return x
    return apply(op, (x,), {"axis": axes, "keepdims": bool(keepdims)})


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum over `axis` (all axes when None).

    >>> tt.reduce_sum(tt.ones((2, 3)), axis=1).numpy()
    array([3., 3.], dtype=float32)
    """
    return _reduce(REDUCE_SUM, input_tensor, axis, keepdims)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce(REDUCE_MAX, input_tensor, axis, keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce(REDUCE_MIN, input_tensor, axis, keepdims)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean over `axis`; integer tensors give the integer (floor) mean, as in TensorFlow."""
    from tracer.ops import math_ops

    x = as_tensor(input_tensor)
    axes = shapes.normalize_axes(axis, x.ndim)
    count = 1
    for a in axes:
        count *= x.shape[a]
    total = reduce_sum(x, axes, keepdims)
    if x.dtype.is_integer:
        return math_ops.floordiv(total, count)
    return math_ops.divide(total, count)


def unbroadcast(g, shape):
    """Sum `g` over the axes that broadcasting added or stretched, giving a tensor of `shape`."""
    if g.shape == shape:
        return g
    lead = len(g.shape) - len(shape)
    stretched = tuple(lead + i for i, d in enumerate(shape) if d == 1 and g.shape[lead + i] != 1)
    summed = reduce_sum(g, tuple(range(lead)) + stretched, keepdims=True)
    return array_ops.reshape(summed, shape)
