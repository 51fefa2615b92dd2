"""Running gradients for a tape: prune, build the gradient graph, execute it through the op path.

Execution goes through `apply`, the path every op takes, so an outer tape that tracks the
values involved records the gradient computation, and higher orders follow.
"""

import collections

import numpy as np

from runtime.interpreter import run_graph
from tracer.context import state
from tracer.events import TapeEvents
from tracer.ir import Graph
from tracer.ops.core import apply
from tracer.ops.registry import OPS
from tracer.indexed_slices import IndexedSlices
from tracer.passes.gradient import SparseOutput, build_gradient
from tracer.passes.prune import prune
from tracer.tensor import Tensor


class Recording:
    """What one tape holds: recorded nodes in order, the values their gradient rules need,
    the watched leaves, and the set of nodes it tracks (watched or recorded)."""

    __slots__ = ("nodes", "saved", "tracked", "watched", "variables", "events")

    def __init__(self):
        self.nodes = []
        self.saved = {}  # id(node) -> tensors its gradient rule needs
        self.tracked = set()  # ids of nodes whose gradients this tape can compute
        self.watched = []  # input and variable nodes, in order of watching
        self.variables = {}  # Variable._unique_id -> Variable
        self.events = TapeEvents()  # what tape.explain needs beyond the graph

    def record(self, node, saved):
        if id(node) not in self.tracked:
            self.tracked.add(id(node))
            self.nodes.append(node)
        self.saved[id(node)] = saved

    def watch_node(self, node):
        if id(node) not in self.tracked:
            self.tracked.add(id(node))
            self.watched.append(node)

    def graph(self):
        return Graph(self.watched, self.watched + self.nodes, ())

    def tracked_node(self, tensor):
        """The node of `tensor` if this tape can differentiate with respect to it, else None."""
        node = tensor._node
        return node if node is not None and id(node) in self.tracked else None


class PreparedGradient:
    """A gradient graph together with the forward nodes whose saved values feed it."""

    __slots__ = ("grad", "forward_nodes")

    def __init__(self, grad, forward_nodes):
        self.grad = grad
        self.forward_nodes = forward_nodes

    @property
    def source_outputs(self):
        return self.grad.source_outputs


_CACHE_SIZE = 256
_gradient_cache = collections.OrderedDict()


def gradient_graph(recording, target_nodes, source_nodes):
    """Prune the tape to the paths from sources to targets, and build (or reuse) its gradient graph.

    Building runs every gradient rule symbolically; a training loop records the same
    structure every step, so graphs are cached by `structure_key`.
    """
    pruned = prune(recording.graph(), [s for s in source_nodes if s is not None],
                   [t for t in target_nodes if t is not None])
    key = structure_key(pruned, target_nodes, source_nodes)
    grad = _gradient_cache.get(key)
    if grad is None:
        grad = build_gradient(pruned, target_nodes, source_nodes)
        _gradient_cache[key] = grad
        if len(_gradient_cache) > _CACHE_SIZE:
            _gradient_cache.popitem(last=False)
    else:
        _gradient_cache.move_to_end(key)
    if state.trace is not None:
        state.trace.gradient_graphs.append(grad.graph)
    return PreparedGradient(grad, pruned.nodes)


def structure_key(graph, target_nodes, source_nodes):
    """Everything about a pruned forward graph that its gradient graph depends on.

    Ops, attributes, wiring, shapes, dtypes and source lines of its nodes; the shapes and
    dtypes of the values it reads from outside; and where the targets and sources sit.
    """
    position = {}
    parts = []
    for node in graph.nodes:
        inputs = tuple(
            position[id(i)] if id(i) in position else (i.shape, i.dtype.name) for i in node.inputs
        )
        attrs = tuple(node.attrs.items())
        parts.append((node.op, inputs, attrs, node.shape, node.dtype.name, node.location))
        position[id(node)] = len(position)
    targets = tuple(None if t is None else position.get(id(t)) for t in target_nodes)
    sources = tuple(None if s is None else position.get(id(s)) for s in source_nodes)
    return tuple(parts), targets, sources


def run_gradient(recording, prepared, seed_values):
    """Execute a prepared gradient graph with the tape's saved values and the given seeds.

    Returns one Tensor (or None, when unconnected) per source.
    """
    grad = prepared.grad
    bindings = {}
    for node, value in zip(grad.seeds, seed_values):
        if node is not None:
            bindings[id(node)] = value
    for node, forward_position, slot in grad.residuals:
        forward = prepared.forward_nodes[forward_position]
        bindings[id(node)] = recording.saved[id(forward)][slot]
    saved_location = state.location
    try:
        values = run_graph(grad.graph, bindings, _apply_node)
    finally:
        state.location = saved_location
    return [_source_gradient(k, values) for k in grad.source_outputs]


def _source_gradient(output, values):
    if output is None:
        return None
    if isinstance(output, SparseOutput):
        return IndexedSlices(values[output.values], values[output.indices], output.dense_shape)
    return values[output]


def execute_graph(graph, inputs):
    """Run `graph` on Tensors through the normal op path (so tapes record it); outputs as Tensors."""
    bindings = {id(node): value for node, value in zip(graph.inputs, inputs)}
    saved_location = state.location
    try:
        return run_graph(graph, bindings, _apply_node)
    finally:
        state.location = saved_location


def _apply_node(node, args):
    if node.op == "const":
        return Tensor(node.attrs["value"].array)
    state.location = node.location
    return apply(OPS[node.op], tuple(args), node.attrs)


def ones_seed(target):
    return Tensor(np.ones(target.shape, dtype=target.dtype.as_numpy_dtype))
