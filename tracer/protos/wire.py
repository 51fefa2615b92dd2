"""The protocol buffer wire format, both ways, for the messages tracer writes and reads
itself (tf.train.Example and its parts, TensorProto).

A message is the concatenation of its fields; each field is a key (field number << 3 | wire
type, as a varint) and its value: a varint (0), 8 bytes (1), a length and that many bytes
(2), or 4 bytes (5). Reading takes bytes from anywhere, so every length is checked against
what is there, and malformed data is a DecodeError, never a crash.

>>> (key(2, VARINT) + varint(3) + key(1, LENGTH) + varint(2) + b"ab").hex(" ")
'10 03 0a 02 61 62'
>>> list(fields(bytes.fromhex("10 03 0a 02 61 62")))
[(2, 0, 3, 0, 2), (1, 2, b'ab', 2, 6)]
"""

import struct

import numpy as np

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_MASK64 = (1 << 64) - 1


class DecodeError(Exception):
    """Bytes that are not a message of the type asked for (protobuf's DecodeError)."""


def varint(value):
    """The base-128 varint of a non-negative int, or of a negative one as its 64-bit two's
    complement (ten bytes), as int64 fields hold them."""
    value &= _MASK64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key(number, wire_type):
    """The key of field `number` of `wire_type`."""
    return varint(number << 3 | wire_type)


def length_delimited(number, payload):
    """Field `number` holding `payload` (bytes, a string's UTF-8 or a message's fields)."""
    return key(number, LENGTH) + varint(len(payload)) + payload


def read_varint(data, at):
    """(value, position after it) of the varint at `at` of `data`; DecodeError where it runs
    past the end or past ten bytes."""
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise DecodeError("a varint runs past its data or past ten bytes")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & _MASK64, at
        shift += 7


def signed64(value):
    """A varint's 64 bits as an int64."""
    return value - (1 << 64) if value >> 63 else value


def fields(data):
    """(number, wire type, value, start, end) of each field of the message `data`, in order:
    the value an int (varint), or the bytes of the others; `data[start:end]` the whole field,
    key included."""
    at, end = 0, len(data)
    while at < end:
        start = at
        tag, at = read_varint(data, at)
        number, wire_type = tag >> 3, tag & 7
        if number == 0:
            raise DecodeError("field number 0")
        if wire_type == VARINT:
            value, at = read_varint(data, at)
        elif wire_type == LENGTH:
            size, at = read_varint(data, at)
            if size > end - at:
                raise DecodeError("a length runs past its data")
            value, at = data[at : at + size], at + size
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            if size > end - at:
                raise DecodeError("a fixed-size value runs past its data")
            value, at = data[at : at + size], at + size
        else:  # groups (3, 4), long deprecated, and the unused 6 and 7
            raise DecodeError(f"wire type {wire_type}")
        yield number, wire_type, value, start, at


def packed_varints(data):
    """The int64s of a packed repeated field's bytes, as a list."""
    if len(data) > _NUMPY_FROM:
        return packed_varints_array(data).tolist()
    values, at = [], 0
    while at < len(data):
        value, at = read_varint(data, at)
        values.append(signed64(value))
    return values


_NUMPY_FROM = 48  # bytes of varints from which numpy decodes them faster


def packed_varints_array(data):
    """The int64s of a packed repeated field's bytes, as an int64 array, decoded in numpy:
    a varint ends at each byte under 0x80, and its 7-bit groups are shifted into place and
    added (their bits never overlap; what passes 64 bits falls off, as in C)."""
    raw = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(raw < 0x80)
    if len(raw) and (not len(ends) or ends[-1] != len(raw) - 1):
        raise DecodeError("a varint runs past its data")
    starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else ends
    lengths = ends - starts + 1
    if len(lengths) and lengths.max() > 10:
        raise DecodeError("a varint runs past ten bytes")
    place = np.arange(len(raw)) - np.repeat(starts, lengths)
    groups = (raw & 0x7F).astype(np.uint64) << (7 * place).astype(np.uint64)
    if not len(groups):
        return np.zeros(0, np.int64)
    return np.add.reduceat(groups, starts).view(np.int64)


def packed_floats(data):
    """The floats of a packed repeated float field's bytes (DecodeError unless 4 each)."""
    if len(data) % 4:
        raise DecodeError("a packed float field's length is not a multiple of 4")
    return list(struct.unpack(f"<{len(data) // 4}f", data))
