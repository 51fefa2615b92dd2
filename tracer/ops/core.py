"""`apply`: the one path every op takes, eager or symbolic, recorded or not.

    shape, dtype = op.infer(attrs, *inputs)   # validate; clear errors name the user's line
    eager:    value = runtime kernel(*input arrays, **attrs)
    symbolic: a new IR node
    then, for every recording tape that tracks an input: record the node and what the
    op's gradient rule needs (`op.saves`), nothing more.
"""

from runtime.kernels import KERNELS
from tracer.context import numerics, state
from tracer.debugging import check_numerics
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
        if numerics.enabled:
            check_numerics(op, inputs, out, _location())
    if state.tapes:
        _record(op, inputs, attrs, out, shape, dtype)
    elif out._value is not None:
        _note_variable_origin(inputs, out)
    if state.paused:
        _note_paused_use(inputs, out)
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
    differentiable = op.grad is not None and dtype.is_differentiable
    node = out._node
    for tape in state.tapes:
        rec = tape._recording_state
        tracked = rec.tracked
        if not any(t._node is not None and id(t._node) in tracked for t in inputs):
            rec.events.note_untracked_use(inputs, _location)
            _carry_cut(inputs, out)
            continue
        if not differentiable:
            sources = tuple(t._node for t in inputs if t._node is not None and id(t._node) in tracked)
            cut = (op.name, dtype, sources, _location())
            rec.events.blocked.append(cut)
            out._cut = cut
            continue
        if node is None:
            node = Node(op.name, tuple(map(node_of, inputs)), attrs, shape, dtype, _location())
            out._node = node
        saved = inputs if op.saves == ALL_INPUTS else tuple(out if slot == OUT else inputs[slot] for slot in op.saves)
        tape._recording_state.record(node, saved)


def _note_variable_origin(inputs, out):
    """A result computed from a Variable outside any tape remembers it: `x = x + 1` turns a
    variable into a tensor that no tape watches, and tape.explain can then say so."""
    for t in inputs:
        node = t._node
        if node is not None and node.op == "variable":
            out._origin = (node.attrs["name"], _location())
            return


def _note_paused_use(inputs, out):
    for tape in state.paused:
        rec = tape._recording_state
        used = tuple(t._node for t in inputs if t._node is not None and id(t._node) in rec.tracked)
        if used:
            cut = ("stop_recording", out.dtype, used, _location())
            rec.events.paused_uses.append((used, cut[3]))
            out._cut = cut


def _carry_cut(inputs, out):
    """An op on a value whose gradient path was cut passes the cut on (for tape.explain)."""
    for t in inputs:
        if t._cut is not None:
            out._cut = t._cut
            return
