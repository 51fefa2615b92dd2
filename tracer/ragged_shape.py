"""`tt.shape` of a RaggedTensor: TensorFlow's DynamicRaggedShape, the count of rows, the row
lengths of each ragged dimension and the uniform inner sizes; `tt.zeros`, `tt.ones`,
`tt.fill` and `tt.reshape` of one give a RaggedTensor of that shape (tracer/ragged_ops.py
dispatches them here). Its lengths are known numbers: an eager ragged tensor's, or one
whose row splits are known when a function is traced.
"""

import numpy as np

from tracer import dtypes
from tracer.ops import array_ops
from tracer.ragged_tensor import RaggedTensor
from tracer.tensor import convert_to_tensor


class RowPartition:
    """`tt.experimental.RowPartition`: how a ragged dimension cuts its values into rows (its
    row lengths, known numbers here)."""

    __slots__ = ("_lengths",)

    def __init__(self, lengths):
        self._lengths = tuple(int(n) for n in lengths)

    @classmethod
    def from_row_lengths(cls, row_lengths, validate=True, dtype=None, dtype_hint=None):
        return cls(np.asarray(convert_to_tensor(row_lengths).numpy()).reshape(-1))

    @classmethod
    def from_row_splits(cls, row_splits, validate=True, dtype=None, dtype_hint=None):
        return cls(np.diff(np.asarray(convert_to_tensor(row_splits).numpy()).reshape(-1)))

    def nrows(self):
        return convert_to_tensor(np.int64(len(self._lengths)))

    def row_lengths(self):
        return convert_to_tensor(np.array(self._lengths, np.int64))


class DynamicRaggedShape:
    """The shape of a ragged tensor: row partitions (one per ragged dimension, outermost
    first) and the inner shape of its flat values, as TensorFlow's constructor takes them;
    shown as its lengths, an int for each uniform dimension and a tuple of row lengths for
    each ragged one.

    >>> tt.shape(tt.ragged.constant([[1], [2, 3]]))
    <DynamicRaggedShape lengths=[2, (1, 2)] num_row_partitions=1>
    """

    __slots__ = ("_lengths", "_dtype")

    def __init__(self, row_partitions, inner_shape, dtype=None, validate=True, static_inner_shape=None):  # fmt: skip
        inner = [int(d) for d in np.asarray(convert_to_tensor(inner_shape).numpy()).reshape(-1)]
        parts = list(row_partitions)
        first = len(parts[0]._lengths) if parts else inner[0]
        lengths = [first, *(p._lengths for p in parts), *inner[1:]] if parts else inner
        self._set(lengths, dtypes.int64 if dtype is None else dtype)

    def _set(self, lengths, dtype):
        self._lengths = [tuple(int(n) for n in d) if _ragged(d) else int(d) for d in lengths]
        self._dtype = dtypes.as_dtype(dtype)
        if self._lengths and _ragged(self._lengths[0]):
            raise ValueError("DynamicRaggedShape: the first dimension (the rows) is uniform")

    @classmethod
    def _made(cls, lengths, dtype):
        shape = object.__new__(cls)
        shape._set(lengths, dtype)
        return shape

    @classmethod
    def from_lengths(cls, lengths, num_row_partitions=None, dtype=dtypes.int64):
        """The shape of these lengths: an int for a uniform dimension, a tuple of row
        lengths for a ragged one."""
        return cls._made(lengths, dtype)

    @classmethod
    def of(cls, rt, out_type=dtypes.int32):
        """The shape of ragged tensor `rt` (its row splits known)."""
        splits = rt._all_known_splits("tt.shape")
        lengths = [len(splits[0]) - 1, *(tuple(np.diff(s).tolist()) for s in splits)]
        return cls._made(lengths + [int(d) for d in rt.flat_values.shape[1:]], out_type)

    @property
    def rank(self):
        return len(self._lengths)

    @property
    def num_row_partitions(self):
        """How many dimensions after the first, up to the last ragged one."""
        ragged = [k for k, d in enumerate(self._lengths) if _ragged(d)]
        return ragged[-1] if ragged else 0

    def __getitem__(self, index):
        """A uniform dimension's size (a scalar tensor), or the shape of the dimensions up
        to `index.stop` (a slice from the first)."""
        if isinstance(index, slice):
            if index.start not in (None, 0) or index.step not in (None, 1):
                raise NotImplementedError("DynamicRaggedShape: a slice from the first dimension")
            return DynamicRaggedShape._made(self._lengths[index], self._dtype)
        size = self._lengths[int(index)]
        if _ragged(size):
            raise ValueError(f"DynamicRaggedShape: dimension {int(index)} is ragged: {size}")
        return convert_to_tensor(np.array(size, self._dtype.as_numpy_dtype))

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a DynamicRaggedShape has no dense value: index its uniform dimensions")

    def __iter__(self):
        raise TypeError("a DynamicRaggedShape is not iterable: index its uniform dimensions")

    def __repr__(self):
        shown = [
            "(" + ", ".join(map(str, d)) + ")" if _ragged(d) else str(d) for d in self._lengths
        ]
        return (
            f"<DynamicRaggedShape lengths=[{', '.join(shown)}] "
            f"num_row_partitions={self.num_row_partitions}>"
        )

    def flat_shape(self):
        """The shape of the flat values of a ragged tensor of this shape."""
        ragged = self.num_row_partitions
        if any(not _ragged(d) for d in self._lengths[1:ragged]):
            raise NotImplementedError("DynamicRaggedShape: a uniform dimension between ragged ones")
        count = sum(self._lengths[ragged]) if ragged else self._lengths[0]
        return [count, *self._lengths[ragged + 1 :]]

    def ragged_of(self, flat_values):
        """A RaggedTensor of this shape over `flat_values` (of `flat_shape()`); a dense
        tensor where no dimension is ragged."""
        ragged = self.num_row_partitions
        if not ragged:
            return array_ops.reshape(flat_values, self._lengths)
        nested = [
            np.concatenate([[0], np.cumsum(d)]).astype(np.int64) for d in self._lengths[1 : ragged + 1]
        ]  # fmt: skip
        return RaggedTensor.from_nested_row_splits(flat_values, nested, validate=False)


def _ragged(size):
    return isinstance(size, (tuple, list))


def shape(input, out_type=dtypes.int32, name=None):
    """tt.shape of a RaggedTensor: its DynamicRaggedShape."""
    return DynamicRaggedShape.of(input, out_type)


def zeros(shape, dtype=dtypes.float32, name=None):
    return shape.ragged_of(array_ops.zeros(shape.flat_shape(), dtype))


def ones(shape, dtype=dtypes.float32, name=None):
    return shape.ragged_of(array_ops.ones(shape.flat_shape(), dtype))


def fill(dims, value, name=None):
    return dims.ragged_of(array_ops.fill(dims.flat_shape(), value))


def reshape(tensor, shape, name=None):
    """The elements of `tensor` in row-major order, as a ragged tensor of `shape`."""
    return shape.ragged_of(array_ops.reshape(tensor, shape.flat_shape()))
