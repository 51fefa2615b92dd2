"""What Keras's lookups share: the last step of `get(identifier)` (losses, initializers,
regularizers, constraints) and the config methods of the objects they return."""


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
