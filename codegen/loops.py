"""Loop kernels: a fused body (elementwise ops, view ops, a final reduction) as one loop nest.

Every body node is evaluated at an affine multi-index of the iteration space; a node used
at the same index twice is computed once (a C temporary). View ops only change the index:
broadcast_to drops or zeroes axes, transpose permutes them, slice scales and shifts them,
a size-1 reshape adds or removes them, and a reshape of a stored value reads it by flat
offset. A reduction root loops over its input with the kept axes outside and the reduced
axes inside, accumulating in a local (in double for float32 sums, like numpy's pairwise
sums in accuracy); when the innermost axis is kept, it stays innermost, with an array of
accumulators.
"""

import collections
import os

from codegen.affine import Affine, broadcast_map, offset
from codegen.ctypes import compute, literal, storage
from codegen.expressions import C_EXPRESSIONS


def format_location(location):
    """`file.py:14 (grad of log)`, as the IR printer writes it (codegen does not import tracer)."""
    if location is None:
        return ""
    text = f"{os.path.basename(location[0])}:{location[1]}"
    return f"{text} ({location[2]})" if len(location) > 2 else text


REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"}


class LoopNest:
    """What `templates/loops.c.j2` renders: one C function with one or more loop nests."""

    def __init__(self, name, params, out_type, comment):
        self.name = name
        self.params = params  # [(C type, name)]
        self.out_type = out_type
        self.comment = comment
        self.nests = []  # [Nest]


PARALLEL_MIN = 1 << 17  # iterations below which starting threads costs more than it saves


class Nest:
    def __init__(self, loops, statements, store, accumulator=None, reduced_loops=(), column=None):
        self.parallel = (
            ""  # "outer": the outermost loop runs on every core; "reduction": the sum does
        )
        self.loops = loops  # [(index name, extent)] outside the accumulator
        self.reduced_loops = reduced_loops  # [(index name, extent)] inside it
        self.statements = statements  # [(C statement, comment)]
        self.store = store  # C statement writing the result
        self.accumulator = accumulator  # an Accumulator, or None
        self.column = column  # a Column: the kept innermost axis, looped inside the reduced ones


Accumulator = collections.namedtuple("Accumulator", "type init step result simd")
# A reduction's kept innermost axis, looped inside the reduced axes in blocks of `block`
# elements, each block with its array of accumulators.
Column = collections.namedtuple("Column", "index extent block")
# Sums and products may be vectorized (reassociated) by the compiler; max and min keep
# numpy's order-dependent NaN rule, so their loops stay sequential.
SIMD_REDUCTION = {"reduce_sum": "reduction(+:acc)", "reduce_prod": "reduction(*:acc)"}


class Emitter:
    """Builds the statements that compute body nodes at given index maps."""

    def __init__(self, params):
        self.params = params  # id(body input node) -> (C name, node)
        self.statements = []
        self.memo = {}
        self.names = {}  # id(body node) -> %k, for comments

    def value(self, node, index_map):
        """The C expression (a temporary or a literal) of `node` at `index_map`.

        An explicit stack, not recursion: a fused chain can be thousands of ops deep.
        """
        goal = _key(node, index_map)
        stack = [(node, index_map)]
        while stack:
            current, current_map = stack[-1]
            key = _key(current, current_map)
            if key in self.memo:
                stack.pop()
                continue
            needed = self._operands(current, current_map)
            missing = [(n, m) for n, m in needed if _key(n, m) not in self.memo]
            if missing:
                stack.extend(reversed(missing))
                continue
            stack.pop()
            self.memo[key] = self._compute(
                current, current_map, [self.memo[_key(n, m)] for n, m in needed]
            )
        return self.memo[goal]

    def _operands(self, node, index_map):
        """The (node, index map) pairs whose values `node` at `index_map` is computed from."""
        if id(node) in self.params or node.op == "const":
            return []
        if node.op == "reshape" and id(node.inputs[0]) in self.params:
            return []  # a stored value, read by flat offset
        view = VIEWS.get(node.op)
        if view is not None:
            return [(node.inputs[0], view(node, index_map))]
        return [(i, broadcast_map(index_map, node.shape, i.shape)) for i in node.inputs]

    def _compute(self, node, index_map, operands):
        if id(node) in self.params:
            name, _ = self.params[id(node)]
            return self._load(name, node, offset(index_map, node.shape))
        if node.op == "const":
            return literal(node.attrs["value"].array.item(), node.dtype)
        if node.op == "reshape" and id(node.inputs[0]) in self.params:
            name, source = self.params[id(node.inputs[0])]
            return self._load(name, source, offset(index_map, node.shape))
        if node.op in VIEWS:
            return operands[0]
        first = node.inputs[1] if node.op == "select" else node.inputs[0]
        expression = C_EXPRESSIONS[node.op](first.dtype, node.dtype, *operands)
        return self._temporary(node, expression)

    def _load(self, name, node, flat):
        return self._temporary(
            node,
            f"({compute(node.dtype)}){name}[{flat.c(INDEX)}]",
            note=f"{self.names.get(id(node), '')} read {name}".strip(),
        )

    def _temporary(self, node, expression, note=None):
        if node.dtype.name == "float16":
            expression = f"(float)(_Float16)({expression})"
        name = f"t{len(self.statements)}"
        text = f"const {compute(node.dtype)} {name} = {expression};"
        if note is None:
            note = f"{self.names.get(id(node), '')} {node.op}  {format_location(node.location)}".strip()
        self.statements.append((text, note))
        return name


INDEX = [f"i{k}" for k in range(64)]


def _key(node, index_map):
    return (id(node), tuple(a.key() for a in index_map))


def _broadcast_view(node, index_map):
    return broadcast_map(index_map, node.shape, node.inputs[0].shape)


def _transpose_view(node, index_map):
    source = [None] * len(node.inputs[0].shape)
    for k, p in enumerate(node.attrs["perm"]):
        source[p] = index_map[k]
    return tuple(source)


def _reshape_view(node, index_map):
    """A reshape that only adds or drops size-1 axes (others read stored values by offset)."""
    kept = iter(a for a, d in zip(index_map, node.shape) if d != 1)
    return tuple(Affine() if d == 1 else next(kept) for d in node.inputs[0].shape)


def _slice_view(node, index_map):
    return slice_source_map(node.attrs["index"], index_map, len(node.inputs[0].shape))


def slice_source_map(index, out_map, source_rank):
    """The index into a slice's source for the index `out_map` into its result."""
    source, j = [], 0
    for item in index:
        if item is None:
            j += 1
        elif isinstance(item, tuple):
            start, _, step = item
            source.append(out_map[j] * step + start)
            j += 1
        else:
            source.append(Affine(item))
    source.extend(out_map[j:])
    assert len(source) == source_rank
    return tuple(source)


VIEWS = {
    "broadcast_to": _broadcast_view,
    "transpose": _transpose_view,
    "reshape": _reshape_view,
    "slice": _slice_view,
}

ACCUMULATE = {
    "reduce_sum": ("{acc} += {value};", "0"),
    "reduce_prod": ("{acc} *= {value};", "1"),
    "reduce_max": ("{acc} = tr_maximum_{tag}({acc}, {value});", "-INFINITY"),
    "reduce_min": ("{acc} = tr_minimum_{tag}({acc}, {value});", "INFINITY"),
}


def _accumulator_type(dtype):
    """Sums and products of float32 accumulate in double; complex64 in complex double."""
    return {"float16": "double", "float32": "double", "complex64": "double _Complex"}.get(
        dtype.name, compute(dtype)
    )


def _integer_extremum(op, dtype):
    bits = 32 if dtype.name == "int32" else 64
    return f"INT{bits}_MIN" if op == "reduce_max" else f"INT{bits}_MAX"


def identity_map(rank):
    return tuple(Affine.index(k) for k in range(rank))


def fused_loop_nest(node, name, param_names, threads=False):
    """The LoopNest of a `fused` node, or of a reduction reading a stored value directly."""
    if node.op == "fused":
        body = node.attrs["kernel"].body
        root = body.outputs[0]
        params = {id(p): (param_names[k], p) for k, p in enumerate(body.inputs)}
        names = {id(n): f"%{k}" for k, n in enumerate(n for n in body.nodes if n.op != "const")}
    else:  # one op standing alone (a reduction of a stored value, say): its inputs are the params
        root, names = node, {}
        params = {id(i): (param_names[k], i) for k, i in enumerate(node.inputs)}
    emitter = Emitter(params)
    emitter.names = names
    kernel = LoopNest(name, [], storage(node.dtype), _comment(node))
    if root.op in REDUCTIONS:
        nest = _reduction_nest(emitter, root, node)
    else:
        index_map = identity_map(len(root.shape))
        value = emitter.value(root, index_map)
        store = f"out[{offset(index_map, root.shape).c(INDEX)}] = ({storage(node.dtype)}){value};"
        loops = [(INDEX[k], d) for k, d in enumerate(root.shape)]
        nest = Nest(loops, emitter.statements, store)
    if threads:
        nest.parallel = _parallel_kind(nest)
    kernel.nests.append(nest)
    return kernel


def _parallel_kind(nest):
    iterations = 1
    for _, extent in [*nest.loops, *nest.reduced_loops]:
        iterations *= extent
    if nest.column:
        iterations *= nest.column.extent
    if iterations < PARALLEL_MIN:
        return ""
    if nest.loops and nest.loops[0][1] >= 2:
        return "outer"
    if not nest.loops and nest.column and nest.column.block < nest.column.extent:
        return "blocks"
    if (
        not nest.loops
        and not nest.column
        and nest.accumulator is not None
        and nest.accumulator.simd
        and nest.reduced_loops[0][1] >= 2
    ):
        return "reduction"
    return ""


COLUMN_BLOCK = 1024  # accumulators per block of a kept innermost axis: 8 KB of doubles, in L1


def _reduction_nest(emitter, root, node):
    """The nest of a reduction root. When the innermost axis is kept (a sum over rows, as a
    bias gradient is), it becomes the innermost loop, with one accumulator per element:
    the reads are then contiguous and the loop vectorizes; each element still accumulates
    in the order of the reduced indices, as numpy's sum over a leading axis does. A long
    axis goes in blocks (COLUMN_BLOCK), which threads share when nothing else is kept."""
    (source,) = root.inputs
    axes = root.attrs["axis"]
    index_map = identity_map(len(source.shape))
    value = emitter.value(source, index_map)
    kept = [k for k in range(len(source.shape)) if k not in axes]
    if root.attrs["keepdims"]:
        out_map = tuple(Affine() if k in axes else index_map[k] for k in range(len(source.shape)))
    else:
        out_map = tuple(index_map[k] for k in kept)
    acc_type = (
        _accumulator_type(root.dtype)
        if root.op in ("reduce_sum", "reduce_prod")
        else compute(root.dtype)
    )
    update, init = ACCUMULATE[root.op]
    if root.dtype.is_integer and root.op in ("reduce_max", "reduce_min"):
        init = _integer_extremum(root.op, root.dtype)
    tag = {"float16": "f32", "float32": "f32"}.get(root.dtype.name, root.dtype.short_name)
    column, acc = None, "acc"
    last = len(source.shape) - 1
    if axes and kept and kept[-1] == last:
        blocks = max(1, -(-source.shape[last] // COLUMN_BLOCK))
        column = Column(
            INDEX[last], source.shape[last], -(-source.shape[last] // blocks)
        )  # equal blocks
        kept = kept[:-1]
        acc = (
            f"acc[{column.index}]"
            if column.block == column.extent
            else f"acc[{column.index} - block_start]"
        )
    accumulator = Accumulator(
        acc_type,
        init,
        update.format(acc=acc, value=value, tag=tag),
        f"out[{offset(out_map, root.shape).c(INDEX)}] = ({storage(node.dtype)}){acc};",
        SIMD_REDUCTION.get(root.op, "") if not root.dtype.is_complex else "",
    )
    return Nest(
        [(INDEX[k], source.shape[k]) for k in kept],
        emitter.statements,
        None,
        accumulator,
        [(INDEX[k], source.shape[k]) for k in axes],
        column,
    )


def copy_nest(source_name, source_shape, source_map, out_map, out_shape, dtype, loops):
    """One nest storing source[source_map] to out[out_map]: concat parts, tile, slice_grad."""
    load = f"{source_name}[{offset(source_map, source_shape).c(INDEX)}]"
    store = f"out[{offset(out_map, out_shape).c(INDEX)}] = {load};"
    return Nest(loops, [], store)


def _comment(node):
    where = format_location(node.location)
    label = node.attrs["kernel"].name if node.op == "fused" else node.op
    return f"{label}: {node.dtype.short_name}{list(node.shape)}" + (f"  # {where}" if where else "")
