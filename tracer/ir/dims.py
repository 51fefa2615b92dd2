"""Dimensions known only when a compiled function runs: `TensorSpec([None, 784])`.

An unknown dimension is a symbol, `d0` for an unknown size on axis 0 of an argument (every
argument's axis 0 shares it, as a batch does; a function one of whose calls gave those two
sizes has one per argument instead, `d0_1` for axis 0 of its tensor argument 1); shapes
computed from it are polynomials of such symbols with integer coefficients (`784*d0`,
`d0 + 1`). A `Dim` behaves like an int where the answer does not depend on its value
(arithmetic, hashing, equality of equal polynomials) and raises where it does (`int(d)`,
`d < 5`). Equality with another int or polynomial, and truth, answer as if the two differ
(and the size is not 0), as TensorFlow's unknown dimension (None) compares: each such answer
is an assumption, handed to the trace being made (`observe_assumptions`), so that a call whose
sizes break it is traced with its own sizes (tracer's own comparisons choose nothing, but
where they do, through `equals`). A polynomial whose symbols cancel is an int again.

    >>> d0 = Dim.symbol("d0")
    >>> d0 * 28 * 28, (d0 * 784) // 784 == d0, d0 == 1
    (784*d0, True, False)

Symbols are assumed to be at least 1 where a decision needs a guess (`estimate`), and
their text is valid C and Python (`d0`), which is how the code generator writes them.
"""

import contextlib
import contextvars
import numbers
import re
import sys

_NAME = re.compile(r"d[0-9]+(_[0-9]+)?\Z")


class Dim:
    """A polynomial of unknown dimensions: ((monomial, coefficient), ...), each monomial a
    sorted tuple of symbol names (repeated for powers), none with coefficient 0."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms):
        self.terms = terms
        self._hash = hash(terms)

    @staticmethod
    def symbol(name):
        if not _NAME.match(name):
            raise ValueError(f"a dimension symbol is named d<k> or d<k>_<j>, not {name!r}")
        return Dim((((name,), 1),))

    @property
    def symbols(self):
        return sorted({s for monomial, _ in self.terms for s in monomial})

    def evaluate(self, env):
        """The value for symbol values `env` ({name: int})."""
        total = 0
        for monomial, coefficient in self.terms:
            product = coefficient
            for name in monomial:
                product *= env[name]
            total += product
        return total

    def estimate(self, guess=256):
        """A stand-in value, every symbol taken as `guess`: for decisions (fusion, threads)
        that only need an idea of the size."""
        return self.evaluate(dict.fromkeys(self.symbols, guess))

    # --- arithmetic -----------------------------------------------------------------------

    def __add__(self, other):
        return _combine(self, _terms(other), 1)

    __radd__ = __add__

    def __sub__(self, other):
        return _combine(self, _terms(other), -1)

    def __rsub__(self, other):
        return _combine(-self, _terms(other), 1)

    def __neg__(self):
        return _polynomial({m: -c for m, c in self.terms})

    def __mul__(self, other):
        product = {}
        for m1, c1 in self.terms:
            for m2, c2 in _terms(other):
                monomial = tuple(sorted(m1 + m2))
                product[monomial] = product.get(monomial, 0) + c1 * c2
        return _polynomial(product)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        """Exact division only: by an int that divides every coefficient, or by a monomial
        that divides every term (reshape(x, (-1, 784)) of a (d0*784,) tensor)."""
        if isinstance(other, numbers.Integral):
            if other and all(c % other == 0 for _, c in self.terms):
                return _polynomial({m: c // other for m, c in self.terms})
        elif isinstance(other, Dim) and len(other.terms) == 1:
            (divisor, scale), quotient = other.terms[0], {}
            for monomial, coefficient in self.terms:
                rest = list(monomial)
                for name in divisor:
                    if name not in rest:
                        break
                    rest.remove(name)
                else:
                    if coefficient % scale == 0:
                        quotient[tuple(rest)] = coefficient // scale
                        continue
                break
            else:
                return _polynomial(quotient)
        raise TypeError(f"{self} is not a multiple of {other}: the division depends on its value")

    def __mod__(self, other):
        """0 where `//` is exact; else the remainder depends on the value."""
        self // other
        return 0

    # --- comparison -----------------------------------------------------------------------

    def __eq__(self, other):
        if isinstance(other, Dim) and self.terms == other.terms:
            return True
        if _observer is not None and isinstance(other, (Dim, numbers.Integral)):
            difference = self - other
            if isinstance(difference, Dim):  # equal for some sizes: assumed not to be
                _observer(difference, sys._getframe(1))
        return False

    def __hash__(self):
        return self._hash

    def __bool__(self):
        if _observer is not None:
            _observer(self, sys._getframe(1))  # a size assumed not to be 0
        return True

    def _unknown(self, *_):
        raise TypeError(
            f"the dimension {self} is unknown until the function runs: tracer cannot compare "
            "or convert it while tracing"
        )

    __lt__ = __le__ = __gt__ = __ge__ = __int__ = __index__ = __float__ = _unknown

    def __str__(self):
        if _value_observer is not None:
            _value_observer(self, sys._getframe(1))
        return self._text()

    def __format__(self, spec):
        if _value_observer is not None:
            _value_observer(self, sys._getframe(1))
        return format(self._text(), spec)

    def _text(self):
        """The polynomial as C and Python write it: `784*d0`, `(d0 + 1)`."""
        pieces = []
        for monomial, coefficient in sorted(self.terms, key=lambda t: (-len(t[0]), t[0])):
            magnitude = abs(coefficient)
            factors = [str(magnitude)] if magnitude != 1 or not monomial else []
            pieces.append((coefficient < 0, "*".join(factors + list(monomial))))
        text = ("-" if pieces[0][0] else "") + pieces[0][1]
        for negative, body in pieces[1:]:
            text += (" - " if negative else " + ") + body
        return f"({text})" if len(self.terms) > 1 else text

    def __repr__(self):
        return self._text()


_observer = None  # what is told of each assumption (`observe_assumptions`)


def observe_assumptions(callback):
    """Have `callback(size, frame)` called for each comparison answered as if polynomial
    `size` were not 0, with the frame of the code that compared, or None where tracer's own
    code asks on purpose (`equals`). tracer/tracing.py records the program's comparisons on
    the trace being made; tracer's own (a shape check's fast path) choose nothing."""
    global _observer
    _observer = callback


_value_observer = None  # what is told of each use of a size as a value (`observe_value_uses`)


def observe_value_uses(callback):
    """Have `callback(size, frame)` called where code asks for `size` as text (`str`, a
    format), with the frame of that code: a program that prints or formats a size wants its
    value, which a trace made with sizes unknown lacks (tracer/tracing.py)."""
    global _value_observer
    _value_observer = callback


def used_as_text(sizes, frame):
    """Tell the observer (`observe_value_uses`) that the code of `frame` makes text of
    `sizes` (a shape's, say), where some are symbols."""
    if _value_observer is not None:
        for size in sizes:
            if isinstance(size, Dim):
                _value_observer(size, frame)


def equals(size, other):
    """`size == other`, where the answer chooses what tracer computes (tt.squeeze's axes of
    1): an assumption kept as the program's own comparisons are."""
    if isinstance(other, Dim) and not isinstance(size, Dim):
        size, other = other, size
    if not isinstance(size, Dim) or not isinstance(other, (Dim, numbers.Integral)):
        return size == other
    difference = size - other
    if not isinstance(difference, Dim):
        return difference == 0
    if _observer is not None:
        _observer(difference, None)
    return False


class SizesDiffer(ValueError):
    """Two sizes a shape rule needs equal (a product's inner dimensions, broadcast axes, a
    square matrix's sides) differ as the trace knows them, one of them unknown: `sizes` is
    the pair. TensorFlow takes unknown dimensions for equal there and checks when the graph
    runs; where one is an unknown dimension standing alone and the other a number or another
    such dimension, a tt.function's trace takes the one for the other (`unification`) and
    traces again, its calls checked for it."""

    def __init__(self, message, first, second):
        super().__init__(message)
        self.sizes = (first, second)


def same(first, second):
    """Whether the sizes `first` and `second` (ints or Dims) are the same, recording no
    assumption (`==` between a Dim and another size records one)."""
    if isinstance(first, Dim) or isinstance(second, Dim):
        return isinstance(first, Dim) and isinstance(second, Dim) and first.terms == second.terms
    return first == second


def check_same(first, second, message):
    """Nothing where the sizes `first` and `second` are equal; else ValueError(message()),
    SizesDiffer where either is unknown. No assumption is recorded (`equals` would)."""
    difference = first - second
    if isinstance(difference, Dim):
        raise SizesDiffer(message(), first, second)
    if difference != 0:
        raise ValueError(message())


def unification(first, second, symbols):
    """(name, size) where one of `first` and `second` is an unknown dimension among `symbols`
    (names) standing alone and the other a number, or another such dimension: the one (the
    later of two dimensions) and the size it is to be so that the two are equal; else None.
    A dimension taken for a number is one a call must give that number: one that gives
    another (a 1, which broadcasts) is traced with its own sizes (`ConcreteFunction.admits`)."""
    ours = [s for s in (first, second) if _alone(s) and str(s) in symbols]
    if len(ours) == 2:
        later, earlier = sorted(ours, key=lambda s: symbol_order(str(s)), reverse=True)
        return str(later), earlier
    if len(ours) == 1:
        other = second if ours[0] is first else first
        if isinstance(other, numbers.Integral) and not isinstance(other, bool) and other >= 0:
            return str(ours[0]), int(other)
    return None


def _alone(size):
    """Whether `size` is one unknown dimension standing alone (d0, not 2*d0 or d0 + 1)."""
    return isinstance(size, Dim) and size.terms[0][1] == 1 and size.symbols == [str(size)]


def resolved(size, equal_sizes):
    """`size` (an int or Dim) where it is not an unknown dimension of `equal_sizes` ({name:
    Dim}), else the dimension that one is taken to be, and so on."""
    while isinstance(size, Dim) and str(size) in equal_sizes:
        size = equal_sizes[str(size)]
    return size


def differing_sizes(shapes, given):
    """The unknown dimensions standing alone in `shapes` to which the `given` shapes (of the
    same ranks) give two sizes, with those sizes: {name: (size, size)}. Where the given
    sizes are themselves unknown (a call made while another function is traced), two that
    differ raise SizesDiffer, which that trace may meet in turn."""
    seen, differing = {}, {}
    for shape, actual in zip(shapes, given):
        for dimension, value in zip(shape, actual):
            if _alone(dimension):
                first = seen.setdefault(str(dimension), value)
                if isinstance(first, Dim) or isinstance(value, Dim):
                    check_same(
                        first, value, lambda a=first, b=value: f"sizes {a!r} and {b!r} differ"
                    )
                elif first != value:
                    differing[str(dimension)] = (first, value)
    return differing


def _terms(value):
    if isinstance(value, Dim):
        return value.terms
    if isinstance(value, numbers.Integral):
        return (((), int(value)),) if value else ()
    return NotImplemented


def _combine(dim, other_terms, sign):
    if other_terms is NotImplemented:
        return NotImplemented
    total = dict(dim.terms)
    for monomial, coefficient in other_terms:
        total[monomial] = total.get(monomial, 0) + sign * coefficient
    return _polynomial(total)


def _polynomial(terms):
    """A Dim for {monomial: coefficient}, or an int when no symbol remains."""
    kept = tuple(sorted((m, c) for m, c in terms.items() if c))
    if all(not monomial for monomial, _ in kept):
        return sum(c for _, c in kept)
    return Dim(kept)


def symbol_order(name):
    """The sort key of a symbol's name: d2 before d10, d0 before d0_1 before d1."""
    return tuple(int(part) for part in name[1:].split("_"))


def is_known(shape):
    """Whether every dimension of `shape` is an int."""
    return not any(isinstance(d, Dim) for d in shape)


def symbols_of(value):
    """The symbol names in `value`: a Dim, an int, or tuples, lists and dicts of them."""
    found = set()
    _collect_symbols(value, found)
    return found


def _collect_symbols(value, found):
    if isinstance(value, Dim):
        found.update(value.symbols)
    elif isinstance(value, (tuple, list)):
        for item in value:
            if type(item) is not int:  # most are: a shape's sizes
                _collect_symbols(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect_symbols(item, found)


def substitute(value, env):
    """`value` with every Dim evaluated for `env` (tuples, lists and dicts looked into)."""
    if isinstance(value, Dim):
        return value.evaluate(env)
    if isinstance(value, tuple):
        return tuple(substitute(v, env) for v in value)
    if isinstance(value, list):
        return [substitute(v, env) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, env) for k, v in value.items()}
    return value


def sizes_given(shapes, given):
    """{symbol: size} of the unknown dimensions that stand alone in `shapes` (d0, not
    d0 + 1), read from the `given` shapes of the same ranks (a call's arguments)."""
    env = {}
    for shape, actual in zip(shapes, given):
        for dimension, value in zip(shape, actual):
            if isinstance(dimension, Dim) and dimension.symbols == [str(dimension)]:
                env[str(dimension)] = value
    return env


def size(shape):
    """The number of elements of `shape` (a Dim when it has unknown dimensions)."""
    total = 1
    for d in shape:
        total = d * total
    return total


# the largest size the calls before a trace gave the dimensions it makes unknown (automatic
# dynamic shapes): a guess the lowering may take them for, never a value
_SIZE_SEEN = contextvars.ContextVar("size_seen", default=None)


@contextlib.contextmanager
def sizes_seen(size):
    """Within: `size_seen()` is `size` (None: no guess)."""
    token = _SIZE_SEEN.set(size)
    try:
        yield
    finally:
        _SIZE_SEEN.reset(token)


def size_seen():
    """The largest size calls gave the unknown dimensions of the function being traced, or
    None: what code generation may take them for when it decides how hard to optimize a
    kernel (codegen/lower.py's light kernels), never for what it computes."""
    return _SIZE_SEEN.get()
