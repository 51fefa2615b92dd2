"""Elementwise math: arithmetic, transcendental functions, comparisons and `where`.

Each primitive's gradient rule sits beside its declaration. Binary rules sum their result
back to each input's shape with `unbroadcast`.
"""

from tracer import dtypes
from tracer.ops import array_ops, shapes
from tracer.ops.convert import as_tensor, as_tensors
from tracer.ops.core import apply, apply_binary, apply_unary, op_function
from tracer.ops.reduction_ops import unbroadcast
from tracer.ops.registry import OUT, primitive


def _shape(node, position):
    return node.inputs[position].shape


# --- gradient rules ---------------------------------------------------------------------


def _conj(x):
    """The complex conjugate; real tensors pass through untouched (no node)."""
    return apply(CONJ, (x,), {}) if x.dtype.is_complex else x


def _conj_grad(node, g):
    return (_conj(g),)


def _real_grad(node, g):
    return (complex(g, 0),)


def _imag_grad(node, g):
    return (complex(0, g),)


def _complex_grad(node, g):
    return real(g), imag(g)


def _add_grad(node, g):
    return unbroadcast(g, _shape(node, 0)), unbroadcast(g, _shape(node, 1))


def _sub_grad(node, g):
    return unbroadcast(g, _shape(node, 0)), unbroadcast(negative(g), _shape(node, 1))


def _mul_grad(node, g, x, y):
    return unbroadcast(g * _conj(y), _shape(node, 0)), unbroadcast(g * _conj(x), _shape(node, 1))


def _div_grad(node, g, x, y):
    return unbroadcast(g / _conj(y), _shape(node, 0)), unbroadcast(
        g * _conj(-x / y / y), _shape(node, 1)
    )


def _mul_no_nan_grad(node, g, x, y):
    dx = mul_no_nan(g, _conj(y))
    dy = mul_no_nan(_conj(x), g)
    return unbroadcast(dx, _shape(node, 0)), unbroadcast(dy, _shape(node, 1))


def _pow_grad(node, g, x, y, out):
    """TensorFlow's rule: d/dy uses log(x) only where x > 0, so x <= 0 gives 0, not NaN."""
    dx = g * _conj(y * pow(x, y - 1))
    if x.dtype.is_complex:
        nonzero = not_equal(x, 0)
        safe_log = where(nonzero, log(where(nonzero, x, 1)), 0)
    else:
        safe_log = where(x > 0, log(where(x > 0, x, 1)), 0)
    dy = g * _conj(out * safe_log)
    return unbroadcast(dx, _shape(node, 0)), unbroadcast(dy, _shape(node, 1))


def _maximum_grad(node, g, x, y):
    """Ties send the whole gradient to `x`, as TensorFlow does."""
    return _select_grads(node, g, x >= y)


def _minimum_grad(node, g, x, y):
    return _select_grads(node, g, x <= y)


def _select_grads(node, g, x_wins):
    zero = array_ops.zeros((), g.dtype)
    return (
        unbroadcast(where(x_wins, g, zero), _shape(node, 0)),
        unbroadcast(where(x_wins, zero, g), _shape(node, 1)),
    )


def _mod_grad(node, g, x, y):
    return unbroadcast(g, _shape(node, 0)), unbroadcast(
        negative(g) * floordiv(x, y), _shape(node, 1)
    )


def _select_grad(node, g, condition):
    zero = array_ops.zeros((), g.dtype)
    return (
        None,
        unbroadcast(where(condition, g, zero), _shape(node, 1)),
        unbroadcast(where(condition, zero, g), _shape(node, 2)),
    )


def _neg_grad(node, g):
    return (negative(g),)


def _exp_grad(node, g, out):
    return (g * _conj(out),)


def _log_grad(node, g, x):
    return (g / _conj(x),)


def _log1p_grad(node, g, x):
    return (g / _conj(1 + x),)


def _sqrt_grad(node, g, out):
    """Zero wherever the incoming gradient is zero, so `where(x > 0, sqrt(x), 0)` has no NaN."""
    return (mul_no_nan(_conj(0.5 / out), g),)


def _sin_grad(node, g, x):
    return (g * _conj(cos(x)),)


def _cos_grad(node, g, x):
    return (negative(g * _conj(sin(x))),)


def _tanh_grad(node, g, out):
    return (g * _conj(1 - out * out),)


def _sigmoid_grad(node, g, out):
    return (g * _conj(out * (1 - out)),)


def _softplus_grad(node, g, x):
    return (g * sigmoid(x),)


def _relu_grad(node, g, out):
    """Zero at 0, as TensorFlow's ReluGrad; it keeps the output, not the input."""
    return (where(out > 0, g, array_ops.zeros((), g.dtype)),)


def _rsqrt_grad(node, g, out):
    return (g * _conj(-0.5 * out * out * out),)


def _tan_grad(node, g, out):
    return (g * _conj(1 + out * out),)


def _erf_grad(node, g, x):
    return (g * (1.1283791670955126 * exp(negative(x * x))),)  # 2 / sqrt(pi)


def _abs_grad(node, g, x):
    """sign(x) for reals; for complex x, TensorFlow's g * x / |x| (0 at x = 0)."""
    if x.dtype.is_complex:
        magnitude = abs(x)
        unit = where(magnitude > 0, x / complex(where(magnitude > 0, magnitude, 1), 0), 0)
        return (complex(g, 0) * unit,)
    return (g * sign(x),)


def _sign_grad(node, g):
    return (array_ops.zeros_like(g),)


# --- primitives -------------------------------------------------------------------------


def _unary(name, grad, saves=(), infer=shapes.unary_float):
    return primitive(name, infer, grad, saves, elementwise=True)


def _binary(name, grad, saves=(0, 1), infer=shapes.binary):
    return primitive(name, infer, grad, saves, elementwise=True)


ADD = _binary("add", _add_grad, saves=())
SUB = _binary("sub", _sub_grad, saves=())
MUL = _binary("mul", _mul_grad)
DIV = _binary("div", _div_grad)
MUL_NO_NAN = _binary("mul_no_nan", _mul_no_nan_grad)
POW = _binary("pow", _pow_grad, saves=(0, 1, OUT))
MAXIMUM = _binary("maximum", _maximum_grad)
MINIMUM = _binary("minimum", _minimum_grad)
FLOORDIV = _binary("floordiv", None, saves=())
MOD = _binary("mod", _mod_grad)
COMPARISONS = {
    name: _binary(name, None, saves=(), infer=shapes.comparison)
    for name in ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal")
}
LOGICAL = {
    name: primitive(name, shapes.logical, elementwise=True)
    for name in ("logical_and", "logical_or", "logical_not")
}
SELECT = primitive("select", shapes.select, _select_grad, saves=(0,), elementwise=True)

NEG = _unary("neg", _neg_grad, infer=shapes.unary)
ABS = _unary("abs", _abs_grad, saves=(0,), infer=shapes.magnitude)
CONJ = _unary("conj", _conj_grad, infer=shapes.unary)
REAL = _unary("real", _real_grad, infer=shapes.magnitude)
IMAG = _unary("imag", _imag_grad, infer=shapes.magnitude)
COMPLEX = _binary("complex", _complex_grad, saves=(), infer=shapes.make_complex)
SIGN = _unary("sign", _sign_grad, infer=shapes.unary)
EXP = _unary("exp", _exp_grad, saves=(OUT,))
LOG = _unary("log", _log_grad, saves=(0,))
LOG1P = _unary("log1p", _log1p_grad, saves=(0,))
SQRT = _unary("sqrt", _sqrt_grad, saves=(OUT,))
RSQRT = _unary("rsqrt", _rsqrt_grad, saves=(OUT,))
TAN = _unary("tan", _tan_grad, saves=(OUT,))
ERF = _unary("erf", _erf_grad, saves=(0,))
SIN = _unary("sin", _sin_grad, saves=(0,))
COS = _unary("cos", _cos_grad, saves=(0,))
TANH = _unary("tanh", _tanh_grad, saves=(OUT,))
SIGMOID = _unary("sigmoid", _sigmoid_grad, saves=(OUT,))
SOFTPLUS = _unary("softplus", _softplus_grad, saves=(0,))
RELU = _unary("relu", _relu_grad, saves=(OUT,), infer=shapes.unary)


# --- public functions -------------------------------------------------------------------


def _binary_op(op):
    def function(x, y, name=None):
        return apply_binary(op, x, y)

    function.__name__ = op.name
    return op_function(op, function, 2)  # the same function; in C where the C op path is built


def _unary_op(op):
    def function(x, name=None):
        return apply_unary(op, x)

    function.__name__ = op.name
    return op_function(op, function, 1)


add = _binary_op(ADD)
subtract = _binary_op(SUB)
multiply = _binary_op(MUL)
mul_no_nan = _binary_op(MUL_NO_NAN)
maximum = _binary_op(MAXIMUM)
minimum = _binary_op(MINIMUM)
floordiv = _binary_op(FLOORDIV)
floormod = mod = _binary_op(MOD)
greater = _binary_op(COMPARISONS["greater"])
greater_equal = _binary_op(COMPARISONS["greater_equal"])
less = _binary_op(COMPARISONS["less"])
less_equal = _binary_op(COMPARISONS["less_equal"])
equal = _binary_op(COMPARISONS["equal"])
not_equal = _binary_op(COMPARISONS["not_equal"])
logical_and = _binary_op(LOGICAL["logical_and"])
logical_or = _binary_op(LOGICAL["logical_or"])
logical_not = _unary_op(LOGICAL["logical_not"])

negative = _unary_op(NEG)
abs = _unary_op(ABS)
sign = _unary_op(SIGN)
exp = _unary_op(EXP)
log = _unary_op(LOG)
log1p = _unary_op(LOG1P)
sqrt = _unary_op(SQRT)
rsqrt = _unary_op(RSQRT)
conj = _unary_op(CONJ)
real = _unary_op(REAL)
imag = _unary_op(IMAG)
tan = _unary_op(TAN)
erf = _unary_op(ERF)
sin = _unary_op(SIN)
cos = _unary_op(COS)
tanh = _unary_op(TANH)
sigmoid = _unary_op(SIGMOID)
softplus = _unary_op(SOFTPLUS)
relu = _unary_op(RELU)


def complex(real, imag, name=None):
    """real + i * imag: float32 parts give complex64, float64 parts complex128."""
    return apply(COMPLEX, as_tensors(real, imag), {})


def divide(x, y, name=None):
    """x / y; integer tensors are divided as float64, as TensorFlow's truediv does."""
    x, y = as_tensors(x, y)
    if x.dtype.is_integer and x.dtype is y.dtype:
        x, y = array_ops.cast(x, dtypes.float64), array_ops.cast(y, dtypes.float64)
    return apply(DIV, (x, y), {})


def pow(x, y, name=None):
    return apply(POW, as_tensors(x, y), {})


def add_n(inputs, name=None):
    """The elementwise sum of a list of same-shaped tensors."""
    tensors = as_tensors(*inputs)
    if not tensors:
        raise ValueError("add_n: needs at least one tensor")
    total = tensors[0]
    for t in tensors[1:]:
        total = add(total, t)
    return total


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """`t` limited to [min, max]; the gradient passes where min <= t <= max."""
    t = as_tensor(t)
    return minimum(maximum(t, clip_value_min), clip_value_max)


def is_finite(x, name=None):
    x = as_tensor(x)
    return logical_and(equal(x, x), less(abs(x), float("inf")))


def square(x, name=None):
    x = as_tensor(x)
    return x * x


def where(condition, x=None, y=None, name=None):
    """Elements of `x` where `condition` holds, else of `y`; all three broadcast together."""
    if x is None or y is None:
        raise ValueError("where: give both x and y (the one-argument form is not supported)")
    condition = as_tensor(condition)
    x, y = as_tensors(x, y)
    return apply(SELECT, (condition, x, y), {})
