"""Python operators on tensors and variables, mapped to tracer's ops (`x + 1`, `x @ w`, `x[0]`)."""

from tracer import dtypes
from tracer.ops import array_ops, linalg_ops, math_composites, math_ops
from tracer.tensor import TensorLike


def _tensor_equals(self, other):
    """TensorFlow 2's `==`: elementwise, but False (not an error) for None or unbroadcastable shapes."""
    return _equality(math_ops.equal, self, other, False)


def _tensor_not_equals(self, other):
    return _equality(math_ops.not_equal, self, other, True)


def _equality(function, x, y, incompatible):
    from tracer.tensor import constant

    if y is None:
        return constant(incompatible)
    try:
        return function(x, y)
    except ValueError:
        return constant(incompatible)


def _logical(function, symbol):
    """TensorFlow's `&`, `|`, `^` on bool tensors (on integers they are its bitwise ops,
    which tracer does not have)."""

    def operator(x, y):
        for value in (x, y):
            if isinstance(value, TensorLike) and value.dtype != dtypes.bool:
                raise TypeError(
                    f"`{symbol}` on tracer tensors is logical, for tt.bool tensors; got "
                    f"{value.dtype.name} (bitwise operations on integers are not supported)"
                )
        return function(x, y)

    return operator


def _logical_not(x):
    if x.dtype != dtypes.bool:
        raise TypeError(
            f"`~` on tracer tensors is logical not, for tt.bool tensors; got {x.dtype.name} "
            "(bitwise inversion of integers is not supported)"
        )
    return math_ops.logical_not(x)


def _reflected(function):
    return lambda self, other: function(other, self)


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
    "__and__": _logical(math_ops.logical_and, "&"),
    "__rand__": _reflected(_logical(math_ops.logical_and, "&")),
    "__or__": _logical(math_ops.logical_or, "|"),
    "__ror__": _reflected(_logical(math_ops.logical_or, "|")),
    "__xor__": _logical(math_composites.logical_xor, "^"),
    "__rxor__": _reflected(_logical(math_composites.logical_xor, "^")),
    "__invert__": _logical_not,
}

for _name, _function in OPERATORS.items():
    setattr(TensorLike, _name, _function)
