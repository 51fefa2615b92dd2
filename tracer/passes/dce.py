"""Dead-code elimination: drop every node no output depends on, and the results of
several-result nodes that nothing reads.

    %1 = sin %0
    %2 = exp %0        (unused)    =>    %1 = sin %0
    return %1                            return %1

A node of several results whose op can `narrow` (a while loop keeps the states of every
iteration for its gradient) is made without the results no `get` reads, and the `get`s
renumbered. Invariants: inputs are kept, even unused ones (they are the calling
convention); order is topological.
"""

from tracer.ir import Node
from tracer.ir.rewrite import on_new_inputs, with_outputs
from tracer.ops.registry import OPS


def eliminate_dead_code(graph):
    graph = with_outputs(graph.inputs, graph.outputs)
    read = {}  # id(node of several results) -> the indices its gets take
    for node in graph.nodes:
        if node.op == "get":
            read.setdefault(id(node.inputs[0]), set()).add(node.attrs["index"])
    if not any(id(node) in read and _narrows(node) for node in graph.nodes):
        return graph  # nothing to narrow: a rebuild would make the same graph again
    renumbering = {}  # id(narrowed node) -> {old index: new index}

    def narrow(original, node):  # `node`: `original` on its inputs' new nodes
        if node.op == "get":  # rebuilt on its source's new node already: renumber it
            indices = renumbering.get(id(node.inputs[0]))
            if indices is None:
                return node
            attrs = {**node.attrs, "index": indices[node.attrs["index"]]}
            return Node("get", node.inputs, attrs, node.shape, node.dtype, node.location)
        op = OPS.get(node.op)
        if op is None or op.narrow is None or id(original) not in read:
            return node
        result = op.narrow(node, read[id(original)])
        if result is None:
            return node
        narrowed, indices = result
        renumbering[id(narrowed)] = indices
        return narrowed

    # (as `rebuild`, keeping each original node: a loop that reads a narrowed loop's results
    # is rebuilt on its new inputs before it is narrowed itself, as a gradient's loop is)
    mapping = {}
    for node in graph.nodes:
        mapping[id(node)] = narrow(node, on_new_inputs(node, mapping))
    return with_outputs(graph.inputs, [mapping.get(id(o), o) for o in graph.outputs])


def _narrows(node):
    op = OPS.get(node.op)
    return op is not None and op.narrow is not None
