"""`tt.Module` and `tt.name_scope`, as TensorFlow defines them.

A Module finds its variables and sub-modules by walking its attributes, and the lists,
tuples and dicts they hold, as `tf.Module` does: nothing is registered. The walk yields a
module's own leaves first (its attributes in sorted name order, dict keys sorted), then
each sub-module's, depth first; every object once, cycles included.

`tt.name_scope("outer")` prefixes the names of the variables made inside (`outer/w:0`); a
Module's `name_scope` is the scope it was made in plus its name, fixed at construction, and
`Module.with_name_scope` enters it around a method.

Setting an attribute of a module on which a checkpoint's restored values wait assigns them
(TensorFlow's deferred restoration): tracer/train/deferred.py gives `Module` a `__setattr__`
while anything waits.
"""

import functools
import re
import types

from tracer.context import state
from tracer.dtypes import DType
from tracer.variable import Variable

_SCOPE_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")


class name_scope:
    """A context manager that prefixes new variables' names with `name/`; `as` gives the
    full prefix. A name ending in "/" is absolute; "" is the root.

    >>> with tt.name_scope("block") as scope:
    ...     scope, tt.Variable(1.0, name="w").name
    ('block/', 'block/w:0')
    """

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"name_scope takes a string, not {type(name).__name__}")
        if name and not _SCOPE_NAME.match(name):
            raise ValueError(f"{name!r} is not a valid scope name")
        self.name = name
        self._saved = []

    def __enter__(self):
        current = state.name_scope
        if not self.name or self.name.endswith("/"):
            scope = self.name
        else:
            scope = f"{current}{self.name}/"
        self._saved.append(current)
        state.name_scope = scope
        return scope

    def __exit__(self, *exc_info):
        state.name_scope = self._saved.pop()


def camel_to_snake(name):
    """TensorFlow's default module name: `MyModule` -> `my_module`, `MLP` -> `mlp`."""
    return re.sub(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))", r"_\1", name).lower()


class Module:
    """A named container of variables and sub-modules, found through its attributes.

    >>> class Linear(tt.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         with self.name_scope:
    ...             self.w = tt.Variable(tt.ones((2, 2)), name="w")
    >>> [v.name for v in Linear().variables]
    ['linear/w:0']
    """

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not name.isidentifier():
            raise ValueError(
                f"{name!r} is not a valid module name: module names must be valid Python "
                "identifiers (e.g. a valid class name)"
            )
        self._name = name
        with name_scope(name) as scope:
            self._scope = name_scope(scope)

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        """The scope of this module's variables (`parent/name/`), entered with `with`."""
        return self._scope

    @property
    def variables(self):
        """The variables of this module and its sub-modules, each once."""
        return tuple(self._flatten(_is_variable))

    @property
    def trainable_variables(self):
        return tuple(self._flatten(lambda leaf: _is_variable(leaf) and leaf.trainable))

    @property
    def non_trainable_variables(self):
        return tuple(self._flatten(lambda leaf: _is_variable(leaf) and not leaf.trainable))

    @property
    def submodules(self):
        """Every module below this one (not itself), depth first."""
        return tuple(self._flatten(lambda leaf: isinstance(leaf, Module)))

    @classmethod
    def with_name_scope(cls, method):
        """Decorates a method to run inside the module's name scope."""

        @functools.wraps(method)
        def in_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)

        return in_scope

    def _attributes(self):
        """The attribute values to walk, in order (TensorFlow's: sorted by name)."""
        attributes = vars(self)
        return [attributes[key] for key in sorted(attributes)]

    def _flatten(self, predicate, descend=None):
        """The variables and modules below this module for which `predicate` holds: its own
        first, then each sub-module's (those `descend` accepts, when given). A Keras step
        asks for its model's trainable variables twice, so the walk passes over every other
        leaf (names, sizes, flags, functions) before anything else."""
        seen = {id(self)}
        pending = [self]
        found = []
        while pending:
            module = pending.pop(0)
            submodules = []
            for leaf in held_objects(module._attributes(), (Variable, Module)):
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
                if predicate(leaf):
                    found.append(leaf)
                if isinstance(leaf, Module) and (descend is None or descend(leaf)):
                    submodules.append(leaf)
            pending[:0] = submodules
        return found

    def __repr__(self):
        # NOTE: a subclass whose __init__ skips Module.__init__ has no name (TensorFlow's
        # `name` raises AttributeError too); its repr is still used, by retracing's messages.
        if "_name" not in vars(self):
            return object.__repr__(self)
        return f"<{type(self).__module__}.{type(self).__name__} name={self._name!r}>"


def _is_variable(leaf):
    return isinstance(leaf, Variable)


def held_objects(values, only=None):
    """The objects held in `values`, through lists, tuples and dicts (keys sorted when they
    can be), in order: what a module walks (and a loaded SavedModel object); with `only` (a
    type or tuple of types), those of it alone, plain values passed over first (a Keras step
    asks for its model's trainable variables twice). A list built from a stack, where nested
    generators cost a Keras layer's walk three microseconds."""
    found = []
    stack = list(values)
    stack.reverse()
    while stack:
        value = stack.pop()
        if only is not None and type(value) in _HOLDS_NOTHING:
            continue
        if isinstance(value, (list, tuple)):
            stack.extend(reversed(value))
        elif isinstance(value, dict):
            stack.extend(value[key] for key in reversed(_sorted_keys(value)))
        elif only is None or isinstance(value, only):
            found.append(value)
    return found


# the types of attribute values that hold nothing a module walks: most of a Keras layer's
# attributes (names, sizes, flags, functions, dtypes)
_HOLDS_NOTHING = frozenset(
    {str, int, float, bool, type(None), bytes, types.FunctionType, types.MethodType, DType}
)


def _sorted_keys(mapping):
    try:
        return sorted(mapping)
    except TypeError:
        return list(mapping)
