"""The C form of every elementwise primitive: `C_EXPRESSIONS[op](dtype_in, dtype_out, *args)`.

Each entry gives a C expression over already-computed operands. Where numpy's semantics
differ from C's (NaN in maximum, floor division and modulo, integer division by zero,
float-to-int casts out of range), the expression calls a helper from the module prologue
(`templates/prologue.h.j2`) that does what numpy does, so compiled code never hits
undefined behaviour and agrees with the interpreter.
"""

from codegen.ctypes import MATH_SUFFIX, compute


def _libm(name, complex_name=None):
    def expression(t, out, x):
        ctype = compute(t)
        prefix = "c" if t.is_complex else ""
        function = (complex_name or name) if t.is_complex else name
        return f"{prefix}{function}{MATH_SUFFIX[ctype]}({x})"

    return expression


def _helper(name):
    """A prologue helper specialised by type: tr_<name>_<ctype-tag>(args)."""

    def expression(t, out, *args):
        return f"tr_{name}_{_tag(t)}({', '.join(args)})"

    return expression


def _tag(dtype):
    return {"float16": "f32", "complex64": "c64", "complex128": "c128"}.get(
        dtype.name, dtype.short_name
    )


def _cast(t, out, x):
    if out.is_bool:
        return f"({x} != 0)"
    if out.is_integer and t.is_floating:
        return f"tr_float_to_{out.short_name}((double)({x}))"
    if t.is_complex and not out.is_complex:
        return f"(({compute(out)})creal({x}))"
    return f"(({compute(out)})({x}))"


def _abs(t, out, x):
    if t.is_complex:
        return f"cabs{MATH_SUFFIX[compute(t)]}({x})"
    if t.is_integer:
        return f"(({x}) < 0 ? -({x}) : ({x}))"
    return f"fabs{MATH_SUFFIX[compute(t)]}({x})"


def _sign(t, out, x):
    if t.is_complex:
        return f"tr_sign_{_tag(t)}({x})"
    if t.is_integer:
        return f"(({compute(t)})((({x}) > 0) - (({x}) < 0)))"
    return f"tr_sign_{_tag(t)}({x})"


C_EXPRESSIONS = {
    "add": lambda t, out, x, y: f"({x} + {y})",
    "sub": lambda t, out, x, y: f"({x} - {y})",
    "mul": lambda t, out, x, y: f"({x} * {y})",
    "div": lambda t, out, x, y: f"tr_div_{_tag(t)}({x}, {y})" if t.is_integer else f"({x} / {y})",
    "mul_no_nan": lambda t, out, x, y: f"(({y}) == 0 ? ({compute(t)})0 : ({x}) * ({y}))",
    "pow": _helper("pow"),
    "maximum": _helper("maximum"),
    "minimum": _helper("minimum"),
    "floordiv": _helper("floordiv"),
    "mod": _helper("mod"),
    "greater": lambda t, out, x, y: f"({x} > {y})",
    "greater_equal": lambda t, out, x, y: f"({x} >= {y})",
    "less": lambda t, out, x, y: f"({x} < {y})",
    "less_equal": lambda t, out, x, y: f"({x} <= {y})",
    "equal": lambda t, out, x, y: f"({x} == {y})",
    "not_equal": lambda t, out, x, y: f"({x} != {y})",
    "logical_and": lambda t, out, x, y: f"({x} && {y})",
    "logical_or": lambda t, out, x, y: f"({x} || {y})",
    "logical_not": lambda t, out, x: f"(!{x})",
    "select": lambda t, out, c, x, y: f"({c} ? {x} : {y})",
    "neg": lambda t, out, x: f"(-{x})",
    "abs": _abs,
    "sign": _sign,
    "exp": _libm("exp"),
    "log": _libm("log"),
    "log1p": _helper("log1p"),
    "sqrt": _libm("sqrt"),
    "rsqrt": _helper("rsqrt"),
    "sin": _libm("sin"),
    "cos": _libm("cos"),
    "tan": _libm("tan"),
    "tanh": _libm("tanh"),
    "erf": _libm("erf"),
    "sigmoid": _helper("sigmoid"),
    "softplus": _helper("softplus"),
    "relu": _helper("relu"),
    "cast": _cast,
    "identity": lambda t, out, x: f"({x})",
    "stop_gradient": lambda t, out, x: f"({x})",
    "conj": lambda t, out, x: f"conj{MATH_SUFFIX[compute(t)]}({x})",
    "real": lambda t, out, x: f"creal{MATH_SUFFIX[compute(t)]}({x})",
    "imag": lambda t, out, x: f"cimag{MATH_SUFFIX[compute(t)]}({x})",
    "complex": lambda t, out, x, y: f"__builtin_complex(({compute(t)})({x}), ({compute(t)})({y}))",
}
