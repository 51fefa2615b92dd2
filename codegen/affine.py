"""Affine index expressions: how a loop nest's indices address an element of a buffer.

An `Affine` is `constant + sum(coefficient * loop_index)`. Broadcasting, transposes,
slices, size-1 reshapes and tile all map indices affinely, so a fused kernel reads every
operand straight from its buffer, with no copies. Coefficients and the constant are ints,
or, for shapes with dimensions known only when the code runs, `tracer.ir.dims.Dim`
polynomials, which print as C (`784*d0`).
"""


class Affine:
    __slots__ = ("constant", "terms")

    def __init__(self, constant=0, terms=()):
        self.constant = constant
        self.terms = tuple((axis, c) for axis, c in terms if c)

    @staticmethod
    def index(axis):
        return Affine(0, ((axis, 1),))

    def __add__(self, other):
        if not isinstance(other, Affine):  # an int, or a Dim
            return Affine(self.constant + other, self.terms)
        merged = dict(self.terms)
        for axis, c in other.terms:
            merged[axis] = merged.get(axis, 0) + c
        return Affine(self.constant + other.constant, sorted(merged.items()))

    def __mul__(self, factor):
        return Affine(self.constant * factor, tuple((a, c * factor) for a, c in self.terms))

    def c(self, names):
        """C text, with loop index k written as names[k]."""
        parts = [names[a] if c == 1 else f"{c}*{names[a]}" for a, c in self.terms]
        if self.constant or not parts:
            parts.append(str(self.constant))
        return " + ".join(parts)

    def key(self):
        return (self.constant, self.terms)

    def without(self, axes):
        """This expression with the terms of `axes` left out: where their indices are 0."""
        return Affine(self.constant, tuple((a, c) for a, c in self.terms if a not in axes))


def contiguous_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def offset(index_map, shape):
    """The element offset, in a contiguous buffer of `shape`, of the multi-index `index_map`."""
    total = Affine()
    for expr, stride in zip(index_map, contiguous_strides(shape)):
        total = total + expr * stride
    return total


def broadcast_map(index_map, out_shape, in_shape):
    """The index into an operand of `in_shape` broadcast to `out_shape`."""
    lead = len(out_shape) - len(in_shape)
    return tuple(
        Affine() if d == 1 and out_shape[lead + k] != 1 else index_map[lead + k]
        for k, d in enumerate(in_shape)
    )
