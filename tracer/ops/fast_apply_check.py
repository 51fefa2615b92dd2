"""The check, at import, that the eager op path in C records what the Python path records.

`fast_apply.c` builds Tensors and Nodes slot by slot and writes a tape's Recording as
`Recording.record` does. Its `configure` refuses classes whose slots differ from the ones it
sets; this check covers the rest of what both paths must agree on (node fields, signature
entries, saved values, the table of untracked inputs), by running ops under a tape through
each path, without attributes and with them (the Python path records those through the C
module's `record`): a unary op on a watched tensor, then a binary one that reads an
untracked input twice before the tape watches it. A module built
from another version of tracer (an editable install whose extension was not rebuilt) is
then left unused, with a warning (runtime/native.py), instead of recording something else.
"""

import numpy as np

from runtime.kernels import KERNELS
from tracer import dtypes
from tracer.context import state
from tracer.ir import Node
from tracer.ops import shapes
from tracer.ops.registry import OUT, OpDef
from tracer.recording import Recording
from tracer.tensor import Tensor


def _probe(name, infer, grad):
    """An op of the check's own, saving its first input and its result."""
    return OpDef(
        name=name,
        infer=infer,
        grad=grad,
        saves=(0, OUT),
        jvp=None,
        fusion=None,
        needs_stored_input=None,
        batch=None,
        simplify=(),
    )


_PROBE = _probe("fast_apply_probe", shapes.unary, lambda node, g, x, out: (g,))
# x - c, where c is a value the tape does not track (its `outside` table)
_BINARY_PROBE = _probe(
    "fast_apply_binary_probe", shapes.binary, lambda node, g, x, c, out: (g, None)
)


class _Tape:
    """What both paths read of a tape: its Recording."""

    def __init__(self):
        self._recording_state = Recording()


def difference(module, python_apply):
    """'' when both paths record the same for a probe op on a watched tensor, without
    attributes (module.apply) and with them (`python_apply`, recording through
    module.record), else what differs."""
    KERNELS[_PROBE.name] = lambda x, **attrs: np.negative(x)
    KERNELS[_BINARY_PROBE.name] = lambda x, c, **attrs: np.subtract(x, c)
    saved = state.tapes, state.location
    try:
        state.location = ("fast_apply_check", 0)
        for attrs in ({}, {"probe": (1, (2, None))}):
            was = module.set_enabled(False)  # Python alone: `_record` records in C when on
            try:
                # the Python path runs first: the C path then finds the shape rule's answer remembered
                python = _record_one(python_apply, attrs)
            finally:
                module.set_enabled(was)
            c = _record_one(module.apply, attrs)
            names = ("result", "node", "signature", "saved values", "untracked inputs' table")
            for name, want, got in zip(names, python, c):
                if want != got:
                    return f"the {name} differs: {got!r} where Python gives {want!r}"
    finally:
        state.tapes, state.location = saved
        del KERNELS[_PROBE.name], KERNELS[_BINARY_PROBE.name]
    return ""


def _record_one(apply, attrs):
    """What `apply` makes and records, with identities replaced by roles."""
    x = Tensor(np.array([1.0, 2.0]))
    x._node = Node("input", (), {}, (2,), dtypes.float64)
    tape = _Tape()
    rec = tape._recording_state
    rec.watch_node(x._node)
    state.tapes = [tape]
    out = apply(_PROBE, (x,), dict(attrs))
    node = out._node
    c = Tensor(np.array([0.5, 0.25]))
    c._node = Node("const", (), {}, (2,), dtypes.float64)
    twice = apply(_BINARY_PROBE, (apply(_BINARY_PROBE, (out, c), dict(attrs)), c), dict(attrs))
    rec.watch_node(c._node)  # watched after it was read: its outside number goes with it
    roles = {id(x): "input", id(out): "result"}
    result = (type(out).__name__, out._value.tolist(), out._origin, out._cut, twice._value.tolist())
    node_fields = (
        type(node).__name__,
        node.op,
        tuple(i is x._node for i in node.inputs),
        node.attrs,
        node.shape,
        node.dtype,
        node.location,
    )
    saved = [None if v is None else tuple(roles.get(id(t), repr(t)) for t in v) for v in rec.saved]
    return result, node_fields, list(rec.signature), saved, list(rec.outside.values())
