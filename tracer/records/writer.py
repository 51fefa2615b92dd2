"""`tt.io.TFRecordWriter`: records written to a TFRecord file, framed
(tracer/records/framing.py) and compressed as asked (compression.py).

    with tt.io.TFRecordWriter("rows.tfrecord", "GZIP") as writer:
        writer.write(example.SerializeToString())

The bytes equal TensorFlow's for the same records and options.
"""

import os

from tracer.errors import FailedPreconditionError
from tracer.records.compression import Deflating, compression_name, open_file
from tracer.records.framing import frame


class TFRecordWriter:
    """Writes records to the file at `path` (made or emptied now; NotFoundError where its
    folder is missing), compressed as `options` says: None, "", "ZLIB", "GZIP", or a
    `tt.io.TFRecordOptions`. A context manager that closes the file at the end."""

    def __init__(self, path, options=None):
        compression = compression_name(options)
        raw = open_file(os.fspath(path), "wb")
        self._file = Deflating(raw, compression, options) if compression else raw

    def write(self, record):
        """Append one record: bytes, or a str (written as UTF-8). FailedPreconditionError
        once the writer is closed."""
        if isinstance(record, str):
            record = record.encode("utf-8")
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"TFRecordWriter.write takes a record as bytes or str, not {type(record).__name__}"
            )
        self._open().write(frame(bytes(record)))

    def flush(self):
        """Write what was written so far through to the file."""
        self._open().flush()

    def close(self):
        """Flush and close the file (closing a closed writer does nothing)."""
        if self._file is not None:
            file, self._file = self._file, None
            file.close()

    def _open(self):
        if self._file is None:
            raise FailedPreconditionError(None, None, "Writer is closed.")
        return self._file

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()
