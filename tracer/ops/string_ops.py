"""`tt.strings`: TensorFlow's string ops on tt.string tensors.

A tt.string element is a Python `bytes` in a numpy object array (tracer/dtypes.py), so these
ops run only in Python: eagerly, in the numpy interpreter, and in a compiled module as steps
it hands back to Python, on the strings its handles name (codegen/string_handles.py). None
has a gradient, as in TensorFlow. docs/strings.md says what each one does where
TensorFlow's documentation is silent, and where tracer differs.
"""

import re

import numpy as np

from codegen import forms
from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.ops import shapes
from tracer.ops.convert import as_tensor, static_int
from tracer.ops.core import apply
from tracer.ops.registry import primitive, unbatchable
from tracer.printing import format_value

_NOT_COMPILED = forms.NotCompiled(
    "tt.string values are Python bytes: a compiled module runs this op in Python "
    "(codegen/string_handles.py), and exported C holds no strings"
)
_UNBATCHED = unbatchable("tt.string values run in Python, one call per element")
_UNITS = ("BYTE", "UTF8_CHAR")


def _string_op(name, infer, kernel):
    """Declare string op `name`: no gradient, no C, no batching rule."""
    return primitive(name, infer, kernel=kernel, c=_NOT_COMPILED, batch=_UNBATCHED, strings=True)


def _expect_strings(*inputs):
    for t in inputs:
        if not t.dtype.is_string:
            raise TypeError(f"expects tt.string tensors, got {t.dtype.name}")


def _each(function, *arrays, dtype=object):
    """`function` of each element of `arrays` (broadcast against each other), as an array of
    `dtype`, also when 0-d (where numpy's own calls on objects give the object itself)."""
    if all(a.ndim == 0 for a in arrays):
        return np.array(function(*(a[()] for a in arrays)), dtype=dtype)
    return np.asarray(np.frompyfunc(function, len(arrays), 1)(*arrays), dtype=dtype)


def _as_bytes(value, what):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    raise TypeError(f"{what} must be a str or bytes, not {value!r}")


def _tensors(values):
    return tuple(as_tensor(v) for v in values)


# --- joining -------------------------------------------------------------------------


def _infer_join(attrs, *inputs):
    _expect_strings(*inputs)
    return shapes.broadcast_shapes(*(t.shape for t in inputs)), dtypes.string


STRING_JOIN = _string_op(
    "string_join",
    _infer_join,
    lambda *parts, separator: _each(lambda *items: separator.join(items), *parts),
)


def join(inputs, separator="", name=None):
    """Each position's strings of `inputs` joined with `separator` (tensors broadcast, as
    scalars do in TensorFlow's)."""
    inputs = _tensors(inputs)
    if not inputs:
        raise ValueError("tt.strings.join needs at least one input")
    return apply(STRING_JOIN, inputs, {"separator": _as_bytes(separator, "separator")})


def _infer_reduce_join(attrs, x):
    _expect_strings(x)
    axes = shapes.normalize_axes(attrs["axis"], len(x.shape))
    kept = [1 if d in axes else n for d, n in enumerate(x.shape)]
    shape = (
        tuple(kept)
        if attrs["keepdims"]
        else tuple(n for d, n in enumerate(x.shape) if d not in axes)
    )
    return shape, dtypes.string


def _reduce_join_kernel(x, axis, keepdims, separator):
    axes = shapes.normalize_axes(axis, x.ndim)
    kept = [d for d in range(x.ndim) if d not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape([x.shape[d] for d in kept] + [-1])
    out = np.empty(rows.shape[:-1], dtype=object)
    for index in np.ndindex(out.shape):
        out[index] = separator.join(rows[index])
    if keepdims:
        out = out.reshape([1 if d in axes else n for d, n in enumerate(x.shape)])
    return out


REDUCE_JOIN = _string_op("reduce_join", _infer_reduce_join, _reduce_join_kernel)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """The strings along `axis` (all axes when None) joined with `separator`, in order."""
    axis = axis if axis is None or isinstance(axis, int) else tuple(int(a) for a in axis)
    attrs = {
        "axis": axis,
        "keepdims": bool(keepdims),
        "separator": _as_bytes(separator, "separator"),
    }
    return apply(REDUCE_JOIN, (as_tensor(inputs),), attrs)


# --- measuring and cutting -----------------------------------------------------------


def _check_unit(unit):
    if unit not in _UNITS:
        raise ValueError(f"unit must be one of {_UNITS}, not {unit!r}")


def _characters(value):
    """The characters of UTF-8 bytes (an invalid byte counts as one character)."""
    return value.decode("utf-8", errors="surrogateescape")


def _elementwise_to(dtype):
    """The shape rule of an op from each string to a value of `dtype`."""

    def infer(attrs, x):
        _expect_strings(x)
        return x.shape, dtype

    return infer


def _length_kernel(x, unit):
    count = len if unit == "BYTE" else (lambda s: len(_characters(s)))
    return _each(count, x, dtype=np.int32)


STRING_LENGTH = _string_op("string_length", _elementwise_to(dtypes.int32), _length_kernel)


def length(input, unit="BYTE", name=None):
    """The length of each string: in bytes, or with unit="UTF8_CHAR" in characters."""
    _check_unit(unit)
    return apply(STRING_LENGTH, (as_tensor(input),), {"unit": unit})


def _substr_kernel(x, start, size, unit):
    def cut(value):
        text = value if unit == "BYTE" else _characters(value)
        first = start + len(text) if start < 0 else start
        if not 0 <= first <= len(text):
            raise InvalidArgumentError(None, None, f"pos {start} out of range for string {value!r}")
        part = text[first : first + size]
        return part if unit == "BYTE" else part.encode("utf-8", errors="surrogateescape")

    return _each(cut, x)


SUBSTR = _string_op("substr", _elementwise_to(dtypes.string), _substr_kernel)


def substr(input, pos, len, unit="BYTE", name=None):
    """Each string's part of `len` bytes (or characters) from `pos` (negative: from the
    end); TensorFlow's InvalidArgumentError where `pos` lies outside a string. `pos` and
    `len` are scalars known when the op is made."""
    _check_unit(unit)
    start, size = static_int(pos), static_int(len)
    if start is None or size is None:
        raise TypeError("tt.strings.substr takes pos and len as Python ints or tensors with values")
    if size < 0:
        raise ValueError(f"len must not be negative, got {size}")
    return apply(SUBSTR, (as_tensor(input),), {"start": start, "size": size, "unit": unit})


def _case_kernel(method):
    def run(x, encoding):
        if encoding == "":  # TensorFlow changes ASCII letters only
            return _each(getattr(bytes, method), x)
        return _each(lambda s: getattr(s.decode(encoding), method)().encode(encoding), x)

    return run


STRING_UPPER = _string_op("string_upper", _elementwise_to(dtypes.string), _case_kernel("upper"))
STRING_LOWER = _string_op("string_lower", _elementwise_to(dtypes.string), _case_kernel("lower"))
STRING_STRIP = _string_op(
    "string_strip", _elementwise_to(dtypes.string), lambda x: _each(bytes.strip, x)
)


def _check_encoding(encoding):
    if encoding not in ("", "utf-8"):
        raise ValueError(f"encoding must be '' (ASCII letters only) or 'utf-8', not {encoding!r}")


def upper(input, encoding="", name=None):
    """Each string in upper case: ASCII letters only, or all letters with encoding='utf-8'."""
    _check_encoding(encoding)
    return apply(STRING_UPPER, (as_tensor(input),), {"encoding": encoding})


def lower(input, encoding="", name=None):
    """Each string in lower case: ASCII letters only, or all letters with encoding='utf-8'."""
    _check_encoding(encoding)
    return apply(STRING_LOWER, (as_tensor(input),), {"encoding": encoding})


def strip(input, name=None):
    """Each string without its leading and trailing ASCII whitespace."""
    return apply(STRING_STRIP, (as_tensor(input),), {})


# --- regular expressions -------------------------------------------------------------


def _compiled(pattern):
    try:
        return re.compile(_as_bytes(pattern, "pattern"))
    except re.error as error:
        raise ValueError(f"invalid regular expression {pattern!r}: {error}") from None


def _full_match_kernel(x, pattern):
    compiled = _compiled(pattern)
    return _each(lambda s: compiled.fullmatch(s) is not None, x, dtype=bool)


REGEX_FULL_MATCH = _string_op("regex_full_match", _elementwise_to(dtypes.bool), _full_match_kernel)


def regex_full_match(input, pattern, name=None):
    """Whether each whole string matches the regular expression `pattern` (Python's `re`
    syntax, which agrees with TensorFlow's RE2 on the common forms)."""
    _compiled(pattern)
    return apply(REGEX_FULL_MATCH, (as_tensor(input),), {"pattern": _as_bytes(pattern, "pattern")})


def _replace_kernel(x, pattern, rewrite, replace_global):
    compiled = _compiled(pattern)
    return _each(lambda s: compiled.sub(rewrite, s, count=0 if replace_global else 1), x)


REGEX_REPLACE = _string_op("regex_replace", _elementwise_to(dtypes.string), _replace_kernel)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Each string with the matches of `pattern` replaced by `rewrite` (`\\1` for a group,
    `\\0` for the whole match), all of them or only the first."""
    _compiled(pattern)
    rewrite = _as_bytes(rewrite, "rewrite").replace(b"\\0", b"\\g<0>")
    attrs = {
        "pattern": _as_bytes(pattern, "pattern"),
        "rewrite": rewrite,
        "replace_global": bool(replace_global),
    }
    return apply(REGEX_REPLACE, (as_tensor(input),), attrs)


# --- numbers to strings and back -----------------------------------------------------


def _infer_as_string(attrs, x):
    if x.dtype.is_string:
        raise TypeError("expects a number or bool tensor, got string")
    return x.shape, dtypes.string


def _number_format(dtype, precision, scientific, shortest, width, fill):
    """The printf format of TensorFlow's AsString for `dtype` and its options."""
    flags = f"{'0' if fill == '0' else ''}{width if width > -1 else ''}"
    if dtype.kind in "iu":
        return f"%{flags}d"
    digits = f".{precision}" if precision > -1 else ""
    kind = "g" if shortest else "e" if scientific else "f"
    return f"%{flags}{digits}{kind}"


def _as_string_kernel(x, precision, scientific, shortest, width, fill):
    if x.dtype.kind == "b":
        return _each(lambda v: b"true" if v else b"false", x)
    element = _number_format(x.dtype, precision, scientific, shortest, width, fill)
    if x.dtype.kind == "c":
        return _each(lambda v: f"({element % v.real},{element % v.imag})".encode(), x)
    return _each(lambda v: (element % v).encode(), x)


AS_STRING = _string_op("as_string", _infer_as_string, _as_string_kernel)


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    """Each number as text, with printf's `%f` (`%e` with `scientific`, `%g` with
    `shortest`, `precision` digits), integers as `%d`, bools as `true`/`false`, padded to
    `width` with spaces or, with fill='0', zeros."""
    if fill not in ("", " ", "0"):
        raise ValueError(f"fill must be '', ' ' or '0', not {fill!r}")
    if scientific and shortest:
        raise ValueError("as_string takes scientific or shortest, not both")
    attrs = {
        "precision": int(precision),
        "scientific": bool(scientific),
        "shortest": bool(shortest),
        "width": int(width),
        "fill": fill,
    }
    return apply(AS_STRING, (as_tensor(input),), attrs)


_NUMBER_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def _infer_to_number(attrs, x):
    _expect_strings(x)
    return x.shape, attrs["out_type"]


def _to_number_kernel(x, out_type):
    parse = int if out_type.is_integer else float

    def number(value):
        try:
            return parse(value.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            raise InvalidArgumentError(
                None,
                None,
                f"StringToNumberOp could not correctly convert string: {value.decode(errors='replace')}",
            ) from None

    values = _each(number, x)
    if out_type.is_integer:
        limits = np.iinfo(out_type.as_numpy_dtype)
        for value in values.reshape(-1):
            if not limits.min <= value <= limits.max:
                raise InvalidArgumentError(
                    None, None, f"StringToNumberOp could not correctly convert string: {value}"
                )
    return values.astype(out_type.as_numpy_dtype)


STRING_TO_NUMBER = _string_op("string_to_number", _infer_to_number, _to_number_kernel)


def to_number(input, out_type=dtypes.float32, name=None):
    """Each string parsed as a number of `out_type` (float32, float64, int32 or int64);
    TensorFlow's InvalidArgumentError for a string that is not one."""
    out_type = dtypes.as_dtype(out_type)
    if out_type not in _NUMBER_TYPES:
        raise TypeError(
            f"out_type must be one of float32, float64, int32, int64, not {out_type.name}"
        )
    return apply(STRING_TO_NUMBER, (as_tensor(input),), {"out_type": out_type})


# --- formatting ----------------------------------------------------------------------


def _infer_format(attrs, *inputs):
    return (), dtypes.string


def _format_kernel(*values, template, placeholder, summarize):
    parts = template.split(placeholder)
    texts = [format_value(np.asarray(v), summarize) for v in values]
    text = parts[0] + "".join(t + p for t, p in zip(texts, parts[1:]))
    return np.array(text.encode("utf-8", errors="surrogateescape"), dtype=object)


STRING_FORMAT = _string_op("string_format", _infer_format, _format_kernel)


def format(template, inputs, placeholder="{}", summarize=3, name=None):
    """`template` with each `placeholder` replaced by the next of `inputs` (a tensor or a
    list of them), each written as tt.print writes it: a scalar string tensor."""
    inputs = _tensors(inputs if isinstance(inputs, (list, tuple)) else [inputs])
    count = template.count(placeholder)
    if count != len(inputs):
        raise ValueError(
            f"the template {template!r} has {count} placeholders {placeholder!r} for "
            f"{len(inputs)} inputs: they must be as many"
        )
    attrs = {"template": template, "placeholder": placeholder, "summarize": int(summarize)}
    return apply(STRING_FORMAT, inputs, attrs)
