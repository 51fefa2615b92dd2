"""`tt.io.decode_csv`: CSV records, a tt.string tensor of any shape holding one record in each
element, split into their fields: one tensor a column, of the records' shape, as
TensorFlow's tf.io.decode_csv.

A record is read as a line of a CSV file is (tracer/data/csv_records.py): fields split by
`field_delim`, double quotes around a field that holds the delimiter (unless
`use_quote_delim` is off), an empty field or `na_value` taking its column's default, a
required column (an empty default) that must be there. A field that is not its column's
type, or a record of the wrong number of fields, is an InvalidArgumentError naming the
record (its index in the flattened records), never a value made up. Like TensorFlow's
string ops it runs in Python and has no gradient; each column is one node that reads the
records it needs.

    >>> import tracer as tt
    >>> label, value = tt.io.decode_csv(["1,2.5", "0,"], record_defaults=[[0], [-1.0]])
    >>> label.numpy().tolist(), value.numpy().tolist()
    ([1, 0], [2.5, -1.0])
"""

import numpy as np

from tracer.data.csv_records import CsvRecords, column_default, reading_options, split_record
from tracer.dtypes import as_dtype
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.string_ops import expect_strings, string_op

_RECORDS = "tt.io.decode_csv's records"  # (where an error message says a record is)


def _infer(attrs, records):
    expect_strings(records)
    return records.shape, attrs["dtype"]


def _reader(defaults, field_delim, use_quote_delim, na_value, select_cols):
    """The CsvRecords that reads one record's fields into its columns' values."""
    options = reading_options(
        None, False, field_delim, use_quote_delim, na_value, select_cols=select_cols
    )
    return CsvRecords((), [_default(name, value) for name, value in defaults], options)


def _default(name, value):
    """A column's default from its attribute: its dtype where it is required, else its value."""
    dtype = as_dtype(name)
    if value is None:
        return dtype
    return np.array(value, dtype=object if dtype.is_string else dtype.as_numpy_dtype)


def _kernel(
    records, *, defaults, field_delim, use_quote_delim, na_value, select_cols, column, dtype
):
    reader = _reader(defaults, field_delim, use_quote_delim, na_value, select_cols)
    out = np.empty(records.shape, dtype=object if dtype.is_string else dtype.as_numpy_dtype)
    for number, (index, record) in enumerate(np.ndenumerate(records)):
        text = record.decode("latin-1")  # (each string field gives back exactly its bytes)
        fields, _ = split_record(text, iter(()), field_delim, use_quote_delim, _RECORDS, number)
        out[index] = reader.record(fields, _RECORDS, number)[column][()]
    return out


DECODE_CSV = string_op("decode_csv", _infer, _kernel)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="", select_cols=None):  # fmt: skip
    """The columns of the CSV `records` (a tt.string tensor), one tensor each, of the dtype
    of its entry of `record_defaults`: a one-value default (`[0]`, `[0.0]`, `[""]`) or an
    empty tensor of the column's dtype, where the column is required. With `select_cols`
    (increasing column indices), only those columns, one default each."""
    records = as_tensor(records)
    expect_strings(records)
    defaults = []
    for value in record_defaults:
        array = column_default(value)
        dtype = "string" if array.dtype == object else array.dtype.name
        defaults.append((dtype, None if array.size == 0 else array[()]))
    if select_cols is not None:
        select_cols = tuple(int(i) for i in np.ravel(getattr(select_cols, "_value", select_cols)))
    attrs = {
        "defaults": tuple(defaults),
        "field_delim": field_delim,
        "use_quote_delim": bool(use_quote_delim),
        "na_value": na_value,
        "select_cols": select_cols,
    }
    _reader(**attrs)  # (its arguments checked here, where the call is)
    return [
        apply(DECODE_CSV, (records,), {**attrs, "column": k, "dtype": as_dtype(dtype)})
        for k, (dtype, _) in enumerate(defaults)
    ]
