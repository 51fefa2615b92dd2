"""Nested structures (lists, tuples, namedtuples, dicts) flattened and rebuilt, as tf.nest does.

Dicts flatten in sorted key order, so a structure and its flat list line up the same way
every time. An object with `_tensor_components()` (a TensorArray) flattens to those
tensors and is rebuilt by its `_from_components(tensors)`.
"""

import numpy as np


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


# types that are always leaves, taken without a call of their own (an input pipeline
# flattens each element's arrays, a tape its sources): tracer.tensor adds Tensor
_LEAF_TYPES = {np.ndarray, float, int}


def leaf_type(cls):
    """Take instances of `cls` (exactly) as leaves without a look at what they hold."""
    _LEAF_TYPES.add(cls)


def flatten(structure, expand_composites=True):
    """The leaves of `structure` in order; a composite tensor's components among them,
    unless `expand_composites` is False (then it is a leaf, as a tf.data element's
    SparseTensorSpec)."""
    kind = type(structure)
    if kind is list or kind is tuple:  # the common case first: a tape's sources, targets
        leaves = []
        for item in structure:
            if type(item) in _LEAF_TYPES:
                leaves.append(item)
            else:
                leaves.extend(flatten(item, expand_composites))
        return leaves
    if expand_composites and hasattr(structure, "_tensor_components"):
        return list(structure._tensor_components())
    if isinstance(structure, dict):
        return [
            leaf
            for key in sorted_keys(structure)
            for leaf in flatten(structure[key], expand_composites)
        ]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item, expand_composites)]
    return [structure]


def pack_sequence_as(structure, flat, expand_composites=True):
    """`structure` with its leaves replaced, in order, by the items of `flat`."""
    try:
        return _pack(structure, iter(flat), expand_composites)
    except StopIteration:
        raise ValueError(
            f"the structure has more leaves than the {len(flat)} values given to pack into it"
        ) from None


def _pack(structure, leaves, expand=True):
    kind = type(structure)
    if kind is list or kind is tuple:
        return kind(
            [
                next(leaves) if type(item) in _LEAF_TYPES else _pack(item, leaves, expand)
                for item in structure
            ]
        )
    if expand and hasattr(structure, "_tensor_components"):
        count = len(structure._tensor_components())
        return structure._from_components([next(leaves) for _ in range(count)])
    if isinstance(structure, dict):
        packed = {key: _pack(structure[key], leaves, expand) for key in sorted_keys(structure)}
        return type(structure)((key, packed[key]) for key in structure)
    if _is_namedtuple(structure):
        return type(structure)(*[_pack(item, leaves, expand) for item in structure])
    if isinstance(structure, (list, tuple)):
        return type(structure)([_pack(item, leaves, expand) for item in structure])
    return next(leaves)


def structure_difference(first, second):
    """Where two nested structures differ (None where they match), as `tf.nest`'s
    `assert_same_structure` compares them: the same containers of the same types, the same
    dict keys, the same lengths; leaves match any leaf.

    >>> structure_difference({"a": 1}, {"b": 1})
    "a dict with keys ['a'] and one with keys ['b']"
    """
    kinds = (type(first), type(second))
    containers = [
        isinstance(x, (dict, list, tuple)) or hasattr(x, "_tensor_components")
        for x in (first, second)
    ]
    if not any(containers):
        return None
    if kinds[0] is not kinds[1]:
        return f"a {kinds[0].__name__} and a {kinds[1].__name__}"
    if hasattr(first, "_tensor_components"):
        if len(first._tensor_components()) != len(second._tensor_components()):
            return f"two {kinds[0].__name__}s of different sizes"
        return None
    if isinstance(first, dict):
        if set(first) != set(second):
            return f"a dict with keys {sorted_keys(first)} and one with keys {sorted_keys(second)}"
        pairs = [(first[key], second[key]) for key in sorted_keys(first)]
    else:
        if len(first) != len(second):
            return f"a {kinds[0].__name__} of length {len(first)} and one of length {len(second)}"
        pairs = zip(first, second)
    for a, b in pairs:
        difference = structure_difference(a, b)
        if difference is not None:
            return difference
    return None


def is_nested(structure):
    """Whether `structure` is a container tf.nest walks into (a list, tuple, namedtuple or
    dict), as `tf.nest.is_nested`."""
    return isinstance(structure, (list, tuple, dict))


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """ValueError where two structures differ (TypeError where only their container types
    do, as tf.nest's); with `check_types=False`, a list and a tuple of one length match."""
    difference = structure_difference(nest1, nest2)
    if difference is None:
        return
    if not check_types and len(flatten(nest1, expand_composites)) == len(
        flatten(nest2, expand_composites)
    ):
        return
    kind = TypeError if difference.startswith("a ") and " and a " in difference else ValueError
    raise kind(f"The two structures don't have the same nested structure: {difference}")


def map_structure(func, *structure, check_types=True, expand_composites=False):
    """`func` applied to the leaves of the structures, position by position, packed as the
    first structure, as `tf.nest.map_structure` does; the structures must match
    (`assert_same_structure`).

    >>> map_structure(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)})
    {'x': 11, 'y': (22, 33)}
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func!r}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types, expand_composites)
    leaves = [flatten(s, expand_composites) for s in structure]
    mapped = [func(*items) for items in zip(*leaves)]
    return pack_sequence_as(structure[0], mapped, expand_composites)
