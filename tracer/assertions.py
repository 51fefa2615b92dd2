"""`tt.debugging`'s assertions: TensorFlow's checks of values (`assert_equal`,
`assert_positive`, ..., `Assert`, `check_numerics`), eagerly and in a `tt.function`.

Eagerly, and where the values are known while a function is traced, a check that fails
raises InvalidArgumentError at once, as TensorFlow's do. Otherwise the check is a node of the
print stream (tracer/printing.py): it runs where the program put it, at each call, in each
loop iteration and in the branch taken, compiled (the module calls back into Python, as
tt.print does) and on the interpreter, and a failure raises InvalidArgumentError with the
condition, the message and the values. Checks of what is known while tracing (a rank, a
dtype) raise when the function is traced, as TensorFlow's do.

    @tt.function
    def step(x):
        tt.debugging.assert_positive(x, message="x must be positive")
        return tt.math.log(x)
"""

import numpy as np

from tracer import dtypes
from tracer.context import state
from tracer.errors import InvalidArgumentError
from tracer.ir import format_location, user_location
from tracer.ops import convert, math_ops
from tracer.ops.core import apply
from tracer.printing import PRINT, STREAM, PrintCall, format_value

__all__ = [
    "Assert",
    "assert_all_finite",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_less",
    "assert_less_equal",
    "assert_near",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_rank",
    "assert_rank_at_least",
    "assert_scalar",
    "assert_type",
    "check_numerics",
]


class _Check(PrintCall):
    """A check as a print-stream node's call: `write` raises where the condition (the
    first value) is not all true, with the text `describe(values)` gives."""

    __slots__ = ("describe",)

    def __init__(self, describe, summarize):
        super().__init__((), None, " ", "", summarize)
        self.describe = describe

    def write(self, values):
        if not np.all(values[0]):
            where = format_location(self.location)
            text = self.describe(values[1:]) + (f"\n(at {where})" if where else "")
            raise InvalidArgumentError(None, None, text)


def _run(condition, data, describe, summarize=None):
    """Check that `condition` (a boolean tensor) holds everywhere, now where its value and
    `data`'s are known, else when the traced function runs; `describe(data values)` is the
    failure's text."""
    tensors = [convert.as_tensor(condition), *(convert.as_tensor(d) for d in data)]
    check = _Check(describe, 3 if summarize is None else summarize)
    if state.trace is None or all(t._value is not None for t in tensors):
        check.write([t.numpy() for t in tensors])
        return
    check.location = user_location()
    state.trace.check_print(STREAM)
    STREAM.assign(apply(PRINT, (STREAM._read(), *tensors), {"call": check}))


def _shown(name, value, summarize):
    value = np.asarray(value)
    return f"{name} (shape={value.shape} dtype={value.dtype}) = {format_value(value, summarize)}"


def _compared(x, y, message, symbol, op, summarize):
    x, y = convert.as_tensors(x, y)

    def describe(values):
        lines = [message] if message else []
        lines.append(f"Condition x {symbol} y did not hold element-wise:")
        lines += [_shown(n, v, summarize or 3) for n, v in zip("xy", values)]
        return "\n".join(lines)

    _run(op(x, y), (x, y), describe, summarize)


def assert_equal(x, y, message=None, summarize=None, name=None):
    """InvalidArgumentError where `x == y` does not hold everywhere (broadcast)."""
    _compared(x, y, message, "==", math_ops.equal, summarize)


def assert_none_equal(x, y, message=None, summarize=None, name=None):
    _compared(x, y, message, "!=", math_ops.not_equal, summarize)


def assert_less(x, y, message=None, summarize=None, name=None):
    _compared(x, y, message, "<", math_ops.less, summarize)


def assert_less_equal(x, y, message=None, summarize=None, name=None):
    _compared(x, y, message, "<=", math_ops.less_equal, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None):
    _compared(x, y, message, ">", math_ops.greater, summarize)


def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    _compared(x, y, message, ">=", math_ops.greater_equal, summarize)


def _signed(x, message, symbol, op, summarize):
    x = convert.as_tensor(x)
    zero = convert.as_tensor(np.zeros((), x.dtype.as_numpy_dtype))

    def describe(values):
        lines = [message] if message else []
        lines.append(f"Condition x {symbol} 0 did not hold element-wise:")
        lines.append(_shown("x", values[0], summarize or 3))
        return "\n".join(lines)

    _run(op(x, zero), (x,), describe, summarize)


def assert_positive(x, message=None, summarize=None, name=None):
    _signed(x, message, ">", math_ops.greater, summarize)


def assert_negative(x, message=None, summarize=None, name=None):
    _signed(x, message, "<", math_ops.less, summarize)


def assert_non_negative(x, message=None, summarize=None, name=None):
    _signed(x, message, ">=", math_ops.greater_equal, summarize)


def assert_non_positive(x, message=None, summarize=None, name=None):
    _signed(x, message, "<=", math_ops.less_equal, summarize)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """InvalidArgumentError where |x - y| <= atol + rtol |y| does not hold everywhere; both
    tolerances 10 epsilons of the dtype by default, as TensorFlow's."""
    x, y = convert.as_tensors(x, y)
    eps = float(np.finfo(x.dtype.as_numpy_dtype).eps) if x.dtype.is_floating else 0.0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    difference = math_ops.abs(x - y)
    tolerance = [convert.as_tensor(np.asarray(t, x.dtype.as_numpy_dtype)) for t in (rtol, atol)]
    bound = math_ops.abs(y) * tolerance[0] + tolerance[1]

    def describe(values):
        lines = [message] if message else []
        lines.append(f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}")
        lines += [_shown(n, v, summarize or 3) for n, v in zip("xy", values)]
        return "\n".join(lines)

    _run(math_ops.less_equal(difference, bound), (x, y), describe, summarize)


def check_numerics(tensor, message, name=None):
    """`tensor`, after InvalidArgumentError where it holds a NaN or an Inf ("<message> :
    Tensor had NaN values", as TensorFlow's)."""
    tensor = convert.as_tensor(tensor)

    def describe(values):
        kind = "NaN" if np.any(np.isnan(values[0])) else "Inf"
        return f"{message} : Tensor had {kind} values"

    _run(math_ops.is_finite(tensor), (tensor,), describe)
    return tensor


def assert_all_finite(t, msg, name=None, x=None, message=None):
    """`check_numerics` of `t` (TensorFlow's other name for it)."""
    return check_numerics(t if x is None else x, msg if message is None else message)


def Assert(condition, data, summarize=None, name=None):
    """InvalidArgumentError, showing `data` (tensors and Python values), where the boolean
    scalar `condition` is false."""
    condition = convert.as_tensor(condition)
    if condition.dtype != dtypes.bool or condition.shape != ():
        raise ValueError(f"Assert: condition must be a boolean scalar, not {condition!r}")
    tensors = [d for d in data if not isinstance(d, (str, bytes))]
    texts = [d if isinstance(d, (str, bytes)) else None for d in data]

    def describe(values):
        shown = iter(format_value(v, summarize or 3) for v in values)
        parts = [repr(t) if t is not None else next(shown) for t in texts]
        return "assertion failed: " + " ".join(parts)

    _run(condition, tensors, describe, summarize)


def _rank_error(x, expected, message):
    text = f"{message + '. ' if message else ''}Tensor must have rank {expected}."
    return ValueError(f"{text}  Received rank {x.ndim}, shape {tuple(x.shape)}")


def assert_rank(x, rank, message=None, name=None):
    """ValueError where the rank of `x` (known while tracing) is not `rank`."""
    x = convert.as_tensor(x)
    if x.ndim != int(rank):
        raise _rank_error(x, int(rank), message)


def assert_rank_at_least(x, rank, message=None, name=None):
    x = convert.as_tensor(x)
    if x.ndim < int(rank):
        raise _rank_error(x, f"at least {int(rank)}", message)


def assert_scalar(tensor, message=None, name=None):
    """ValueError where `tensor` is not a scalar; the tensor otherwise."""
    tensor = convert.as_tensor(tensor)
    if tensor.ndim != 0:
        raise ValueError(
            f"{message + ' ' if message else ''}Expected scalar shape, saw shape: "
            f"{tuple(tensor.shape)}."
        )
    return tensor


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError where `tensor`'s dtype is not `tf_type`."""
    tensor = convert.as_tensor(tensor)
    expected = dtypes.as_dtype(tf_type)
    if tensor.dtype != expected:
        raise TypeError(
            f"{message + ' ' if message else ''}{tensor!r} must be of type {expected!r}; got "
            f"{tensor.dtype!r}"
        )
