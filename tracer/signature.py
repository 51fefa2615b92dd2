"""Signatures of tt.function calls: the cache key of a call, and what changed between two.

A key describes the argument structure and each leaf: ("tensor", shape, dtype) for tensors
and numpy arrays, ("variable", id, shape, dtype) for variables (a different Variable object
must not reuse another's trace), and ("value", type, value) for everything else.
"""

import inspect

import numpy as np

from tracer import nest
from tracer.dtypes import as_dtype
from tracer.tensor import TensorLike
from tracer.variable import Variable


def is_tensor_argument(value):
    return (isinstance(value, TensorLike) and not isinstance(value, Variable)) or isinstance(
        value, np.ndarray
    )


def signature(args, kwargs):
    """A hashable key: the argument structure with each leaf described."""
    return _describe((args, kwargs))


def _describe(value):
    if isinstance(value, dict):
        return ("dict", tuple((k, _describe(value[k])) for k in sorted(value)))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_describe(v) for v in value))
    if isinstance(value, Variable):
        return ("variable", id(value), value.shape, value.dtype.name)
    if is_tensor_argument(value):
        return ("tensor", tuple(value.shape), as_dtype(value.dtype).name)
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"tt.function arguments must be tensors, variables or hashable values, not {type(value).__name__}"
        ) from None
    return ("value", type(value).__name__, value)


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
    if kind in ("tensor", "variable", "value"):
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
    return repr(leaf)


def argument_names(func, args, kwargs):
    """A readable name per flattened argument leaf: `x`, `xs_1`, `params_w`."""
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
        named = list(bound.arguments.items())
    except (TypeError, ValueError):
        named = [(f"arg{k}", a) for k, a in enumerate(args)] + list(kwargs.items())
    names = {}
    for name, value in named:
        _name_leaves(name, value, names)
    flat = nest.flatten((args, kwargs))
    return [names.get(id(leaf), f"arg{k}") for k, leaf in enumerate(flat)]


def _name_leaves(prefix, value, names):
    if isinstance(value, dict):
        for key in sorted(value):
            _name_leaves(f"{prefix}_{key}", value[key], names)
    elif isinstance(value, (list, tuple)):
        for k, item in enumerate(value):
            _name_leaves(f"{prefix}_{k}", item, names)
    else:
        names.setdefault(id(value), prefix)


def check_signature(specs, args):
    flat = nest.flatten(list(args))
    if len(flat) != len(specs):
        raise TypeError(
            f"the input_signature has {len(specs)} tensors, the call passes {len(flat)} arguments"
        )
    for k, (spec, value) in enumerate(zip(specs, flat)):
        shape = tuple(getattr(value, "shape", np.shape(value)))
        dtype = as_dtype(value.dtype) if hasattr(value, "dtype") else None
        if shape != spec.shape or (dtype is not None and dtype != spec.dtype):
            raise ValueError(
                f"argument {k} is {getattr(dtype, 'name', '?')}{list(shape)}, the input_signature says {spec!r}"
            )
