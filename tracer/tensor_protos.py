"""`tt.io.serialize_tensor` and `tt.io.parse_tensor`: a tensor as the bytes of TensorFlow's
TensorProto and back (tensorflow/core/framework/tensor.proto), the same bytes as
TensorFlow's.

A TensorProto holds its dtype (1, TensorFlow's enum), its shape (2: a TensorShapeProto, a
`dim` (2) of a `size` (1) per dimension), and its values: a number tensor's as little-endian
bytes (4, tensor_content), a string tensor's each its own field (8, string_val). Read, the
typed value lists other writers use (float_val, int64_val, ...) are taken too, one value
standing for all where there is one, as TensorFlow reads them.

    >>> data = serialize_tensor(tt.constant([1.0, 2.0]))
    >>> parse_tensor(data, tt.float32).numpy().tolist()
    [1.0, 2.0]

Both need the tensor's value: in a traced function, the function runs as Python at each
call (the parsed tensor's shape is known only from its bytes).
"""

import base64

import numpy as np

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.ops.convert import as_tensor, length_value
from tracer.protos import wire
from tracer.tensor import constant

# TensorFlow's DataType enum, by tracer's dtype names
_ENUM = {
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "string": 7,
    "complex64": 8,
    "int64": 9,
    "bool": 10,
    "uint16": 17,
    "complex128": 18,
    "float16": 19,
    "uint32": 22,
    "uint64": 23,
}
_NAMES = {number: name for name, number in _ENUM.items()}
# TensorFlow's names of the dtypes in its messages
_SHOWN = {"float32": "float", "float64": "double", "float16": "half"}
# the typed value lists: field number -> (wire decoder of one occurrence, dtypes they serve)
_FLOAT_VAL, _DOUBLE_VAL, _INT_VAL, _STRING_VAL, _INT64_VAL, _BOOL_VAL = 5, 6, 7, 8, 10, 11


def serialize_tensor(tensor, name=None):
    """The TensorProto bytes of `tensor`, as a tt.string scalar."""
    tensor = as_tensor(tensor)
    value = np.asarray(length_value(tensor, "the tensor tt.io.serialize_tensor writes"))
    dtype = tensor.dtype
    if dtype.name not in _ENUM:
        raise TypeError(f"tt.io.serialize_tensor: no TensorProto dtype for {dtype.name}")
    dims = b"".join(
        wire.length_delimited(2, wire.key(1, wire.VARINT) + wire.varint(d) if d else b"")
        for d in value.shape
    )
    parts = [
        wire.key(1, wire.VARINT) + wire.varint(_ENUM[dtype.name]),
        wire.length_delimited(2, dims),
    ]
    if dtype.is_string:
        parts += [wire.length_delimited(_STRING_VAL, _bytes(v)) for v in value.reshape(-1)]
    elif value.size:
        content = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<")).tobytes()
        parts.append(wire.length_delimited(4, content))
    return constant(np.array(b"".join(parts), dtype=object))


def parse_tensor(serialized, out_type, name=None):
    """The tensor of the TensorProto bytes `serialized` (a tt.string scalar), which must be
    of dtype `out_type`: InvalidArgumentError otherwise, or where they are no TensorProto."""
    out_type = dtypes.as_dtype(out_type)
    data = np.asarray(
        length_value(as_tensor(serialized), "the TensorProto tt.io.parse_tensor reads")
    )
    if data.dtype != object or data.ndim != 0:
        raise InvalidArgumentError(
            None,
            None,
            f"Expected `serialized` to be a scalar, got shape: [{','.join(map(str, data.shape))}]",
        )
    data = data[()]
    try:
        number, shape, content, lists = _read(data)
    except wire.DecodeError:
        shown = base64.b64encode(data[:1000]).decode()
        raise InvalidArgumentError(
            None, None, f"Could not parse `serialized` as TensorProto, base64: {shown}"
        ) from None
    name = _NAMES.get(number)
    if name != out_type.name:
        found = _SHOWN.get(name, name) if name else f"enum {number}"
        raise InvalidArgumentError(
            None,
            None,
            f"Type mismatch between parsed tensor ({found}) and dtype "
            f"({_SHOWN.get(out_type.name, out_type.name)})",
        )
    return constant(_values(out_type, shape, content, lists))


def _bytes(value):
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _read(data):
    """(dtype enum, shape, tensor_content, {field: [occurrences]}) of a TensorProto's bytes."""
    number, shape, content, lists = 0, [], b"", {}
    for field, wire_type, value, _, _ in wire.fields(data):
        if field == 1 and wire_type == wire.VARINT:
            number = value
        elif field == 2 and wire_type == wire.LENGTH:
            shape = _shape(value)
        elif field == 4 and wire_type == wire.LENGTH:
            content = value
        elif field in (_FLOAT_VAL, _DOUBLE_VAL, _INT_VAL, _STRING_VAL, _INT64_VAL, _BOOL_VAL):
            lists.setdefault(field, []).append((wire_type, value))
    return number, shape, content, lists


def _shape(data):
    shape = []
    for field, wire_type, value, _, _ in wire.fields(data):
        if field == 2 and wire_type == wire.LENGTH:
            size = 0
            for part, part_type, part_value, _, _ in wire.fields(value):
                if part == 1 and part_type == wire.VARINT:
                    size = wire.signed64(part_value)
            if size < 0:
                raise wire.DecodeError("a negative size")
            shape.append(size)
    return shape


def _values(dtype, shape, content, lists):
    """The array the proto's values make: its content, or a typed list (one value standing
    for every element), or zeros where there is none."""
    count = int(np.prod(shape, dtype=np.int64))
    numpy_dtype = object if dtype.is_string else np.dtype(dtype.as_numpy_dtype)
    if dtype.is_string:
        values = [bytes(v) for _, v in lists.get(_STRING_VAL, [])]
    elif content:
        if len(content) != count * numpy_dtype.itemsize:
            raise InvalidArgumentError(
                None, None, "Cannot parse tensor from proto: its content does not fit its shape"
            )
        return (
            np.frombuffer(content, numpy_dtype.newbyteorder("<")).astype(numpy_dtype).reshape(shape)
        )
    else:
        values = _typed_values(dtype, lists)
    if not values:
        return np.full(shape, b"" if dtype.is_string else 0, dtype=numpy_dtype)
    if len(values) not in (1, count):
        raise InvalidArgumentError(
            None, None, "Cannot parse tensor from proto: its values do not fit its shape"
        )
    array = np.empty(len(values), dtype=numpy_dtype)
    array[:] = values
    return np.broadcast_to(array, (count,)).reshape(shape).copy()


def _typed_values(dtype, lists):
    """The values of the typed list that serves `dtype`, in order."""
    if dtype == dtypes.float32:
        field, read = _FLOAT_VAL, ("<f4", 4)
    elif dtype == dtypes.float64:
        field, read = _DOUBLE_VAL, ("<f8", 8)
    elif dtype == dtypes.int64:
        field, read = _INT64_VAL, None
    elif dtype == dtypes.bool:
        field, read = _BOOL_VAL, None
    else:
        field, read = _INT_VAL, None
    values = []
    for wire_type, value in lists.get(field, []):
        if read is not None:
            fixed = wire.FIXED32 if read[1] == 4 else wire.FIXED64
            if wire_type in (wire.LENGTH, fixed) and len(value) % read[1] == 0:
                values += np.frombuffer(value, read[0]).tolist()
        elif wire_type == wire.LENGTH:
            values += wire.packed_varints(value)
        elif wire_type == wire.VARINT:
            values.append(wire.signed64(value))
    return values
