"""tf.math functions that are compositions of tracer's primitives: hyperbolic functions and
their inverses, no-NaN divisions, `xlogy`, reductions of booleans, `tensordot`,
`linalg.cross` and `linspace`.

Written with tracer's ops, each works eagerly, compiled and in the exported C, and
differentiates to any order through its parts. Where TensorFlow defines a value at a
point the plain formula misses (`divide_no_nan` of 0 by 0, `xlogy(0, 0)`), `where` picks
it, with a safe operand on the unused side so that no NaN reaches the gradient. The
hyperbolic functions pick the same way between a formula exact near 0 (near 1 for `acosh`)
and one for large arguments that overflows only where the function does.
"""

import math

import numpy as np

from tracer import dtypes
from tracer.ir import dims
from tracer.ops import array_ops, layout_ops, math_ops, nn_ops, reduction_ops, structure_ops
from tracer.ops.broadcast_ops import broadcast_to, reduce_sum
from tracer.ops.convert import as_tensor, as_tensors
from tracer.ops.linalg_ops import matmul
from tracer.ops.op_names import tf_op
from tracer.ops.structure_ops import stack
from tracer.tensor import convert_to_tensor, is_tensor_like

# NOTE: past these magnitudes the tail formulas below are exact to float64's precision (the
# neglected e^-2t is below 2^-57, 1/(4t^2) below 1e-17), and short of them no intermediate
# overflows float32 (e^20 is 4.9e8, t^2 at 1e8 is 1e16)
_EXP_TAIL_FROM = 20.0
_LOG_TAIL_FROM = 1e8
_LN2 = math.log(2.0)
# ln 2 rounded up to a multiple of 2^-17, so that t - _LN2_UP is exact for t from 20 up to
# float32's 128 (and float64's any t), and the factor that makes up the difference
_LN2_UP = math.ceil(_LN2 * 2**17) / 2**17
_LN2_EXCESS = math.exp(_LN2_UP - _LN2)


def _magnitude(x):
    """|x| by `where`, whose derivative is -1 or 1 at 0 too (abs's is sign(x), 0 at 0)."""
    return math_ops.where(x < 0.0, -x, x)


def _half_exp(t):
    """e^t / 2 for t >= 20, as e^(t - _LN2_UP) e^(_LN2_UP - ln 2): finite as far as e^t / 2 is
    (t = 89.4 in float32), as is its gradient, and a few ulp off at most, where
    exp(t - ln 2) would be off by the rounding of t - ln 2, scaled up by t (32 ulp at 88)."""
    return math_ops.exp(t - _LN2_UP) * _LN2_EXCESS


@tf_op("Sinh")
def sinh(x, name=None):
    """(e^x - e^-x) / 2, odd in x. For t = |x| below 20, (e + e / (e + 1)) / 2 with
    e = expm1(t), exact near 0; above, e^t / 2, overflowing only where sinh does."""
    x = as_tensor(x)
    t = _magnitude(x)
    near = t < _EXP_TAIL_FROM
    e = math_ops.expm1(math_ops.where(near, t, 0.0))  # safe: e / (e + 1) is NaN at e = inf
    value = math_ops.where(near, (e + e / (e + 1.0)) * 0.5, _half_exp(t))
    return math_ops.where(x < 0.0, -value, value)


@tf_op("Cosh")
def cosh(x, name=None):
    """(e^x + e^-x) / 2 of t = |x|. Below 20, 1 + (e / 2) (e / (e + 1)) with e = expm1(t),
    whose derivative, a sum of positive terms, is sinh to a few ulp even near 0 (that of
    e^t / 2 + e^-t / 2 would cancel there); above, e^t / 2, overflowing only where cosh does."""
    x = as_tensor(x)
    t = _magnitude(x)
    near = t < _EXP_TAIL_FROM
    e = math_ops.expm1(math_ops.where(near, t, 0.0))  # safe: e / (e + 1) is NaN at e = inf
    return math_ops.where(near, 1.0 + (e * 0.5) * (e / (e + 1.0)), _half_exp(t))


@tf_op("Asinh")
def asinh(x, name=None):
    """log(t + sqrt(t^2 + 1)) of t = |x|, odd in x, as log1p(t (1 + t / (1 + sqrt(t^2 + 1)))):
    exact near 0, with -0 kept; past 1e8, log(t) + ln 2, before t^2 overflows. The sign is
    put back by `where`, not by a factor sign(x), so that the derivative at 0 is 1."""
    x = as_tensor(x)
    t = _magnitude(x)
    far = t > _LOG_TAIL_FROM
    near_t = math_ops.where(far, 0.0, t)  # safe: t^2 overflows
    far_t = math_ops.where(far, t, 1.0)  # safe: log's derivative at 0 is inf
    root = math_ops.sqrt(near_t * near_t + 1.0)
    near = math_ops.log1p(near_t * (1.0 + near_t / (1.0 + root)))
    value = math_ops.where(far, math_ops.log(far_t) + _LN2, near)
    return math_ops.where(x < 0.0, -value, value)


@tf_op("Acosh")
def acosh(x, name=None):
    """log(x + sqrt(x^2 - 1)), for x >= 1 (NaN below, as TensorFlow), as
    log1p(u + sqrt(u) sqrt(u + 2)) with u = x - 1: exact near 1, and its derivative at 1 is
    inf where sqrt(u (u + 2)) would give 0 * inf; past 1e8, log(x) + ln 2."""
    x = as_tensor(x)
    far = x > _LOG_TAIL_FROM
    # safe: clear of sqrt's infinite derivative at u = 0, and of inf
    u = math_ops.where(far, 2.0, x) - 1.0
    far_x = math_ops.where(far, x, 1.0)  # safe: log's derivative at 0 is inf
    near = math_ops.log1p(u + math_ops.sqrt(u) * math_ops.sqrt(u + 2.0))
    return math_ops.where(far, math_ops.log(far_x) + _LN2, near)


@tf_op("Atanh")
def atanh(x, name=None):
    """log((1 + x) / (1 - x)) / 2, for |x| < 1."""
    x = as_tensor(x)
    return (math_ops.log1p(x) - math_ops.log1p(-x)) * 0.5


@tf_op("Reciprocal")
def reciprocal(x, name=None):
    x = as_tensor(x)
    return math_ops.divide(array_ops.ones_like(x), x)


@tf_op("SquaredDifference")
def squared_difference(x, y, name=None):
    """(x - y)^2, elementwise."""
    return math_ops.square(math_ops.subtract(x, y))


@tf_op("div_no_nan")
def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0."""
    x, y = as_tensors(x, y)
    zero = math_ops.equal(y, 0.0)
    safe = math_ops.where(zero, array_ops.ones_like(y), y)
    return math_ops.where(zero, array_ops.zeros_like(x * safe), x / safe)


@tf_op("Xlogy")
def xlogy(x, y, name=None):
    """x log(y), and 0 where x is 0 (also where y is 0)."""
    x, y = as_tensors(x, y)
    zero = math_ops.equal(x, 0.0)
    safe = math_ops.where(zero, array_ops.ones_like(y), y)
    return math_ops.where(zero, array_ops.zeros_like(x * safe), x * math_ops.log(safe))


def xdivy(x, y, name=None):
    """x / y, and 0 where x is 0."""
    x, y = as_tensors(x, y)
    zero = math_ops.equal(x, 0.0)
    safe = math_ops.where(zero, array_ops.ones_like(y), y)
    return math_ops.where(zero, array_ops.zeros_like(x * safe), x / safe)


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), finite for large |x|."""
    return -math_ops.softplus(-as_tensor(x))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None):
    """x / sqrt(max(sum(x^2, axis), epsilon))."""
    x = as_tensor(x)
    squares = reduce_sum(math_ops.square(x), axis=axis, keepdims=True)
    return x * math_ops.rsqrt(math_ops.maximum(squares, epsilon))


def logical_xor(x, y, name=None):
    x, y = as_tensors(x, y)
    return math_ops.logical_and(
        math_ops.logical_or(x, y), math_ops.logical_not(math_ops.logical_and(x, y))
    )


@tf_op("IsNan")
def is_nan(x, name=None):
    x = as_tensor(x)
    return math_ops.not_equal(x, x)


@tf_op("IsInf")
def is_inf(x, name=None):
    x = as_tensor(x)
    return math_ops.logical_and(math_ops.logical_not(math_ops.is_finite(x)), math_ops.equal(x, x))


@tf_op("Any")
def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    flags = array_ops.cast(as_tensor(input_tensor), "int32")
    return math_ops.greater(reduction_ops.reduce_max(flags, axis=axis, keepdims=keepdims), 0)


@tf_op("All")
def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    flags = array_ops.cast(as_tensor(input_tensor), "int32")
    return math_ops.greater(reduction_ops.reduce_min(flags, axis=axis, keepdims=keepdims), 0)


def count_nonzero(input, axis=None, keepdims=False, dtype="int64", name=None):
    nonzero = array_ops.cast(math_ops.not_equal(as_tensor(input), 0), dtype)
    return reduce_sum(nonzero, axis=axis, keepdims=keepdims)


def truediv(x, y, name=None):
    return math_ops.divide(x, y)


def scalar_mul(scalar, x, name=None):
    return math_ops.multiply(scalar, x)


def tensordot(a, b, axes, name=None):
    """The sum over the axes `axes` names of a's and b's products (an int N: a's last N
    with b's first N), as one matmul of the two reshaped to matrices."""
    a, b = as_tensor(a), as_tensor(b)
    a_axes, b_axes = _tensordot_axes(axes, a.ndim, b.ndim)
    a_free = [k for k in range(a.ndim) if k not in a_axes]
    b_free = [k for k in range(b.ndim) if k not in b_axes]
    for i, j in zip(a_axes, b_axes):
        dims.check_same(
            a.shape[i],
            b.shape[j],
            lambda i=i, j=j: (
                f"tensordot: axis {i} of a (size {a.shape[i]!r}) and axis {j} of "
                f"b (size {b.shape[j]!r}) are summed together and must have one size"
            ),
        )
    size = 1
    for k in a_axes:
        size *= a.shape[k]
    a_matrix = array_ops.reshape(array_ops.transpose(a, a_free + a_axes), (-1, size))
    b_matrix = array_ops.reshape(array_ops.transpose(b, b_axes + b_free), (size, -1))
    shape = [a.shape[k] for k in a_free] + [b.shape[k] for k in b_free]
    return array_ops.reshape(matmul(a_matrix, b_matrix), shape)


def cross(a, b, name=None):
    """The cross product of 3-vectors along the last axis (batched over the others)."""
    a, b = as_tensor(a), as_tensor(b)
    if a.shape[-1:] != (3,) or b.shape[-1:] != (3,):
        raise ValueError(
            f"cross takes vectors of 3 along the last axis, not {a.shape} and {b.shape}"
        )
    a0, a1, a2 = (a[..., k] for k in range(3))
    b0, b1, b2 = (b[..., k] for k in range(3))
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _tensordot_axes(axes, a_rank, b_rank):
    if isinstance(axes, int):
        if not 0 <= axes <= min(a_rank, b_rank):
            raise ValueError(f"tensordot: axes={axes} for tensors of ranks {a_rank} and {b_rank}")
        return list(range(a_rank - axes, a_rank)), list(range(axes))
    if len(axes) != 2:
        raise ValueError(f"tensordot: axes is an int or a pair of axis lists, not {axes!r}")
    a_axes, b_axes = ([int(k)] if isinstance(k, int) else [int(i) for i in k] for k in axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: {a_axes} and {b_axes} name different numbers of axes")
    return [k % a_rank for k in a_axes], [k % b_rank for k in b_axes]


def polyval(coeffs, x, name=None):
    """The polynomial with coefficients `coeffs` (a list of tensors, the highest power
    first) at `x`, by Horner's rule: ((c0 x + c1) x + c2) ...; 0 for no coefficients.

    >>> tt.math.polyval([2.0, 0.0, 1.0], tt.constant(3.0)).numpy()
    19.0
    """
    x = as_tensor(x)
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"tt.math.polyval: coeffs must be a list of tensors, not {coeffs!r}")
    if not coeffs:
        return array_ops.zeros_like(x)
    terms = [c if is_tensor_like(c) else convert_to_tensor(c, x.dtype) for c in coeffs]
    value = terms[0]
    for coefficient in terms[1:]:
        value = value * x + coefficient
    return value


def truncatediv(x, y, name=None):
    """x / y rounded toward zero, as TensorFlow's (C's integer division; floats: the
    quotient truncated)."""
    x, y = as_tensors(x, y)
    if x.dtype.is_integer:
        inexact = math_ops.not_equal(math_ops.floormod(x, y), 0)
        signs_differ = math_ops.not_equal(math_ops.less(x, 0), math_ops.less(y, 0))
        adjust = array_ops.cast(math_ops.logical_and(inexact, signs_differ), x.dtype)
        return math_ops.floordiv(x, y) + adjust
    quotient = x / y
    return math_ops.sign(quotient) * math_ops.floor(math_ops.abs(quotient))


def truncatemod(x, y, name=None):
    """The remainder of `truncatediv`: truncatediv(x, y) * y + truncatemod(x, y) is x, its
    sign x's, as TensorFlow's (C's `%` and fmod). Floats take |x| mod |y| with x's sign, so
    that x mod inf is x, as fmod's, where x - trunc(x / inf) * inf is NaN."""
    x, y = as_tensors(x, y)
    if x.dtype.is_integer:
        return x - truncatediv(x, y) * y
    remainder = math_ops.floormod(math_ops.abs(x), math_ops.abs(y))
    return math_ops.where(math_ops.less(x, 0), -remainder, remainder)


def transpose(a, perm=None, conjugate=False, name=None):
    """`a` with its axes in the order `perm` (reversed by default); with `conjugate`, complex
    values conjugated too, as TensorFlow's `tf.transpose`."""
    result = array_ops.transpose(a, perm)
    return math_ops.conj(result) if conjugate and result.dtype.is_complex else result


def saturate_cast(value, dtype, name=None):
    """`value` cast to `dtype`, values outside its range first clipped to its least and
    greatest (a complex value to a real dtype: its real part), as TensorFlow's: a float 300
    as uint8 is 255, not 44."""
    x = as_tensor(value)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype.is_complex and not dtype.is_complex:
        x = math_ops.real(x)
    if x.dtype.is_bool or dtype.is_bool or dtype.is_complex:
        return array_ops.cast(x, dtype)
    target = dtype.real_dtype
    low, high = max(x.dtype.min, target.min), min(x.dtype.max, target.max)
    if low > x.dtype.min or high < x.dtype.max:
        x = math_ops.clip_by_value(x, low, high)
    return array_ops.cast(x, dtype)


def rint(x, name=None):
    """The nearest integer, ties to even, as TensorFlow's (its `round` does the same)."""
    return math_ops.round(x)


def xlog1py(x, y, name=None):
    """x log(1 + y), and 0 where x is 0."""
    x, y = as_tensors(x, y)
    zero = math_ops.equal(x, 0.0)
    safe = math_ops.where(zero, array_ops.zeros_like(y), y)
    return math_ops.where(zero, array_ops.zeros_like(x * safe), x * math_ops.log1p(safe))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x^2)) over `axis`; of an integer tensor, the integer part, in its dtype, as
    TensorFlow's."""
    x = as_tensor(input_tensor)
    if x.dtype.is_integer:
        wide = array_ops.cast(x, "float64")
        return array_ops.cast(reduce_euclidean_norm(wide, axis, keepdims), x.dtype)
    return math_ops.sqrt(reduce_sum(x * x, axis, keepdims=keepdims))


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis`, as TensorFlow's: a prefix of log-add-exps, each
    step adding the running value `step` places back (log2(n) steps), so that no sum of
    exps underflows next to a large element; -inf before the first with `exclusive`."""
    x = as_tensor(x)
    axis = axis % x.shape.rank
    if reverse:
        x = layout_ops.reverse(x, [axis])
    length = x.shape[axis]
    running = _shifted_along(x, axis, 1) if exclusive else x
    step = 1
    while step < length:
        pair = stack([running, _shifted_along(running, axis, step)])
        running = nn_ops.reduce_logsumexp(pair, axis=0)
        step *= 2
    return layout_ops.reverse(running, [axis]) if reverse else running


def _shifted_along(x, axis, step):
    """x moved `step` places along `axis`, -inf filling the places it leaves."""
    before = (slice(None),) * axis
    filler = array_ops.zeros_like(x[before + (slice(None, step),)]) - math.inf
    return structure_ops.concat([filler, x[before + (slice(None, -step),)]], axis)


def angle(input, name=None):
    """The argument of each element: atan2(imag, real), in the real dtype; of a real
    tensor pi where it is negative, else 0 (-0 and NaN included), with no gradient, as
    TensorFlow's."""
    x = as_tensor(input)
    if x.dtype.is_complex:
        return math_ops.atan2(math_ops.imag(x), math_ops.real(x))
    pi, zero = as_tensors(x, math.pi, 0)[1:]
    return math_ops.where(x < 0, pi, zero)


def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from `start` to `stop`, both included (float32 for Python
    numbers): numpy's values (start + i * step, the last one `stop` itself), differentiable
    in `start` and `stop` as TensorFlow's is. Tensors `start` and `stop` broadcast against
    each other, and the values go along a new axis `axis` of the result.

    >>> tt.linspace(0.0, 1.0, 5).numpy()
    array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    start, stop = as_tensors(start, stop)
    if start.dtype.is_integer:
        start, stop = array_ops.cast(start, dtypes.float32), array_ops.cast(stop, dtypes.float32)
    shape = tuple(np.broadcast_shapes(start.shape, stop.shape))
    rank, count = len(shape), int(num)
    if not -rank - 1 <= axis <= rank:
        raise ValueError(
            f"tt.linspace: axis {axis} is out of range for a result of rank {rank + 1}"
        )
    axis = axis % (rank + 1)
    start, stop = (
        array_ops.expand_dims(end if end.shape == shape else broadcast_to(end, shape), axis)
        for end in (start, stop)
    )
    steps = array_ops.reshape(
        array_ops.cast(array_ops.range_(count), start.dtype),
        (1,) * axis + (count,) + (1,) * (rank - axis),
    )
    values = steps * ((stop - start) / max(count - 1, 1)) + start
    if count < 2:
        return values
    head = values[(slice(None),) * axis + (slice(0, count - 1),)]
    return structure_ops.concat([head, stop], axis)
