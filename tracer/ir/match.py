"""Small questions and constructors that rewrite rules ask of nodes (each op's `simplify`).

A rule takes a node whose inputs are already simplified and returns a replacement node, or
None to keep it. A replacement must have the node's shape and dtype (`same` checks).
"""

import numpy as np

from tracer.ir.graph import Node
from tracer.ir.literal import Literal


def literal(node):
    """The numpy value of a `const` node that holds one, else None."""
    value = node.attrs.get("value") if node.op == "const" else None
    return value.array if isinstance(value, Literal) else None


def is_constant(node, number):
    """Whether `node` is a constant whose every element equals `number`."""
    value = literal(node)
    return value is not None and value.size > 0 and bool(np.all(value == number))


def same(node, candidate):
    """`candidate` if it has the shape and dtype of `node`, else None."""
    return candidate if candidate.shape == node.shape and candidate.dtype == node.dtype else None


def derived(node, op, inputs, result_shape, **attrs):
    """A new node of shape `result_shape` at `node`'s place (its dtype and source line)."""
    return Node(op, tuple(inputs), attrs, tuple(result_shape), node.dtype, node.location)
