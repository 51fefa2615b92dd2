"""`tt.TensorShape`: TensorFlow's shape object, as `Tensor.get_shape()` gives it.

A TensorShape is a tuple (of ints, None where a size is unknown), so it works wherever a
tuple does (except that a scalar's is a true value, as TensorFlow's), with TensorFlow's
methods beside: `as_list`, `rank`/`ndims`, `is_fully_defined`, `num_elements`,
`concatenate` (also `+`, with a list or tuple on either side), `merge_with`,
`most_specific_compatible_shape`, `with_rank*` and the `assert_*` checks. As TensorFlow's,
it is equal to a list or tuple of its sizes (None equal to None) and hashed as that tuple;
a size is an int of at least 0 (a float is a TypeError, -1 a ValueError). While a function
is traced, a size known only when it runs is a symbol of the trace (a
`tracer.ir.dims.Dim`, where TensorFlow gives None): ops take it as a size, and the methods
count it as unknown.

>>> tt.TensorShape([7, None])
TensorShape([7, None])
>>> tt.TensorShape([7, 10]) == [7, 10], [1] + tt.TensorShape([2])
(True, TensorShape([1, 2]))
"""

import operator
import sys

from tracer.ir import dims
from tracer.ir.dims import Dim


class TensorShape(tuple):
    __slots__ = ()

    def __new__(cls, dims=()):
        if is_unknown_rank(dims):
            return UNKNOWN_RANK
        if isinstance(dims, TensorShape):
            return dims
        try:
            sizes = iter(dims)
        except TypeError:  # one size: TensorFlow's `TensorShape(2)` is [2]
            sizes = iter((dims,))
        return super().__new__(cls, (_size(d) for d in sizes))

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
        """The sizes as `Dimension`s, as TensorFlow 2's `dims` gives them (indexing the
        shape gives ints)."""
        return [Dimension(d if d is None or isinstance(d, int) else None) for d in self]

    def as_list(self):
        return list(self)

    def is_fully_defined(self):
        return all(d is not None and not isinstance(d, Dim) for d in self)

    def assert_is_fully_defined(self):
        """A ValueError where a size (or the rank) is unknown."""
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def num_elements(self):
        """The number of elements, or None where a size is unknown."""
        if not self.is_fully_defined():
            return None
        count = 1
        for d in self:
            count *= d
        return count

    def concatenate(self, other):
        """The sizes of this shape, then those of `other`; an unknown rank where either's is.

        >>> tt.TensorShape([2, None]).concatenate([4])
        TensorShape([2, None, 4])
        """
        other = as_shape(other)
        if is_unknown_rank(other):
            return UNKNOWN_RANK
        return tuple.__new__(TensorShape, tuple.__add__(self, other))

    def __add__(self, other):
        """`shape + [5]` is `concatenate`, as TensorFlow's; a sequence holding what is not a
        size (a -1 that tracer's own shape arithmetic writes for reshape) concatenates as
        tuples do, as tracer's shapes always have."""
        shape = _shape_or_none(other)
        if shape is None:
            return tuple.__add__(self, tuple(other))
        return self.concatenate(shape)

    def __radd__(self, other):
        """`[5] + shape` and `(5,) + shape`: a TensorShape, as TensorFlow's."""
        shape = _shape_or_none(other)
        if shape is None:
            return tuple(other) + tuple(self)
        return shape.concatenate(self)

    def is_compatible_with(self, other):
        """Whether a tensor could have both shapes: an unknown rank fits any, else the same
        rank with each pair of sizes equal or one of them unknown.

        >>> tt.TensorShape([None, 3]).is_compatible_with([2, 3])
        True
        """
        other = as_shape(other)
        if is_unknown_rank(other):
            return True
        return len(self) == len(other) and all(
            _unknown(a) or _unknown(b) or a == b for a, b in zip(self, other)
        )

    def assert_is_compatible_with(self, other):
        """A ValueError, in TensorFlow's words, where `other` is not compatible (shown as it
        was given: `[2, 4]` for a list)."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def most_specific_compatible_shape(self, other):
        """The most specific shape compatible with both: each size where the two agree,
        None where they differ; an unknown rank where the ranks differ or either is unknown.

        >>> tt.TensorShape([2, 3, None]).most_specific_compatible_shape([2, 4, 5])
        TensorShape([2, None, None])
        """
        other = as_shape(other)
        if is_unknown_rank(other) or len(self) != len(other):
            return UNKNOWN_RANK
        return TensorShape([a if dims.same(a, b) else None for a, b in zip(self, other)])

    def merge_with(self, other):
        """The shape both shapes describe, each size known where either knows it; a
        ValueError, in TensorFlow's words, where they are not compatible.

        >>> tt.TensorShape([None, 3]).merge_with([2, None])
        TensorShape([2, 3])
        """
        other = as_shape(other)
        if is_unknown_rank(other):
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([b if _unknown(a) else a for a, b in zip(self, other)])

    def with_rank(self, rank):
        """This shape, of rank `rank` (an unknown rank becomes `rank` unknown sizes); a
        ValueError where its rank is another."""
        if len(self) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank):
        """This shape; a ValueError where its rank is below `rank`."""
        if len(self) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank):
        """This shape; a ValueError where its rank is above `rank`."""
        if len(self) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank):
        """A ValueError where the rank is known and is not `rank`."""
        self.with_rank(rank)

    def assert_same_rank(self, other):
        """A ValueError where both ranks are known and differ."""
        other = as_shape(other)
        if not is_unknown_rank(other) and len(self) != len(other):
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def __eq__(self, other):
        """Equal to a TensorShape, list or tuple of the same sizes (None equal to None), as
        TensorFlow's; `None` is the unknown rank, which a known rank is not. A value that is
        not a shape (a float among the sizes, a string) is not equal.

        >>> tt.TensorShape([2, None]) == [2, None], tt.TensorShape([2]) == (2.0,)
        (True, False)
        """
        if type(other) is TensorShape:
            return tuple.__eq__(self, other)
        shape = _shape_or_none(other)
        if shape is None:
            return False if isinstance(other, (tuple, list)) else NotImplemented
        return shape is not UNKNOWN_RANK and tuple.__eq__(self, shape)

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__  # a tuple's: equal to the tuple of its sizes, hashed as it is

    def __bool__(self):
        """True, as TensorFlow's TensorShape of a known rank is, a scalar's `()` too (not
        as an empty tuple): `if x.shape:` asks whether the rank is known, which in tracer it
        always is. Ask `len(x.shape)` or `x.ndim` for the rank."""
        return True

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


class _UnknownRank(TensorShape):
    """`TensorShape(None)`: TensorFlow's shape of unknown rank, as a value a program can
    hold, print, compare and give where a shape of unknown rank is taken (a TensorSpec,
    `set_shape`, `ensure_shape`): no rank, no dims, a false value; its length, list and
    iteration are TensorFlow's ValueErrors. (tracer's tensors always have a rank: a
    function traced for an unknown rank is traced once per rank it is called with.)"""

    __slots__ = ()

    @property
    def rank(self):
        return None

    ndims = rank

    @property
    def dims(self):
        return None

    def as_list(self):
        raise ValueError("as_list() is not defined on an unknown TensorShape.")

    def is_fully_defined(self):
        return False

    def num_elements(self):
        return None

    def concatenate(self, other):
        return UNKNOWN_RANK

    def __add__(self, other):
        return UNKNOWN_RANK

    __radd__ = __add__

    def is_compatible_with(self, other):
        return True

    def assert_is_compatible_with(self, other):
        pass

    def most_specific_compatible_shape(self, other):
        return UNKNOWN_RANK

    def merge_with(self, other):
        return as_shape(other)

    def with_rank(self, rank):
        return TensorShape([None] * rank)

    def with_rank_at_least(self, rank):
        return self

    with_rank_at_most = with_rank_at_least

    def assert_has_rank(self, rank):
        pass

    def assert_same_rank(self, other):
        pass

    def __bool__(self):
        return False

    def __len__(self):
        raise ValueError("Cannot take the length of shape with unknown rank.")

    def __iter__(self):
        raise ValueError("Cannot iterate over a shape with unknown rank.")

    def __getitem__(self, key):
        return self if isinstance(key, slice) else None

    def __eq__(self, other):
        """Equal to another unknown rank, and to None (which stands for one), as TensorFlow's."""
        return other is None or isinstance(other, _UnknownRank)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(None)

    def __repr__(self):
        return "TensorShape(None)"

    def __str__(self):
        return "<unknown>"


UNKNOWN_RANK = tuple.__new__(_UnknownRank, ())


def is_unknown_rank(shape):
    """Whether `shape` (None, or a TensorShape or sequence) is of unknown rank."""
    return shape is None or shape is UNKNOWN_RANK


def as_shape(shape):
    """`shape` (a TensorShape, a sequence of sizes, one int, or None) as a TensorShape."""
    if isinstance(shape, TensorShape):
        return shape
    return TensorShape(shape)


def _shape_or_none(value):
    """`value` as a TensorShape, or None where it is not one (a float or a negative size
    among its items, a string)."""
    try:
        return as_shape(value)
    except (TypeError, ValueError):
        return None


def _unknown(size):
    return size is None or isinstance(size, Dim)


class Dimension:
    """TensorFlow 1's size of one dimension (`tt.compat.v1.Dimension`): `value` is the int,
    or None where unknown. Comparisons with an unknown size give None.

    >>> tt.compat.v1.Dimension(16).is_compatible_with(tt.compat.v1.Dimension(None))
    True
    """

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        self._value = None if value is None else _checked_int(value)

    @property
    def value(self):
        return self._value

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other):
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(other.value if self._value is None else self._value)

    def __eq__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is None or equal is NotImplemented else not equal

    def __hash__(self):
        return hash(self._value)

    def __int__(self):
        return self._value

    def __index__(self):
        return self._value

    def __repr__(self):
        return f"Dimension({self._value})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)


def as_dimension(value):
    """`value` (an int, None or a Dimension) as a Dimension."""
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dimension):
    """The int (or None) of a size, whether a Dimension (TensorFlow 1) or already an int."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def _size(d):
    """One size of a TensorShape: None, a symbol of a trace, or an int."""
    if d is None or isinstance(d, Dim):
        return d
    if isinstance(d, Dimension):
        return d.value
    return _checked_int(d)


def _checked_int(d):
    """`d` as a size: an int (or what has `__index__`, as numpy's ints), at least 0; a
    float is a TypeError and a negative size a ValueError, as TensorFlow's."""
    if type(d) is not int:
        try:
            d = operator.index(d)
        except TypeError:
            raise TypeError(
                f"a dimension is an integer (or has __index__) or None, not {d!r} of {type(d)}"
            ) from None
    if d < 0:
        raise ValueError(f"Dimension {d} must be >= 0")
    return d
