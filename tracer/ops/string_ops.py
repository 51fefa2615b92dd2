"""`tt.strings`: TensorFlow's string ops on tt.string tensors.

A tt.string element is a Python `bytes` in a numpy object array (tracer/dtypes.py), so these
ops run only in Python: eagerly, in the numpy interpreter, and in a compiled module as steps
it hands back to Python, on the strings its handles name (codegen/string_handles.py). None
has a gradient, as in TensorFlow. docs/strings.md says what each one does where
TensorFlow's documentation is silent, and where tracer differs.
"""

import re
from fractions import Fraction

import numpy as np

from codegen import forms
from tracer import dtypes, errors
from tracer.errors import InvalidArgumentError
from tracer.ops import re2_syntax, shapes
from tracer.ops.convert import as_tensor, known_value, static_int
from tracer.ops.core import apply
from tracer.ops.registry import primitive, unbatchable
from tracer.printing import format_value

_NOT_COMPILED = forms.NotCompiled(
    "tt.string values are Python bytes: a compiled module runs this op in Python "
    "(codegen/string_handles.py), and exported C holds no strings"
)
_UNBATCHED = unbatchable("tt.string values run in Python, one call per element")
_UNITS = ("BYTE", "UTF8_CHAR")


def string_op(name, infer, kernel):
    """Declare string op `name`: no gradient, no C, no batching rule."""
    return primitive(name, infer, kernel=kernel, c=_NOT_COMPILED, batch=_UNBATCHED, strings=True)


def expect_strings(*inputs):
    for t in inputs:
        if not t.dtype.is_string:
            raise TypeError(f"expects tt.string tensors, got {t.dtype.name}")


def each_element(function, *arrays, dtype=object):
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
    expect_strings(*inputs)
    return shapes.broadcast_shapes(*(t.shape for t in inputs)), dtypes.string


STRING_JOIN = string_op(
    "string_join",
    _infer_join,
    lambda *parts, separator: each_element(lambda *items: separator.join(items), *parts),
)


def join(inputs, separator="", name=None):
    """Each position's strings of `inputs` joined with `separator` (tensors broadcast, as
    scalars do in TensorFlow's)."""
    inputs = _tensors(inputs)
    if not inputs:
        raise ValueError("tt.strings.join needs at least one input")
    return apply(STRING_JOIN, inputs, {"separator": _as_bytes(separator, "separator")})


def _reduce_axes(axis, rank):
    """`axis` of reduce_join as non-negative axes in the order given (all axes when None,
    the last first, so that the strings join in row-major order); TensorFlow's errors for
    an axis out of range or given twice."""
    if axis is None:
        return tuple(range(rank - 1, -1, -1))
    axes = []
    for a in (axis,) if isinstance(axis, int) else axis:
        if not -rank <= a < rank:
            raise errors.mixed(errors.OutOfRangeError, ValueError)(
                f"Invalid reduction dimension {a} for input with {rank} dimension(s)"
            )
        if a % rank in axes:
            raise errors.mixed(errors.InvalidArgumentError, ValueError)(
                f"Duplicate reduction dimension {a}"
            )
        axes.append(a % rank)
    return tuple(axes)


def _infer_reduce_join(attrs, x):
    expect_strings(x)
    axes = _reduce_axes(attrs["axis"], len(x.shape))
    if attrs["keepdims"]:
        return tuple(1 if d in axes else n for d, n in enumerate(x.shape)), dtypes.string
    return tuple(n for d, n in enumerate(x.shape) if d not in axes), dtypes.string


def _reduce_join_kernel(x, axis, keepdims, separator):
    # NOTE: TensorFlow joins with the first axis listed varying fastest, so the listed axes
    # go last in the transposition in reverse order: axis=[0, 1] of [[a, b], [c, d]] joins
    # a, c, b, d.
    axes = _reduce_axes(axis, x.ndim)
    kept = [d for d in range(x.ndim) if d not in axes]
    rows = np.transpose(x, kept + list(reversed(axes)))
    rows = rows.reshape([x.shape[d] for d in kept] + [-1])
    out = np.empty(rows.shape[:-1], dtype=object)
    for index in np.ndindex(out.shape):
        out[index] = separator.join(rows[index])
    if keepdims:
        out = out.reshape([1 if d in axes else n for d, n in enumerate(x.shape)])
    return out


REDUCE_JOIN = string_op("reduce_join", _infer_reduce_join, _reduce_join_kernel)


def _static_axis(axis):
    """`axis` (None, an int, a list of ints or a tensor with a value) as None, an int or a
    tuple of ints."""
    if axis is None or isinstance(axis, (int, np.integer)):
        return None if axis is None else int(axis)
    if isinstance(axis, (list, tuple)):
        return tuple(_static_axis(a) for a in axis)
    value = as_tensor(axis)._value
    if value is None:
        raise TypeError(
            "tt.strings.reduce_join takes axis as ints or a tensor with a value, not one known "
            "only when a traced function runs"
        )
    value = np.asarray(value)
    if value.dtype.kind not in "iu" or value.ndim > 1:
        raise TypeError(f"axis must be an int or a vector of ints, not {value!r}")
    return int(value) if value.ndim == 0 else tuple(int(a) for a in value)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """The strings along `axis` (all axes when None) joined with `separator`. With several
    axes, as in TensorFlow, the first listed varies fastest: axis=[0, 1] of
    [["a", "b"], ["c", "d"]] with separator "|" gives b"a|c|b|d". An axis out of range
    raises TensorFlow's OutOfRangeError, one given twice its InvalidArgumentError."""
    attrs = {
        "axis": _static_axis(axis),
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


def elementwise_to(dtype):
    """The shape rule of an op from each string to a value of `dtype`."""

    def infer(attrs, x):
        expect_strings(x)
        return x.shape, dtype

    return infer


def _utf8_length(value):
    """The characters of UTF-8 bytes as TensorFlow counts them: the bytes that are not
    continuation bytes (10xxxxxx), so a truncated sequence is one and a stray one none."""
    return len(value) - sum((byte & 0xC0) == 0x80 for byte in value)


def _length_kernel(x, unit):
    count = len if unit == "BYTE" else _utf8_length
    return each_element(count, x, dtype=np.int32)


STRING_LENGTH = string_op("string_length", elementwise_to(dtypes.int32), _length_kernel)


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
        # NOTE: TensorFlow takes a negative len as "to the end" in bytes, and as nothing in
        # characters
        part = text[first:] if size < 0 else text[first : first + size]
        if size < 0 and unit != "BYTE":
            part = ""
        return part if unit == "BYTE" else part.encode("utf-8", errors="surrogateescape")

    return each_element(cut, x)


SUBSTR = string_op("substr", elementwise_to(dtypes.string), _substr_kernel)


def substr(input, pos, len, unit="BYTE", name=None):
    """Each string's part of `len` bytes (or characters) from `pos` (negative: from the
    end); TensorFlow's InvalidArgumentError where `pos` lies outside a string. `pos` and
    `len` are scalars known when the op is made; a negative `len` takes the rest of each
    string in bytes, nothing in characters (as TensorFlow)."""
    _check_unit(unit)
    start, size = static_int(pos), static_int(len)
    if start is None or size is None:
        raise TypeError("tt.strings.substr takes pos and len as Python ints or tensors with values")
    return apply(SUBSTR, (as_tensor(input),), {"start": start, "size": size, "unit": unit})


def _case_kernel(method):
    def run(x, encoding):
        if encoding == "":  # TensorFlow changes ASCII letters only
            return each_element(getattr(bytes, method), x)
        # an invalid byte becomes U+FFFD, as in TensorFlow
        return each_element(lambda s: getattr(s.decode(encoding, "replace"), method)().encode(), x)

    return run


STRING_UPPER = string_op("string_upper", elementwise_to(dtypes.string), _case_kernel("upper"))
STRING_LOWER = string_op("string_lower", elementwise_to(dtypes.string), _case_kernel("lower"))
STRING_STRIP = string_op(
    "string_strip", elementwise_to(dtypes.string), lambda x: each_element(bytes.strip, x)
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


def _decode(value):
    return value.decode("utf-8", errors="surrogateescape")


def _encode(text):
    return text.encode("utf-8", errors="surrogateescape")


def _static_string(value, what):
    """`value` (a str, bytes or a scalar string tensor with a value) as bytes."""
    if isinstance(value, (str, bytes)):
        return _as_bytes(value, what)
    known = getattr(as_tensor(value), "_value", None)
    if known is None or np.ndim(known) != 0 or not isinstance(known[()], bytes):
        raise TypeError(f"{what} must be a str, bytes or a scalar string tensor with a value")
    return known[()]


def _full_match_kernel(x, pattern):
    compiled = re2_syntax.compiled(pattern)
    return each_element(lambda s: compiled.fullmatch(_decode(s)) is not None, x, dtype=bool)


REGEX_FULL_MATCH = string_op("regex_full_match", elementwise_to(dtypes.bool), _full_match_kernel)


def regex_full_match(input, pattern, name=None):
    """Whether each whole string matches the regular expression `pattern`, in RE2's syntax
    on UTF-8 text as in TensorFlow (a str, bytes or a scalar string tensor with a value);
    TensorFlow's InvalidArgumentError for a pattern RE2 refuses."""
    pattern = _static_string(pattern, "pattern")
    re2_syntax.compiled(pattern)
    return apply(REGEX_FULL_MATCH, (as_tensor(input),), {"pattern": pattern})


def _rewrite(rewrite):
    """RE2's reading of a rewrite: its pieces (text, or a group's number) up to the first
    invalid escape, whether it has none, and the largest group it names."""
    pieces, valid, at = [], True, 0
    while at < len(rewrite):
        char, at = rewrite[at], at + 1
        if char != "\\":
            pieces.append(char)
            continue
        escaped, at = rewrite[at : at + 1], at + 1
        if escaped and escaped in "0123456789":
            pieces.append(int(escaped))
        elif escaped == "\\":
            pieces.append("\\")
        else:  # RE2 stops there (and logs "invalid rewrite pattern")
            valid = False
            break
    groups = [int(g) for g in re.findall(r"\\([\s\S])", rewrite) if g in "0123456789"]
    return pieces, valid, max(groups, default=0)


def _replace_kernel(x, pattern, rewrite, replace_global):
    # NOTE: RE2::Replace and GlobalReplace's rules: a rewrite naming a group the pattern lacks
    # leaves the string as it is; one with an invalid escape leaves it too (Replace), or
    # writes each match's rewrite up to that escape (GlobalReplace); an empty match right
    # after the last match is skipped.
    compiled = re2_syntax.compiled(pattern)
    pieces, valid, most = _rewrite(_decode(rewrite))

    def expand(match):
        return "".join(p if isinstance(p, str) else match.group(p) or "" for p in pieces)

    def first(value):
        text = _decode(value)
        match = compiled.search(text)
        if match is None or not valid:
            return value
        return _encode(text[: match.start()] + expand(match) + text[match.end() :])

    def every(value):
        text, out, at, last_end = _decode(value), [], 0, -1
        while at <= len(text):
            match = compiled.search(text, at)
            if match is None:
                break
            out.append(text[at : match.start()])
            if match.start() == last_end and match.end() == match.start():
                out.append(text[at : at + 1])
                at += 1
                continue
            out.append(expand(match))
            at = last_end = match.end()
        if last_end < 0:
            return value
        out.append(text[at:])
        return _encode("".join(out))

    if most > compiled.groups:
        return each_element(lambda s: s, x)
    return each_element(every if replace_global else first, x)


REGEX_REPLACE = string_op("regex_replace", elementwise_to(dtypes.string), _replace_kernel)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Each string with the matches of `pattern` (RE2's syntax, as regex_full_match) replaced
    by `rewrite` (`\\1` for a group, `\\0` for the whole match, `\\\\` for a backslash), all
    of them or only the first."""
    pattern = _static_string(pattern, "pattern")
    re2_syntax.compiled(pattern)
    attrs = {
        "pattern": pattern,
        "rewrite": _static_string(rewrite, "rewrite"),
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
        return each_element(lambda v: b"true" if v else b"false", x)
    element = _number_format(x.dtype, precision, scientific, shortest, width, fill)
    if x.dtype.kind == "c":
        return each_element(lambda v: f"({element % v.real},{element % v.imag})".encode(), x)
    return each_element(lambda v: (element % v).encode(), x)


AS_STRING = string_op("as_string", _infer_as_string, _as_string_kernel)


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
    expect_strings(x)
    return x.shape, attrs["out_type"]


# TensorFlow's StringToNumber parses as absl's SimpleAtof/SimpleAtod and SimpleAtoi do: ASCII
# whitespace around, a sign, then C's decimal or hexadecimal (0x, with an optional p exponent)
# float syntax, inf/infinity/nan/nan(chars) in any case; integers in decimal digits only.
_WHITESPACE = b" \t\n\v\f\r"
_DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX = re.compile(
    rb"([+-]?)0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP]([+-]?[0-9]+))?"
)
_SPECIAL = re.compile(rb"[+-]?(?:inf|infinity|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)
_INTEGER = re.compile(rb"[+-]?[0-9]+")


def _exact(text):
    """The exact value of a decimal or hexadecimal float literal that `_parse_float` took."""
    match = _HEX.fullmatch(text)
    if match is None:
        return Fraction(text.decode())
    sign, digits, exponent = match.groups()
    whole, _, fraction = digits.partition(b".")
    value = Fraction(int(whole + fraction, 16)) * Fraction(2) ** (
        int(exponent or 0) - 4 * len(fraction)
    )
    return -value if sign == b"-" else value


def _parse_float(text, dtype):
    """`text` (stripped) as a number of `dtype` (float32 or float64), or None, rounded once
    to nearest as C's strtof and strtod do."""
    if _SPECIAL.fullmatch(text):
        return np.array(float(text.split(b"(")[0]), dtype)[()]
    if _DECIMAL.fullmatch(text):
        value = float(text)
    elif _HEX.fullmatch(text):
        value = float.fromhex(text.decode())
    else:
        return None
    if dtype == np.float64:
        return np.float64(value)
    with np.errstate(over="ignore"):
        single = np.float32(value)
    if not np.isfinite(single) or float(single) == value:
        return single
    # NOTE: rounding to the nearest double and then to the nearest float32 can differ from
    # rounding once, where the double lies exactly halfway between two float32s.
    other = np.nextafter(single, np.float32(np.inf if value > float(single) else -np.inf))
    if float(single) + float(other) == 2 * value:
        exact = _exact(text)
        if exact != value:
            return single if (exact > value) == (float(single) > value) else other
    return single


def _parse_int(text, dtype):
    """`text` (stripped) as an integer of `dtype` (int32 or int64), or None."""
    if not _INTEGER.fullmatch(text):
        return None
    value, limits = int(text), np.iinfo(dtype)
    return dtype.type(value) if limits.min <= value <= limits.max else None


def _to_number_kernel(x, out_type):
    dtype = np.dtype(out_type.as_numpy_dtype)
    parse = _parse_int if out_type.is_integer else _parse_float

    def number(value):
        result = parse(value.strip(_WHITESPACE), dtype)
        if result is None:
            raise InvalidArgumentError(
                None,
                None,
                "StringToNumberOp could not correctly convert string: "
                + value.decode(errors="replace"),
            )
        return result

    return each_element(number, x, dtype=dtype)


STRING_TO_NUMBER = string_op("string_to_number", _infer_to_number, _to_number_kernel)


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


STRING_FORMAT = string_op("string_format", _infer_format, _format_kernel)


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


# --- files ---------------------------------------------------------------------------------


def _read_kernel(x):
    def read(path):
        try:
            with open(path, "rb") as file:
                return file.read()
        except OSError as error:
            raise errors.NotFoundError(
                None, None, f"read_file: {path.decode(errors='replace')}: {error.strerror}"
            ) from None

    return each_element(read, np.asarray(x))


READ_FILE = string_op("read_file", elementwise_to(dtypes.string), _read_kernel)


def read_file(filename, name=None):
    """The bytes of the file each string names, as a string (`tf.io.read_file`); a file
    that cannot be read is a NotFoundError naming it."""
    return apply(READ_FILE, (as_tensor(filename),), {})


def write_file(filename, contents, name=None):
    """Write the bytes of the scalar string `contents` to the file `filename` names, as
    `tf.io.write_file` (the user's path, as given); a file that cannot be written is a
    NotFoundError naming it. Eager, or where both are known when a function is traced."""
    path = np.asarray(known_value(as_tensor(filename), "tt.io.write_file: filename"))[()]
    data = np.asarray(known_value(as_tensor(contents), "tt.io.write_file: contents"))[()]
    if not isinstance(path, bytes) or not isinstance(data, bytes):
        raise TypeError("tt.io.write_file: filename and contents must be scalar strings")
    try:
        with open(path, "wb") as file:
            file.write(data)
    except OSError as error:
        raise errors.NotFoundError(
            None, None, f"write_file: {path.decode(errors='replace')}: {error.strerror}"
        ) from None
