"""`tt.data.experimental`: the names TensorFlow kept there."""

from tracer.data import transforms
from tracer.data.csv_datasets import CsvDataset, make_csv_dataset
from tracer.data.dataset import AUTOTUNE, Dataset
from tracer.data.optional import Optional
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


def scan(initial_state, scan_func):
    """A transformation for `Dataset.apply`: `Dataset.scan`."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def ignore_errors(log_warning=False):
    """A transformation for `Dataset.apply`: `Dataset.ignore_errors`."""
    return lambda dataset: dataset.ignore_errors(log_warning)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False, no_padding=False, drop_remainder=False):  # fmt: skip
    """A transformation for `Dataset.apply`: `Dataset.bucket_by_sequence_length`."""
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func,
        bucket_boundaries,
        bucket_batch_sizes,
        padded_shapes,
        padding_values,
        pad_to_bucket_boundary,
        no_padding,
        drop_remainder,
    )


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """A transformation for `Dataset.apply`: `Dataset.rejection_resample`."""
    return lambda dataset: dataset.rejection_resample(class_func, target_dist, initial_dist, seed)


def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    """A transformation for `Dataset.apply`: `Dataset.snapshot`."""
    return lambda dataset: dataset.snapshot(path, compression, reader_func, shard_func)


def save(dataset, path, compression=None, shard_func=None):
    """`dataset.save(path)`."""
    dataset.save(path, compression, shard_func)


def get_next_as_optional(iterator):
    """`iterator.get_next_as_optional()`."""
    return iterator.get_next_as_optional()


choose_from_datasets = Dataset.choose_from_datasets
sample_from_datasets = Dataset.sample_from_datasets
load = Dataset.load

__all__ = [
    "AUTOTUNE",
    "CsvDataset",
    "INFINITE_CARDINALITY",
    "Optional",
    "UNKNOWN_CARDINALITY",
    "assert_cardinality",
    "bucket_by_sequence_length",
    "cardinality",
    "choose_from_datasets",
    "dense_to_ragged_batch",
    "get_next_as_optional",
    "get_single_element",
    "group_by_window",
    "ignore_errors",
    "load",
    "make_csv_dataset",
    "rejection_resample",
    "sample_from_datasets",
    "save",
    "scan",
    "snapshot",
]
