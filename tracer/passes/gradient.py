"""Gradient construction: one reverse sweep over a pruned forward graph.

    forward (target %2, source %0)        gradient graph
    %0: f32[] = input                      %0: f32[] = input[name='seed0']     # cotangent of %2
    %1: f32[] = sin %0                     %1: f32[] = input[name='sin.0']     # x, kept by the tape
    %2: f32[] = mul %1, %1          =>     %2: f32[] = input[name='mul.0']     # sin x, kept
                                           %3: f32[] = mul %0, %2  ... cos %1 ... add ...
                                           return %7                           # d%2/d%0

Each forward node's gradient rule is called with symbolic tensors: the cotangent of its
output, and one graph input per value the rule needs (`OpDef.saves`); the rule's tracer
ops add nodes. A map from forward node to cotangent holds what is known so far; a missing
entry means zero, so nothing is materialised for paths that carry no gradient. The
result's inputs are the seeds (one per target) and the residuals (values the forward pass
kept); whoever runs the graph binds them. Only nodes the outputs depend on are in it, so a
rule's cotangent for an input that leads to no source costs nothing at run time.
"""

from tracer.context import location_override, no_recording
from tracer.ir import Graph, Node, topological_closure
from tracer.ops import math_ops
from tracer.ops.core import graph_node_of
from tracer.ops.registry import OPS, OUT
from tracer.tensor import Tensor


class GradientGraph:
    """A gradient graph and how to feed it.

    graph.outputs are the cotangents of the sources that a target reaches, in order;
    `source_outputs[k]` is the position in graph.outputs of source k's cotangent, or None.
    `seeds[k]` is the input node for target k's cotangent (None when target k is
    unconnected); `residuals` lists (input node, position of the forward node in the
    forward graph, position in OpDef.saves). Positions rather than nodes, so that one
    gradient graph serves every forward graph of the same structure.
    """

    __slots__ = ("graph", "seeds", "residuals", "source_outputs")

    def __init__(self, graph, seeds, residuals, source_outputs):
        self.graph = graph
        self.seeds = seeds
        self.residuals = residuals
        self.source_outputs = source_outputs


def _symbolic_input(name, shape, dtype, location=None):
    return Tensor(None, Node("input", (), {"name": name}, shape, dtype, location))


def build_gradient(forward, targets, sources):
    """The gradient graph of `targets` (nodes, or None) with respect to `sources` (nodes, or None)."""
    reachable = {id(n) for n in forward.nodes}
    cotangents = {}
    seeds = []
    for k, target in enumerate(targets):
        if target is None or id(target) not in reachable:
            seeds.append(None)
            continue
        seed = _symbolic_input(f"seed{k}", target.shape, target.dtype)
        seeds.append(seed._node)
        _accumulate(cotangents, target, seed)

    position = {id(n): k for k, n in enumerate(forward.nodes)}
    residuals = []
    with no_recording():
        for node in reversed(forward.nodes):
            g = cotangents.get(id(node))
            if g is None or not node.inputs:
                continue
            op = OPS[node.op]
            saved = [_residual(node, position[id(node)], op, slot, residuals) for slot in range(len(op.saves))]
            with location_override(node.location):
                input_cotangents = op.grad(node, g, *saved)
            for inp, ct in zip(node.inputs, input_cotangents):
                if ct is not None and id(inp) in reachable:
                    _check_cotangent(node, inp, ct)
                    _accumulate(cotangents, inp, ct)

    outputs, source_outputs = [], []
    for source in sources:
        ct = cotangents.get(id(source)) if source is not None else None
        source_outputs.append(None if ct is None else len(outputs))
        if ct is not None:
            outputs.append(graph_node_of(ct))
    nodes = topological_closure(outputs)
    in_graph = {id(n) for n in nodes}
    seed_nodes = [s if s is not None and id(s) in in_graph else None for s in seeds]
    residuals = [r for r in residuals if id(r[0]) in in_graph]
    inputs = [s for s in seed_nodes if s is not None] + [r[0] for r in residuals]
    return GradientGraph(Graph(inputs, nodes, outputs), seed_nodes, residuals, source_outputs)


def _residual(node, node_position, op, slot, residuals):
    kept = op.saves[slot]
    value = node if kept == OUT else node.inputs[kept]
    tensor = _symbolic_input(f"{node.op}.{slot}", value.shape, value.dtype, node.location)
    residuals.append((tensor._node, node_position, slot))
    return tensor


def _accumulate(cotangents, node, ct):
    existing = cotangents.get(id(node))
    cotangents[id(node)] = ct if existing is None else math_ops.add(existing, ct)


def _check_cotangent(node, inp, ct):
    if ct.shape != inp.shape or ct.dtype != inp.dtype:
        raise RuntimeError(
            f"the gradient rule of {node.op} gave a {ct.dtype.name}{list(ct.shape)} cotangent "
            f"for an input of {inp.dtype.name}{list(inp.shape)}"
        )
