"""Python operators on tensors and variables, mapped to tracer's ops (`x + 1`, `x @ w`, `x[0]`)."""

from tracer import dtypes
from tracer.context import state, tensor_equality
from tracer.ops import (
    array_ops,
    bitwise_ops,
    linalg_ops,
    math_composites,
    math_ops,
)
from tracer.tensor import TensorLike


def _tensor_equals(self, other):
    """TensorFlow 2's `==`: elementwise, but False (not an error) for None or unbroadcastable
    shapes (for None, Python's False eagerly, a tensor while tracing, as TensorFlow's);
    identity after `tt.compat.v1.disable_tensor_equality()`."""
    if not tensor_equality.enabled:
        return self is other
    return _equality(math_ops.equal, self, other, False)


def _tensor_not_equals(self, other):
    if not tensor_equality.enabled:
        return self is not other
    return _equality(math_ops.not_equal, self, other, True)


def _equality(function, x, y, incompatible):
    from tracer.tensor import constant

    if y is None:
        return incompatible if state.trace is None else constant(incompatible)
    try:
        return function(x, y)
    except ValueError:
        return constant(incompatible)


def _logical_or_bitwise(logical, bitwise, symbol):
    """TensorFlow's `&`, `|`, `^`: logical on bool tensors, bitwise on integer ones."""

    def operator(x, y):
        kinds = {value.dtype for value in (x, y) if isinstance(value, TensorLike)}
        if kinds and all(dtype.is_integer for dtype in kinds):
            return bitwise(x, y)
        for dtype in kinds:
            if dtype != dtypes.bool:
                raise TypeError(
                    f"`{symbol}` on tracer tensors is logical for tt.bool tensors and bitwise for "
                    f"integer ones; got {dtype.name}"
                )
        return logical(x, y)

    return operator


def _invert(x):
    """TensorFlow's `~`: logical not of a bool tensor, bitwise inversion of an integer one."""
    if x.dtype.is_integer:
        return bitwise_ops.invert(x)
    if x.dtype != dtypes.bool:
        raise TypeError(
            f"`~` on tracer tensors is logical not for tt.bool tensors and bitwise inversion "
            f"for integer ones; got {x.dtype.name}"
        )
    return math_ops.logical_not(x)


def _reflected(function):
    return lambda self, other: function(other, self)


_AND = _logical_or_bitwise(math_ops.logical_and, bitwise_ops.bitwise_and, "&")
_OR = _logical_or_bitwise(math_ops.logical_or, bitwise_ops.bitwise_or, "|")
_XOR = _logical_or_bitwise(math_composites.logical_xor, bitwise_ops.bitwise_xor, "^")

OPERATORS = {
    "__add__": math_ops.add,
    "__radd__": _reflected(math_ops.add),
    "__sub__": math_ops.subtract,
    "__rsub__": _reflected(math_ops.subtract),
    "__mul__": math_ops.multiply,
    "__rmul__": _reflected(math_ops.multiply),
    "__truediv__": math_ops.divide,
    "__rtruediv__": _reflected(math_ops.divide),
    "__floordiv__": math_ops.floordiv,
    "__rfloordiv__": _reflected(math_ops.floordiv),
    "__mod__": math_ops.mod,
    "__rmod__": _reflected(math_ops.mod),
    "__pow__": math_ops.pow,
    "__rpow__": _reflected(math_ops.pow),
    "__matmul__": linalg_ops.matmul,
    "__rmatmul__": _reflected(linalg_ops.matmul),
    "__lt__": math_ops.less,
    "__le__": math_ops.less_equal,
    "__gt__": math_ops.greater,
    "__ge__": math_ops.greater_equal,
    "__eq__": _tensor_equals,
    "__ne__": _tensor_not_equals,
    "__neg__": math_ops.negative,
    "__abs__": math_ops.abs,
    "__getitem__": array_ops.getitem,
    "__and__": _AND,
    "__rand__": _reflected(_AND),
    "__or__": _OR,
    "__ror__": _reflected(_OR),
    "__xor__": _XOR,
    "__rxor__": _reflected(_XOR),
    "__invert__": _invert,
}

for _name, _function in OPERATORS.items():
    setattr(TensorLike, _name, _function)
