"""The messages of an event file (TensorBoard's `Event`, `Summary`, `TensorProto`), as bytes.

Each function returns one serialized message; they nest as the protos do:

    event(wall_time, step, summary=summary_value(tag, tensor_proto(array), "scalars"))

Only the fields TensorFlow 2's summaries use are written, in its order, so for the same
inputs the bytes are TensorFlow's apart from `wall_time`.
"""

import numpy as np

from tracer.summary.protobuf import (
    bytes_field,
    double_field,
    message_field,
    repeated_bytes_field,
    string_field,
    varint_field,
)

FILE_VERSION = "brain.Event:2"
WRITER = "tracer.summary"  # the first event's `source_metadata.writer`

# TensorProto's dtype enum (tensorflow/core/framework/types.proto)
DATA_TYPES = {
    np.dtype(np.float32): 1,
    np.dtype(np.float64): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4,
    np.dtype(np.int16): 5,
    np.dtype(np.int8): 6,
    np.dtype(np.int64): 9,
    np.dtype(np.bool_): 10,
    np.dtype(np.uint16): 17,
    np.dtype(np.float16): 19,
}
DT_STRING = 7


def tensor_proto(array):
    """A numeric array as a TensorProto: dtype, shape, and its bytes (little-endian, C order)
    in `tensor_content`."""
    array = np.asarray(array)
    dtype = array.dtype.newbyteorder("<")
    content = np.ascontiguousarray(array, dtype=dtype).tobytes()
    return (
        varint_field(1, DATA_TYPES[np.dtype(array.dtype.type)])
        + message_field(2, _shape(array.shape))
        + bytes_field(4, content)
    )


def string_tensor_proto(strings, shape):
    """A string tensor (`strings`: a flat list of bytes) as a TensorProto (`string_val`)."""
    return (
        varint_field(1, DT_STRING)
        + message_field(2, _shape(shape))
        + repeated_bytes_field(8, strings)
    )


def _shape(shape):
    return b"".join(message_field(2, varint_field(1, size)) for size in shape)


def summary_value(tag, tensor, plugin_name, description=None, content=b""):
    """A `Summary` of one value: `tag`, a TensorProto (bytes), and the plugin that shows it
    (with its `content`, bytes, which some plugins read)."""
    plugin_data = string_field(1, plugin_name) + bytes_field(2, content)
    metadata = message_field(1, plugin_data) + string_field(3, description or "")
    value = string_field(1, tag) + message_field(8, tensor) + message_field(9, metadata)
    return message_field(1, value)


def event(wall_time, step=0, summary=None, graph_def=None, tagged_run_metadata=None):
    """An `Event` at `wall_time` (seconds since the epoch) and `step`, holding `summary`, a
    serialized `graph_def` or a `tagged_run_metadata` message (summary/graphs.py)."""
    return (
        double_field(1, wall_time)
        + varint_field(2, step)
        + (b"" if graph_def is None else message_field(4, graph_def))
        + (b"" if summary is None else message_field(5, summary))
        + (b"" if tagged_run_metadata is None else message_field(8, tagged_run_metadata))
    )


def file_version_event(wall_time):
    """The event every file starts with: its format version and who wrote it."""
    return (
        double_field(1, wall_time)
        + string_field(3, FILE_VERSION)
        + message_field(10, string_field(1, WRITER))
    )
