"""Rebuilding graphs node by node: the helpers every rewriting pass uses."""

from tracer.ir import dims
from tracer.ir.graph import Graph, GraphAttribute, Node, all_nodes, topological_closure


def rebuild(graph, rewrite):
    """A new graph in which each node, with its inputs already rewritten, becomes `rewrite(node)`.

    `rewrite` returns the node itself, an earlier node, or a new node; only what the outputs
    need is kept, and the inputs are kept as they are.
    """
    mapping = {}
    for node in graph.nodes:
        mapping[id(node)] = rewrite(on_new_inputs(node, mapping))
    outputs = [mapping.get(id(o), o) for o in graph.outputs]
    return with_outputs(graph.inputs, outputs)


def bypassed(graph, op):
    """`graph` without its `op` nodes, in the graphs its nodes hold too: each replaced by its
    first input (for an effect whose result is a token, as `print`'s)."""
    if not any(node.op == op for node in all_nodes(graph)):
        return graph

    def held(value):
        if not isinstance(value, GraphAttribute):
            return value
        inner = bypassed(value.graph, op)
        return value if inner is value.graph else value.with_graph(inner)

    def rewrite(node):
        if node.op == op:
            return node.inputs[0]
        attrs = {k: held(v) for k, v in node.attrs.items()}
        if all(attrs[k] is v for k, v in node.attrs.items()):
            return node
        return Node(node.op, node.inputs, attrs, node.shape, node.dtype, node.location)

    return rebuild(graph, rewrite)


def substitute(graph, replacements):
    """The outputs of `graph` with the nodes in `replacements` (id(node) -> node) replaced,
    and every node that reads a replaced one rebuilt on its replacement."""
    mapping = dict(replacements)
    for node in graph.nodes:
        if id(node) not in mapping:
            mapping[id(node)] = on_new_inputs(node, mapping)
    return [mapping.get(id(o), o) for o in graph.outputs]


def readers(graph):
    """{id(node): how many places read it}: each input of each node, and each output of the
    graph (read outside it). A rewrite that absorbs a node into its one reader asks for 1."""
    counts = {}
    for node in graph.nodes:
        for i in node.inputs:
            counts[id(i)] = counts.get(id(i), 0) + 1
    for o in graph.outputs:
        counts[id(o)] = counts.get(id(o), 0) + 1
    return counts


def on_new_inputs(node, mapping):
    """`node`, or a copy of it reading the nodes `mapping` gives for its inputs."""
    inputs = tuple(mapping.get(id(i), i) for i in node.inputs)
    if all(a is b for a, b in zip(inputs, node.inputs)):
        return node
    return Node(node.op, inputs, node.attrs, node.shape, node.dtype, node.location)


def with_outputs(inputs, outputs):
    """The graph of `outputs` over `inputs`: inputs first, then what the outputs need."""
    leaves = {id(n) for n in inputs}
    body = [n for n in topological_closure(outputs) if id(n) not in leaves]
    return Graph(inputs, list(inputs) + body, outputs)


def specialize(graph, env):
    """`graph` with its unknown dimensions given values (`env`: {symbol: int}): every shape
    (a tuple-valued node's results' too) and attribute evaluated, fused bodies included."""
    mapping = {}
    for node in graph.nodes:
        inputs = tuple(mapping[id(i)] for i in node.inputs)
        attrs = {k: _specialized(v, env) for k, v in node.attrs.items()}
        shape = dims.substitute(node.shape, env)
        dtype = node.dtype
        if getattr(dtype, "is_tuple", False):  # its results' shapes too
            dtype = type(dtype)([(dims.substitute(s, env), d) for s, d in dtype.parts])
        mapping[id(node)] = Node(node.op, inputs, attrs, shape, dtype, node.location)
    return Graph(
        [mapping[id(n)] for n in graph.inputs],
        [mapping[id(n)] for n in graph.nodes],
        [mapping[id(n)] for n in graph.outputs],
    )


def _specialized(value, env):
    if isinstance(value, GraphAttribute):
        return type(value)(specialize(value.graph, env), value.name)
    return dims.substitute(value, env)


def symbols(graph):
    """The unknown dimensions `graph` mentions (shapes, attributes, fused bodies), sorted."""
    return sorted(_symbols(graph), key=dims.symbol_order)


def _symbols(graph):
    found = set()
    for node in graph.nodes:
        found |= dims.symbols_of(node.shape)
        for value in node.attrs.values():
            if isinstance(value, GraphAttribute):  # its graph's, found once for all callers
                if value.symbols is None:
                    value.symbols = frozenset(_symbols(value.graph))
                found |= value.symbols
            else:
                found |= dims.symbols_of(value)
    return found
