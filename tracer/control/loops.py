"""`tt.while_loop`: a loop, eager and compiled.

Eagerly (no trace), it is Python's own `while` on the tensors' values, and a tape records
the ops that run, as in TensorFlow. While tracing, it is one region (region.py) holding its
condition and body as graphs (`subgraph.trace_function`): the values they read from outside
are the op's inputs, so tapes see them, and its results are `get`s of the op's one node.
The interpreter runs the graphs in a Python loop; the C backend writes a real `for` around
their code.

    while (inputs: loop variables, captures; results: the variables' final values, the
           count of iterations, then, where a gradient reads them, the stack of each
           variable's values at the start of the iterations, `capacity` rows, and the
           stride: the stacks hold the iterations 0, stride, 2 stride, ...)

The gradient of a loop is a loop: the reverse replays the iterations backwards from the
stacked states, running the body's vector-Jacobian product once per iteration; being
itself a while loop, it has a gradient too, to any order. The stacks exist only where a
gradient reads them: dead-code elimination drops them otherwise (`_narrow_while`).

Their capacity is `maximum_iterations` where the loop has one: every iteration is stacked
(the stride is 1). A loop without one has a fixed budget of rows (`_capacity`, a power of
two); when an iteration finds them full, every other row is dropped and the stride doubles,
so the stacks always hold evenly spaced iterations over the whole run, and the reverse
recomputes a state that is not held by running the body on from the row before it
(`_replayed_state`). A loop of any length has a gradient, compiled as eagerly, in memory
that does not grow with its length; the body runs about `stride / 2` extra times per
iteration, where stride is the smallest power of two with length <= capacity * stride. The
budget is fixed while tracing: where a variable's size is known only when the function runs,
each unknown dimension is counted as `Dim.estimate`'s stand-in (256), so the stacks of a
larger one take that many times STACK_BYTES.
"""

import numpy as np

from codegen import forms
from tracer import dtypes, nest, printing
from tracer.context import state
from tracer.control.region import (
    assignments,
    at_user_line,
    in_scope,
    indented,
    inputs_read,
    new_variables,
    open_scope,
    run_subgraph,
    static_int,
    truth,
    union,
)
from tracer.control.region_batching import batch_while
from tracer.control.subgraph import tensors_of, trace_function
from tracer.errors import RunsAsPython
from tracer.ir import Literal, Node, Subgraph, TupleType, dims
from tracer.ir.rewrite import bypassed, on_new_inputs, with_outputs
from tracer.ops import array_ops, convert, index_ops, math_ops, structure_ops
from tracer.ops.core import apply, apply_symbolic, execute_graph
from tracer.ops.registry import ALL_INPUTS_AND_OUT, primitive
from tracer.ops.tangent_rules import TRANSPOSED_VJP
from tracer.ops.tuple_ops import TupleValue, get
from tracer.passes.gradient import vjp_graph
from tracer.tensor import Tensor


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
    iterations where `shape_invariants` allows it: in a traced function, which then runs as
    Python at each call). `loop_vars` may be empty
    where the body assigns variables (the loop's state is then theirs alone). At most
    `maximum_iterations` iterations run (a Python int or an integer tensor); with a bound
    known when tracing, a compiled loop's gradient keeps every iteration's state in storage
    made in advance (without it, see the module's docstring). `back_prop=False` stops
    gradients at the results, eagerly too (TensorFlow's graphs stop them; its eager loop
    ignores the flag).

    >>> tt.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2.0), (0, 1.0))[1].numpy()
    16.0
    """
    if not callable(cond) or not callable(body):
        raise TypeError("tt.while_loop: cond and body must be callables")
    single = not isinstance(loop_vars, (list, tuple))
    structure = [loop_vars] if single else loop_vars
    flat = [convert.as_tensor(v) for v in nest.flatten(structure)]
    values = nest.pack_sequence_as(structure, flat)
    if maximum_iterations is not None and convert.static_int(maximum_iterations) is None:
        result = _bounded_by_tensor(cond, body, values, maximum_iterations, name)
    elif state.trace is None and not state.building:
        limit = static_int(maximum_iterations, "maximum_iterations")
        result = _eager_while(cond, body, values, shape_invariants, limit)
    else:
        limit = static_int(maximum_iterations, "maximum_iterations")
        scope = open_scope("while", name)
        result = _traced_while(
            in_scope(cond, scope), in_scope(body, scope), values, limit, False, shape_invariants
        )
    if not back_prop:
        result = stop_gradients(result)
    return result[0] if single else result


def stop_gradients(structure):
    """`structure` with no gradient through its tensors (`back_prop=False`)."""
    return nest.pack_sequence_as(
        structure, [array_ops.stop_gradient(t) for t in nest.flatten(structure)]
    )


def _bounded_by_tensor(cond, body, values, maximum_iterations, name):
    """The loop with a bound known only when the function runs: a counter, one more loop
    variable, that the condition compares with it (the stacks of a gradient are then those of
    a loop with no bound)."""
    bound = convert.as_tensor(maximum_iterations)
    if bound.shape != () or not bound.dtype.is_integer:
        raise TypeError(
            f"tt.while_loop: maximum_iterations must be an integer scalar, not a "
            f"{bound.dtype.name} tensor of shape {bound.shape}{at_user_line()}"
        )

    def counted_cond(count, values):
        more = math_ops.less(count, bound)
        return math_ops.logical_and(more, convert.as_tensor(cond(*values)))

    def counted_body(count, values):
        return count + 1, _loop_result(values, body(*values))

    zero = array_ops.zeros((), bound.dtype)
    return while_loop(counted_cond, counted_body, (zero, values), name=name)[1]


def while_loop_states(cond, body, loop_vars, maximum_iterations):
    """(`tt.while_loop(cond, body, loop_vars, maximum_iterations=...)`, and for each tensor
    of loop_vars in flattened order, its values at the start of every iteration stacked:
    `maximum_iterations` rows, zeros past the iterations that ran). `tt.scan` reads its
    results there: they are the stacks a compiled loop's gradient keeps anyway."""
    flat = [convert.as_tensor(v) for v in nest.flatten(list(loop_vars))]
    limit = static_int(maximum_iterations, "maximum_iterations")
    values = nest.pack_sequence_as(list(loop_vars), flat)
    if state.trace is None and not state.building:
        rows = []
        result = _eager_while(cond, body, values, None, limit, rows)
        zeros = [array_ops.zeros((limit - len(rows), *t.shape), t.dtype) for t in flat]
        ran = [
            [structure_ops.stack([row[j] for row in rows])] if rows else []
            for j in range(len(flat))
        ]
        stacks = [structure_ops.concat([*ran[j], zeros[j]], 0) for j in range(len(flat))]
        return result, stacks
    return _traced_while(cond, body, values, limit, keep_states=True)


def _eager_while(cond, body, values, shape_invariants, limit, rows=None):
    count = 0
    while limit is None or count < limit:
        if not truth(cond(*values), "the condition of tt.while_loop"):
            break
        if rows is not None:
            rows.append(nest.flatten(list(values)))
        values = _next_values(values, body(*values), shape_invariants)
        count += 1
    return values


def _next_values(values, new, shape_invariants):
    """The body's result as loop variables (the structure of `values`), checked."""
    if new is None and not nest.flatten(list(values)):  # a body that only assigns variables
        new = []
    if len(values) == 1 and not isinstance(new, (list, tuple)):
        new = [new]
    flat_new = nest.flatten(list(new))
    flat_old = nest.flatten(list(values))
    if len(flat_new) != len(flat_old):
        raise ValueError(
            f"the body of tt.while_loop returned {len(flat_new)} values for "
            f"{len(flat_old)} loop variables{at_user_line()}"
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
    return nest.pack_sequence_as(new, tensors)  # the body's structure, as TF's eager loop


def _shapes_of(structure, shapes):
    """The leaves of `shapes`, a structure like `structure` whose leaves are shapes (lists
    of sizes and None), in the order of structure's leaves."""
    if isinstance(structure, dict):
        return [s for key in sorted(structure) for s in _shapes_of(structure[key], shapes[key])]
    if isinstance(structure, (list, tuple)):
        return [s for a, b in zip(structure, shapes) for s in _shapes_of(a, b)]
    return [shapes]


def _check_loop_variable(k, old, value, invariant=None, compiled=False):
    """TypeError or ValueError where loop variable `k` leaves an iteration with another dtype,
    or a shape that neither its own nor `invariant` allows. `compiled`: in a traced loop,
    whose variables keep their shapes: one that `invariant` lets change makes the traced
    function run as Python (RunsAsPython), as TensorFlow's graph loop takes it."""
    if value.dtype != old.dtype:
        raise TypeError(
            f"loop variable {k} of tt.while_loop enters the loop as {old.dtype.name} and is "
            f"{value.dtype.name} after one iteration{at_user_line()}"
        )
    if _fits(old.shape, value.shape):
        return
    changed = (
        f"loop variable {k} of tt.while_loop enters the loop with shape {old.shape}, but "
        f"has shape {value.shape} after one iteration{at_user_line()}"
    )
    if invariant is not None and _fits(tuple(invariant), value.shape):
        if not compiled:
            return
        if state.trace is not None:
            raise RunsAsPython(
                f"has a {changed}, as its shape_invariants allow: compiled code holds sizes "
                "known when tracing, so the function runs as Python at each call (a "
                "tt.TensorArray, or a tensor of the final size made before the loop, keeps "
                "it compiled)"
            )
    if compiled:
        raise ValueError(
            f"{changed}. A compiled loop's variables keep their shapes: write each "
            "iteration's values into a tt.TensorArray, or into a tensor of the final size "
            "made before the loop, instead of growing a tensor (or give `shape_invariants` "
            "that allow the change: the function then runs as Python)."
        )
    raise ValueError(
        f"{changed}. To allow the shape to vary across iterations, use the "
        "`shape_invariants` argument of tt.while_loop to specify a less-specific shape."
    )


def _fits(allowed, shape):
    """Whether `shape` is `allowed` (a shape whose None sizes take any size)."""
    return len(allowed) == len(shape) and all(a is None or a == b for a, b in zip(allowed, shape))


def _traced_while(cond, body, values, limit, keep_states=False, shape_invariants=None):
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
        new = new_variables(variables, traced_cond.assigned + traced_body.assigned)
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
            f"condition gives its result alone; do that in the body{at_user_line()}"
        )
    initial = flat + [state.trace.read(v) for v in variables]
    if not initial:
        raise ValueError(
            "tt.while_loop: loop_vars must hold at least one tensor, or the body assign a "
            f"variable: a loop with no state would run forever or not at all{at_user_line()}"
        )
    (pred,) = traced_cond.results[:1] or (None,)
    if traced_cond.n_results != 1 or pred.shape != () or not pred.dtype.is_bool:
        raise TypeError(
            f"the condition of tt.while_loop must return one boolean scalar{at_user_line()}"
        )
    invariants = [None] * len(initial)
    if shape_invariants is not None:
        invariants[: len(flat)] = _shapes_of(list(values), list(shape_invariants))
    for k, (old, out, invariant) in enumerate(zip(initial, traced_body.graph.outputs, invariants)):
        _check_loop_variable(k, old, Tensor(None, out), invariant, compiled=True)
    captures = union(traced_cond.captures, traced_body.captures)
    attrs = {
        "cond": Subgraph(_only_results(traced_cond.with_captures(captures), 1), "cond"),
        "body": Subgraph(traced_body.with_captures(captures), "body"),
        "n_vars": len(initial),
        "maximum_iterations": limit,
        "capacity": limit if limit is not None else _capacity(initial),
        "stacked": keep_states or any(t.dtype.is_differentiable for t in initial),
    }
    inputs = [*initial, *tensors_of([traced_cond, traced_body], captures)]
    node = apply_symbolic(WHILE, tuple(inputs), attrs)
    results = [get(node, k) for k in range(len(initial))]
    for variable, value in zip(variables, results[len(flat) :]):
        state.trace.assign(variable, value)
    result = nest.pack_sequence_as(values, results[: len(flat)])
    if keep_states:
        return result, [get(node, len(initial) + 1 + j) for j in range(len(flat))]
    return result


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
    if new is None and not nest.flatten(list(values)):  # a body that only assigns variables
        new = []
    if len(values) == 1 and not isinstance(new, (list, tuple)):
        new = [new]
    if len(nest.flatten(list(new))) != len(nest.flatten(list(values))):
        raise ValueError(
            f"the body of tt.while_loop returned {len(nest.flatten(list(new)))} values for "
            f"{len(nest.flatten(list(values)))} loop variables{at_user_line()}"
        )
    return list(new)


def _only_results(graph, n):
    """`graph` without the outputs after its first `n` (a condition's variables)."""
    return with_outputs(graph.inputs, graph.outputs[:n])


def _infer_while(attrs, *inputs):
    variables = inputs[: attrs["n_vars"]]
    parts = [(v.shape, v.dtype) for v in variables] + [((), dtypes.int64)]
    if attrs["stacked"]:
        parts += [((attrs["capacity"], *v.shape), v.dtype) for v in variables]
        parts.append(((), dtypes.int64))  # the stride
    return (), TupleType(parts)


def stride_index(n_vars):
    """The position of a stacked loop's stride among its results."""
    return 2 * n_vars + 1


def _while_kernel(*inputs, cond, body, n_vars, maximum_iterations, capacity, stacked):
    variables, captures = list(inputs[:n_vars]), inputs[n_vars:]
    stacks = []
    if stacked:
        stacks = [np.zeros((capacity, *np.shape(v)), np.asarray(v).dtype) for v in variables]
    count, stride = 0, 1
    while maximum_iterations is None or count < maximum_iterations:
        (pred,) = run_subgraph(cond, [*variables, *captures])
        if not pred:
            break
        if stacks and count % stride == 0:
            row = count // stride
            if row == capacity:  # full (only without maximum_iterations): keep the even rows
                for stack in stacks:
                    stack[: capacity // 2] = stack[::2]
                stride, row = 2 * stride, row // 2
            for stack, value in zip(stacks, variables):
                stack[row] = value
        variables = run_subgraph(body, [*variables, *captures])
        count += 1
    strides = [np.int64(stride)] if stacked else []
    return TupleValue([*variables, np.int64(count), *stacks, *strides])


def _run_once(node, simplified):
    """The results of a loop that runs exactly once (at most one iteration, and a condition
    that its initial values make a known True), made of the body's nodes on those values:
    the variables' next values, a count of 1, and stacks of one row, the initial values.
    None for any other loop. (The simplification pass asks: `OpDef.resolve`.)"""
    attrs = node.attrs
    if attrs["maximum_iterations"] != 1 or (attrs["stacked"] and attrs["capacity"] != 1):
        return None
    (pred,) = _inlined(attrs["cond"].graph, node.inputs, simplified)
    if pred.op != "const" or not bool(pred.attrs["value"].array):
        return None
    n = attrs["n_vars"]
    one = Node("const", (), {"value": Literal(np.int64(1))}, (), dtypes.int64, node.location)
    results = [*_inlined(attrs["body"].graph, node.inputs, simplified), one]
    if attrs["stacked"]:
        for value in node.inputs[:n]:
            shape = (1, *value.shape)
            results.append(
                Node("reshape", (value,), {"shape": shape}, shape, value.dtype, node.location)
            )
        results.append(one)  # the stride
    return results


def _inlined(graph, inputs, simplified):
    """The outputs of the held `graph` computed on `inputs`, nodes of the graph around it,
    each new node `simplified`."""
    mapping = {id(n): value for n, value in zip(graph.inputs, inputs)}
    for node in graph.nodes:
        if id(node) not in mapping:
            mapping[id(node)] = simplified(on_new_inputs(node, mapping))
    return [mapping[id(o)] for o in graph.outputs]


def _narrow_while(node, used):
    """The loop without what no `get` reads: its stacks when none is read, and the loop
    variables (and captures) that neither a read result, nor the condition, nor another
    kept variable's next value depends on (a gradient's sums for values not asked for)."""
    n = node.attrs["n_vars"]
    cond, body = node.attrs["cond"].graph, node.attrs["body"].graph
    stacked = node.attrs["stacked"] and any(k > n for k in used)
    counts = (n, stride_index(n))  # (the count and the stride: no variable's)
    kept = {k if k < n else k - n - 1 for k in used if k not in counts}
    kept |= inputs_read(cond, cond.outputs)
    while True:
        more = kept | inputs_read(body, [body.outputs[j] for j in kept if j < n])
        if more == kept:
            break
        kept = more
    variables = [j for j in range(n) if j in kept]
    captures = [k for k in range(n, len(node.inputs)) if k in kept]
    if (
        len(variables) == n
        and len(captures) == len(node.inputs) - n
        and (stacked == node.attrs["stacked"])
    ):
        return None
    positions = variables + captures
    held = {
        key: Subgraph(
            with_outputs([graph.inputs[k] for k in positions], outputs), node.attrs[key].name
        )
        for key, graph, outputs in (
            ("cond", cond, cond.outputs),
            ("body", body, [body.outputs[j] for j in variables]),
        )
    }
    attrs = {**node.attrs, **held, "n_vars": len(variables), "stacked": stacked}
    inputs = tuple(node.inputs[k] for k in positions)
    shape, dtype = _infer_while(attrs, *inputs)
    narrowed = Node(node.op, inputs, attrs, shape, dtype, node.location)
    m = len(variables)
    renumbered = {j: new for new, j in enumerate(variables)}
    indices = {n: m, stride_index(n): stride_index(m)}
    for k in used:
        if k < n:
            indices[k] = renumbered[k]
        elif k not in counts:
            indices[k] = m + 1 + renumbered[k - n - 1]
    return narrowed, indices


def _while_grad(node, g, *saved):
    inputs, out = saved[:-1], saved[-1]
    n = node.attrs["n_vars"]
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
    stack_cotangents = [  # (dense: a part read by slices may come as tt.IndexedSlices)
        convert.as_tensor(stacked_parts[j])
        if stacked_parts and stacked_parts[j] is not None
        else None
        for j in range(n)
    ]
    count = get(out, n)
    stacks = [get(out, n + 1 + j) for j in range(n)]
    sums = [array_ops.zeros(captures[k].shape, captures[k].dtype) for k in cap_positions]
    bounded = node.attrs["maximum_iterations"] is not None
    stride = None if bounded else get(out, stride_index(n))  # (bounded: every iteration)

    def backward_body(k, cotangents, sums):
        k = k - 1
        if bounded:
            states, extra = _stored_state(k, stacks, stack_cotangents)
        else:
            states, extra = _replayed_state(node, k, stride, stacks, stack_cotangents, captures)
        results = execute_graph(vjp, [*states, *captures, *cotangents])
        cotangents = results[: len(var_positions)]
        for position, j in enumerate(var_positions):
            if extra[j] is not None:
                cotangents[position] = cotangents[position] + extra[j]
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


def _stored_state(k, stacks, stack_cotangents):
    """The loop variables at the start of iteration `k`, and the cotangents that reached
    them through the stacks (None where none did), read from the stacks."""
    states = [index_ops.gather(stack, k) for stack in stacks]
    extra = [None if c is None else index_ops.gather(c, k) for c in stack_cotangents]
    return states, extra


def _replayed_state(node, k, stride, stacks, stack_cotangents, captures):
    """As `_stored_state`, for a loop with no maximum_iterations, whose stacks hold every
    `stride`-th iteration: the state of iteration `k` is the body run `k mod stride` times
    from the row of the iteration before it that is held."""
    body = node.attrs["body"].graph
    row = k // stride
    steps = k - row * stride
    _, states = while_loop(
        lambda j, states: j < steps,
        lambda j, states: (j + 1, execute_graph(body, [*states, *captures])),
        (array_ops.zeros((), k.dtype), [index_ops.gather(s, row) for s in stacks]),
    )
    held = math_ops.equal(steps, 0)  # a row's cotangent reaches the iteration it holds
    return states, [None if c is None else _where_held(held, c, row) for c in stack_cotangents]


def _where_held(held, stack_cotangent, row):
    """The cotangent of stack row `row` where the iteration is the one it holds, else 0."""
    value = index_ops.gather(stack_cotangent, row)
    return math_ops.where(held, value, array_ops.zeros_like(value))


def _capacity(initial):
    """How many rows the stacks of a loop with no maximum_iterations have: as many as fit
    in STACK_BYTES, rounded down to a power of two (the rows halve when full), at least two.
    A variable whose size is known only when the function runs (a `TensorSpec(None)`
    dimension) is counted with each unknown dimension taken as `Dim.estimate`'s stand-in."""
    size = sum(_estimated_size(t.shape) * t.dtype.itemsize for t in initial)
    rows = max(2, min(STACK_ITERATIONS, STACK_BYTES // max(size, 1)))
    return 1 << (rows.bit_length() - 1)


def _estimated_size(shape):
    size = dims.size(shape)
    return size.estimate() if isinstance(size, dims.Dim) else int(size)


# The stacks of a loop with no maximum_iterations: at most this many rows and bytes.
STACK_ITERATIONS = 65536


STACK_BYTES = 64 * 2**20


# A loop of at most this many iterations runs as its iterations unrolled would, to the end:
# only loops that may run longer are watched for Ctrl-C (runtime/interrupts.py).
WATCHED_ABOVE = 64


def _emit_while(node, site):
    """for (count = 0; count < maximum_iterations; count++) { [watch;] if (!cond) break;
    [stack the state;] body; the body's results become the loop variables }"""
    n = node.attrs["n_vars"]
    parts = node.dtype.parts
    count, stride = site.fresh("count"), site.fresh("stride")
    variables = [site.result(j) for j in range(n)]
    captures = [site.input(k) for k in range(n, len(node.inputs))]
    sizes = [site.bytes(*parts[j]) for j in range(n)]
    lines = ["{"]
    for j in range(n):
        lines.append(f"    memcpy({variables[j]}, {site.input(j)}, {sizes[j]});")
    limit = node.attrs["maximum_iterations"]
    declarations, watch = site.watch(count) if limit is None or limit > WATCHED_ABOVE else ([], [])
    lines.append(f"    int64_t {count} = 0;")
    if node.attrs["stacked"]:
        lines.append(f"    int64_t {stride} = 1;")
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
        lines += indented(_stacking(node, site, count, stride, variables, sizes), 2)
    body_lines, outputs = site.region(node.attrs["body"].graph, [*variables, *captures])
    lines += ["        " + line for line in body_lines]
    lines += ["        " + line for line in assignments(site, variables, outputs, parts[:n])]
    lines.append("    }")
    lines.append(f"    *(int64_t *){site.result(n)} = {count};")
    if node.attrs["stacked"]:
        lines.append(f"    *(int64_t *){site.result(stride_index(n))} = {stride};")
    lines.append("}")
    return lines


def _variables_written_back(node):
    """(output, input) of the body: each output is the next value of the input's loop
    variable, which the C may write straight over the variable (codegen.forms.Structured)."""
    return [(j, j) for j in range(node.attrs["n_vars"])]


def _stacking(node, site, count, stride, variables, sizes):
    """The C that stores the loop variables in their stacks at the start of an iteration:
    at row `count` with maximum_iterations; without it, every `stride`-th iteration, the
    even rows kept and the stride doubled when the rows are full (see the module's
    docstring)."""
    n = node.attrs["n_vars"]
    stacks = [site.result(n + 1 + j) for j in range(n)]
    if node.attrs["maximum_iterations"] is not None:
        return [
            f"memcpy({s} + {count} * {z}, {v}, {z});" for s, v, z in zip(stacks, variables, sizes)
        ]
    capacity = node.attrs["capacity"]
    row, i = site.fresh("row"), site.fresh("i")
    halving = [f"memcpy({s} + {i} * {z}, {s} + 2 * {i} * {z}, {z});" for s, z in zip(stacks, sizes)]
    return [
        f"if ({count} % {stride} == 0) {{",
        f"    int64_t {row} = {count} / {stride};",
        f"    if ({row} == {capacity}) {{",
        f"        for (int64_t {i} = 1; {i} < {capacity // 2}; {i}++) {{",
        *indented(halving, 3),
        "        }",
        f"        {stride} *= 2;",
        f"        {row} = {capacity // 2};",
        "    }",
        *[f"    memcpy({s} + {row} * {z}, {v}, {z});" for s, v, z in zip(stacks, variables, sizes)],
        "}",
    ]


WHILE = primitive(
    "while",
    _infer_while,
    strings=True,
    grad=_while_grad,
    saves=ALL_INPUTS_AND_OUT,
    jvp=TRANSPOSED_VJP,
    batch=batch_while,
    kernel=_while_kernel,
    c=forms.Structured(_emit_while, carried=lambda node: {"body": _variables_written_back(node)}),
    narrow=_narrow_while,
    resolve=_run_once,
)
