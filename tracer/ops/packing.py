"""TensorFlow's auto-packing: a nested list or tuple that holds tensors, as an op argument
or given to `tt.convert_to_tensor`, becomes one tensor computed from them, so gradients
flow through it (a rotation matrix written `[[c, -s], [s, c]]`).

    >>> c = tt.cos(x)
    >>> tt.convert_to_tensor([[1.0, 0.0], [0.0, c]])   # stack of the leaves, reshaped

The dtype is that of the first tensor found (depth first), as in TensorFlow; Python numbers
are converted to it, and a tensor of another dtype is an error. A requested dtype that
differs is reached with a cast of the packed tensor (TensorFlow converts through numpy
there, losing the gradient). A regular nesting (every list of a level as long, the leaves
at one depth) is one stack of its leaves and a reshape; an irregular one is stacked level
by level. `tt.constant` does not pack: it makes a constant, as in TensorFlow.
"""

from tracer.dtypes import as_dtype
from tracer.ops.array_ops import cast, reshape
from tracer.ops.structure_ops import stack
from tracer.tensor import Tensor, _from_python, holds_tensors, is_tensor_like, register_packing


def pack(value, dtype=None):
    """One tensor for the nested list or tuple `value`, which holds tensors or Variables."""
    found = _first_dtype(value)
    target = found if dtype is None else as_dtype(dtype)
    regular = _regular_leaves(value)
    if regular is not None:
        leaves, outer = regular
        parts = _converted(leaves, found, target)
        _check_shapes(parts, leaves, "leaf")
        packed = stack(parts)
        if len(outer) > 1:
            packed = reshape(packed, outer + parts[0].shape)
        return packed
    return _pack_levels(value, found, target)


def _pack_levels(value, found, target):
    parts = []
    for item in value:
        if isinstance(item, (list, tuple)) and holds_tensors(item):
            parts.append(_pack_levels(item, found, target))
        else:
            parts.extend(_converted([item], found, target))
    _check_shapes(parts, value, "element")
    return stack(parts)


def _first_dtype(value):
    for item in value:
        if is_tensor_like(item):
            return item.dtype
        if isinstance(item, (list, tuple)):
            found = _first_dtype(item)
            if found is not None:
                return found
    return None


def _regular_leaves(value):
    """(leaves in order, the nesting's shape) when every list of a level has the same length
    and no leaf is a list; None otherwise."""
    outer, level = [], [value]
    while all(isinstance(v, (list, tuple)) for v in level):
        lengths = {len(v) for v in level}
        if len(lengths) != 1 or 0 in lengths:
            return None
        outer.append(lengths.pop())
        level = [item for v in level for item in v]
    if any(isinstance(v, (list, tuple)) for v in level):
        return None
    return level, tuple(outer)


def _converted(items, found, target):
    """Tensors for the leaves or constant sublists `items`, of dtype `target`."""
    parts = []
    for item in items:
        if is_tensor_like(item):
            tensor = item._read()
            if tensor.dtype != found:
                raise TypeError(
                    f"cannot pack a list holding tensors of dtypes {found.name} and "
                    f"{tensor.dtype.name} into one tensor; cast them to one dtype first"
                )
            parts.append(tensor if target == found else cast(tensor, target))
        elif item is None or isinstance(item, str):
            raise TypeError(f"cannot pack {item!r} into a tensor of dtype {target.name}")
        else:
            parts.append(Tensor(_from_python(item, target)))
    return parts


def _check_shapes(parts, items, word):
    first = parts[0].shape
    for k, part in enumerate(parts):
        if part.shape != first:
            raise ValueError(
                f"cannot pack a list into one tensor: its {word} 0 has shape {first} and "
                f"its {word} {k} ({_describe(items[k])}) has shape {part.shape}; the "
                "elements of each level must have one shape"
            )


def _describe(item):
    if is_tensor_like(item):
        return f"a {item.dtype.name} tensor"
    return "a list" if isinstance(item, (list, tuple)) else repr(item)


register_packing(pack)
