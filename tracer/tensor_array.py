"""`tt.TensorArray`: TensorFlow's list of tensors of one dtype and shape, for loop outputs.

Like TensorFlow's, it is functional: `write` returns the new array (the old one is not to be
used again), so it passes through `tt.while_loop` as a loop variable.

- Eagerly it is a Python list of tensors; with `dynamic_size=True` it grows on writes.
- Traced (inside tt.function), it is one tensor of shape (size, *element_shape): `write`
  replaces a row (a select against the row's index, so it differentiates and compiles like
  any op), `read` gathers one, `stack` is the tensor itself. The size must be known when
  tracing (as in XLA); the element shape is the first write's, and a loop that writes an
  array created before it learns the shape by tracing its body once more.
"""

import numpy as np

from tracer import dtypes
from tracer.context import state
from tracer.ops import array_ops, convert, index_ops, math_ops, structure_ops
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
        self._dynamic = bool(dynamic_size)
        self._element_shape = None if element_shape is None else tuple(element_shape)
        self._eager = state.trace is None and not state.building
        self._elements = [None] * (self._size or 0) if self._eager else None
        self._buffer = None
        if not self._eager and self._element_shape is not None:
            self._buffer = array_ops.zeros((self._known_size(), *self._element_shape), self.dtype)

    # --- reading ------------------------------------------------------------------------

    @property
    def element_shape(self):
        return self._element_shape

    def size(self, name=None):
        count = len(self._elements) if self._eager else self._known_size()
        return convert.as_tensor(np.int32(count))

    def read(self, index, name=None):
        k = self._index(index, reading=True)
        if not self._eager:
            return index_ops.gather(self._materialized(), k)
        value = self._elements[k]
        if value is None:
            raise ValueError(
                f"Could not read from TensorArray index {k} because it has not yet been written to."
            )
        return value

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
        stacked = self.stack()
        return array_ops.reshape(stacked, (-1, *stacked.shape[2:]))

    # --- writing ------------------------------------------------------------------------

    def write(self, index, value, name=None):
        value = self._checked(value)
        if self._eager:
            k = self._index(index, reading=False)
            elements = list(self._elements) + [None] * max(0, k + 1 - len(self._elements))
            elements[k] = value
            return self._with(elements=elements)
        buffer = self._buffer
        if buffer is None:
            buffer = array_ops.zeros((self._known_size(), *value.shape), self.dtype)
        k = convert.static_int(index)
        if k is not None and k >= buffer.shape[0]:  # known now: grow, if it may
            if not self._dynamic:
                raise ValueError(
                    f"TensorArray index {k} is out of range for a TensorArray of size "
                    f"{buffer.shape[0]}"
                )
            more = array_ops.zeros((k + 1 - buffer.shape[0], *value.shape), self.dtype)
            buffer = structure_ops.concat([buffer, more], 0)
        rows = array_ops.range_(0, buffer.shape[0], dtype=dtypes.int32)
        # the row at `index` (gather checks it is in range, when the function runs)
        row = index_ops.gather(rows, array_ops.cast(convert.as_tensor(index), dtypes.int32))
        hit = math_ops.equal(rows, row)
        mask = array_ops.reshape(hit, (buffer.shape[0],) + (1,) * len(value.shape))
        return self._with(buffer=math_ops.where(mask, value, buffer))

    def unstack(self, value, name=None):
        value = self._as_tensor(value)
        if value.dtype != self.dtype:
            raise TypeError(f"TensorArray of {self.dtype.name}: cannot unstack {value.dtype.name}")
        if self._eager:
            return self._with(elements=list(structure_ops.unstack(value)), element=value.shape[1:])
        return self._with(buffer=value, element=value.shape[1:])

    def scatter(self, indices, value, name=None):
        array = self
        for position, k in enumerate(np.asarray(convert.as_tensor(indices))):
            array = array.write(int(k), convert.as_tensor(value)[position])
        return array

    def close(self, name=None):
        return self

    # --- as a loop variable ---------------------------------------------------------------

    def _tensor_components(self):
        """The tensors that stand for it in a loop (none eagerly, or before a traced write)."""
        return [] if self._eager or self._buffer is None else [self._buffer]

    def _from_components(self, components):
        if not components:
            return self
        (buffer,) = components
        return self._with(buffer=buffer, element=buffer.shape[1:])

    def _materialize_like(self, written):
        """This array, not yet written, with zeros in the shape `written` (its value after a
        loop's body) has: what the loop carries."""
        if self._eager or self._buffer is not None or written._buffer is None:
            return self
        zeros = array_ops.zeros(written._buffer.shape, self.dtype)
        return self._with(buffer=zeros, element=zeros.shape[1:])

    # --- helpers --------------------------------------------------------------------------

    def _with(self, elements=None, buffer=None, element=None):
        new = object.__new__(TensorArray)
        new.dtype, new._size, new._dynamic, new._eager = (
            self.dtype,
            self._size,
            self._dynamic,
            self._eager,
        )
        new._element_shape = tuple(element) if element is not None else self._element_shape
        new._elements = elements if elements is not None else self._elements
        new._buffer = buffer if buffer is not None else self._buffer
        if elements is not None and new._element_shape is None:
            shapes = {tuple(e.shape) for e in elements if e is not None}
            new._element_shape = shapes.pop() if len(shapes) == 1 else None
        return new

    def _checked(self, value):
        value = self._as_tensor(value)
        if value.dtype != self.dtype:
            raise TypeError(
                f"TensorArray of {self.dtype.name}: cannot write a {value.dtype.name} value"
            )
        if self._element_shape is not None and tuple(value.shape) != self._element_shape:
            raise ValueError(
                f"TensorArray of elements of shape {self._element_shape}: cannot write a "
                f"value of shape {tuple(value.shape)}"
            )
        return value

    def _as_tensor(self, value):
        """A tensor of it; Python numbers and lists take the array's dtype, as in TensorFlow."""
        if isinstance(value, TensorLike):
            return convert.as_tensor(value)
        return constant(value, dtype=self.dtype)

    def _index(self, index, reading):
        k = convert.static_int(index) if self._eager else None
        if k is None:
            return convert.as_tensor(index)
        size = len(self._elements)
        if k < 0 or (k >= size and (reading or not self._dynamic)):
            raise ValueError(
                f"TensorArray index {k} is out of range for a TensorArray of size {size}"
            )
        return k

    def _written(self, k):
        if self._elements[k] is None:
            raise ValueError(
                f"Could not read from TensorArray index {k} because it has not yet been written to."
            )
        return self._elements[k]

    def _known_size(self):
        if self._size is None:
            raise ValueError(
                "a TensorArray inside a tt.function needs a size known when tracing "
                "(TensorArray(dtype, size=n)): its compiled storage is of that many elements"
            )
        return self._size

    def _materialized(self):
        if self._buffer is None:
            if self._element_shape is None:
                raise ValueError("the TensorArray has not been written to: its shape is unknown")
            self._buffer = array_ops.zeros((self._known_size(), *self._element_shape), self.dtype)
        return self._buffer

    def __repr__(self):
        return f"<tracer.TensorArray dtype={self.dtype.name} size={self._size}>"
