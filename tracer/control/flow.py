"""`tt.cond` and `tt.while_loop`: branches and loops, eager and compiled.

Eagerly (no trace), they are Python's own `if` and `while` on the tensors' values, and a
tape records the ops that run, as in TensorFlow. While tracing, each is one structured op
holding the functions it runs as sub-graphs (`subgraph.trace_function`): the values a
function reads from outside are the op's inputs, so tapes see them, and its results are
`get`s of the op's one node. The interpreter runs the sub-graphs in a Python loop; the
C backend writes a real `if` and `for` around their code.

    while (inputs: loop variables, captures; results: the variables' final values, the
           count of iterations, and, with a known maximum_iterations, the stack of each
           variable's value at the start of every iteration)

The gradient of a loop is a loop: the reverse replays the iterations backwards from the
stacked states, running the body's vector-Jacobian product once per iteration; being
itself a while loop, it has a gradient too, to any order. The stacks exist only where a
gradient reads them: dead-code elimination drops them otherwise (`_narrow_while`).
"""

import numpy as np

from codegen import forms
from runtime.straight_line import straight_line
from tracer import dtypes, nest, printing
from tracer.context import state
from tracer.control.subgraph import tensors_of, trace_function
from tracer.ir import Node, Subgraph, TupleType, format_location, user_location
from tracer.ir.rewrite import bypassed, with_outputs
from tracer.ops import array_ops, convert, index_ops
from tracer.ops.core import apply, apply_symbolic, execute_graph
from tracer.ops.registry import ALL_INPUTS, ALL_INPUTS_AND_OUT, primitive, unbatchable
from tracer.ops.tangent_rules import TRANSPOSED_VJP
from tracer.ops.tuple_ops import TupleValue, get
from tracer.passes.gradient import vjp_graph
from tracer.tensor import Tensor

# ---------------------------------------------------------------------------------------
# while_loop


def while_loop(
    cond,
    body,
    loop_vars,
    shape_invariants=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    maximum_iterations=None,
    name=None,
):
    """Repeat `body` while `cond` is true: TensorFlow's `tf.while_loop`.

    `cond(*loop_vars)` returns a boolean scalar and `body(*loop_vars)` the new loop
    variables, of the same structure, dtypes and shapes (a shape may change between
    iterations only eagerly, where `shape_invariants` allows it). At most
    `maximum_iterations` iterations run; inside a `tt.function`, the gradient of a loop
    needs that bound (the compiled loop keeps the state of each iteration for its reverse).

    >>> tt.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2.0), (0, 1.0))[1].numpy()
    16.0
    """
    if not callable(cond) or not callable(body):
        raise TypeError("tt.while_loop: cond and body must be callables")
    single = not isinstance(loop_vars, (list, tuple))
    structure = [loop_vars] if single else loop_vars
    flat = [convert.as_tensor(v) for v in nest.flatten(structure)]
    if not flat:
        raise ValueError("tt.while_loop: loop_vars must hold at least one tensor")
    limit = _static_int(maximum_iterations, "maximum_iterations")
    values = nest.pack_sequence_as(structure, flat)
    if state.trace is None and not state.building:
        result = _eager_while(cond, body, values, shape_invariants, limit)
    else:
        result = _traced_while(cond, body, values, limit)
    return result[0] if single else result


def _eager_while(cond, body, values, shape_invariants, limit):
    count = 0
    while limit is None or count < limit:
        if not _truth(cond(*values), "the condition of tt.while_loop"):
            break
        values = _next_values(values, body(*values), shape_invariants)
        count += 1
    return values


def _truth(pred, what):
    """The Python truth of a boolean scalar (tensor or Python bool), or a clear error."""
    pred = convert.as_tensor(pred)
    if pred.shape != () or not pred.dtype.is_bool:
        raise TypeError(
            f"{what} must be a boolean scalar, not {pred.dtype.name}{list(pred.shape)}"
            f"{_at_user_line()}"
        )
    return bool(pred)


def _next_values(values, new, shape_invariants):
    """The body's result as loop variables (the structure of `values`), checked."""
    if len(values) == 1 and not isinstance(new, (list, tuple)):
        new = [new]
    flat_new = nest.flatten(list(new))
    flat_old = nest.flatten(list(values))
    if len(flat_new) != len(flat_old):
        raise ValueError(
            f"the body of tt.while_loop returned {len(flat_new)} values for "
            f"{len(flat_old)} loop variables{_at_user_line()}"
        )
    invariants = (
        [None] * len(flat_old)
        if shape_invariants is None
        else _shapes_of(list(values), list(shape_invariants))
    )
    tensors = []
    for k, (old, value, invariant) in enumerate(zip(flat_old, flat_new, invariants)):
        value = convert.as_tensor(value)
        _check_loop_variable(k, old, value, invariant)
        tensors.append(value)
    return nest.pack_sequence_as(list(new), tensors)


def _shapes_of(structure, shapes):
    """The leaves of `shapes`, a structure like `structure` whose leaves are shapes (lists
    of sizes and None), in the order of structure's leaves."""
    if isinstance(structure, dict):
        return [s for key in sorted(structure) for s in _shapes_of(structure[key], shapes[key])]
    if isinstance(structure, (list, tuple)):
        return [s for a, b in zip(structure, shapes) for s in _shapes_of(a, b)]
    return [shapes]


def _check_loop_variable(k, old, value, invariant=None):
    if value.dtype != old.dtype:
        raise TypeError(
            f"loop variable {k} of tt.while_loop enters the loop as {old.dtype.name} and is "
            f"{value.dtype.name} after one iteration{_at_user_line()}"
        )
    allowed = old.shape if invariant is None else tuple(invariant)
    fits = len(allowed) == len(value.shape) and all(
        a is None or a == b for a, b in zip(allowed, value.shape)
    )
    if not fits:
        raise ValueError(
            f"loop variable {k} of tt.while_loop enters the loop with shape {old.shape}, but "
            f"has shape {value.shape} after one iteration{_at_user_line()}. To allow the "
            "shape to vary across iterations (eagerly), use the `shape_invariants` argument "
            "of tt.while_loop to specify a less-specific shape."
        )


def _traced_while(cond, body, values, limit):
    values = _with_tensor_arrays_shaped(body, values)
    flat = nest.flatten(list(values))
    variables = []  # variables the body assigns: carried as loop variables too
    while True:
        traced_cond = trace_function(cond, values, "a tt.while_loop condition", variables, True)
        traced_body = trace_function(
            lambda *args: _loop_result(values, body(*args)),
            values,
            "a tt.while_loop body",
            variables,
            True,
        )
        if len(traced_cond.carried) == len(variables):  # (a condition that prints is refused)
            # a tt.print in the body carried the print stream: the condition carries it too
            traced_cond = traced_cond.with_carried(traced_body.carried[len(variables) :])
        variables = traced_cond.carried
        new = _new_variables(variables, traced_cond.assigned + traced_body.assigned)
        if not new and len(traced_body.carried) == len(variables):
            break
        variables = variables + new
    graph = traced_cond.graph  # its outputs: the result, then the carried variables' values
    assigned = [
        v
        for k, v in enumerate(variables)
        if graph.outputs[traced_cond.n_results + k] is not graph.inputs[len(flat) + k]
    ]
    if assigned:  # the loop runs the condition for its result alone
        raise NotImplementedError(
            f"the condition of tt.while_loop {printing.side_effects(assigned)}: compiled, a "
            f"condition gives its result alone; do that in the body{_at_user_line()}"
        )
    initial = flat + [state.trace.read(v) for v in variables]
    (pred,) = traced_cond.results[:1] or (None,)
    if traced_cond.n_results != 1 or pred.shape != () or not pred.dtype.is_bool:
        raise TypeError(
            f"the condition of tt.while_loop must return one boolean scalar{_at_user_line()}"
        )
    for k, (old, out) in enumerate(zip(initial, traced_body.graph.outputs)):
        _check_loop_variable(k, old, Tensor(None, out))
    captures = _union(traced_cond.captures, traced_body.captures)
    attrs = {
        "cond": Subgraph(_only_results(traced_cond.with_captures(captures), 1), "cond"),
        "body": Subgraph(traced_body.with_captures(captures), "body"),
        "n_vars": len(initial),
        "maximum_iterations": limit,
        "stacked": limit is not None and any(t.dtype.is_differentiable for t in initial),
    }
    inputs = [*initial, *tensors_of([traced_cond, traced_body], captures)]
    node = apply_symbolic(WHILE, tuple(inputs), attrs)
    results = [get(node, k) for k in range(len(initial))]
    for variable, value in zip(variables, results[len(flat) :]):
        state.trace.assign(variable, value)
    return nest.pack_sequence_as(values, results[: len(flat)])


def _with_tensor_arrays_shaped(body, values):
    """The loop variables, with each TensorArray that the loop writes before anything did
    given storage of the shape the body writes (found by tracing the body once)."""
    arrays = [v for v in _leaves_and_arrays(values) if hasattr(v, "_materialize_like")]
    if all(a._tensor_components() or a._eager for a in arrays):
        return values
    written = []

    def probe(*args):
        result = body(*args)
        result = [result] if len(values) == 1 and not isinstance(result, (list, tuple)) else result
        written.extend(v for v in _leaves_and_arrays(result) if hasattr(v, "_materialize_like"))

    trace_function(probe, values, "a tt.while_loop body")
    shaped = dict(zip(map(id, arrays), (a._materialize_like(w) for a, w in zip(arrays, written))))
    return _replace_arrays(values, shaped)


def _leaves_and_arrays(structure):
    """The leaves of `structure`, TensorArrays among them as themselves, in order."""
    if hasattr(structure, "_tensor_components"):
        return [structure]
    if isinstance(structure, dict):
        return [x for key in sorted(structure) for x in _leaves_and_arrays(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [x for item in structure for x in _leaves_and_arrays(item)]
    return [structure]


def _replace_arrays(structure, shaped):
    if id(structure) in shaped:
        return shaped[id(structure)]
    if isinstance(structure, dict):
        return type(structure)((k, _replace_arrays(v, shaped)) for k, v in structure.items())
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*(_replace_arrays(v, shaped) for v in structure))
    if isinstance(structure, (list, tuple)):
        return type(structure)(_replace_arrays(v, shaped) for v in structure)
    return structure


def _loop_result(values, new):
    """The body's result, as a list of the loop variables' structure."""
    if len(values) == 1 and not isinstance(new, (list, tuple)):
        new = [new]
    if len(nest.flatten(list(new))) != len(nest.flatten(list(values))):
        raise ValueError(
            f"the body of tt.while_loop returned {len(nest.flatten(list(new)))} values for "
            f"{len(nest.flatten(list(values)))} loop variables{_at_user_line()}"
        )
    return list(new)


def _new_variables(known, assigned):
    """The variables of `assigned` not in `known`, each once (variables compare by identity)."""
    new = {}
    for variable in assigned:
        if all(variable is not k for k in known):
            new.setdefault(id(variable), variable)
    return list(new.values())


def _only_results(graph, n):
    """`graph` without the outputs after its first `n` (a condition's variables)."""
    return with_outputs(graph.inputs, graph.outputs[:n])


def _union(*lists):
    """The nodes of `lists`, each once, in order of first appearance."""
    seen, union = set(), []
    for nodes in lists:
        for node in nodes:
            if id(node) not in seen:
                seen.add(id(node))
                union.append(node)
    return union


def _static_int(value, what):
    """A Python int (or None) for an argument that must be known when tracing."""
    if value is None:
        return None
    known = convert.static_int(value)
    if known is None:
        raise TypeError(
            f"tt.while_loop: {what} must be known when the loop is traced{_at_user_line()}"
        )
    return known


def _at_user_line():
    where = format_location(user_location())
    return f" (at {where})" if where else ""


def _infer_while(attrs, *inputs):
    variables = inputs[: attrs["n_vars"]]
    parts = [(v.shape, v.dtype) for v in variables] + [((), dtypes.int64)]
    if attrs["stacked"]:
        steps = attrs["maximum_iterations"]
        parts += [((steps, *v.shape), v.dtype) for v in variables]
    return (), TupleType(parts)


_RUNNERS = {}  # Subgraph -> its straight-line function (equal graphs share one)


def run_subgraph(subgraph, values):
    """The values of a held graph's outputs, run as straight-line numpy."""
    run = _RUNNERS.get(subgraph)
    if run is None:
        if len(_RUNNERS) > 1024:
            _RUNNERS.clear()
        run = _RUNNERS[subgraph] = straight_line(subgraph.graph)
    return run(*values)


def _while_kernel(*inputs, cond, body, n_vars, maximum_iterations, stacked):
    variables, captures = list(inputs[:n_vars]), inputs[n_vars:]
    stacks = []
    if stacked:
        stacks = [
            np.zeros((maximum_iterations, *np.shape(v)), np.asarray(v).dtype) for v in variables
        ]
    count = 0
    while maximum_iterations is None or count < maximum_iterations:
        (pred,) = run_subgraph(cond, [*variables, *captures])
        if not pred:
            break
        for stack, value in zip(stacks, variables):
            stack[count] = value
        variables = run_subgraph(body, [*variables, *captures])
        count += 1
    return TupleValue([*variables, np.int64(count), *stacks])


def _narrow_while(node, used):
    """The loop without its stacks when no `get` reads them."""
    n = node.attrs["n_vars"]
    if not node.attrs["stacked"] or any(k > n for k in used):
        return None
    attrs = {**node.attrs, "stacked": False}
    shape, dtype = _infer_while(attrs, *node.inputs)
    narrowed = Node(node.op, node.inputs, attrs, shape, dtype, node.location)
    return narrowed, {k: k for k in used}


def _while_grad(node, g, *saved):
    inputs, out = saved[:-1], saved[-1]
    n = node.attrs["n_vars"]
    if node.attrs["maximum_iterations"] is None:
        where = format_location(node.location)
        raise ValueError(
            "the gradient of a tt.while_loop inside a tt.function needs its "
            "maximum_iterations: the compiled loop keeps the state of each iteration, for "
            "its reverse, in storage of that many" + (f" (the loop at {where})" if where else "")
        )
    if not node.attrs["stacked"]:  # dropped as unused before a gradient asked: run it again
        again = {
            k: node.attrs[k].with_graph(bypassed(node.attrs[k].graph, "print"))
            for k in ("cond", "body")
        }
        out = apply(WHILE, inputs, {**node.attrs, **again, "stacked": True})  # (it printed once)
    body = node.attrs["body"].graph
    parts = node.dtype.parts
    captures = inputs[n:]
    var_positions = [j for j in range(n) if parts[j][1].is_differentiable]
    cap_positions = [k for k, c in enumerate(captures) if c.dtype.is_differentiable]
    restricted = with_outputs(body.inputs, [body.outputs[j] for j in var_positions])
    sources = [body.inputs[j] for j in var_positions] + [body.inputs[n + k] for k in cap_positions]
    vjp = vjp_graph(restricted, sources)
    finals = g.dense(node, var_positions)
    stacked_parts = g.parts[n + 1 :]  # none when the forward loop was narrowed
    stack_cotangents = {
        j: stacked_parts[j] for j in var_positions if stacked_parts and stacked_parts[j] is not None
    }
    count = get(out, n)
    stacks = [get(out, n + 1 + j) for j in range(n)]
    sums = [array_ops.zeros(captures[k].shape, captures[k].dtype) for k in cap_positions]

    def backward_body(k, cotangents, sums):
        k = k - 1
        states = [index_ops.gather(stack, k) for stack in stacks]
        results = execute_graph(vjp, [*states, *captures, *cotangents])
        cotangents = results[: len(var_positions)]
        for position, j in enumerate(var_positions):
            if j in stack_cotangents:
                cotangents[position] = cotangents[position] + index_ops.gather(
                    stack_cotangents[j], k
                )
        sums = [a + b for a, b in zip(sums, results[len(var_positions) :])]
        return k, cotangents, sums

    _, cotangents, sums = while_loop(
        lambda k, cotangents, sums: k > 0,
        backward_body,
        (count, finals, sums),
        maximum_iterations=node.attrs["maximum_iterations"],
    )
    grads = [None] * len(node.inputs)
    for position, j in enumerate(var_positions):
        grads[j] = cotangents[position]
    for position, k in enumerate(cap_positions):
        grads[n + k] = sums[position]
    return tuple(grads)


# A loop of at most this many iterations runs as its iterations unrolled would, to the end:
# only loops that may run longer are watched for Ctrl-C (runtime/interrupts.py).
WATCHED_ABOVE = 64


def _emit_while(node, site):
    """for (count = 0; count < maximum_iterations; count++) { [watch;] if (!cond) break;
    [stack the state;] body; the body's results become the loop variables }"""
    n = node.attrs["n_vars"]
    parts = node.dtype.parts
    count = site.fresh("count")
    variables = [site.result(j) for j in range(n)]
    captures = [site.input(k) for k in range(n, len(node.inputs))]
    sizes = [site.bytes(*parts[j]) for j in range(n)]
    lines = ["{"]
    for j in range(n):
        lines.append(f"    memcpy({variables[j]}, {site.input(j)}, {sizes[j]});")
    limit = node.attrs["maximum_iterations"]
    declarations, watch = site.watch(count) if limit is None or limit > WATCHED_ABOVE else ([], [])
    lines.append(f"    int64_t {count} = 0;")
    lines += ["    " + line for line in declarations]
    lines.append(
        f"    for (;; {count}++) {{"
        if limit is None
        else f"    for (; {count} < {limit}; {count}++) {{"
    )
    lines += ["        " + line for line in watch]
    cond_lines, (pred,) = site.region(node.attrs["cond"].graph, [*variables, *captures])
    lines += ["        " + line for line in cond_lines]
    lines.append(f"        if (!*(const bool *){pred}) break;")
    if node.attrs["stacked"]:
        for j in range(n):
            stack = site.result(n + 1 + j)
            lines.append(
                f"        memcpy({stack} + {count} * {sizes[j]}, {variables[j]}, {sizes[j]});"
            )
    body_lines, outputs = site.region(node.attrs["body"].graph, [*variables, *captures])
    lines += ["        " + line for line in body_lines]
    lines += ["        " + line for line in _assignments(site, variables, outputs, parts[:n])]
    lines.append("    }")
    lines.append(f"    *(int64_t *){site.result(n)} = {count};")
    lines.append("}")
    return lines


def _assignments(site, targets, sources, parts):
    """memcpy statements that give each target the value at its source, all at once (a
    source that is another target is read before any target is written)."""
    lines, staged = [], []
    for target, source, part in zip(targets, sources, parts):
        if source == target:
            continue
        if source in targets:  # a loop variable's old value: copied aside first
            aside = site.scratch(*part)
            lines.append(f"memcpy({aside}, {source}, {site.bytes(*part)});")
            source = aside
        staged.append(f"memcpy({target}, {source}, {site.bytes(*part)});")
    return lines + staged


WHILE = primitive(
    "while",
    _infer_while,
    grad=_while_grad,
    saves=ALL_INPUTS_AND_OUT,
    jvp=TRANSPOSED_VJP,
    batch=unbatchable("is a loop; a jacobian through it loops over its rows"),
    kernel=_while_kernel,
    c=forms.Structured(_emit_while),
    narrow=_narrow_while,
)


# ---------------------------------------------------------------------------------------
# cond


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
        return true_fn() if _truth(pred, "the predicate of tt.cond") else false_fn()
    if pred.shape != () or not pred.dtype.is_bool:
        raise TypeError(
            f"the predicate of tt.cond must be a boolean scalar, not "
            f"{pred.dtype.name}{list(pred.shape)}{_at_user_line()}"
        )
    return _traced_cond(pred, true_fn, false_fn)


def _traced_cond(pred, true_fn, false_fn):
    branches = [
        trace_function(fn, (), f"the {side} branch of tt.cond")
        for fn, side in ((true_fn, "true"), (false_fn, "false"))
    ]
    # variables a branch assigns: results of both (each branch is traced once, as in TF)
    variables = _new_variables([], [v for b in branches for v in b.assigned])
    true, false = (b.with_variables(variables) for b in branches)
    _check_branches(true, false)
    captures = _union(true.captures, false.captures)
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
            f"\n  false_fn output: {_summary(false.structure)}{_at_user_line()}"
        )
    for k, (a, b) in enumerate(zip(true.graph.outputs, false.graph.outputs)):
        if a.dtype != b.dtype or a.shape != b.shape:
            raise ValueError(
                f"the branches of tt.cond return different tensors at position {k}: "
                f"{a.dtype.name}{list(a.shape)} and {b.dtype.name}{list(b.shape)}"
                f"{_at_user_line()}"
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
    grad=_cond_grad,
    saves=ALL_INPUTS,
    jvp=TRANSPOSED_VJP,
    batch=unbatchable("branches; a jacobian through it loops over its rows"),
    kernel=_cond_kernel,
    c=forms.Structured(_emit_cond),
    narrow=_narrow_cond,
)
