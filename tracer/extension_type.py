"""`tt.experimental.ExtensionType`: a user's class of tensors and values, as TensorFlow's.

A subclass declares its fields with annotations, in order, its bases' first:

    class MaskedTensor(tt.experimental.ExtensionType):
        values: tt.Tensor
        mask: tt.Tensor
        label: str = "x"

It gets what TensorFlow gives it: a constructor that takes the fields (by position or by
name) and converts each to its declared type (`tt.Tensor`, `str`, `int`, `float`, `bool`,
`tt.TensorShape`, `tt.DType`, `Tuple[...]`, `Mapping[...]`, `Union[...]`, `Optional[...]`,
another ExtensionType, and names of classes as strings), a TypeError naming the field where
it cannot; a constructor of its own instead, which sets the fields, converted after it
returns; `__validate__` run after either; fields that cannot be changed afterwards
(AttributeError); a repr listing the fields; `==` comparing the tensors (a bool tensor, or
False for another type or shape); and a nested `Spec` class, its type: the same fields
with a TensorSpec for each tensor (`tt.type_spec_from_value`). A `Spec` class written in
the body adds its methods to that one.

Its tensors are its components (tracer/nest.py's composite tensors, as a SparseTensor's),
so a traced function takes and returns one: a trace is keyed by its class, its other
fields' values and its tensors' shapes and dtypes, and a value of the same type runs the
same trace.
"""

import collections.abc
import functools
import inspect
import sys
import types
import typing

from tracer import dtypes
from tracer.signature import SignatureMismatchError, TensorSpec, spec_of
from tracer.tensor import Tensor, TensorLike, convert_to_tensor
from tracer.tensor_shape import TensorShape, as_shape

_CONSTRUCTING = "_tt_constructing"  # in an instance's __dict__ while its own __init__ runs
_LAYOUT = "_tt_layout"  # in an instance's __dict__: where its tensors are (see `_layout`)
_TENSOR = ("tensor",)  # a layout's leaf: a tensor (a TensorSpec in a Spec)
_PLAIN_TYPES = (int, float, bool, str, bytes, type(None))


class ImmutableDict(collections.abc.Mapping):
    """A field of a Mapping type: a dict that cannot be changed, printed as TensorFlow's."""

    __slots__ = ("_items",)

    def __init__(self, items=()):
        self._items = dict(items)

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __repr__(self):
        return f"ImmutableDict({self._items!r})"


class _Field(typing.NamedTuple):
    name: str
    annotation: object
    default: object


_NO_DEFAULT = inspect.Parameter.empty


class _Composite:
    """What an ExtensionType and its Spec share: fields held in `__dict__` that cannot be
    changed after construction, and the composite-tensor protocol of tracer/nest.py and
    tracer/signature.py (components, rebuilding from them, the key of a trace)."""

    _kind = "ExtensionType"  # (in the AttributeError of a change)

    def __setattr__(self, name, value):
        if _CONSTRUCTING in self.__dict__ and _has_field(self, name):
            self.__dict__[name] = value
        else:
            raise AttributeError(
                f"Cannot mutate attribute `{name}` outside the custom constructor of {self._kind}."
            )

    def __delattr__(self, name):
        if _CONSTRUCTING in self.__dict__ and _has_field(self, name):
            del self.__dict__[name]
        else:
            raise AttributeError(
                f"Cannot mutate attribute `{name}` outside the custom constructor of {self._kind}."
            )

    def __validate__(self):
        """Checks a subclass makes after construction (the fields are converted by then)."""

    def _tensor_components(self):
        return tuple(_leaves(self))

    def _from_components(self, parts):
        """This value's (or spec's) structure holding `parts`: a Spec where they are all
        TensorSpecs, else a value (of tensors, or of what a trace's signature packs)."""
        parts = list(parts)
        if parts:
            as_spec = all(isinstance(p, TensorSpec) for p in parts)
        else:
            as_spec = isinstance(self, ExtensionTypeSpec)
        return _assembled(_value_type(self), self.__dict__[_LAYOUT], iter(parts), as_spec)

    def _static_key(self):
        """What a trace is keyed by besides its tensors' shapes and dtypes."""
        return ("ExtensionType", _value_type(self), self.__dict__[_LAYOUT])


class ExtensionType(_Composite):
    """The base of a user's extension type (see the module's docstring).

    >>> class Pair(tt.experimental.ExtensionType):
    ...     a: tt.Tensor
    ...     b: tt.Tensor
    >>> Pair(1.0, b=2.0).b
    <tracer.Tensor: shape=(), dtype=float32, numpy=2.0>
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__ == __name__:  # (BatchableExtensionType: a base, not a user's type)
            return
        own = cls.__dict__.get("__init__")
        cls.__init__ = _field_constructor if own is None else _wrapped_constructor(own)
        _add_spec(cls)

    def __repr__(self):
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in _fields(type(self)))
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other):
        """A bool tensor, true where every tensor equals the other's; False (a Python bool)
        for another type, other values of the other fields, or tensors of other shapes."""
        from tracer.ops.math_composites import reduce_all
        from tracer.ops.math_ops import equal
        from tracer.ops.structure_ops import stack

        if type(self) is not type(other) or self._static_key() != other._static_key():
            return False
        pairs = list(zip(self._tensor_components(), other._tensor_components()))
        if any(a.shape != b.shape or a.dtype != b.dtype for a, b in pairs):
            return False
        if not pairs:
            return convert_to_tensor(True)
        return reduce_all(stack([reduce_all(equal(a, b)) for a, b in pairs]))

    def __ne__(self, other):
        from tracer.ops.math_ops import logical_not

        equal = self.__eq__(other)
        return logical_not(equal) if isinstance(equal, TensorLike) else not equal

    __hash__ = None


class BatchableExtensionType(ExtensionType):
    """An ExtensionType whose values TensorFlow can batch; tracer takes it as an
    ExtensionType (its values are not batched in tracer's datasets, `map_fn` or Keras)."""


class ExtensionTypeSpec(_Composite):
    """The base of an ExtensionType's `Spec`: its fields, a TensorSpec for each tensor.

    >>> Pair.Spec(a=tt.TensorSpec([]), b=tt.TensorSpec([]))
    Pair.Spec(a=TensorSpec(shape=(), dtype=tt.float32, name=None), b=...)
    """

    _kind = "ExtensionTypeSpec"
    value_type = None  # the ExtensionType class it describes (set on each Spec class)

    @classmethod
    def from_value(cls, value):
        """The spec of `value`, an instance of `value_type`."""
        specs = iter([spec_of(t) for t in value._tensor_components()])
        return _assembled(cls.value_type, value.__dict__[_LAYOUT], specs, as_spec=True)

    def _conformed(self, value, name):
        """`value` where it is a value of this spec (an input_signature's check of argument
        `name`); a SignatureMismatchError otherwise."""
        fits = isinstance(value, self.value_type) and value._static_key() == self._static_key()
        if fits:
            pairs = zip(self._tensor_components(), value._tensor_components())
            fits = all(s.admits(t.shape, t.dtype) for s, t in pairs)
        if not fits:
            raise SignatureMismatchError(
                f"argument {name} is {value!r}, the input_signature says {self!r}"
            )
        return value

    def __repr__(self):
        fields = ", ".join(
            f"{f.name}={_plain(getattr(self, f.name))!r}" for f in _fields(self.value_type)
        )
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other):
        return (
            type(self) is type(other)
            and self._static_key() == other._static_key()
            and self._tensor_components() == other._tensor_components()
        )

    def __hash__(self):
        return hash((self._static_key(), self._tensor_components()))


class BatchableExtensionTypeSpec(ExtensionTypeSpec):
    """The base of a BatchableExtensionType's `Spec`."""


def type_spec_from_value(value):
    """The type of `value`, as TensorFlow's `tf.type_spec_from_value`: an ExtensionType's
    `Spec`, a SparseTensor's SparseTensorSpec, a TensorSpec for anything a tensor is made of.

    >>> tt.type_spec_from_value(tt.constant([1, 2]))
    TensorSpec(shape=(2,), dtype=tt.int32, name=None)
    """
    from tracer.sparse_tensor import SparseTensor, SparseTensorSpec

    if isinstance(value, ExtensionType):
        return type(value).Spec.from_value(value)
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype)
    try:
        return spec_of(value if isinstance(value, TensorLike) else convert_to_tensor(value))
    except (TypeError, ValueError):
        raise TypeError(f"Could not build a TypeSpec for {value!r} of type {type(value)}") from None


def refuse_shaped(structure, what):
    """A NotImplementedError, naming `what`, where `structure` holds an extension type (or
    spec) with a TensorShape field: TensorFlow's batchable types give such a field the shape
    of the batch or of the element; tracer slices, batches and maps their tensors only,
    which would leave the field wrong."""
    from tracer import nest

    for item in nest.flatten(structure, expand_composites=False):
        if isinstance(item, _Composite):
            shaped = [k for k, v in vars(item).items() if isinstance(v, TensorShape)]
            if shaped:
                raise NotImplementedError(
                    f"{what} of {type(item).__qualname__} values is not supported: its field "
                    f"{shaped[0]!r} is a TensorShape, which tracer does not batch"
                )


def _add_spec(cls):
    """Make `cls.Spec`, with the methods of a `Spec` class written in `cls`'s body."""
    namespace = {"value_type": cls, "__module__": cls.__module__}
    written = cls.__dict__.get("Spec")
    if written is not None:
        skipped = ("__module__", "__dict__", "__weakref__", "__qualname__")
        namespace.update((k, v) for k, v in vars(written).items() if k not in skipped)
    base = (
        BatchableExtensionTypeSpec if issubclass(cls, BatchableExtensionType) else ExtensionTypeSpec
    )
    spec = type(f"{cls.__name__}.Spec", (base,), namespace)
    spec.__qualname__ = f"{cls.__qualname__}.Spec"
    own = namespace.get("__init__")
    spec.__init__ = _field_constructor if own is None else _wrapped_constructor(own)
    type.__setattr__(cls, "Spec", spec)


def _value_type(value):
    return value.value_type if isinstance(value, ExtensionTypeSpec) else type(value)


def _fields(cls):
    """The fields of an ExtensionType class, its bases' first, in order of declaration
    (found at its first use, when the names its annotations give as strings are defined)."""
    found = cls.__dict__.get("_tt_fields")
    if found is None:
        fields = {}
        for klass in reversed(cls.__mro__):
            if klass in (ExtensionType, BatchableExtensionType) or not issubclass(
                klass, ExtensionType
            ):
                continue
            for name, annotation in klass.__dict__.get("__annotations__", {}).items():
                if typing.get_origin(annotation) is typing.ClassVar:
                    continue
                default = klass.__dict__.get(name, _NO_DEFAULT)
                fields[name] = _Field(name, annotation, default)
        found = tuple(fields.values())
        type.__setattr__(cls, "_tt_fields", found)
    return found


def _has_field(value, name):
    return any(f.name == name for f in _fields(_value_type(value)))


def _signature(cls):
    """The constructor's signature: the fields in order, each after one with a default
    keyword-only where it has none (as TensorFlow's)."""
    found = cls.__dict__.get("_tt_signature")
    if found is None:
        parameters, keyword_only = [], False
        for field in _fields(cls):
            keyword_only = keyword_only or field.default is not _NO_DEFAULT
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            if keyword_only and field.default is _NO_DEFAULT:
                kind = inspect.Parameter.KEYWORD_ONLY
            parameters.append(inspect.Parameter(field.name, kind, default=field.default))
        found = inspect.Signature(parameters)
        type.__setattr__(cls, "_tt_signature", found)
    return found


def _field_constructor(self, *args, **kwargs):
    """The constructor of an ExtensionType (or Spec) that has none of its own."""
    bound = _signature(_value_type(self)).bind(*args, **kwargs)
    bound.apply_defaults()
    self.__dict__.update(bound.arguments)
    _finish(self)


def _wrapped_constructor(constructor):
    """A class's own constructor, which may set the fields; they are converted after it."""

    @functools.wraps(constructor)
    def __init__(self, *args, **kwargs):
        self.__dict__[_CONSTRUCTING] = True
        try:
            constructor(self, *args, **kwargs)
        finally:
            self.__dict__.pop(_CONSTRUCTING, None)
        _finish(self)

    return __init__


def _finish(value):
    """Convert the fields `value` was given to their types, note where its tensors are, and
    run its `__validate__`."""
    cls, spec = _value_type(value), isinstance(value, ExtensionTypeSpec)
    fields = _fields(cls)
    missing = {f.name for f in fields if f.name not in value.__dict__}
    if missing:
        raise ValueError(f"Missing required fields: {missing}")
    for field in fields:
        annotation = _resolved(field.annotation, cls)
        value.__dict__[field.name] = _converted(
            value.__dict__[field.name], annotation, field.name, spec
        )
    value.__dict__[_LAYOUT] = tuple(_layout(value.__dict__[f.name]) for f in fields)
    value.__validate__()


def _converted(value, annotation, path, spec):
    """`value` as a field of type `annotation` holds it (in a Spec: a TensorSpec for a
    tensor, a Spec for an ExtensionType); a TypeError naming the field by `path` where it
    cannot hold it."""
    got = type(value).__name__
    if annotation is Tensor:
        return _tensor_field(value, path, spec)
    if annotation is TensorShape:
        try:
            return as_shape(value)
        except (TypeError, ValueError):
            raise TypeError(f"{path}: expected 'tf.TensorShape', got {got!r}") from None
    if annotation is dtypes.DType:
        try:
            return dtypes.as_dtype(value)
        except (TypeError, ValueError):
            raise TypeError(f"{path}: expected 'tf.DType', got {got!r}") from None
    if annotation is None or annotation in _PLAIN_TYPES:
        kind = type(None) if annotation is None else annotation
        if not isinstance(value, kind):
            raise TypeError(f"{path}: expected {kind.__name__!r}, got {got!r}")
        return value
    if isinstance(annotation, type) and issubclass(annotation, ExtensionType):
        if spec:
            if not (
                isinstance(value, ExtensionTypeSpec) and issubclass(value.value_type, annotation)
            ):
                raise TypeError(
                    f"{path}: expected a TypeSpec for {annotation.__name__!r}, got {got!r}"
                )
        elif not isinstance(value, annotation):
            raise TypeError(f"{path}: expected {annotation.__name__!r}, got {got!r}")
        return value
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is tuple:
        return _tuple_field(value, arguments, path, spec)
    if isinstance(origin, type) and issubclass(origin, collections.abc.Mapping):
        if not isinstance(value, collections.abc.Mapping):
            raise TypeError(f"{path}: expected mapping, got {got!r}")
        key_type, value_type = arguments or (typing.Any, typing.Any)
        return ImmutableDict(
            (
                _converted(k, key_type, f"{path}[<key>]", spec),
                _converted(v, value_type, f"{path}[{k!r}]", spec),
            )
            for k, v in value.items()
        )
    if origin in (typing.Union, types.UnionType):
        for option in arguments:
            try:
                return _converted(value, option, path, spec)
            except TypeError:
                pass
        raise TypeError(f"{path}: expected {annotation!r}, got {got!r}")
    raise TypeError(f"{path}: Unsupported type annotation {annotation!r}")


def _tensor_field(value, path, spec):
    if spec:
        if not isinstance(value, TensorSpec):
            raise TypeError(f"{path}: expected a TensorSpec, got {type(value).__name__!r}")
        return value
    if isinstance(value, Tensor):
        return value
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError):
        raise TypeError(f"{path}: expected a Tensor, got {type(value).__name__!r}") from None


def _tuple_field(value, arguments, path, spec):
    if isinstance(value, (str, bytes)) or not isinstance(value, collections.abc.Sequence):
        raise TypeError(f"{path}: expected tuple, got {type(value).__name__!r}")
    if len(arguments) == 2 and arguments[1] is Ellipsis:
        arguments = (arguments[0],) * len(value)
    elif len(arguments) != len(value):
        raise TypeError(
            f"{path}: expected tuple with length {len(arguments)}, got {type(value).__name__!r})"
        )
    return tuple(
        _converted(v, t, f"{path}[{k}]", spec) for k, (v, t) in enumerate(zip(value, arguments))
    )


def _resolved(annotation, owner):
    """A field's annotation given as a name (`"Node"`) as the class it names: `owner` or
    one of its bases, else a name of `owner`'s module. (A name inside another annotation,
    `Tuple["Node", ...]`, stays a name, which TensorFlow 2.21 does not support either.)"""
    if not isinstance(annotation, str):
        return annotation
    for klass in owner.__mro__:
        if klass.__name__ == annotation:
            return klass
    module = sys.modules.get(owner.__module__)
    found = getattr(module, annotation, None) if module is not None else None
    if found is None:
        raise TypeError(f"Unresolved forward reference {annotation!r}")
    return found


def _layout(value):
    """Where a field's tensors are, as a hashable tree that keeps its other values: a trace's
    key (with the tensors' shapes and dtypes) and the plan to rebuild it from components."""
    if isinstance(value, (TensorLike, TensorSpec)):
        return _TENSOR
    if isinstance(value, _Composite):
        return ("nested", _value_type(value), value.__dict__[_LAYOUT])
    if isinstance(value, tuple) and not isinstance(value, TensorShape):
        return ("tuple", tuple(_layout(v) for v in value))
    if isinstance(value, ImmutableDict):
        return ("mapping", tuple(value), tuple(_layout(v) for v in value.values()))
    return ("value", value)


def _leaves(value):
    """The tensors of an ExtensionType or Spec, in the order of its fields."""
    layouts = value.__dict__[_LAYOUT]
    for field, layout in zip(_fields(_value_type(value)), layouts):
        yield from _leaves_of(value.__dict__[field.name], layout)


def _leaves_of(value, layout):
    kind = layout[0]
    if kind == "tensor":
        yield value
    elif kind == "nested":
        yield from _leaves(value)
    elif kind == "tuple":
        for item, inner in zip(value, layout[1]):
            yield from _leaves_of(item, inner)
    elif kind == "mapping":
        for key, inner in zip(layout[1], layout[2]):
            yield from _leaves_of(value[key], inner)


def _assembled(cls, layout, parts, as_spec):
    """An instance of `cls` (of `cls.Spec` where `as_spec`) of `layout` holding the
    iterator `parts` at its tensors, made without its constructor (as TensorFlow rebuilds
    one: a constructor of the user's may take other arguments)."""
    made = object.__new__(cls.Spec if as_spec else cls)
    for field, inner in zip(_fields(cls), layout):
        made.__dict__[field.name] = _rebuilt(inner, parts, as_spec)
    made.__dict__[_LAYOUT] = layout
    return made


def _rebuilt(layout, parts, as_spec):
    kind = layout[0]
    if kind == "tensor":
        return next(parts)
    if kind == "nested":
        return _assembled(layout[1], layout[2], parts, as_spec)
    if kind == "tuple":
        return tuple(_rebuilt(inner, parts, as_spec) for inner in layout[1])
    if kind == "mapping":
        return ImmutableDict(zip(layout[1], [_rebuilt(i, parts, as_spec) for i in layout[2]]))
    return layout[1]


def _plain(value):
    """A Spec's field as its repr shows it: mappings as dicts, as TensorFlow's."""
    if isinstance(value, ImmutableDict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple) and not isinstance(value, TensorShape):
        return tuple(_plain(v) for v in value)
    return value
