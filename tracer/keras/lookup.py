"""The last step of Keras's `get(identifier)` lookups, shared by losses and initializers."""


def instance_or_callable(found, identifier, names, kind):
    """`found` (what `identifier` named) as Keras returns it: a class instantiated with its
    defaults, a callable as is; anything else is a ValueError listing the known `names`."""
    if isinstance(found, type):
        return found()
    if callable(found):
        return found
    listed = ", ".join(repr(name) for name in names)
    raise ValueError(f"unknown {kind} {identifier!r}; use a callable, None or one of {listed}")
