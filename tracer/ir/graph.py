"""The IR: a flat graph of single-output nodes in topological order.

A `Node` is one value: the op that makes it, its input nodes, hashable attributes, its
static shape and dtype, and the user's source line that created it. A `Graph` lists the
nodes in an order where every input comes before its uses, names which of them are the
graph's inputs and which its outputs. Nodes carry no numbers; ids like `%3` are given
only when a graph is printed.

Leaf ops (no inputs): `input` (a graph parameter, `name` attribute), `variable`
(a captured `tt.Variable`), `const` (a literal `value`, or a value the graph does not
hold, printed without it).
"""

from tracer.ir.printer import format_graph

LEAF_OPS = frozenset({"input", "variable", "const"})


class Node:
    __slots__ = ("op", "inputs", "attrs", "shape", "dtype", "location", "__weakref__")

    def __init__(self, op, inputs, attrs, shape, dtype, location=None):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.shape = shape
        self.dtype = dtype
        self.location = location

    def __repr__(self):
        shape = ",".join(map(str, self.shape))
        return f"<Node {self.op} {self.dtype.short_name}[{shape}]>"


class GraphAttribute:
    """A graph used as a node attribute (a fused body, a called function): hashable and
    comparable by its printed text, so equal graphs make equal nodes."""

    __slots__ = ("graph", "name", "_key")

    def __init__(self, graph, name):
        self.graph = graph
        self.name = name
        self._key = format_graph(graph)

    def __eq__(self, other):
        return type(other) is type(self) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return self.name


class Graph:
    """An immutable graph: `nodes` in topological order, with `inputs` and `outputs` among them."""

    __slots__ = ("inputs", "nodes", "outputs")

    def __init__(self, inputs, nodes, outputs):
        self.inputs = tuple(inputs)
        self.nodes = tuple(nodes)
        self.outputs = tuple(outputs)

    def __repr__(self):
        return format_graph(self)


def topological_closure(outputs):
    """Every node the `outputs` depend on, in topological order (inputs first)."""
    order, seen, stack = [], set(), [(node, False) for node in reversed(outputs)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((inp, False) for inp in reversed(node.inputs) if id(inp) not in seen)
    return order
