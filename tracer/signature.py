"""Arguments of tt.function calls: which are tensors, the cache key of a call, and what
changed between two.

Tensor arguments are tracer Tensors, numpy arrays (any layout) and numpy scalars; every
other leaf of the argument structure is a Python value, part of the key by value (a new
value traces again, as in TensorFlow), and Variables by identity. A key describes the
structure and each leaf: ("tensor", shape, dtype), ("variable", id, shape, dtype), or
("value", type, value). Python numbers are ("value", "number", value): 1, True and 1.0
are one key, as in TensorFlow, but a float that == would confuse is keyed by its bits (0.0
and -0.0 differ; a NaN matches itself). `Binding` binds a call to the function's
parameters first, as TensorFlow does: defaults filled in, and with an input_signature each
value converted to its spec.
"""

import dataclasses
import inspect
import math

import numpy as np

from tracer import nest
from tracer.dtypes import as_dtype
from tracer.ir.dims import Dim
from tracer.tensor import Tensor, TensorLike
from tracer.tensor_shape import UNKNOWN_RANK, TensorShape, as_shape, is_unknown_rank
from tracer.types import PlaceholderContext, TracingContext
from tracer.variable import Variable


class TensorSpec:
    """The shape and dtype of a tensor argument, for `input_signature` and
    `get_concrete_function`. A dimension given as None is unknown: the compiled code takes
    any size there (every argument's unknown dimension on the same axis is the same size,
    as a batch is). A shape of None is an unknown rank: an input_signature with one takes
    tensors of any rank, and the function is traced once per rank, every dimension unknown
    (compiled code has a rank; TensorFlow's one graph of unknown rank has none)."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype="float32", name=None):
        # NOTE: an unknown rank is TensorFlow's TensorShape(None) (`UNKNOWN_RANK`, whose
        # `rank` is None): ask `is_unknown_rank(spec.shape)`, never `spec.shape is None`. A
        # size is checked as TensorShape's (an int of at least 0, or None; `TensorSpec(2)`
        # is [2]); one known only when a traced function runs (`x.shape` there) is None, as
        # TensorFlow's.
        self.shape = (
            UNKNOWN_RANK
            if is_unknown_rank(shape)
            else TensorShape.of_array(
                tuple(None if isinstance(d, Dim) else d for d in as_shape(shape))
            )
        )
        self.dtype = as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of `tensor` (a Tensor, eager or of a trace; not a Variable or an array,
        as TensorFlow's), named `name`, or in a trace the name of the op that made it.

        >>> tt.TensorSpec.from_tensor(tt.constant([[1, 2, 3]]))
        TensorSpec(shape=(1, 3), dtype=tt.int32, name=None)
        """
        if not isinstance(tensor, Tensor):
            raise ValueError(f"TensorSpec.from_tensor takes a tensor, not a {type(tensor)}")
        shape = [d if isinstance(d, int) else None for d in tensor.shape]
        if name is None and tensor._value is None:
            name = getattr(tensor, "name", "").split(":")[0] or None
        return cls(shape, tensor.dtype, name)

    @classmethod
    def from_spec(cls, spec, name=None):
        """A TensorSpec of `spec`'s shape and dtype, named `name` (or as `spec` is)."""
        return cls(spec.shape, spec.dtype, spec.name if name is None else name)

    def of_rank(self, rank):
        """This spec at `rank` (every dimension unknown) where its rank is unknown."""
        if is_unknown_rank(self.shape):
            return TensorSpec([None] * rank, self.dtype, self.name)
        return self

    def symbolic_shape(self, argument=None):
        """The shape with each unknown dimension as its symbol: d<k> on axis k, shared by
        every argument; d<k>_<argument> where each tensor argument has its own."""
        own = "" if argument is None else f"_{argument}"
        return tuple(Dim.symbol(f"d{k}{own}") if d is None else d for k, d in enumerate(self.shape))

    def admits(self, shape, dtype):
        """Whether a tensor of `shape` and `dtype` fits this spec: its dtype, and each size
        where the spec's is known (a trace for this spec serves that call)."""
        if as_dtype(dtype) != self.dtype:
            return False
        if is_unknown_rank(self.shape):
            return True
        return len(shape) == len(self.shape) and all(
            s is None or s == d for s, d in zip(self.shape, shape)
        )

    def is_compatible_with(self, spec_or_value):
        """TensorFlow's: whether a TensorSpec or a Tensor has this dtype and a shape
        compatible with this one (a dimension None on either side fits any; names do not
        count). Anything else, a numpy array or a Variable too, is not, as in TensorFlow.

        >>> tt.TensorSpec([None, 3]).is_compatible_with(tt.zeros([1, 3]))
        True
        """
        if isinstance(spec_or_value, TensorSpec):
            other = spec_or_value
        elif isinstance(spec_or_value, Tensor):
            other = spec_of(spec_or_value)
        else:
            return False
        if other.dtype != self.dtype:
            return False
        if is_unknown_rank(self.shape) or is_unknown_rank(other.shape):
            return True
        return len(other.shape) == len(self.shape) and all(
            s is None or d is None or s == d for s, d in zip(self.shape, other.shape)
        )

    def generalized(self, other):
        """This spec with None wherever `other` (of the same rank) has another size."""
        shape = [a if a == b else None for a, b in zip(self.shape, other.shape)]
        return TensorSpec(shape, self.dtype, self.name)

    def __eq__(self, other):
        """The same shape, dtype and name, as TensorFlow's (`is_compatible_with` ignores
        names); the hash leaves the name out, as TensorFlow's does."""
        return (
            isinstance(other, TensorSpec)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.name == other.name
        )

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        """TensorFlow's text, with tracer's dtype: `TensorSpec(shape=(None,), dtype=tt.int32,
        name=None)`; `shape=<unknown>` for an unknown rank."""
        shape = "<unknown>" if is_unknown_rank(self.shape) else self.shape
        return f"TensorSpec(shape={shape}, dtype={self.dtype!r}, name={self.name!r})"

    def text(self):
        """`float32[None, 784]`, as errors and logs show it (`float32[...]`: any rank)."""
        if is_unknown_rank(self.shape):
            return f"{self.dtype.name}[...]"
        return f"{self.dtype.name}[{', '.join(map(str, self.shape))}]"


def is_tensor_argument(value):
    return (
        isinstance(value, (np.ndarray, np.generic, TensorSpec))
        or isinstance(value, TensorLike)
        and not isinstance(value, Variable)
    )


def spec_of(value):
    """The TensorSpec of a tensor argument, or a TypeError naming what tracer cannot take."""
    if isinstance(value, TensorSpec):
        return value
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "SU":
        # NOTE: numpy's str and bytes arrays are of tt.string's dtype (`as_dtype`), but a
        # compiled call takes the arrays it is given as they are (tt.string's hold bytes)
        raise TypeError(
            f"a numpy array of dtype {value.dtype} is not taken as a tensor argument: pass "
            "tt.constant(value), a tt.string tensor"
        )
    try:
        dtype = as_dtype(value.dtype)
    except TypeError:
        raise TypeError(
            f"tracer has no dtype for {value.dtype} (an argument of dtype {value.dtype})"
        ) from None
    # a dimension known only when an enclosing function runs is one of any size here
    shape = [None if isinstance(d, Dim) else d for d in np.shape(value)]
    return TensorSpec(shape, dtype)


def as_argument_array(value):
    """The numpy value of a tensor argument (Tensors pass their array)."""
    if isinstance(value, TensorLike):
        return value._read()._concrete_value()
    return np.asarray(value)


def signature(args, kwargs):
    """A hashable key: the argument structure with each leaf described."""
    return _describe((args, kwargs))


def accepts(general, key):
    """Whether a concrete function traced for key `general` (tensor dimensions None where
    unknown) takes a call of key `key`."""
    if general[0] != key[0]:
        return False
    if general[0] == "tensor":
        spec = TensorSpec(general[1], general[2])
        return spec.admits(key[1], key[2])
    if general[0] in ("value", "variable"):
        return general == key
    if general[0] == "trace type":  # a trace for a type serves its subtypes
        return key[0] == "trace type" and (key[1] == general[1] or key[1].is_subtype_of(general[1]))
    if general[0] == "dict":
        return len(general[1]) == len(key[1]) and all(
            a[0] == b[0] and accepts(a[1], b[1]) for a, b in zip(general[1], key[1])
        )
    return len(general[1]) == len(key[1]) and all(accepts(a, b) for a, b in zip(general[1], key[1]))


def generalize(traced, arguments, per_argument=False):
    """`arguments` (args, kwargs) as the call `traced` (args, kwargs with TensorSpecs) made
    general: the same structure and values, each tensor a TensorSpec with None wherever its
    shape differs; None when anything else differs (the structure, a value, a rank, a dtype),
    or, unless the trace gives each argument its own unknown dimensions (`per_argument`),
    when the call gives one axis's unknown dimensions two sizes."""
    if _describe(_skeleton(traced)) != _describe(_skeleton(arguments)):
        return None
    specs, changed = [], False
    for old, new in zip(nest.flatten(traced), nest.flatten(arguments)):
        if not isinstance(old, TensorSpec):
            specs.append(new)
            continue
        new = spec_of(new)
        if len(old.shape) != len(new.shape) or old.dtype != new.dtype:
            return None
        specs.append(old.generalized(new))
        changed = changed or specs[-1].shape != old.shape
    if not changed:
        return None
    shapes = [np.shape(a) for a in nest.flatten(arguments) if is_tensor_argument(a)]
    unknown = [s.shape for s in specs if isinstance(s, TensorSpec)]
    if not per_argument and _sizes(zip(unknown, shapes)) is None:
        return None  # this call could not run the general trace: it is traced as it is
    return nest.pack_sequence_as(arguments, specs)


def unknown_sizes(general, key, per_argument=False):
    """{symbol: size} of the unknown dimensions of the trace of key `general` in a call of
    key `key`. The unknown dimensions on one axis are one symbol, d<axis>, the same size in
    every argument (a batch): None where the call gives one of them two sizes; or, in a
    trace `per_argument`, d<axis>_<j> for tensor argument j."""
    if per_argument:
        return {
            f"d{axis}_{j}": size
            for j, (traced, called) in enumerate(_tensor_shapes(general, key))
            if traced is not None and called is not None
            for axis, (unknown, size) in enumerate(zip(traced, called))
            if unknown is None
        }
    sizes = _sizes(_tensor_shapes(general, key))
    return None if sizes is None else {f"d{axis}": size for axis, size in sizes.items()}


def _tensor_shapes(general, key):
    """(traced shape, called shape) of each tensor leaf of two keys of one structure."""
    if general[0] == "tensor":
        yield general[1], key[1]
    elif general[0] == "dict":
        for (_, a), (_, b) in zip(general[1], key[1]):
            yield from _tensor_shapes(a, b)
    elif general[0] not in ("value", "variable", "trace type"):
        for a, b in zip(general[1], key[1]):
            yield from _tensor_shapes(a, b)


def _sizes(pairs):
    """{axis: size} of the unknown dimensions in (traced shape, called shape) pairs; None
    where an axis gets two sizes."""
    sizes = {}
    for traced, called in pairs:
        if traced is None or called is None:  # an unknown rank: traced once per rank
            continue
        for axis, (unknown, size) in enumerate(zip(traced, called)):
            if unknown is None and sizes.setdefault(axis, size) != size:
                return None
    return sizes


def _skeleton(arguments):
    """`arguments` with each tensor replaced by one marker: their structure and values."""
    leaves = nest.flatten(arguments)
    return nest.pack_sequence_as(
        arguments, ["<tensor>" if is_tensor_argument(v) else v for v in leaves]
    )


def _trace_type(value):
    """The TraceType of an argument that defines `__tf_tracing_type__` (tracer/types.py),
    else None."""
    method = getattr(type(value), "__tf_tracing_type__", None)
    return None if method is None else method(value, TracingContext())


def traced_value(value):
    """What a traced function sees for a non-tensor argument: its TraceType's placeholder
    value where it has one, else the argument itself."""
    trace_type = _trace_type(value)
    return value if trace_type is None else trace_type.placeholder_value(PlaceholderContext())


def _describe(value):
    if isinstance(value, dict):
        return ("dict", tuple((k, _describe(value[k])) for k in nest.sorted_keys(value)))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_describe(v) for v in value))
    if isinstance(value, Variable):
        return ("variable", id(value), value.shape, value.dtype.name)
    if is_tensor_argument(value):
        spec = spec_of(value)
        return ("tensor", spec.shape, spec.dtype.name)
    if type(value) in _NUMBERS:
        return ("value", "number", _Number(value))
    if hasattr(value, "_static_key"):  # a composite tensor (a SparseTensor): its components
        return (value._static_key(), tuple(_describe(v) for v in value._tensor_components()))
    trace_type = _trace_type(value)
    if trace_type is not None:
        return ("trace type", trace_type)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (("dataclass", type(value)), tuple(map(_field_description, _fields(value))))
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"a {type(value).__name__} is not a tensor, a variable or a hashable value"
        ) from None
    return ("value", type(value).__name__, value)


_NUMBERS = (bool, int, float)


def _fields(value):
    """The values of a dataclass instance's fields, those its `__eq__` leaves out too: a
    trace reads them all (TensorFlow 2.21 traces a config dataclass again for a field of
    `compare=False`, whose value the trace holds)."""
    return [getattr(value, field.name) for field in dataclasses.fields(value)]


def _field_description(value):
    """A dataclass field in a key: a tensor by its identity (the trace holds it as a
    constant, so another tensor of its shape is another trace), anything else as an
    argument is described."""
    if is_tensor_argument(value) or isinstance(value, Variable):
        return ("value", "tensor field", _Identity(value))
    return _describe(value)


class _Identity:
    """An object in a key by its identity, kept alive with the key (so that its id names it
    alone)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, _Identity) and other.value is self.value

    def __hash__(self):
        return id(self.value)

    def __repr__(self):
        return f"<{type(self.value).__name__} at {id(self.value):#x}>"


class _Number:
    """A Python number as the trace cache keys it: by value, as TensorFlow's (`1`, `True`
    and `1.0` are one key, and a call with one runs the trace of whichever came first); a
    float that `==` would confuse by its bits (-0.0 is not 0.0, a NaN finds its trace).
    Shown as the number it was."""

    __slots__ = ("value", "key")

    def __init__(self, value):
        self.value = value
        whole = type(value) is not float or value.is_integer() and math.copysign(1.0, value) > 0
        self.key = int(value) if whole else value.hex()

    def __eq__(self, other):
        return isinstance(other, _Number) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return repr(self.value)


def difference(key, cached):
    """What differs between `key` and the nearest cached signature, for the retrace log."""
    new = list(_leaf_descriptions(key))

    def distance(other):
        old = list(_leaf_descriptions(other))
        return sum(a != b for a, b in zip(new, old)) + abs(len(new) - len(old))

    old = list(_leaf_descriptions(min(reversed(list(cached)), key=distance)))  # ties: the latest
    changes = [
        f"argument {k}: {_leaf_text(a)} -> {_leaf_text(b)}"
        for k, (a, b) in enumerate(zip(old, new))
        if a != b
    ]
    if len(old) != len(new):
        changes.append(f"{len(old)} -> {len(new)} arguments")
    return "; ".join(changes) or "a different argument structure"


def _leaf_descriptions(key):
    kind = key[0]
    if kind in ("tensor", "variable", "value", "trace type"):
        yield key
    elif kind == "dict":
        for _, child in key[1]:
            yield from _leaf_descriptions(child)
    else:
        for child in key[1]:
            yield from _leaf_descriptions(child)


def _leaf_text(leaf):
    kind = leaf[0] if isinstance(leaf, tuple) and leaf else None
    if kind == "tensor":
        return f"{leaf[2]}{list(leaf[1])}"
    if kind == "variable":
        return f"variable {leaf[3]}{list(leaf[2])} (id {leaf[1]:#x})"
    if kind == "value":
        return repr(leaf[2])
    if kind == "trace type":
        return repr(leaf[1])
    return repr(leaf)


def bound_arguments(func, args, kwargs):
    """[(parameter name, value)] of a call of `func` (arg0, arg1, ... where it has none)."""
    try:
        return list(inspect.signature(func).bind(*args, **kwargs).arguments.items())
    except (TypeError, ValueError):
        return [(f"arg{k}", a) for k, a in enumerate(args)] + list(kwargs.items())


def argument_names(func, args, kwargs):
    """A readable name per flattened argument leaf: `x`, `xs_1`, `params_w`. One object
    passed twice (`[spec] * 3`) gets each parameter's name in turn."""
    names = {}
    for name, value in bound_arguments(func, args, kwargs):
        _name_leaves(name, value, names)
    flat = nest.flatten((args, kwargs))
    return [
        (names[id(leaf)].pop(0) if names.get(id(leaf)) else f"arg{k}")
        for k, leaf in enumerate(flat)
    ]


def _name_leaves(prefix, value, names):
    if isinstance(value, dict):
        for key in nest.sorted_keys(value):
            _name_leaves(f"{prefix}_{key}", value[key], names)
    elif isinstance(value, (list, tuple)):
        for k, item in enumerate(value):
            _name_leaves(f"{prefix}_{k}", item, names)
    else:
        names.setdefault(id(value), []).append(prefix)


def type_text(value, aliases):
    """TensorFlow's text for the type of an argument or a result (tensors as TensorSpecs):
    `TensorSpec(...)`, `VariableSpec(...)`, `List[...]`, `Tuple[...]`, `Dict[['k', ...]]`,
    and `Literal[value]` for the other values. `aliases` maps id(variable) to its alias_id,
    the order in which distinct variables appear; new ones are added."""
    if isinstance(value, Variable):
        alias = aliases.setdefault(id(value), len(aliases))
        return (
            f"VariableSpec(shape={value.shape}, dtype={value.dtype!r}, "
            f"trainable={value.trainable}, alias_id={alias})"
        )
    if isinstance(value, TensorSpec):
        return repr(value)
    if isinstance(value, dict):
        items = (f"[{k!r}, {type_text(value[k], aliases)}]" for k in nest.sorted_keys(value))
        return f"Dict[{', '.join(items)}]"
    if isinstance(value, (list, tuple)):
        kind = "List" if isinstance(value, list) else "Tuple"
        return f"{kind}[{', '.join(type_text(v, aliases) for v in value)}]"
    return f"Literal[{value!r}]"


class TypeAnnotation:
    """The type of a parameter or a result as an annotation of an `inspect.Signature` (a
    ConcreteFunction's `function_type`): shown as `type_text` writes it."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def type_annotation(value, aliases):
    """`type_text` of `value` as an annotation."""
    return TypeAnnotation(type_text(value, aliases))


class SignatureMismatchError(TypeError, ValueError):
    """A tensor argument whose shape or dtype the input_signature does not take: TensorFlow's
    TypeError, and the ValueError tracer raised before."""


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class Binding:
    """How calls bind to a Python function's parameters, worked out once per function, as
    TensorFlow binds them before it keys a trace: the key is the call with its defaults
    filled in and each parameter that can be passed by position passed so (`f(x)`,
    `f(x, 2)`, `f(x, y=2)` and `f(x=x)` of `def f(x, y=2)` are one trace). A callable
    without a Python signature (some builtins) is keyed by its call as written.

        binding = Binding(lambda x, y=2: x * y)
        binding.canonical((1,), {})  # ((1, 2), {})
    """

    __slots__ = ("signature", "has_defaults", "_orders")

    def __init__(self, func):
        try:
            self.signature = inspect.signature(func)
        except (TypeError, ValueError):
            self.signature = None
        parameters = () if self.signature is None else self.signature.parameters.values()
        self.has_defaults = any(p.default is not p.empty for p in parameters)
        # (positional count, keyword names) -> _Order, or None where a call of that form
        # keeps keywords once bound
        self._orders = {}

    def by_position(self, args, kwargs):
        """The canonical call of `args` and `kwargs` (`canonical`) as positional arguments
        alone, or None where it keeps keyword arguments (keyword-only parameters, `**`) or
        the parameters refuse the call. How each form of call (its positional count and
        keyword names, in order) binds is worked out once, so a call by keyword costs a
        lookup and a tuple, not `inspect.Signature.bind`."""
        form = (len(args), *kwargs)
        try:
            order = self._orders[form]
        except KeyError:
            order = self._orders[form] = self._order_of(len(args), kwargs)
        return None if order is None else order.arguments(args, kwargs)

    def _order_of(self, count, names):
        """The _Order of a call of `count` positional arguments and keywords `names`: the
        call bound with markers in their places, and defaults filled in."""
        if self.signature is None:
            return None
        markers = {name: _Given(name) for name in names}
        try:
            bound = self.signature.bind(*map(_Given, range(count)), **markers)
        except TypeError:  # (the call's own binding raises it, with its message)
            return None
        bound.apply_defaults()
        if bound.kwargs:
            return None
        return _Order(tuple(bound.args))

    def canonical(self, args, kwargs):
        """(args, kwargs) as the trace cache keys them: defaults filled in, the parameters
        that can take a position by position. A call the parameters refuse raises
        TypeError, as the Python function would."""
        if self.signature is None or not (kwargs or self.has_defaults):
            return args, kwargs  # (nothing to fill in or to move)
        bound = self.bound(args, kwargs)
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def bound(self, args, kwargs):
        """The call bound to the parameters (inspect's BoundArguments); TypeError, as the
        Python function would raise, for a call they refuse. Before a trace, so that such a
        call traces nothing (TensorFlow counts no trace for it)."""
        try:
            return self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(
                f"binding the call to the function's parameters failed: {error}"
            ) from None

    def omittable(self, args):
        """How many positional arguments at the end of a canonical call are the defaults
        of their parameters and hold no tensor: a call may leave them out and still be
        this call (the compiled entry in C takes calls by position)."""
        if self.signature is None:
            return 0
        named = [p for p in self.signature.parameters.values() if p.kind in _POSITIONAL]
        if len(args) > len(named):  # (some went to *args)
            return 0
        count = 0
        for value, parameter in zip(reversed(args), reversed(named[: len(args)])):
            if value is not parameter.default or _holds_tensors(value):
                break
            count += 1
        return count

    def to_input_signature(self, specs, args, kwargs, skip=0):
        """The call's arguments for `specs` (an input_signature, possibly nested), as
        TensorFlow binds them: positionally or by name, a parameter the signature lists but
        the call leaves out taking its default; each value converted to its spec (tensors
        and variables must have its dtype; numpy values are cast to it; Python values are
        converted as `convert_to_tensor(value, dtype)` does) and of a shape the spec takes.
        The first `skip` arguments (a method's instance) pass as they are. Returns the
        arguments, by position; the parameters the signature does not list keep their
        defaults (a call may give only those values). Raises TypeError otherwise."""
        parameters = list(self.signature.parameters.values())[skip:]
        named = [p for p in parameters if p.kind in _POSITIONAL]
        rest = [p for p in parameters if p.kind is inspect.Parameter.VAR_POSITIONAL]
        for parameter in parameters:
            if (
                parameter.kind is inspect.Parameter.KEYWORD_ONLY
                and parameter.default is parameter.empty
            ):
                raise TypeError(
                    "Since input_signature is defined, keyword-only parameter "
                    f"`{parameter.name}` must have a default value"
                )
        if len(specs) > len(named) and not rest:
            raise TypeError(
                f"input_signature contains {len(specs) - len(named)} extra type constraints"
            )
        listed = named[: len(specs)]
        others = [p for p in parameters if p not in listed and p.kind not in _VARIADIC]
        for parameter in others:
            if parameter.default is parameter.empty:
                raise TypeError(f"input_signature missing type constraint for {parameter.name}")
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"binding the call to the input_signature failed: {error}") from None
        given = bound.arguments
        values = []
        for parameter, spec in zip(listed, specs):
            value = given.get(parameter.name, parameter.default)
            if value is parameter.empty:
                raise TypeError(f"missing a required argument: {parameter.name!r}")
            values.append(conform(spec, value, parameter.name))
        extra = list(given.get(rest[0].name, ())) if rest else []
        if len(extra) != len(specs) - len(listed):
            raise TypeError(
                f"the input_signature lists {len(specs) - len(listed)} arguments for "
                f"*{rest[0].name}, the call gives {len(extra)}"
            )
        for k, (spec, value) in enumerate(zip(specs[len(listed) :], extra)):
            values.append(conform(spec, value, f"{rest[0].name}_{k}"))
        for parameter in others:
            if parameter.name in given:
                _check_default(parameter, given[parameter.name])
        keywords = [p.name for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]
        if keywords and given.get(keywords[0]):
            raise TypeError(
                f"the input_signature takes no more keyword arguments: {sorted(given[keywords[0]])}"
            )
        return (*args[:skip], *values)


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


class _Given:
    """Where a bound call's argument came from: a position of the call, or a keyword."""

    __slots__ = ("source",)

    def __init__(self, source):
        self.source = source


class _Order:
    """A form of call's canonical arguments, each a position or keyword of the call or a
    parameter's default."""

    __slots__ = ("places",)

    def __init__(self, bound):
        # (True, position), (False, keyword) or (None, default)
        self.places = tuple(
            (isinstance(value.source, int), value.source)
            if isinstance(value, _Given)
            else (None, value)
            for value in bound
        )

    def arguments(self, args, kwargs):
        return tuple(
            value if by is None else args[value] if by else kwargs[value]
            for by, value in self.places
        )


def _check_default(parameter, value):
    """A parameter the input_signature does not list takes only its default (TensorFlow
    binds it as `Literal[default]`)."""
    default = parameter.default
    try:
        same = value is default or type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):  # (an array's ==)
        same = False
    if not same:
        raise TypeError(
            f"argument {parameter.name} is {value!r}: the input_signature does not list it, "
            f"so it takes only its default, {default!r}"
        )


def _holds_tensors(value):
    try:
        return any(is_tensor_argument(leaf) for leaf in nest.flatten(value))
    except TypeError:  # (a structure nest cannot walk: keyed as a whole, by value)
        return False


def conform(spec, value, name):
    """`value` fit to `spec` (a TensorSpec or a list, tuple or dict of them), as TensorFlow
    binds a call to an input_signature; TypeError where it does not fit."""
    if isinstance(spec, TensorSpec):
        return _conform_tensor(spec, value, name)
    if hasattr(spec, "_conformed"):  # a composite's spec (a SparseTensorSpec)
        return spec._conformed(value, name)
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            raise TypeError(
                f"argument {name} is {value!r}; the input_signature says a dict of keys "
                f"{nest.sorted_keys(spec)}"
            )
        return {key: conform(spec[key], value[key], f"{name}_{key}") for key in value}
    kind = list if isinstance(spec, list) else type(spec)
    if not isinstance(value, kind) or len(value) != len(spec):
        raise TypeError(
            f"argument {name} is {value!r}; the input_signature says a {kind.__name__} "
            f"of {len(spec)}"
        )
    items = [conform(s, v, f"{name}_{k}") for k, (s, v) in enumerate(zip(spec, value))]
    if hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*items)
    return tuple(items) if isinstance(value, tuple) else items


def _python_kinds(value):
    """The types of the Python numbers in `value` (nested lists and tuples of them)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _python_kinds(item)
    elif type(value) in _NUMBERS:
        yield type(value)


def _conform_tensor(spec, value, name):
    """A tensor argument for `spec` made of `value` (see `Binding.to_input_signature`)."""
    from tracer.tensor import convert_to_tensor  # (tensor.py builds on this module)

    shown = None if is_tensor_argument(value) else repr(value)  # (a Python value, as given)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype != spec.dtype.as_numpy_dtype:
        try:  # TensorFlow casts numpy values as numpy does
            value = np.asarray(value).astype(spec.dtype.as_numpy_dtype)
        except (TypeError, ValueError) as error:
            raise TypeError(f"argument {name}: {error}") from None
    elif isinstance(value, Variable) or not is_tensor_argument(value):
        kinds = set(_python_kinds(value))
        if (
            float in kinds
            and (spec.dtype.is_integer or spec.dtype.is_bool)
            or (int in kinds and spec.dtype.is_bool)
        ):  # TensorFlow's convert_to_tensor refuses these, even 3.0 to an int
            raise TypeError(f"argument {name}: cannot convert {value!r} to {spec.dtype.name}")
        try:
            value = convert_to_tensor(value, spec.dtype)
        except (TypeError, ValueError, OverflowError) as error:
            raise TypeError(f"argument {name} is {value!r}: {error}") from None
    given = spec_of(value)
    if is_unknown_rank(given.shape):  # (a TensorSpec of unknown rank)
        fits = given.dtype == spec.dtype
    else:
        fits = spec.admits(given.shape, given.dtype)
    if not fits:
        raise SignatureMismatchError(
            f"argument {name} is {shown or given.text()}, the input_signature says {spec.text()}"
        )
    return value
