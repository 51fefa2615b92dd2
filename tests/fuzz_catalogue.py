"""Fuzzer steps read from the op catalogue, so that a new elementwise primitive is drawn by
tests/test_fuzz.py with no edit there.

Every elementwise primitive whose shape and dtype rule takes one or two float64 tensors of
one shape, with no attributes, and gives a float64 tensor of that shape (sin, softsign,
add, pow, ...) gets a step named `op_<name>`: the op applied to the step's input (and, for
two, to the program's second input), each first mapped into [0.5, 1) by 0.5 + 0.5 tanh(x)^2.
In that interval every such op of the catalogue is defined and finite (log, sqrt, rsqrt,
tan, pow, floordiv), so the steps check what the fuzzer checks of all steps: eager, the
interpreter and C agree on values and two orders of derivatives. They are not marked
smooth: where an op is twice differentiable is not part of its declaration, so finite
differences check the hand-written steps of tests/test_fuzz.py only.

Other primitives (attributes, integer or boolean operands, other shapes) need a step
written by hand in tests/test_fuzz.py, or a reason in its NOT_DRAWN.
"""

import types

import tracer as tt
from tracer.ops.core import apply
from tracer.ops.registry import OPS

_PROBE = types.SimpleNamespace(shape=(2,), dtype=tt.float64)  # what a rule reads of an input


def _arity(op):
    """1 or 2 where `op` is elementwise and maps that many float64 tensors of one shape, with
    no attributes, to one of that shape and dtype; None for every other op. A rule refuses
    other arities, dtypes and missing attributes with TypeError, ValueError or KeyError."""
    if not op.elementwise:
        return None
    for arity in (1, 2):
        try:
            if op.infer({}, *[_PROBE] * arity) == (_PROBE.shape, _PROBE.dtype):
                return arity
        except (TypeError, ValueError, KeyError):
            continue
    return None


def _into_domain(x):
    """x mapped into [0.5, 1), smoothly, in x's dtype."""
    return 0.5 + 0.5 * tt.square(tt.tanh(x))


def _unary_step(op):
    return lambda x: apply(op, (_into_domain(x),), {})


def _binary_step(op):
    return lambda x, y: apply(op, (_into_domain(x), _into_domain(y)), {})


def steps(arity):
    """{`op_<name>`: (step, smooth=False)} for the catalogue's primitives of that arity."""
    make = {1: _unary_step, 2: _binary_step}[arity]
    return {
        f"op_{name}": (make(op), False) for name, op in sorted(OPS.items()) if _arity(op) == arity
    }
