"""Running gradients for a tape: prune, build the gradient graph, execute it through the op path.

Execution goes through `apply`, the path every op takes, so an outer tape that tracks the
values involved records the gradient computation, and higher orders follow.
"""

import numpy as np

from runtime.interpreter import run_graph
from tracer.context import state
from tracer.ir import Graph
from tracer.ops.core import apply
from tracer.ops.registry import OPS
from tracer.passes.gradient import build_gradient
from tracer.passes.prune import prune
from tracer.tensor import Tensor


class Recording:
    """What one tape holds: recorded nodes in order, the values their gradient rules need,
    the watched leaves, and the set of nodes it tracks (watched or recorded)."""

    __slots__ = ("nodes", "saved", "tracked", "watched", "variables")

    def __init__(self):
        self.nodes = []
        self.saved = {}  # id(node) -> tensors its gradient rule needs
        self.tracked = set()  # ids of nodes whose gradients this tape can compute
        self.watched = []  # input and variable nodes, in order of watching
        self.variables = {}  # Variable._unique_id -> Variable

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


def gradient_graph(recording, target_nodes, source_nodes):
    pruned = prune(recording.graph(), [s for s in source_nodes if s is not None],
                   [t for t in target_nodes if t is not None])
    return build_gradient(pruned, target_nodes, source_nodes)


def run_gradient(recording, grad, seed_values):
    """Execute gradient graph `grad` with the tape's saved values and the given seeds.

    Returns one Tensor (or None, when unconnected) per source.
    """
    bindings = {}
    for node, value in zip(grad.seeds, seed_values):
        if node is not None:
            bindings[id(node)] = value
    for node, forward, slot in grad.residuals:
        bindings[id(node)] = recording.saved[id(forward)][slot]
    saved_location = state.location
    try:
        values = run_graph(grad.graph, bindings, _apply_node)
    finally:
        state.location = saved_location
    return [None if k is None else values[k] for k in grad.source_outputs]


def _apply_node(node, args):
    if node.op == "const":
        return Tensor(node.attrs["value"].array)
    state.location = node.location
    return apply(OPS[node.op], tuple(args), node.attrs)


def ones_seed(target):
    return Tensor(np.ones(target.shape, dtype=target.dtype.as_numpy_dtype))
