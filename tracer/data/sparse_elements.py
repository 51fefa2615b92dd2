"""A SparseTensor as a pipeline holds it: numpy indices, values and dense shape, one leaf
of an element to tt.data's stages (tracer/data/specs.py), which slice, stack and unbatch it
as TensorFlow's tf.data does: a row of a sparse matrix is a sparse vector, a batch of
sparse tensors one sparse tensor with a batch dimension and, on each other axis, the
largest of its elements' sizes."""

import numpy as np

from tracer.data.ragged_elements import RaggedArrays
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import constant


class SparseArrays:
    """indices (int64 [count, rank]), values ([count]) and the dense shape (a tuple)."""

    __slots__ = ("indices", "values", "shape")

    def __init__(self, indices, values, shape):
        self.indices = np.asarray(indices, np.int64).reshape(-1, len(shape))
        self.values, self.shape = np.asarray(values), tuple(int(d) for d in shape)

    @classmethod
    def of(cls, sparse):
        """The arrays of an eager SparseTensor."""
        return cls(sparse.indices.numpy(), sparse.values.numpy(), sparse._dense_shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        return self.values.dtype

    def tensor(self):
        return SparseTensor(self.indices, self.values, self.shape)

    def dense(self):
        """The dense array, as TensorFlow's as_numpy_iterator gives a sparse element."""
        out = np.zeros(self.shape, self.values.dtype)
        out[tuple(self.indices.T)] = self.values
        return out

    def __getitem__(self, rows):
        """Row `rows` (an int: a sparse tensor of one rank less), or the rows listed in
        `rows` as a batch of them."""
        if isinstance(rows, (int, np.integer)):
            keep = self.indices[:, 0] == int(rows)
            return SparseArrays(self.indices[keep, 1:], self.values[keep], self.shape[1:])
        return stack([self[int(r)] for r in np.asarray(rows).reshape(-1)])


def stack(parts):
    """Sparse tensors of one rank as a batch: the batch's position first in each index,
    each other dimension the largest of theirs."""
    ranks = {p.ndim for p in parts}
    if len(ranks) > 1:
        raise ValueError(
            f"batch: sparse elements of ranks {sorted(ranks)} cannot be batched; give them one rank"
        )
    rank = ranks.pop()
    shape = np.max([p.shape for p in parts], axis=0) if rank else np.zeros(0, np.int64)
    indices = [
        np.concatenate([np.full((len(p.values), 1), k, np.int64), p.indices], 1)
        for k, p in enumerate(parts)
    ]
    values = np.concatenate([p.values for p in parts]) if parts else np.zeros(0)
    return SparseArrays(
        np.concatenate(indices).reshape(-1, rank + 1), values, (len(parts), *shape.tolist())
    )


def is_sparse(leaf):
    return type(leaf) is SparseArrays


def tensor_of(leaf):
    """An element's leaf as the tensor a dataset gives: a SparseTensor for a sparse one, a
    RaggedTensor for a ragged one (tracer/data/ragged_elements.py)."""
    return leaf.tensor() if type(leaf) in _COMPOSITE_LEAVES else constant(leaf)


_COMPOSITE_LEAVES = (SparseArrays, RaggedArrays)  # the leaves a dataset gives as a composite
