"""`tt.data.TFRecordDataset`: the records of TFRecord files, each a string scalar (its bytes),
as TensorFlow's; tracer/records/ reads and checks them.

    raw = tt.data.TFRecordDataset(["a.tfrecord", "b.tfrecord"], compression_type="GZIP")
    rows = raw.map(lambda r: tt.io.parse_single_example(r, features))
"""

from tracer.data import files, interleave, sources
from tracer.data.dataset import Dataset
from tracer.data.specs import UNKNOWN
from tracer.records.compression import compression_name
from tracer.records.reading import records_of
from tracer.signature import TensorSpec


class TFRecords:
    """The stage (tracer/data/specs.py) of the records of each file in turn: `filenames` a
    list of names, or the stage of a dataset of names, read each pass. A file is opened when
    a pass reaches it; a damaged record is a DataLossError there, as in TensorFlow."""

    def __init__(self, filenames, compression):
        self._names, self._compression = filenames, compression

    def arrays(self):
        names = self._names.arrays() if hasattr(self._names, "arrays") else iter(self._names)
        for name in names:
            for record in records_of(files.path_of(name), self._compression):
                yield files.string_scalar(record)

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        return TensorSpec((), "string")


class TFRecordDataset(Dataset):
    """The records of TFRecord files: `filenames` a name, names, a string tensor of them, or
    a dataset of names; `compression_type` None, "", "ZLIB" or "GZIP" (ValueError for
    another); `buffer_size` is accepted (tracer reads a chunk at a time); with
    `num_parallel_reads` of 2 or more, that many files are read in turns of a record each,
    TensorFlow's order for it."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):  # fmt: skip
        compression = compression_name(compression_type)
        names = files.file_names(filenames)
        if num_parallel_reads in (None, 1):
            stage = TFRecords(names, compression)
        else:
            if isinstance(names, list):
                names = sources.TensorSlices(files.string_array(names))
            stage = interleave.Interleave(
                names,
                lambda name: TFRecordDataset(name, compression),
                num_parallel_reads,
                1,
                "TFRecordDataset",
            )
        super().__init__(stage, "TFRecordDatasetV2")
