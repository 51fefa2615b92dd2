"""CSV files as a pipeline's stage (tracer/data/specs.py says what a stage is): TensorFlow's
`tf.data.experimental.CsvDataset`, whose elements are one record's fields as a tuple of
scalars, and the column types `make_csv_dataset` infers from a file's first rows.

RFC 4180 records, as TensorFlow's CSV reader takes them: fields split by `field_delim`, a
field in double quotes may hold the delimiter, line breaks and doubled quotes (unless
`use_quote_delim` is off), carriage returns dropped, numbers with spaces around them. Each
selected field becomes its column's dtype (int32, int64, float32, float64 or string); an
empty field or one equal to `na_value` takes its column's default, and a column without one
(a dtype given, or an empty tensor) must be there. What a file holds is data: a field that
is not its column's type, a record with too few fields, a quote out of place is an
InvalidArgumentError naming the file, the record and the field, never a value made up.
"""

import itertools
import re

import numpy as np

from tracer.data import files
from tracer.data.specs import UNKNOWN
from tracer.dtypes import DType, as_dtype
from tracer.errors import InvalidArgumentError
from tracer.signature import TensorSpec
from tracer.tensor import constant

TYPES = ("int32", "int64", "float32", "float64", "string")  # (a CSV column's dtypes)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(inf(inity)?|nan|([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?)", re.I)
_INTEGER_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def reading_options(compression_type, header, field_delim, use_quote_delim, na_value, select_cols=None, exclude_cols=None, skip_bad_records=False):  # fmt: skip
    """How CsvRecords and `records` read a file (checked here): `skip_bad_records` drops a
    record that does not parse instead of raising (make_csv_dataset's ignore_errors)."""
    compression = compression_type or ""
    if compression not in ("", "GZIP", "ZLIB"):
        raise ValueError(
            f"CsvDataset: compression_type must be '', 'GZIP' or 'ZLIB', not {compression_type!r}"
        )
    if len(field_delim) != 1:
        raise ValueError(f"CsvDataset: field_delim must be one character, not {field_delim!r}")
    return {
        "compression": compression,
        "header": bool(header),
        "field_delim": field_delim,
        "use_quote_delim": bool(use_quote_delim),
        "na_value": na_value,
        "select_cols": select_cols,
        "exclude_cols": exclude_cols,
        "skip_bad_records": skip_bad_records,
    }


class CsvRecords:
    """`CsvDataset(filenames, record_defaults, ...)`: each record of each file in turn, as a
    tuple of 0-d arrays, one per selected column. `filenames`: names, or the stage of a
    dataset of names, read each pass; `options` from `reading_options`."""

    def __init__(self, filenames, record_defaults, options):
        self._names = filenames
        self._defaults = [column_default(d) for d in record_defaults]
        if not self._defaults:
            raise ValueError("CsvDataset: record_defaults must name at least one column")
        self._options = options
        self._columns = _selected(options, len(self._defaults))

    def arrays(self):
        names = self._names.arrays() if hasattr(self._names, "arrays") else iter(self._names)
        for name in names:
            path = files.path_of(name)
            for number, fields in records(path, self._options):
                try:
                    record = self.record(fields, path, number)
                except InvalidArgumentError:
                    if not self._options["skip_bad_records"]:
                        raise
                    continue
                yield record

    def record(self, fields, path, number):
        """The record `number` of `path` (for messages), split into `fields` (str), as a
        tuple of 0-d arrays of its selected columns' dtypes."""
        columns, wanted = self._columns, len(self._defaults)
        if columns is None:
            if len(fields) != wanted:
                raise _bad(path, number, _count_message(wanted, len(fields)))
            chosen = fields
        else:
            kind, indices = columns
            if kind == "exclude":
                if len(fields) != wanted + len(indices):
                    raise _bad(path, number, _count_message(wanted + len(indices), len(fields)))
                chosen = [f for i, f in enumerate(fields) if i not in indices]
            else:
                if len(fields) <= indices[-1]:
                    present = sum(i < len(fields) for i in indices)
                    raise _bad(path, number, _count_message(wanted, present))
                chosen = [fields[i] for i in indices]
        na_value = self._options["na_value"]
        return tuple(
            _field(text, default, na_value, path, number, column)
            for column, (text, default) in enumerate(zip(chosen, self._defaults))
        )

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        return tuple(TensorSpec((), default.dtype) for default in self._defaults)


def _count_message(wanted, found):
    """TensorFlow's words for a record of the wrong number of (selected) fields."""
    return f"Expect {wanted} fields but have {'more' if found > wanted else found} in record"


def column_default(value):
    """A record default as a 0-d array of a CSV type, or an empty one (the column must be
    there): a dtype, an empty tensor, or a value (a Python int is int32, a float float32)."""
    if isinstance(value, (DType, type)):
        dtype = as_dtype(value)
        if dtype.name not in TYPES:
            raise TypeError(
                f"CsvDataset: a column's dtype must be one of {TYPES}, not {dtype.name}"
            )
        return np.empty((0,), dtype.as_numpy_dtype)
    array = np.asarray(constant(value)._value)
    name = "string" if array.dtype == object else array.dtype.name
    if name not in TYPES:
        raise TypeError(f"CsvDataset: a column's default must be one of {TYPES}, not {name}")
    if array.size > 1 or array.ndim > 1:
        raise ValueError(
            f"CsvDataset: a column's default is one value or none, not shape {array.shape}"
        )
    return array.reshape((0,) if array.size == 0 else ())


def zero_of(name):
    """The default make_csv_dataset gives a column whose type it inferred: 0, or b""."""
    return files.string_scalar(b"") if name == "string" else np.zeros((), name)


def records(path, options):
    """(number, fields as str) of each record of the file at `path`, its header skipped: a
    record's number is its first line's, from 1. Fields are the file's bytes read as
    latin-1, so that each string field gives back exactly those bytes (`split_record`)."""
    delimiter, quotes = options["field_delim"], options["use_quote_delim"]
    lines = (line.decode("latin-1") for line in files.read_lines(path, options["compression"]))
    header, number = options["header"], 0
    for text in lines:
        number += 1
        first = number
        fields, more = split_record(text, lines, delimiter, quotes, path, number)
        number += more
        if header:
            header = False
            continue
        yield first, fields


def split_record(text, lines, delimiter, quotes, path, number):
    """(the fields of the record that begins with the line `text`, the lines it took from
    `lines` beyond it): split at each delimiter, or, with `quotes` and a quote in the line,
    read by `_quoted_fields`."""
    if quotes and '"' in text:
        return _quoted_fields(text, lines, delimiter, path, number)
    return text.split(delimiter), 0


def _quoted_fields(text, lines, delimiter, path, number):
    """(the fields of the record that begins with the line `text`, the lines it took from
    `lines` beyond it), RFC 4180's quoting as TensorFlow's reader takes it: a field in
    quotes may hold the delimiter, line breaks and doubled quotes; a quote anywhere else is
    an error."""
    fields, at, more = [], 0, 0
    while True:
        if text.startswith('"', at):
            parts, at = [], at + 1
            while True:
                close = text.find('"', at)
                if close < 0:  # the field goes on over the next line
                    parts.append(text[at:] + "\n")
                    text, at = next(lines, None), 0
                    more += 1
                    if text is None:
                        raise _bad(
                            path,
                            number,
                            "Reached end of file without closing quoted field in record",
                        )
                elif text.startswith('"', close + 1):
                    parts.append(text[at : close + 1])
                    at = close + 2
                else:
                    parts.append(text[at:close])
                    at = close + 1
                    break
            fields.append("".join(parts))
            if at < len(text) and text[at] != delimiter:
                raise _bad(path, number, "Quote inside a string has to be escaped by another quote")
        else:
            end = text.find(delimiter, at)
            end = len(text) if end < 0 else end
            if '"' in text[at:end]:
                raise _bad(path, number, "Unquoted fields cannot have quotes inside")
            fields.append(text[at:end])
            at = end
        if at >= len(text):
            return fields, more
        at += 1  # (past the delimiter; one at the line's end leaves an empty last field)
        if at == len(text):
            fields.append("")
            return fields, more


def _selected(options, wanted):
    """None (every field in order), ("select", sorted indices) or ("exclude", indices)."""
    select, exclude = options["select_cols"], options["exclude_cols"]
    if select is not None and exclude is not None:
        raise InvalidArgumentError(None, None, "Either select_cols or exclude_cols should be empty")
    for name, given in (("select_cols", select), ("exclude_cols", exclude)):
        if given is None:
            continue
        indices = [int(i) for i in np.ravel(getattr(given, "_value", given))]
        if any(i < 0 for i in indices) or indices != sorted(set(indices)):
            raise InvalidArgumentError(
                None,
                None,
                f"{name} must be non-negative, increasing and without repeats: {indices}",
            )
        if name == "select_cols" and len(indices) != wanted:
            raise InvalidArgumentError(
                None,
                None,
                f"Expected len(select_cols) ({len(indices)}) to equal len(record_defaults) ({wanted})",
            )
        return ("select" if name == "select_cols" else "exclude", indices)
    return None


def _field(text, default, na_value, path, number, column):
    """One field as a 0-d array of its column's dtype."""
    if text == "" or text == na_value:
        if default.size == 0:
            raise _bad(path, number, f"Field {column} is required but missing in record!")
        return default.copy()
    name = "string" if default.dtype == object else default.dtype.name
    if name == "string":
        return files.string_scalar(text.encode("latin-1"))
    number_text = text.strip()
    if name in _INTEGER_RANGES:
        if _integer_fits(name, number_text):
            return np.array(int(number_text), name)
    elif _FLOAT.fullmatch(number_text):
        with np.errstate(over="ignore"):  # (beyond float32's range: inf, as strtof gives)
            return np.array(float(number_text), name)
    raise _bad(path, number, f"Field {column} in record is not a valid {name}: {text}")


def _integer_fits(name, text):
    """Whether `text` is an integer in the range of `name` (int32 or int64)."""
    low, high = _INTEGER_RANGES[name]
    return bool(_INTEGER.fullmatch(text)) and low <= int(text) <= high


def _bad(path, number, message):
    return InvalidArgumentError(None, None, f"{message} (record {number} of {path})")


def infer_types(paths, column_count, options, rows, select):
    """The dtype of each (selected) column from the first `rows` records of the files
    (all where None): the narrowest of int32, int64, float32, float64 and string that
    holds every non-missing field; string for a column with none."""
    found = [None] * len(select)
    every = itertools.chain.from_iterable(
        ((path, number, fields) for number, fields in records(path, options)) for path in paths
    )
    for path, number, fields in itertools.islice(every, rows):
        if len(fields) != column_count:
            raise ValueError(
                f"make_csv_dataset: record {number} of {path} has {len(fields)} fields, "
                f"not the {column_count} of its columns"
            )
        for j, index in enumerate(select):
            found[j] = _widened(found[j], fields[index], options["na_value"])
    return [t or "string" for t in found]


def _widened(previous, text, na_value):
    """The narrowest type at least `previous` that holds `text`."""
    if text in ("", na_value):
        return previous
    start = TYPES.index(previous) if previous else 0
    for name in TYPES[start:]:
        if name == "string" or _holds(name, text.strip()):
            return name
    return "string"


def _holds(name, text):
    """Whether `text` is a value of the type `name` (a float's: finite there, as
    TensorFlow's inference asks, so "nan", "inf" and 1e39 in float32 read wider)."""
    if name in _INTEGER_RANGES:
        return _integer_fits(name, text)
    if not _FLOAT.fullmatch(text):
        return False
    with np.errstate(over="ignore"):
        return bool(np.array(float(text), name) < np.inf)
