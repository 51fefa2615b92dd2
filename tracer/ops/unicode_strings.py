"""TensorFlow's `tf.strings.unicode_*`: strings to code points and characters (with where
each starts), code points to strings, and strings from one encoding to another.

Decoding reads any encoding Python's codecs know (TensorFlow's ICU knows about as many;
an unknown name is an InvalidArgumentError); encoding writes UTF-8, UTF-16-BE or UTF-32-BE,
TensorFlow's three. Bytes that are no character become `replacement_char` (U+FFFD by
default, one for each longest run that could start a character, as ICU and Python both
cut them), are dropped (errors="ignore") or raise InvalidArgumentError ("strict"); with
`replace_control_characters`, C0 controls (U+0000 to U+001F) become `replacement_char` too.
A character's offset is where its bytes start in the input; a replaced run's is where the
run starts. The strings must be known (eagerly, or constants of a traced function), as for
tracer/ops/string_splits.py, whose shapes the results take.
"""

import codecs
import threading

import numpy as np

from tracer.errors import InvalidArgumentError
from tracer.ops.convert import as_tensor, length_value
from tracer.ops.string_splits import each_string, string_vector

OUTPUT_ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")
_ERRORS = ("replace", "ignore", "strict")
_spans = threading.local()  # the (start, end) of each run a decode replaced or dropped
_handlers = set()


def _handler(errors, replacement_char):
    """The name of a codecs error handler that records each run it is called for in
    `_spans.found` and puts `replacement_char` there (nothing, for "ignore")."""
    name = f"tracer.unicode.{errors}.{replacement_char}"
    if name not in _handlers:
        put = "" if errors == "ignore" else chr(replacement_char)

        def handle(error):
            _spans.found.append((error.start, error.end))
            return put, error.end

        codecs.register_error(name, handle)
        _handlers.add(name)
    return name


def _codec(encoding, what):
    try:
        return codecs.lookup(encoding)
    except LookupError:
        raise InvalidArgumentError(
            None, None, f"{what}: could not create a converter for the encoding {encoding!r}"
        ) from None


def _check_options(errors, replacement_char, what):
    if errors not in _ERRORS:
        raise InvalidArgumentError(
            None, None, f"{what}: errors must be one of {', '.join(_ERRORS)}, not {errors!r}"
        )
    if not (0 <= int(replacement_char) <= 0x10FFFF) or 0xD800 <= int(replacement_char) < 0xE000:
        raise InvalidArgumentError(
            None, None, f"{what}: replacement_char {replacement_char} is not a Unicode character"
        )


def characters(value, encoding, errors, replacement_char, control, what):
    """The characters of the bytes `value` in `encoding`, and the offset where each starts."""
    _check_options(errors, replacement_char, what)
    codec = _codec(encoding, what)
    _spans.found = []
    try:
        text = codec.decode(
            value, "strict" if errors == "strict" else _handler(errors, replacement_char)
        )[0]
    except UnicodeDecodeError as error:
        raise InvalidArgumentError(
            None, None, f"{what}: invalid {encoding} in {value!r}: {error}"
        ) from None
    spans, offsets, position = _spans.found, [], 0
    encoder = codec.incrementalencoder()  # (a byte order mark counts once, in the first)
    for char in text:
        while errors == "ignore" and spans and spans[0][0] == position:
            position = spans.pop(0)[1]  # a dropped run: no character starts there
        offsets.append(position)
        if errors != "ignore" and spans and spans[0][0] == position:
            position = spans.pop(0)[1]  # the replaced run
        else:
            position += len(encoder.encode(char))
    if control:
        text = "".join(chr(replacement_char) if ord(c) < 0x20 else c for c in text)
    return text, offsets


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533, replace_control_characters=False, name=None):  # fmt: skip
    """The code points of each string, int32, as tf.strings.unicode_decode.

    >>> tt.strings.unicode_decode(tt.constant("h\\u00e9"), "UTF-8").numpy()
    array([104, 233], dtype=int32)
    """
    return _decoded(input, input_encoding, errors, replacement_char, replace_control_characters)[0]


def unicode_decode_with_offsets(input, input_encoding, errors="replace", replacement_char=65533, replace_control_characters=False, name=None):  # fmt: skip
    """(code points int32, the byte offset where each starts int64), as TensorFlow's."""
    return _decoded(input, input_encoding, errors, replacement_char, replace_control_characters)


def _decoded(input, encoding, errors, replacement_char, control):
    def points(text):
        return as_tensor(np.array([ord(c) for c in text], dtype=np.int32))

    what = "tt.strings.unicode_decode"
    return _with_offsets(input, encoding, errors, replacement_char, control, what, points)


def _with_offsets(input, encoding, errors, replacement_char, control, what, parts):
    """(`parts(text)` of each string's characters, the offset where each starts), in the
    shapes of `each_string`."""

    def cut(k):
        def of(value):
            text, offsets = characters(value, encoding, errors, replacement_char, control, what)
            return parts(text) if k == 0 else as_tensor(np.array(offsets, dtype=np.int64))

        return of

    return each_string(input, what, cut(0)), each_string(input, what, cut(1))


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):
    """Each string's characters, each a string of its bytes in `input_encoding` (a replaced
    run: `replacement_char` in that encoding), as tf.strings.unicode_split."""
    return _split(input, input_encoding, errors, replacement_char)[0]


def unicode_split_with_offsets(input, input_encoding, errors="replace", replacement_char=65533, name=None):  # fmt: skip
    """(the characters, as unicode_split, the byte offset where each starts int64)."""
    return _split(input, input_encoding, errors, replacement_char)


def _split(input, encoding, errors, replacement_char):
    what = "tt.strings.unicode_split"
    name = _codec(encoding, what).name

    def characters_of(text):
        return string_vector([c.encode(name) for c in text])

    return _with_offsets(input, encoding, errors, replacement_char, False, what, characters_of)


def _encoder(output_encoding, what):
    if output_encoding not in OUTPUT_ENCODINGS:
        raise InvalidArgumentError(
            None,
            None,
            f"{what}: output_encoding must be one of {', '.join(OUTPUT_ENCODINGS)}, not "
            f"{output_encoding!r}",
        )
    return _codec(output_encoding, what).name


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533, name=None):
    """Code points (int32, rank 1 or more, or a RaggedTensor) as strings in `output_encoding`:
    the innermost axis becomes one string, as tf.strings.unicode_encode. A value that is no
    Unicode scalar (negative, above U+10FFFF, a surrogate) is `replacement_char`, dropped
    ("ignore") or an InvalidArgumentError ("strict").

    >>> tt.strings.unicode_encode(tt.constant([104, 233]), "UTF-8").numpy()
    b'h\\xc3\\xa9'
    """
    from tracer.ragged_tensor import RaggedTensor

    what = "tt.strings.unicode_encode"
    _check_options(errors, replacement_char, what)
    codec = _encoder(output_encoding, what)
    if isinstance(input, RaggedTensor):
        if input.ragged_rank > 1:
            return input.with_values(
                unicode_encode(input.values, output_encoding, errors, replacement_char)
            )
        points = np.asarray(length_value(as_tensor(input.values), f"{what}'s input"))
        splits = np.asarray(length_value(as_tensor(input.row_splits), f"{what}'s input"))
        rows = [points[a:b] for a, b in zip(splits[:-1], splits[1:])]
        return string_vector([_encoded(r, codec, errors, replacement_char, what) for r in rows])
    points = np.asarray(length_value(as_tensor(input), f"{what}'s input"))
    if points.ndim < 1:
        raise ValueError(f"{what}: input's rank must be at least 1, not a scalar")
    rows = points.reshape(int(np.prod(points.shape[:-1])), points.shape[-1])
    strings = [_encoded(r, codec, errors, replacement_char, what) for r in rows]
    return as_tensor(np.array(strings + [b""], dtype=object)[:-1].reshape(points.shape[:-1]))


def _encoded(points, codec, errors, replacement_char, what):
    chars = []
    for point in points.tolist():
        if 0 <= point <= 0x10FFFF and not 0xD800 <= point < 0xE000:
            chars.append(chr(point))
        elif errors == "replace":
            chars.append(chr(replacement_char))
        elif errors == "strict":
            raise InvalidArgumentError(
                None,
                None,
                f"{what}: code point {point} is out of range for Unicode, or is a surrogate",
            )
    return "".join(chars).encode(codec)


def unicode_transcode(input, input_encoding, output_encoding, errors="replace", replacement_char=65533, replace_control_characters=False, name=None):  # fmt: skip
    """Each string decoded from `input_encoding` (bytes that are no character as in
    unicode_decode) and written in `output_encoding`, as tf.strings.unicode_transcode.

    >>> tt.strings.unicode_transcode(tt.constant(b"h\\xe9"), "ISO-8859-1", "UTF-8").numpy()
    b'h\\xc3\\xa9'
    """
    what = "tt.strings.unicode_transcode"
    codec = _encoder(output_encoding, what)
    control = replace_control_characters
    values = np.asarray(length_value(as_tensor(input), f"{what}'s input"))
    if values.dtype != object or not all(isinstance(v, bytes) for v in values.reshape(-1)):
        raise TypeError(f"{what}: input must be a tt.string tensor")
    out = [
        characters(v, input_encoding, errors, replacement_char, control, what)[0].encode(codec)
        for v in values.reshape(-1)
    ]
    return as_tensor(np.array(out + [b""], dtype=object)[:-1].reshape(values.shape))
