"""Nested structures (lists, tuples, namedtuples, dicts) flattened and rebuilt, as tf.nest does.

Dicts flatten in sorted key order, so a structure and its flat list line up the same way
every time. An object with `_tensor_components()` (a TensorArray) flattens to those
tensors and is rebuilt by its `_from_components(tensors)`.
"""


def sorted_keys(mapping):
    """The keys of a dict in order; keys that cannot be ordered are a TypeError, as tf.nest's."""
    try:
        return sorted(mapping)
    except TypeError:
        kinds = sorted({type(key).__name__ for key in mapping})
        raise TypeError(
            f"a dict in a tracer structure must have keys that sort (all str, or all numbers); "
            f"this one mixes {', '.join(kinds)}: {list(mapping)!r}"
        ) from None


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def flatten(structure):
    kind = type(structure)
    if kind is list or kind is tuple:  # the common case first: a tape's sources, targets
        return [leaf for item in structure for leaf in flatten(item)]
    if hasattr(structure, "_tensor_components"):
        return list(structure._tensor_components())
    if isinstance(structure, dict):
        return [leaf for key in sorted_keys(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure, flat):
    """`structure` with its leaves replaced, in order, by the items of `flat`."""
    try:
        return _pack(structure, iter(flat))
    except StopIteration:
        raise ValueError(
            f"the structure has more leaves than the {len(flat)} values given to pack into it"
        ) from None


def _pack(structure, leaves):
    kind = type(structure)
    if kind is list or kind is tuple:
        return kind([_pack(item, leaves) for item in structure])
    if hasattr(structure, "_tensor_components"):
        count = len(structure._tensor_components())
        return structure._from_components([next(leaves) for _ in range(count)])
    if isinstance(structure, dict):
        packed = {key: _pack(structure[key], leaves) for key in sorted_keys(structure)}
        return type(structure)((key, packed[key]) for key in structure)
    if _is_namedtuple(structure):
        return type(structure)(*[_pack(item, leaves) for item in structure])
    if isinstance(structure, (list, tuple)):
        return type(structure)([_pack(item, leaves) for item in structure])
    return next(leaves)
