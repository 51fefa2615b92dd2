"""Vectorize: run a graph for a whole batch of values of some inputs at once.

    inputs {%0} batched by B                     %0: f32[B,3] = input
    %0: f32[3] = input                           %1: f32[3] = input
    %1: f32[3] = input                     =>    %2: f32[B,1] = reduce_sum[axis=(1,), keepdims=True] ...
    %2: f32[] = reduce_sum[axis=(0,)] (%0*%1)

Every value that depends on a batched input gets a leading batch axis; the others are
computed once, unchanged. Each primitive's record gives its batching rule (`OpDef.batch`,
see `tracer/ops/batching.py`); elementwise ops without one align their operands. This is
what makes `jacobian` one pass over the gradient graph instead of a loop.

An op that cannot be batched raises `NotVectorizable`; the caller then loops.
"""

from tracer.context import building_graph, location_override
from tracer.ir import Graph, Node, topological_closure
from tracer.ops import batching
from tracer.ops.core import graph_node_of
from tracer.ops.registry import OPS, NotVectorizable
from tracer.tensor import Tensor


def vectorize(graph, batched_inputs, batch_size):
    """A graph whose inputs in `batched_inputs` (nodes) take a leading axis of `batch_size`."""
    batched = {}  # id(original node) -> symbolic Tensor with the batch axis
    inputs = []
    for node in graph.inputs:
        if any(node is b for b in batched_inputs):
            new = Node(
                node.op, (), node.attrs, (batch_size,) + node.shape, node.dtype, node.location
            )
            batched[id(node)] = Tensor(None, new)
            inputs.append(new)
        else:
            inputs.append(node)
    with building_graph():
        for node in graph.nodes:
            if id(node) in batched or not any(id(i) in batched for i in node.inputs):
                continue
            args = [batched[id(i)] if id(i) in batched else Tensor(None, i) for i in node.inputs]
            flags = [id(i) in batched for i in node.inputs]
            op = OPS[node.op]
            rule = op.batch or (batching.elementwise if op.elementwise else None)
            if rule is None:
                raise NotVectorizable(f"{node.op} has no batching rule")
            with location_override(node.location):
                batched[id(node)] = rule(node, args, flags, batch_size)
    outputs = [graph_node_of(batched[id(o)]) if id(o) in batched else o for o in graph.outputs]
    return Graph(inputs, topological_closure(outputs), outputs)
