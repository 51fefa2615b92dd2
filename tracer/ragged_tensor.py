"""`tt.RaggedTensor` and `tt.RaggedTensorSpec`: TensorFlow's ragged tensor, rows of
different lengths stored as one tensor of their elements (`values`) cut into rows by
`row_splits` (int64: row i is values[row_splits[i]:row_splits[i + 1]]). Its values may be a
ragged tensor again (ragged rank 2 and more); the innermost are its `flat_values`, a dense
tensor whose trailing dimensions are the uniform inner dimensions of every element.

Its flat values and row splits are its components (tf.nest's view of a composite tensor):
a compiled function takes and returns a RaggedTensor as them, and everything it does is
written with tracer's ops on them, so a gradient reaches `flat_values` in every backend.
Where the shape of a result depends on the row lengths (a row taken by `rt[1]`, rows cut
by `rt[:, :2]`, `to_tensor`), the row splits must be known: always eagerly, and in a
traced function where they are constants (docs/ragged.md).
"""

import numpy as np

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.ops import array_ops, index_ops, math_ops, scan_ops, scatter_nd_ops, structure_ops
from tracer.ops.convert import known_value, length_value
from tracer.ops.reduction_ops import reduce_max
from tracer.signature import SignatureMismatchError, TensorSpec
from tracer.tensor import TensorLike, convert_to_tensor
from tracer.tensor_shape import TensorShape, is_unknown_rank

_DATA_SHAPE = (
    ": the shape of the result depends on the row lengths, and compiled code has shapes known "
    "when it is traced"
)


class _Composite:
    """What a RaggedTensor and its spec are to structures (tracer/nest.py) and to a traced
    function's signature (tracer/signature.py): the flat values and one row splits vector
    per ragged dimension, keyed by the ragged rank."""

    __slots__ = ()

    @property
    def _component_names(self):  # its tensors' names in exported C
        return ("flat_values", *(f"row_splits_{k}" for k in range(self.ragged_rank)))

    def _static_key(self):
        """What a trace is keyed by besides its components' shapes and dtypes."""
        return ("RaggedTensor", self.ragged_rank)

    def _from_components(self, parts):
        return _rebuilt(parts)


class RaggedTensor(_Composite):
    """Rows of different lengths: row i of `values` is values[row_splits[i]:row_splits[i+1]].
    Build one with the `from_*` class methods or `tt.ragged.constant`.

    >>> rt = tt.RaggedTensor.from_row_lengths([3, 1, 4, 1, 5], row_lengths=[2, 0, 3])
    >>> rt.to_list()
    [[3, 1], [], [4, 1, 5]]
    """

    is_tensor_like = True  # tt.is_tensor's answer, as TensorFlow's for composites

    __slots__ = ("_values", "_row_splits", "_uniform_row_length")

    def __init__(self, values, row_splits, internal=False):
        if not internal:
            raise ValueError(
                "tt.RaggedTensor's constructor is private: build one with "
                "RaggedTensor.from_row_splits, from_row_lengths, from_value_rowids, "
                "from_tensor or tt.ragged.constant"
            )
        self._values, self._row_splits = values, row_splits
        self._uniform_row_length = None  # an int where every row has that length, statically

    # --- building ------------------------------------------------------------------------

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Row i is values[row_splits[i]:row_splits[i + 1]]; row_splits starts at 0, never
        decreases and ends at the count of values."""
        values = _values_of(values)
        splits = _vector(row_splits, "row_splits")
        if validate:
            _check_splits(splits, values)
        return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """Row i holds the next row_lengths[i] values."""
        lengths = _vector(row_lengths, "row_lengths")
        splits = structure_ops.concat([_zero(), scan_ops.cumsum(lengths)], 0)
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        """Row i starts at values[row_starts[i]] and ends where the next row starts."""
        values = _values_of(values)
        starts = _vector(row_starts, "row_starts")
        count = convert_to_tensor(_row_count(values), dtype=dtypes.int64)
        splits = structure_ops.concat([starts, array_ops.reshape(count, [1])], 0)
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        """Row i ends before values[row_limits[i]] and starts where the row before ends."""
        limits = _vector(row_limits, "row_limits")
        return cls.from_row_splits(
            values, structure_ops.concat([_zero(), limits], 0), validate=validate
        )

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """values[k] belongs to row value_rowids[k] (ids that never decrease); `nrows` rows,
        the last id + 1 where None (rows without values are empty)."""
        values = _values_of(values)
        ids = _vector(value_rowids, "value_rowids")
        if nrows is None:
            known = known_value(ids, "RaggedTensor.from_value_rowids: value_rowids", _DATA_SHAPE)
            nrows = int(known[-1]) + 1 if len(known) else 0
        count = int(known_value(convert_to_tensor(nrows), "from_value_rowids: nrows", _DATA_SHAPE))
        _check_rowids(ids, count)
        bounds = array_ops.range_(count + 1, dtype=dtypes.int64)
        splits = _count_below(ids, bounds)
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True, name=None):  # fmt: skip
        """Rows of `uniform_row_length` values each (a size the shape then shows); `nrows`
        rows where the length is 0."""
        values = _values_of(values)
        width = int(known_value(convert_to_tensor(uniform_row_length), "uniform_row_length"))
        count = _row_count(values)
        if not isinstance(count, int):
            raise TypeError(
                "RaggedTensor.from_uniform_row_length: the count of values must be known when "
                "the function is traced"
            )
        if width < 0 or (width and count % width):
            raise ValueError(
                f"RaggedTensor.from_uniform_row_length: {count} values are no whole number of "
                f"rows of {width}"
            )
        if nrows is None:
            if not width:
                raise ValueError("RaggedTensor.from_uniform_row_length: give nrows for rows of 0")
            nrows = count // width
        result = _uniform_rows(values, int(nrows), width)
        result._uniform_row_length = width
        return result

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        """Ragged dimensions from the outermost in, one row splits vector each."""
        result = _values_of(flat_values)
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate=validate)
        return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        """Ragged dimensions from the outermost in, one row lengths vector each."""
        result = _values_of(flat_values)
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate=validate)
        return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None):
        """The rows of a dense tensor, each cut to lengths[i] elements, or with its trailing
        `padding` elements (a value of the tensor's inner shape) dropped, or whole."""
        tensor = convert_to_tensor(tensor)
        if lengths is not None and padding is not None:
            raise ValueError("RaggedTensor.from_tensor: give lengths or padding, not both")
        if tensor.ndim < ragged_rank + 1:
            raise ValueError(
                f"RaggedTensor.from_tensor: a tensor of rank {tensor.ndim} has no "
                f"{ragged_rank} ragged dimensions (ragged_rank + 1 <= rank)"
            )
        if ragged_rank > 1:
            return cls._from_tensor_nested(tensor, lengths, padding, ragged_rank)
        rows, width = tensor.shape[0], tensor.shape[1]
        if lengths is None and padding is None:
            flat = array_ops.reshape(tensor, [-1, *tensor.shape[2:]])
            return cls.from_uniform_row_length(flat, width, nrows=rows)
        if padding is not None:
            lengths = _unpadded_lengths(tensor, padding)
        lengths = np.asarray(known_value(_vector(lengths, "lengths"), "from_tensor: lengths"))
        lengths = np.minimum(lengths, width)
        keep = np.concatenate([r * width + np.arange(n) for r, n in enumerate(lengths)] + [[]])
        flat = array_ops.reshape(tensor, [-1, *tensor.shape[2:]])
        values = index_ops.gather(flat, keep.astype(np.int64))
        return cls.from_row_lengths(values, lengths.astype(np.int64), validate=False)

    @classmethod
    def _from_tensor_nested(cls, tensor, lengths, padding, ragged_rank):
        """from_tensor with several ragged dimensions, as TensorFlow's: `padding` is
        dropped from the innermost rows (the outer ones keep their length); `lengths`, one
        sequence of row lengths per ragged dimension, cuts each in turn."""
        if lengths is None:
            inner_rows = array_ops.reshape(tensor, [-1, *tensor.shape[2:]])
            inner = cls.from_tensor(inner_rows, padding=padding, ragged_rank=ragged_rank - 1)
            return cls.from_uniform_row_length(inner, tensor.shape[1], nrows=tensor.shape[0])
        if not isinstance(lengths, (list, tuple)) or len(lengths) != ragged_rank:
            raise ValueError(
                f"RaggedTensor.from_tensor: with ragged_rank {ragged_rank}, lengths must be "
                f"{ragged_rank} sequences of row lengths, one for each ragged dimension"
            )
        outer = cls.from_tensor(tensor, lengths=lengths[0])
        rest = lengths[1] if ragged_rank == 2 else lengths[1:]
        return outer.with_values(cls.from_tensor(outer.values, rest, None, ragged_rank - 1))

    @classmethod
    def from_sparse(cls, st_input, name=None):
        """The rows of a sparse matrix whose entries are in row-major order and sit at the
        start of their rows (as a ragged tensor's to_sparse gives them)."""
        indices = np.asarray(
            known_value(st_input.indices, "RaggedTensor.from_sparse: indices", _DATA_SHAPE)
        )
        if st_input.ndim != 2:
            raise ValueError("RaggedTensor.from_sparse: the SparseTensor must be a matrix")
        rows = indices[:, 0]
        starts = np.searchsorted(rows, np.arange(st_input.shape[0] + 1))
        expected = np.arange(len(rows)) - starts[rows]
        if np.any(np.diff(rows) < 0) or np.any(indices[:, 1] != expected):
            raise ValueError(
                "RaggedTensor.from_sparse: each row's entries must be at its first columns, in "
                "row-major order"
            )
        return cls.from_row_splits(st_input.values, starts.astype(np.int64), validate=False)

    @classmethod
    def from_value(cls, value):
        """`value` itself where it is a RaggedTensor (TensorFlow's `from_value`)."""
        if not isinstance(value, RaggedTensor):
            raise TypeError(f"tt.RaggedTensor.from_value: not a RaggedTensor: {value!r}")
        return value

    # --- what it is ----------------------------------------------------------------------

    def _tensor_components(self):
        return (self.flat_values, *self.nested_row_splits)

    def _from_components(self, parts):
        """A RaggedTensor of `parts` with this one's uniform row lengths (a function's
        result keeps the static shape its trace gave it, as TensorFlow's type spec does)."""
        result = _rebuilt(parts)
        level, source = result, self
        while isinstance(level, RaggedTensor) and isinstance(source, RaggedTensor):
            level._uniform_row_length = source._uniform_row_length
            level, source = level._values, source._values
        return result

    @property
    def values(self):
        """The elements of its rows, concatenated (a RaggedTensor for ragged rank > 1)."""
        return self._values

    @property
    def row_splits(self):
        return self._row_splits

    @property
    def flat_values(self):
        """The innermost values: a dense tensor."""
        values = self._values
        while isinstance(values, RaggedTensor):
            values = values._values
        return values

    @property
    def nested_row_splits(self):
        """The row splits of each ragged dimension, from the outermost in."""
        splits, values = [self._row_splits], self._values
        while isinstance(values, RaggedTensor):
            splits.append(values._row_splits)
            values = values._values
        return tuple(splits)

    @property
    def ragged_rank(self):
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def shape(self):
        """The rows, None for each ragged dimension (its length where it is uniform), then
        the uniform inner dimensions."""
        rows = self._row_splits.shape[0]
        rows = rows - 1 if isinstance(rows, int) else None
        lengths, level = [], self
        while isinstance(level, RaggedTensor):
            lengths.append(level._uniform_row_length)
            level = level._values
        inner = [d if isinstance(d, int) else None for d in level.shape[1:]]
        return TensorShape([rows, *lengths, *inner])

    def get_shape(self):
        return self.shape

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def uniform_row_length(self):
        """The length of every row where it is uniform (an int64 scalar), else None."""
        width = self._uniform_row_length
        return None if width is None else convert_to_tensor(np.int64(width))

    @property
    def row_splits_dtype(self):
        return dtypes.int64

    def nrows(self, out_type=None, name=None):
        """The count of rows, a scalar tensor."""
        rows = array_ops.shape(self._row_splits, out_type=dtypes.int64)[0] - 1
        return rows if out_type is None else array_ops.cast(rows, out_type)

    def row_lengths(self, axis=1, name=None):
        """The length of each row (axis 1), or of each row of a ragged dimension further in,
        as a ragged tensor of the dimensions before it."""
        if axis == 1:
            return self._row_splits[1:] - self._row_splits[:-1]
        if not 1 < axis <= self.ragged_rank:
            raise ValueError(
                f"RaggedTensor.row_lengths: axis {axis} is not a ragged dimension of a tensor "
                f"of ragged rank {self.ragged_rank}"
            )
        return self.with_values(self._values.row_lengths(axis - 1))

    def row_starts(self, name=None):
        return self._row_splits[:-1]

    def row_limits(self, name=None):
        return self._row_splits[1:]

    def nested_row_lengths(self, name=None):
        return tuple(s[1:] - s[:-1] for s in self.nested_row_splits)

    def value_rowids(self, name=None):
        """The row of each value: int64, one per value."""
        return _count_below(self._row_splits[1:], positions(self._values), inclusive=True)

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The shape of the smallest dense tensor that holds it (int64, or `out_type`), or
        its sizes on `axis` (an int, or a list of them): the count of rows, the longest row
        of each ragged dimension, the inner sizes; computed with ops, so it traces with row
        splits known only when the function runs."""
        sizes = [self.nrows()]
        for splits in self.nested_row_splits:
            lengths = structure_ops.concat([splits[1:] - splits[:-1], _zero()], 0)
            sizes.append(reduce_max(lengths))
        sizes += [convert_to_tensor(np.int64(d)) for d in self.flat_values.shape[1:]]
        bounds = structure_ops.stack(sizes, 0)
        if out_type is not None:
            bounds = array_ops.cast(bounds, out_type)
        if axis is None:
            return bounds
        if isinstance(axis, (int, np.integer)):
            return bounds[axis]
        return index_ops.gather(bounds, axis)

    def with_values(self, new_values):
        """The same row splits over `new_values` (as many rows as its values had)."""
        result = RaggedTensor(_values_of(new_values), self._row_splits, internal=True)
        result._uniform_row_length = self._uniform_row_length
        return result

    def with_flat_values(self, new_values):
        """The same nested row splits over new flat values."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype):
        require_int64_splits(dtype, "RaggedTensor.with_row_splits_dtype")
        return self

    # --- conversions ---------------------------------------------------------------------

    def to_tensor(self, default_value=None, name=None, shape=None):
        """The dense tensor, each row padded with `default_value` (zero, or '' for strings)
        to the longest row's length, or cut or padded to `shape` where its sizes are given."""
        if isinstance(self._values, RaggedTensor):
            inner_shape = None if shape is None else [None, *list(shape)[2:]]
            values = self._values.to_tensor(default_value, shape=inner_shape)
        else:
            values = self._values
        splits = self._known_splits("to_tensor")
        lengths = np.diff(splits)
        width = int(lengths.max()) if len(lengths) else 0
        rows = len(lengths)
        wanted = [None] * (len(values.shape) + 1) if shape is None else list(shape)
        width = width if wanted[1] is None else int(wanted[1])
        rows = rows if wanted[0] is None else int(wanted[0])
        ids = np.repeat(np.arange(len(lengths)), lengths)
        columns = np.arange(len(ids)) - splits[ids]
        kept = np.flatnonzero((ids < rows) & (columns < width))
        positions = np.stack([ids[kept], columns[kept]], 1).astype(np.int64).reshape(-1, 2)
        inner = [int(d) for d in values.shape[1:]]
        picked = index_ops.gather(values, kept.astype(np.int64))
        if values.dtype.is_string:
            return _dense_strings(picked, positions, [rows, width, *inner], default_value)
        dense = scatter_nd_ops.scatter_nd(positions, picked, [rows, width, *inner])
        if default_value is None:
            return dense
        default = convert_to_tensor(default_value, dtype=values.dtype)
        present = np.zeros([rows, width], bool)
        present[positions[:, 0], positions[:, 1]] = True
        present = present.reshape([rows, width] + [1] * len(inner))
        return math_ops.where(present, dense, default)

    def to_sparse(self, name=None):
        """A SparseTensor of its elements, at their row and position in the row."""
        from tracer.sparse_tensor import SparseTensor

        if self.ragged_rank != 1 or self.flat_values.ndim != 1:
            raise NotImplementedError("RaggedTensor.to_sparse: tracer takes a ragged matrix")
        splits = self._known_splits("to_sparse")
        ids = np.repeat(np.arange(len(splits) - 1), np.diff(splits))
        columns = np.arange(len(ids)) - splits[ids]
        width = int(np.diff(splits).max()) if len(ids) else 0
        indices = np.stack([ids, columns], 1).astype(np.int64).reshape(-1, 2)
        return SparseTensor(indices, self._values, [len(splits) - 1, width])

    def to_list(self):
        """Its rows as nested Python lists (strings as bytes)."""
        flat = np.asarray(self.flat_values.numpy())
        rows = flat.tolist()
        for splits in reversed(self._all_known_splits("to_list")):
            rows = [rows[a:b] for a, b in zip(splits[:-1], splits[1:])]
        return rows

    def numpy(self):
        """Its value as numpy arrays, as TensorFlow's: a dimension whose rows are of one
        length is an axis of an array, a ragged one an object array of its rows."""
        values = self._values.numpy()
        splits = self._known_splits("numpy")
        rows = [values[a:b] for a, b in zip(splits[:-1], splits[1:])]
        if not rows:
            return np.zeros((0, 0, *values.shape[1:]), values.dtype)
        if len({len(row) for row in rows}) == 1:
            return np.array(rows)
        out = np.empty(len(rows), dtype=object)
        for k, row in enumerate(rows):
            out[k] = row
        return out

    def __repr__(self):
        """`<tracer.RaggedTensor [[3, 1], [4]]>`: its numpy value as numpy prints arrays,
        with commas between the elements (as TensorFlow prints it, lines wrapped alike)."""
        if self.flat_values._value is None or self._row_splits._value is None:
            return f"tracer.RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"
        with np.printoptions(formatter={"all": _element_text}):
            return f"<tracer.RaggedTensor {_element_text(self.numpy())}>"

    __str__ = __repr__

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "a RaggedTensor has no dense value: make it dense with rt.to_tensor(), or take "
            "rt.flat_values"
        )

    def __bool__(self):
        raise TypeError("a RaggedTensor has no truth value")

    # (its indexing, operators and merge_dims: tracer/ragged_indexing.py, tracer/ragged_ops.py,
    # tracer/ragged_dims.py)

    def _known_splits(self, what):
        return np.asarray(
            known_value(self._row_splits, f"RaggedTensor.{what}: the row splits", _DATA_SHAPE)
        )

    def _all_known_splits(self, what):
        return [
            np.asarray(known_value(s, f"RaggedTensor.{what}: the row splits", _DATA_SHAPE))
            for s in self.nested_row_splits
        ]

    def _splits_when_run(self, what):
        """Every row splits vector (numpy, outermost first) where the sizes of `what`'s
        result depend on them: known now, or, computed when a traced function runs,
        SizeKnownWhenRun, so that the function runs as Python at each call
        (`length_value`), as TensorFlow's graph takes sizes known only then."""
        return [
            np.asarray(length_value(s, f"RaggedTensor.{what}: the row splits"))
            for s in self.nested_row_splits
        ]


class RaggedTensorSpec(_Composite):
    """The type of a RaggedTensor (`input_signature`, `get_concrete_function`,
    `element_spec`): its shape (None for the ragged dimensions), dtype and ragged rank.

    >>> tt.RaggedTensorSpec([None, None], tt.int32)
    RaggedTensorSpec(TensorShape([None, None]), tt.int32, 1, tt.int64)
    """

    __slots__ = ("_shape", "dtype", "ragged_rank", "row_splits_dtype", "_components")

    def __init__(self, shape=None, dtype=dtypes.float32, ragged_rank=None, row_splits_dtype=dtypes.int64, flat_values_spec=None):  # fmt: skip
        if shape is None:
            raise ValueError("tt.RaggedTensorSpec: give the shape (None for an unknown size)")
        self._shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.ragged_rank = len(self._shape) - 1 if ragged_rank is None else int(ragged_rank)
        if not 0 <= self.ragged_rank < len(self._shape):
            raise ValueError(
                f"tt.RaggedTensorSpec: ragged_rank {self.ragged_rank} for a shape of rank "
                f"{len(self._shape)} (0 <= ragged_rank < rank)"
            )
        require_int64_splits(row_splits_dtype, "tt.RaggedTensorSpec")
        if flat_values_spec is not None:
            raise NotImplementedError("tt.RaggedTensorSpec: flat_values_spec is not supported")
        self.row_splits_dtype = dtypes.int64
        self._components = None  # the specs of its components where a trace gave them

    @property
    def shape(self):
        return TensorShape(list(self._shape))

    def _tensor_components(self):
        if self._components is not None:
            return self._components
        if self.ragged_rank == 0:  # (a row of a ragged matrix in a dataset: a dense tensor)
            return (TensorSpec(self._shape, self.dtype),)
        rows = self._shape[0]
        outer = TensorSpec([None if rows is None else rows + 1], dtypes.int64)
        inner = [TensorSpec([None], dtypes.int64) for _ in range(self.ragged_rank - 1)]
        flat = TensorSpec([None, *self._shape[self.ragged_rank + 1 :]], self.dtype)
        return (flat, outer, *inner)

    def _conformed(self, value, name):
        """`value` where it is a RaggedTensor this spec takes (an input_signature's check of
        argument `name`); a SignatureMismatchError otherwise."""
        fits = (
            isinstance(value, RaggedTensor)
            and value.dtype == self.dtype
            and value.ragged_rank == self.ragged_rank
            and len(value.shape) == len(self._shape)
            and all(k is None or k == d for d, k in zip(value.shape, self._shape))
        )
        if not fits:
            raise SignatureMismatchError(
                f"argument {name} is {value!r}, the input_signature says {self!r}"
            )
        return value

    def generalized(self, other):
        """This spec with None wherever `other`'s shape differs."""
        shape = [a if a == b else None for a, b in zip(self._shape, other._shape)]
        return RaggedTensorSpec(shape, self.dtype, self.ragged_rank)

    def __eq__(self, other):
        return isinstance(other, RaggedTensorSpec) and (
            (self._shape, self.dtype, self.ragged_rank)
            == (other._shape, other.dtype, other.ragged_rank)
        )

    def __hash__(self):
        return hash((self._shape, self.dtype, self.ragged_rank))

    def __repr__(self):
        return (
            f"RaggedTensorSpec({self.shape!r}, {self.dtype!r}, {self.ragged_rank}, "
            f"{self.row_splits_dtype!r})"
        )


# --- helpers ------------------------------------------------------------------------------


def require_int64_splits(dtype, what):
    """A NotImplementedError naming `what` for row splits of a dtype other than int64 (None
    meaning int64)."""
    if dtype is not None and dtypes.as_dtype(dtype) != dtypes.int64:
        raise NotImplementedError(
            f"{what}: row_splits_dtype {dtypes.as_dtype(dtype).name}; tracer's RaggedTensor "
            "keeps its row splits as int64"
        )


def require_same_rows(x, y, levels=None):
    """An InvalidArgumentError where two ragged tensors' rows differ (known splits), on
    every ragged dimension or on the outermost `levels`."""
    if x.ragged_rank != y.ragged_rank:
        raise InvalidArgumentError(
            None, None, f"ragged ranks {x.ragged_rank} and {y.ragged_rank} do not broadcast"
        )
    pairs = list(zip(x.nested_row_splits, y.nested_row_splits))
    for a, b in pairs[:levels]:
        if a is b:
            continue
        first, second = a._value, b._value
        if first is None or second is None:
            raise NotImplementedError(
                "an elementwise op of two RaggedTensors whose row splits are computed in a "
                "traced function: tracer needs them the same tensor, or known"
            )
        if not np.array_equal(first, second):
            raise InvalidArgumentError(
                None,
                None,
                f"the row lengths of two ragged operands differ: {np.diff(first).tolist()} "
                f"and {np.diff(second).tolist()}",
            )


def _rebuilt(parts):
    """What a structure's components pack into: a RaggedTensorSpec of specs, else a
    RaggedTensor holding `parts` as they are (tensors, or the markers a trace's signature
    packs into an argument's place)."""
    flat, *nested = parts
    if all(isinstance(p, TensorSpec) for p in parts):
        rows = nested[0].shape[0] if not is_unknown_rank(nested[0].shape) else None
        rows = rows - 1 if isinstance(rows, int) else None
        inner = list(flat.shape[1:]) if not is_unknown_rank(flat.shape) else []
        spec = RaggedTensorSpec([rows, *[None] * len(nested), *inner], flat.dtype, len(nested))
        spec._components = tuple(parts)
        return spec
    result = flat
    for splits in reversed(nested):
        result = RaggedTensor(result, splits, internal=True)
    return result


def _values_of(values):
    if isinstance(values, RaggedTensor):
        return values
    values = convert_to_tensor(values)
    if values.ndim == 0:
        raise ValueError("tt.RaggedTensor: values must have rank 1 or more, not be a scalar")
    return values


def _vector(value, what):
    """An int64 vector; a TypeError for one that is not of integers."""
    tensor = value if isinstance(value, TensorLike) else None
    if tensor is None:
        array = np.asarray(value)
        if array.size and array.dtype.kind not in "iu":
            raise TypeError(f"tt.RaggedTensor: {what} must be integers, not {array.dtype}")
        tensor = convert_to_tensor(array.astype(np.int64))
    tensor = convert_to_tensor(tensor)
    if not tensor.dtype.is_integer:
        raise TypeError(f"tt.RaggedTensor: {what} must be integers, not {tensor.dtype.name}")
    if tensor.ndim != 1:
        raise ValueError(f"tt.RaggedTensor: {what} must be a vector, not of shape {tensor.shape}")
    return array_ops.cast(tensor, dtypes.int64) if tensor.dtype != dtypes.int64 else tensor


def _zero():
    return convert_to_tensor(np.zeros(1, np.int64))


def _row_count(values):
    """The count of rows of `values` (a tensor's first dimension, a ragged tensor's nrows):
    an int where it is known, else an int64 scalar tensor."""
    if isinstance(values, RaggedTensor):
        rows = values._row_splits.shape[0]
        return rows - 1 if isinstance(rows, int) else values.nrows()
    rows = values.shape[0]
    return rows if isinstance(rows, int) else array_ops.shape(values, out_type=dtypes.int64)[0]


def positions(values):
    """0, 1, ... for each row of `values` (a tensor or a ragged tensor): int64, also for a
    count known only when a traced function runs."""
    count = _row_count(values)
    if isinstance(count, int):
        return convert_to_tensor(np.arange(count, dtype=np.int64))
    ones = array_ops.ones(array_ops.reshape(count, [1]), dtypes.int64)
    return scan_ops.cumsum(ones, exclusive=True)


def _count_below(sorted_ids, bounds, inclusive=False):
    """For each of `bounds`, how many of `sorted_ids` are below it (at or below it where
    `inclusive`): int64."""
    below = (math_ops.less_equal if inclusive else math_ops.less)(
        array_ops.expand_dims(sorted_ids, 0), array_ops.expand_dims(bounds, 1)
    )
    from tracer.ops.broadcast_ops import reduce_sum

    return reduce_sum(array_ops.cast(below, dtypes.int64), axis=1)


def _check_splits(splits, values):
    """An InvalidArgumentError for eagerly known row splits that do not start at 0, that
    decrease, or that do not end at the count of values, as TensorFlow checks."""
    known = splits._value
    if known is None:
        return
    count = _row_count(values)
    problem = None
    if len(known) == 0:
        problem = "must have at least one element"
    elif known[0] != 0:
        problem = f"must start at 0, not {known[0]}"
    elif np.any(np.diff(known) < 0):
        problem = f"must not decrease: {known.tolist()}"
    elif isinstance(count, int) and known[-1] != count:
        problem = f"must end at the count of values, {count}, not {known[-1]}"
    if problem:
        raise InvalidArgumentError(None, None, f"tt.RaggedTensor: row_splits {problem}")


def _check_rowids(ids, nrows):
    """An InvalidArgumentError for eagerly known row ids that decrease or are not rows."""
    known = ids._value
    if known is None or not len(known):
        return
    if np.any(np.diff(known) < 0) or known[0] < 0 or known[-1] >= nrows:
        raise InvalidArgumentError(
            None,
            None,
            f"tt.RaggedTensor.from_value_rowids: value_rowids must not decrease and must be "
            f"rows 0 to {nrows - 1}: {known.tolist()}",
        )


def _uniform_rows(values, rows, width):
    """`values` cut into `rows` rows of `width` each."""
    splits = np.arange(0, rows * width + 1, width if width else 1, dtype=np.int64)
    if width == 0:
        splits = np.zeros(rows + 1, np.int64)
    return RaggedTensor.from_row_splits(values, splits, validate=False)


def _unpadded_lengths(tensor, padding):
    """Each row's length without its trailing elements equal to `padding`."""
    value = np.asarray(known_value(tensor, "RaggedTensor.from_tensor: tensor", _DATA_SHAPE))
    pad = np.asarray(known_value(convert_to_tensor(padding, dtype=tensor.dtype), "padding"))
    same = value == pad
    same = same.reshape(same.shape[:2] + (-1,)).all(axis=2)
    width = value.shape[1]
    kept = ~same
    last = np.where(kept.any(axis=1), width - np.argmax(kept[:, ::-1], axis=1), 0)
    return last.astype(np.int64)


def _element_text(value):
    """An array as numpy prints it with commas between its elements (an empty one as its
    nested list, which keeps its inner lengths); anything else as str() gives it."""
    if not isinstance(value, np.ndarray):
        return str(value)
    if value.size == 0:
        return repr(value.tolist())
    return np.array2string(value, separator=", ")


def _dense_strings(picked, positions, shape, default_value):
    """A string tensor of `shape` holding `picked` at `positions` and `default_value` ('')
    elsewhere (strings have no gradient: built in numpy)."""
    out = np.full(shape, b"" if default_value is None else _as_bytes(default_value), object)
    out[positions[:, 0], positions[:, 1]] = np.asarray(picked.numpy(), object)
    return convert_to_tensor(out)


def _as_bytes(value):
    return value.encode() if isinstance(value, str) else value
