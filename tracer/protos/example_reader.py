"""The features of a serialized `tf.train.Example`, read straight from its bytes for
`tt.io.parse_example` (no message objects made): each feature's kind and values.

The wire format is read as protobuf reads it: a field that occurs twice merges (a map key
given twice keeps the last entry; a Feature's kind is the last one given, whose values
add up over its occurrences), packed and unpacked values alike, unknown fields passed over.

>>> from tracer.train import Example, Feature, Features, Int64List
>>> data = Example(features=Features(feature={"id": Feature(int64_list=Int64List(value=[7]))}))
>>> kind, values = read_example(data.SerializeToString())["id"]
>>> kind, values.tolist()
('int64', [7])
"""

import numpy as np

from tracer.protos import wire
from tracer.protos.wire import DecodeError

KINDS = {1: "bytes", 2: "float", 3: "int64"}  # Feature's oneof, by field number


def read_example(data):
    """{key: (kind, values)} of the Example `data` (bytes): kind "bytes" (values a list of
    bytes), "float" (a float32 array) or "int64" (an int64 array), or (None, None) for a
    Feature with none set. DecodeError where `data` is not an Example."""
    features = {}
    for number, wire_type, value, _, _ in wire.fields(data):
        if number == 1 and wire_type == wire.LENGTH:  # Example.features
            for entry_number, entry_type, entry, _, _ in wire.fields(value):
                if entry_number == 1 and entry_type == wire.LENGTH:  # Features.feature
                    key, feature = _entry(entry)
                    features[key] = feature
    return features


def _entry(data):
    key, kind, parts = b"", None, None
    for number, wire_type, value, _, _ in wire.fields(data):
        if wire_type != wire.LENGTH:
            continue
        if number == 1:
            key = value
        elif number == 2:  # a Feature: occurrences merge
            kind, parts = _feature(value, kind, parts)
    try:
        key = key.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("a feature's key is not UTF-8") from None
    if kind is None:
        return key, (None, None)
    if kind == "bytes":
        return key, (kind, parts)
    dtype = np.float32 if kind == "float" else np.int64
    return key, (
        kind,
        np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype),
    )


def _feature(data, kind, parts):
    """(kind, parts of its values) after the Feature `data`, merged into `kind` and `parts`:
    a list of another kind replaces them, one of the same kind adds to them."""
    for number, wire_type, value, _, _ in wire.fields(data):
        if number not in KINDS or wire_type != wire.LENGTH:
            continue
        if KINDS[number] != kind:
            kind, parts = KINDS[number], []
        parts = parts + _list_values(kind, value)
    return kind, parts


def _list_values(kind, data):
    """The values of a BytesList (bytes), or the parts (arrays) of those of a FloatList or
    an Int64List, from its bytes."""
    parts = []
    for number, wire_type, value, _, _ in wire.fields(data):
        if number != 1:
            continue
        if kind == "bytes" and wire_type == wire.LENGTH:
            parts.append(bytes(value))
        elif kind == "float" and wire_type in (wire.LENGTH, wire.FIXED32):
            if len(value) % 4:
                raise DecodeError("a packed float field's length is not a multiple of 4")
            parts.append(np.frombuffer(value, "<f4"))
        elif kind == "int64" and wire_type == wire.LENGTH:
            parts.append(wire.packed_varints_array(value))
        elif kind == "int64" and wire_type == wire.VARINT:
            parts.append(np.array([wire.signed64(value)], np.int64))
    return parts
