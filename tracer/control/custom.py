"""`tt.custom_gradient`: a function whose gradient is the one its author writes.

    @tt.custom_gradient
    def log1pexp(x):
        e = tt.exp(x)
        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tt.math.log(1 + e), grad

The decorated function's results pass through one `custom_gradient` node: its inputs are
the results, the arguments and the variables the function read; its gradient with
respect to the arguments and variables is what `grad` returns, and none flows into the
ops that computed the results. The ops of the function are recorded as usual (as in
TensorFlow), so `grad`, written with tracer ops on values the function computed, is
itself differentiable: a tape outside sees how those values depend on the arguments.

When it runs:
- traced (inside tt.function): `grad` is traced once, with symbolic upstream gradients,
  into a graph the node holds; the values it reads from the function are inputs of the
  node, so compiled gradients of any order follow.
- eagerly: `grad` runs when the gradient does, on eager tensors, through a
  `custom_gradient_vjp` node (TensorFlow's eager behaviour); under an outer tape, the ops
  it runs are recorded there.
"""

import functools
import inspect

import numpy as np

from codegen import forms
from tracer import nest, printing
from tracer.context import outside_trace, state, watching
from tracer.control.subgraph import trace_function
from tracer.ir import GraphAttribute, TupleType, format_location, user_location
from tracer.ops import array_ops, broadcast_ops, convert, structure_ops
from tracer.ops.core import Results, apply, execute_graph
from tracer.ops.registry import ALL_INPUTS, primitive, unbatchable
from tracer.ops.tuple_ops import TupleCotangent, TupleValue, get
from tracer.tensor import Tensor, convert_to_tensor, is_tensor_like


def custom_gradient(f=None):
    """Decorate `f`, which returns `(result, grad_fn)`: the result's gradient is `grad_fn`'s.

    `grad_fn(*upstream)` gets one upstream gradient per tensor of the result and returns
    one gradient per argument of `f` (a list, or a tensor for one argument; None for
    none). When `f` reads variables, `grad_fn(*upstream, variables=...)` returns
    `(argument gradients, variable gradients)`, as in TensorFlow.
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        return _call(f, args, kwargs)

    return decorated


class CustomGradient:
    """A `custom_gradient` node's record of the user's function: its gradient function and
    how the node's inputs are laid out. Compares by identity: each call is its own."""

    __slots__ = ("grad_fn", "name", "structure", "arguments", "variables")

    def __init__(self, grad_fn, name, structure, arguments, variables):
        self.grad_fn = grad_fn
        self.name = name
        self.structure = structure  # of the function's result
        self.arguments = arguments  # (shape, dtype) of each argument tensor
        self.variables = variables

    def __repr__(self):
        return self.name

    def gradients(self, upstream, dense=True):
        """The gradients `grad_fn` gives for `upstream` (one per result tensor): one per
        argument, then one per variable, each a Tensor (where it gave None: zeros, or None
        unless `dense`)."""
        packed = nest.pack_sequence_as(self.structure, list(upstream))
        upstream = packed if isinstance(packed, (list, tuple)) else [packed]
        if self.variables:
            returned = self.grad_fn(*upstream, variables=self.variables)
            if not isinstance(returned, (list, tuple)) or len(returned) != 2:
                raise ValueError(
                    f"the gradient function of {self.name} reads variables: it must return "
                    "(gradients of the arguments, gradients of the variables)"
                )
            argument_grads, variable_grads = returned
            variable_grads = list(variable_grads)
            if len(variable_grads) != len(self.variables):
                raise ValueError(
                    f"the gradient function of {self.name} must return a gradient for each of "
                    f"the {len(self.variables)} variables it reads, not {len(variable_grads)}"
                )
        else:
            argument_grads, variable_grads = self.grad_fn(*upstream), []
        if not isinstance(argument_grads, (list, tuple)):
            argument_grads = [argument_grads]
        argument_grads = list(argument_grads)
        if len(argument_grads) != len(self.arguments):
            raise ValueError(
                f"the gradient function of {self.name} returned {len(argument_grads)} "
                f"gradients for {len(self.arguments)} arguments"
            )
        expected = self.arguments + [(v.shape, v.dtype) for v in self.variables]
        return [
            None if g is None and not dense else self._checked(g, shape, dtype, k)
            for k, (g, (shape, dtype)) in enumerate(zip(argument_grads + variable_grads, expected))
        ]

    def dense(self, position, gradient):
        """A gradient `gradients(..., dense=False)` gave, zeros of its input's where None."""
        if gradient is not None:
            return gradient
        shape, dtype = [*self.arguments, *((v.shape, v.dtype) for v in self.variables)][position]
        return self._checked(None, shape, dtype, position)

    def _checked(self, gradient, shape, dtype, position):
        if gradient is None:
            return array_ops.zeros(shape, dtype)
        if not is_tensor_like(gradient):  # a Python number or numpy value: of the input's dtype
            gradient = convert_to_tensor(gradient, dtype)
        gradient = convert.as_tensor(gradient)
        if tuple(gradient.shape) != tuple(shape):
            raise ValueError(
                f"the gradient function of {self.name} returned a gradient of shape "
                f"{tuple(gradient.shape)} for input {position}, of shape {tuple(shape)}"
            )
        if gradient.dtype == dtype:
            return gradient
        if dtype.is_differentiable:  # TensorFlow's error: a cast would hide the mistake
            raise TypeError(
                f"the gradient function of {self.name} returned a gradient of dtype "
                f"{gradient.dtype.name} for input {position}, of dtype {dtype.name}"
            )
        return array_ops.cast(gradient, dtype)  # no gradient flows into it (_custom_grad)


def _call(f, args, kwargs):
    with watching() as read:
        result, grad_fn = _result_and_grad(f, f(*args, **kwargs))
    if not state.tapes and state.trace is None and not state.building:
        return result  # nothing can ask for the gradient: the values, as they are
    name = f"custom_gradient({getattr(f, '__name__', 'function')})"
    arguments = [convert.as_tensor(a) for a in nest.flatten((list(args), kwargs))]
    variables = _variables_read(read, arguments)
    if variables and not _takes_variables(grad_fn):
        raise TypeError(
            f"{name} reads the variables {', '.join(v.name for v in variables)}: its gradient "
            "function must accept a keyword argument 'variables' (and return the gradients "
            "of the arguments and of the variables)"
        )
    results = [convert.as_tensor(r) for r in nest.flatten(result)]
    function = CustomGradient(
        grad_fn, name, result, [(a.shape, a.dtype) for a in arguments], variables
    )
    inputs = [*results, *arguments, *(v._read() for v in variables)]
    attrs = {"function": function, "counts": (len(results), len(arguments), len(variables))}
    if state.trace is not None or state.building:
        given = []  # whether grad_fn gave each gradient (it runs once, here, as it traces)

        def gradients(*upstream):
            grads = function.gradients(upstream, dense=False)
            given[:] = [g is not None for g in grads]
            return [function.dense(k, g) for k, g in enumerate(grads)]

        traced = trace_function(gradients, results, f"the gradient function of {name}")
        printing.refuse_prints(
            traced.assigned,
            f"the gradient function of {name} in a tt.function",
            "print the gradients it returns instead",
        )
        attrs["vjp"] = GraphAttribute(traced.graph, "vjp")
        attrs["given"] = tuple(given)
        inputs += traced.capture_tensors()
    node = apply(CUSTOM_GRADIENT, tuple(inputs), attrs)
    outputs = [get(node, k) for k in range(len(results))]
    return nest.pack_sequence_as(result, outputs)


def _result_and_grad(f, returned):
    """(result, grad_fn) from what `f` returned, or a TypeError that names `f`, where it is
    defined and the line that called it (unpacking a bare tensor would say only "too many
    values to unpack", or iterate over its rows)."""
    if isinstance(returned, (tuple, list)) and len(returned) == 2 and callable(returned[1]):
        return returned
    if isinstance(returned, (tuple, list)):
        kinds = ", ".join(type(r).__name__ for r in returned)
        what = f"a {type(returned).__name__} of {len(returned)} ({kinds})"
    else:
        what = f"a {type(returned).__name__}"
    code = getattr(f, "__code__", None)
    defined = f" (defined at {format_location((code.co_filename, code.co_firstlineno))})"
    called = format_location(user_location())
    raise TypeError(
        f"the function {getattr(f, '__qualname__', f)!r}{defined if code else ''} decorated "
        f"with tt.custom_gradient must return a pair (output, grad_fn), with grad_fn the "
        f"function that computes its gradient; it returned {what}"
        + (f" (called at {called})" if called else "")
    )


def _variables_read(read, arguments):
    """The trainable variables read, each once, that are not arguments."""
    found = {}
    for variable in read:
        if variable.trainable and all(variable is not a for a in arguments):
            found.setdefault(id(variable), variable)
    return list(found.values())


def _takes_variables(grad_fn):
    try:
        parameters = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in parameters)


def _infer_custom(attrs, *inputs):
    n_results = attrs["counts"][0]
    return (), TupleType([(t.shape, t.dtype) for t in inputs[:n_results]])


def _custom_grad(node, g, *inputs):
    n_results, n_arguments, n_variables = node.attrs["counts"]
    upstream = g.dense(node, range(n_results))
    vjp = node.attrs.get("vjp")
    if vjp is not None:
        captures = inputs[n_results + n_arguments + n_variables :]
        grads = execute_graph(vjp.graph, [*upstream, *captures])
        grads = [g if given else None for g, given in zip(grads, node.attrs["given"])]
    elif state.tapes or all(u._value is not None for u in upstream):
        # eagerly (an eager gradient's sweep, or under a tape recording this rule): run it,
        # where tapes and forward accumulators see its ops; None where it gave None, as
        # TensorFlow's tape gives None for that argument
        grads = node.attrs["function"].gradients(upstream, dense=False)
    else:
        function = node.attrs["function"]
        parts = [*function.arguments, *((v.shape, v.dtype) for v in function.variables)]
        vjp_node = apply(CUSTOM_VJP, tuple(upstream), {"function": function, "parts": tuple(parts)})
        grads = [get(vjp_node, k) for k in range(len(parts))]
    grads = [g if g is not None and g.dtype.is_differentiable else None for g in grads]
    extra = len(inputs) - n_results - len(grads)
    return (None,) * n_results + tuple(grads) + (None,) * extra


def _emit_custom(node, site):
    """The forward of a custom gradient passes its results through."""
    return [
        f"memcpy({site.result(k)}, {site.input(k)}, {site.bytes(*part)});"
        for k, part in enumerate(node.dtype.parts)
    ]


def _custom_jvp(node, tangents, inputs, out):
    """Forward mode sees through a custom gradient, as TensorFlow's accumulators do: the
    results' tangents are those of the ops that computed them (its inputs), where the user's
    gradient function is for reverse mode alone (transposing it gave compiled code another
    jvp than eager code's)."""
    return TupleCotangent(tangents[: node.attrs["counts"][0]])


CUSTOM_GRADIENT = primitive(
    "custom_gradient",
    _infer_custom,
    grad=_custom_grad,
    saves=ALL_INPUTS,
    jvp=_custom_jvp,
    batch=unbatchable("holds a gradient function of the user's"),
    kernel=lambda *inputs, function, counts, vjp=None, given=None: TupleValue(inputs[: counts[0]]),
    c=forms.Structured(_emit_custom),
)


def _vjp_kernel(*upstream, function, parts, rows=None):
    """The user's gradient function, run on eager tensors (no tape records it here); with
    `rows`, once per row of the upstream gradients (a vectorized jacobian's)."""
    with outside_trace():
        return TupleValue(_row_by_row(function, [Tensor(np.asarray(u)) for u in upstream], rows))


def _vjp_expand(node, tensors):
    """Through the op path: the user's function on the tensors, which tapes record."""
    attrs = node.attrs
    return Results(_row_by_row(attrs["function"], tensors, attrs.get("rows"), eager=False))


def _row_by_row(function, upstream, rows, eager=True):
    if rows is None:
        grads = function.gradients(upstream)
        return [g.numpy() for g in grads] if eager else grads
    per_row = [function.gradients([u[r] for u in upstream]) for r in range(rows)]
    stacked = [structure_ops.stack([row[k] for row in per_row]) for k in range(len(per_row[0]))]
    return [g.numpy() for g in stacked] if eager else stacked


def _vjp_batch(node, args, flags, size):
    """A jacobian's rows, each through the user's function (which is written for one)."""
    rows = [
        a if batched else broadcast_ops.broadcast_to(a, (size, *a.shape))
        for a, batched in zip(args, flags)
    ]
    return apply(CUSTOM_VJP, tuple(rows), {**node.attrs, "rows": size})


def _infer_vjp(attrs, *upstream):
    rows = attrs.get("rows")
    parts = attrs["parts"] if rows is None else [((rows, *s), d) for s, d in attrs["parts"]]
    return (), TupleType(parts)


CUSTOM_VJP = primitive(
    "custom_gradient_vjp",
    _infer_vjp,
    batch=_vjp_batch,
    kernel=_vjp_kernel,
    c=forms.NotCompiled("made only by eager tapes, whose gradients run in Python"),
    expand=_vjp_expand,
)
