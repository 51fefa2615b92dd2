"""`tt.gradients`: TensorFlow's graph-mode gradient, from the ops of the graph being built.

Where a tape differentiates what it recorded, `gradients(ys, xs)` differentiates the ops
that a traced function (or a TensorFlow 1 graph) has built so far: the graph from `xs` to
`ys` is pruned, its gradient graph built by the same rules as a tape's, and run through the
op path, so its nodes join the graph (and a tape recording them differentiates them again).
As in TensorFlow it needs a graph: eagerly there is nothing recorded to differentiate.
"""

from tracer import nest
from tracer.context import state
from tracer.ir import Graph, topological_closure
from tracer.ops import array_ops
from tracer.ops.core import execute_graph, graph_node_of
from tracer.passes.gradient import build_gradient, residual_node
from tracer.passes.prune import prune
from tracer.tape import UnconnectedGradients
from tracer.tensor import Tensor, TensorLike, convert_to_tensor
from tracer.variable import Variable


def gradients(
    ys,
    xs,
    grad_ys=None,
    name="gradients",
    gate_gradients=False,
    aggregation_method=None,
    stop_gradients=None,
    unconnected_gradients=UnconnectedGradients.NONE,
):
    """The sum of the gradients of `ys` with respect to each of `xs`, a list with one entry
    per x (None where no y depends on it, or zeros with `unconnected_gradients="zero"`);
    `grad_ys` weighs each y (ones by default)."""
    if state.trace is None:
        raise RuntimeError(
            "tt.gradients is not supported when eager execution is enabled. Use "
            "tt.GradientTape instead (or call it inside a tt.function or a tt.compat.v1 graph)."
        )
    if stop_gradients is not None:
        raise NotImplementedError(
            "tt.gradients(stop_gradients=...) is not supported: wrap those tensors in "
            "tt.stop_gradient where they are computed"
        )
    unconnected = UnconnectedGradients(unconnected_gradients)
    targets = [convert_to_tensor(y) for y in nest.flatten(ys)]
    sources = [_read(x) for x in nest.flatten(xs)]
    seeds = _seeds(targets, grad_ys)
    target_nodes = [graph_node_of(t) for t in targets]
    source_nodes = [graph_node_of(s) for s in sources]
    # no leaves: prune makes the sources inputs, but for those computed from another source,
    # which stay nodes that the other's gradient passes through
    forward = Graph([], topological_closure(target_nodes), target_nodes)
    pruned = prune(forward, source_nodes, target_nodes)
    grad = build_gradient(pruned, target_nodes, source_nodes, sparse=False)
    inputs = [seed for seed, node in zip(seeds, grad.seeds) if node is not None]
    inputs += [Tensor(None, residual_node(pruned, p, slot)) for _, p, slot in grad.residuals]
    values = execute_graph(grad.graph, inputs)
    results = []
    for source, position in zip(sources, grad.source_outputs):
        if position is not None:
            results.append(values[position])
        elif unconnected is UnconnectedGradients.ZERO:
            results.append(array_ops.zeros(source.shape, source.dtype))
        else:
            results.append(None)
    return results


def _read(x):
    if isinstance(x, Variable):
        return x._read()
    if not isinstance(x, TensorLike):
        raise TypeError(f"tt.gradients: xs must be tensors or variables, got {type(x).__name__}")
    return x


def _seeds(targets, grad_ys):
    if grad_ys is None:
        return [array_ops.ones_like(t) for t in targets]
    given = nest.flatten(grad_ys)
    if len(given) != len(targets):
        raise ValueError(f"Passed {len(given)} grad_ys for {len(targets)} ys")
    seeds = []
    for target, g in zip(targets, given):
        if g is None:
            seeds.append(array_ops.ones_like(target))
            continue
        g = convert_to_tensor(g, target.dtype)
        if tuple(g.shape) != tuple(target.shape):
            raise ValueError(
                f"a grad_ys entry has shape {tuple(g.shape)}, its y has shape {tuple(target.shape)}"
            )
        seeds.append(g)
    return seeds
