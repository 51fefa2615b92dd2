"""A RaggedTensor as a pipeline holds it: numpy flat values and nested row splits, one leaf
of an element to tt.data's stages (tracer/data/specs.py), which slice, stack and unbatch it
as TensorFlow's tf.data does: a row of a ragged tensor is a ragged tensor of one ragged
dimension less (of ragged rank 0, a dense row, where it had one), and a batch of ragged
elements, or `ragged_batch` of dense ones, is a ragged tensor of one ragged dimension more.
"""

import numpy as np

from tracer.ragged_tensor import RaggedTensor
from tracer.tensor import constant


class RaggedArrays:
    """flat values and the row splits of each ragged dimension, outermost first (none for
    a ragged element of ragged rank 0: a dense row of a ragged tensor)."""

    __slots__ = ("flat", "splits")

    def __init__(self, flat, splits):
        self.flat, self.splits = np.asarray(flat), [np.asarray(s, np.int64) for s in splits]

    @classmethod
    def of(cls, ragged):
        """The arrays of an eager RaggedTensor."""
        return cls(ragged.flat_values.numpy(), [s.numpy() for s in ragged.nested_row_splits])

    @property
    def ragged_rank(self):
        return len(self.splits)

    @property
    def shape(self):
        if not self.splits:
            return self.flat.shape
        return (len(self.splits[0]) - 1, *[None] * len(self.splits), *self.flat.shape[1:])

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        return self.flat.dtype

    def tensor(self):
        """A RaggedTensor (a dense tensor for ragged rank 0)."""
        if not self.splits:
            return constant(self.flat)
        return RaggedTensor.from_nested_row_splits(self.flat, self.splits, validate=False)

    def numpy(self):
        """Its value as a RaggedTensor's numpy() gives it."""
        return self.tensor().numpy()

    def __getitem__(self, rows):
        """Row `rows` (an int: one ragged dimension less), or the rows listed in `rows` as a
        batch of them."""
        if not isinstance(rows, (int, np.integer)):
            return stack([self[int(r)] for r in np.asarray(rows).reshape(-1)])
        if not self.splits:
            raise ValueError("a ragged element of ragged rank 0 is sliced as a dense one")
        start, stop = int(rows), int(rows) + 1
        inner = []
        for splits in self.splits:
            start, stop = splits[start], splits[stop]
            inner.append((start, stop))
        levels = [
            splits[a : b + 1] - splits[a]
            for splits, (a, b) in zip(self.splits[1:], inner[:-1])
        ]  # fmt: skip
        first, last = inner[-1]
        return RaggedArrays(self.flat[first:last], levels)


def stack(parts):
    """Ragged elements of one ragged rank (or dense arrays, of ragged rank 0) as a batch:
    a ragged tensor of one ragged dimension more."""
    parts = [p if type(p) is RaggedArrays else RaggedArrays(p, []) for p in parts]
    ranks = {p.ragged_rank for p in parts}
    inner = {p.flat.shape[1:] for p in parts}
    if len(ranks) > 1 or len(inner) > 1:
        raise ValueError(
            "batch: ragged elements must have one ragged rank and one shape of their flat "
            f"values after the first dimension, not {sorted(ranks)} and {sorted(inner)}"
        )
    outer = np.cumsum([0] + [_count(p) for p in parts])
    levels = [outer]
    for level in range(ranks.pop()):
        pieces, offset = [], 0
        for p in parts:
            pieces.append(p.splits[level][:-1] + offset)
            offset += int(p.splits[level][-1])
        levels.append(np.concatenate(pieces + [[offset]]))
    flat = np.concatenate([p.flat for p in parts]) if parts else np.zeros(0)
    return RaggedArrays(flat, levels)


def with_ragged_rank(part, rank):
    """An element as a ragged one of ragged rank `rank`: a dense array's first `rank`
    dimensions made ragged dimensions of its (uniform) lengths."""
    if type(part) is RaggedArrays:
        return part
    array = np.asarray(part)
    if array.ndim <= rank:
        raise ValueError(
            f"ragged_batch: an element of shape {array.shape} has no {rank} ragged dimensions"
        )
    splits, rows = [], 1
    for size in array.shape[:rank]:
        splits.append(np.arange(rows + 1, dtype=np.int64) * size)
        rows *= size
    return RaggedArrays(array.reshape(rows, *array.shape[rank + 1 :]) if rank else array, splits)


def _count(part):
    """The rows of a ragged element (the first dimension of a dense one)."""
    return len(part.splits[0]) - 1 if part.splits else len(part.flat)


def is_ragged(leaf):
    return type(leaf) is RaggedArrays
