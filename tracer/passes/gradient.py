"""Gradient construction: one reverse sweep over a pruned forward graph.

    forward (target %2, source %0)        gradient graph
    %0: f32[] = input                      %0: f32[] = input[name='seed0']     # cotangent of %2
    %1: f32[] = sin %0                     %1: f32[] = input[name='sin.0']     # x, kept by the tape
    %2: f32[] = mul %1, %1          =>     %2: f32[] = input[name='mul.0']     # sin x, kept
                                           %3: f32[] = mul %0, %2  ... cos %1 ... add ...
                                           return %7                           # d%2/d%0

Each forward node's gradient rule is called with symbolic tensors: the cotangent of its
output, and one graph input per value the rule needs (`OpDef.saves`); the rule's tracer
ops add nodes. A map from forward node to cotangent holds what is known so far; a missing
entry means zero, so nothing is materialised for paths that carry no gradient. The
result's inputs are the seeds (one per target) and the residuals (values the forward pass
kept); whoever runs the graph binds them. Only nodes the outputs depend on are in it, so a
rule's cotangent for an input that leads to no source costs nothing at run time.
"""

import collections

from tracer import dtypes
from tracer.context import building_graph, location_override, state
from tracer.ir import Graph, Node, backward_location, dims, topological_closure, user_location
from tracer.ir.rewrite import bypassed, substitute, with_outputs
from tracer.ops import array_ops, index_ops, math_ops, structure_ops
from tracer.ops.core import apply, graph_node_of, sweep_in_c
from tracer.ops.registry import OPS, OUT, saved_slots
from tracer.ops.tuple_ops import TupleCotangent
from tracer.passes.prune import fed_sources, prune
from tracer.tensor import Tensor


class GradientGraph:
    """A gradient graph and how to feed it.

    graph.outputs are the cotangents of the sources that a target reaches, in order;
    `source_outputs[k]` is the position in graph.outputs of source k's cotangent, None, or a
    `SparseOutput` when the cotangent is a sum of rows (the gradient of `gather` along axis
    0): then the graph outputs its values and indices, and the dense sum is never formed.
    `seeds[k]` is the input node for target k's cotangent (None when target k is
    unconnected); `residuals` lists (input node, position of the forward node in the
    forward graph, position in OpDef.saves). Positions rather than nodes, so that one
    gradient graph serves every forward graph of the same structure.
    """

    __slots__ = (
        "graph",
        "seeds",
        "residuals",
        "source_outputs",
        "vectorized",
        "with_constant_seeds",
        "straight_line",
    )

    def __init__(self, graph, seeds, residuals, source_outputs):
        self.graph = graph
        self.seeds = seeds
        self.residuals = residuals
        self.source_outputs = source_outputs
        self.vectorized = {}  # batch size -> this graph vectorized over that many seeds
        self.with_constant_seeds = {}  # (seed kind, target shape) -> vectorized over all its seeds, simplified
        self.straight_line = None  # the graph as straight-line numpy, made when it first runs


class SparseOutput(
    collections.namedtuple("SparseOutput", "values indices dense_shape location", defaults=[None])
):
    """Positions in graph.outputs of a sparse cotangent's rows and row indices, and the
    location of the gather whose gradient they are (where a traced gradient checks them)."""


def _symbolic_input(name, shape, dtype, location=None):
    return Tensor(None, Node("input", (), {"name": name}, shape, dtype, location))


def build_gradient(forward, targets, sources, sparse=True):
    """The gradient graph of `targets` (nodes, or None) with respect to `sources` (nodes, or
    None). With `sparse`, a cotangent that is a sum of rows stays rows (a SparseOutput)."""
    # NOTE: the sums of cotangents take the line that asked for the gradient, found once
    # here rather than by a walk up the stack for each of them
    with building_graph(), location_override(state.location or user_location()):
        return _build_gradient(forward, targets, sources, sparse)


def _build_gradient(forward, targets, sources, sparse):
    reachable = {id(n) for n in forward.nodes}
    cotangents = {}
    seeds = []
    for k, target in enumerate(targets):
        if target is None or id(target) not in reachable:
            seeds.append(None)
            continue
        seed = _symbolic_input(f"seed{k}", target.shape, target.dtype)
        seeds.append(seed._node)
        _accumulate(cotangents, target, seed)

    position = {id(n): k for k, n in enumerate(forward.nodes)}
    residuals = []

    def saved(node, op):
        at = position[id(node)]
        slots = saved_slots(op, node)
        return [_residual(node, at, kept, k, residuals) for k, kept in enumerate(slots)]

    reverse_sweep(forward, cotangents, saved, staying=fed_sources(forward, sources))
    outputs, source_outputs = [], []
    for source in sources:
        ct = summed(cotangents, source) if source is not None else None
        if ct is None:
            source_outputs.append(None)
        elif sparse and _is_row_sum(ct):
            values, indices = _rows(ct)
            where = ct._node.location  # the gather's line, "grad of gather"
            source_outputs.append(SparseOutput(len(outputs), len(outputs) + 1, ct.shape, where))
            outputs.extend((graph_node_of(values), graph_node_of(indices)))
        else:
            source_outputs.append(len(outputs))
            outputs.append(graph_node_of(ct))
    nodes = topological_closure(outputs)
    in_graph = {id(n) for n in nodes}
    seed_nodes = [s if s is not None and id(s) in in_graph else None for s in seeds]
    residuals = [r for r in residuals if id(r[0]) in in_graph]
    inputs = [s for s in seed_nodes if s is not None] + [r[0] for r in residuals]
    return GradientGraph(Graph(inputs, nodes, outputs), seed_nodes, residuals, source_outputs)


def reverse_sweep(forward, cotangents, saved, structured=True, reachable=None, staying=frozenset()):
    """Call every node's gradient rule, from `forward`'s last node to its first, and add the
    cotangents it gives its inputs into `cotangents` (id(node) -> cotangent; none means zero).

    `saved(node, op)` gives the values the rule keeps (`OpDef.saves`): graph inputs when
    building a gradient graph, the tape's own tensors when an eager gradient runs the rules
    on them. With `structured`, cotangents are read as the nodes that made them, so that
    slices' cotangents are summed before they are spread and gathers' stay sums of rows;
    concrete cotangents are not (an outer tape's nodes are not this graph's): the sweep
    itself sums a slice's with the others of the same slice, and keeps a gather's rows apart
    (`Rows`). A node's
    cotangent is dropped once its rule has used it; the inputs' (the sources) stay.
    `reachable`: the ids of `forward`'s nodes, where the caller has them already. `staying`:
    the ids of nodes whose cotangents stay too (sources computed from other sources), which
    the loop below keeps (the C sweep drops every node's).
    The loop below is the definition; where the eager op path is built in C, its `sweep`
    runs the same steps, calling the same functions (tracer/ops/fast_apply.c).
    """
    reachable = reachable or {id(n) for n in forward.nodes}
    leaves = {id(n) for n in forward.inputs}  # the sources: their gradients stop there
    accumulate = _accumulate if structured else _added
    if not staying and sweep_in_c(
        forward.nodes, cotangents, leaves, reachable, saved, accumulate, structured, _HELPERS
    ):
        return
    outer = state.location
    pop = cotangents.pop
    for node in reversed(forward.nodes):
        key = id(node)
        if key in leaves or not node.inputs:
            continue
        g = cotangents.get(key) if key in staying else pop(key, None)
        if g is None:
            continue
        if type(g) is not Tensor:
            g = _concrete(g)
        op = OPS[node.op]
        if not structured and (op is array_ops.SLICE or op is index_ops.GATHER):
            if _part_of_input(cotangents, node, op, g, reachable, saved):
                continue
        if op.grad is None:  # no gradient passes (stop_gradient): a tape never records such
            continue  # an op, but a loop's body and a graph that tt.gradients reads hold them
        kept = saved(node, op)
        state.location = backward_location(node.location, node.op)
        try:
            input_cotangents = op.grad(node, g, *kept)
        finally:
            state.location = outer
        for inp, ct in zip(node.inputs, input_cotangents):
            if ct is None:
                continue
            key = id(inp)
            if key not in reachable:
                continue
            value = getattr(ct, "_value", None)  # a concrete tensor of the input's own type
            if value is None or value.shape != inp.shape or value.dtype != inp.dtype._np:
                _check_cotangent(node, inp, ct)  # says what is wrong, if anything
            if not structured and cotangents.get(key) is None:
                cotangents[key] = ct  # (`_added`'s first case, without the call)
            else:
                accumulate(cotangents, inp, ct)


def _concrete(g):
    """A cotangent that is not a Tensor, as a rule takes it: its slices' parts added up, a
    sum of rows made dense."""
    if type(g) is _SliceSums:
        g = g.total()
    if type(g) is Rows:
        g = g.dense()
    return g


def _part_of_input(cotangents, node, op, g, reachable, saved):
    """Whether the concrete cotangent `g` of `node`, a slice or a gather along axis 0, was
    added to its input's as a part: a slice's among the others of its input
    (`_slice_part`), a gather's as rows (`Rows`)."""
    if op is array_ops.SLICE:
        if id(node.inputs[0]) in reachable:
            _slice_part(cotangents, node, g)
        return True
    if op is index_ops.GATHER and node.attrs["axis"] == 0:
        params = node.inputs[0]
        if id(params) in reachable:
            (indices,) = saved(node, op)
            _added(cotangents, params, Rows.of_gather(g, indices, params.shape))
        return True
    return False


def _residual(node, node_position, kept, slot, residuals):
    value = node if kept == OUT else node.inputs[kept]
    tensor = _symbolic_input(f"{node.op}.{slot}", value.shape, value.dtype, node.location)
    residuals.append((tensor._node, node_position, slot))
    return tensor


def _added(cotangents, node, ct):
    """`_accumulate` for concrete cotangents: plain sums."""
    key = id(node)
    existing = cotangents.get(key)
    if existing is None:
        cotangents[key] = ct
    elif isinstance(existing, _SliceSums):
        existing.rest = ct if existing.rest is None else _plain_sum(existing.rest, ct)
    else:
        cotangents[key] = _plain_sum(existing, ct)


def _plain_sum(existing, ct):
    if isinstance(ct, TupleCotangent):
        return existing.plus(ct)
    if type(existing) is Rows and type(ct) is Rows:
        return existing.joined(ct)
    return math_ops.add(_dense(existing), _dense(ct))


def _dense(ct):
    return ct.dense() if type(ct) is Rows else ct


def _slice_part(cotangents, node, g):
    """A slice's cotangent `g`, concrete, kept as a part of its input's (`_SliceSums`), as
    `_accumulate` keeps the slice_grad that the slice's rule would have made of it."""
    x = node.inputs[0]
    existing = cotangents.get(id(x))
    sums = existing if isinstance(existing, _SliceSums) else _SliceSums(existing, _plain_sum)
    cotangents[id(x)] = sums.plus((node.attrs["index"], x.shape), g)


def _accumulate(cotangents, node, ct):
    existing = cotangents.get(id(node))
    if _is_slice_grad(ct):
        sums = existing if isinstance(existing, _SliceSums) else _SliceSums(existing, _accumulated)
        spread = ct._node
        key = (spread.attrs["index"], spread.attrs["shape"])
        cotangents[id(node)] = sums.plus(key, Tensor(None, spread.inputs[0]))
    elif isinstance(existing, _SliceSums):
        existing.rest = ct if existing.rest is None else _accumulated(existing.rest, ct)
    elif existing is None:
        cotangents[id(node)] = ct
    else:
        cotangents[id(node)] = _accumulated(existing, ct)


def _accumulated(existing, ct):
    if isinstance(ct, TupleCotangent):
        return existing.plus(ct)
    if _is_row_sum(existing) and _is_row_sum(ct):
        return _concat_row_sums(existing, ct)
    return math_ops.add(existing, ct)


class _SliceSums:
    """A cotangent that slices' gradients add to: each slice's cotangents are summed before
    they are spread into zeros of the whole shape (x[0] read five times and x[1] twice give
    two slice_grads, not seven, and one add), and `rest` holds the others."""

    __slots__ = ("parts", "rest", "add_up")

    def __init__(self, rest, add_up):
        self.parts = {}  # (index, shape) -> the summed cotangent of that slice
        self.rest = rest
        self.add_up = add_up  # how two cotangents add up (`_accumulated`, or `_plain_sum`)

    def plus(self, key, part):
        """Add `part`, the cotangent of the slice `key` (index, shape of the whole)."""
        parts = self.parts
        parts[key] = part if key not in parts else parts[key] + part
        return self

    def total(self):
        tiling = None if self.rest is not None else _tiling(tuple(self.parts))
        if tiling is not None:  # the slices cover x along one axis: their cotangents joined
            join, axis, order = tiling
            return join([self.parts[key] for key in order], axis=axis)
        spread = [
            apply(array_ops.SLICE_GRAD, (part,), {"index": index, "shape": shape})
            for (index, shape), part in self.parts.items()
        ]
        total = self.rest
        for value in spread:
            total = value if total is None else self.add_up(total, value)
        return total


_TILINGS = {}  # the parts' keys, in order -> _tiling's answer for them
_TILINGS_LIMIT = 4096


def _tiling(keys):
    """`_find_tiling(keys)`, remembered: an unrolled loop's gradient asks it for the same
    slices at every step."""
    known = _TILINGS.get(keys, _TILINGS)
    if known is _TILINGS:
        if len(_TILINGS) >= _TILINGS_LIMIT:
            _TILINGS.clear()
        known = _TILINGS[keys] = _find_tiling(keys)
    return known


def _find_tiling(keys):
    """(join, axis, the parts' keys in order) when the parts cover x exactly along one
    axis, taking all of every other: x[..., i, ...] for every i (stacked), or ranges
    x[..., a:b, ...] of step 1 end to end (concatenated: an LSTM's gates read from one
    product, 4 zero-filled writes and 3 adds become one concat); else None."""
    shape = keys[0][1]
    if any(len(i) != len(shape) or s != shape for i, s in keys):
        return None
    whole = [(0, size, 1) for size in shape]
    axes = {k for index, _ in keys for k, item in enumerate(index) if item != whole[k]}
    if len(axes) != 1 or not isinstance(shape[min(axes)], int):
        return None
    (axis,) = axes
    items = [index[axis] for index, _ in keys]
    if all(isinstance(item, int) for item in items):
        if set(items) != set(range(shape[axis])):
            return None
        return structure_ops.stack, axis, sorted(keys, key=lambda key: key[0][axis])
    if not all(isinstance(item, tuple) and item[2] == 1 for item in items):
        return None
    order = sorted(keys, key=lambda key: key[0][axis][0])
    end = 0
    for index, _ in order:
        start, stop, _ = index[axis]
        if start != end or not (isinstance(stop, int) and stop > start):
            return None
        end = stop
    return (structure_ops.concat, axis, order) if end == shape[axis] else None


def _is_slice_grad(ct):
    return (
        isinstance(ct, Tensor) and ct._node is not None and ct._node.op == array_ops.SLICE_GRAD.name
    )


def summed(cotangents, node):
    """The cotangent of `node`, its slices' parts added up."""
    ct = cotangents.get(id(node))
    if isinstance(ct, _SliceSums):
        ct = cotangents[id(node)] = ct.total()
    return ct


def _is_row_sum(ct):
    """Whether `ct` is `scatter_add` along axis 0: rows summed into zeros, kept sparse."""
    node = ct._node
    return node is not None and node.op == index_ops.SCATTER_ADD.name and node.attrs["axis"] == 0


def _rows(ct):
    """The (values [N, ...], indices [N]) of a row sum, with the indices flattened."""
    updates, indices = (Tensor(None, n) for n in ct._node.inputs)
    return _flat_rows(updates, indices, ct.shape)


def _flat_rows(updates, indices, shape):
    """(values [N, ...], indices [N], of the gather's index dtype as TensorFlow's
    IndexedSlices keep it) of the rows `updates` that a gather of `indices` from a tensor of
    `shape` along axis 0 read."""
    count = dims.size(indices.shape)  # not -1: rows of size 0 leave it undetermined
    rows = array_ops.reshape(updates, (count, *shape[1:]))
    return rows, array_ops.reshape(indices, (-1,))


def _joined_indices(i, j):
    """The indices of two row sums one after the other, int64 where their dtypes differ."""
    if i.dtype != j.dtype:
        i, j = array_ops.cast(i, dtypes.int64), array_ops.cast(j, dtypes.int64)
    return structure_ops.concat([i, j], 0)


class Rows:
    """A concrete cotangent that is a sum of rows (a gather's along axis 0): the rows and
    their indices, kept apart as a gradient graph keeps its scatter_add of them, so that the
    user gets IndexedSlices, two such sums join by concatenation (`_concat_row_sums`), and
    the dense sum is made only where a dense cotangent or a rule needs it."""

    __slots__ = ("values", "indices", "shape")

    def __init__(self, values, indices, shape):
        self.values, self.indices, self.shape = values, indices, shape

    @classmethod
    def of_gather(cls, g, indices, shape):
        return cls(*_flat_rows(g, indices, shape), shape)

    def joined(self, other):
        values = structure_ops.concat([self.values, other.values], 0)
        return Rows(values, _joined_indices(self.indices, other.indices), self.shape)

    def dense(self):
        attrs = {"axis": 0, "shape": self.shape}
        return apply(index_ops.SCATTER_ADD, (self.values, self.indices), attrs)


def _concat_row_sums(a, b):
    """scatter_add(u, i) + scatter_add(v, j) => scatter_add(concat(u, v), concat(i, j)),
    which is how TensorFlow accumulates IndexedSlices."""
    (u, i), (v, j) = _rows(a), _rows(b)
    rows, indices = structure_ops.concat([u, v], 0), _joined_indices(i, j)
    return apply(index_ops.SCATTER_ADD, (rows, indices), {"axis": 0, "shape": a.shape})


def _check_cotangent(node, inp, ct):
    if isinstance(ct, TupleCotangent):
        return  # its parts are checked where they are made (tuple_ops.TupleCotangent)
    value = ct._value  # read directly: `Tensor.shape` and `.dtype` make and look up objects
    if value is None:
        shape, same_dtype = ct._node.shape, ct._node.dtype is inp.dtype
    else:
        shape, same_dtype = value.shape, value.dtype == inp.dtype._np
    if shape != inp.shape or not same_dtype:
        raise RuntimeError(
            f"the gradient rule of {node.op} gave a {ct.dtype.name}{list(ct.shape)} cotangent "
            f"for an input of {inp.dtype.name}{list(inp.shape)}"
        )


# what the C sweep calls besides the rules, `saved` and `accumulate` (fast_apply.c's `sweep`)
_HELPERS = (
    OPS,
    array_ops.SLICE,
    index_ops.GATHER,
    _part_of_input,
    _concrete,
    _check_cotangent,
    backward_location,
    array_ops.SLICE_GRAD.name,  # the op whose cotangents `_accumulate` keeps as slices' parts
)


def residual_node(forward, position, slot):
    """The node of `forward` whose value a residual (position, slot) of its gradient graph
    takes: the forward node's output, or the input its gradient rule keeps."""
    node = forward.nodes[position]
    kept = saved_slots(OPS[node.op], node)[slot]
    return node if kept == OUT else node.inputs[kept]


def vjp_graph(forward, sources):
    """The vector-Jacobian product of `forward` with respect to `sources` (some of its
    inputs), as one graph: its inputs are forward's inputs and then one cotangent per output;
    its outputs are the cotangents of `sources`, dense, zeros where unconnected. The values
    the gradient rules need are forward's own nodes, computed in the same graph, without its
    prints (tt.print): the forward pass printed them when it ran.
    """
    return vjp_and_connected(forward, sources)[0]


def vjp_and_connected(forward, sources):
    """`vjp_graph(forward, sources)`, and for each source whether a cotangent reaches it
    (False: its output is the zeros, as a tape's gradient there is None)."""
    forward = bypassed(forward, "print")
    targets = list(forward.outputs)
    pruned = prune(forward, sources, targets)
    grad = build_gradient(pruned, targets, sources, sparse=False)
    cotangents = [
        Node("input", (), {"name": f"cotangent{k}"}, t.shape, t.dtype)
        for k, t in enumerate(targets)
    ]
    bindings = {id(s): c for s, c in zip(grad.seeds, cotangents) if s is not None}
    for node, position, slot in grad.residuals:
        bindings[id(node)] = residual_node(pruned, position, slot)
    computed = substitute(grad.graph, bindings)
    outputs = []
    for source, position in zip(sources, grad.source_outputs):
        if position is None:
            zeros = {"shape": source.shape, "dtype": source.dtype, "value": 0}
            outputs.append(Node("fill", (), zeros, source.shape, source.dtype))
        else:
            outputs.append(computed[position])
    connected = [position is not None for position in grad.source_outputs]
    return with_outputs(list(forward.inputs) + cotangents, outputs), connected
