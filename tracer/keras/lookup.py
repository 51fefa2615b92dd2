"""What Keras's lookups share: the last step of `get(identifier)` (losses, initializers,
regularizers, constraints), the config methods of the objects they return, and the form
Keras gives an array in a config."""

import numpy as np


def instance_or_callable(found, identifier, names, kind):
    """`found` (what `identifier` named) as Keras returns it: a class instantiated with its
    defaults, a callable as is; anything else is a ValueError listing the known `names`."""
    if isinstance(found, type):
        return found()
    if callable(found):
        return found
    listed = ", ".join(repr(name) for name in names)
    raise ValueError(f"unknown {kind} {identifier!r}; use a callable, None or one of {listed}")


class Configurable:
    """Keras's initializers, regularizers and constraints: their arguments as a config
    (`get_config`, none by default), made again by `from_config`, and shown by it."""

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        arguments = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({arguments})"


def config_value(value):
    """`value` as Keras's serialize_keras_object writes it in a config: a numpy array as
    `{"class_name": "__numpy__", ...}`, a tensor as `"__tensor__"`, a numpy scalar as the
    Python number; anything else as it is.

    >>> config_value(np.array([0.5]))
    {'class_name': '__numpy__', 'config': {'value': [0.5], 'dtype': 'float64'}}
    """
    if isinstance(value, np.generic):
        return value.item()
    kind = "__numpy__" if isinstance(value, np.ndarray) else None
    if kind is None and hasattr(value, "numpy") and hasattr(value, "dtype"):
        kind, value = "__tensor__", np.asarray(value.numpy())
    if kind is None:
        return value
    return {"class_name": kind, "config": {"value": value.tolist(), "dtype": value.dtype.name}}


def value_of_config(value):
    """The value `config_value` wrote: a numpy array for `"__numpy__"` and `"__tensor__"`
    (a tensor where Keras gives one, which tracer's ops take as they take arrays)."""
    if isinstance(value, dict) and value.get("class_name") in ("__numpy__", "__tensor__"):
        config = value.get("config") or {}
        return np.asarray(config.get("value"), dtype=config.get("dtype"))
    return value
