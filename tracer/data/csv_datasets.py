"""`tt.data.experimental.CsvDataset` and `make_csv_dataset`: TensorFlow's CSV readers, the
records parsed by tracer/data/csv_records.py.

`make_csv_dataset` is TensorFlow's recipe from the other stages: column names from the first
file's header, column types inferred from the first `num_rows_for_inference` records where
`column_defaults` is not given, the files' records in turn (shuffled and repeated
`num_epochs` times, endlessly by default), batched, and each batch a dict of the columns by
name with the label column apart (docs/data.md).
"""

import collections
import glob

from tracer.data import csv_records, files
from tracer.data.dataset import AUTOTUNE, Dataset


class CsvDataset(Dataset):
    """The records of CSV files, each a tuple of scalars, one per column of
    `record_defaults` (tracer/data/csv_records.py says how fields are read)."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False, field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None, name=None):  # fmt: skip
        options = csv_records.reading_options(
            compression_type,
            header,
            field_delim,
            use_quote_delim,
            na_value,
            select_cols,
            exclude_cols,
        )
        names = files.file_names(filenames)
        super().__init__(csv_records.CsvRecords(names, record_defaults, options), "CsvDatasetV2")


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None, select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True, num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None, prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100, compression_type=None, ignore_errors=False, encoding="utf-8"):  # fmt: skip
    """Batches of records of the CSV files `file_pattern` matches: `(features, label)` where
    `label_name` is given (`features` a dict of the other columns by name), else `features`."""
    paths = _matching(file_pattern)
    options = csv_records.reading_options(
        compression_type, header, field_delim, use_quote_delim, na_value
    )
    if column_names is None:
        if not header:
            raise ValueError(
                "make_csv_dataset: give column_names, or header=True to read them from the files"
            )
        column_names = _header_names(paths, options, encoding)
    column_names = list(column_names)
    repeated = sorted({n for n in column_names if column_names.count(n) > 1})
    if repeated:
        raise ValueError(f"make_csv_dataset: the column names repeat {repeated}")
    select = (
        list(range(len(column_names)))
        if select_columns is None
        else _column_indices(select_columns, column_names)
    )
    if column_defaults is None:
        types = csv_records.infer_types(
            paths, len(column_names), options, num_rows_for_inference, select
        )
        column_defaults = [csv_records.zero_of(t) for t in types]
    if select_columns is not None and len(column_defaults) != len(select):
        raise ValueError(
            f"make_csv_dataset: column_defaults has {len(column_defaults)} columns and "
            f"select_columns {len(select)}; they must be as many"
        )
    names = [column_names[i] for i in select]
    if label_name is not None and label_name not in names:
        raise ValueError(
            f"`label_name` provided must be one of the columns: {names}. Received: {label_name}."
        )

    read_options = dict(
        options,
        select_cols=None if select_columns is None else select,
        skip_bad_records=ignore_errors,
    )

    def read(path):
        stage = csv_records.CsvRecords(files.file_names(path), column_defaults, read_options)
        return Dataset(stage, "CsvDatasetV2")

    def by_name(*columns):
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        return features, features.pop(label_name)

    dataset = Dataset.from_tensor_slices(files.string_array(paths))
    if shuffle:
        dataset = dataset.shuffle(len(paths), shuffle_seed)
    dataset = dataset.interleave(read, cycle_length=num_parallel_reads or 1, block_length=1)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    dataset = dataset.map(by_name)
    return dataset.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)


def _matching(file_pattern):
    """The files a pattern (or each of a list of patterns) matches, sorted; ValueError where
    none does."""
    patterns = file_pattern if isinstance(file_pattern, (list, tuple)) else [file_pattern]
    if not patterns:
        raise ValueError("make_csv_dataset: file_pattern names no files")
    found = sorted(p for pattern in patterns for p in glob.glob(files.path_of(pattern)))
    if not found:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return found


def _header_names(paths, options, encoding):
    """The column names of the files' first records, which must agree."""
    names = None
    for path in paths:
        first = next(csv_records.records(path, dict(options, header=False)), None)
        if first is None:
            raise ValueError(f"make_csv_dataset: {path} has no header line (is it empty?)")
        found = [field.encode("latin-1").decode(encoding, "replace") for field in first[1]]
        if names is not None and found != names:
            raise ValueError(
                f"make_csv_dataset: the header of {path} names other columns than "
                f"{paths[0]}'s: {found} against {names}"
            )
        names = found
    return names


def _column_indices(select_columns, column_names):
    """select_columns (names or indices) as sorted column indices, each once."""
    indices = []
    for column in select_columns:
        if isinstance(column, int):
            if not 0 <= column < len(column_names):
                raise ValueError(
                    f"make_csv_dataset: select_columns' index {column} is not one of the "
                    f"{len(column_names)} columns"
                )
            indices.append(column)
        elif column in column_names:
            indices.append(column_names.index(column))
        else:
            raise ValueError(
                f"make_csv_dataset: select_columns' {column!r} is not one of the columns "
                f"{column_names}"
            )
    if len(set(indices)) != len(indices):
        raise ValueError(f"make_csv_dataset: select_columns names a column twice: {select_columns}")
    return sorted(indices)
