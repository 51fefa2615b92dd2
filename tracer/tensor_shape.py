"""`tt.TensorShape`: TensorFlow's shape object, as `Tensor.get_shape()` gives it.

A TensorShape is a tuple (of ints, None where a size is unknown), so it compares equal to
tuples and works wherever they do, with TensorFlow's methods beside: `as_list`, `rank`/`ndims`, `is_fully_defined`, `num_elements`, `concatenate`.
While a function is traced, a size known only when it runs is a symbol of the trace (a
`tracer.ir.dims.Dim`, where TensorFlow gives None): ops take it as a size, and the methods
count it as unknown.

>>> tt.TensorShape([7, None])
TensorShape([7, None])
>>> tt.TensorShape([7, 10]) == (7, 10)
True
"""

import sys

from tracer.ir import dims
from tracer.ir.dims import Dim


class TensorShape(tuple):
    __slots__ = ()

    def __new__(cls, dims=()):
        if dims is None:
            raise ValueError("tracer's TensorShape has a known rank: give the dimensions")
        return super().__new__(cls, (_size(d) for d in dims))

    @classmethod
    def of_array(cls, shape):
        """The TensorShape of a numpy shape (ints already), made without checking them: what
        an eager tensor's `.shape` gives."""
        return tuple.__new__(cls, shape)

    @property
    def rank(self):
        return len(self)

    ndims = rank

    @property
    def dims(self):
        return list(self)

    def as_list(self):
        return list(self)

    def is_fully_defined(self):
        return all(d is not None and not isinstance(d, Dim) for d in self)

    def num_elements(self):
        """The number of elements, or None where a size is unknown."""
        if not self.is_fully_defined():
            return None
        count = 1
        for d in self:
            count *= d
        return count

    def concatenate(self, other):
        return TensorShape([*self, *other])

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return tuple.__new__(TensorShape, item) if isinstance(key, slice) else item

    def __repr__(self):
        dims.used_as_text(self, sys._getframe(1))
        return f"TensorShape({list(self)})"

    def __str__(self):
        dims.used_as_text(self, sys._getframe(1))
        return (
            "("
            + ", ".join("None" if d is None else repr(d) for d in self)
            + ("," if len(self) == 1 else "")
            + ")"
        )


def _size(d):
    """One size of a TensorShape: None, a symbol of a trace, or an int."""
    return d if d is None or isinstance(d, Dim) else int(d)
