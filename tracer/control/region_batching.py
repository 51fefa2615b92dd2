"""Batching rules of the region ops `while` and the branches (`cond`, `switch`,
`recompute`): a vectorized jacobian (or `tt.vectorized_map`) through a loop, a branch or a
recomputed function runs one loop, branch or function on the whole batch, not one per row.

    while[cond, body] (x: f32[3], w: f32[3])              while[cond', body'] (x: f32[B,3], w)
    x batched by B                                   =>   cond', body': the held graphs with
                                                          their batched values batched

A held graph is batched by the vectorize pass itself (`passes/vectorize.py`), so regions
nested in it batch by these same rules. The rules follow JAX's vmap and TensorFlow's pfor:

- while, its condition not depending on the batch: one loop. A loop variable is batched
  when it enters batched or the body makes it depend on a batched value (iterated to a
  fixed point over the variables).
- while, its condition depending on the batch: the loop runs while any row's condition
  holds; a row whose condition failed keeps its values (`where(running, new, old)`) and
  its count of iterations stops.
- a branch, its selector not depending on the batch (or none, recompute's): one node of
  the batched branches.
- a branch, its selector depending on the batch: every branch runs batched, and each row
  takes its branch's values (`where`).

A custom gradient has none: its gradient function is the user's Python, written for one
row (a vectorized jacobian runs it row by row, `custom.CUSTOM_VJP`).

A rule gives the node's results one by one (`core.Results`, which the rule of `get` takes
apart), each with the batch axis: a loop's count and its unbatched variables broadcast.
"""

from tracer import dtypes
from tracer.context import building_graph
from tracer.control.region import held, selectors
from tracer.ir import Node, Subgraph, format_location
from tracer.ir.rewrite import with_outputs
from tracer.ops import array_ops, broadcast_ops, convert, math_ops, reduction_ops
from tracer.ops.core import Results, apply, apply_symbolic, execute_graph, graph_node_of
from tracer.ops.registry import OPS, NotVectorizable
from tracer.ops.tuple_ops import get
from tracer.passes.vectorize import vectorize
from tracer.tensor import Tensor

# ops whose every run is seen outside (a row that runs a branch or an iteration it should
# not would repeat it)
SIDE_EFFECT_OPS = ("print",)


def batch_while(node, args, flags, size):
    """The batching rule of `while` (see the module's docstring): `args` are the loop's
    initial variables then its captures, those marked in `flags` with a leading axis of
    `size`; returns a node of several results, each with the batch axis.

    Raises NotVectorizable where a held graph holds an op that cannot be batched (the
    caller loops over the rows instead)."""
    n = node.attrs["n_vars"]
    captured = [k for k in range(n, len(args)) if flags[k]]
    carried = _batched_variables(node, {j for j in range(n) if flags[j]}, captured, size)
    cond, (runs_per_row,) = _batched_region(node.attrs["cond"].graph, carried + captured, size)
    if runs_per_row:
        return _per_row_loop(node, args, flags, captured, size)
    body, batched = _batched_region(node.attrs["body"].graph, carried + captured, size)
    body = _with_batched_outputs(body, batched, [j in carried for j in range(n)], size)
    attrs = {**node.attrs, "cond": Subgraph(cond, "cond"), "body": Subgraph(body, "body")}
    initial = [_tiled(a, size) if k in carried and not flags[k] else a for k, a in enumerate(args)]

    loop = apply(OPS["while"], tuple(initial), attrs)
    values = [_batched(get(loop, j), j in carried, size) for j in range(n)]
    stacks = [_stack(get(loop, n + 1 + j), j in carried, size) for j in _stacked(node)]
    return Results([*values, _tiled(get(loop, n), size), *stacks, *_stride(node, loop, n, size)])


_MADE_BY = {"cond": "a tt.cond", "switch": "a tt.case or tt.switch_case"}


def batch_branch(node, args, flags, size):
    """The batching rule of the branch ops `cond`, `switch` and `recompute` (see the
    module's docstring): `args` are the selector, if any, then the operands, those marked
    in `flags` with a leading axis of `size`; returns the node's results one by one, each
    with the batch axis.

    Raises NotVectorizable where a branch holds an op that cannot be batched, or, with a
    selector that differs between rows (every branch runs), one with a side effect."""
    k = selectors(node.attrs)
    operands = [i for i in range(len(args) - k) if flags[k + i]]
    branches = {}
    for name, subgraph in held(node.attrs):
        graph, batched = _batched_region(subgraph.graph, operands, size)
        graph = _with_batched_outputs(graph, batched, [True] * len(batched), size)
        branches[name] = subgraph.with_graph(graph)
    if k == 0 or not flags[0]:
        batched_node = apply(OPS[node.op], tuple(args), branches)
        return Results([get(batched_node, j) for j in range(len(node.dtype.parts))])
    for subgraph in branches.values():
        why = "every branch runs for every row"
        _refuse_side_effects(subgraph.graph, f"a branch of {_MADE_BY[node.op]}", why)
    selector, values = args[0], args[1:]
    runs = [execute_graph(subgraph.graph, values) for subgraph in branches.values()]
    if selector.dtype.is_bool:
        taken = [selector]
    else:  # the last branch where no other's index matches
        taken = [math_ops.equal(selector, position) for position in range(len(runs) - 1)]
    chosen = runs[-1]
    for mask, run in reversed(list(zip(taken, runs))):
        chosen = [
            math_ops.where(_along_batch(mask, t.ndim), t, other) for t, other in zip(run, chosen)
        ]
    return Results(chosen)


def _batched_variables(node, carried, captured, size):
    """The loop variables that are batched in every iteration: those in `carried`, and those
    the body makes depend on a batched value, until no more do (at most one pass per
    variable)."""
    n = node.attrs["n_vars"]
    body = node.attrs["body"].graph
    while True:
        _, batched = _batched_region(body, sorted(carried) + captured, size)
        grown = carried | {j for j in range(n) if batched[j]}
        if grown == carried:
            return sorted(carried)
        carried = grown


def _per_row_loop(node, args, flags, captured, size):
    """A loop whose condition differs between rows, as one loop over every variable batched,
    and two more: whether each row still runs, and each row's count of iterations."""
    n = node.attrs["n_vars"]
    everything = list(range(n))
    why = "the body runs again for the rows that have finished"
    _refuse_side_effects(node.attrs["body"].graph, "a tt.while_loop body", why)
    cond, _ = _batched_region(node.attrs["cond"].graph, everything + captured, size)
    body, batched = _batched_region(node.attrs["body"].graph, everything + captured, size)
    body = _with_batched_outputs(body, batched, [True] * n, size)
    initial = [a if flags[k] else _tiled(a, size) for k, a in enumerate(args[:n])]
    counters = [((size,), dtypes.bool), ((size,), dtypes.int64)]
    inputs = [*_parts(initial), *counters, *_parts(args[n:])]

    def step(tensors):
        values, (running, count), captures = tensors[:n], tensors[n : n + 2], tensors[n + 2 :]
        new = execute_graph(body, [*values, *captures])
        kept = [math_ops.where(_along_batch(running, v.ndim), a, v) for a, v in zip(new, values)]
        (still,) = execute_graph(cond, [*kept, *captures])
        count = count + array_ops.cast(running, dtypes.int64)
        return [*kept, math_ops.logical_and(running, still), count]

    def any_running(tensors):
        running = array_ops.cast(tensors[n], dtypes.int32)
        return [math_ops.greater(reduction_ops.reduce_max(running), 0)]

    attrs = {
        **node.attrs,
        "cond": Subgraph(_graph_of(inputs, any_running), "cond"),
        "body": Subgraph(_graph_of(inputs, step), "body"),
        "n_vars": n + 2,
    }

    captures = args[n:]
    (running,) = execute_graph(cond, [*initial, *captures])
    zero = apply_symbolic(array_ops.FILL, (), _zeros_attrs((size,), dtypes.int64))
    loop = apply(OPS["while"], (*initial, running, zero, *captures), attrs)
    finals = [get(loop, j) for j in range(n + 2)]
    stacks = [_stack(get(loop, n + 3 + j), True, size) for j in _stacked(node)]
    return Results([*finals[:n], finals[n + 1], *stacks, *_stride(node, loop, n + 2, size)])


def _stacked(node):
    """The positions of the variables whose stacked states the node gives (none, or all)."""
    return range(node.attrs["n_vars"]) if node.attrs["stacked"] else range(0)


def _stride(node, loop, n_vars, size):
    """[the stride of the stacks of `loop` (of `n_vars` variables), broadcast to the batch]
    where `node` gives stacks, else []: one for every row, as the rows share the stacks."""
    if not node.attrs["stacked"]:
        return []
    return [_tiled(get(loop, 2 * n_vars + 1), size)]


def _stack(stack, batched, size):
    """A loop's stack of a variable's states, [steps, B, ...] when batched, as [B, steps, ...]."""
    if not batched:
        return _tiled(stack, size)
    return array_ops.transpose(stack, (1, 0, *range(2, stack.ndim)))


def _batched_region(graph, positions, size):
    """`graph` vectorized with its inputs at `positions` batched, and which of its outputs
    came out batched (an output that does not depend on them stays the graph's own node)."""
    vectorized = vectorize(graph, [graph.inputs[k] for k in positions], size)
    batched = [new is not old for new, old in zip(vectorized.outputs, graph.outputs)]
    return vectorized, batched


def _with_batched_outputs(graph, batched, wanted, size):
    """`graph` whose outputs marked in `wanted` all have the batch axis (those not yet
    `batched` broadcast to it)."""
    with building_graph():
        outputs = [
            graph_node_of(_tiled(Tensor(None, out), size)) if want and not done else out
            for out, done, want in zip(graph.outputs, batched, wanted)
        ]
    return with_outputs(graph.inputs, outputs)


def _graph_of(parts, build):
    """The held graph of `build` (a list of Tensors -> a list of Tensors) over new inputs of
    `parts` (shape, dtype)."""
    inputs = [
        Node("input", (), {"name": f"arg{k}"}, tuple(shape), dtype)
        for k, (shape, dtype) in enumerate(parts)
    ]
    with building_graph():
        outputs = build([Tensor(None, i) for i in inputs])
        nodes = [graph_node_of(convert.as_tensor(t)) for t in outputs]
    return with_outputs(inputs, nodes)


def _parts(tensors):
    return [(t.shape, t.dtype) for t in tensors]


def _zeros_attrs(shape, dtype):
    return {"shape": tuple(shape), "dtype": dtype, "value": 0}


def _tiled(value, size):
    """`value` (without the batch axis) once per row."""
    return broadcast_ops.broadcast_to(array_ops.expand_dims(value, 0), (size, *value.shape))


def _batched(value, batched, size):
    return value if batched else _tiled(value, size)


def _along_batch(mask, ndim):
    """A [B] mask shaped [B, 1, ...] to select along the batch axis of values of `ndim` axes."""
    return array_ops.reshape(mask, (mask.shape[0],) + (1,) * (ndim - 1)) if ndim > 1 else mask


def _refuse_side_effects(graph, what, why):
    """NotVectorizable if `graph` (or a graph it holds) has an op with a side effect, which
    batching would run for rows that do not run it (`why`: how the batched op runs)."""
    for node in graph.nodes:
        if node.op in SIDE_EFFECT_OPS:
            where = format_location(node.location)
            raise NotVectorizable(
                f"{what} has a side effect ({node.op}{' at ' + where if where else ''}): "
                f"batched where rows differ, {why}; keep it out of the vectorized function"
            )
        for value in node.attrs.values():
            if isinstance(value, Subgraph):
                _refuse_side_effects(value.graph, what, why)
