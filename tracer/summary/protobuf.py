"""The protocol buffer wire format, written by hand for the few messages event files hold.

A message is the concatenation of its fields; each field is a key (field number << 3 | wire
type, as a varint) and its value. Fields are written in the order of their numbers, and
scalar fields at their default (0, "") are left out, as the C++ serializer does, so the bytes
equal TensorFlow's.

>>> (varint_field(2, 3) + string_field(1, "ab")).hex(" ")
'10 03 0a 02 61 62'
"""

import struct

from tracer.protos.wire import key as _key
from tracer.protos.wire import varint

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


def varint_field(number, value):
    """An int64, int32, enum or bool field; nothing at 0."""
    return _key(number, _VARINT) + varint(int(value)) if value else b""


def double_field(number, value):
    """A double field; nothing at 0.0."""
    return _key(number, _FIXED64) + struct.pack("<d", value) if value else b""


def bytes_field(number, value):
    """A bytes field; nothing when empty."""
    return _key(number, _BYTES) + varint(len(value)) + value if value else b""


def string_field(number, value):
    """A string field (UTF-8); nothing when empty."""
    return bytes_field(number, value.encode("utf-8"))


def message_field(number, value):
    """A message field: written even when the message is empty (a message that is set)."""
    return _key(number, _BYTES) + varint(len(value)) + value


def repeated_bytes_field(number, values):
    """A repeated bytes or string field: one key and value per element, empty ones too."""
    return b"".join(_key(number, _BYTES) + varint(len(v)) + v for v in values)
