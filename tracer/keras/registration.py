"""Keras's registry of one's own classes for files: `register_keras_serializable(package)`
names a class `package>ClassName`, the name a `.keras` file records for it, so that
`load_model` finds it without `custom_objects`; `custom_object_scope(objects)` adds objects by
name to the same registry while it lasts (Keras's global custom objects, which
`get_custom_objects()` returns)."""

import inspect

_BY_NAME = {}  # "package>name" (or a scope's name) -> the class (or function)
_NAMES = {}  # the class -> "package>name"


def register_keras_serializable(package="Custom", name=None):
    """A decorator that registers a class (which must have `get_config`) or a function under
    `package>name` (`name` defaults to its own); registering a name again replaces it, as in
    Keras."""

    def register(obj):
        registered = f"{package}>{name if name is not None else obj.__name__}"
        if inspect.isclass(obj) and not hasattr(obj, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _BY_NAME[registered] = obj
        _NAMES[obj] = registered
        return obj

    return register


def get_registered_name(obj):
    """The name `obj` was registered under, else its own name."""
    return _NAMES.get(obj, obj.__name__)


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The object registered (or in `custom_objects`, or `module_objects`) as `name`, or
    None."""
    for table in (custom_objects or {}, _BY_NAME, module_objects or {}):
        if name in table:
            return table[name]
    return None


def get_custom_objects():
    """The registry itself, {name: object}: what is registered, and the objects of the
    custom_object_scopes now open (changing it changes what loading finds, as in Keras)."""
    return _BY_NAME


class CustomObjectScope:
    """A context in which loading finds `objects` ({name: class or function}, several dicts
    merged) by name, as if given in `custom_objects`; the registry is as it was after it.

    >>> class Twice(tt.keras.layers.Layer):
    ...     pass
    >>> with tt.keras.utils.custom_object_scope({"Twice": Twice}):
    ...     tt.keras.utils.get_registered_object("Twice") is Twice
    True
    """

    def __init__(self, *objects):
        self.objects = {}
        for table in objects:
            self.objects.update(table or {})
        self._saved = None

    def __enter__(self):
        self._saved = dict(_BY_NAME)
        _BY_NAME.update(self.objects)
        return self

    def __exit__(self, *exc_info):
        _BY_NAME.clear()
        _BY_NAME.update(self._saved)


custom_object_scope = CustomObjectScope
