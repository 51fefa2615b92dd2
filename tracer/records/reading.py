"""The records of TFRecord files, read as `tt.data.TFRecordDataset` and
`tt.compat.v1.io.tf_record_iterator` read them: a file at a time, opened when reached."""

from tracer.records.compression import Inflating, compression_name, open_file
from tracer.records.framing import read_framed

# how TensorFlow's message ends where a record is cut short, by the kind of stream
_CUT_SHORT = {"": "Read less bytes than requested", "ZLIB": "EOF reached", "GZIP": "EOF reached"}


def records_of(path, compression_type=None):
    """The data (bytes) of each record of the file at `path`, compressed as
    `compression_type` says ("", "ZLIB", "GZIP", None, or TFRecordOptions); the file is
    closed at the end, or when the generator is.

    NotFoundError where the file is missing; DataLossError where a record is damaged or cut
    short, or the compressed data is not (tracer/records/framing.py, compression.py).
    """
    compression = compression_name(compression_type)
    with open_file(path, "rb") as raw:
        stream = Inflating(raw, compression) if compression else raw
        yield from read_framed(stream, _CUT_SHORT[compression])
