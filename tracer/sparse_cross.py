"""`tt.sparse.cross` and `tt.sparse.cross_hashed`: TensorFlow's feature crosses. Row r of
the result holds one entry for each combination of one feature of row r of every input (a
SparseTensor's entries of that first index, or a dense matrix's row), the first input's
feature varying slowest: their strings joined by `separator`, or hashed.

The hash is TensorFlow's: each string's FarmHash Fingerprint64 (an integer feature as it
is), folded from `hash_key` into one 64-bit number by `fingerprint_cat64` (the two-number
mix that TensorFlow's platform/fingerprint.h documents for sparse crosses), modulo
`num_buckets` (or 2**63 - 1 where it is 0). Crosses are of strings and integers, which have
no gradient: they are computed from the inputs' values, which must be known when a
function is traced (constants there), else it runs as Python (`length_value`).
"""

import itertools

import numpy as np

from tracer import dtypes
from tracer.ops.convert import length_value
from tracer.ops.string_hashes import fingerprint64
from tracer.ragged_tensor import RaggedTensor
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import convert_to_tensor

_MASK = 0xFFFFFFFFFFFFFFFF
_MUL = 0xC6A4A7935BD1E995  # the multiplier of fingerprint_cat64's mix
DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TensorFlow's hash_key where none is given


def cross(inputs, name=None, separator=None):
    """A SparseTensor of strings: each combination of the inputs' features in a row,
    joined by `separator` ("_X_" where None); integers written in decimal.

    >>> a = tt.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])
    >>> tt.sparse.cross([a, tt.constant([["x"]])]).values.numpy().tolist()
    [b'a_X_x', b'b_X_x']
    """
    glue = b"_X_" if separator is None else _as_bytes(separator)
    rows, count = _crossed_rows(inputs, "tt.sparse.cross")
    values = [glue.join(_text(f) for f in c) for row in rows for c in row]
    return _sparse(rows, count, np.array(values, dtype=object).reshape(len(values)))


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """A SparseTensor of int64: each combination of the inputs' features in a row, hashed
    as TensorFlow hashes it (see the module's docstring).

    >>> a = tt.SparseTensor([[0, 0]], ["red"], [1, 1])
    >>> tt.sparse.cross_hashed([a, tt.constant([["round"]])], num_buckets=10).values.numpy()
    array([8])
    """
    key = DEFAULT_HASH_KEY if hash_key is None else int(hash_key)
    buckets = int(num_buckets)
    modulus = buckets if buckets > 0 else (1 << 63) - 1
    rows, count = _crossed_rows(inputs, "tt.sparse.cross_hashed")
    values = [_hashed(c, key) % modulus for row in rows for c in row]
    return _sparse(rows, count, np.array(values, dtype=np.int64).reshape(len(values)))


def fingerprint_cat64(first, second):
    """Two 64-bit fingerprints mixed into one (not commutative), as TensorFlow's
    FingerprintCat64."""
    mixed = first ^ _MUL
    mixed ^= (_shift_mix((second * _MUL) & _MASK) * _MUL) & _MASK
    mixed = (mixed * _MUL) & _MASK
    mixed = (_shift_mix(mixed) * _MUL) & _MASK
    return _shift_mix(mixed)


def _shift_mix(value):
    return value ^ (value >> 47)


def _hashed(features, key):
    result = key & _MASK
    for feature in features:
        number = fingerprint64(feature) if isinstance(feature, bytes) else int(feature) & _MASK
        result = fingerprint_cat64(result, number)
    return result


def _crossed_rows(inputs, what):
    """Each row's crosses (tuples of features, the first input's slowest) and the count of
    rows."""
    columns = [_features(x, what) for x in inputs]
    if not columns:
        raise ValueError(f"{what}: give at least one input")
    counts = {len(c) for c in columns}
    if len(counts) > 1:
        raise ValueError(f"{what}: the inputs have different counts of rows: {sorted(counts)}")
    count = counts.pop()
    return [list(itertools.product(*(c[r] for c in columns))) for r in range(count)], count


def _features(value, what):
    """The features of each row of one input (bytes, or ints)."""
    if isinstance(value, SparseTensor):
        if value.ndim != 2:
            raise ValueError(f"{what}: a SparseTensor input must be a matrix")
        indices = np.asarray(length_value(value.indices, f"{what}: the indices"))
        items = _items(value.values, what)
        rows = [[] for _ in range(value._dense_shape[0])]
        for (row, _), item in zip(indices.tolist(), items):
            rows[row].append(item)
        return rows
    if isinstance(value, RaggedTensor):
        raise TypeError("All inputs must be Tensor or SparseTensor.")
    tensor = convert_to_tensor(value)
    if tensor.ndim != 2:
        raise ValueError(f"{what}: a dense input must be a matrix, not of rank {tensor.ndim}")
    items = _items(tensor, what)
    width = int(tensor.shape[1])
    return [items[r * width : (r + 1) * width] for r in range(int(tensor.shape[0]))]


def _items(tensor, what):
    known = np.asarray(length_value(tensor, f"{what}: the features")).reshape(-1)
    if tensor.dtype.is_string:
        return [_as_bytes(v) for v in known.tolist()]
    if tensor.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError(f"{what}: features must be strings or integers, not {tensor.dtype.name}")
    return [int(v) for v in known.tolist()]


def _text(feature):
    return feature if isinstance(feature, bytes) else str(feature).encode("utf-8")


def _as_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else value


def _sparse(rows, count, values):
    indices = np.array([[r, k] for r, row in enumerate(rows) for k in range(len(row))], np.int64)
    width = max((len(row) for row in rows), default=0)
    return SparseTensor(indices.reshape(-1, 2), convert_to_tensor(values), [count, width])
