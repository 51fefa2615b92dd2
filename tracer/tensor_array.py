"""`tt.TensorArray`: TensorFlow's list of tensors of one dtype and shape, for loop outputs.

Like TensorFlow's, it is functional: `write` returns the new array (the old one is not to be
used again), so it passes through `tt.while_loop` as a loop variable.

- Eagerly it is a Python list of tensors; with `dynamic_size=True` it grows on writes.
- Traced (inside tt.function), it is one tensor of shape (size, *element_shape): `write`
  replaces a row (a select against the row's index, so it differentiates and compiles like
  any op), `read` gathers one, `stack` is the tensor itself. The size must be known when
  tracing (as in XLA); the element shape is the first write's, and a loop that writes an
  array created before it learns the shape by tracing its body once more.
- With `infer_shape=False` the elements may differ in shape, as TensorFlow's may, for
  `concat`. Traced, such an array is a Python list of the written tensors while every write
  has an index known when tracing; it becomes the one tensor above (its elements then of one
  shape, or an error says why) when it is read or written at an index known only when the
  function runs, stacked, or carried by a loop.
- An array whose size is known only when the function runs (a size given as such a tensor,
  or one with dynamic_size=True written at such an index: a loop that collects values until
  it breaks) cannot be compiled: the function runs as Python at each call, with a log line
  that says why (tracer/errors.py's RunsAsPython), as TensorFlow's program runs in its graph.
"""

import copy

import numpy as np

from tracer import dtypes
from tracer.context import state
from tracer.control.region import at_user_line
from tracer.errors import InvalidArgumentError, RunsAsPython, mixed
from tracer.ir import dims
from tracer.ops import array_ops, convert, index_ops, math_ops, reduction_ops, structure_ops
from tracer.tensor import TensorLike, constant


class TensorArray:
    """A list of tensors of `dtype`, of `size` elements (or growing, with dynamic_size)."""

    def __init__(
        self,
        dtype,
        size=None,
        dynamic_size=None,
        clear_after_read=None,
        tensor_array_name=None,
        handle=None,
        flow=None,
        infer_shape=True,
        element_shape=None,
        colocate_with_first_write_call=True,
        name=None,
    ):
        self.dtype = dtypes.as_dtype(dtype)
        self._size = None if size is None else convert.static_int(size)
        self._size_given = size is not None  # (a size known only when the function runs)
        self._dynamic = bool(dynamic_size)
        self._infer = bool(infer_shape)
        # the shape every element must have: declared, or (with infer_shape) the first write's
        self._element_shape = None if element_shape is None else tuple(element_shape)
        self._eager = state.trace is None and not state.building
        # eagerly, and traced while an infer_shape=False array is a list: the elements
        self._elements = [None] * (self._size or 0) if self._eager else None
        self._buffer = None  # traced: the elements as rows of one tensor
        if not self._eager and self._element_shape is not None:
            self._buffer = array_ops.zeros((self._known_size(), *self._element_shape), self.dtype)

    # --- reading ------------------------------------------------------------------------

    @property
    def element_shape(self):
        return self._element_shape

    def size(self, name=None):
        if self._elements is not None:
            count = len(self._elements)
        elif self._buffer is not None:
            count = self._buffer.shape[0]
        else:
            count = self._known_size()
        return convert.as_tensor(np.int32(count))

    def read(self, index, name=None):
        if self._eager or (self._listed(index) and self._elements is not None):
            return self._written(self._index(index, len(self._elements), growing=False))
        return index_ops.gather(self._materialized(), index)

    def stack(self, name=None):
        if not self._eager:
            return self._materialized()
        if not self._elements:
            shape = (0, *(self._element_shape or ()))
            return array_ops.zeros(shape, self.dtype)
        return structure_ops.stack([self._written(k) for k in range(len(self._elements))])

    def gather(self, indices, name=None):
        if not self._eager:
            return index_ops.gather(self._materialized(), indices)
        return structure_ops.stack([self.read(k) for k in np.asarray(convert.as_tensor(indices))])

    def concat(self, name=None):
        """The elements joined along their first axis (they may differ in length there)."""
        if self._elements and (self._eager or self._buffer is None):
            pieces = [self._written(k) for k in range(len(self._elements))]
            for k, piece in enumerate(pieces):
                _check_concatenable(k, piece.shape)
            return structure_ops.concat(pieces, 0)
        if self._eager:  # nothing written
            return array_ops.zeros((0, *(self._element_shape or ())[1:]), self.dtype)
        stacked = self._materialized()
        _check_concatenable(0, stacked.shape[1:])
        return array_ops.reshape(stacked, (-1, *stacked.shape[2:]))

    # --- writing ------------------------------------------------------------------------

    def write(self, index, value, name=None):
        value = self._checked(value)
        if self._eager or self._listed(index):
            elements = self._list()
            k = self._index(index, len(elements), growing=self._dynamic)
            elements += [None] * max(0, k + 1 - len(elements))
            elements[k] = value
            return self._with(elements=elements)
        buffer = self._buffer if self._elements is None else self._materialized()
        if buffer is None:
            buffer = array_ops.zeros((self._known_size(), *value.shape), self.dtype)
        elif tuple(value.shape) != tuple(buffer.shape[1:]):  # (only with infer_shape=False)
            raise ValueError(
                f"a TensorArray in a tt.function holds its elements as rows of one tensor: "
                f"once read or written at an index known only when the function runs, stacked "
                f"or carried by a loop, its elements are all of shape {tuple(buffer.shape[1:])}"
                f", and a value of shape {tuple(value.shape)} cannot be written{at_user_line()}"
            )
        k = convert.static_int(index)
        if k is not None and k >= buffer.shape[0]:  # known now: grow, if it may
            if not self._dynamic:
                raise ValueError(
                    f"TensorArray index {k} is out of range for a TensorArray of size "
                    f"{buffer.shape[0]}"
                )
            more = array_ops.zeros((k + 1 - buffer.shape[0], *value.shape), self.dtype)
            buffer = structure_ops.concat([buffer, more], 0)
        if k is None and self._dynamic:
            raise RunsAsPython(
                "writes a TensorArray(dynamic_size=True) at an index known only when the "
                f"function runs{at_user_line()}: compiled code holds a TensorArray of a size "
                "fixed when tracing, so the function runs as Python at each call. To compile "
                "it, give `size` an upper bound on the number of elements, or collect the "
                "values in a loop of a known number of iterations (`for i in tt.range(n)` "
                "with TensorArray(size=n))"
            )
        if k is not None and k >= 0:
            spliced = _spliced(buffer, k, array_ops.expand_dims(value, 0))
            return self._with(buffer=spliced, element=value.shape)
        rows = array_ops.range_(0, buffer.shape[0], dtype=dtypes.int32)
        # the row at `index` (gather checks it is in range, when the function runs)
        row = index_ops.gather(rows, array_ops.cast(convert.as_tensor(index), dtypes.int32))
        hit = math_ops.equal(rows, row)
        mask = array_ops.reshape(hit, (buffer.shape[0],) + (1,) * len(value.shape))
        return self._with(buffer=math_ops.where(mask, value, buffer), element=value.shape)

    def unstack(self, value, name=None):
        value = self._as_tensor(value)
        if value.dtype != self.dtype:
            raise TypeError(f"TensorArray of {self.dtype.name}: cannot unstack {value.dtype.name}")
        if self._eager:
            return self._with(elements=list(structure_ops.unstack(value)), element=value.shape[1:])
        return self._with(buffer=value, element=value.shape[1:])

    def split(self, value, lengths, name=None):
        """The array whose element k is the next `lengths[k]` rows of `value`, as
        TensorFlow's (elements of different lengths want infer_shape=False); `lengths` must
        be known when tracing and sum to value's length."""
        value = self._as_tensor(value)
        sizes = np.asarray(convert.known_value(lengths, "TensorArray.split: lengths"))
        sizes = [int(n) for n in sizes.reshape(-1)]
        if any(n < 0 for n in sizes) or not dims.equals(sum(sizes), value.shape[0]):
            raise mixed(InvalidArgumentError, ValueError)(
                f"TensorArray.split: lengths {sizes} must be non-negative and sum to the "
                f"value's length, {value.shape[0]}{at_user_line()}"
            )
        array, start = self, 0
        for k, n in enumerate(sizes):
            array = array.write(k, value[start : start + n])
            start += n
        return array

    def scatter(self, indices, value, name=None):
        """The array with `value[p]` written at `indices[p]`; `indices` may be a tensor known
        only when the function runs, of a length known when tracing. Traced, the rows are
        replaced at once: a run of consecutive indices known when tracing by a concat of
        the slices around it, any others by a gather of `value`'s rows and a select (linear
        in the array's size, where a write per index would be quadratic); the last of
        repeated indices wins, as writes in order would."""
        value = self._as_tensor(value)
        indices = convert.as_tensor(indices)
        count = indices.shape[0] if len(indices.shape) == 1 else None
        if indices._value is None and not isinstance(count, (int, np.integer)):
            raise ValueError(
                "TensorArray.scatter in a tt.function needs a vector of indices whose "
                f"length is known when tracing, not one of shape {indices.shape}"
                f"{at_user_line()}"
            )
        if self._eager or not self._infer or self._dynamic:
            return self._scatter_by_writes(indices, value)
        if value.ndim == 0 or value.shape[0] != count:
            raise ValueError(
                f"TensorArray.scatter: {count} indices for a value of shape "
                f"{tuple(value.shape)}: its first axis must hold one element per index"
            )
        element = tuple(value.shape[1:])
        self._checked_element(value.dtype, element)
        buffer = self._buffer
        if buffer is None:
            buffer = array_ops.zeros((self._known_size(), *element), self.dtype)
        size = buffer.shape[0]
        if indices._value is not None:
            positions = np.asarray(indices._value).reshape(-1)
            start = int(positions[0]) if len(positions) else 0
            if (
                0 <= start
                and start + count <= size
                and (positions == start + np.arange(count)).all()
            ):
                return self._with(buffer=_spliced(buffer, start, value), element=element)
            source, hit = _scattered_rows(positions, size)
        else:
            source, hit = _scattered_rows_at_run_time(indices, count, size)
        mask = array_ops.reshape(hit, (size,) + (1,) * len(element))
        rows = index_ops.gather(value, source)
        return self._with(buffer=math_ops.where(mask, rows, buffer), element=element)

    def _scatter_by_writes(self, indices, value):
        """scatter as one write per index (eagerly, or where the array is a list or grows)."""
        if indices._value is not None:
            positions = [int(k) for k in np.asarray(indices._value).reshape(-1)]
        else:
            positions = [indices[p] for p in range(indices.shape[0])]
        array = self
        for position, k in enumerate(positions):
            array = array.write(k, value[position])
        return array

    def close(self, name=None):
        return self

    # --- as a loop variable ---------------------------------------------------------------

    def _tensor_components(self):
        """The tensors that stand for it in a loop (none eagerly, or before a traced write)."""
        if self._eager:
            return []
        if self._buffer is None and any(e is not None for e in self._elements or ()):
            return [self._materialized()]
        return [] if self._buffer is None else [self._buffer]

    def _from_components(self, components):
        if not components:
            return self
        (buffer,) = components
        return self._with(buffer=buffer, element=buffer.shape[1:])

    def _materialize_like(self, written):
        """This array, not yet written, with zeros in the shape `written` (its value after a
        loop's body) has: what the loop carries."""
        if self._eager or self._tensor_components() or written._buffer is None:
            return self
        zeros = array_ops.zeros(written._buffer.shape, self.dtype)
        return self._with(buffer=zeros, element=zeros.shape[1:])

    # --- helpers --------------------------------------------------------------------------

    def _with(self, elements=None, buffer=None, element=None):
        """A copy with new elements (eagerly, or a traced list) or a new traced buffer (which
        replaces a traced list); `element`, a written shape, becomes the element shape where
        it is inferred."""
        new = copy.copy(self)
        if elements is not None:
            new._elements = elements
        if buffer is not None:
            new._buffer, new._elements = buffer, None
        if self._infer and new._element_shape is None:
            if element is not None:
                new._element_shape = tuple(element)
            elif elements is not None:
                shapes = {tuple(e.shape) for e in elements if e is not None}
                new._element_shape = shapes.pop() if len(shapes) == 1 else None
        return new

    def _listed(self, index):
        """Whether a traced array is, and stays, a list for an access at `index`: with
        infer_shape=False, before it is one tensor, at an index known when tracing."""
        if self._eager or self._infer or self._buffer is not None:
            return False
        return convert.static_int(index) is not None

    def _list(self):
        """A copy of the elements' list (traced: made at the first write)."""
        if self._elements is None:
            return [None] * (self._size or 0) if self._dynamic else [None] * self._known_size()
        return list(self._elements)

    def _checked(self, value):
        value = self._as_tensor(value)
        self._checked_element(value.dtype, tuple(value.shape))
        return value

    def _checked_element(self, dtype, shape):
        if dtype != self.dtype:
            raise TypeError(f"TensorArray of {self.dtype.name}: cannot write a {dtype.name} value")
        if self._element_shape is not None and shape != self._element_shape:
            raise ValueError(
                f"TensorArray of elements of shape {self._element_shape}: cannot write a "
                f"value of shape {shape}{at_user_line()}"
            )

    def _as_tensor(self, value):
        """A tensor of it; Python numbers and lists take the array's dtype, as in TensorFlow."""
        if isinstance(value, TensorLike):
            return convert.as_tensor(value)
        return constant(value, dtype=self.dtype)

    def _index(self, index, size, growing):
        """The index known now (eagerly, or of a traced list), checked against `size`."""
        k = convert.static_int(index)
        if k < 0 or (k >= size and not growing):
            raise ValueError(
                f"TensorArray index {k} is out of range for a TensorArray of size {size}"
            )
        return k

    def _written(self, k):
        """Element `k`; one not written is zeros where the element shape is known (as in
        TensorFlow, and as in the traced array's rows)."""
        if self._elements[k] is None:
            if self._element_shape is not None and all(
                isinstance(d, (int, np.integer)) for d in self._element_shape
            ):
                return array_ops.zeros(self._element_shape, self.dtype)
            raise ValueError(
                f"Could not read from TensorArray index {k} because it has not yet been written to."
            )
        return self._elements[k]

    def _known_size(self):
        if self._size is None and self._size_given:
            raise RunsAsPython(
                f"makes a TensorArray of a size known only when the function runs"
                f"{at_user_line()}: compiled code holds a TensorArray of a size fixed when "
                "tracing, so the function runs as Python at each call"
            )
        if self._size is None:
            raise ValueError(
                "a TensorArray inside a tt.function needs a size known when tracing "
                "(TensorArray(dtype, size=n)): its compiled storage is of that many elements"
            )
        return self._size

    def _materialized(self):
        """The traced buffer, made from the list of elements or from the element shape."""
        if self._buffer is None:
            if any(e is not None for e in self._elements or ()):
                self._buffer = self._stacked_list()
            elif self._element_shape is None:
                raise ValueError("the TensorArray has not been written to: its shape is unknown")
            else:
                shape = (self._known_size(), *self._element_shape)
                self._buffer = array_ops.zeros(shape, self.dtype)
        return self._buffer

    def _stacked_list(self):
        """A traced list of elements as one tensor, zeros where nothing was written."""
        shapes = sorted({tuple(e.shape) for e in self._elements if e is not None}, key=str)
        if len(shapes) > 1:
            raise ValueError(
                f"a TensorArray in a tt.function with elements of shapes "
                f"{', '.join(map(str, shapes))} can only be concatenated (concat) or read at "
                "indices known when tracing: stacking it, reading or writing it at an index "
                "known only when the function runs, or carrying it through a loop makes its "
                f"elements rows of one tensor{at_user_line()}"
            )
        zeros = array_ops.zeros(shapes[0], self.dtype)
        return structure_ops.stack([zeros if e is None else e for e in self._elements])

    def __repr__(self):
        return f"<tracer.TensorArray dtype={self.dtype.name} size={self._size}>"


def _check_concatenable(k, shape):
    """TensorArray.concat joins elements along their first axis: a scalar has none."""
    if len(shape) == 0:
        raise ValueError(
            f"TensorArray.concat: element {k} is a scalar, and concat joins the elements "
            f"along their first axis{at_user_line()}"
        )


def _spliced(buffer, start, rows):
    """`buffer` with `rows` in place of its rows from `start` on (known when tracing): a
    concat of the slices around them, which reads each row once, where a select would read
    the whole buffer and the rows both."""
    stop = start + rows.shape[0]
    pieces = [buffer[:start]] if start else []
    pieces.append(rows)
    if stop < buffer.shape[0]:
        pieces.append(buffer[stop:])
    return structure_ops.concat(pieces, 0) if len(pieces) > 1 else rows


def _scattered_rows(positions, size):
    """For indices known when tracing: (the row of `value` each array row takes, whether it
    takes one), as constants; the last of repeated indices wins."""
    source, hit = np.zeros(size, np.int32), np.zeros(size, bool)
    for p, k in enumerate(positions.tolist()):
        if not 0 <= k < size:
            raise ValueError(
                f"TensorArray index {k} is out of range for a TensorArray of size {size}"
            )
        source[k], hit[k] = p, True
    return constant(source), constant(hit)


def _scattered_rows_at_run_time(indices, count, size):
    """As `_scattered_rows`, computed when the function runs: each array row against each
    index (gather checks the indices are in range); the largest matching position wins."""
    rows = array_ops.range_(0, size, dtype=dtypes.int32)
    checked = index_ops.gather(rows, array_ops.cast(indices, dtypes.int32))
    matches = math_ops.equal(
        array_ops.reshape(rows, (size, 1)), array_ops.reshape(checked, (1, count))
    )
    numbered = array_ops.cast(matches, dtypes.int32) * array_ops.range_(
        1, count + 1, dtype=dtypes.int32
    )
    last = reduction_ops.reduce_max(numbered, axis=1)  # position + 1, or 0 for no match
    return math_ops.maximum(last - 1, 0), math_ops.greater(last, 0)
