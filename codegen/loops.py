"""Loop kernels: a fused body (elementwise ops, view ops, a final reduction) as one loop nest.

Every body node is evaluated at an affine multi-index of the iteration space; a node used
at the same index twice is computed once (a C temporary). View ops only change the index:
broadcast_to drops or zeroes axes, transpose permutes them, slice scales and shifts them,
a size-1 reshape adds or removes them, and a reshape of a stored value reads it by flat
offset. A concat read in the body (forms.Pieces) reads one of its inputs at each place: the
loops are cut into boxes of iterations in each of which every such read takes one input
(`_elementwise_nests`), each box's loops running from 0, its start added to the indices. A
reduction root loops over its input with the kept axes outside and the reduced
axes inside, accumulating in a local (in double for float32 sums, like numpy's pairwise
sums in accuracy); when the innermost axis is kept, it stays innermost, with an array of
accumulators.

Loops one directly inside the other that every read and write walks as one block (a copy
of contiguous rows, a sum over a contiguous run of axes) are folded into one loop, and
loops of one iteration dropped (`foldable_axes`): the same elements in the same order,
with less C for the compiler to unroll and version. Where an operand is read across the
last two loops (a transpose), they run in tiles (`transposing_tile`), and where the body
calls the vector maths such a read is copied into a buffer per tile row first
(`stage_across_reads`).
"""

import collections
import re

from codegen.affine import Affine, broadcast_map, offset
from codegen.ctypes import compute, literal, storage
from codegen.forms import LOOP_FORMS, Expression, Generator, Helper, Pieces, Reduction, View, tag
from codegen.targets import C_MODULE, EXPORTED_C
from tracer.ir import dims
from tracer.ir.source import format_location


class LoopNest:
    """What `templates/loops.c.j2` renders: one C function with one or more loop nests."""

    def __init__(self, name, params, outs, comment):
        self.name = name
        self.params = params  # [(C type, name)]
        self.outs = outs  # [(C type, name)] of the arrays it writes
        self.comment = comment
        self.nests = []  # [Nest]
        self.loads = {}  # parameter name -> keys of the flat offsets it is read at
        # parameters no loop reads (a concat's input where the kernel reads other parts of
        # it only): `(void)` in C, for compilers that warn of an unused parameter
        self.unread = ()
        self.dim_params = ""  # `const int64_t d0, ` for each dimension known at run time
        # (first, end): the C names of the first row its first loop runs over and of the row
        # after its last, where it computes a block of rows (a kernel that reads its body's
        # product: row_products)
        self.rows = None
        # it returns an error code (or 0): its loops have guards, and then run in order,
        # on one thread (a loop that may return cannot be vectorized or shared)
        self.returns_error = False


PARALLEL_MIN = 1 << 17  # iterations below which starting threads costs more than it saves
# A nest whose threads each take whole rows of its result (its outer loop, or blocks of its
# kept columns) runs on them from half as many: each of its iterations is a load or two and a
# store at least, as the installed elementwise loops' (runtime/conv_kernels.c's
# ELEMENTS_PARALLEL_MIN, docs/threads.md rule 6); a sum over everything, whose partial sums
# the threads' shares make, keeps PARALLEL_MIN.
ROWS_PARALLEL_MIN = 1 << 16
# Iterations of the innermost work a thread takes at a time: threads share a loop in chunks
# taken as each finishes its last, not in equal halves fixed in advance, so a thread that
# starts late (a sleeping thread takes a while to wake) or shares its core with another
# process does less of the loop instead of holding the others at the end of it.
SHARE = 8192
# A short innermost loop (at most SHORT_LOOP iterations) of floating values whose body calls
# libm runs over whole vectors of VECTOR_BYTES, its loads and stores past the extent masked
# off (a load there reads 0, a store there is not made): GCC ends a loop of, say, 14 floats
# with a vector of 8, one of 4 and two single calls of each function, where glibc's narrow
# and scalar versions cost several times the wide one. The lanes past the extent compute on
# zeros and are dropped (no floating operation traps; a loop with integer values, whose
# division by zero would, runs to its extent). Where the CPU masks vector loads and stores
# (AVX-512) the loop masks them (TR_LANE); elsewhere GCC would leave such a loop scalar, so
# (the prologue's TR_PADDED) the elements it reads along the loop are first copied into
# buffers of whole vectors, zeros past the extent, and its results written to buffers that
# are copied out after it (`Nest.pads`, `Nest.unpads`; TR_PICK picks a read's or a store's
# padded form or masked one).
SHORT_LOOP = 64
VECTOR_BYTES = 64
_MASKABLE = frozenset({"float16", "float32", "float64", "bool"})


class Nest:
    def __init__(self, loops, statements, store, accumulator=None, reduced_loops=(), column=None):
        # "outer": the outermost loop runs on every core; "reduction": the sum does;
        # "blocks": the blocks of a long kept innermost axis do
        self.parallel = ""
        self.parallel_if = ""  # an OpenMP if clause, where the size is known only at run time
        self.schedule = ""  # the OpenMP schedule clause of "outer" and "blocks"
        self.loops = loops  # [(index name, extent)] outside the accumulator
        self.reduced_loops = reduced_loops  # [(index name, extent)] inside it
        self.statements = statements  # [(C statement, comment)]
        self.store = store  # C statement writing the result
        self.accumulator = accumulator  # an Accumulator, or None
        self.column = column  # a Column: the kept innermost axis, looped inside the reduced ones
        # (outer block, inner block): the last two loops (of `reduced_loops` where there is
        # an accumulator) run in tiles of that many iterations of each (`transposing_tile`);
        # None: row by row
        self.tile = None
        # [(C declaration, C statement)]: in a tile, before its innermost loop, each operand
        # read across that loop copied into a buffer of the tile's row (`stage_across_reads`)
        self.staged = []
        # the innermost loop's extent rounded up to whole vectors, where it runs so (short
        # and calling libm: SHORT_LOOP); None: it runs to its extent
        self.whole_vectors = None
        # where it runs so on a CPU without masked vectors (TR_PADDED): the C statements
        # that fill its reads' buffers before it and copy its results' out after it
        self.pads = []
        self.unpads = []


# `declaration` declares and sets each accumulator of a nest without a kept innermost axis;
# `type` and `init` are those of the one accumulator array of a nest with one; `recheck`,
# where the loop runs reassociated but its value must be the ordered loop's (a max or min:
# Reduction.rechecked), is (the condition under which it runs again in order, the
# statement that sets the accumulator back, the ordered step), else None
Accumulator = collections.namedtuple(
    "Accumulator", "type init step result simd declaration recheck", defaults=(None,)
)
# A reduction's kept innermost axis, looped inside the reduced axes in blocks of `block`
# elements, each block with its array of accumulators.
Column = collections.namedtuple("Column", "index extent block blocked")


def _column(index, extent):
    """The Column of a kept innermost axis: one block when it is short, else equal blocks of
    at most COLUMN_BLOCK (blocks of COLUMN_BLOCK, the last shorter, where its size is known
    only when the code runs)."""
    if isinstance(extent, dims.Dim):
        return Column(index, extent, COLUMN_BLOCK, True)
    blocks = max(1, -(-extent // COLUMN_BLOCK))
    block = -(-extent // blocks)
    return Column(index, extent, block, block < extent)


# float's rounding of a double that holds one float product's or quotient's exact result, or
# its double rounding (harmless for * and /: double has more than twice float's bits): the
# conversion, which rounds below float's normal range as float's operations do, and costs no
# microcode assist where it makes a subnormal (a product does). GCC would narrow
# `(float)((double)a * (double)b)` back into the float product, which makes the subnormal:
# __builtin_assoc_barrier (GCC 12, Clang 15) keeps the double product, and where the compiler
# lacks it a select on NaN, which GCC cannot see through, does (a NaN stays one). The
# installed kernels' Adam update rounds so too (runtime/conv_kernels.c's float_grid): each is
# held to numpy's bits by a test.
FLOAT_GRID = Helper(
    "float_grid",
    float="""static inline float tr_float_grid(double x) {
#if defined(__has_builtin)
#if __has_builtin(__builtin_assoc_barrier)
#define TR_ASSOC_BARRIER
#endif
#endif
#ifdef TR_ASSOC_BARRIER
    return (float)__builtin_assoc_barrier(x);
#else
    const double rounded = (double)(float)x;
    return (float)(x == x ? rounded : x);
#endif
}""",
    typed=False,
)
# float's square root of a float, made without reading a subnormal: a positive subnormal x is
# m * 2^-149 (m its bits), whose root is sqrt(2m) * 2^-75, 2m a normal float; the root,
# normal, is scaled back through its exponent's bits. Correctly rounded either way, so
# float's bits. The choices are masks of bits: written as selects, GCC took the root of both
# operands of the select and chose between the roots, two roots a vector on the divider that
# the grid's quotients also wait for.
GRID_SQRT = Helper(
    "grid_sqrt",
    float="""static inline float tr_grid_sqrt(float x) {
    union { float f; uint32_t u; } value, widened, root;
    value.f = x;
    const uint32_t tiny = -(uint32_t)(value.u - 1u < 0x007fffffu); /* a positive subnormal */
    widened.f = (float)(int32_t)(value.u << 1);
    value.u ^= (value.u ^ widened.u) & tiny;
    root.f = sqrtf(value.f);
    root.u -= (75u << 23) & tiny;
    return root.f;
}""",
    typed=False,
)
# the float32 operations a square's value passes through
_SQUARE_FLOWS_INTO = ("mul", "add", "sub")
# the float32 operations the Emitter computes on float's grid (a float's C from its float
# operands): those that take a microcode assist where they read or make a subnormal. Sums and
# differences do not (they read and make subnormals at full speed on the Intel cores
# measured), so they stay float's own.
_ON_GRID = {
    "mul": "tr_float_grid((double){0} * (double){1})",
    "div": "tr_float_grid((double){0} / (double){1})",
    "sqrt": "tr_grid_sqrt({0})",
}


def squares_floats(node):
    """Whether `node` squares a float32 value (x * x)."""
    return node.op == "mul" and node.dtype.name == "float32" and node.inputs[0] is node.inputs[1]


def squares_flow_on(nodes):
    """Whether a float32 square among `nodes` flows into a product, sum or difference among
    them: an optimizer's update, whose values fall below float's normal range where the
    gradients vanish (a mean of squares is not one)."""
    return any(
        n.op in _SQUARE_FLOWS_INTO
        and n.dtype.name == "float32"
        and any(map(squares_floats, n.inputs))
        for n in nodes
    )


class Emitter:
    """Builds the statements that compute body nodes at given index maps. `error(exception,
    message) -> code` registers what a guard's failure raises (ModulePlan.error).

    `on_grid`: every float32 product and quotient is computed in double and rounded to float
    once (FLOAT_GRID), and every square root from the bits of its operand (GRID_SQRT): the
    same bits as float's operations, but no product, quotient or root reads or makes a float
    subnormal where the values fall below float's normal range (a CPU takes a microcode
    assist for each vector instruction that does). Sums and differences are float's own.
    The modules run such loops only after a call met subnormals (templates/grid_mode.c.j2):
    the doubles cost normal values more than they save (benchmarks/RESULTS.md)."""

    def __init__(self, params, error=None, target=C_MODULE, on_grid=False, mask=None):
        self.params = params  # id(body input node) -> (C name, node)
        # a parameter that holds a block of rows from `BLOCK_FIRST` on: its reads count rows
        # from there (the product of a kernel that computes it: `body_product`)
        self.in_blocks = frozenset()
        self.mask = mask  # (index, extent): a load where index >= extent reads 0 (SHORT_LOOP)
        # where masked: (C type, buffer) of each read along the masked loop, by its C text,
        # the buffer a TR_PADDED loop reads instead
        self.padded_reads = {}
        self.error = error
        self.form_for = target.form_for  # each body node's form
        self.on_grid = on_grid
        self.statements = []
        self.memo = {}
        self.names = {}  # id(body node) -> %k, for comments
        self.guarded = False  # some statement returns an error code
        self.loads = {}  # parameter name -> keys of the flat offsets it is read at
        self.offsets = []  # the Affine offset of every read
        # (C type, the load's C text, its offset, the statement's position) of each read
        self.reads = []
        self.folded = frozenset()  # axes whose loops fold into others: left out of offsets
        self.indexed = False  # some statement names loop indices itself (a Generator's)
        self.calls_libm = False  # some statement calls a math library function (`costly`)
        # the extent of each loop, where a concat is read piecewise (`_piece`); None in the
        # loops of a reduction, which are never cut
        self.extents = None

    def fresh(self):
        """An Emitter of the same settings with no statements yet (another box's loops)."""
        other = Emitter({}, self.error, mask=self.mask)
        other.params, other.form_for, other.names = self.params, self.form_for, self.names
        other.in_blocks, other.folded = self.in_blocks, self.folded
        other.on_grid = self.on_grid
        return other

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
        if id(node) in self.params or node.op == "const" or self._reads_flat(node):
            return []
        form = self.form_for(node.op)
        if isinstance(form, View):
            return [(node.inputs[0], form.index_map(node, index_map))]
        if isinstance(form, Pieces):
            return [self._piece(node, form, index_map)]
        return [(i, broadcast_map(index_map, node.shape, i.shape)) for i in node.inputs]

    def _piece(self, node, form, index_map):
        """(the input of the concat `node` read at `index_map` in these loops, its index
        map): the one whose range holds every position the joined axis's index takes. Raises
        PiecesCut where the loop that index follows must be cut first."""
        axis, ranges = form.pieces(node)
        at = index_map[axis]
        if self.extents is None:
            raise TypeError(f"{node.op}: read piecewise in loops that accumulate (fusion's error)")
        if 0 in self.extents:  # loops that never run: any input will do
            return node.inputs[0], index_map
        low = high = at.constant
        for loop, c in at.terms:
            low, high = (
                low + min(0, c * (self.extents[loop] - 1)),
                high + max(0, c * (self.extents[loop] - 1)),
            )
        for k, (start, stop) in enumerate(ranges):
            if start <= low and high < stop:
                shifted = (*index_map[:axis], at + (-start), *index_map[axis + 1 :])
                return node.inputs[k], shifted
        if len(at.terms) != 1:
            raise TypeError(f"{node.op}: a joined axis read across several loops at once")
        ((loop, c),) = at.terms
        # the first iteration of `loop` at which the index reaches each range's start
        starts = [start for start, _ in ranges[1:] if low < start <= high]
        cuts = [
            -(-(start - at.constant) // c) if c > 0 else (start - at.constant) // c + 1
            for start in starts
        ]
        raise PiecesCut(loop, cuts)

    def _reads_flat(self, node):
        """A view of a stored value that reads it by flat offset (a reshape of a buffer)."""
        form = self.form_for(node.op)
        return (
            isinstance(form, View) and form.flat_when_stored and id(node.inputs[0]) in self.params
        )

    def _compute(self, node, index_map, operands):
        if id(node) in self.params:
            name, _ = self.params[id(node)]
            return self._load(name, node, offset(index_map, node.shape))
        if node.op == "const":
            return literal(node.attrs["value"].array.item(), node.dtype)
        if self._reads_flat(node):
            name, source = self.params[id(node.inputs[0])]
            return self._load(name, source, offset(index_map, node.shape))
        form = self.form_for(node.op)
        if isinstance(form, (View, Pieces)):
            return operands[0]
        if isinstance(form, Generator):
            self.indexed = True
            return self._temporary(node, form.render(node, index_map))
        if not isinstance(form, Expression):
            raise TypeError(f"{node.op} cannot be part of a loop nest: its C form is {form!r}")
        if self.on_grid and self._stays_on_grid(node):
            return self._on_grid_temporary(node, operands)
        self.calls_libm = self.calls_libm or form.costly
        typed = node.inputs[form.operand].dtype
        if form.guard is not None:
            self._guard(node, form.guard, form.guard.condition(typed, node.dtype, *operands))
        return self._temporary(node, form.render(typed, node.dtype, *operands))

    def _guard(self, node, guard, condition):
        if condition is None:
            return
        where = format_location(node.location)
        message = f"{node.op}: {guard.message}" + (f" (at {where})" if where else "")
        code = self.error(guard.exception, message)
        self.statements.append((f"if ({condition}) return {code};", f"{node.op} guard"))
        self.guarded = True

    def _load(self, name, node, flat):
        self.loads.setdefault(name, set()).add(flat.key())
        self.offsets.append(flat)
        names = _IN_BLOCK if name in self.in_blocks else INDEX
        read = f"{name}[{flat.without(self.folded).c(names)}]"
        if self.mask is None and name not in self.in_blocks:
            self.reads.append((storage(node.dtype), read, flat, len(self.statements)))
        if self.mask is not None:
            read = self._masked(read, storage(node.dtype))
        return self._temporary(
            node,
            f"({compute(node.dtype)}){read}",
            note=f"{self.names.get(id(node), '')} read {name}".strip(),
        )

    def _masked(self, read, ctype):
        """The load `read` in a loop over whole vectors: masked past the extent
        (TR_LANE), or where it moves along the loop, under TR_PADDED, its buffer's element."""
        index, extent = self.mask
        masked = f"(TR_LANE({index}, {extent}) ? {read} : 0)"
        if not re.search(rf"\b{index}\b", read):  # the same element in every lane
            return masked
        if read not in self.padded_reads:
            self.padded_reads[read] = (ctype, f"padded_in{len(self.padded_reads)}")
        return f"TR_PICK({self.padded_reads[read][1]}[{index}], {masked})"

    def _stays_on_grid(self, node):
        """Whether `node` is a product, quotient or square root of float32 values."""
        if node.dtype.name != "float32" or any(i.dtype.name != "float32" for i in node.inputs):
            return False
        return node.op in _ON_GRID

    def _on_grid_temporary(self, node, operands):
        name = f"t{len(self.statements)}"
        text = f"const float {name} = {_ON_GRID[node.op].format(*operands)};"
        where = comment_location(node.location)
        note = f"{self.names.get(id(node), '')} {node.op}  {where}".strip()
        self.statements.append((text, f"{note} (on float's grid)"))
        return name

    def _temporary(self, node, expression, note=None):
        if node.dtype.name == "float16":
            expression = f"(float)(_Float16)({expression})"
        name = f"t{len(self.statements)}"
        text = f"const {compute(node.dtype)} {name} = {expression};"
        if note is None:
            where = comment_location(node.location)
            note = f"{self.names.get(id(node), '')} {node.op}  {where}".strip()
        self.statements.append((text, note))
        return name


class PiecesCut(Exception):
    """A concat read across the boundary of two of its inputs in the loops being written:
    `loop` must be cut at the iterations `cuts` (counted from the loop's own start)."""

    def __init__(self, loop, cuts):
        super().__init__(loop, cuts)
        self.loop = loop
        self.cuts = cuts


INDEX = [f"i{k}" for k in range(64)]
# the rows of a block: the first row it holds, the row after its last, and the index names
# of a read of it (its first loop's index counted from the block's first row)
BLOCK_FIRST, BLOCK_END = "row_first", "row_end"
_IN_BLOCK = [f"({INDEX[0]} - {BLOCK_FIRST})", *INDEX[1:]]
PRODUCT = "product"  # the C name of the block of a kernel's product


def body_product(node):
    """The product in the body of the fused `node` (tracer/passes/row_products.py), which its
    kernel computes a block of rows at a time; None where its body holds none."""
    if node.op != "fused":
        return None
    return next((n for n in node.attrs["kernel"].body.nodes if n.op == "matmul"), None)


def _key(node, index_map):
    return (id(node), tuple(a.key() for a in index_map))


def _accumulator_type(dtype):
    """Sums and products of float32 accumulate in double; complex64 in complex double."""
    return {"float16": "double", "float32": "double", "complex64": "double _Complex"}.get(
        dtype.name, compute(dtype)
    )


def identity_map(rank):
    return tuple(Affine.index(k) for k in range(rank))


def _dtypes(node):
    """The dtypes of every value a fused node's body (or an op standing alone) computes."""
    if node.op == "fused":
        return [n.dtype for n in node.attrs["kernel"].body.nodes]
    return [node.dtype, *(i.dtype for i in node.inputs)]


def whole_vectors(loops, dtypes):
    """The innermost of `loops` rounded up to whole vectors of the narrowest of `dtypes`,
    where it is short and does not fill them and every value is floating or bool
    (SHORT_LOOP), else None."""
    if any(d.name not in _MASKABLE for d in dtypes) or not loops:
        return None
    sizes = [d.itemsize for d in dtypes if d.name in ("float32", "float64")]
    if not sizes:
        return None
    lanes = VECTOR_BYTES // min(sizes)
    extent = loops[-1][1]
    if not isinstance(extent, int) or extent > SHORT_LOOP or extent % lanes == 0:
        return None
    return -(-extent // lanes) * lanes


def loops_over(shape):
    """One loop per axis of `shape`, outermost first: [(index name, extent)]."""
    return [(INDEX[k], d) for k, d in enumerate(shape)]


def fused_loop_nest(
    node, name, param_names, threads=False, error=None, target=C_MODULE, on_grid=False
):
    """The LoopNest of a `fused` node, or of a reduction reading a stored value directly,
    each body node written in its form on `target` (with `on_grid`, its float32 arithmetic
    on float's grid: Emitter); written twice where a first writing finds loops to fold (its
    statements hold the offsets without the folded axes' terms)."""
    kernel, runs, offsets, indexed = _fused_loop_nest(
        node, name, param_names, error, target, frozenset(), on_grid
    )
    cut = len(kernel.nests) > 1  # (boxes of a concat's inputs: loops as they are)
    folded = frozenset() if indexed or cut else foldable_axes(runs, offsets)
    if kernel.rows is not None:  # its first loop runs over a block's rows
        folded -= {0}
    if folded:
        kernel, *_ = _fused_loop_nest(node, name, param_names, error, target, folded, on_grid)
    if kernel.nests[0].whole_vectors is not None:  # written again, its loads and stores masked
        kernel, *_ = _fused_loop_nest(
            node, name, param_names, error, target, folded, on_grid, kernel.nests[0]
        )
    if threads and not kernel.returns_error and kernel.rows is None:
        for nest in kernel.nests:
            nest.parallel = parallel_kind(nest)
    return kernel


def _fused_loop_nest(node, name, param_names, error, target, folded, on_grid=False, padded=None):
    """(the LoopNest with the loops of `folded` axes folded, its loops before folding as runs
    of loops each directly inside the one before, every offset it reads or writes at, and
    whether a statement names loop indices itself). `padded`: the nest of an earlier writing
    that runs over whole vectors (SHORT_LOOP), whose loads and stores this one masks."""
    if node.op == "fused":
        body = node.attrs["kernel"].body
        # several only for fuse.py's siblings: values of one shape, or reductions over every
        # axis of one shape and values of that shape
        results = body.outputs
        root = results[0]
        params = {id(p): (param_names[k], p) for k, p in enumerate(body.inputs)}
        names = {id(n): f"%{k}" for k, n in enumerate(n for n in body.nodes if n.op != "const")}
        product = body_product(node)
        if product is not None:  # read from the block of rows the kernel computes
            params[id(product)] = (PRODUCT, product)
    else:  # one op standing alone (a reduction of a stored value, say): its inputs are the params
        root, names, results = node, {}, [node]
        params = {id(i): (param_names[k], i) for k, i in enumerate(node.inputs)}
    mask = padded.loops[-1] if padded is not None else None
    emitter = Emitter(params, error, target, on_grid, mask)
    emitter.names = names
    emitter.folded = folded
    outs = [
        (storage(r.dtype), f"out{k}" if len(results) > 1 else "out") for k, r in enumerate(results)
    ]
    kernel = LoopNest(name, [], outs, comment(node))
    if any(name == PRODUCT for name, _ in params.values()):
        emitter.in_blocks = frozenset({PRODUCT})
        kernel.rows = (BLOCK_FIRST, BLOCK_END)
    if isinstance(target.form_for(root.op), Reduction):
        index_map = identity_map(len(root.inputs[0].shape))
        flat = offset(index_map, root.inputs[0].shape)
        sums = sum(1 for r in results if isinstance(target.form_for(r.op), Reduction))
        for result, (ctype, out) in zip(results[sums:], kernel.outs[sums:]):  # inside the loop
            value = emitter.value(result, index_map)
            store = f"{out}[{flat.without(folded).c(INDEX)}] = ({ctype}){value};"
            emitter.statements.append((store, None))
        outs = [out for _, out in kernel.outs[:sums]]
        ordered = target is EXPORTED_C  # (its C has no OpenMP pragmas)
        nest, runs, sums_written = _reduction_nest(emitter, results[:sums], outs, ordered)
        written = sums_written + ([flat] if len(results) > sums else [])
        if nest.column is None and nest.accumulator.simd and not emitter.guarded:
            # a sum that may be reassociated: in tiles, its terms add in another order
            nest.tile = transposing_tile(nest.reduced_loops, emitter.offsets)
            if nest.tile and nest.accumulator.recheck is None:  # (its rerun has no tiles)
                stage_across_reads(nest, nest.reduced_loops, emitter, target)
    else:
        nests = _elementwise_nests(emitter, results, kernel, root, folded, mask)
        if len(nests) > 1:  # cut where a concat's input changes: loops as they are
            kernel.nests = [nest for _, nest in nests]
            emitters = [e for e, _ in nests]
            kernel.returns_error = any(e.guarded for e in emitters)
            kernel.loads = {}
            for e in emitters:
                for param, keys in e.loads.items():
                    kernel.loads.setdefault(param, set()).update(keys)
            offsets = [o for e in emitters for o in e.offsets]
            return kernel, [loops_over(root.shape)], offsets, any(e.indexed for e in emitters)
        ((emitter, nest),) = nests
        index_map = identity_map(len(root.shape))
        runs, written = [loops_over(root.shape)], [offset(index_map, root.shape)]
        if not emitter.guarded and kernel.rows is None:  # (a block's rows run in order)
            nest.tile = transposing_tile(nest.loops, emitter.offsets)
            if nest.tile:
                stage_across_reads(nest, nest.loops, emitter, target)
        if padded is not None:
            nest.whole_vectors = padded.whole_vectors
            _pad(nest, emitter, kernel.outs)
        elif emitter.calls_libm and not (emitter.guarded or nest.tile) and target is not EXPORTED_C:
            nest.whole_vectors = whole_vectors(nest.loops, _dtypes(node))
    kernel.returns_error = emitter.guarded
    kernel.loads = emitter.loads
    kernel.nests.append(nest)
    return kernel, runs, emitter.offsets + written, emitter.indexed


def _pad(nest, emitter, outs):
    """`nest.pads` of a nest over whole vectors: its reads' and results' buffers declared,
    the reads' zeros past the extent, and one loop to the extent filling them; its unpads
    (its stores into the outputs) in one loop to the extent."""
    index, extent = emitter.mask
    whole = nest.whole_vectors
    declarations = [
        f"{ctype} {buffer}[{whole}] = {{0}};" for ctype, buffer in emitter.padded_reads.values()
    ]
    declarations += [f"{ctype} padded_out{k}[{whole}];" for k, (ctype, _) in enumerate(outs)]
    fills = " ".join(
        f"{buffer}[{index}] = {read};" for read, (_, buffer) in emitter.padded_reads.items()
    )
    loop = f"for (int64_t {index} = 0; {index} < {extent}; {index}++)"
    nest.pads = [*declarations, f"{loop} {{ {fills} }}"] if fills else declarations
    nest.unpads = [f"{loop} {{ {' '.join(nest.unpads)} }}"]


def _elementwise_nests(emitter, results, kernel, root, folded, mask):
    """[(its Emitter, Nest)] writing `results` over the loops of `root`'s shape: one, or
    where the body reads a concat across the boundary of two inputs, one per box of
    iterations in which every such read takes one input (the loops cut at those
    boundaries: `Emitter._piece`), in the order of their first iterations. Each box's
    loops run from 0; its indices are offset by the box's start in the reads and stores."""
    first = emitter
    boxes, written = [tuple((0, extent) for extent in root.shape)], []
    while boxes:
        box = boxes.pop()
        if emitter is None:
            emitter = first.fresh()
        emitter.extents = tuple(high - low for low, high in box)
        index_map = tuple(Affine.index(k) + low for k, (low, _) in enumerate(box))
        flat = offset(index_map, root.shape).without(folded).c(INDEX)
        try:
            values = [emitter.value(result, index_map) for result in results]
        except PiecesCut as cut:
            low, high = box[cut.loop]
            inside = sorted({low + c for c in cut.cuts if 0 < c < high - low})
            if not inside:
                raise TypeError(f"{root.op}: a concat read outside its inputs' ranges") from None
            bounds = [low, *inside, high]
            boxes += [
                (*box[: cut.loop], (a, b), *box[cut.loop + 1 :]) for a, b in zip(bounds, bounds[1:])
            ]
            emitter = None
            continue
        stores = [
            f"{out}[{flat}] = ({ctype}){value};" for value, (ctype, out) in zip(values, kernel.outs)
        ]
        unpads = []
        if mask is not None:
            index = mask[0]
            masked = [f"if (TR_LANE({index}, {mask[1]})) {store}" for store in stores]
            unpads = [
                f"{out}[{flat}] = padded_out{k}[{index}];" for k, (_, out) in enumerate(kernel.outs)
            ]
            stores = [
                f"TR_PICK(padded_out{k}[{index}] = ({ctype}){value};, {store})"
                for k, (value, (ctype, _), store) in enumerate(zip(values, kernel.outs, masked))
            ]
        loops = [(INDEX[k], high - low) for k, (low, high) in enumerate(box)]
        nest = Nest(fold(loops, folded), emitter.statements, " ".join(stores))
        nest.unpads = unpads
        written.append((box, emitter, nest))
        emitter = None
    return [(e, nest) for _, e, nest in sorted(written, key=lambda item: item[0])]


def reads_only_own_element(node, source, target=C_MODULE, shape=None):
    """Whether the loop kernel of `node` on `target` reads its input `source` only at the
    element it writes (the same flat offset of a buffer of the same size), so that it may
    write its result over `source`. A kernel of several values gives their `shape`."""
    shape = node.shape if shape is None else shape
    if not isinstance(target.form_for(node.op), LOOP_FORMS) or source.shape != shape:
        return False
    params = [f"p{k}" for k in range(len(node.inputs))]
    kernel = fused_loop_nest(
        node, "probe", params, error=lambda exception, message: 0, target=target
    )
    if any(nest.accumulator is not None for nest in kernel.nests) or len(kernel.nests) > 1:
        return False  # (boxes of a concat's inputs: each box's loops run from its start)
    product = body_product(node)  # (its operands are read whole rows at a time)
    if product is not None and any(
        i is source
        for i, p in zip(node.inputs, node.attrs["kernel"].body.inputs)
        if any(p is o for o in product.inputs)
    ):
        return False
    own = {offset(identity_map(len(shape)), shape).key()}
    reads = [kernel.loads.get(p, set()) for p, i in zip(params, node.inputs) if i is source]
    return all(keys <= own for keys in reads)


def parallel_kind(nest):
    """How the nest runs on threads (Nest.parallel), and for sizes known only when the code
    runs, the OpenMP `if` clause that leaves runs of fewer than ROWS_PARALLEL_MIN iterations
    (PARALLEL_MIN for a sum over everything) on one thread (Nest.parallel_if), whatever size
    the dims' stand-in estimates: a function of automatic dynamic shapes is called on large
    arrays as often as on small ones. The clause names `parallel`: one without the name would
    turn a combined `parallel for simd` loop's vectors off too where it is false (OpenMP 5's
    `if` applies to every construct that takes one)."""
    extents = [e for _, e in [*nest.loops, *nest.reduced_loops]]
    if nest.column:
        extents.append(nest.column.extent)
    iterations = dims.size(extents)
    known = not isinstance(iterations, dims.Dim)
    if nest.loops and _estimate(nest.loops[0][1]) >= 2:
        kind = "outer"
    elif not nest.loops and nest.column and nest.column.blocked:
        kind = "blocks"
    elif (
        not nest.loops
        and not nest.column
        and nest.accumulator is not None
        and nest.accumulator.simd
        and nest.reduced_loops
        and _estimate(nest.reduced_loops[0][1]) >= 2
    ):
        kind = "reduction"
    else:
        kind = ""
    threads_from = PARALLEL_MIN if kind in ("reduction", "") else ROWS_PARALLEL_MIN
    if known and iterations < threads_from:
        return ""
    if not known:
        nest.parallel_if = f" if(parallel: {iterations} >= {threads_from})"
    if kind == "outer":
        shares = _estimate(nest.loops[0][1])
        if nest.tile and len(nest.loops) == 2:  # the first loop is the outer tiles'
            shares = -(-shares // nest.tile[0])
        nest.schedule = _dynamic(_estimate(iterations) // shares)
    elif kind == "blocks":
        nest.schedule = _dynamic(
            _estimate(iterations) * nest.column.block // _estimate(nest.column.extent)
        )
    return kind


def _dynamic(work_per_iteration):
    """The schedule clause that hands out about SHARE iterations of work at a time. Only
    loops whose iterations are independent get it (a reduction over everything keeps equal
    shares: which elements a partial sum holds must not depend on which thread came first)."""
    return f" schedule(dynamic, {max(1, SHARE // max(1, work_per_iteration))})"


def _estimate(extent):
    return extent.estimate() if isinstance(extent, dims.Dim) else extent


COLUMN_BLOCK = 1024  # accumulators per block of a kept innermost axis: 8 KB of doubles, in L1


# the largest finite float and double: a max's (min's) reassociated value is the ordered
# one's unless it is zero, infinite or one of these, or a NaN was met (OpenMP's compilers
# differ on the private copies' first value: -inf, or the largest finite's negative)
_LARGEST = {"float": "3.4028234663852886e+38f", "double": "1.7976931348623157e+308"}


def _reduction_nest(emitter, roots, outs, ordered=False):
    """The nest of reduction `roots`, written to `outs` (`ordered`: its loops run in order
    whatever their clauses say): one reduction, or several over every
    axis of one shape (fuse.py's merged siblings), each with its accumulator in the same
    loop. When the innermost axis is kept (a sum over rows, as a bias gradient is), it
    becomes the innermost loop, with one accumulator per element: the reads are then
    contiguous and the loop vectorizes; each element still accumulates in the order of the
    reduced indices, as numpy's sum over a leading axis does. A long axis goes in blocks
    (COLUMN_BLOCK), which threads share when nothing else is kept."""
    root = roots[0]
    (source,) = root.inputs
    axes = root.attrs["axis"]
    index_map = identity_map(len(source.shape))
    kept = [k for k in range(len(source.shape)) if k not in axes]
    column, names = None, ["acc"] if len(roots) == 1 else [f"acc{k}" for k in range(len(roots))]
    last = len(source.shape) - 1
    if axes and kept and kept[-1] == last:
        column = _column(INDEX[last], source.shape[last])
        kept = kept[:-1]
        names = [f"acc[{column.index} - block_start]" if column.blocked else f"acc[{column.index}]"]
    parts, written, recheck = [], [], None
    for reduction, out, acc in zip(roots, outs, names):
        value = emitter.value(reduction.inputs[0], index_map)
        if reduction.attrs["keepdims"]:
            out_map = tuple(
                Affine() if k in axes else index_map[k] for k in range(len(source.shape))
            )
        else:
            out_map = tuple(index_map[k] for k in range(len(source.shape)) if k not in axes)
        form = emitter.form_for(reduction.op)
        acc_type = _accumulator_type(reduction.dtype) if form.wide else compute(reduction.dtype)
        written.append(offset(out_map, reduction.shape))
        result = written[-1].without(emitter.folded).c(INDEX)
        step = form.step.format(acc=acc, value=value, tag=tag(reduction.dtype))
        clause = form.simd.format(acc=acc) if not reduction.dtype.is_complex else ""
        declaration = f"{acc_type} {acc} = {form.init(reduction.dtype)};"
        if form.rechecked and (
            len(roots) > 1 or column or reduction.dtype.is_bool or acc_type not in _LARGEST
        ):
            clause = ""  # in order: no rerun is written for it
        elif form.rechecked and reduction.dtype.is_floating:  # see _LARGEST: when it reruns
            largest = _LARGEST[acc_type]
            recheck = (
                f"!({acc} != 0 && {acc} > -{largest} && {acc} < {largest}) || {acc}_nan != 0",
                f"{acc} = {form.init(reduction.dtype)};",
                step,
            )
            step = form.rechecked.format(acc=acc, value=value)
            step += f" {acc}_nan += ({value} != {value}) ? 1 : 0;"
            clause += f" reduction(+:{acc}_nan)"
            declaration += f" int64_t {acc}_nan = 0;"
        parts.append(
            (
                acc_type,
                form.init(reduction.dtype),
                step,
                f"{out}[{result}] = ({storage(reduction.dtype)}){acc};",
                clause,
                declaration,
            )
        )
    if ordered or emitter.guarded:  # its first pass runs in order: no pragmas, one thread
        recheck = None
    types, inits, steps, results, clauses, declarations = zip(*parts)
    accumulator = Accumulator(
        types[0],
        inits[0],
        " ".join(steps),
        " ".join(results),
        " ".join(clauses) if all(clauses) else "",
        " ".join(declarations),
        recheck,
    )
    runs = [
        [(INDEX[k], source.shape[k]) for k in kept],
        [(INDEX[k], source.shape[k]) for k in axes],
    ]
    nest = Nest(
        fold(runs[0], emitter.folded),
        emitter.statements,
        None,
        accumulator,
        fold(runs[1], emitter.folded),
        column,
    )
    return nest, runs, written


def copy_nest(source_name, source_shape, source_map, out_map, out_shape, loops):
    """One nest storing source[source_map] to out[out_map]: concat parts, tile, slice_grad."""
    read, written = offset(source_map, source_shape), offset(out_map, out_shape)
    folded = foldable_axes([loops], [read, written])
    load = f"{source_name}[{read.without(folded).c(INDEX)}]"
    store = f"out[{written.without(folded).c(INDEX)}] = {load};"
    nest = Nest(fold(loops, folded), [], store)
    nest.tile = transposing_tile(nest.loops, [read])
    return nest


def fill_nest(out_map, out_shape, value, loops):
    """One nest storing the C expression `value` to out[out_map]: a pad's border, zeros."""
    written = offset(out_map, out_shape)
    folded = foldable_axes([loops], [written])
    return Nest(fold(loops, folded), [], f"out[{written.without(folded).c(INDEX)}] = {value};")


_AXIS = {name: k for k, name in enumerate(INDEX)}


def foldable_axes(runs, offsets):
    """The axes whose loops can go: `runs` are lists of loops [(INDEX[axis], extent)], each
    loop directly inside the one before it, the first run outermost; `offsets` are the
    Affine offsets of every read and write in them. A loop of one iteration goes (its index
    is 0), unless it is the last of its run. Of the others, a loop folds into the next of
    its run when, in every offset, its index's coefficient is the next one's times the next
    one's extent: then `c_a*i_a + c_b*i_b` is `c_b*j` with `j = i_a*e_b + i_b`, one loop
    over both extents' product (`fold`), visiting the same elements in the same order. Only
    where the extents and coefficients are ints.

    The outermost loop of a nest that may run on threads (ROWS_PARALLEL_MIN iterations) stays
    apart from the loop inside it: a parallel loop around a vector loop of known length
    compiles in less time than OpenMP's `parallel for simd` over one loop, whose vector
    loop's bounds (each thread's share) are known only at run time."""
    terms = [dict(o.terms) for o in offsets]
    threaded = _estimate(dims.size([e for run in runs for _, e in run])) >= ROWS_PARALLEL_MIN
    folded = set()
    for position, run in enumerate(runs):
        if not all(isinstance(extent, int) for _, extent in run):
            continue
        axes = [(_AXIS[name], extent) for name, extent in run]
        looped = [(a, e) for a, e in axes if e != 1] or axes[-1:]
        folded.update(a for a, e in axes if (a, e) not in looped)
        pairs = list(zip(looped, looped[1:]))
        if position == 0 and threaded:
            pairs = pairs[1:]
        for (outer, _), (inner, extent) in pairs:
            if all(_foldable(t.get(outer, 0), t.get(inner, 0), extent) for t in terms):
                folded.add(outer)
    return frozenset(folded)


# A tile: TILE_COLUMNS elements next to each other in the operand read across the loops,
# from each of TILE_ROWS rows a cache line or more apart. Rows whose stride is a power of two
# bytes map to few cache sets; 16 of them still fit an L1's ways, where 32 did not
# (benchmarks/RESULTS.md, "Transposes in tiles").
TILE_COLUMNS = 64
TILE_ROWS = 16
_STRIDED = 16  # elements between an operand's reads along the inner loop: a cache line
# elements of the last two loops below which their reads stay in the L1 cache row by row
# (32 KB of float32): tiles then only cost their bounds' tests
TILE_ABOVE = 8192


def transposing_tile(loops, offsets):
    """(outer block, inner block) for a nest whose last two loops read an operand across:
    along the inner loop its elements are a cache line or more apart, along the outer one
    next to each other (a transpose's read). Row by row, each inner loop then reads a line
    per element and uses one element of it; in tiles, a tile's lines stay in the cache
    until the tile's other columns use them. None where no operand is read so, or either
    loop is too short to tile."""
    if len(loops) < 2:
        return None
    (outer, outer_extent), (inner, inner_extent) = loops[-2:]
    if not (
        isinstance(outer_extent, int)
        and isinstance(inner_extent, int)
        and outer_extent >= TILE_ROWS
        and inner_extent >= 2 * TILE_ROWS
        and outer_extent * inner_extent >= TILE_ABOVE
    ):
        return None
    for o in offsets:
        terms = dict(o.terms)
        across, along = terms.get(_AXIS[inner], 0), terms.get(_AXIS[outer], 0)
        if isinstance(across, int) and abs(across) >= _STRIDED and along in (1, -1):
            return (TILE_COLUMNS, TILE_ROWS)
    return None


def stage_across_reads(nest, loops, emitter, target):
    """Where a tiled nest calls the vector maths, each operand read across its innermost
    loop is copied, for each row of a tile, into a buffer of that row (`Nest.staged`), and
    the loop reads the buffer. GCC calls a function's vector version (glibc's `_ZGV...`)
    only in a loop whose loads are contiguous: with a transpose's strided read it called
    the scalar function for each element (an exp over a 512 x 512 gradient took six times
    the contiguous loop's time). Each element's operations stay the same; its exp is now
    the vector one, as in any contiguous loop (its last bit may differ from the scalar
    one's)."""
    if not emitter.calls_libm or emitter.guarded or target is EXPORTED_C:
        return
    inner = loops[-1][0]
    buffers = {}  # the read's C -> its buffer's element in the loop
    for ctype, read, flat, position in emitter.reads:
        across = dict(flat.terms).get(_AXIS[inner], 0)
        if not (isinstance(across, int) and abs(across) > 1):
            continue
        if read not in buffers:
            buffer = f"stage{len(buffers)}"
            buffers[read] = f"{buffer}[{inner} - {inner}_tile]"
            nest.staged.append((f"{ctype} {buffer}[{nest.tile[1]}];", f"{buffers[read]} = {read};"))
        text, note = nest.statements[position]
        nest.statements[position] = (text.replace(read, buffers[read], 1), note)


def _foldable(outer, inner, extent):
    return isinstance(outer, int) and isinstance(inner, int) and outer == inner * extent


def fold(loops, folded):
    """`loops` without those of `folded` axes, each loop that others fold into running over
    the product of their extents."""
    result, carried = [], 1
    for name, extent in loops:
        if _AXIS[name] in folded:
            carried *= extent
        else:
            result.append((name, extent * carried))
            carried = 1
    return result


def comment_location(location):
    """`format_location`'s text for a C comment: a file name's control characters made `?`
    (a newline would start a line that the preprocessor or the split into units reads; the
    name holds no `/`, so no `*/`)."""
    return _CONTROL.sub("?", format_location(location))


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def comment_text(text):
    """`text` safe inside a C comment: no `*/` to end it early (a hostile file's name or
    attribute would then be code), no control character to start a line."""
    return _CONTROL.sub("?", text).replace("*/", "*?")


def comment(node):
    """The comment above a kernel: what it computes, its type, and the user's line."""
    where = comment_location(node.location)
    label = node.attrs["kernel"].name if node.op == "fused" else node.op
    text = f"{label}: {node.dtype.short_name}{list(node.shape)}" + (f"  # {where}" if where else "")
    return comment_text(text)
