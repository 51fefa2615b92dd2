"""Common-subexpression elimination: nodes with the same op, inputs and attributes are one.

    %1 = sin %0
    %2 = sin %0          =>    %1 = sin %0
    %3 = mul %1, %2            %3 = mul %1, %1

Constants with equal values merge too. Inputs and variables never merge.
"""

from tracer.ir.graph import attribute_key
from tracer.ir.rewrite import rebuild


def eliminate_common_subexpressions(graph):
    seen = {}

    def canonical(node):
        if node.op in ("input", "variable") or (node.op == "const" and "value" not in node.attrs):
            return node
        key = (
            node.op,
            tuple(id(i) for i in node.inputs),
            tuple(sorted((k, attribute_key(v)) for k, v in node.attrs.items())),
            node.shape,
            node.dtype,
        )
        return seen.setdefault(key, node)

    return rebuild(graph, canonical)
