"""Rebuilding graphs node by node: the helper every rewriting pass uses."""

from tracer.ir.graph import Graph, Node, topological_closure


def rebuild(graph, rewrite):
    """A new graph in which each node, with its inputs already rewritten, becomes `rewrite(node)`.

    `rewrite` returns the node itself, an earlier node, or a new node; only what the outputs
    need is kept, and the inputs are kept as they are.
    """
    mapping = {}
    for node in graph.nodes:
        inputs = tuple(mapping.get(id(i), i) for i in node.inputs)
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            node_now = Node(node.op, inputs, node.attrs, node.shape, node.dtype, node.location)
        else:
            node_now = node
        mapping[id(node)] = rewrite(node_now)
    outputs = [mapping.get(id(o), o) for o in graph.outputs]
    return with_outputs(graph.inputs, outputs)


def with_outputs(inputs, outputs):
    """The graph of `outputs` over `inputs`: inputs first, then what the outputs need."""
    leaves = {id(n) for n in inputs}
    body = [n for n in topological_closure(outputs) if id(n) not in leaves]
    return Graph(inputs, list(inputs) + body, outputs)
