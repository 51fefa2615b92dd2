"""`tt.experimental.numpy` (`tnp`): TensorFlow's NumPy API, numpy's names on tracer's ops.

    import tracer.experimental.numpy as tnp
    tnp.sum(tnp.ones([2, 3]) * 2)       # a tt.Tensor of 12.0, float64

Functions take what numpy takes (tensors, numpy arrays, Python values) and give tracer
tensors (`tnp.ndarray` is `tt.Tensor`) with numpy's dtypes, as TensorFlow's: a Python int is
int64, a Python float float64 (float32 after `experimental_enable_numpy_behavior(
prefer_float32=True)`), and operands of two dtypes promote as numpy promotes them. Each
function is one of tracer's ops, so it differentiates and compiles as they do.
`experimental_enable_numpy_behavior()` gives every tensor numpy's operators, indexing and
methods (tracer/experimental/numpy/behavior.py). docs/tf_numpy.md lists what is here.
"""

import numpy as np

from tracer.experimental.numpy import random
from tracer.experimental.numpy.behavior import (
    asarray,
    clip,
    default_float,
    experimental_enable_numpy_behavior,
    numpy_dtype,
    promoted,
)
from tracer.ops import (
    array_ops,
    broadcast_ops,
    index_ops,
    linalg_ops,
    mask_composites,
    math_composites,
    math_ops,
    reduction_ops,
    scan_ops,
    structure_ops,
)
from tracer.ops.convert import static_int
from tracer.tensor import Tensor

ndarray = Tensor  # as TensorFlow's: tnp's arrays are tensors
newaxis = None

# numpy's scalar types name the dtypes, as in TensorFlow's tnp
bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
pi, e, inf, nan = np.pi, np.e, np.inf, np.nan


def array(val, dtype=None, copy=True, ndmin=0):
    """A tensor of `val` (numpy's dtypes); at least `ndmin` axes."""
    result = asarray(val, dtype)
    if copy and result is val:
        result = array_ops.identity(result)
    while result.ndim < ndmin:
        result = array_ops.expand_dims(result, 0)
    return result


def copy(a):
    return array_ops.identity(asarray(a))


def ones(shape, dtype=float):
    return array_ops.ones(shape, numpy_dtype(dtype))


def zeros(shape, dtype=float):
    return array_ops.zeros(shape, numpy_dtype(dtype))


def full(shape, fill_value, dtype=None):
    value = asarray(fill_value, dtype)
    return broadcast_ops.broadcast_to(value, shape)


def ones_like(a, dtype=None):
    a = asarray(a)
    return array_ops.ones_like(a, a.dtype if dtype is None else numpy_dtype(dtype))


def zeros_like(a, dtype=None):
    a = asarray(a)
    return array_ops.zeros_like(a, a.dtype if dtype is None else numpy_dtype(dtype))


def eye(N, M=None, k=0, dtype=float):
    """numpy's eye: ones on diagonal k (above the main one where k > 0)."""
    if k == 0:
        return array_ops.eye(N, M, dtype=numpy_dtype(dtype))
    sizes = [static_int(size) for size in (N, N if M is None else M, k)]
    if None in sizes:
        raise ValueError(
            f"tnp.eye: with k != 0, N, M and k must be known when the function is traced, "
            f"not N={N!r}, M={M!r}, k={k!r}"
        )
    return asarray(np.eye(*sizes), dtype)


def arange(start, stop=None, step=1, dtype=None):
    """numpy's arange: int64 for ints, float64 (or float32, preferred) for floats."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = np.result_type(*[asarray(v).dtype.as_numpy_dtype for v in (start, stop, step)])
    return array_ops.range_(start, stop, step, dtype=numpy_dtype(dtype))


def linspace(start, stop, num=50, endpoint=True, dtype=float):
    """numpy's linspace; without the end point, the first `num` of `num + 1` values."""
    dtype = numpy_dtype(dtype)
    if endpoint:
        return math_composites.linspace(asarray(start, dtype), asarray(stop, dtype), num)
    return math_composites.linspace(asarray(start, dtype), asarray(stop, dtype), int(num) + 1)[:-1]


def _to_float(x):
    """`x` as a tensor of a float (or complex) dtype: an integer or bool one as the default
    float, as numpy's transcendental functions make it."""
    x = asarray(x)
    if x.dtype.is_floating or x.dtype.is_complex:
        return x
    return array_ops.cast(x, default_float())


def _unary(op, name, floating):
    def function(x):
        return op(_to_float(x) if floating else asarray(x))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"numpy's `{name}`: tracer's `{op.__name__}` on a tensor of `x`."
    return function


def _binary(op, name):
    def function(x1, x2):
        return op(*promoted(x1, x2))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"numpy's `{name}`: tracer's `{op.__name__}`, its dtypes promoted as numpy's."
    )
    return function


sqrt = _unary(math_ops.sqrt, "sqrt", True)
exp = _unary(math_ops.exp, "exp", True)
log = _unary(math_ops.log, "log", True)
log1p = _unary(math_ops.log1p, "log1p", True)
sin = _unary(math_ops.sin, "sin", True)
cos = _unary(math_ops.cos, "cos", True)
tan = _unary(math_ops.tan, "tan", True)
tanh = _unary(math_ops.tanh, "tanh", True)
abs = absolute = _unary(math_ops.abs, "abs", False)
negative = _unary(math_ops.negative, "negative", False)
square = _unary(math_ops.square, "square", False)
sign = _unary(math_ops.sign, "sign", False)
floor = _unary(math_ops.floor, "floor", True)

add = _binary(math_ops.add, "add")
subtract = _binary(math_ops.subtract, "subtract")
multiply = _binary(math_ops.multiply, "multiply")
divide = true_divide = _binary(math_ops.divide, "divide")
power = _binary(math_ops.pow, "power")
maximum = _binary(math_ops.maximum, "maximum")
minimum = _binary(math_ops.minimum, "minimum")
matmul = _binary(linalg_ops.matmul, "matmul")
equal = _binary(math_ops.equal, "equal")
not_equal = _binary(math_ops.not_equal, "not_equal")
less = _binary(math_ops.less, "less")
less_equal = _binary(math_ops.less_equal, "less_equal")
greater = _binary(math_ops.greater, "greater")
greater_equal = _binary(math_ops.greater_equal, "greater_equal")


def _summed(a):
    """`a` as numpy sums it: bools and integers narrower than 64 bits as int64."""
    a = asarray(a)
    if a.dtype.is_bool or a.dtype.is_integer and np.dtype(a.dtype.as_numpy_dtype).itemsize < 8:
        return array_ops.cast(a, np.int64)
    return a


def sum(a, axis=None, dtype=None, keepdims=False):
    a = _summed(a) if dtype is None else asarray(a, dtype)
    return broadcast_ops.reduce_sum(a, axis, keepdims)


def prod(a, axis=None, dtype=None, keepdims=False):
    a = _summed(a) if dtype is None else asarray(a, dtype)
    return scan_ops.reduce_prod(a, axis, keepdims)


def mean(a, axis=None, dtype=None, keepdims=False):
    a = _to_float(a) if dtype is None else asarray(a, dtype)
    return reduction_ops.reduce_mean(a, axis, keepdims)


def amax(a, axis=None, keepdims=False):
    return reduction_ops.reduce_max(asarray(a), axis, keepdims)


def amin(a, axis=None, keepdims=False):
    return reduction_ops.reduce_min(asarray(a), axis, keepdims)


max, min = amax, amin


def all(a, axis=None, keepdims=False):
    return math_composites.reduce_all(asarray(a, bool), axis, keepdims)


def any(a, axis=None, keepdims=False):
    return math_composites.reduce_any(asarray(a, bool), axis, keepdims)


def argmax(a, axis=None):
    a = asarray(a)
    return index_ops.argmax(a if axis is not None else array_ops.reshape(a, [-1]), axis or 0)


def argmin(a, axis=None):
    a = asarray(a)
    return index_ops.argmin(a if axis is not None else array_ops.reshape(a, [-1]), axis or 0)


def dot(a, b):
    """numpy's dot of vectors and matrices (their product; of a vector, the sum of products)."""
    a, b = promoted(a, b)
    if a.ndim == 1 and b.ndim == 1:
        return broadcast_ops.reduce_sum(a * b)
    return linalg_ops.matmul(a, b)


def reshape(a, newshape):
    return array_ops.reshape(asarray(a), newshape)


def ravel(a):
    return array_ops.reshape(asarray(a), [-1])


def transpose(a, axes=None):
    return array_ops.transpose(asarray(a), axes)


def expand_dims(a, axis):
    return array_ops.expand_dims(asarray(a), axis)


def squeeze(a, axis=None):
    return array_ops.squeeze(asarray(a), axis)


def broadcast_to(array, shape):
    return broadcast_ops.broadcast_to(asarray(array), shape)


def concatenate(arys, axis=0):
    return structure_ops.concat(list(promoted(*arys)), axis)


def stack(arrays, axis=0):
    return structure_ops.stack(list(promoted(*arrays)), axis)


def where(condition, x=None, y=None):
    if x is None and y is None:
        raise NotImplementedError("tnp.where: give x and y (tracer has no nonzero positions)")
    x, y = promoted(x, y)
    return mask_composites.where(asarray(condition, bool), x, y)


def isscalar(num):
    return asarray(num).ndim == 0


__all__ = [
    "abs", "absolute", "add", "all", "amax", "amin", "any", "arange", "argmax", "argmin",
    "array", "asarray", "bool_", "broadcast_to", "clip", "complex64", "complex128",
    "concatenate", "copy", "cos", "divide", "dot", "e", "equal", "exp",
    "expand_dims", "experimental_enable_numpy_behavior", "eye", "float16", "float32",
    "float64", "floor", "full", "greater", "greater_equal", "inf", "int8", "int16", "int32",
    "int64", "isscalar", "less", "less_equal", "linspace", "log", "log1p", "matmul", "max",
    "maximum", "mean", "min", "minimum", "multiply", "nan", "ndarray", "negative", "newaxis",
    "not_equal", "ones", "ones_like", "pi", "power", "prod", "random", "ravel", "reshape",
    "sign", "sin", "sqrt", "square", "squeeze", "stack", "subtract", "sum", "tan", "tanh",
    "transpose", "true_divide", "uint8", "uint16", "uint32", "uint64", "where", "zeros",
    "zeros_like",
]  # fmt: skip
