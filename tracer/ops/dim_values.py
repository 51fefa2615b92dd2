"""Values computed from shapes alone, while a function is traced.

`tt.shape(x)[0] * 2` inside a function whose argument `x` has an unknown size d0 is a
symbolic tensor whose value is the polynomial 2*d0. Where such a tensor gives a shape
(`tt.ones([tt.shape(x)[0], 3])`, `tt.reshape(y, [tt.shape(x)[0], -1])`) or the bound of a
`tt.range`, its value is read from the graph that made it: the result's shape holds the
unknown dimension, as an argument's does, and one trace serves every size.
"""

import numpy as np

from runtime.kernels import KERNELS
from tracer.ir import dims, format_location, user_location
from tracer.tensor import SizeKnownWhenRun

# the ops whose numpy kernels compute on object arrays of ints and Dims as on numbers
_COMPUTED = ("add", "sub", "mul", "floordiv", "neg", "slice", "reshape", "concat", "gather")
_PASSED_ON = ("identity", "cast", "stop_gradient")  # (a cast between integer types)
_DEPTH = 32  # how many ops back from the tensor the value is looked for


def dims_of(tensor):
    """The value of integer `tensor` as an object array of ints and `dims.Dim`s, where it
    is computed from shapes and constants alone (dims_value, slicing, reshaping, gathering,
    concatenating, + - * //); None where it is not, or where it is not an integer."""
    if tensor._value is not None:
        return np.asarray(tensor._value, dtype=object) if tensor.dtype.is_integer else None
    return _value(tensor._node, 0)


def _value(node, depth):
    if depth > _DEPTH or not node.dtype.is_integer:
        return None
    if node.op == "dims_value":
        values = node.attrs["values"]
        return np.array(values if node.attrs["vector"] else values[0], dtype=object)
    if node.op == "const" and "value" in node.attrs:
        return np.asarray(node.attrs["value"].array, dtype=object)
    inputs = [_value(i, depth + 1) for i in node.inputs]
    if not inputs or any(v is None for v in inputs):
        return None
    try:
        return _apply(node, inputs)
    except (TypeError, ValueError, IndexError):  # a Dim whose answer depends on its value
        return None


def _apply(node, inputs):
    if node.op in _PASSED_ON:
        return inputs[0]
    if node.op in _COMPUTED:
        return np.asarray(KERNELS[node.op](*inputs, **node.attrs), dtype=object)
    return None


def known_shape(tensor):
    """The values of symbolic `tensor` as a tuple of ints and Dims (a shape, or one
    dimension); a TypeError where they are computed from more than shapes and constants."""
    known = dims_of(tensor)
    if known is None:
        raise SizeKnownWhenRun(
            f"computes a shape or size when it runs ({tensor!r}, at {_where()}): compiled code "
            "holds sizes known when tracing, from constants and the shapes of tensors "
            "(tt.shape(x)[0]), so the function runs as Python at each call"
        )
    return tuple(v if isinstance(v, dims.Dim) else int(v) for v in known.reshape(-1))


def _where():
    return format_location(user_location()) or "its line"


def is_nonnegative(size):
    """Whether `size` (an int or a Dim) cannot be negative: an int >= 0, or a polynomial of
    unknown dimensions (each >= 0) with no negative coefficient."""
    if isinstance(size, dims.Dim):
        return all(coefficient > 0 for _, coefficient in size.terms)
    return size >= 0
