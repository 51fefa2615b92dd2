"""Batching rules: how each op runs on a batch of values at once (for vectorized jacobians).

An op's record gives `batch(node, args, flags, size)`: `args` are the node's inputs as
symbolic Tensors, those marked in `flags` with a leading batch axis of `size`; it returns
the node's value for the whole batch, with that leading axis, or raises NotVectorizable.
Elementwise ops without a rule of their own use `elementwise`; `tracer/passes/vectorize.py`
applies the rules.
"""

from tracer.ops import array_ops
from tracer.ops.core import apply
from tracer.ops.registry import OPS


def aligned(node, args, flags):
    """Batched operands reshaped to (B,) + (1,) * k + shape, with the output's rank after B, so
    that numpy broadcasting lines the batch axis up."""
    rank = len(node.shape)
    result = []
    for arg, node_input, is_batched in zip(args, node.inputs, flags):
        if is_batched and len(node_input.shape) < rank:
            pad = (1,) * (rank - len(node_input.shape))
            arg = array_ops.reshape(arg, arg.shape[:1] + pad + node_input.shape)
        result.append(arg)
    return result


def elementwise(node, args, flags, size):
    return apply(OPS[node.op], tuple(aligned(node, args, flags)), node.attrs)


def any_leading_axes(node, args, flags, size):
    """The rule of an op that works on any leading axes of its inputs alike (a softmax per
    row): the unbatched inputs broadcast along the batch axis, in front."""
    args = [
        arg if batched else apply(OPS["broadcast_to"], (arg,), {"shape": (size, *arg.shape)})
        for arg, batched in zip(args, flags)
    ]
    return apply(OPS[node.op], tuple(args), node.attrs)


def _shift(axis):
    """Axis attributes one place further right, past the batch axis."""
    return tuple(a + 1 for a in axis) if isinstance(axis, tuple) else axis + 1


def shifted_axis(name):
    """The rule of an op whose only batch-dependent attribute is the axis (or axes) `name`."""

    def rule(node, args, flags, size):
        attrs = dict(node.attrs, **{name: _shift(node.attrs[name])})
        return apply(OPS[node.op], tuple(args), attrs)

    return rule
