"""Reductions beyond the sum (in `broadcast_ops.py`): max, min and mean."""

import numpy as np

from codegen import forms
from tracer import dtypes
from tracer.indexed_slices import IndexedSlices
from tracer.ir import dims
from tracer.ops import array_ops, batching, math_ops, shapes
from tracer.ops.broadcast_ops import reduce_attrs, reduce_sum
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import OUT, primitive


def _reduce_extremum_grad(node, g, x, out):
    """TensorFlow's rule: the gradient is split equally between tied extrema."""
    axes = node.attrs["axis"]
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    hits = array_ops.cast(math_ops.equal(x, array_ops.reshape(out, kept)), g.dtype)
    count = reduce_sum(hits, axes, keepdims=True)
    return (math_ops.divide(hits, count) * array_ops.reshape(g, kept),)


def _reduce_extremum_jvp(node, tangents, inputs, out):
    """The tangent at the extremum (the mean of the tangents at tied extrema)."""
    ((t,), (x,)) = tangents, inputs
    axes = node.attrs["axis"]
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    hits = array_ops.cast(math_ops.equal(x, array_ops.reshape(out, kept)), t.dtype)
    count = reduce_sum(hits, axes, keepdims=node.attrs["keepdims"])
    return math_ops.divide(reduce_sum(hits * t, axes, keepdims=node.attrs["keepdims"]), count)


def _extremum_start(sign):
    """The first value of a max (sign -1) or min (+1) accumulator, by dtype."""

    def start(dtype):
        if dtype.is_integer:
            bits = 32 if dtype.name == "int32" else 64
            return f"INT{bits}_MIN" if sign < 0 else f"INT{bits}_MAX"
        return "-INFINITY" if sign < 0 else "INFINITY"

    return start


def _identity(dtype, sign):
    """What a max (sign -1) or min (+1) of nothing is: an empty axis gives it, as in TensorFlow
    (and the C loops, which start from it)."""
    if dtype.kind in "iu":
        return np.iinfo(dtype).min if sign < 0 else np.iinfo(dtype).max
    if dtype.kind == "b":
        return sign > 0
    return sign * np.inf


def _extremum(name, numpy_reduce, helper, sign):
    """reduce_max (sign -1) or reduce_min (+1).

    NOTE: max and min keep numpy's order-dependent NaN rule (the first NaN wins), so their
    loops are not reassociated (no simd clause).
    """
    return primitive(
        name,
        shapes.reduction,
        grad=_reduce_extremum_grad,
        jvp=_reduce_extremum_jvp,
        saves=(0, OUT),
        fusion="reduction",
        batch=batching.shifted_axis("axis"),
        kernel=lambda x, axis, keepdims: numpy_reduce(
            x, axis=axis, keepdims=keepdims, initial=_identity(x.dtype, sign)
        ),
        c=forms.Reduction(
            f"{{acc}} = tr_{helper.name}_{{tag}}({{acc}}, {{value}});",
            _extremum_start(sign),
            helpers=(helper,),
        ),
    )


REDUCE_MAX = _extremum("reduce_max", np.max, math_ops.MAXIMUM_HELPER, -1)
REDUCE_MIN = _extremum("reduce_min", np.min, math_ops.MINIMUM_HELPER, +1)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    x = as_tensor(input_tensor)
    attrs = reduce_attrs(x, axis, keepdims)
    return x if attrs is None else apply(REDUCE_MAX, (x,), attrs)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    x = as_tensor(input_tensor)
    attrs = reduce_attrs(x, axis, keepdims)
    return x if attrs is None else apply(REDUCE_MIN, (x,), attrs)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean over `axis`; integer tensors give the integer (floor) mean, as in TensorFlow."""
    x = as_tensor(input_tensor)
    axes = shapes.normalize_axes(axis, x.ndim)
    count = dims.size([x.shape[a] for a in axes])
    total = reduce_sum(x, axes, keepdims)
    if isinstance(count, dims.Dim):  # known when the function runs
        count = array_ops.dims_value([count], x.dtype)
    if x.dtype.is_integer:
        return math_ops.floordiv(total, count)
    return math_ops.divide(total, count)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """The vector norm of `tensor` over `axis` (all axes by default): "euclidean" (2),
    1, or np.inf (the largest magnitude).

    >>> float(tt.norm(tt.constant([3.0, 4.0])))
    5.0
    """
    t = as_tensor(tensor)
    keep = bool(keepdims)
    magnitude = math_ops.abs(t)
    if ord in ("euclidean", 2, 2.0, "fro"):
        return math_ops.sqrt(
            reduce_sum(
                t * t if not t.dtype.is_complex else magnitude * magnitude, axis=axis, keepdims=keep
            )
        )
    if ord in (1, 1.0):
        return reduce_sum(magnitude, axis=axis, keepdims=keep)
    if ord == np.inf:
        return reduce_max(magnitude, axis=axis, keepdims=keep)
    raise ValueError(f"norm: ord must be 'euclidean', 1, 2 or np.inf, not {ord!r}")


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """`t` scaled down to an L2 norm (over `axes`, all by default) of at most `clip_norm`:
    t * clip_norm / max(norm, clip_norm), as TensorFlow computes it.

    >>> tt.clip_by_norm(tt.constant([3.0, 4.0]), 1.0).numpy()
    array([0.6, 0.8], dtype=float32)
    """
    t = as_tensor(t)
    norm = math_ops.sqrt(reduce_sum(t * t, axis=axes, keepdims=True))
    if hasattr(clip_norm, "dtype"):
        clip_norm = array_ops.cast(clip_norm, t.dtype)
    return t * clip_norm / math_ops.maximum(norm, clip_norm)


def global_norm(t_list, name=None):
    """The L2 norm of all the tensors of `t_list` together (None entries are skipped;
    IndexedSlices count by their values): sqrt(sum of each one's sum of squares)."""
    values = [_values(t) for t in t_list if t is not None]
    if not values:
        return as_tensor(0.0)
    dtype = values[0].dtype
    for value in values:
        if value.dtype != dtype or not dtype.is_floating:
            names = ", ".join(v.dtype.name for v in values)
            raise TypeError(f"global_norm: the tensors must share one floating dtype, got {names}")
    squares = [reduce_sum(v * v) for v in values]
    total = squares[0]
    for square in squares[1:]:
        total = total + square
    return math_ops.sqrt(total)


def _values(t):
    """A tensor, or the values of an IndexedSlices."""
    return as_tensor(t.values if isinstance(t, IndexedSlices) else t)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """The tensors of `t_list` scaled by clip_norm / max(global_norm, clip_norm), and the
    global norm (as TensorFlow: None entries stay None, IndexedSlices get their values
    scaled, and a norm that is inf or NaN makes every value NaN).

    >>> clipped, norm = tt.clip_by_global_norm([tt.constant([3.0, 4.0]), None], 1.0)
    >>> clipped[0].numpy(), clipped[1], float(norm)
    (array([0.6, 0.8], dtype=float32), None, 5.0)
    """
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(
            f"clip_by_global_norm: t_list must be a list or tuple of tensors, "
            f"got {type(t_list).__name__}"
        )
    t_list = list(t_list)
    norm = as_tensor(global_norm(t_list) if use_norm is None else use_norm)
    if not norm.dtype.is_floating:
        norm = array_ops.cast(norm, dtypes.float32)
    clip = array_ops.cast(as_tensor(clip_norm), norm.dtype)
    # TensorFlow's clip * min(1 / norm, 1 / clip), without dividing by a zero norm; plus
    # (norm - norm), so that an infinite or NaN norm gives NaN rather than a silent zero
    scale = clip / math_ops.maximum(norm, clip) + (norm - norm)
    clipped = []
    for t in t_list:
        if t is None:
            clipped.append(None)
            continue
        values = _values(t)
        scaled = values * array_ops.cast(scale, values.dtype)
        if isinstance(t, IndexedSlices):
            scaled = IndexedSlices(scaled, t.indices, t._dense_shape)
        clipped.append(scaled)
    return clipped, norm
