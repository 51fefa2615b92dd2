"""C types for tracer's dtypes, and C literals.

float16 is stored as `_Float16` and computed in `float`, rounded back after every op, as
numpy does; complex values use C99 `_Complex`.
"""

import math

import numpy as np

STORAGE = {
    "float16": "_Float16",
    "float32": "float",
    "float64": "double",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "bool": "bool",
    "complex64": "float _Complex",
    "complex128": "double _Complex",
}
COMPUTE = dict(STORAGE, float16="float")
# suffix of the libm function for a compute type: sinf, sin, csinf, csin
MATH_SUFFIX = {"float": "f", "double": "", "float _Complex": "f", "double _Complex": ""}


def storage(dtype):
    return STORAGE[dtype.name]


def compute(dtype):
    return COMPUTE[dtype.name]


def literal(value, dtype):
    """A C expression of `dtype` for the Python/numpy scalar `value` (NaN and inf included)."""
    ctype = compute(dtype)
    if dtype.is_complex:
        value = complex(value)
        return f"__builtin_complex(({_real_type(ctype)}){float_literal(value.real)}, ({_real_type(ctype)}){float_literal(value.imag)})"
    if dtype.is_bool:
        return "true" if bool(value) else "false"
    if dtype.is_integer:
        value = int(value)
        return f"(({ctype}){value}{'ULL' if value > 2**63 - 1 else 'LL'})"
    return f"(({ctype}){float_literal(float(value))})"


def _real_type(ctype):
    return ctype.replace(" _Complex", "")


def float_literal(value):
    """A C literal (or macro) of the double `value`, NaN and infinities included."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    return repr(float(np.float64(value)))
