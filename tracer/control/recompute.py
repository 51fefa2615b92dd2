"""`tt.recompute_grad`: gradient checkpointing. A tape keeps only the function's inputs; the
backward pass computes the function again to differentiate it.

Eagerly it is TensorFlow's construction: a custom gradient whose forward runs with no tape
recording, and whose gradient function runs the function again under a tape of its own.

Traced, the function is one `recompute` node holding its graph, a branch region of one
branch (branching.py): the forward runs that graph, and the gradient rule is the graph's vector-Jacobian product, which computes the
forward values it needs itself. The recomputed values are other nodes than the forward's,
hidden inside the node, so no pass merges the two (TensorFlow's graph mode merges them,
and saves nothing): in compiled code the forward's values live only during the node's
step, and the gradient's during the backward.
"""

import functools

from tracer import nest, printing
from tracer.context import outside_trace, refusing_assigns, state
from tracer.control.branching import RECOMPUTE
from tracer.control.custom import custom_gradient
from tracer.control.subgraph import trace_function
from tracer.ir import Subgraph
from tracer.ops import convert
from tracer.ops.core import apply_symbolic
from tracer.ops.tuple_ops import get
from tracer.tape import GradientTape


def recompute_grad(f):
    """`f`, whose gradient recomputes it instead of keeping its intermediate values.

    >>> block = tt.recompute_grad(lambda x: tt.tanh(tt.tanh(x)))
    >>> x = tt.constant(0.5)
    >>> with tt.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = block(x)
    >>> round(float(tape.gradient(y, x)), 4)
    0.6413
    """

    @functools.wraps(f)
    def recomputed(*args, **kwargs):
        if state.trace is None and not state.building:
            return _eager(f, args, kwargs)
        return _traced(f, args, kwargs)

    return recomputed


_REFUSED = ("a function of tt.recompute_grad", "its recomputation would assign it again")


def _eager(f, args, kwargs):
    @custom_gradient
    def checkpointed(*args):
        # no tape records the forward; an assign raises before it changes the variable (the
        # traced function refuses assigns too)
        with outside_trace(), refusing_assigns(*_REFUSED):
            result = f(*args, **kwargs)

        def grad(*upstream, variables=None):
            watched = list(args) + list(variables or [])
            with GradientTape() as tape, refusing_assigns(*_REFUSED):
                tape.watch(watched)
                again = f(*args, **kwargs)
            grads = tape.gradient(nest.flatten(again), watched, output_gradients=list(upstream))
            if variables:
                return grads[: len(args)], grads[len(args) :]
            return grads

        return result, grad

    return checkpointed(*[convert.as_tensor(a) for a in args])


def _traced(f, args, kwargs):
    arguments = [convert.as_tensor(a) for a in args]
    traced = trace_function(
        lambda *a: f(*a, **kwargs), arguments, "a function of tt.recompute_grad"
    )
    printing.refuse_prints(
        traced.assigned,
        "a function of tt.recompute_grad",
        "its recomputation for the gradient would print again; print outside it",
    )
    if traced.assigned:
        raise ValueError(
            "a function of tt.recompute_grad assigns variables "
            f"({', '.join(v.name for v in traced.assigned)}): its recomputation would assign "
            "them again; assign outside it"
        )
    inputs = [*arguments, *traced.capture_tensors()]
    node = apply_symbolic(RECOMPUTE, tuple(inputs), {"function": Subgraph(traced.graph, "f")})
    results = [get(node, k) for k in range(len(traced.graph.outputs))]
    return nest.pack_sequence_as(traced.structure, results)
