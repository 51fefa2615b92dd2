"""Lists, tuples and dicts of gradients or data, walked leaf by leaf: unlike tracer.nest,
an IndexedSlices is one leaf here (a gradient to gather, not its two tensors)."""


def leaves(structure):
    """The leaves of nested lists, tuples and dicts (dicts in sorted key order)."""
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in leaves(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in leaves(item)]
    return [structure]


def rebuilt(structure, new_leaves):
    """`structure` with its leaves replaced, in order, by the items of the iterator
    `new_leaves`."""
    if isinstance(structure, dict):
        values = {key: rebuilt(structure[key], new_leaves) for key in sorted(structure)}
        return type(structure)((key, values[key]) for key in structure)
    if isinstance(structure, (list, tuple)):
        items = [rebuilt(item, new_leaves) for item in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else type(structure)(items)
    return next(new_leaves)
