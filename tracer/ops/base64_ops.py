"""`tt.io.encode_base64` and `decode_base64`: TensorFlow's web-safe base64 of each string.

TensorFlow writes RFC 4648's URL-safe alphabet ("-" and "_" for "+" and "/"), without the
"=" padding unless `pad`, and reads it with or without that padding. Decoding follows
TensorFlow's checks in their order: a character outside the alphabet (a "+", a space, a
misplaced "=") in the whole groups of four, then a length that is 1 modulo 4 once padding
is dropped, then the last group's characters: each an InvalidArgumentError with
TensorFlow's words. String ops, as tracer/ops/string_ops.py's: no gradient, and a compiled
module hands them back to Python.
"""

import base64

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.string_ops import each_element, elementwise_to, string_op

_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _encoded(value, pad):
    text = base64.urlsafe_b64encode(value)
    return text if pad else text.rstrip(b"=")


def _decoded(text):
    if not text:
        return b""
    end = len(text)
    if end % 4 == 0:  # a last whole group may end in one or two "="
        end -= 2 if text[-2:] == b"==" else 1 if text[-1:] == b"=" else 0
    body = text[:end]
    remain = len(body) % 4 or 4
    whole, tail = body[: len(body) - remain], body[len(body) - remain :]
    if not _ALPHABET.issuperset(whole):
        raise InvalidArgumentError(None, None, "Invalid character found in base64.")
    if remain == 1:
        raise InvalidArgumentError(None, None, "Base64 string length cannot be 1 modulo 4.")
    if not _ALPHABET.issuperset(tail):
        raise InvalidArgumentError(None, None, "Invalid character found in base64.")
    padded = body + b"A" * (-len(body) % 4)
    return base64.urlsafe_b64decode(padded)[: len(body) * 3 // 4]


ENCODE_BASE64 = string_op(
    "encode_base64",
    elementwise_to(dtypes.string),
    lambda x, pad: each_element(lambda value: _encoded(value, pad), x),
)
DECODE_BASE64 = string_op(
    "decode_base64", elementwise_to(dtypes.string), lambda x: each_element(_decoded, x)
)


def encode_base64(input, pad=False, name=None):
    """Each string in web-safe base64, "=" padded with `pad`.

    >>> tt.io.encode_base64(tt.constant([b"foo", b"\\xfb\\xff"])).numpy().tolist()
    [b'Zm9v', b'-_8']
    """
    return apply(ENCODE_BASE64, (as_tensor(input),), {"pad": bool(pad)})


def decode_base64(input, name=None):
    """Each web-safe base64 string decoded, with or without its "=" padding.

    >>> tt.io.decode_base64(tt.constant([b"Zm9v", b"Zg=="])).numpy().tolist()
    [b'foo', b'f']
    """
    return apply(DECODE_BASE64, (as_tensor(input),), {})
