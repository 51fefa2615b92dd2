"""Decomposition: an op that runs as one kernel eagerly is written with the primitives it is
made of, before the other passes (its record's `decompose`).

    %y = conv2d[g] %x, %w      =>      %p = extract_patches[g] %x
                                       %y = reshape (matmul (reshape %p), (reshape %w))

An eager convolution and its gradients are each one call of a direct kernel
(tracer/ops/convolution_ops.py). Compiled, the passes after this one see the products they
know: common subexpressions share a convolution's patches with its filter gradient,
tracer/passes/convolve.py turns the products of patches into products that read the image,
fusion adds the bias and the activation as they are stored. So a function's compiled code is
the code of the same program traced as those products.
"""

from tracer.context import building_graph, location_override
from tracer.ir.rewrite import rebuild
from tracer.ops.core import graph_node_of
from tracer.ops.registry import OPS
from tracer.tensor import Tensor


def decompose(graph):
    if not any(_rule(node) is not None for node in graph.nodes):
        return graph
    with building_graph():
        return rebuild(graph, _decomposed)


def _rule(node):
    op = OPS.get(node.op)
    return None if op is None else op.decompose


def _decomposed(node):
    rule = _rule(node)
    if rule is None:
        return node
    with location_override(node.location):
        result = graph_node_of(rule(node, [Tensor(None, i) for i in node.inputs]))
    if result.shape != node.shape or result.dtype != node.dtype:
        raise AssertionError(f"{node.op}'s decomposition makes {result.dtype}{list(result.shape)}")
    return result
