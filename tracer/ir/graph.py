"""The IR: a flat graph of nodes in topological order.

A `Node` is one value: the op that makes it, its input nodes, hashable attributes, its
static shape and dtype, and the user's source line that created it. A node of several
results (a loop's) has a `TupleType`, and `get` nodes take its results out. Structured
ops (cond, while) hold the graphs they run as `Subgraph` attributes. A `Graph` lists the
nodes in an order where every input comes before its uses, names which of them are the
graph's inputs and which its outputs. Nodes carry no numbers; ids like `%3` are given
only when a graph is printed.

Leaf ops (no inputs): `input` (a graph parameter, `name` attribute), `variable`
(a captured `tt.Variable`), `const` (a literal `value`, or a value the graph does not
hold, printed without it).
"""

import numpy as np

from tracer.ir.printer import format_graph

LEAF_OPS = frozenset({"input", "variable", "const"})


def _keep_tracked(node):
    """The hook until one is installed: Python's collector walks every node."""


_node_made = _keep_tracked


def on_node_made(hook):
    """Call `hook(node)` at the end of every `Node.__init__` from now on.

    The front end installs the collector's untracking here (`tracer.collector.untrack_with`),
    so that the IR imports nothing of the front end.
    """
    global _node_made
    _node_made = hook


class Node:
    __slots__ = ("op", "inputs", "attrs", "shape", "dtype", "location", "__weakref__")

    def __init__(self, op, inputs, attrs, shape, dtype, location=None):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        # a plain tuple (an eager tensor's `.shape` is a TensorShape, which digests refuse)
        self.shape = shape if type(shape) is tuple else tuple(shape)
        self.dtype = dtype
        self.location = location
        # NOTE: never changed after this: the collector may stop walking it (tracer/collector.py)
        _node_made(self)

    def __repr__(self):
        if getattr(self.dtype, "is_tuple", False):
            return f"<Node {self.op} {self.dtype.short_name}>"
        shape = ",".join(map(str, self.shape))
        return f"<Node {self.op} {self.dtype.short_name}[{shape}]>"


class TupleType:
    """The type of a node with several results (a while loop: its loop variables, its count of
    iterations...): each result's (shape, dtype). Such a node's shape is (); `get` nodes
    project its results out, and they are what other nodes read."""

    __slots__ = ("parts",)
    name = "tuple"
    is_floating = is_integer = is_complex = is_bool = is_string = False
    is_differentiable = True  # a tape records it; its results say which carry gradients
    is_tuple = True

    def __init__(self, parts):
        self.parts = tuple((tuple(shape), dtype) for shape, dtype in parts)

    @property
    def short_name(self):
        return (
            "(" + ", ".join(f"{d.short_name}[{','.join(map(str, s))}]" for s, d in self.parts) + ")"
        )

    def __eq__(self, other):
        return isinstance(other, TupleType) and self.parts == other.parts

    def __hash__(self):
        return hash(self.parts)

    def __repr__(self):
        return self.short_name


class GraphAttribute:
    """A graph used as a node attribute (a fused body, a branch, a called function): hashable
    and comparable by its structure (`structure_key`), so equal graphs make equal nodes.
    `shown`: the printer writes the graph under the node."""

    __slots__ = ("graph", "name", "_key", "_hash", "symbols")
    shown = False

    def __init__(self, graph, name):
        self.graph = graph
        self.name = name
        self._key = structure_key(graph)
        self._hash = hash(self._key)  # a tuple does not keep its hash, and nodes ask often
        self.symbols = None  # the unknown dimensions its graph mentions (rewrite.symbols)

    def with_graph(self, graph):
        """The same attribute holding `graph` instead."""
        return type(self)(graph, self.name)

    def __eq__(self, other):
        return type(other) is type(self) and self._hash == other._hash and self._key == other._key

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return self.name


class Subgraph(GraphAttribute):
    """A graph a structured op runs (a branch of a cond, the body of a loop): a program of its
    own, which the pass pipeline optimizes with the graph that holds it."""

    __slots__ = ()
    shown = True


class Graph:
    """An immutable graph: `nodes` in topological order, with `inputs` and `outputs` among them."""

    __slots__ = ("inputs", "nodes", "outputs")

    def __init__(self, inputs, nodes, outputs):
        self.inputs = tuple(inputs)
        self.nodes = tuple(nodes)
        self.outputs = tuple(outputs)

    def __repr__(self):
        return format_graph(self)


def attribute_key(value):
    """A node attribute as nodes and graphs compare it: a float by its type and digits too,
    since -0.0 == 0.0 (and 1.0 == 1) in Python but not in what a kernel computes with it."""
    if type(value) is tuple:
        return tuple(attribute_key(v) for v in value)
    if isinstance(value, (float, complex, np.floating, np.complexfloating)):
        return type(value), repr(value)
    return value


def structure_key(graph):
    """A hashable value that two graphs share when they compute the same thing the same way:
    each node's op, attributes, input positions, type and source line, in order, and the
    positions of the outputs. A value read from outside the nodes (as the printer declares
    a `const` line for it) counts by its type, or by its value where it holds one.
    Attributes compare as common-subexpression elimination compares them (`attribute_key`):
    unlike the printed text, which shortens a long constant, two different constants never
    match."""
    positions, entries = {}, []

    def position(node):
        if node not in positions:  # from outside the nodes
            entries.append(("outside", node.attrs.get("value"), node.shape, node.dtype))
            positions[node] = len(positions)
        return positions[node]

    for node in graph.nodes:
        inputs = tuple(position(i) for i in node.inputs)
        attrs = tuple((k, attribute_key(v)) for k, v in node.attrs.items())
        entries.append((node.op, inputs, attrs, node.shape, node.dtype, node.location))
        positions[node] = len(positions)
    outputs = tuple(position(o) for o in graph.outputs)
    return tuple(entries), outputs


def all_nodes(graph, seen=None):
    """Every node of `graph` and of the graphs its nodes hold (fused bodies, branches, loop
    bodies), outer nodes before the nodes they hold; a held graph that several nodes share
    (the kernel of an unrolled loop's steps) once."""
    seen = set() if seen is None else seen
    for node in graph.nodes:
        yield node
        for value in node.attrs.values():
            if isinstance(value, GraphAttribute) and id(value) not in seen:
                seen.add(id(value))  # the object: equal graphs have nodes of their own
                yield from all_nodes(value.graph, seen)


def holds_strings(graph):
    """Whether a value of `graph`, or of a graph it holds, is a tt.string tensor (a loop's
    or a branch's results included)."""
    for node in all_nodes(graph):
        parts = node.dtype.parts if node.dtype.is_tuple else (((), node.dtype),)
        if any(dtype.is_string for _, dtype in parts):
            return True
    return False


# the C op path's walk of topological_closure's plain case (`order_with`), where it is built
_order_in_c = None


def order_with(function):
    """From now on, `function(outputs)` (tracer/ops/fast_apply.c's `topological_order`: the
    walk below, in C, or None where it cannot read a node) walks topological_closure's
    graphs that have neither `expand` nor `inputs`: a gradient graph's (10^5 nodes for an
    unrolled loop's), a trace's. The front end installs it, as `on_node_made`'s hook."""
    global _order_in_c
    _order_in_c = function


def topological_closure(outputs, expand=None, inputs=None):
    """Every node the `outputs` depend on, in topological order (inputs first). With
    `expand`, the inputs of a node are followed only where `expand(node)` holds; with
    `inputs`, a node's inputs are `inputs(node)` instead of `node.inputs`."""
    if expand is None and inputs is None and _order_in_c is not None:
        order = _order_in_c(outputs)
        if order is not None:
            return order
    return _closure_in_python(outputs, expand, inputs)


def _closure_in_python(outputs, expand=None, inputs=None):
    """topological_closure's walk: the definition of the C one."""
    # NOTE: a depth-first walk with the stack holding nodes alone (no tuple per step: the
    # passes walk graphs of 10^5 nodes). A node popped while `pending` holds it is its own
    # entry to be emitted, pushed below its inputs when it was expanded: an entry that
    # visits it again can only lie further down, pushed before it was seen. The sets hold
    # the nodes themselves (hashed by identity), not id()s: no int made per lookup.
    order, seen, pending, stack = [], set(), set(), list(reversed(outputs))
    while stack:
        node = stack.pop()
        if node in pending:
            pending.remove(node)
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        if expand is not None and not expand(node):
            order.append(node)
            continue
        pending.add(node)
        stack.append(node)
        read = node.inputs if inputs is None else inputs(node)
        stack.extend(inp for inp in reversed(read) if inp not in seen)
    return order
