"""Rows of a RaggedTensor taken by position: `rt[1]`, `rt[1:3]`, `rt[::2]`, `rt[:, :2]`,
`rt[:, ::-1]`, `rt[1, 2]`, and the row gathers that concat, tile and stack of ragged
tensors are built on.

Which values a result keeps depends on the row lengths, so the row splits must be known
(eagerly, or constants in a traced function); the kept values are gathered by an op, so
gradients reach them.
"""

import numpy as np

from tracer.ops import index_ops
from tracer.ragged_tensor import RaggedTensor


def take_rows(values, rows):
    """The rows `rows` (a numpy vector of positions) of a tensor or a ragged tensor."""
    rows = np.asarray(rows, np.int64).reshape(-1)
    if not isinstance(values, RaggedTensor):
        return index_ops.gather(values, rows)
    splits = values._known_splits("__getitem__")
    starts, lengths = splits[rows], np.diff(splits)[rows]
    inner = _ranges(starts, lengths)
    new_splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return RaggedTensor.from_row_splits(
        take_rows(values._values, inner), new_splits, validate=False
    )


def _ranges(starts, lengths):
    """The positions start, start + 1, ... of each (start, length), concatenated."""
    if not len(lengths):
        return np.zeros(0, np.int64)
    return np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths)]).astype(np.int64)


def getitem(rt, key):
    """`rt[key]`: an int or a slice for the rows, then an int or a slice for each dimension
    further in."""
    key = key if isinstance(key, tuple) else (key,)
    if not key:
        return rt
    if any(k is Ellipsis or k is None for k in key):
        raise NotImplementedError(
            "RaggedTensor.__getitem__: tracer takes ints and slices, not ... or tt.newaxis"
        )
    first, rest = key[0], key[1:]
    nrows = len(rt._known_splits("__getitem__")) - 1
    if isinstance(first, slice):
        rows = np.arange(nrows)[first]  # (any step, as numpy's and TensorFlow's slices)
        picked = RaggedTensor.from_row_splits(
            _rows_values(rt, rows), _splits_of(rt, rows), validate=False
        )
        return _inner(picked, rest) if rest else picked
    index = _integer(first)
    if not -nrows <= index < nrows:
        raise IndexError(f"RaggedTensor.__getitem__: row {index} of {nrows} rows")
    row = _rows_values(rt, [index % nrows])
    return row[rest] if rest else row


def _integer(item):
    try:
        return int(item)
    except TypeError:
        raise TypeError(
            f"RaggedTensor.__getitem__: an index must be an int or a slice, not {item!r}"
        ) from None


def _rows_values(rt, rows):
    """The values of the rows `rows`, concatenated."""
    splits = rt._known_splits("__getitem__")
    lengths = np.diff(splits)[rows]
    return take_rows(rt._values, _ranges(splits[rows], lengths))


def _splits_of(rt, rows):
    lengths = np.diff(rt._known_splits("__getitem__"))[rows]
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def _inner(rt, key):
    """rt[:, key...]: `key[0]` picks or slices within each row, the rest goes further in."""
    item, rest = key[0], key[1:]
    splits = rt._known_splits("__getitem__")
    starts, lengths = splits[:-1], np.diff(splits)
    if isinstance(item, slice):
        kept = [np.arange(s, s + n)[item] for s, n in zip(starts, lengths)]
        new_lengths = np.array([len(k) for k in kept], np.int64)
        values = take_rows(rt._values, np.concatenate(kept + [np.zeros(0, np.int64)]))
        if rest:
            values = (
                _inner(values, rest) if isinstance(values, RaggedTensor) else _dense(values, rest)
            )
        return RaggedTensor.from_row_lengths(values, new_lengths, validate=False)
    index = _integer(item)
    short = np.flatnonzero((lengths <= index) if index >= 0 else (lengths < -index))
    if len(short):
        raise IndexError(
            f"RaggedTensor.__getitem__: index {index} is out of row {int(short[0])}, of length "
            f"{int(lengths[short[0]])}"
        )
    picked = take_rows(rt._values, np.where(index >= 0, starts + index, splits[1:] + index))
    return picked[(slice(None), *rest)] if rest else picked


def _dense(values, key):
    return values[(slice(None), *key)]
