"""Bitwise ops on integer tensors: TensorFlow's `tf.bitwise` (and `&`, `|`, `^`, `~` on
integers, tracer/operators.py).

A shift by a negative amount or by the type's width or more is undefined in C and in numpy;
TensorFlow clamps the amount to [0, width - 1] (`1 << 40` of an int32 is -2147483648), and
so does tracer, in every backend. A left shift keeps the bits that fit (as unsigned
arithmetic: no signed overflow); a right shift is arithmetic for signed types, logical for
unsigned ones.
"""

import numpy as np

from codegen import forms
from codegen.ctypes import compute
from tracer.ops import shapes
from tracer.ops.core import apply_binary, apply_unary, op_function
from tracer.ops.registry import primitive


def _integer(*inputs):
    for t in inputs:
        if not t.dtype.is_integer:
            raise TypeError(f"expects integer tensors, got {t.dtype.name}")


def _infer_binary(attrs, x, y):
    _integer(x, y)
    return shapes.binary(attrs, x, y)


def _infer_unary(attrs, x):
    _integer(x)
    return shapes.unary(attrs, x)


def _binary(name, kernel, c):
    op = primitive(name, _infer_binary, fusion="elementwise", kernel=kernel, c=c)

    def function(x, y, name=None):
        return apply_binary(op, x, y)

    function.__name__ = name
    return op, op_function(op, function, 2)


def _infix(symbol):
    return forms.Expression(lambda t, out, x, y: f"(({compute(out)})({x} {symbol} {y}))")


def _clamped(x, y):
    """The shift amounts `y` clamped to [0, width of x's type - 1], in x's type."""
    width = np.dtype(x.dtype).itemsize * 8
    return np.clip(y, 0, width - 1).astype(x.dtype)


def _left_shift_kernel(x, y):
    return np.left_shift(x, _clamped(x, y))


def _right_shift_kernel(x, y):
    return np.right_shift(x, _clamped(x, y))


# a shift amount clamped to [0, width - 1]: signed amounts at both ends, unsigned ones at
# the top; the shifts are then in 64-bit arithmetic: a left shift of unsigned bits (cut to
# the type's by the conversion), a right shift of a signed value sign-filled and of an
# unsigned one zero-filled
_AMOUNT_SIGNED = forms.Helper(
    "shift_amount_signed",
    integer="static inline int tr_shift_amount_signed(int64_t y, int64_t width) { "
    "return (int)(y < 0 ? 0 : y >= width ? width - 1 : y); }",
    typed=False,
)
_AMOUNT_UNSIGNED = forms.Helper(
    "shift_amount_unsigned",
    integer="static inline int tr_shift_amount_unsigned(uint64_t y, int64_t width) { "
    "return (int)(y >= (uint64_t)width ? (uint64_t)width - 1 : y); }",
    typed=False,
)


def _amount(t, y):
    width = t.itemsize * 8
    if t.name.startswith("uint"):
        return f"tr_shift_amount_unsigned((uint64_t)({y}), {width})"
    return f"tr_shift_amount_signed((int64_t)({y}), {width})"


def _shift_left_c(t, out, x, y):
    return f"(({compute(out)})((uint64_t)({x}) << {_amount(t, y)}))"


def _shift_right_c(t, out, x, y):
    bits = "uint64_t" if t.name.startswith("uint") else "int64_t"
    return f"(({compute(out)})(({bits})({x}) >> {_amount(t, y)}))"


BITWISE_AND, bitwise_and = _binary("bitwise_and", np.bitwise_and, _infix("&"))
BITWISE_OR, bitwise_or = _binary("bitwise_or", np.bitwise_or, _infix("|"))
BITWISE_XOR, bitwise_xor = _binary("bitwise_xor", np.bitwise_xor, _infix("^"))
_SHIFT_HELPERS = (_AMOUNT_SIGNED, _AMOUNT_UNSIGNED)
LEFT_SHIFT, left_shift = _binary(
    "left_shift", _left_shift_kernel, forms.Expression(_shift_left_c, helpers=_SHIFT_HELPERS)
)
RIGHT_SHIFT, right_shift = _binary(
    "right_shift",
    _right_shift_kernel,
    forms.Expression(_shift_right_c, helpers=_SHIFT_HELPERS),
)

INVERT = primitive(
    "invert",
    _infer_unary,
    fusion="elementwise",
    kernel=np.invert,
    c=forms.Expression(lambda t, out, x: f"(({compute(out)})(~{x}))"),
)


def invert(x, name=None):
    """~x, bit by bit (TensorFlow's tf.bitwise.invert: 254 for a uint8 1)."""
    return apply_unary(INVERT, x)


invert = op_function(INVERT, invert, 1)
