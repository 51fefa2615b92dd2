"""The verifier: a graph is well formed, or a clear error says where it is not.

Checks: every node's inputs come before it; every output is in the graph; every input is
a leaf; each node's shape and dtype are what its op's rule computes from its inputs; and
the same of every graph a node holds.
"""

from tracer.ir import LEAF_OPS, GraphAttribute
from tracer.ops.registry import OPS


class VerificationError(Exception):
    """A graph broke an invariant: a pass has a bug."""


def verify(graph):
    defined = set()
    for node in graph.inputs:
        if node.op not in LEAF_OPS:
            raise VerificationError(f"graph input {node!r} is not a leaf")
    for node in graph.nodes:
        for inp in node.inputs:
            if id(inp) not in defined:
                raise VerificationError(f"{node!r} uses {inp!r} before it is defined")
        for value in node.attrs.values():
            if isinstance(value, GraphAttribute):
                verify(value.graph)
        if node.op not in LEAF_OPS:
            shape, dtype = OPS[node.op].infer(node.attrs, *node.inputs)
            if shape != node.shape or dtype != node.dtype:
                raise VerificationError(
                    f"{node!r}: its rule gives {dtype.name}{list(shape)}, the node says "
                    f"{node.dtype.name}{list(node.shape)}"
                )
        defined.add(id(node))
    for out in graph.outputs:
        if id(out) not in defined:
            raise VerificationError(f"output {out!r} is not in the graph")
