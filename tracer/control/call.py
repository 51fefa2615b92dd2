"""`call`: a whole traced function as one op, so an eager tape records one node for it.

The IR's nodes have one output, so a call packs every output of one dtype into a flat
vector; the function's results are slices of it. The gradient rule of a call is another
call: of the function's vector-Jacobian product (`tracer.passes.gradient.vjp_graph`),
compiled once (on first need) and packed the same way. The backward recomputes the forward
values it needs from the call's inputs instead of storing them (rematerialisation), which
keeps what the tape holds to the inputs alone; and because it is itself a call, higher
orders follow.
"""

from codegen import forms
from tracer import collector
from tracer.context import building_graph
from tracer.ir import GraphAttribute
from tracer.ir.rewrite import with_outputs
from tracer.ops import array_ops, structure_ops
from tracer.ops.core import apply, graph_node_of
from tracer.ops.registry import ALL_INPUTS, primitive, unbatchable
from tracer.ops.tangent_rules import TRANSPOSED_VJP
from tracer.passes.gradient import vjp_and_connected
from tracer.tensor import Tensor


class PackedFunction(GraphAttribute):
    """A graph whose one output is its outputs, flattened and joined; runs compiled."""

    __slots__ = ("compile_graph", "_executable", "_vjp")

    def __init__(self, graph, name, compile_graph):
        super().__init__(graph, name)
        self.compile_graph = compile_graph  # (graph, name) -> executable on numpy arrays
        self._executable = None
        self._vjp = {}

    def with_graph(self, graph):
        return PackedFunction(graph, self.name, self.compile_graph)

    def run(self, arrays):
        """Execute on numpy arrays (the `call` kernel); compiled on first use."""
        if self._executable is None:
            self._executable = _compiled(self)
        (result,) = self._executable(list(arrays))
        return result

    def vjp(self, dtype):
        """The PackedFunction of (inputs, cotangent of the output) -> packed cotangents of
        the inputs of `dtype` that a cotangent reaches, and those inputs' positions (None and
        none where it reaches no input of `dtype`: their gradients are None, as TensorFlow's
        through a function)."""
        if dtype not in self._vjp:
            positions = [k for k, n in enumerate(self.graph.inputs) if n.dtype == dtype]
            graph, connected = vjp_and_connected(
                self.graph, [self.graph.inputs[p] for p in positions]
            )
            positions = [p for p, reached in zip(positions, connected) if reached]
            outputs = [o for o, reached in zip(graph.outputs, connected) if reached]
            vjp = None
            if positions:
                packed = packed_graph(graph, outputs)
                vjp = PackedFunction(packed, f"{self.name}_vjp", self.compile_graph)
            self._vjp[dtype] = vjp, positions
        return self._vjp[dtype]


@collector.paused  # compiling builds graphs as large as the function's, as tracing does
def _compiled(function):
    return function.compile_graph(function.graph, function.name)


def _infer_call(attrs, *inputs):
    (out,) = attrs["function"].graph.outputs
    return out.shape, out.dtype


def _call_grad(node, g, *inputs):
    function = node.attrs["function"]
    grads = [None] * len(inputs)
    for dtype in {i.dtype for i in node.inputs if i.dtype.is_differentiable}:
        vjp, positions = function.vjp(dtype)
        if vjp is None:
            continue
        packed = apply(CALL, tuple(inputs) + (g,), {"function": vjp})
        shapes = [node.inputs[p].shape for p in positions]
        for position, part in zip(positions, unpack(packed, shapes)):
            grads[position] = part
    return tuple(grads)


CALL = primitive(
    "call",
    _infer_call,
    strings=True,
    grad=_call_grad,
    saves=ALL_INPUTS,
    jvp=TRANSPOSED_VJP,
    batch=unbatchable("runs a compiled function; a jacobian through it loops over its rows"),
    kernel=lambda *inputs, function: function.run(inputs),
    c=forms.NotCompiled("a compiled function called while tracing is inlined, not called"),
)


def pack(tensors):
    """One flat vector of `tensors` (all of one dtype)."""
    return structure_ops.concat([array_ops.reshape(t, (-1,)) for t in tensors], axis=0)


def unpack(packed, shapes):
    """The tensors of `shapes` that `pack` joined into `packed`."""
    parts, start = [], 0
    for shape in shapes:
        size = 1
        for d in shape:
            size *= d
        part = array_ops.getitem(packed, slice(start, start + size))
        parts.append(array_ops.reshape(part, shape))
        start += size
    return parts


def packed_graph(graph, outputs):
    """The graph computing `outputs` (nodes of `graph`, one dtype) packed into one vector."""
    with building_graph():
        packed = pack([Tensor(None, n) for n in outputs])
    return with_outputs(graph.inputs, [graph_node_of(packed)])
