"""`tt.data`: TensorFlow's tf.data input pipelines (`tt.data.Dataset`), in Python, whose
elements come out as tracer Tensors (tracer/data/dataset.py)."""

from tracer.data import experimental
from tracer.data.dataset import AUTOTUNE, Dataset, TextLineDataset
from tracer.data.options import Options
from tracer.data.specs import INFINITE, UNKNOWN, DatasetSpec
from tracer.data.tfrecord import TFRecordDataset

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN

__all__ = [
    "AUTOTUNE",
    "Dataset",
    "DatasetSpec",
    "INFINITE_CARDINALITY",
    "Options",
    "TFRecordDataset",
    "TextLineDataset",
    "UNKNOWN_CARDINALITY",
    "experimental",
]
