"""`tt.SparseTensor` and `tt.SparseTensorSpec`: TensorFlow's sparse tensor, the entries of a
tensor of shape `dense_shape` listed by their coordinates (`indices`, int64 [count, rank])
and their `values` ([count]); every other element is zero.

Its two tensors are its components (tf.nest's view of a composite tensor): a compiled
function takes and returns a SparseTensor as them, and any op tracer has (in every backend,
with gradients) computes on them, so a gradient reaches `values` through `tt.sparse`'s
functions (tracer/sparse.py). Its dense shape is static, as TensorFlow's SparseTensorSpec
keeps it: a trace is keyed by it, while the count of entries is a size like any other
(a second count retraces it as unknown, docs/sparse.md).
"""

import numpy as np

from tracer import dtypes
from tracer.signature import SignatureMismatchError, TensorSpec
from tracer.tensor import Tensor, TensorLike, convert_to_tensor
from tracer.tensor_shape import TensorShape


class _Composite:
    """What a SparseTensor and its spec are to structures (tracer/nest.py) and to a traced
    function's signature (tracer/signature.py): two components, indices and values, and a
    dense shape that keys the trace."""

    __slots__ = ()
    _component_names = ("indices", "values")  # its tensors' names in exported C

    def _tensor_components(self):
        return (self.indices, self.values)

    def _from_components(self, parts):
        return _rebuilt(parts, self._dense_shape)

    def _static_key(self):
        """What a trace is keyed by besides its components' shapes and dtypes."""
        return ("SparseTensor", self._dense_shape)


class SparseTensor(_Composite):
    """values[k] is the element at indices[k] of a tensor of shape dense_shape; every other
    element is zero. Many of `tt.sparse`'s functions need the indices in row-major order,
    as TensorFlow's do (`tt.sparse.reorder` sorts them).

    >>> s = tt.SparseTensor(indices=[[0, 1], [2, 0]], values=[5.0, 7.0], dense_shape=[3, 2])
    >>> tt.sparse.to_dense(s).numpy().tolist()
    [[0.0, 5.0], [0.0, 0.0], [7.0, 0.0]]
    """

    is_tensor_like = True  # tt.is_tensor's answer, as TensorFlow's for composites

    __slots__ = ("indices", "values", "_dense_shape")

    def __init__(self, indices, values, dense_shape):
        indices = convert_to_tensor(indices, dtype=dtypes.int64)
        values = convert_to_tensor(values)
        shape = _static_shape(dense_shape)
        if indices.ndim != 2 or values.ndim != 1:
            raise ValueError(
                f"tt.SparseTensor: indices must be a matrix [count, rank] and values a vector "
                f"[count], not of shapes {tuple(indices.shape)} and {tuple(values.shape)}"
            )
        rank, counts = indices.shape[1], (indices.shape[0], values.shape[0])
        if isinstance(rank, int) and rank != len(shape):
            raise ValueError(
                f"tt.SparseTensor: indices give {rank} coordinates an entry, and dense_shape "
                f"{list(shape)} has rank {len(shape)}"
            )
        if all(isinstance(c, int) for c in counts) and counts[0] != counts[1]:
            raise ValueError(
                f"tt.SparseTensor: {counts[0]} indices and {counts[1]} values: give one index "
                "for each value"
            )
        self.indices, self.values, self._dense_shape = indices, values, shape

    @classmethod
    def from_value(cls, value):
        """`value` itself where it is a SparseTensor (TensorFlow's `from_value`)."""
        if not isinstance(value, SparseTensor):
            raise TypeError(f"tt.SparseTensor.from_value: not a SparseTensor: {value!r}")
        return value

    @property
    def dense_shape(self):
        """The shape of the dense tensor it stands for, an int64 vector."""
        return Tensor(np.array(self._dense_shape, dtype=np.int64))

    @property
    def shape(self):
        return TensorShape(list(self._dense_shape))

    def get_shape(self):
        return self.shape

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self._dense_shape)

    def with_values(self, new_values):
        """The same indices and shape with `new_values` (one for each entry)."""
        return SparseTensor(self.indices, new_values, self._dense_shape)

    def __mul__(self, other):
        return self._times(other, "__mul__", lambda a, b: a * b)

    def __truediv__(self, other):
        return self._times(other, "__truediv__", lambda a, b: a / b)

    def __div__(self, other):
        return self.__truediv__(other)

    def _times(self, other, what, combine):
        """Each entry combined with `other` (a scalar, or a dense tensor that broadcasts to
        the dense shape, read at the entries), as TensorFlow's sparse-dense cwise ops."""
        from tracer.ops import broadcast_ops, scatter_nd_ops

        other = convert_to_tensor(other, dtype=self.dtype)
        if other.ndim == 0:
            return self.with_values(combine(self.values, other))
        if other.ndim > self.ndim:
            raise ValueError(
                f"SparseTensor.{what}: a dense operand of rank {other.ndim} does not broadcast "
                f"to the sparse tensor's shape {list(self._dense_shape)}"
            )
        dense = broadcast_ops.broadcast_to(other, self._dense_shape)
        return self.with_values(combine(self.values, scatter_nd_ops.gather_nd(dense, self.indices)))

    def __repr__(self):
        """As TensorFlow prints it, its tensors as they print."""
        parts = (str(self.indices), str(self.values), str(self.dense_shape))
        return "SparseTensor(indices={}, values={}, dense_shape={})".format(*parts)

    def __bool__(self):
        raise TypeError("a SparseTensor has no truth value: compare its values")


class SparseTensorSpec(_Composite):
    """The type of a SparseTensor (`element_spec`, `input_signature`,
    `get_concrete_function`): its dense shape and dtype; any count of entries. A traced
    function needs every dimension known (tracer compiles a sparse tensor's dense shape as
    known); a batch of a dataset, whose first dimension is None, is mapped eagerly.

    >>> tt.SparseTensorSpec([3, 10], tt.int32)
    SparseTensorSpec(TensorShape([3, 10]), tt.int32)
    """

    __slots__ = ("_dense_shape", "dtype", "indices", "values")

    def __init__(self, shape=None, dtype=dtypes.float32):
        if shape is None:
            raise ValueError("tt.SparseTensorSpec: give the shape (None for an unknown size)")
        self._dense_shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.indices = TensorSpec([None, len(self._dense_shape)], dtypes.int64)
        self.values = TensorSpec([None], self.dtype)

    @property
    def shape(self):
        return TensorShape(list(self._dense_shape))

    def generalized(self, other):
        """This spec with None wherever `other`'s dense shape differs."""
        shape = [a if a == b else None for a, b in zip(self._dense_shape, other._dense_shape)]
        return SparseTensorSpec(shape, self.dtype)

    def _conformed(self, value, name):
        """`value` where it is a SparseTensor this spec takes (an input_signature's check of
        argument `name`); a SignatureMismatchError otherwise."""
        fits = (
            isinstance(value, SparseTensor)
            and value.dtype == self.dtype
            and len(value._dense_shape) == len(self._dense_shape)
            and all(k is None or k == d for d, k in zip(value._dense_shape, self._dense_shape))
        )
        if not fits:
            raise SignatureMismatchError(
                f"argument {name} is {value!r}, the input_signature says {self!r}"
            )
        return value

    def __eq__(self, other):
        return isinstance(other, SparseTensorSpec) and (
            (self._dense_shape, self.dtype) == (other._dense_shape, other.dtype)
        )

    def __hash__(self):
        return hash((self._dense_shape, self.dtype))

    def __repr__(self):
        return f"SparseTensorSpec({self.shape!r}, {self.dtype!r})"


def _rebuilt(parts, dense_shape):
    """What a structure's components pack into: a SparseTensorSpec of specs, else a
    SparseTensor holding `parts` as they are (tensors, or the markers a trace's signature
    packs into an argument's place); a TypeError for tensors of a dense shape not known."""
    indices, values = parts
    if isinstance(indices, TensorSpec) and isinstance(values, TensorSpec):
        spec = SparseTensorSpec(dense_shape, values.dtype)
        spec.indices, spec.values = indices, values
        return spec
    if None in dense_shape and isinstance(values, TensorLike):
        raise TypeError(
            f"a SparseTensor of shape {list(dense_shape)} cannot be traced: tracer compiles "
            "a sparse tensor's dense shape as known"
        )
    packed = object.__new__(SparseTensor)
    packed.indices, packed.values, packed._dense_shape = indices, values, dense_shape
    return packed


def _static_shape(dense_shape):
    """A dense shape as a tuple of ints; a TypeError for one known only when a function
    runs (a traced function keys its trace by it)."""
    if isinstance(dense_shape, TensorLike):
        value = dense_shape._read()._value
        if value is None:
            raise TypeError(
                "tt.SparseTensor: dense_shape must be known when the function is traced, not "
                "a tensor computed while it runs (tracer compiles a sparse tensor's shape as "
                "known)"
            )
        dense_shape = value
    shape = tuple(int(d) for d in np.asarray(dense_shape, dtype=np.int64).reshape(-1))
    if any(d < 0 for d in shape):
        raise ValueError(f"tt.SparseTensor: dense_shape {list(shape)} has a negative size")
    return shape
