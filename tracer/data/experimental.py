"""`tt.data.experimental`: the names TensorFlow kept there."""

from tracer.data.dataset import AUTOTUNE
from tracer.data.specs import INFINITE, UNKNOWN

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN


def cardinality(dataset):
    """The dataset's cardinality (`Dataset.cardinality()`)."""
    return dataset.cardinality()


__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "cardinality"]
