"""Vectorize: run a graph for a whole batch of values of some inputs at once.

    inputs {%0} batched by B                     %0: f32[B,3] = input
    %0: f32[3] = input                           %1: f32[3] = input
    %1: f32[3] = input                     =>    %2: f32[B,1] = reduce_sum[axis=(1,), keepdims=True] ...
    %2: f32[] = reduce_sum[axis=(0,)] (%0*%1)

Every value that depends on a batched input gets a leading batch axis; the others are
computed once, unchanged. Each primitive has a batching rule: elementwise ops align their
operands (a batched operand of lower rank gets size-1 axes after the batch axis, so that
numpy broadcasting lines the batch axis up), and the others shift their axis attributes by
one. This is what makes `jacobian` one pass over the gradient graph instead of a loop.

A primitive without a rule raises `NotVectorizable`; the caller then loops.
"""

from tracer.context import location_override, no_recording
from tracer.ir import Graph, Node, topological_closure
from tracer.ops import array_ops
from tracer.ops.core import apply, graph_node_of
from tracer.ops.registry import OPS
from tracer.tensor import Tensor


class NotVectorizable(Exception):
    """The graph has an op this pass cannot batch; the caller loops instead."""


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
    with no_recording():
        for node in graph.nodes:
            if id(node) in batched or not any(id(i) in batched for i in node.inputs):
                continue
            args = [batched[id(i)] if id(i) in batched else Tensor(None, i) for i in node.inputs]
            flags = [id(i) in batched for i in node.inputs]
            rule = BATCH_RULES.get(node.op)
            if rule is None:
                if not OPS[node.op].elementwise:
                    raise NotVectorizable(f"{node.op} has no batching rule")
                rule = _elementwise
            with location_override(node.location):
                batched[id(node)] = rule(node, args, flags, batch_size)
    outputs = [graph_node_of(batched[id(o)]) if id(o) in batched else o for o in graph.outputs]
    return Graph(inputs, topological_closure(outputs), outputs)


def _aligned(node, args, flags):
    """Batched operands reshaped to (B,) + (1,) * k + shape, with the output's rank after B."""
    rank = len(node.shape)
    result = []
    for arg, node_input, is_batched in zip(args, node.inputs, flags):
        if is_batched and len(node_input.shape) < rank:
            pad = (1,) * (rank - len(node_input.shape))
            arg = array_ops.reshape(arg, arg.shape[:1] + pad + node_input.shape)
        result.append(arg)
    return result


def _elementwise(node, args, flags, size):
    return apply(OPS[node.op], tuple(_aligned(node, args, flags)), node.attrs)


def _shifted_axis(name):
    def rule(node, args, flags, size):
        attrs = dict(node.attrs, **{name: _shift(node.attrs[name])})
        return apply(OPS[node.op], tuple(args), attrs)

    return rule


def _shift(axis):
    return tuple(a + 1 for a in axis) if isinstance(axis, tuple) else axis + 1


def _reshape(node, args, flags, size):
    return array_ops.reshape(args[0], (size,) + node.attrs["shape"])


def _transpose(node, args, flags, size):
    return array_ops.transpose(args[0], (0,) + _shift(node.attrs["perm"]))


def _broadcast_to(node, args, flags, size):
    (x,) = _aligned(node, args, flags)
    return array_ops.broadcast_to(x, (size,) + node.attrs["shape"])


def _tile(node, args, flags, size):
    return array_ops.tile(args[0], (1,) + node.attrs["multiples"])


def _slice(node, args, flags, size):
    index = ((0, size, 1),) + node.attrs["index"]
    return apply(OPS["slice"], (args[0],), {"index": index})


def _slice_grad(node, args, flags, size):
    attrs = {"index": ((0, size, 1),) + node.attrs["index"], "shape": (size,) + node.attrs["shape"]}
    return apply(OPS["slice_grad"], (args[0],), attrs)


def _matmul(node, args, flags, size):
    """A batch of products with one unbatched matrix is one product, not `size` small ones:
    (B, m, k) @ (k, n) = ((B*m, k) @ (k, n)) reshaped; (m, k) @ (B, k, n) likewise through
    (k, B*n)."""
    a, b = args
    attrs = node.attrs
    if flags == [True, False] and a.ndim == 3 and b.ndim == 2 and not attrs.get("transpose_a"):
        _, m, k = a.shape
        product = apply(OPS["matmul"], (array_ops.reshape(a, (size * m, k)), b), attrs)
        return array_ops.reshape(product, (size, m, product.shape[-1]))
    if flags == [False, True] and a.ndim == 2 and b.ndim == 3 and not attrs.get("transpose_b"):
        _, k, n = b.shape
        columns = array_ops.reshape(array_ops.transpose(b, (1, 0, 2)), (k, size * n))
        product = apply(OPS["matmul"], (a, columns), attrs)
        return array_ops.transpose(
            array_ops.reshape(product, (product.shape[0], size, n)), (1, 0, 2)
        )
    return apply(OPS["matmul"], tuple(_aligned(node, args, flags)), attrs)


def _concat(node, args, flags, size):
    full = [
        arg if is_batched else array_ops.broadcast_to(arg, (size,) + arg.shape)
        for arg, is_batched in zip(args, flags)
    ]
    return apply(OPS["concat"], tuple(full), {"axis": node.attrs["axis"] + 1})


def _gather(node, args, flags, size):
    if flags[1]:
        raise NotVectorizable("gather with batched indices")
    return apply(OPS["gather"], tuple(args), {"axis": node.attrs["axis"] + 1})


def _scatter_add(node, args, flags, size):
    if flags[1]:
        raise NotVectorizable("scatter_add with batched indices")
    attrs = {"axis": node.attrs["axis"] + 1, "shape": (size,) + node.attrs["shape"]}
    return apply(OPS["scatter_add"], tuple(args), attrs)


BATCH_RULES = {
    "reshape": _reshape,
    "transpose": _transpose,
    "broadcast_to": _broadcast_to,
    "tile": _tile,
    "slice": _slice,
    "slice_grad": _slice_grad,
    "matmul": _matmul,
    "concat": _concat,
    "gather": _gather,
    "scatter_add": _scatter_add,
    "reduce_sum": _shifted_axis("axis"),
    "reduce_max": _shifted_axis("axis"),
    "reduce_min": _shifted_axis("axis"),
    "reduce_prod": _shifted_axis("axis"),
    "cumsum": _shifted_axis("axis"),
    "cumprod": _shifted_axis("axis"),
    "argmax": _shifted_axis("axis"),
    "argmin": _shifted_axis("axis"),
}
