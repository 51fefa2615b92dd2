"""tf.math functions that are compositions of tracer's primitives: hyperbolic functions and
their inverses, no-NaN divisions, `xlogy`, reductions of booleans, `tensordot` and
`linalg.cross`.

Written with tracer's ops, each works eagerly, compiled and in the exported C, and
differentiates to any order through its parts. Where TensorFlow defines a value at a
point the plain formula misses (`divide_no_nan` of 0 by 0, `xlogy(0, 0)`), `where` picks
it, with a safe operand on the unused side so that no NaN reaches the gradient.
"""

from tracer.ops import array_ops, math_ops, reduction_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor
from tracer.ops.linalg_ops import matmul
from tracer.ops.op_names import tf_op
from tracer.ops.structure_ops import stack


@tf_op("Sinh")
def sinh(x, name=None):
    """(exp(x) - exp(-x)) / 2."""
    x = as_tensor(x)
    return (math_ops.exp(x) - math_ops.exp(-x)) * 0.5


@tf_op("Cosh")
def cosh(x, name=None):
    """(exp(x) + exp(-x)) / 2."""
    x = as_tensor(x)
    return (math_ops.exp(x) + math_ops.exp(-x)) * 0.5


@tf_op("Asinh")
def asinh(x, name=None):
    """sign(x) log(|x| + sqrt(x^2 + 1)): odd, and exact for large negative x."""
    x = as_tensor(x)
    magnitude = math_ops.abs(x)
    return math_ops.sign(x) * math_ops.log(magnitude + math_ops.sqrt(x * x + 1.0))


@tf_op("Acosh")
def acosh(x, name=None):
    """log(x + sqrt(x^2 - 1)), for x >= 1 (NaN below, as TensorFlow)."""
    x = as_tensor(x)
    return math_ops.log(x + math_ops.sqrt(x * x - 1.0))


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
    x, y = as_tensor(x), as_tensor(y)
    zero = math_ops.equal(y, 0.0)
    safe = math_ops.where(zero, array_ops.ones_like(y), y)
    return math_ops.where(zero, array_ops.zeros_like(x * safe), x / safe)


@tf_op("Xlogy")
def xlogy(x, y, name=None):
    """x log(y), and 0 where x is 0 (also where y is 0)."""
    x, y = as_tensor(x), as_tensor(y)
    zero = math_ops.equal(x, 0.0)
    safe = math_ops.where(zero, array_ops.ones_like(y), y)
    return math_ops.where(zero, array_ops.zeros_like(x * safe), x * math_ops.log(safe))


def xdivy(x, y, name=None):
    """x / y, and 0 where x is 0."""
    x, y = as_tensor(x), as_tensor(y)
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
    x, y = as_tensor(x), as_tensor(y)
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
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"tensordot: axis {i} of a (size {a.shape[i]}) and axis {j} of b (size "
                f"{b.shape[j]}) are summed together and must have one size"
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
