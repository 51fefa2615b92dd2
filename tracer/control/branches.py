"""`tt.cond`: a branch, eager and compiled.

Eagerly, and whenever the predicate is known when tracing, only the chosen function runs.
Otherwise it is one region (region.py) holding both functions as graphs; the interpreter
runs the chosen one, the C backend writes a real `if` around their code. Its gradient is a
cond of the branches' gradients.
"""

from codegen import forms
from tracer import nest
from tracer.context import state
from tracer.control.region import (
    at_user_line,
    in_scope,
    new_variables,
    open_scope,
    run_subgraph,
    truth,
    union,
)
from tracer.control.region_batching import batch_cond
from tracer.control.subgraph import tensors_of, trace_function
from tracer.ir import Node, Subgraph, TupleType
from tracer.ir.rewrite import with_outputs
from tracer.ops import convert
from tracer.ops.core import apply_symbolic, execute_graph
from tracer.ops.registry import ALL_INPUTS, primitive
from tracer.ops.tangent_rules import TRANSPOSED_VJP
from tracer.ops.tuple_ops import TupleValue, get
from tracer.passes.gradient import vjp_graph


def cond(pred, true_fn=None, false_fn=None, name=None):
    """`true_fn()` if `pred` else `false_fn()`: TensorFlow's `tf.cond`.

    Eagerly, and whenever `pred` is known when tracing, only the chosen function runs.
    Otherwise both are traced, and must return the same structure of tensors of the same
    dtypes and shapes; the compiled code branches.

    >>> tt.cond(tt.constant(2.0) > 1.0, lambda: tt.constant(1.0), lambda: tt.constant(0.0)).numpy()
    1.0
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("tt.cond: true_fn and false_fn must be callables")
    pred = convert.as_tensor(pred)
    if pred._value is not None:
        return true_fn() if truth(pred, "the predicate of tt.cond") else false_fn()
    if pred.shape != () or not pred.dtype.is_bool:
        raise TypeError(
            f"the predicate of tt.cond must be a boolean scalar, not "
            f"{pred.dtype.name}{list(pred.shape)}{at_user_line()}"
        )
    scope = open_scope("cond", name)
    return _traced_cond(pred, in_scope(true_fn, scope), in_scope(false_fn, scope))


def _traced_cond(pred, true_fn, false_fn):
    branches = [
        trace_function(fn, (), f"the {side} branch of tt.cond")
        for fn, side in ((true_fn, "true"), (false_fn, "false"))
    ]
    # variables a branch assigns: results of both (each branch is traced once, as in TF)
    variables = new_variables([], [v for b in branches for v in b.assigned])
    true, false = (b.with_variables(variables) for b in branches)
    _check_branches(true, false)
    captures = union(true.captures, false.captures)
    attrs = {
        "true": Subgraph(true.with_captures(captures), "true"),
        "false": Subgraph(false.with_captures(captures), "false"),
    }
    node = apply_symbolic(COND, (pred, *tensors_of([true, false], captures)), attrs)
    results = [get(node, k) for k in range(len(true.graph.outputs))]
    for variable, value in zip(variables, results[true.n_results :]):
        state.trace.assign(variable, value)
    if true.structure is None:
        return None
    return nest.pack_sequence_as(true.structure, results[: true.n_results])


def _check_branches(true, false):
    # NOTE: the structures are compared before the tensors: branches returning dicts with
    # other keys flatten to as many tensors, and the false branch's would come back under the
    # true branch's keys. TensorFlow raises this TypeError (a list of another length too).
    difference = nest.structure_difference(true.structure, false.structure)
    if difference is None and true.n_results != false.n_results:
        difference = f"{true.n_results} and {false.n_results} tensors"
    if difference is not None:
        raise TypeError(
            "true_fn and false_fn arguments to tt.cond must have the same number, type, and "
            f"overall structure of return values; they return {difference}"
            f"\n  true_fn output: {_summary(true.structure)}"
            f"\n  false_fn output: {_summary(false.structure)}{at_user_line()}"
        )
    for k, (a, b) in enumerate(zip(true.graph.outputs, false.graph.outputs)):
        if a.dtype != b.dtype or a.shape != b.shape:
            raise ValueError(
                f"the branches of tt.cond return different tensors at position {k}: "
                f"{a.dtype.name}{list(a.shape)} and {b.dtype.name}{list(b.shape)}"
                f"{at_user_line()}"
            )


def _summary(structure):
    """A branch's result, its tensors written as their dtype and shape."""
    flat = [
        f"{leaf.dtype.name}{list(leaf.shape)}" if hasattr(leaf, "dtype") else repr(leaf)
        for leaf in nest.flatten(structure)
    ]
    try:
        return repr(nest.pack_sequence_as(structure, [_Text(text) for text in flat]))
    except Exception:  # a TensorArray rebuilt from text: described by its tensors alone
        return f"{type(structure).__name__} of {', '.join(flat)}"


class _Text(str):
    def __repr__(self):
        return str(self)


def _infer_cond(attrs, pred, *captures):
    outputs = attrs["true"].graph.outputs
    return (), TupleType([(o.shape, o.dtype) for o in outputs])


def _cond_kernel(pred, *captures, true, false):
    return TupleValue(run_subgraph(true if pred else false, captures))


def _narrow_cond(node, used):
    """The cond computing only the results some `get` reads."""
    kept = sorted(used)
    if len(kept) == len(node.dtype.parts):
        return None
    attrs = {
        side: Subgraph(
            with_outputs(
                node.attrs[side].graph.inputs, [node.attrs[side].graph.outputs[k] for k in kept]
            ),
            side,
        )
        for side in ("true", "false")
    }
    shape, dtype = _infer_cond(attrs, *node.inputs)
    narrowed = Node(node.op, node.inputs, attrs, shape, dtype, node.location)
    return narrowed, {k: position for position, k in enumerate(kept)}


def _cond_grad(node, g, pred, *captures):
    parts = node.dtype.parts
    out_positions = [j for j, (_, dtype) in enumerate(parts) if dtype.is_differentiable]
    cap_positions = [k for k, c in enumerate(captures) if c.dtype.is_differentiable]
    grads = [None] * len(node.inputs)
    if not out_positions or not cap_positions:
        return tuple(grads)
    cotangents = g.dense(node, out_positions)
    vjps = []
    for side in ("true", "false"):
        graph = node.attrs[side].graph
        restricted = with_outputs(graph.inputs, [graph.outputs[j] for j in out_positions])
        vjps.append(vjp_graph(restricted, [graph.inputs[k] for k in cap_positions]))
    arguments = [*captures, *cotangents]
    results = cond(
        pred,
        lambda: execute_graph(vjps[0], arguments),
        lambda: execute_graph(vjps[1], arguments),
    )
    for position, k in enumerate(cap_positions):
        grads[1 + k] = results[position]
    return tuple(grads)


def _emit_cond(node, site):
    """if (pred) { true branch } else { false branch }, each writing the results."""
    parts = node.dtype.parts
    results = [site.result(k) for k in range(len(parts))]
    captures = [site.input(k) for k in range(1, len(node.inputs))]
    lines = [f"if (*(const bool *){site.input(0)}) {{"]
    for side in ("true", "false"):
        if side == "false":
            lines.append("} else {")
        branch_lines, outputs = site.region(node.attrs[side].graph, captures)
        lines += ["    " + line for line in branch_lines]
        for result, output, part in zip(results, outputs, parts):
            lines.append(f"    memcpy({result}, {output}, {site.bytes(*part)});")
    lines.append("}")
    return lines


COND = primitive(
    "cond",
    _infer_cond,
    strings=True,
    grad=_cond_grad,
    saves=ALL_INPUTS,
    jvp=TRANSPOSED_VJP,
    batch=batch_cond,
    kernel=_cond_kernel,
    c=forms.Structured(_emit_cond),
    narrow=_narrow_cond,
)
