"""`tt.io.parse_example` and `tt.io.parse_single_example`: serialized `tf.train.Example`s (a
tt.string vector, or one scalar) read into the tensors their `features` ask for
(tracer/parsing_config.py), with TensorFlow's values and its errors.

    >>> ids = tt.train.Feature(int64_list=tt.train.Int64List(value=[7]))
    >>> record = tt.train.Example(features=tt.train.Features(feature={"id": ids}))
    >>> features = {"id": tt.io.FixedLenFeature([], tt.int64)}
    >>> tt.io.parse_single_example(record.SerializeToString(), features)["id"].numpy().item()
    7

A FixedLenFeature's result has a shape known before the examples are read, so it is an op:
`parse_example`, one node per feature (as decode_csv's columns), which runs in Python
eagerly, in the interpreter and from compiled code (a string op, tracer/ops/string_ops.py);
the nodes of one call read each example once (`_examples` keeps the last batch read). The
sizes of the other results (VarLenFeature's tt.SparseTensor, FixedLenSequenceFeature's rows,
RaggedFeature's tt.RaggedTensor) are known only from the examples: they are computed where
the examples are known, eagerly or from constants; in a traced function, from the examples
of each call, which makes it run as Python at each call (RunsAsPython), as a
tt.data.Dataset.map then does.
"""

import numpy as np

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.ops.convert import as_tensor, length_value
from tracer.ops.core import apply
from tracer.ops.string_ops import expect_strings, string_op
from tracer.parsing_config import KIND_OF, TYPE_NAME, checked
from tracer.protos.example_reader import read_example
from tracer.protos.wire import DecodeError
from tracer.tensor import constant

# an Example list's kind as TensorFlow's messages name its values' type
_FOUND = {"float": "float", "int64": "int64", "bytes": "string"}
_SHOWN_BYTES = 1000  # of a record that is no Example, the bytes an error shows


def parse_example(serialized, features, example_names=None, name=None):
    """The features of each serialized Example of `serialized` (a vector of them; a scalar
    gives one example's, as parse_single_example): {key: result}, VarLenFeatures first,
    then FixedLen and FixedLenSequence features, then RaggedFeatures, each in the order of
    their keys, as TensorFlow's dict. `example_names` name the examples in errors."""
    serialized = _serialized(serialized)
    if len(serialized.shape) > 1:
        shown = ",".join(str(d) for d in serialized.shape)
        raise InvalidArgumentError(
            None, None, f"Expected serialized to be a scalar or vector, got shape: [{shown}]"
        )
    return _parsed(serialized, features, example_names)


def parse_single_example(serialized, features, example_names=None, name=None):
    """The features of one serialized Example (a tt.string scalar), as `parse_example`."""
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    serialized = _serialized(serialized)
    if len(serialized.shape) != 0:
        raise ValueError("Input serialized must be a scalar")
    return _parsed(serialized, features, example_names)


def _serialized(serialized):
    serialized = as_tensor(serialized)
    if not serialized.dtype.is_string:
        raise ValueError(
            f"serialized Examples must be a tt.string tensor, not {serialized.dtype.name}"
        )
    return serialized


def _parsed(serialized, features, example_names):
    sparse, dense, ragged = checked(features)
    names = None if example_names is None else tuple(_text(n) for n in np.ravel(example_names))
    single = len(serialized.shape) == 0
    examples = None
    if sparse or ragged or any(d.sequence for d in dense):
        records = length_value(serialized, "the Examples that tt.io.parse_example reads")
        examples = _examples(np.asarray(records, dtype=object).reshape(-1))
    results = {}
    for config in sparse:
        results[config.key] = _sparse(config, examples, single, names)
    for config in dense:
        if config.sequence:
            results[config.key] = _sequence(config, examples, single, names)
        else:
            attrs = {
                "key": config.name,
                "dtype": config.dtype,
                "shape": config.shape,
                "default": config.default,
                "names": names,
            }
            results[config.key] = apply(PARSE_EXAMPLE, (serialized,), attrs)
    for config in ragged:
        results[config.key] = _ragged(config, examples, single, names)
    return results


# --- the op ------------------------------------------------------------------------------------


def _infer(attrs, serialized):
    expect_strings(serialized)
    return tuple(serialized.shape) + attrs["shape"], attrs["dtype"]


def _kernel(serialized, *, key, dtype, shape, default, names):
    single = serialized.ndim == 0
    examples = _examples(serialized.reshape(-1))
    want = KIND_OF[dtype]
    size = int(np.prod(shape, dtype=np.int64))
    out = np.empty((len(examples), size), dtype=_numpy_dtype(dtype))  # (a row an example)
    for index, example in enumerate(examples):
        kind, values = example.get(key, (None, None))
        if kind is None:
            if default is None:
                raise _Where(key, index, single, names).missing(dtype)
            values = default
        elif kind != want:
            raise _Where(key, index, single, names).error(
                f"Data types don't match. Data type: {_FOUND[kind]} but expected type: "
                f"{TYPE_NAME[dtype]}"
            )
        elif len(values) != size:
            where = _Where(key, index, single, names)
            if single:
                raise where.error(
                    f"Can't parse serialized Example: Some {kind}_list slice was not parsed."
                )
            shown = ",".join(map(str, shape))
            raise where.error(
                f"Number of {kind} values != expected.  Values size: {len(values)} but output "
                f"shape: [{shown}]"
            )
        out[index, :] = _array(values, dtype)
    return out.reshape(serialized.shape + shape)


PARSE_EXAMPLE = string_op("parse_example", _infer, _kernel)


# --- the results whose sizes the examples give -------------------------------------------------


def _sparse(config, examples, single, names):
    """A VarLenFeature's tt.SparseTensor: the values of each example in a row."""
    from tracer.sparse_tensor import SparseTensor

    rows = [_listed(config, e, k, single, names) for k, e in enumerate(examples)]
    values = _joined(rows, config.dtype)
    positions = np.concatenate([np.arange(len(row)) for row in rows] + [np.zeros(0, np.int64)])
    longest = max((len(row) for row in rows), default=0)
    if single:
        return SparseTensor(positions.reshape(-1, 1).astype(np.int64), values, [longest])
    examples_of = np.repeat(np.arange(len(rows)), [len(row) for row in rows])
    indices = np.stack([examples_of, positions]).T.astype(np.int64).reshape(-1, 2)
    return SparseTensor(indices, values, [len(rows), longest])


def _ragged(config, examples, single, names):
    """A RaggedFeature's values: a vector for one example, a tt.RaggedTensor of a row an
    example for a batch (its row splits int64)."""
    from tracer.ragged_tensor import RaggedTensor

    rows = [_listed(config, e, k, single, names) for k, e in enumerate(examples)]
    values = _joined(rows, config.dtype)
    if single:
        return constant(values)
    splits = np.concatenate([[0], np.cumsum([len(row) for row in rows])]).astype(np.int64)
    return RaggedTensor.from_row_splits(constant(values), constant(splits), validate=False)


def _sequence(config, examples, single, names):
    """A FixedLenSequenceFeature's rows of its shape: [rows, *shape] for one example, a batch
    [examples, most rows, *shape] padded with its default (zeros, empty strings)."""
    stride = int(np.prod(config.shape, dtype=np.int64))
    blocks = []
    for index, example in enumerate(examples):
        kind, values = example.get(config.name, (None, None))
        where = _Where(config.name, index, single, names)  # (for an error)
        if kind is not None and kind != KIND_OF[config.dtype]:
            raise where.error(
                f"Data types don't match. Data type: {_FOUND[kind]} but expected type: "
                f"{TYPE_NAME[config.dtype]}"
            )
        values = _array([] if kind is None else values, config.dtype)
        if stride and len(values) % stride:
            if single:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Error while parsing feature with key {config.name}: number of elements "
                    f"should be divisible by {stride}, found {len(values)} instead",
                )
            shown = ",".join(["?", *map(str, config.shape)])
            raise where.error(
                f"Number of {kind} values is not a multiple of stride length. Saw "
                f"{len(values)} values but output shape is: [{shown}]"
            )
        blocks.append(values.reshape(len(values) // stride if stride else 0, *config.shape))
    if single:
        return constant(blocks[0])
    longest = max((len(b) for b in blocks), default=0)
    fill = config.default[0] if config.default is not None else _zero(config.dtype)
    out = np.full((len(blocks), longest, *config.shape), fill, dtype=_numpy_dtype(config.dtype))
    for index, block in enumerate(blocks):
        out[index, : len(block)] = block
    return constant(out)


def _listed(config, example, index, single, names):
    """The values of the feature `config` reads, of one example, for a sparse or ragged
    result (none where it is missing)."""
    kind, values = example.get(config.name, (None, None))
    if kind is None:
        return []
    if kind != KIND_OF[config.dtype]:
        raise _Where(config.name, index, single, names).error(
            f"Data types don't match. Expected type: {TYPE_NAME[config.dtype]}, Actual type: "
            f"{_FOUND[kind]}"
        )
    return values


# --- the examples --------------------------------------------------------------------------


_last = (None, None)  # (records, their examples) of the last read: one parse's nodes share it


def _examples(records):
    """The features of each serialized Example of the 1-D object array `records` (as
    example_reader.py reads them); InvalidArgumentError for one that is no Example."""
    global _last
    key = tuple(records.tolist())
    if _last[0] == key:  # (a tuple compares its items by identity first: cheap)
        return _last[1]
    examples = []
    for record in key:
        try:
            examples.append(read_example(record))
        except DecodeError:
            shown = record[:_SHOWN_BYTES].decode("latin-1")
            more = "..." if len(record) > _SHOWN_BYTES else ""
            raise InvalidArgumentError(
                None, None, f"Could not parse example input, value: '{shown}{more}'"
            ) from None
    _last = (key, examples)
    return examples


class _Where:
    """Where an error is, in the words of TensorFlow's messages: the feature, and for a
    batch the example's name and index."""

    def __init__(self, key, index, single, names):
        self.key, self.index, self.single = key, index, single
        self.name = "<unknown>" if names is None else names[index]

    def error(self, text):
        if self.single:
            return InvalidArgumentError(None, None, f"Key: {self.key}.  {text}")
        return InvalidArgumentError(
            None, None, f"Name: {self.name}, Key: {self.key}, Index: {self.index}.  {text}"
        )

    def missing(self, dtype):
        text = (
            f"Feature: {self.key} (data type: {TYPE_NAME[dtype]}) is required but could not "
            "be found."
        )
        return InvalidArgumentError(
            None, None, text if self.single else f"Name: {self.name}, {text}"
        )


def _joined(rows, dtype):
    """The values of `rows` (lists or arrays) one after another, as a 1-D array of `dtype`."""
    if dtype == dtypes.string:
        return _array([value for row in rows for value in row], dtype)
    parts = [np.asarray(row, dtype=dtype.as_numpy_dtype) for row in rows]
    return np.concatenate([*parts, np.zeros(0, dtype.as_numpy_dtype)])


def _numpy_dtype(dtype):
    return object if dtype == dtypes.string else dtype.as_numpy_dtype


def _array(values, dtype):
    """`values` (a list, or an array) as a 1-D array of `dtype`'s."""
    if dtype == dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    return np.asarray(values, dtype=dtype.as_numpy_dtype).reshape(-1)


def _zero(dtype):
    return b"" if dtype == dtypes.string else 0


def _text(name):
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
