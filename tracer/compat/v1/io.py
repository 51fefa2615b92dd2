"""`tt.compat.v1.io`: TensorFlow 1's TFRecord functions tracer has (tracer/records/)."""

from tracer.records.compression import TFRecordOptions
from tracer.records.reading import records_of
from tracer.records.writer import TFRecordWriter

__all__ = ["TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]


def tf_record_iterator(path, options=None):
    """The records (bytes) of the TFRecord file at `path`, compressed as `options` says
    (None, "", "ZLIB", "GZIP", or TFRecordOptions), as TensorFlow 1's iterator gives them;
    a damaged record is a DataLossError where it is reached. TensorFlow 2's way is
    `tt.data.TFRecordDataset(path)`."""
    return records_of(path, options)
