"""`apply`: the one path every op takes, eager or symbolic, recorded or not.

    shape, dtype = op.infer(attrs, *inputs)   # validate; clear errors name the user's line
    eager:    value = runtime kernel(*input arrays, **attrs)
    symbolic: a new IR node
    then, for every recording tape that tracks an input: record the node and what the
    op's gradient rule needs (`op.saves`), nothing more.
"""

from runtime.kernels import KERNELS
from tracer.context import state
from tracer.ir import Literal, Node, format_location, user_location
from tracer.ops.registry import ALL_INPUTS, OUT
from tracer.tensor import Tensor


def apply(op, inputs, attrs):
    """Run primitive `op` on Tensors `inputs` (already converted) and return the result Tensor."""
    try:
        shape, dtype = op.infer(attrs, *inputs)
    except (ValueError, TypeError) as error:
        where = format_location(_location())
        raise type(error)(f"{op.name}: {error}" + (f" (at {where})" if where else "")) from None
    if any(t._value is None for t in inputs) or (state.trace is not None and _is_large(shape)):
        node = Node(op.name, tuple(map(graph_node_of, inputs)), attrs, shape, dtype, _location())
        out = Tensor(None, node)
    else:
        out = Tensor(KERNELS[op.name](*[t._value for t in inputs], **attrs))
    if state.tapes and op.grad is not None and dtype.is_differentiable:
        _record(op, inputs, attrs, out, shape, dtype)
    return out


LARGE = 4096  # while tracing, results of more elements become graph nodes, not baked-in constants


def _is_large(shape):
    size = 1
    for d in shape:
        size *= d
    return size > LARGE


def _location():
    return state.location or user_location()


def node_of(tensor):
    """The node of `tensor`, making a `const` leaf for an eager value no tape has seen.

    Scalars keep their value in the node (so printed graphs show `mul %0, 2.0`); larger
    values are not copied into the IR.
    """
    node = tensor._node
    if node is None:
        value = tensor._value
        attrs = {"value": Literal(value)} if value.ndim == 0 else {}
        node = tensor._node = Node("const", (), attrs, value.shape, tensor.dtype)
    return node


def graph_node_of(tensor):
    """The node of `tensor` inside a graph being built: eager values become literal constants."""
    if tensor._value is None:
        return tensor._node
    return Node("const", (), {"value": Literal(tensor._value)}, tensor.shape, tensor.dtype)


def _record(op, inputs, attrs, out, shape, dtype):
    node = out._node
    for tape in state.tapes:
        tracked = tape._recording_state.tracked
        if not any(t._node is not None and id(t._node) in tracked for t in inputs):
            continue
        if node is None:
            node = Node(op.name, tuple(map(node_of, inputs)), attrs, shape, dtype, _location())
            out._node = node
        saved = inputs if op.saves == ALL_INPUTS else tuple(out if slot == OUT else inputs[slot] for slot in op.saves)
        tape._recording_state.record(node, saved)
