"""Elementwise math: arithmetic, transcendental functions, comparisons and `where`.

Each primitive is declared once, with everything about it beside its public function: the
gradient rule (binary rules sum their result back to each input's shape with
`unbroadcast`), simplifications, the numpy kernel, and the C expression with the prologue
helpers it calls where numpy's semantics differ from C's (NaN in maximum, floor division and
modulo, integer division by zero), so compiled code never hits undefined behaviour and
agrees with the interpreter. All are elementwise, so their batching rule is the default one.
"""

import math
import operator
import re

import numpy as np

from codegen import array_math, forms
from codegen.ctypes import MATH_SUFFIX, compute
from runtime import ufunc_parts
from runtime.kernels import (
    FLOATING_KERNELS,
    INFIX_OPERATORS,
    LARGE_FLOATING_FROM,
    LARGE_FLOATING_KERNELS,
    quiet,
)
from tracer import dtypes
from tracer.errors import as_tf
from tracer.ir import Literal, Node, match
from tracer.ops import array_ops, seed_ops, shapes, window_ops
from tracer.ops.broadcast_ops import broadcast_to, unbroadcast
from tracer.ops.convert import as_tensor, as_tensors
from tracer.ops.core import apply, apply_binary, apply_unary, op_function
from tracer.ops.op_names import tf_op
from tracer.ops.registry import OPS, OUT, primitive
from tracer.ops.tangent_rules import DIAGONAL, LINEAR, PRODUCT, tangent_or_zeros


def _unary(name, grad=None, saves=(), infer=shapes.unary_float, **record):
    """An elementwise op of one input: its Jacobian is diagonal (`tangent_rules.DIAGONAL`)."""
    record.setdefault("jvp", DIAGONAL if grad is not None else None)
    return primitive(name, infer, grad=grad, saves=saves, fusion="elementwise", **record)


def _binary(name, grad=None, saves=(0, 1), infer=shapes.binary, **record):
    return primitive(name, infer, grad=grad, saves=saves, fusion="elementwise", **record)


def _unary_function(op):
    def function(x, name=None):
        return apply_unary(op, x)

    function.__name__ = op.name
    return op_function(op, function, 1)  # the same function; in C where the C op path is built


def _binary_function(op):
    def function(x, y, name=None):
        return apply_binary(op, x, y)

    function.__name__ = op.name
    return op_function(op, function, 2)


def _shape(node, position):
    return node.inputs[position].shape


def _infix(symbol):
    """The C form `(x <symbol> y)`."""
    return forms.Expression(lambda t, out, x, y: f"({x} {symbol} {y})")


# numpy's floating and complex scalar types: a set lookup, where asking a scalar for its
# dtype costs 3x as much
_INEXACT_SCALARS = frozenset({np.float16, np.float32, np.float64, np.complex64, np.complex128})


# elements from which float arithmetic runs in the loop installed with tracer, on the threads
ARITHMETIC_ON_THREADS_FROM = LARGE_FLOATING_FROM


_OPERATORS = {**INFIX_OPERATORS, "/": operator.truediv}


def _arithmetic(symbol, ufunc, on_strings=None):
    """A kernel that uses Python's operator `symbol` on floating and complex values (for +,
    - and *, the op's FLOATING_KERNELS entry, which code knowing the dtype calls directly) and
    the ufunc on integers and bools.

    On numpy scalars (what 0-d results are) the operator skips the ufunc machinery; on
    arrays it is the same ufunc. Integer scalars keep the ufunc, which wraps
    on overflow quietly (TensorFlow's behaviour) where scalar arithmetic would warn.
    `on_strings` is the kernel of tt.string tensors, for an op that takes them. From
    ARITHMETIC_ON_THREADS_FROM elements, float32 and float64 +, -, * and / whose operands are
    whole, a bias, a column or one element (a scalar first too) run on the threads, in the
    loop installed with tracer (codegen/array_math.py's `arithmetic`: numpy's loop is one
    thread; the same bits).
    """

    python_operator = _OPERATORS[symbol]

    def run(x, y):
        if type(x) in _INEXACT_SCALARS:
            if type(y) is np.ndarray and y.size >= ARITHMETIC_ON_THREADS_FROM:
                found = array_math.arithmetic(symbol, x, y)
                if found is not None:
                    return found
            return python_operator(x, y)
        if x.dtype.kind in "fc":
            if max(x.size, y.size) >= ARITHMETIC_ON_THREADS_FROM:
                found = array_math.arithmetic(symbol, x, y)
                if found is not None:
                    return found
            return python_operator(x, y)
        if on_strings is not None and x.dtype.kind == "O":
            return on_strings(x, y)
        return ufunc(x, y)

    return run


def _large_floating(symbol, ufunc):
    """The LARGE_FLOATING_KERNELS entry of `symbol`: x op y of floating values, float32 and
    float64 in the loop installed with tracer where it takes their shapes (on the threads),
    else numpy's ufunc; into `out` where given (an operand of the result's shape)."""

    def run(x, y, out=None):
        found = array_math.arithmetic(symbol, x, y, out)
        return ufunc(x, y, out=out) if found is None else found

    run.writes_into_an_operand = True
    return run


LARGE_FLOATING_KERNELS.update(
    add=_large_floating("+", np.add),
    sub=_large_floating("-", np.subtract),
    mul=_large_floating("*", np.multiply),
)


# --- complex parts ----------------------------------------------------------------------


def conj_if_complex(x):
    """The complex conjugate; real tensors pass through untouched (no node)."""
    return apply(CONJ, (x,), {}) if x.dtype.is_complex else x


CONJ = _unary(
    "conj",
    lambda node, g: (conj_if_complex(g),),
    infer=shapes.unary,
    kernel=np.conjugate,
    c=forms.Expression(lambda t, out, x: f"conj{MATH_SUFFIX[compute(t)]}({x})"),
)
REAL = _unary(
    "real",
    lambda node, g: (complex(g, 0) if node.inputs[0].dtype.is_complex else g,),
    jvp=LINEAR,
    infer=shapes.magnitude,
    kernel=np.real,
    c=forms.Expression(lambda t, out, x: f"creal{MATH_SUFFIX[compute(t)]}({x})"),
)
IMAG = _unary(
    "imag",
    lambda node, g: (complex(0, g) if node.inputs[0].dtype.is_complex else None,),
    jvp=LINEAR,
    infer=shapes.magnitude,
    kernel=np.imag,
    c=forms.Expression(lambda t, out, x: f"cimag{MATH_SUFFIX[compute(t)]}({x})"),
)


def _make_complex(re, im):
    """The parts as they are (re + 1j * im would make 1j * inf's real part NaN, and -0.0 0.0)."""
    dtype = np.complex64 if np.result_type(re) == np.float32 else np.complex128
    re, im = np.broadcast_arrays(np.asarray(re), np.asarray(im))
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out


COMPLEX = _binary(
    "complex",
    lambda node, g: (
        unbroadcast(real(g), _shape(node, 0)),
        unbroadcast(imag(g), _shape(node, 1)),
    ),
    jvp=LINEAR,
    saves=(),
    infer=shapes.make_complex,
    kernel=_make_complex,
    c=forms.Expression(
        lambda t, out, x, y: f"__builtin_complex(({compute(t)})({x}), ({compute(t)})({y}))"
    ),
)

conj = _unary_function(CONJ)
real = _unary_function(REAL)
imag = _unary_function(IMAG)


def complex(real, imag, name=None):
    """real + i * imag: float32 parts give complex64, float64 parts complex128."""
    return apply(COMPLEX, as_tensors(real, imag), {})


# --- add, sub, mul, div -----------------------------------------------------------------


def _zero_signs(zero):
    """The sign bits of a literal's zeros (of their real and imaginary parts, for complex)."""
    zero = np.asarray(zero)
    if np.iscomplexobj(zero):
        return np.concatenate([np.signbit(zero.real).ravel(), np.signbit(zero.imag).ravel()])
    return np.signbit(zero)


def _add_simplify(node):
    """x + (-0.0) => x. (x + 0 is x except for x = -0.0, so only a literal -0.0 keeps every
    x's sign.)"""
    x, y = node.inputs
    zero = match.literal(y)
    if zero is not None and np.all(zero == 0) and np.all(_zero_signs(zero)):
        return match.same(node, x)
    return None


def _concatenate_strings(x, y):
    """`+` of tt.string tensors: each pair of elements joined (an array also when 0-d, where
    numpy's add of objects gives the bytes themselves)."""
    return np.asarray(np.add(x, y), dtype=object)


ADD = _binary(
    "add",
    lambda node, g: (unbroadcast(g, _shape(node, 0)), unbroadcast(g, _shape(node, 1))),
    strings=True,
    jvp=LINEAR,
    saves=(),
    simplify=(_add_simplify, seed_ops.seeds_out_of_sum),
    kernel=_arithmetic("+", np.add, on_strings=_concatenate_strings),
    infix="+",
    c=_infix("+"),
)


def _sub_simplify(node):
    """x - (+0) => x, also for x = -0.0."""
    x, y = node.inputs
    zero = match.literal(y)
    if zero is not None and np.all(zero == 0) and not np.any(_zero_signs(zero)):
        return match.same(node, x)
    return None


SUB = _binary(
    "sub",
    lambda node, g: (unbroadcast(g, _shape(node, 0)), unbroadcast(negative(g), _shape(node, 1))),
    jvp=LINEAR,
    saves=(),
    simplify=(_sub_simplify, seed_ops.seeds_out_of_sum),
    kernel=_arithmetic("-", np.subtract),
    infix="-",
    c=_infix("-"),
)


def _mul_grad(node, g, x, y):
    """x or y is None where the tape did not keep it (`saved_for`): the other input is not
    tracked, and gets no cotangent."""
    if node.dtype.is_complex:  # (both inputs are, then: mul takes one dtype)
        x, y = (None if v is None else conj_if_complex(v) for v in (x, y))
    x_node, y_node = node.inputs
    return (
        None if y is None else unbroadcast(g * y, x_node.shape),
        None if x is None else unbroadcast(g * x, y_node.shape),
    )


def _mul_simplify(node):
    """x * 1 => x and 1 * x => x (bit for bit, NaN and -0.0 included)."""
    x, y = node.inputs
    if match.is_constant(y, 1):
        return match.same(node, x)
    if match.is_constant(x, 1):
        return match.same(node, y)
    return None


MUL = _binary(
    "mul",
    _mul_grad,
    saved_for=((1,), (0,)),  # x's cotangent reads y, y's reads x
    jvp=PRODUCT,
    simplify=(_mul_simplify, seed_ops.seeds_out_of_mul),
    kernel=_arithmetic("*", np.multiply),
    infix="*",
    c=_infix("*"),
)


def _div_grad(node, g, x, y):
    """x is None where the tape did not keep it (`saved_for`): y is not tracked."""
    return (
        unbroadcast(g / conj_if_complex(y), _shape(node, 0)),
        None if x is None else unbroadcast(g * conj_if_complex(-x / y / y), _shape(node, 1)),
    )


def _div_jvp(out, tx, ty, y):
    """(tx - out ty) / y."""
    if ty is None:
        return tx / y
    numerator = negative(out * ty) if tx is None else tx - out * ty
    return numerator / y


def _div_simplify(node):
    """x / 1 => x."""
    x, y = node.inputs
    return match.same(node, x) if match.is_constant(y, 1) else None


# integer division as numpy does it: 0 for a zero divisor, and no overflow for MIN / -1
_INTEGER_DIV = forms.Helper(
    "div",
    integer="static inline $T tr_div_$tag($T a, $T b) { return b == 0 ? 0 : (b == -1 ? -a : a / b); }",
)

DIV = _binary(
    "div",
    _div_grad,
    saved_for=((1,), (0, 1)),  # y's cotangent reads x; both read y
    jvp=lambda node, tangents, inputs, out: _div_jvp(out, *tangents, inputs[1]),
    simplify=_div_simplify,
    kernel=quiet(_arithmetic("/", np.true_divide)),
    c=forms.Expression(
        lambda t, out, x, y: _INTEGER_DIV.call(t, x, y) if t.is_integer else f"({x} / {y})",
        helpers=(_INTEGER_DIV,),
    ),
)

add = _binary_function(ADD)
subtract = _binary_function(SUB)
multiply = _binary_function(MUL)


def divide(x, y, name=None):
    """x / y; integer tensors are divided as floats, as TensorFlow's truediv does: those of
    8 and 16 bits as float32, wider ones as float64."""
    x, y = as_tensors(x, y)
    if x.dtype.is_integer and x.dtype is y.dtype:
        quotient = dtypes.float32 if x.dtype.itemsize <= 2 else dtypes.float64
        x, y = array_ops.cast(x, quotient), array_ops.cast(y, quotient)
    return apply(DIV, (x, y), {})


def add_n(inputs, name=None):
    """The elementwise sum of a list of same-shaped tensors."""
    tensors = as_tensors(*inputs)
    if not tensors:
        raise ValueError("add_n: needs at least one tensor")
    total = tensors[0]
    for t in tensors[1:]:
        total = add(total, t)
    return total


@tf_op("Square")
def square(x, name=None):
    x = as_tensor(x)
    return x * x


# --- mul_no_nan -------------------------------------------------------------------------


def _mul_no_nan_grad(node, g, x, y):
    dx = mul_no_nan(g, conj_if_complex(y))
    dy = mul_no_nan(conj_if_complex(x), g)
    return unbroadcast(dx, _shape(node, 0)), unbroadcast(dy, _shape(node, 1))


@quiet
def _mul_no_nan_kernel(x, y):
    """x * y, but 0 wherever y is 0, even where x is inf or NaN."""
    return np.where(y == 0, np.zeros((), np.result_type(x)), x * y)


MUL_NO_NAN = _binary(
    "mul_no_nan",
    _mul_no_nan_grad,
    jvp=PRODUCT,
    kernel=_mul_no_nan_kernel,
    c=forms.Expression(lambda t, out, x, y: f"(({y}) == 0 ? ({compute(t)})0 : ({x}) * ({y}))"),
)
mul_no_nan = _binary_function(MUL_NO_NAN)


def multiply_no_nan(x, y, name=None):
    """x * y, but 0 wherever y is 0, even where x is inf or NaN, as `tf.math.multiply_no_nan`;
    the gradients are TensorFlow's: g * y for x and x * g for y, each 0 where its second factor
    is.

    >>> float(tt.math.multiply_no_nan(float("inf"), 0.0))
    0.0
    """
    return mul_no_nan(x, y)


# --- pow --------------------------------------------------------------------------------


def _pow_grad(node, g, x, y, out):
    """TensorFlow's rule: d/dy uses log(x) only where x > 0, so x <= 0 gives 0, not NaN. A
    value the tape did not keep (`saved_for`) is None: out where y is a Python number, y where
    x is one (2.0 ** t); that number's cotangent is None."""
    dx = None if y is None else unbroadcast(g * conj_if_complex(y * pow(x, y - 1)), _shape(node, 0))
    if out is None:
        return dx, None
    dy = g * conj_if_complex(out * _safe_log(x))
    return dx, unbroadcast(dy, _shape(node, 1))


def _pow_jvp(out, tx, ty, x, y):
    """y x^(y-1) tx + x^y log(x) ty, with the gradient's safe log."""
    terms = []
    if tx is not None:
        terms.append(tx * (y * pow(x, y - 1)))
    if ty is not None:
        terms.append(ty * (out * _safe_log(x)))
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def _safe_log(x):
    """log(x) where x > 0 (x != 0 for complex), else 0: TensorFlow's in the gradient of pow."""
    positive = not_equal(x, 0) if x.dtype.is_complex else x > 0
    return where(positive, log(where(positive, x, 1)), 0)


def _pow_simplify(node):
    """x ** 2 => x * x (numpy and libm give x*x exactly); x ** 1 => x; x ** 0 => 1 for real
    and integer x (1 for every x, NaN and 0 included: a second derivative of x ** 2 has
    it)."""
    x, y = node.inputs
    if match.is_constant(y, 2) and match.literal(y).ndim == 0:
        if x.shape != node.shape:
            return None
        return match.derived(node, "mul", (x, x), node.shape)
    if match.is_constant(y, 1):
        return match.same(node, x)
    if match.is_constant(y, 0) and not node.dtype.is_complex:
        one = Literal(np.ones((), node.dtype.as_numpy_dtype))
        one = Node("const", (), {"value": one}, (), node.dtype, node.location)
        return match.derived(node, "broadcast_to", (one,), node.shape, shape=node.shape)
    return None


@quiet
def _pow_kernel(x, y):
    """numpy's power; complex values as exp(y log x), which is C's cpow and TensorFlow's
    (0 ** 0 is NaN there, where numpy's power gives 1)."""
    kind = np.asarray(x).dtype.kind
    if kind in "iu" and np.any(np.asarray(y) < 0):
        raise ValueError("pow: integers to negative integer powers are not allowed")
    if kind == "c":
        with np.errstate(all="ignore"):
            return np.exp(y * np.log(x))
    return np.power(x, y)


_POW = forms.Helper(
    "pow",
    float="static inline $T tr_pow_$tag($T x, $T y) { return pow$f(x, y); }",
    integer="""static inline $T tr_pow_$tag($T x, $T y) {
    if (y < 0) return 0;
    $T result = 1;
    while (y) { if (y & 1) result *= x; x *= x; y >>= 1; }
    return result;
}""",
    complex="static inline $T tr_pow_$tag($T x, $T y) { return cpow$f(x, y); }",
    requires=(forms.vector_declaration("pow", arity=2),),
)

POW = _binary(
    "pow",
    _pow_grad,
    jvp=lambda node, tangents, inputs, out: _pow_jvp(out, *tangents, *inputs),
    saves=(0, 1, OUT),
    saved_for=((0, 1), (0,), (1,)),  # both cotangents read x; x's reads y, y's the result
    simplify=_pow_simplify,
    kernel=_pow_kernel,
    c=forms.Expression(
        forms.helper_call(_POW),
        helpers=(_POW,),
        costly=True,
        guard=forms.Guard(
            lambda t, out, x, y: f"({y}) < 0" if t.is_integer else None,
            ValueError,
            "integers to negative integer powers are not allowed",
        ),
    ),
)


def pow(x, y, name=None):
    return apply(POW, as_tensors(x, y), {})


# --- maximum, minimum, where ------------------------------------------------------------


def _select_grads(node, g, x_wins):
    zero = array_ops.zeros((), g.dtype)
    return (
        unbroadcast(where(x_wins, g, zero), _shape(node, 0)),
        unbroadcast(where(x_wins, zero, g), _shape(node, 1)),
    )


def _winner_tangent(x_wins, tangents, inputs):
    """The tangent of whichever input a maximum or minimum takes (ties: x, as the gradient)."""
    tx, ty = (tangent_or_zeros(t, x) for t, x in zip(tangents, inputs))
    return where(x_wins, tx, ty)


# NaN wins, as in numpy
MAXIMUM_HELPER = forms.Helper(
    "maximum",
    float="static inline $T tr_maximum_$tag($T a, $T b) { return (a >= b || a != a) ? a : b; }",
    integer="static inline $T tr_maximum_$tag($T a, $T b) { return a >= b ? a : b; }",
    boolean="static inline $T tr_maximum_$tag($T a, $T b) { return a || b; }",  # (reduce_max)
)
MINIMUM_HELPER = forms.Helper(
    "minimum",
    float="static inline $T tr_minimum_$tag($T a, $T b) { return (a <= b || a != a) ? a : b; }",
    integer="static inline $T tr_minimum_$tag($T a, $T b) { return a <= b ? a : b; }",
    boolean="static inline $T tr_minimum_$tag($T a, $T b) { return a && b; }",  # (reduce_min)
)

MAXIMUM = _binary(
    "maximum",
    # ties send the whole gradient to `x`, as TensorFlow does
    lambda node, g, x, y: _select_grads(node, g, x >= y),
    jvp=lambda node, tangents, inputs, out: _winner_tangent(
        inputs[0] >= inputs[1], tangents, inputs
    ),
    infer=shapes.ordered(shapes.binary),
    kernel=np.maximum,
    c=forms.Expression(forms.helper_call(MAXIMUM_HELPER), helpers=(MAXIMUM_HELPER,)),
)
MINIMUM = _binary(
    "minimum",
    lambda node, g, x, y: _select_grads(node, g, x <= y),
    jvp=lambda node, tangents, inputs, out: _winner_tangent(
        inputs[0] <= inputs[1], tangents, inputs
    ),
    infer=shapes.ordered(shapes.binary),
    kernel=np.minimum,
    c=forms.Expression(forms.helper_call(MINIMUM_HELPER), helpers=(MINIMUM_HELPER,)),
)
maximum = _binary_function(MAXIMUM)
minimum = _binary_function(MINIMUM)


def _select_grad(node, g, condition):
    zero = array_ops.zeros((), g.dtype)
    return (
        None,
        unbroadcast(where(condition, g, zero), _shape(node, 1)),
        unbroadcast(where(condition, zero, g), _shape(node, 2)),
    )


# the integer type of each width: a select picks an element's bits through it
_BITS = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
SELECT_BY_BITS_FROM = 2048  # elements; below, np.where's one call costs less than four
SELECT_IN_ONE_LOOP_FROM = 16384  # elements; below, the masks cost less than a call through cffi


def _select_kernel(condition, x, y):
    """np.where(condition, x, y), bit for bit, by masks where that is faster: numpy's where
    branches on each element, which an unpredictable condition (relu's gradient, a dropout
    mask) makes far costlier than ANDing each element's bits with a mask of the condition
    (benchmarks/RESULTS.md). Large float arrays take one loop installed with tracer instead
    (codegen/array_math.py's `select`: on the threads, one pass for the masks' four)."""
    condition, x, y = np.asarray(condition), np.asarray(x), np.asarray(y)
    bits = _BITS.get(x.dtype.itemsize)
    if bits is None or condition.dtype != bool or x.dtype != y.dtype or x.dtype.kind not in "fiu":
        return np.where(condition, x, y)
    shape = np.broadcast_shapes(condition.shape, x.shape, y.shape)
    size = math.prod(shape)
    if size < SELECT_BY_BITS_FROM:
        return np.where(condition, x, y)
    if size >= SELECT_IN_ONE_LOOP_FROM:  # float32 and float64 of one shape
        in_one_loop = array_math.select(condition, x, y)
        if in_one_loop is not None:
            return in_one_loop
    keep = np.negative(np.broadcast_to(condition, shape), dtype=bits)  # all ones where true
    result = np.bitwise_and(keep, x.view(bits))
    other = y.view(bits)
    if other.ndim or other:  # (a 0-d y of zero bits, the usual 0.0, adds nothing)
        np.bitwise_and(np.invert(keep, out=keep), other, out=keep)
        np.bitwise_or(result, keep, out=result)
    return result.view(x.dtype)


SELECT = primitive(
    "select",
    shapes.select,
    strings=True,
    grad=_select_grad,
    jvp=LINEAR,
    saves=(0,),
    fusion="elementwise",
    simplify=window_ops.mask_the_maxima,
    kernel=_select_kernel,
    c=forms.Expression(lambda t, out, c, x, y: f"({c} ? {x} : {y})", operand=1),
)


def where(condition, x=None, y=None, name=None):
    """Elements of `x` where `condition` holds, else of `y`; all three broadcast together."""
    if x is None or y is None:
        raise ValueError("tt.where: give both x and y, or neither")
    condition = as_tensor(condition)
    x, y = as_tensors(x, y)
    return apply(SELECT, (condition, x, y), {})


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """`t` limited to [min, max]; the gradient passes where min <= t <= max."""
    t = as_tensor(t)
    return minimum(maximum(t, clip_value_min), clip_value_max)


# --- floordiv, mod ----------------------------------------------------------------------

# floats: TensorFlow's floor(a / b) (inf // 3 is inf, 1 // 0.1 is 10), not Python's
_FLOORDIV = forms.Helper(
    "floordiv",
    float="""static inline $T tr_floordiv_$tag($T a, $T b) { return floor$f(a / b); }""",
    integer="""static inline $T tr_floordiv_$tag($T a, $T b) {
    if (b == 0) return 0;
    if (b == -1) return -a;
    $T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}""",
)
_MOD = forms.Helper(
    "mod",
    float="""static inline $T tr_mod_$tag($T a, $T b) {
    if (b == 0) return fmod$f(a, b);
    $T mod = fmod$f(a, b);
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; } else mod = copysign$f(0, b);
    return mod;
}""",
    integer="""static inline $T tr_mod_$tag($T a, $T b) {
    if (b == 0 || b == -1) return 0;
    $T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}""",
)


def _mod_jvp(out, tx, ty, x, y):
    """tx - floor(x / y) ty."""
    if ty is None:
        return broadcast_to(tx, out.shape)
    term = ty * floordiv(x, y)
    return negative(term) if tx is None else tx - term


def _no_integer_zero(name, y):
    """ZeroDivisionError (InvalidArgumentError too, as TensorFlow raises) where an integer
    divisor `y` holds a zero: numpy would answer 0 there, a silently wrong number."""
    y = np.asarray(y)
    if y.dtype.kind in "iu" and not y.all():
        raise as_tf(ZeroDivisionError)(f"{name}: Integer division by zero")


def _floordiv_kernel(x, y):
    """TensorFlow's floor division: floor(x / y) for floats (numpy's and Python's take the
    remainder first: inf // 3 is NaN there, 1 // 0.1 is 9), integer floor division else."""
    if np.asarray(x).dtype.kind == "f":
        return np.floor(np.divide(x, y))
    _no_integer_zero("floordiv", y)
    return np.floor_divide(x, y)


def _mod_kernel(x, y):
    _no_integer_zero("mod", y)
    return np.mod(x, y)


# an integer literal the loop emitter renders for a constant divisor (codegen/ctypes.py)
_NONZERO_INTEGER_LITERAL = re.compile(r"\(\(\w[\w ]*\)-?[1-9]\d*U?LL\)")

# the compiled form of the kernels' check: a guard on each integer divisor but a nonzero
# constant one (the guard keeps its loop on one thread, in order)
_ZERO_DIVISOR = forms.Guard(
    lambda t, out, x, y: (
        f"({y}) == 0"
        if t.is_integer and not _NONZERO_INTEGER_LITERAL.fullmatch(y.strip())
        else None
    ),
    ZeroDivisionError,
    "Integer division by zero",
)

FLOORDIV = _binary(
    "floordiv",
    saves=(),
    kernel=quiet(_floordiv_kernel),
    c=forms.Expression(forms.helper_call(_FLOORDIV), helpers=(_FLOORDIV,), guard=_ZERO_DIVISOR),
)
MOD = _binary(
    "mod",
    lambda node, g, x, y: (
        unbroadcast(g, _shape(node, 0)),
        unbroadcast(negative(g) * floordiv(x, y), _shape(node, 1)),
    ),
    jvp=lambda node, tangents, inputs, out: _mod_jvp(out, *tangents, *inputs),
    kernel=quiet(_mod_kernel),
    c=forms.Expression(forms.helper_call(_MOD), helpers=(_MOD,), guard=_ZERO_DIVISOR),
)
floordiv = _binary_function(FLOORDIV)
floormod = mod = _binary_function(MOD)


# --- comparisons and logic (no gradients) ------------------------------------------------


def _comparison(name, ufunc, symbol, strings=False, infer=shapes.comparison):
    return _binary(name, saves=(), infer=infer, kernel=ufunc, c=_infix(symbol), strings=strings)


_ORDERED = shapes.ordered(shapes.comparison)
GREATER = _comparison("greater", np.greater, ">", infer=_ORDERED)
GREATER_EQUAL = _comparison("greater_equal", np.greater_equal, ">=", infer=_ORDERED)
LESS = _comparison("less", np.less, "<", infer=_ORDERED)
LESS_EQUAL = _comparison("less_equal", np.less_equal, "<=", infer=_ORDERED)
EQUAL = _comparison("equal", np.equal, "==", strings=True)
NOT_EQUAL = _comparison("not_equal", np.not_equal, "!=", strings=True)
greater = _binary_function(GREATER)
greater_equal = _binary_function(GREATER_EQUAL)
less = _binary_function(LESS)
less_equal = _binary_function(LESS_EQUAL)
equal = _binary_function(EQUAL)
not_equal = _binary_function(NOT_EQUAL)

LOGICAL_AND = _binary(
    "logical_and", saves=(), infer=shapes.logical, kernel=np.logical_and, c=_infix("&&")
)
LOGICAL_OR = _binary(
    "logical_or", saves=(), infer=shapes.logical, kernel=np.logical_or, c=_infix("||")
)
LOGICAL_NOT = _unary(
    "logical_not",
    infer=shapes.logical,
    kernel=np.logical_not,
    c=forms.Expression(lambda t, out, x: f"(!{x})"),
)
logical_and = _binary_function(LOGICAL_AND)
logical_or = _binary_function(LOGICAL_OR)
logical_not = _unary_function(LOGICAL_NOT)


def is_finite(x, name=None):
    x = as_tensor(x)
    return logical_and(equal(x, x), less(abs(x), float("inf")))


# --- neg, abs, sign ---------------------------------------------------------------------


def _neg_simplify(node):
    """-(-x) => x."""
    (x,) = node.inputs
    return x.inputs[0] if x.op == "neg" else None


def _negative_kernel(x):
    """-x: from ARITHMETIC_ON_THREADS_FROM elements of float32 or float64, on the threads
    (codegen/array_math.py's `negative`: the same bits as numpy's one-thread loop)."""
    if type(x) is np.ndarray and x.size >= ARITHMETIC_ON_THREADS_FROM:
        found = array_math.negative(x)
        if found is not None:
            return found
    return np.negative(x)


NEG = _unary(
    "neg",
    lambda node, g: (negative(g),),
    infer=shapes.unary,
    simplify=(_neg_simplify, seed_ops.seeds_out_of_neg),
    kernel=_negative_kernel,
    c=forms.Expression(lambda t, out, x: f"(-{x})"),
)


def _abs_grad(node, g, x):
    """sign(x) for reals; for complex x, TensorFlow's g * x / |x| (0 at x = 0)."""
    if x.dtype.is_complex:
        magnitude = abs(x)
        unit = where(magnitude > 0, x / complex(where(magnitude > 0, magnitude, 1), 0), 0)
        return (complex(g, 0) * unit,)
    return (g * sign(x),)


def _abs_jvp(node, tangents, inputs, out):
    """sign(x) t; for complex x, Re(conj(x / |x|) t)."""
    (t,), (x,) = tangents, inputs
    if x.dtype.is_complex:
        (unit,) = _abs_grad(node, array_ops.ones(out.shape, out.dtype), x)
        return real(conj(unit) * t)
    return t * sign(x)


def _abs_c(t, out, x):
    if t.is_complex:
        return f"cabs{MATH_SUFFIX[compute(t)]}({x})"
    if t.is_integer:
        return f"(({x}) < 0 ? -({x}) : ({x}))"
    return f"fabs{MATH_SUFFIX[compute(t)]}({x})"


ABS = _unary(
    "abs",
    _abs_grad,
    jvp=_abs_jvp,
    saves=(0,),
    infer=shapes.magnitude,
    kernel=np.abs,
    c=forms.Expression(_abs_c),
)

# 0 at 0 and NaN at NaN for floats; z / |z| for complex z, as numpy
_SIGN = forms.Helper(
    "sign",
    float="static inline $T tr_sign_$tag($T x) { return x > 0 ? ($T)1 : (x < 0 ? ($T)-1 : x == 0 ? ($T)0 : x); }",
    complex="static inline $T tr_sign_$tag($T z) { return z == 0 ? z : z / cabs$f(z); }",
)


def _sign_c(t, out, x):
    if t.is_integer:
        return f"(({compute(t)})((({x}) > 0) - (({x}) < 0)))"
    return _SIGN.call(t, x)


SIGN = _unary(
    "sign",
    lambda node, g: (array_ops.zeros_like(g),),
    infer=shapes.unary,
    kernel=np.sign,
    c=forms.Expression(_sign_c, helpers=(_SIGN,)),
)

negative = _unary_function(NEG)
abs = _unary_function(ABS)
sign = _unary_function(SIGN)


# --- floor, ceil, round: no gradient flows through them (TensorFlow's is None) ----------


def _real_floating(attrs, x):
    if not x.dtype.is_floating:
        raise TypeError(f"expects a real floating tensor, got {x.dtype.name}")
    return x.shape, x.dtype


def _real_or_integer(attrs, x):
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"expects a real floating or integer tensor, got {x.dtype.name}")
    return x.shape, x.dtype


def _rounding(name, kernel, libm_name, infer):
    def render(t, out, x):
        return f"{libm_name}{MATH_SUFFIX[compute(t)]}({x})" if t.is_floating else f"({x})"

    return _unary(name, infer=infer, kernel=kernel, c=forms.Expression(render))


FLOOR = _rounding("floor", np.floor, "floor", _real_floating)
CEIL = _rounding("ceil", np.ceil, "ceil", _real_floating)
# half to even, as TensorFlow's (banker's rounding); C's nearbyint in the default mode; an
# integer tensor is its own rounding
ROUND = _rounding("round", np.round, "nearbyint", _real_or_integer)
floor = _unary_function(FLOOR)
ceil = _unary_function(CEIL)
round = _unary_function(ROUND)


def _installed_loop(name, ufunc, small=None):
    """The eager kernel of the transcendental op `name`: over a float32 or float64 array of
    LARGE_FLOATING_FROM elements or more, the loop installed with tracer
    (codegen/array_math.py: the op's C form with glibc's vector maths, on tracer's threads,
    a compiled module's values for the op); over other arrays, or where no such loop can be
    had, numpy's `ufunc` (runtime/ufunc_parts.py: in parts on the threads for a large
    array; `small(x)` where given for others)."""
    numpys = ufunc_parts.on_threads(ufunc, small)

    def run(x):
        if type(x) is np.ndarray and x.size >= LARGE_FLOATING_FROM and x.dtype in _VECTOR_DTYPES:
            found = array_math.apply(name, x)
            if found is not None:
                return found
        return numpys(x)

    run.__name__ = name
    return run


_VECTOR_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# --- exponentials and logarithms --------------------------------------------------------

# glibc's vector exp leaves its fast path, for a scalar call per lane, for the whole vector
# where an argument's result is subnormal or zero (below -87 in float, -708 in double): a
# causal mask's -1e9 in a softmax made each such exp ten times slower. There the helper takes
# exp(x + 64) * exp(-64) (x + 64 is exact there; the product rounds once more), with the
# argument kept in the fast range, where exp gives 0 anyway. (`sizeof` picks the bound.)
_EXP = forms.Helper(
    "exp",
    float="static inline $T tr_exp_$tag($T x) {"
    " const $T low = sizeof($T) == 4 ? ($T)-87 : ($T)-708;"
    " const $T shift = x < low ? ($T)64 : 0;"
    " const $T scale = x < low ? ($T)1.6038108905486378e-28 : 1;"
    " $T arg = x + shift; arg = arg < low ? low : arg;"
    " return exp$f(arg) * scale; }",
    complex="static inline $T tr_exp_$tag($T z) { return cexp$f(z); }",
    requires=(forms.vector_declaration("exp"),),
)

EXP = _unary(
    "exp",
    lambda node, g, out: (g * conj_if_complex(out),),
    saves=(OUT,),
    kernel=_installed_loop("exp", np.exp, quiet(np.exp)),
    c=forms.Expression(forms.helper_call(_EXP), helpers=(_EXP,), costly=True),
)
LOG = _unary(
    "log",
    lambda node, g, x: (g / conj_if_complex(x),),
    saves=(0,),
    kernel=_installed_loop("log", np.log, quiet(np.log)),
    c=forms.libm("log", vectorized=True),
)

_LOG1P = forms.Helper(
    "log1p",
    float="static inline $T tr_log1p_$tag($T x) { return log1p$f(x); }",
    complex="static inline $T tr_log1p_$tag($T z) { return clog$f(1 + z); }",
    requires=(forms.vector_declaration("log1p"),),
)

LOG1P = _unary(
    "log1p",
    lambda node, g, x: (g / conj_if_complex(1 + x),),
    saves=(0,),
    kernel=quiet(np.log1p),
    c=forms.Expression(forms.helper_call(_LOG1P), helpers=(_LOG1P,), costly=True),
)


def _sqrt_grad(node, g, out):
    """Zero wherever the incoming gradient is zero, so `where(x > 0, sqrt(x), 0)` has no NaN."""
    return (mul_no_nan(conj_if_complex(0.5 / out), g),)


SQRT = _unary(
    "sqrt", _sqrt_grad, saves=(OUT,), kernel=quiet(np.sqrt), c=forms.libm("sqrt", costly=False)
)


@quiet
def _rsqrt_kernel(x):
    return (1 / np.sqrt(x)).astype(np.result_type(x), copy=False)


_RSQRT = forms.Helper(
    "rsqrt",
    float="static inline $T tr_rsqrt_$tag($T x) { return ($T)1 / sqrt$f(x); }",
    complex="static inline $T tr_rsqrt_$tag($T z) { return 1 / csqrt$f(z); }",
)


def _rsqrt_grad(node, g, out):
    """Zero wherever the incoming gradient is zero, as TensorFlow's RsqrtGrad (so that
    `minimum(rsqrt(s), c)` at s = 0 has a gradient, not NaN)."""
    return (mul_no_nan(conj_if_complex(-0.5 * out * out * out), g),)


RSQRT = _unary(
    "rsqrt",
    _rsqrt_grad,
    saves=(OUT,),
    kernel=_rsqrt_kernel,
    c=forms.Expression(forms.helper_call(_RSQRT), helpers=(_RSQRT,)),
)

_EXPM1 = forms.Helper(
    "expm1",
    float="static inline $T tr_expm1_$tag($T x) { return expm1$f(x); }",
    complex="static inline $T tr_expm1_$tag($T z) { return cexp$f(z) - 1; }",
    requires=(forms.vector_declaration("expm1"),),
)

EXPM1 = _unary(
    "expm1",
    lambda node, g, out: (g * conj_if_complex(out + 1),),
    saves=(OUT,),
    kernel=quiet(np.expm1),
    c=forms.Expression(forms.helper_call(_EXPM1), helpers=(_EXPM1,), costly=True),
)

exp = _unary_function(EXP)
expm1 = _unary_function(EXPM1)
log = _unary_function(LOG)
log1p = _unary_function(LOG1P)
sqrt = _unary_function(SQRT)
rsqrt = _unary_function(RSQRT)


# --- trigonometric and hyperbolic -------------------------------------------------------

SIN = _unary(
    "sin",
    lambda node, g, x: (g * conj_if_complex(cos(x)),),
    saves=(0,),
    kernel=_installed_loop("sin", np.sin),
    c=forms.libm("sin", vectorized=True),
)
COS = _unary(
    "cos",
    lambda node, g, x: (negative(g * conj_if_complex(sin(x))),),
    saves=(0,),
    kernel=_installed_loop("cos", np.cos),
    c=forms.libm("cos", vectorized=True),
)
TAN = _unary(
    "tan",
    lambda node, g, out: (g * conj_if_complex(1 + out * out),),
    saves=(OUT,),
    kernel=quiet(np.tan),
    c=forms.libm("tan", vectorized=True),
)
TANH = _unary(
    "tanh",
    lambda node, g, out: (_tanh_cotangent(out, g),),
    saves=(OUT,),
    kernel=_installed_loop("tanh", np.tanh),
    c=forms.libm("tanh", vectorized=True),
)

# below LARGE_FLOATING_FROM elements, the ufunc itself (no Python frame), as the C op path
# and straight-line programs call FLOATING_KERNELS; from it, the kernels above (the loops
# installed with tracer, `_installed_loop`). exp's and log's kernels ignore numpy's
# floating-point errors (exp(1000), log(0)), as both callers do around every step already.
FLOATING_KERNELS.update(sin=np.sin, cos=np.cos, tanh=np.tanh, exp=np.exp, log=np.log)

sin = _unary_function(SIN)
cos = _unary_function(COS)
tan = _unary_function(TAN)
tanh = _unary_function(TANH)

# the inverse functions: d asin = 1 / sqrt(1 - x^2), d acos = -1 / sqrt(1 - x^2),
# d atan = 1 / (1 + x^2), as TensorFlow's gradients (NaN outside asin's and acos's domain)
ASIN = _unary(
    "asin",
    lambda node, g, x: (g * conj_if_complex(rsqrt(1 - x * x)),),
    saves=(0,),
    kernel=quiet(np.arcsin),
    c=forms.libm("asin", vectorized=True),
)
ACOS = _unary(
    "acos",
    lambda node, g, x: (negative(g * conj_if_complex(rsqrt(1 - x * x))),),
    saves=(0,),
    kernel=quiet(np.arccos),
    c=forms.libm("acos", vectorized=True),
)
ATAN = _unary(
    "atan",
    lambda node, g, x: (g / conj_if_complex(1 + x * x),),
    saves=(0,),
    kernel=np.arctan,
    c=forms.libm("atan", vectorized=True),
)
asin = _unary_function(ASIN)
acos = _unary_function(ACOS)
atan = _unary_function(ATAN)


def _atan2_grad(node, g, y, x):
    """d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)."""
    scale = g / (x * x + y * y)
    return unbroadcast(scale * x, _shape(node, 0)), unbroadcast(
        negative(scale * y), _shape(node, 1)
    )


def _atan2_jvp(out, ty, tx, y, x):
    """(x ty - y tx) / (x^2 + y^2)."""
    terms = ([] if ty is None else [x * ty]) + ([] if tx is None else [negative(y * tx)])
    numerator = terms[0] if len(terms) == 1 else terms[0] + terms[1]
    return broadcast_to(numerator / (x * x + y * y), out.shape)


ATAN2 = _binary(
    "atan2",
    _atan2_grad,
    jvp=lambda node, tangents, inputs, out: _atan2_jvp(out, *tangents, *inputs),
    kernel=np.arctan2,
    c=forms.Expression(
        lambda t, out, y, x: f"atan2{MATH_SUFFIX[compute(t)]}({y}, {x})", costly=True
    ),
)
atan2 = _binary_function(ATAN2)


# --- erf, erfc ---------------------------------------------------------------------------

# elements from which erf and erfc run over the array in C; below, math's on each element
# costs less than the call
ERF_OVER_ARRAYS_FROM = 64


def _special_kernel(name, of_one):
    """The eager kernel of libm's `name` (numpy has neither erf nor erfc): C's
    (codegen/array_math.py, the compiled backend's function) over an array of float32 or
    float64 (float16 computed in float32), else `of_one` (math's) per element."""
    per_element = np.frompyfunc(of_one, 1, 1)

    def run(x):
        x = np.asarray(x)
        if x.size >= ERF_OVER_ARRAYS_FROM and x.dtype.name in ("float16", "float32", "float64"):
            wide = x.astype(np.float32) if x.dtype == np.float16 else x
            result = array_math.apply(name, wide)
            if result is not None:
                return result.astype(x.dtype, copy=False)
        return np.asarray(per_element(x), dtype=np.result_type(x))

    run.__name__ = f"_{name}_kernel"
    return run


_erf_kernel = _special_kernel("erf", math.erf)
_erfc_kernel = _special_kernel("erfc", math.erfc)
_TWO_OVER_ROOT_PI = 1.1283791670955126  # 2 / sqrt(pi)

ERF = _unary(
    "erf",
    lambda node, g, x: (g * (_TWO_OVER_ROOT_PI * exp(negative(x * x))),),
    saves=(0,),
    kernel=_erf_kernel,
    c=forms.libm("erf", vectorized=True),
)
# 1 - erf(x), computed by libm without the subtraction: accurate where erf(x) rounds to 1
# (erfc(10) is 2.1e-45, 1 - erf(10) is 0), as GELU's far negative side needs
ERFC = _unary(
    "erfc",
    lambda node, g, x: (g * (-_TWO_OVER_ROOT_PI * exp(negative(x * x))),),
    saves=(0,),
    infer=_real_floating,
    kernel=_erfc_kernel,
    c=forms.libm("erfc", vectorized=True),
)
erf = _unary_function(ERF)
erfc = _unary_function(ERFC)


# --- activations ------------------------------------------------------------------------


@quiet
def _sigmoid_kernel(x):
    if x.dtype.kind == "c":
        return 1 / (1 + np.exp(-x))
    # 1 / (1 + e) where x >= 0 and e / (1 + e) below, e = exp(-|x|) (which never
    # overflows): exp(min(x, 0)) is 1 and e on those sides, so one division gives both,
    # with no selection (numpy's masked division cost more than the rest together)
    return np.exp(np.minimum(x, 0)) / (1 + np.exp(-np.abs(x)))


_SIGMOID = forms.Helper(
    "sigmoid",
    float="static inline $T tr_sigmoid_$tag($T x) { $T e = tr_exp_$tag(-fabs$f(x)); "
    "return x >= 0 ? ($T)1 / (1 + e) : e / (1 + e); }",
    complex="static inline $T tr_sigmoid_$tag($T z) { return 1 / (1 + cexp$f(-z)); }",
    requires=(_EXP,),
)

SIGMOID = _unary(
    "sigmoid",
    lambda node, g, out: (_sigmoid_cotangent(out, g),),
    saves=(OUT,),
    kernel=_sigmoid_kernel,
    c=forms.Expression(forms.helper_call(_SIGMOID), helpers=(_SIGMOID,), costly=True),
)


@quiet
def _softplus_kernel(x):
    return (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).astype(x.dtype, copy=False)


_SOFTPLUS = forms.Helper(
    "softplus",
    float="static inline $T tr_softplus_$tag($T x) "
    "{ return tr_maximum_$tag(x, 0) + log1p$f(tr_exp_$tag(-fabs$f(x))); }",
    requires=(MAXIMUM_HELPER, _EXP, forms.vector_declaration("log1p")),
)

SOFTPLUS = _unary(
    "softplus",
    lambda node, g, x: (g * sigmoid(x),),
    saves=(0,),
    kernel=_softplus_kernel,
    c=forms.Expression(forms.helper_call(_SOFTPLUS), helpers=(_SOFTPLUS,), costly=True),
)


def _relu_grad(node, g, out):
    """Zero at 0, as TensorFlow's ReluGrad; it keeps the output, not the input. One op
    (relu_grad) for real floating values."""
    if out.dtype.is_floating and out.dtype == g.dtype:
        return (apply(RELU_GRAD, (out, g), {}),)
    return (where(out > 0, g, array_ops.zeros((), g.dtype)),)


# elements from which relu runs in the kernel installed with tracer: below, numpy's maximum
# costs less than the call through cffi
RELU_INSTALLED_FROM = 1 << 15


def _relu_kernel(x):
    """numpy's maximum(x, 0); from RELU_INSTALLED_FROM float elements, the same selection in
    the kernel installed with tracer (one vector loop, on the threads for 2^16 and more)."""
    if x.size >= RELU_INSTALLED_FROM:
        found = array_math.relu(x)
        if found is not None:
            return found
    return np.maximum(x, np.zeros((), x.dtype))


# NaN passes through and -0 becomes +0, as numpy's maximum(x, 0) gives them
_RELU = forms.Helper(
    "relu",
    float="static inline $T tr_relu_$tag($T x) { return (x > 0 || x != x) ? x : ($T)0; }",
    integer="static inline $T tr_relu_$tag($T x) { return x > 0 ? x : 0; }",
)

RELU = _unary(
    "relu",
    _relu_grad,
    saves=(OUT,),
    infer=shapes.unary,
    kernel=_relu_kernel,
    c=forms.Expression(forms.helper_call(_RELU), helpers=(_RELU,)),
)

sigmoid = _unary_function(SIGMOID)


# --- sigmoid's and tanh's gradients, each one op ---------------------------------------
# g * (y * (1 - y)) and g * (1 - y * y) of the output y, as TensorFlow's SigmoidGrad and
# TanhGrad and PyTorch's sigmoid_backward and tanh_backward: an eager tape's backward pass
# (an LSTM's, a gate at a time) runs one op for each instead of three. The same operations
# in the same order, so the values of the three ops. Complex values keep the three (their
# rules conjugate).


def _sigmoid_cotangent(out, g):
    if out.dtype.is_complex:
        return g * conj_if_complex(out * (1 - out))
    return apply(SIGMOID_GRAD, as_tensors(out, g), {})


def _tanh_cotangent(out, g):
    if out.dtype.is_complex:
        return g * conj_if_complex(1 - out * out)
    return apply(TANH_GRAD, as_tensors(out, g), {})


def _real_binary(attrs, y, g):
    """shapes.binary of an op defined on real floating values alone."""
    _real_floating(attrs, y)
    return shapes.binary(attrs, y, g)


def _gate_grad_rules(name, kernel, slope, expression, derivative, helpers=()):
    """The primitive `name` (y, g) -> g * f(y): `slope(y)` = f'(y) on tensors, its numpy
    `kernel`, its C `expression` of (y, g) (calling the prologue's `helpers`), and
    `derivative(node, y, one)`: f(y) as IR nodes at `node`'s place (`one` a constant 1)."""

    def grad(node, ct, y, g):
        return (
            unbroadcast(ct * (g * slope(y)), y.shape),
            unbroadcast(apply(OPS[name], (y, ct), {}), g.shape),
        )

    def jvp(node, tangents, inputs, out):
        (ty, tg), (y, g) = tangents, inputs
        terms = []
        if tg is not None:
            terms.append(apply(OPS[name], (y, tg), {}))
        if ty is not None:
            terms.append(ty * (g * slope(y)))
        return terms[0] if len(terms) == 1 else terms[0] + terms[1]

    def apart_when_seeded(node):
        """g * f(y) as the ops it stands for, where g holds a jacobian's seeds: the seeds'
        rules (seed_ops.py) then take them out of the product."""
        y, g = node.inputs
        if not seed_ops.holds_seeds(g):
            return None
        one = Node(
            "const", (), {"value": Literal(np.ones((), y.dtype.as_numpy_dtype))}, (), y.dtype
        )
        factor = match.derived(node, "mul", (g, derivative(node, y, one)), node.shape)
        return match.same(node, factor)

    return _binary(
        name,
        grad,
        jvp=jvp,
        infer=_real_binary,
        simplify=apart_when_seeded,
        kernel=kernel,
        c=forms.Expression(
            lambda t, out, y, g: expression(t, y, g), helpers=helpers, costly=bool(helpers)
        ),
    )


def _gate_grad_kernel(name, passes):
    """The eager kernel of the gate gradient `name`: from ARITHMETIC_ON_THREADS_FROM float32
    or float64 elements of one shape, array_math's loop of the op's C form (one pass on the
    threads, the same operations in the same order: numpy's bits); else numpy's `passes`."""

    def kernel(y, g):
        if (
            y.size >= ARITHMETIC_ON_THREADS_FROM
            and y.dtype == g.dtype
            and y.dtype.name in ("float32", "float64")  # (float16: numpy's own roundings)
        ):
            found = _over_arrays(name, y, g)
            if found is not None:
                return found
        return passes(y, g)

    return kernel


SIGMOID_GRAD = _gate_grad_rules(
    "sigmoid_grad",
    _gate_grad_kernel("sigmoid_grad", lambda y, g: g * (y * (1 - y))),
    lambda y: 1 - 2 * y,
    lambda t, y, g: f"({g} * ({y} * (1 - {y})))",
    lambda node, y, one: match.derived(
        node, "mul", (y, match.derived(node, "sub", (one, y), y.shape)), y.shape
    ),
)
TANH_GRAD = _gate_grad_rules(
    "tanh_grad",
    _gate_grad_kernel("tanh_grad", lambda y, g: g * (1 - y * y)),
    lambda y: -2 * y,
    lambda t, y, g: f"({g} * (1 - {y} * {y}))",
    lambda node, y, one: match.derived(
        node, "sub", (one, match.derived(node, "mul", (y, y), y.shape)), y.shape
    ),
)
softplus = _unary_function(SOFTPLUS)
relu = _unary_function(RELU)


# --- relu's gradient, one op ------------------------------------------------------------
# relu_grad(y, g) = select(y > 0, g, 0), as TensorFlow's ReluGrad and PyTorch's
# threshold_backward: an eager step ran a comparison into a mask, then a selection through
# it, over every activation. A selection, so the bits of the two ops it replaces; its own
# rule sends the cotangent through the same selection, and zeros to y (its slope is 0
# wherever it has one: zeros, not None, as TensorFlow's ReluGrad, so that relu's second
# derivative is 0), so every order follows.


@quiet
def _relu_grad_kernel(y, g):
    """The kernel installed with tracer for it (one vector loop, on the threads for 2^16
    elements and more); else, and for arrays too small to pay for the call, the selection
    by masks (`_select_kernel`)."""
    if y.shape == g.shape and y.size >= SELECT_BY_BITS_FROM:
        found = array_math.select_positive(y, g)
        if found is not None:
            return found
    return _select_kernel(y > 0, g, np.zeros((), g.dtype))


def _relu_grad_apart_when_seeded(node):
    """select(y > 0, g, 0) as the ops it stands for where g holds a jacobian's seeds, as
    relu's gradient was before it was one op."""
    y, g = node.inputs
    if not seed_ops.holds_seeds(g):
        return None
    zero = Node("const", (), {"value": Literal(np.zeros((), y.dtype.as_numpy_dtype))}, (), y.dtype)
    positive = Node("greater", (y, zero), {}, y.shape, dtypes.bool, node.location)
    return match.same(node, match.derived(node, "select", (positive, g, zero), node.shape))


RELU_GRAD = _binary(
    "relu_grad",
    lambda node, c, y: (
        unbroadcast(array_ops.zeros_like(c), _shape(node, 0)),  # (batched as c is)
        unbroadcast(apply(RELU_GRAD, (y, c), {}), _shape(node, 1)),
    ),
    saves=(0,),
    jvp=lambda node, tangents, inputs, out: apply(
        RELU_GRAD, (inputs[0], tangent_or_zeros(tangents[1], inputs[1])), {}
    ),
    infer=_real_binary,
    simplify=lambda node: (
        _relu_grad_apart_when_seeded(node) or window_ops.mask_the_relus_maxima(node)
    ),
    kernel=_relu_grad_kernel,
    c=forms.Expression(lambda t, out, y, g: f"({y} > 0 ? {g} : ({compute(t)})0)"),
)


# --- GELU, and its gradient, each one op ------------------------------------------------
# gelu(x) = x * P(x) and gelu_grad(x, g) = g * (P(x) + x * p(x)), with P the standard
# normal's distribution function erfc(-x / sqrt(2)) / 2 and p its density
# exp(-x^2 / 2) / sqrt(2 pi), as PyTorch's gelu and gelu_backward. P is erfc's, as
# TensorFlow's: (1 + erf(x / sqrt(2))) / 2 is the same function, but 0 below x = -8 or so
# in float64 (erf rounds to -1 there), where P(-10) is 7.6e-24. Written with primitives
# (TensorFlow's way) an eager GELU ran five ops over the activations and its gradient about
# ten. The gradient's own rule is `_gate_grad_rules`' with f = P + x p, f' = p * (2 - x^2),
# so every order follows. Eager, each runs as one C loop of the compiled kernels' expression
# (codegen/array_math.py).

_SQRT_HALF = 0.7071067811865476  # 1 / sqrt(2)
_DENSITY_SCALE = 0.3989422804014327  # 1 / sqrt(2 pi)

_GELU = forms.Helper(
    "gelu",
    float="static inline $T tr_gelu_$tag($T x) {"
    f" return ($T)0.5 * x * erfc$f(x * ($T)-{_SQRT_HALF}); }}",
    requires=(forms.vector_declaration("erfc"),),
)
_GELU_SLOPE = forms.Helper(
    "gelu_slope",
    float="static inline $T tr_gelu_slope_$tag($T x) {"
    f" return ($T)0.5 * erfc$f(x * ($T)-{_SQRT_HALF})"
    f" + x * (tr_exp_$tag(($T)-0.5 * x * x) * ($T){_DENSITY_SCALE}); }}",
    requires=(forms.vector_declaration("erfc"), _EXP),
)


def _normal_density(x):
    return exp(-0.5 * x * x) * _DENSITY_SCALE


def _over_arrays(name, *arrays):
    """`array_math`'s loop of op `name` over same-shaped float arrays (float16 computed in
    float32, as compiled code computes it), or None where it takes no such arrays or no
    module can be built."""
    dtype = arrays[0].dtype
    if dtype.name not in ("float16", "float32", "float64") or len({a.shape for a in arrays}) > 1:
        return None
    wide = [a.astype(np.float32) for a in arrays] if dtype == np.float16 else arrays
    found = array_math.apply(name, *wide)
    return None if found is None else found.astype(dtype, copy=False)


@quiet
def _gelu_kernel(x):
    """C's loop of the op's expression over the array; numpy's composite where there is
    none."""
    found = _over_arrays("gelu", x)
    if found is not None:
        return found
    return (0.5 * x * _erfc_kernel(x * -_SQRT_HALF)).astype(x.dtype, copy=False)


@quiet
def _gelu_grad_kernel(x, g):
    found = _over_arrays("gelu_grad", x, g) if x.dtype == g.dtype else None
    if found is not None:
        return found
    density = np.exp(-0.5 * x * x) * _DENSITY_SCALE
    slope = 0.5 * _erfc_kernel(x * -_SQRT_HALF) + x * density
    return (g * slope).astype(np.result_type(x, g), copy=False)


def _gelu_derivative(node, x, one):
    """P(x) + x * p(x) as IR nodes at `node`'s place."""

    def const(value):
        literal = Literal(np.asarray(value, x.dtype.as_numpy_dtype))
        return Node("const", (), {"value": literal}, (), x.dtype)

    def derived(op, *inputs):
        return match.derived(node, op, inputs, x.shape)

    scaled = derived("mul", x, const(-_SQRT_HALF))
    distribution = derived("mul", const(0.5), derived("erfc", scaled))
    square = derived("mul", derived("mul", const(-0.5), x), x)
    density = derived("mul", derived("exp", square), const(_DENSITY_SCALE))
    return derived("add", distribution, derived("mul", x, density))


GELU_GRAD = _gate_grad_rules(
    "gelu_grad",
    _gelu_grad_kernel,
    lambda x: _normal_density(x) * (2 - x * x),
    lambda t, x, g: f"({g} * {_GELU_SLOPE.call(t, x)})",
    _gelu_derivative,
    helpers=(_GELU_SLOPE,),
)
GELU = _unary(
    "gelu",
    lambda node, g, x: (apply(GELU_GRAD, (x, g), {}),),
    saves=(0,),
    infer=_real_floating,
    kernel=_gelu_kernel,
    c=forms.Expression(forms.helper_call(_GELU), helpers=(_GELU,), costly=True),
)
gelu = _unary_function(GELU)


SOFTSIGN = _unary(
    "softsign",
    lambda node, g, x: (g / square(1 + abs(x)),),
    saves=(0,),
    infer=_real_floating,
    kernel=lambda x: x / (1 + np.abs(x)),
    c=forms.Expression(lambda t, out, x: f"({x} / (1 + fabs{MATH_SUFFIX[compute(t)]}({x})))"),
)
softsign = _unary_function(SOFTSIGN)
