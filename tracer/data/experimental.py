"""`tt.data.experimental`: the names TensorFlow kept there."""

from tracer.data import transforms
from tracer.data.csv_datasets import CsvDataset, make_csv_dataset
from tracer.data.dataset import AUTOTUNE, Dataset
from tracer.data.specs import INFINITE, UNKNOWN

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN


def assert_cardinality(expected_cardinality):
    """A transformation for `Dataset.apply`: the dataset as it is, its cardinality
    `expected_cardinality`, and FailedPreconditionError where it holds fewer or more."""
    return lambda dataset: dataset._then(
        transforms.AssertCardinality(dataset._stage, expected_cardinality)
    )


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=None):
    """A transformation for `Dataset.apply`: `Dataset.ragged_batch`."""
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """A transformation for `Dataset.apply`: `Dataset.group_by_window`."""
    return lambda dataset: dataset.group_by_window(
        key_func, reduce_func, window_size, window_size_func
    )


def cardinality(dataset):
    """The dataset's cardinality (`Dataset.cardinality()`)."""
    return dataset.cardinality()


def get_single_element(dataset):
    """The dataset's only element (`Dataset.get_single_element()`)."""
    return dataset.get_single_element()


choose_from_datasets = Dataset.choose_from_datasets
sample_from_datasets = Dataset.sample_from_datasets

__all__ = [
    "AUTOTUNE",
    "CsvDataset",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "assert_cardinality",
    "cardinality",
    "choose_from_datasets",
    "dense_to_ragged_batch",
    "get_single_element",
    "group_by_window",
    "make_csv_dataset",
    "sample_from_datasets",
]
