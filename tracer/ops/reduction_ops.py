"""Reductions beyond the sum (in `broadcast_ops.py`): max, min and mean."""

import numpy as np

from codegen import forms
from codegen.ctypes import literal
from tracer import dtypes
from tracer.ir import dims
from tracer.ops import array_ops, batching, math_ops, shapes
from tracer.ops.broadcast_ops import REDUCE_SUM, reduce_attrs, reduce_sum
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply, apply_binary
from tracer.ops.decomposition_ops import svd
from tracer.ops.op_names import tf_op
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
        if dtype.is_bool:
            return "false" if sign < 0 else "true"
        if dtype.is_integer:
            return literal(_identity(dtype._np, sign), dtype)
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

    NOTE: max and min keep numpy's order-dependent rules (the first NaN wins, and the first
    of tied zeros), so a floating loop of theirs that runs reassociated, on vectors and
    threads, runs again in order where its value is zero or infinite or it met a NaN
    (`rechecked`).
    """
    return primitive(
        name,
        shapes.ordered(shapes.reduction),
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
            simd=f"reduction({'max' if sign < 0 else 'min'}:{{acc}})",
            helpers=(helper,),
            rechecked=f"{{acc}} = {{value}} {'>' if sign < 0 else '<'} {{acc}} ? {{value}} : {{acc}};",
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


@tf_op("Mean")
def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean over `axis`; integer tensors give the integer mean rounded toward zero, as in
    TensorFlow (-1.5 is -1), their sum taken in int64 (TensorFlow's mean of [2^30] * 3 in
    int32 is 2^30, of [100] * 3 in int8 100), 0 over no elements."""
    x = as_tensor(input_tensor)
    dtype = x.dtype
    if dtype.is_integer and dtype not in (dtypes.int64, dtypes.uint64):
        wide = reduce_mean(array_ops.cast(x, dtypes.int64), axis, keepdims)
        return array_ops.cast(wide, dtype)
    attrs = reduce_attrs(x, axis, keepdims)
    if attrs is None:  # no axis reduced: each element its own mean
        total, count = x, 1
    else:
        shape = x._dims()
        total = apply(REDUCE_SUM, (x,), attrs)
        count = dims.size([shape[a] for a in attrs["axis"]])
    if isinstance(count, dims.Dim):  # known when the function runs
        count = array_ops.dims_value([count], dtype)
        if dtype.is_integer:
            count = math_ops.maximum(count, 1)  # (no elements: a mean of 0)
    elif dtype.is_integer:
        count = max(count, 1)
    if dtype.is_integer:  # rounded toward zero, as TensorFlow's (C's) integer division
        quotient = math_ops.floordiv(total, count)
        inexact = math_ops.logical_and(
            math_ops.not_equal(math_ops.floormod(total, count), 0), math_ops.less(total, 0)
        )
        return quotient + array_ops.cast(inexact, dtype)
    if dtype.is_floating:  # (math_ops.divide's own test, for integers, is not needed)
        return apply_binary(math_ops.DIV, total, count)
    return math_ops.divide(total, count)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The variance over `axis` (the mean of the squared distances from the mean, which
    divides by the count), as TensorFlow's tf.math.reduce_variance; real for complex input."""
    x = as_tensor(input_tensor)
    deviations = math_ops.subtract(x, reduce_mean(x, axis, keepdims=True))
    if x.dtype.is_complex:  # |d|^2 as re^2 + im^2: no square root to round
        squared = math_ops.add(
            math_ops.square(math_ops.real(deviations)), math_ops.square(math_ops.imag(deviations))
        )
    else:
        squared = math_ops.square(deviations)
    return reduce_mean(squared, axis, keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation over `axis`: the square root of reduce_variance."""
    return math_ops.sqrt(reduce_variance(input_tensor, axis, keepdims))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance) over `axes`, as TensorFlow's tf.nn.moments (`shift` is accepted and
    unused, as there). TensorFlow measures the distances from a mean behind stop_gradient;
    that gives the same first derivatives but second derivatives without the mean's term,
    so here the variance is differentiated whole: every order agrees with finite
    differences. float16 is summed in float32 and the results cast back, as TensorFlow does
    (in float16, 60000 + 60010 is inf)."""
    x = as_tensor(x)
    y = array_ops.cast(x, "float32") if x.dtype.name == "float16" else x
    mean = reduce_mean(y, axes, keepdims=True)
    variance = reduce_mean(math_ops.square(math_ops.subtract(y, mean)), axes, keepdims=True)
    if not keepdims:
        kept = shapes.normalize_axes(axes, x.ndim)
        mean, variance = (array_ops.squeeze(t, kept) for t in (mean, variance))
    if y is not x:
        mean, variance = array_ops.cast(mean, x.dtype), array_ops.cast(variance, x.dtype)
    return mean, variance


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """The norm of `tensor`, as tf.norm: over `axis` (all axes by default, as one vector) a
    vector norm, "euclidean" (2), 1, np.inf (the largest magnitude) or any other p > 0; over
    two axes (rows, columns) a matrix norm, "euclidean" or "fro" (Frobenius), 1 (the largest
    column sum of magnitudes), np.inf (the largest row sum) or 2 (the largest singular value).

    >>> float(tt.norm(tt.constant([3.0, 4.0])))
    5.0
    """
    t = as_tensor(tensor)
    keep = bool(keepdims)
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        return _matrix_norm(t, ord, axis, keep)
    magnitude = math_ops.abs(t)
    if ord in ("euclidean", 2, 2.0, "fro"):
        return _root_sum_of_squares(t, magnitude, axis, keep)
    if ord in (1, 1.0):
        return reduce_sum(magnitude, axis=axis, keepdims=keep)
    if ord == np.inf:
        return reduce_max(magnitude, axis=axis, keepdims=keep)
    if isinstance(ord, (int, float)) and not isinstance(ord, bool) and 0 < ord < np.inf:
        return reduce_sum(magnitude**ord, axis=axis, keepdims=keep) ** (1.0 / ord)
    raise ValueError(f"norm: ord must be 'euclidean', 'fro', np.inf or a number > 0, not {ord!r}")


def normalize(tensor, ord="euclidean", axis=None, name=None):
    """(tensor / its norm, the norm), the norm over `axis` kept as axes of size 1, as
    TensorFlow's tf.linalg.normalize."""
    x = as_tensor(tensor)
    size = norm(x, ord, axis, keepdims=True)
    return math_ops.divide(x, size), size


def _root_sum_of_squares(t, magnitude, axis, keep):
    """The euclidean norm; of complex values in their complex dtype (an imaginary part of 0),
    as TensorFlow's, which takes the root of the sum of x conj(x)."""
    if not t.dtype.is_complex:
        return math_ops.sqrt(reduce_sum(t * t, axis=axis, keepdims=keep))
    root = math_ops.sqrt(reduce_sum(magnitude * magnitude, axis=axis, keepdims=keep))
    return array_ops.cast(root, t.dtype)


def _matrix_norm(t, ord, axis, keep):
    """tf.norm over the (rows, columns) axes `axis` of (batches of) matrices."""
    rows, columns = (shapes.normalize_axes(int(a), t.ndim)[0] for a in axis)  # (in order)
    if rows == columns:
        raise ValueError(f"norm: a matrix norm's two axes must differ, got {tuple(axis)}")
    magnitude = math_ops.abs(t)
    if ord in ("euclidean", "fro"):
        return _root_sum_of_squares(t, magnitude, (rows, columns), keep)
    if ord in (1, 1.0, np.inf):
        summed = columns if ord == np.inf else rows  # row sums for inf, column sums for 1
        sums = reduce_sum(magnitude, axis=summed, keepdims=True)
        return reduce_max(sums, axis=(rows, columns), keepdims=keep)
    if ord in (2, 2.0):
        others = [a for a in range(t.ndim) if a not in (rows, columns)]
        matrices = array_ops.transpose(t, (*others, rows, columns))
        largest = reduce_max(svd(matrices, compute_uv=False), axis=-1)
        if not keep:
            return largest
        kept = [1 if a in (rows, columns) else t.shape[a] for a in range(t.ndim)]
        return array_ops.reshape(largest, kept)
    raise ValueError(
        f"norm: over two axes (a matrix norm) ord must be 'euclidean', 'fro', 1, 2 or np.inf, "
        f"not {ord!r}"
    )


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values of (batches of) matrices above `tol`: by default the
    largest times max(M, N) times the dtype's epsilon, as TensorFlow's (an int64 count)."""
    x = as_tensor(a)
    s = svd(x, compute_uv=False)
    if tol is None:
        eps = float(np.finfo(x.dtype.as_numpy_dtype).eps) * max(x.shape[-2:])
        tol = reduce_max(s, axis=-1, keepdims=True) * eps
    above = math_ops.greater(s, tol)
    return reduce_sum(array_ops.cast(above, "int64"), axis=-1)
