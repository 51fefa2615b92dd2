"""`tt.data.experimental`: the names TensorFlow kept there."""

from tracer.data.dataset import AUTOTUNE, Dataset
from tracer.data.specs import INFINITE, UNKNOWN

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN


def cardinality(dataset):
    """The dataset's cardinality (`Dataset.cardinality()`)."""
    return dataset.cardinality()


choose_from_datasets = Dataset.choose_from_datasets
sample_from_datasets = Dataset.sample_from_datasets

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "cardinality",
    "choose_from_datasets",
    "sample_from_datasets",
]
