"""Lowering an optimized graph to one C module: kernels, the buffer plan, and the entry point.

The module exports `int tracer_run(char **args)`, with args = the graph's inputs, its
non-scalar constants, its output buffers (allocated by the caller), and one workspace
that holds every intermediate. The workspace is planned once: a buffer's block is reused
by a later one as soon as the last kernel that reads it has run. Outputs that are graph
inputs or constants are not computed in C; the plan says where the caller finds them.

A structured op (a cond, a while loop) is C statements in `tracer_run` around the code of
the graphs it holds, which is lowered the same way; their values and the op's results have
blocks of their own for the whole run.

Lowering is two steps: `plan_buffers` decides where every value lives (the arguments, the
output buffers, the workspace blocks: `BufferPlan`), then `lower` renders the C of that
placement, with each op's form as its target (codegen/targets.py) gives it.
"""

import bisect
import heapq
import itertools
import re

import numpy as np

from codegen import (
    compact,
    conv_kernels,
    libc,
    placement,
    row_products,
    shared_kernels,
    subnormals,
    templates,
    units,
)
from codegen.ctypes import storage
from codegen.forms import (
    LOOP_FORMS,
    HostCall,
    LoopNests,
    NotCompiled,
    Projection,
    Structured,
    Template,
    View,
    shown_op,
)
from codegen.loops import (
    FLOAT_GRID,
    GRID_SQRT,
    LoopNest,
    comment,
    comment_location,
    comment_text,
    fused_loop_nest,
    reads_only_own_element,
    squares_flow_on,
)
from codegen.probes import probe_helper
from codegen.targets import C_MODULE, EXPORTED_C, PROFILED_C
from runtime import interrupts
from tracer.errors import as_tf
from tracer.ir import LEAF_OPS, Subgraph, all_nodes, dims, format_location, rewrite
from tracer.ir.graph import attribute_key

ALIGN = 64


class ModulePlan:
    """Everything the caller needs besides the compiled code."""

    def __init__(self):
        self.source = ""
        self.input_dtypes = []  # numpy dtypes of the graph inputs
        self.input_shapes = []  # and their shapes
        self.constants = []  # numpy arrays passed after the inputs
        self.buffers = []  # (shape, numpy dtype) of the output buffers the caller allocates
        # per graph output, where the caller finds it: ("buffer", k) an output buffer,
        # ("input", k) a copy of input k after the run, ("input before", k) a copy of it
        # before the run, ("updated", k) input k itself (written in place), ("constant", array)
        self.outputs = []
        self.updated_inputs = set()  # inputs the module writes (passed contiguous, unshared)
        self.input_names = []  # for errors about the arguments
        # dimensions known only at run time: (symbol, input position, axis it is read from);
        # shapes then hold the symbol's name (or a Python expression of symbols) for them
        self.dims = []
        self.workspace_bytes = 0  # an int, or a Dim (an expression of the dims)
        self.errors = {}  # return code of tracer_run -> (exception class, message)
        self.first_error = 0  # codes count up from first_error + 1
        # the C text in parts, for an exported file to put together its own way
        self.helpers = []  # prologue helpers the kernels call
        self.kernels = []  # the C text of each kernel
        self.layout = None  # where its blocks go when compiled in units (codegen/units.py)
        # the entry point's functions: [(C name and offset of each workspace block it
        # uses, its statements)], one unless it is long (STATEMENTS_PER_FUNCTION)
        self.parts = []
        self.symbols = []  # the dims' C names
        # the Python functions the module calls back (HostCall ops): (name, options, numpy
        # dtype of the buffer, error code); the caller passes a pointer to each one's C
        # function pointer after the dims (or the workspace), in this order
        self.host_calls = []
        # whether its loops call back the runtime now and then, so that Ctrl-C stops them
        # (runtime/interrupts.py): the caller sets the module's `tracer_watch`
        self.watch = False
        # a runtime.string_table.StringLayout where the graph held tt.string values (its
        # strings are handles in the module: codegen/string_handles.py), else None
        self.strings = None
        # the keys of the kernels it calls in modules loaded before it, in the order of its
        # table (codegen/shared_kernels.py)
        self.borrowed = []
        self.borrowed_table = None  # the array of their addresses (kept for the process)
        # the keys of the kernels it lends, in the order of its table `tracer_kernels`, where
        # it was lowered in this process (a stored plan's are read from its C)
        self.offered = None
        # where it borrows from the cache's modules too: the cache key of the C it would have
        # borrowing from its process's modules alone (codegen/kernel_index.py)
        self.borrowed_for = None

    def error(self, exception, message):
        """The return code that tells the caller to raise `exception(message)`."""
        code = self.first_error + len(self.errors) + 1
        self.errors[code] = (as_tf(exception), message)  # TensorFlow's class where it has one
        return code


class BufferPlan:
    """Where the values of a graph lowered to one entry point live: `plan_buffers`'s result,
    which `lower` renders.

    `aliases` maps id(view that moves no data) -> the value it reads (outputs among them
    where the value is computed into the output's buffer: `_outputs_viewing`); `computed`
    lists the nodes that are code, in order; `in_place` maps id(updated value) -> the input
    position it is written into; `copied` lists (updated value, input position) copied
    after their kernels; `constants` lists the const nodes passed as arguments (in order);
    `buffers` the (shape, numpy dtype) of each output buffer the caller allocates,
    `buffer_args` maps id(output), or id(the value an output views), -> its buffer,
    `snapshots` id(output) -> (input position, buffer) of
    an input's old value copied first; `outputs` where the caller finds each graph output
    (ModulePlan.outputs); `layout` places the other values in workspace blocks, and
    `held_layouts` (id(held graph) -> _Layout) those of the graphs structured ops hold.
    """

    def __init__(self, graph, updates, in_place, target):
        self.aliases = _aliases(graph, target)
        written_for = _outputs_viewing(graph, self.aliases, updates, target)
        self.aliases.update({id(out): source for source, out in written_for})
        self.computed = _computed(graph, self.aliases, target)
        computed, aliases = self.computed, self.aliases
        self.in_place = (
            _written_in_place(graph, updates, computed, aliases, target) if in_place else {}
        )
        self.copied = [
            (graph.outputs[o], i)
            for o, i in updates.items()
            if graph.outputs[o] is not graph.inputs[i]
            and self.in_place.get(id(graph.outputs[o])) != i
        ]
        read = [i for c in computed for i in c.inputs] + [out for out, _ in self.copied]
        read += [_source(id(i), aliases) for i in read if id(i) in aliases]  # a view of a const
        self.constants = [
            node for node in graph.nodes if node.op == "const" and any(node is r for r in read)
        ]
        self.buffers = []
        self.buffer_args = {}
        for out in graph.outputs:
            if out.op in LEAF_OPS or id(out) in self.buffer_args or id(out) in self.in_place:
                continue
            self.buffer_args[id(out)] = len(self.buffers)
            self.buffers.append((text_shape(out.shape), out.dtype.as_numpy_dtype))
        for source, out in written_for:
            self.buffer_args[id(source)] = self.buffer_args[id(out)]
        # an updated input that is the new value of another one (a swap) is copied first
        self.snapshots = {}
        for out, _ in self.copied:
            position = _input_position(graph, out)
            if position in updates.values() and id(out) not in self.snapshots:
                self.snapshots[id(out)] = (position, len(self.buffers))
                self.buffers.append((text_shape(out.shape), out.dtype.as_numpy_dtype))
        self.outputs = [
            _output(graph, k, out, self.buffer_args, self.in_place, updates)
            for k, out in enumerate(graph.outputs)
        ]
        self.held_layouts = {}
        stored_elsewhere = {**self.buffer_args, **self.in_place}
        self.layout = _Layout(
            graph,
            computed,
            aliases,
            stored_elsewhere,
            (),
            self.held_layouts,
            target,
            output_buffers=self.buffer_args,
        )


def plan_buffers(graph, updates=None, in_place=True, target=C_MODULE):
    """The BufferPlan of `graph`: where each value lives when `graph` is one C entry point
    of `target`. `updates` and `in_place` are `lower`'s."""
    return BufferPlan(graph, dict(updates or {}), in_place, target)


def lower(
    graph,
    title,
    blas=False,
    vector_math=False,
    threads=False,
    updates=None,
    names="",
    cblas_guard=None,
    first_error=0,
    in_place=True,
    compact_calls=True,
    watch=False,
    target=C_MODULE,
    probes=None,
    identity=None,
    widen=None,
):
    """The ModulePlan (C source and calling convention) of `graph`, for `target` (the C
    module, or exported C: the forms it gives each op are written).

    For an exported file (`codegen.export`), `names` starts the name of every kernel, the
    CBLAS calls are compiled only where the macro `cblas_guard` is defined (plain loops
    otherwise), error codes start after `first_error`, and with `in_place` False updated
    values are copied into their inputs after their kernels (no kernel then gets one
    buffer as both a `restrict` input and its output, which strict compilers reject).

    `updates` maps an output position to the position of the input it is the new value of
    (a variable's): the module writes the value into that input's buffer, in place where it
    safely can (`_written_in_place`), else by a copy after its last kernel. The caller
    passes such inputs contiguous, of their dtype and not shared with anything else.

    With `compact_calls`, an entry point of many kernel calls has them in tables
    (codegen/compact.py); an exported file writes each call out.

    With `watch`, the loops that may run long call back the runtime now and then, where
    Python's signal handlers run: Ctrl-C stops them (runtime/interrupts.py). Exported C,
    which has no Python to call, has no such calls.

    With `identity` (what the module compiles with: `codegen.shared_kernels.identity`), the
    module offers its kernels in blocks to modules lowered later in the process, and calls
    those that loaded modules offer instead of compiling its own (codegen/shared_kernels.py;
    `plan.borrowed` lists their keys). With `widen` too (`shared_kernels.widened`: the
    borrowing of its kernels from the cache's modules as well, and the cache key of its C
    borrowing from the process's alone; None where that C's module is in the cache, or
    where it borrows nothing more), it borrows the kernels that cached modules offer
    (codegen/kernel_index.py): a module built before is found again, and a new one
    compiles only kernels no module compiled.
    """
    updates = dict(updates or {})
    buffers = plan_buffers(graph, updates, in_place, target)
    plan = ModulePlan()
    plan.first_error = first_error
    plan.input_dtypes = [n.dtype.as_numpy_dtype for n in graph.inputs]
    plan.input_shapes = [text_shape(n.shape) for n in graph.inputs]
    plan.input_names = [n.attrs.get("name", f"input {k}") for k, n in enumerate(graph.inputs)]
    plan.updated_inputs = set(updates.values())
    symbols = rewrite.symbols(graph)
    plan.dims = [_where_read(graph, name) for name in symbols]
    cblas = {"cblas": "cblas_" if cblas_guard else "scipy_cblas_", "cblas_guard": cblas_guard}
    lowering = _Lowering(plan, target, blas, threads, symbols, names, cblas, watch, probes)
    lowering.array_kernels = conv_kernels.serves_convolutions(all_nodes(graph), target)
    pointers = {id(n): f"args[{k}]" for k, n in enumerate(graph.inputs)}
    for node in buffers.constants:
        lowering.pass_constant(node, pointers)
    lowering.pass_nested_constants(graph)
    plan.buffers = list(buffers.buffers)
    first_output = len(graph.inputs) + len(plan.constants)
    for node_id, k in buffers.buffer_args.items():
        pointers[node_id] = f"args[{first_output + k}]"
    for node_id, k in buffers.in_place.items():
        pointers[node_id] = f"args[{k}]"
    lowering.place(buffers, pointers)
    plan.outputs = buffers.outputs
    groups = []  # the statements of the entry point, a list per step
    for node_id, (position, k) in buffers.snapshots.items():
        out = next(o for o in graph.outputs if id(o) == node_id)
        size = _value_bytes(out.shape, out.dtype)
        groups.append(
            [
                f"memcpy(args[{first_output + k}], args[{position}], {size});"
                f"  /* the old value of input {position} */"
            ]
        )
    groups += [lowering.steps([node], pointers) for node in buffers.computed]
    for out, k in buffers.copied:
        source = pointers[id(out)]
        if id(out) in buffers.snapshots:
            source = f"args[{first_output + buffers.snapshots[id(out)][1]}]"
        groups.append(
            [
                f"memcpy(args[{k}], {source}, {_value_bytes(out.shape, out.dtype)});"
                f"  /* the new value of input {k} */"
            ]
        )
    offsets, plan.workspace_bytes = _packed(lowering.blocks)
    compact_calls = compact_calls and probes is None
    signatures = {} if compact_calls and compact.worthwhile(groups) else None
    plan.parts = _parts(groups, offsets, signatures)
    plan.helpers = _helpers(graph, vector_math, target)
    if plan.watch:
        plan.helpers.append(_watch_helper())
    if probes is not None:
        plan.helpers.append(probe_helper())
    steps = list(
        zip((f"{name}_step" for name in signatures or {}), compact.step_functions(signatures or {}))
    )
    plan.symbols = symbols
    # NOTE: a module that calls the installed convolution kernels lends nothing: it is
    # built again with its own (tracer/executables.py), which a later process loads
    # instead, where a module that borrowed from this one would find no lender
    lends = identity is not None and not lowering.array_kernels
    statements = [line for _, lines in plan.parts for line in lines]
    statements = [line for line in statements if not isinstance(line, compact.KernelCall)]

    def write(kernels):
        """Lay out `kernels` ([(C name, C text)]) and the steps, and write the module's C."""
        plan.layout = units.layout([*kernels, *steps], plan.parts)
        offered = shared_kernels.offered(plan.layout, identity) if lends else []
        plan.offered = [lent for _, lent in offered]
        plan.kernels = [text for text, _ in plan.layout.kernels]
        used = [*plan.kernels, *plan.helpers, *statements]  # a kernel call calls no C library
        prologue = templates.render(
            "prologue.h.j2",
            title=title,
            libc=libc.declarations(used, blas),
            vector_math=vector_math,
            helpers=plan.helpers,
            compact=bool(signatures),
        )
        plan.source = templates.render(
            "module.c.j2",
            prologue=prologue,
            entry_point="int tracer_run",
            layout=plan.layout,
            parts=plan.parts,
            title=title,
            n_inputs=len(graph.inputs),
            n_constants=len(plan.constants),
            n_outputs=len(plan.buffers),
            dims=symbols,
            n_host_calls=len(plan.host_calls),
            offered=[name for name, _ in offered],
        )

    own = lowering.kernel_texts()
    if identity is None:
        write(own)
        return plan
    kernels, plan.borrowed, plan.borrowed_table = shared_kernels.borrowing(own, identity)
    write(kernels)
    widened = widen(own, plan.source, plan.borrowed) if widen is not None else None
    if widened is not None:
        (kernels, plan.borrowed, plan.borrowed_table), plan.borrowed_for = widened
        write(kernels)
    return plan


NOINLINE_FROM_CALLS = 8  # a kernel called from this many steps stays one function
# A module whose kernels' C (comments left out, so that the user's file names do not count)
# is at least this long keeps every kernel a function of its own, which codegen/units.py may
# compile in another translation unit, on another core (benchmarks/RESULTS.md, "Kernels
# spread"). Below it, a module's compile is short, and the kernels few steps call are inlined.
SPREAD_KERNELS_ABOVE = 4000
COMMENT = re.compile(r"/\*.*?\*/", re.S)

# The most statements one C function of the entry point holds: compilers take time
# superlinear in a function's size (an unrolled loop's calls in one function take them
# long), so a longer entry point calls functions of this many statements each.
STATEMENTS_PER_FUNCTION = 256


def _parts(groups, offsets, signatures=None):
    """[(the workspace offsets it uses, as (name, C text), its statements)] of each function
    of the entry point, from the statements of its steps (a step is never split). With
    `signatures` (a dict), kernel calls are compacted (codegen/compact.py) and the kernels
    so called recorded there."""
    parts, current, size = [], [], 0
    for group in groups:
        # a profiled module's probes are not counted: it is split as the C module is
        statements = len(group) - sum(line.startswith("TR_PROBE_") for line in group)
        if current and size + statements > STATEMENTS_PER_FUNCTION:
            parts.append(current)
            current, size = [], 0
        current += group
        size += statements
    parts.append(current)
    result = []
    for lines in parts:
        if signatures is not None:
            lines = compact.compacted(lines, offsets, signatures)
        used = sorted({int(k) for k in re.findall(r"\bw(\d+)\b", "\n".join(lines))})
        result.append(([(f"w{k}", offsets[k]) for k in used if k < len(offsets)], lines))
    return result


class _Lowering:
    """What lowering one module accumulates: its kernels, its workspace blocks, and the C
    statements of its graphs (the entry point's, and those structured ops hold)."""

    def __init__(self, plan, target, blas, threads, symbols, names, cblas, watch, probes):
        self.plan = plan
        self.probes = probes  # a ProbeTable where each step is timed, else None
        # the table's padding, relu gradient and sums serve this module's kernels where they
        # can (a module that calls its convolution kernels: codegen/conv_kernels.py)
        self.array_kernels = False
        self.target = target
        self.watching = watch
        self.blas = blas
        self.threads = threads
        self.symbols = symbols
        self.name_stem = names
        self.cblas = cblas
        self.dim_params = "".join(f"const int64_t {name}, " for name in symbols)
        self.dim_args = "".join(f"{name}, " for name in symbols)
        self.kernels = []  # (C name, C text)
        self.kernel_names = {}  # _kernel_key(node) -> (C name, returns an error code)
        self.kernel_codes = {}  # a kernel's C, its comments aside and its name as \0 -> name
        self.calls = {}  # C name of a kernel -> how many steps call it
        self.blocks = []  # workspace block sizes, in bytes; block k starts at C offset w<k>
        self.names = 0  # for the C names of kernels and of structured ops' locals
        self.results = {}  # id(structured node) -> the pointers of its results
        self.scratch = {}  # id(structured node) -> the pointer of its scratch area
        self.layouts = {}  # id(held graph) -> its _Layout, in its op's scratch area (`place`)
        # id(node) of the held graphs' values written over an input (`_Layout.written_over`):
        # their kernels' pointers are not `restrict` (see `kernel`)
        self.written_over = set()
        # id(node) -> the positions of its inputs computed in its storage (codegen/placement.py)
        self.placed = {}
        self.nested_constants = {}  # id(const node of a held graph) -> its pointer

    def fresh(self, stem):
        """A C name no other kernel or local of this module has."""
        self.names += 1
        return f"{self.name_stem}{stem}{self.names}"

    def pass_constant(self, node, pointers):
        """Pass the value of const `node` to the module as an argument."""
        pointers[id(node)] = f"args[{len(self.plan.input_dtypes) + len(self.plan.constants)}]"
        self.plan.constants.append(np.ascontiguousarray(node.attrs["value"].array))

    def pass_nested_constants(self, graph):
        """Pass the constants of the graphs structured ops hold (before the output buffers
        are numbered: they come after the constants in args)."""
        for node in all_nodes(graph):
            for value in node.attrs.values():
                if isinstance(value, Subgraph):
                    for inner in value.graph.nodes:
                        if inner.op == "const":
                            self.pass_constant(inner, self.nested_constants)

    def watch(self, node, count):
        """(declarations, statement) with which the loop of `node`, whose iterations the C
        variable `count` counts, calls back the runtime now and then (templates/watch.c.j2),
        and returns when the answer is to stop; nothing where the module is not watched."""
        if not self.watching:
            return [], []
        self.plan.watch = True
        name, next_count = self.fresh("watch"), self.fresh("next")
        where = format_location(node.location)
        code = self.plan.error(
            RuntimeError,
            f"the compiled loop{f' at {where}' if where else ''} stopped: a Python signal "
            "handler raised while it ran",
        )
        # NOTE: `next_count` is a local of its own, whose address nothing takes, so that the
        # compiler keeps it in a register: the test is a comparison of two registers
        return (
            [
                f"struct tr_watch {name} = TR_WATCH_START;",
                f"int64_t {next_count} = TR_WATCH_FIRST;",
            ],
            [
                f"if ({count} == {next_count} && "
                f"({next_count} = tr_watch_tick(&{name}, {count})) < 0) return {code};"
            ],
        )

    def block(self, size):
        """A workspace block of its own for the whole run: its pointer."""
        self.blocks.append(_aligned(size))
        return f"(workspace + w{len(self.blocks) - 1})"

    def place(self, buffers, pointers):
        """Pointers for the values of the module's graph in workspace blocks, and for those
        of the graphs its structured ops hold (in each op's scratch area), as the BufferPlan
        `buffers` places them."""
        self.layouts = buffers.held_layouts
        layout = buffers.layout
        first = len(self.blocks)
        self.blocks.extend(layout.blocks)
        layout.assign(pointers, lambda k: f"(workspace + w{first + k})", self)

    def region(self, graph, input_pointers, base):
        """The C statements that compute `graph` (a graph a structured op holds) from values
        at `input_pointers`, with its values in the scratch area at `base`; and the pointers
        of its outputs, valid until the statements run again or the op's step ends."""
        layout = self.layouts[id(graph)]
        pointers = {id(n): p for n, p in zip(graph.inputs, input_pointers)}
        nodes = {id(n): n for n in graph.nodes}
        for node_id, k in layout.written_over.items():  # (Structured.carried)
            pointers[node_id] = input_pointers[k]
            self.written_over.add(id(_kernel_of_result(nodes[node_id], self.target)))
        for node in graph.nodes:
            if node.op == "const":
                pointers[id(node)] = self.nested_constants[id(node)]
        layout.assign(pointers, lambda k: f"({base} + {layout.offsets[k]})", self)
        return self.steps(layout.computed, pointers), [pointers[id(o)] for o in graph.outputs]

    def steps(self, computed, pointers):
        """The C statements of `computed` (nodes in order), one kernel call or structured
        op each; each between its probe's statements where the module is profiled."""
        lines = []
        for node in computed:
            if self.probes is None:
                lines += self._step(node, pointers)[0]
                continue
            probe = self.probes.open(node, self._probe_kind(node))
            step, kernel = self._step(node, pointers)
            lines += self.probes.close(probe, step, _step_comment(node), kernel)
        return lines

    def _probe_kind(self, node):
        form = self.target.form_for(node.op)
        if isinstance(form, HostCall):
            return "host"
        if isinstance(form, Structured):
            return "region"
        return "blas" if getattr(form, "uses_blas", False) else "kernel"

    def _step(self, node, pointers):
        """(the C statements computing `node`, the C name of its kernel or None)."""
        form = self.target.form_for(node.op)
        if isinstance(form, HostCall):
            return [self.host_call(node, pointers)], None
        if isinstance(form, Structured):
            site = StructuredSite(self, node, pointers)
            return [f"/* {_step_comment(node)} */", *form.emit(node, site)], None
        placed = self.placed.get(id(node), ())
        if placed and not form.nests(node, placed)[1]:  # every element computed in place
            return [f"/* {_step_comment(node)}: computed in place */"], None
        name, returns_error = self.kernel(node, id(node) in self.written_over)
        operands = [
            (_pointer_type(i), pointers[id(i)])
            for k, i in enumerate(node.inputs)
            if k not in placed
        ]
        if _has_results(node):  # a kernel of several values, each in its own block
            parts = zip(node.dtype.parts, self.results[id(node)])
            operands += [(f"{storage(dtype)} *", pointer) for (_, dtype), pointer in parts]
        else:
            operands.append((f"{storage(node.dtype)} *", pointers[id(node)]))
        call = f"{name}({self.dim_args}{', '.join(f'({t}){p}' for t, p in operands)})"
        comment = _step_comment(node)
        if returns_error:  # the kernel returns a code of plan.errors, or 0
            return [
                f"{{ const int error = {call}; if (error) return error; }}  /* {comment} */"
            ], name
        if self.dim_args:
            return [f"{call};  /* {comment} */"], name
        # a call that codegen/compact.py may write with its operands in a table
        return [compact.KernelCall(f"{call};  /* {comment} */", name, operands, comment)], name

    def host_call(self, node, pointers):
        """The statement that hands `node` to its Python function (a HostCall form): on its
        input, or with `reads_all` on an array of pointers to all its inputs."""
        form = self.target.form_for(node.op)
        name, options = form.function(node)
        where = format_location(node.location)
        code = self.plan.error(
            RuntimeError,
            f"{node.op}: its Python function failed" + (f" (at {where})" if where else ""),
        )
        slot = len(self.plan.host_calls)
        target = pointers[id(node)]
        if form.reads_all:  # the inputs' pointers, then their sizes and the result's (known
            # at run time too)
            inputs = [(i.dtype.as_numpy_dtype, len(i.shape)) for i in node.inputs]
            self.plan.host_calls.append(
                (name, options, node.dtype.as_numpy_dtype, code, (inputs, len(node.shape)))
            )
            sizes = ", ".join(str(d) for v in (*node.inputs, node) for d in v.shape) or "0"
            listed = [f"(void *)({pointers[id(i)]})" for i in node.inputs]
            listed.append(f"(void *)(int64_t[]){{{sizes}}}")
            source, size = f"(void *)(void *[]){{{', '.join(listed)}}}", len(node.inputs)
        else:
            self.plan.host_calls.append((name, options, node.dtype.as_numpy_dtype, code, None))
            source, size = pointers[id(node.inputs[0])], _value_bytes(node.shape, node.dtype)
        return (
            f"{{ const int error = TR_HOST({slot})({source}, {target}, {size}); "
            f"if (error) return error; }}  /* {_step_comment(node)} */"
        )

    def kernel(self, node, written_over=False):
        """(C name, whether it returns an error code) of the kernel computing `node`: written
        once for all the nodes that compute the same thing on other buffers (the steps of
        an unrolled loop) or whose C is the same, so the C grows with the distinct kernels,
        not with the nodes.
        A kernel that reports an error names its node's line, so it is never shared.

        A kernel `written_over` one of its inputs has no `restrict` pointers: with them, a
        compiler that inlines it into a loop may keep that input's value from an earlier
        iteration in a register (a store through one `restrict` pointer is not expected
        to change what another reads)."""
        key = (_kernel_key(node, self.target), written_over, self.placed.get(id(node)))
        known = self.kernel_names.get(key)
        if known is not None:
            self.calls[known[0]] += 1
            return known
        name = self.fresh("k") + "_" + _kernel_label(node)
        text, returns_error = _render_kernel(node, name, self)
        if self.target is not EXPORTED_C and _light(node, self.target) and not _squares(node):
            text = _marked_light(name, text)
        if written_over:  # (its signature: the line that declares `name`, or its rows')
            declaration = re.compile(rf"^static .*\b{name}(_rows)?\(.*$", re.M)
            text = declaration.sub(lambda m: m.group(0).replace("*restrict ", "*"), text, 2)
        if not returns_error:
            # nodes of other keys may have the same C: an optimizer's update of two biases,
            # one (128,) and one (1, 128); the comments, which name the nodes, aside
            code = COMMENT.sub("", text).replace(name, "\0")
            same = self.kernel_codes.setdefault(code, name)
            if same != name:
                self.calls[same] += 1
                self.kernel_names[key] = (same, False)
                return same, False
            self.kernel_names[key] = (name, False)
        self.kernels.append((name, text))
        self.calls[name] = 1
        return name, returns_error

    def shared_kernel(self, name, template, values):
        """Write the function `name` (`template` with `values`) that kernels call, once, before
        the kernel being written: a template's context names it (`shared_kernel`) where its
        kernel calls it. Its calls are counted as a kernel's (`kernel_texts`)."""
        if name in self.calls:
            self.calls[name] += 1
            return
        self.kernels.append((name, templates.render(template, name=name, **self.cblas, **values)))
        self.calls[name] = 1

    def kernel_texts(self):
        """(C name, C text) of each kernel; those called from many steps
        (NOINLINE_FROM_CALLS) are not inlined. A few calls are left to the compiler: inlined
        into a small entry point, kernels share registers instead of passing values through
        the workspace. In a long module (SPREAD_KERNELS_ABOVE) none is inlined, but for
        exported C, one file its user compiles."""
        code = (COMMENT.sub("", text) for _, text in self.kernels)
        spread = self.target is not EXPORTED_C and sum(map(len, code)) >= SPREAD_KERNELS_ABOVE
        return [
            (
                name,
                _not_inlined(name, text)
                if spread or self.calls[name] >= NOINLINE_FROM_CALLS
                else text,
            )
            for name, text in self.kernels
        ]


_STATIC_DEFINITION = re.compile(r"^static (\w+) (\w+)\(", re.M)

# A loop kernel that reads, writes and loops over fewer elements than this is compiled at
# -O1 (TR_LIGHT, templates/prologue.h.j2): it runs in microseconds at either level, and a
# module of many such kernels (a small model's, a mixture's parameters) compiles in two
# thirds of the time (benchmarks/RESULTS.md, "Light kernels at -O1").
LIGHT_ELEMENTS = 4096


def _light(node, target):
    """Whether `node`'s kernel is a loop nest over fewer than LIGHT_ELEMENTS elements: every
    size known, or the sizes known only at run time taken for the largest the calls before
    gave them (`dims.size_seen`: a model's batch, once a last batch was smaller), which
    decides only the kernel's optimization level."""
    if not isinstance(target.form_for(node.op), (*LOOP_FORMS, LoopNests)):
        return False
    values = [node, *node.inputs]
    if node.op == "fused":
        values += node.attrs["kernel"].body.nodes
    shapes = [v.shape for v in values]
    if not all(dims.is_known(s) for s in shapes):
        seen = dims.size_seen()
        if seen is None:
            return False
        guess = {name: seen for s in shapes for name in dims.symbols_of(s)}
        shapes = [dims.substitute(s, guess) for s in shapes]
    return max(map(dims.size, shapes)) < LIGHT_ELEMENTS


def _squares(node):
    """Whether `node`'s loops square a float32 value that flows on (codegen/loops.py's
    squares_flow_on): a light one is then written at the module's level, not -O1, as the
    two versions of a heavier one are."""
    body = all_nodes(node.attrs["kernel"].body) if node.op == "fused" else [node]
    return squares_flow_on(body)


def _marked_light(name, text):
    """`text` with the definition of the function `name` marked TR_LIGHT (-O1)."""
    for definition in _STATIC_DEFINITION.finditer(text):
        if definition[2] == name:
            start = definition.start()
            return f"{text[:start]}TR_LIGHT\n{text[start:]}"
    return text


def _not_inlined(name, text):
    """`text` with the definition of the function `name` marked TR_NOINLINE (one pattern
    for every kernel: a pattern made for each name would be compiled for each)."""
    for definition in _STATIC_DEFINITION.finditer(text):
        if definition[2] == name:
            start, end = definition.span()
            return f"{text[:start]}static TR_NOINLINE {definition[1]} {name}({text[end:]}"
    return text


def _kernel_key(node, target):
    """What a kernel's C depends on: the op, its attributes (a fused body compares by its
    structure), the types of its inputs and result, and for a template, whose context sees
    the node, which inputs are one value (max pooling's gather of x by x)."""
    inputs = tuple((i.shape, i.dtype) for i in node.inputs)
    attrs = tuple((k, attribute_key(v)) for k, v in node.attrs.items())
    same = ()
    if isinstance(target.form_for(node.op), Template):
        first = {}
        same = tuple(first.setdefault(id(i), k) for k, i in enumerate(node.inputs))
    return node.op, attrs, inputs, same, node.shape, node.dtype


class StructuredSite:
    """What the C form of a structured op (`forms.Structured`) writes its statements with."""

    def __init__(self, lowering, node, pointers):
        self._lowering = lowering
        self._node = node
        self._pointers = pointers

    def input(self, k):
        """The pointer (char *) of the node's input k."""
        return self._pointers[id(self._node.inputs[k])]

    def result(self, k):
        """The pointer of the node's result k, which its statements write."""
        return self._lowering.results[id(self._node)][k]

    def scratch(self, shape, dtype):
        """The pointer of a block of its own, of `shape` and `dtype`."""
        return self._lowering.block(_bytes_of(shape, dtype))

    def region(self, graph, input_pointers):
        """(statements, output pointers) of a held graph run on values at `input_pointers`;
        its values live in the op's scratch area, which its held graphs share (one runs at
        a time) and which is free again after the op's step."""
        base = self._lowering.scratch[id(self._node)]
        return self._lowering.region(graph, input_pointers, base)

    def fresh(self, stem):
        return self._lowering.fresh(stem)

    def watch(self, count):
        """(declarations, statement): the statement, first in each iteration of a loop that
        may run long, whose iterations the C variable `count` counts (from 0), lets Ctrl-C
        stop it (runtime/interrupts.py); both empty where the module is not watched
        (exported C)."""
        return self._lowering.watch(self._node, count)

    @staticmethod
    def bytes(shape, dtype):
        """The C expression of the bytes of a value of `shape` and `dtype`: 0 for a value of
        no elements, whose caller's buffer may hold none (a block holds at least one item)."""
        return str(_value_bytes(shape, dtype))

    @staticmethod
    def storage(dtype):
        return storage(dtype)


def _is_structured(node, target):
    return isinstance(target.form_for(node.op), Structured)


def _has_results(node):
    """A node of several results: a structured op, or a kernel of sibling values
    (tracer/passes/fuse.py), whose `get`s read its results' blocks."""
    return getattr(node.dtype, "is_tuple", False)


def _aliases(graph, target):
    """id(node) -> input, for the views that move no data (not outputs: those are stored)."""
    outputs = {id(o) for o in graph.outputs}
    return {
        id(n): n.inputs[0]
        for n in graph.nodes
        if id(n) not in outputs and _moves_no_data(n, target)
    }


def _outputs_viewing(graph, aliases, updates, target):
    """[(value, output)] for the outputs that are views of all of a computed value's bytes
    (a gradient reshaped to its variable's shape, say): the value is computed into the
    output's buffer, and the output is an alias of it, instead of a copy after it. Not for
    values that are outputs themselves or the new values of inputs."""
    outputs = {id(o) for o in graph.outputs}
    updated = {id(graph.outputs[k]) for k in updates}
    found, sources = [], set()
    for out in graph.outputs:
        if id(out) in updated or id(out) in aliases or _alias_offset(out, target) != 0:
            continue
        (source, *_) = out.inputs
        if (
            id(source) in outputs
            or id(source) in sources
            or id(source) in aliases
            or source.op in LEAF_OPS
            or isinstance(target.form_for(source.op), Projection)
            or dims.size(source.shape) != dims.size(out.shape)
        ):
            continue
        sources.add(id(source))
        found.append((source, out))
    return found


def _computed(graph, aliases, target):
    """The nodes that are code: not leaves, aliases or projections."""
    return [
        n
        for n in graph.nodes
        if n.op not in LEAF_OPS
        and id(n) not in aliases
        and not isinstance(target.form_for(n.op), Projection)
    ]


def _aligned(size):
    return -(-size // ALIGN) * ALIGN if isinstance(size, int) else size


def text_shape(shape):
    """A shape for the caller: ints, and Python expressions of the dims where unknown."""
    return tuple(d if isinstance(d, int) else str(d) for d in shape)


def _where_read(graph, name):
    """(name, input position, axis) of an input axis whose size is the symbol `name`."""
    symbol = dims.Dim.symbol(name)
    for position, node in enumerate(graph.inputs):
        for axis, size in enumerate(node.shape):
            if size == symbol:
                return (name, position, axis)
    raise ValueError(f"the dimension {name} is the size of no input axis: it cannot be known")


def _bytes(node):
    """The bytes of a node's value (at least one element's): an int, or a Dim."""
    return _bytes_of(node.shape, node.dtype)


def _value_bytes(shape, dtype):
    """The bytes of a value itself (0 for no elements): what a copy of it moves."""
    return dims.size(shape) * dtype.itemsize


def _bytes_of(shape, dtype):
    itemsize = dtype.itemsize
    size = dims.size(shape) * itemsize
    return size if isinstance(size, dims.Dim) else max(size, itemsize)


def _input_position(graph, node):
    return next((k for k, n in enumerate(graph.inputs) if n is node), None)


def _output(graph, position, out, buffer_args, in_place, updates):
    """Where the caller finds output `position` (see ModulePlan.outputs)."""
    if position in updates:
        return ("updated", updates[position])
    if id(out) in buffer_args:
        return ("buffer", buffer_args[id(out)])
    if id(out) in in_place:  # a value written over an input: a copy of it, after the run
        return ("input", in_place[id(out)])
    if out.op == "const":
        return ("constant", out.attrs["value"].array)
    k = _input_position(graph, out)
    # an input the module updates: its old value, copied before the run
    return ("input before", k) if k in updates.values() else ("input", k)


def _written_in_place(graph, updates, computed, aliases, target):
    """id(node) -> input position, for the updated values the module writes straight into
    their input's buffer: computed ones whose kernel comes after every other kernel that
    reads the old value, and that read it, if at all, only at the element they write. A
    result of a kernel of several values (`get`) is written over its input where its own
    value reads that input: every other result reads the element from the same load, which
    its store then follows."""
    step = {id(n): k for k, n in enumerate(computed)}
    chosen = {}
    for out_position, k in updates.items():
        out, old = graph.outputs[out_position], graph.inputs[k]
        kernel = _kernel_of_result(out, target)
        if id(kernel) not in step or id(out) in chosen:
            continue
        readers = [n for n in computed if any(_is_or_aliases(i, old, aliases) for i in n.inputs)]
        if any(step[id(r)] > step[id(kernel)] for r in readers):
            continue
        if any(r is kernel for r in readers):
            through_alias = any(
                i is not old and _is_or_aliases(i, old, aliases) for i in kernel.inputs
            )
            if through_alias or not reads_only_own_element(kernel, old, target, out.shape):
                continue
            if kernel is not out and not _result_reads(kernel, out.attrs["index"], old):
                continue
        chosen[id(out)] = k
    return chosen


def _kernel_of_result(node, target):
    """The fused kernel whose result `node` is (a `get` of a kernel of several values), or
    `node` itself."""
    if isinstance(target.form_for(node.op), Projection) and node.inputs[0].op == "fused":
        return node.inputs[0]
    return node


def _result_reads(kernel, index, source):
    """Whether result `index` of the fused `kernel` is computed from its input `source`."""
    body = kernel.attrs["kernel"].body
    params = {id(p) for p, i in zip(body.inputs, kernel.inputs) if i is source}
    seen, stack = set(), [body.outputs[index]]
    while stack:
        node = stack.pop()
        if id(node) in params:
            return True
        for value in node.inputs:
            if id(value) not in seen:
                seen.add(id(value))
                stack.append(value)
    return False


def _written_over(graph, pairs, computed, aliases, target):
    """id(output) -> input position, for the (output, input) `pairs` of a held graph whose
    output can be written straight over its input's storage (`_written_in_place`'s rule),
    where no other output is that input, whose old value the op copies after the run."""
    passed_on = {id(_source(id(o), aliases) if id(o) in aliases else o) for o in graph.outputs}
    pairs = {out: k for out, k in pairs if id(graph.inputs[k]) not in passed_on}
    return _written_in_place(graph, pairs, computed, aliases, target)


def _is_or_aliases(node, source, aliases):
    """Whether `node` is `source` or a reshape of it that shares its buffer."""
    return node is source or (id(node) in aliases and _source(id(node), aliases) is source)


def _step_comment(node):
    shape = "" if getattr(node.dtype, "is_tuple", False) else str(list(node.shape))
    return comment_text(f"{shown_op(node)} {node.dtype.short_name}{shape}{_where(node, ' #')}")


def _where(node, prefix=" at"):
    where = comment_location(node.location)
    return f"{prefix} {where}" if where else ""


def _pointer_type(node):
    return f"const {storage(node.dtype)} *"


def _kernel_label(node):
    if node.op == "fused":
        return node.attrs["kernel"].name[2:]
    return node.op


def _moves_no_data(node, target):
    """A view that reads a stored (contiguous) value by flat offset (a reshape), or that is
    one contiguous block of it (x[t]), standing alone or as the whole body of a fused node:
    its result is bytes of its input's buffer, so it is an alias into it rather than a copy."""
    return _alias_offset(node, target) is not None


def _alias_offset(node, target):
    """The byte offset into its input's buffer of a view that moves no data, else None."""
    if node.op == "fused":
        body = node.attrs["kernel"].body
        if len(body.outputs) != 1:
            return None
        (node,) = body.outputs
        if len(body.nodes) != 2 or len(body.inputs) != 1 or node.inputs != body.inputs:
            return None
    form = target.form_for(node.op)
    if not isinstance(form, View):
        return None
    if form.flat_when_stored:
        return 0
    offset = form.block_offset(node) if form.block_offset is not None else None
    return None if offset is None else offset * node.dtype.itemsize


def _source(node_id, aliases):
    """The stored value an alias (or a chain of them) reads."""
    node = aliases[node_id]
    while id(node) in aliases:
        node = aliases[id(node)]
    return node


class _Layout:
    """Where the values of one graph live: blocks that a value takes from the step that
    computes it to the last step that reads it (directly or through an alias), then frees
    for a later value it is large enough for (of the same size, where sizes are known only
    at run time). No step writes a block that one of its own inputs occupies.

    A structured op takes a block per result, and a scratch area for its step alone, in
    which the graphs it holds lay out their own values (`_Layout`s of their own, planned
    first, so that the area's size is known). Values in `kept` (a held graph's outputs)
    live to the end; those `stored_elsewhere` (the module's output buffers, a held graph's
    outputs `written_over` the storage of its inputs) take no block. A part computed in the
    storage of a value that holds it (codegen/placement.py) takes none either: its holder's
    block (or output buffer, among `output_buffers`) serves it, from the part's step.
    """

    def __init__(
        self,
        graph,
        computed,
        aliases,
        stored_elsewhere,
        kept,
        held_layouts,
        target,
        output_buffers=(),
    ):
        self.graph = graph
        # id(output of a held graph) -> the position of the input whose storage it is written
        # over (Structured.carried)
        self.written_over = {}
        self.target = target
        self.computed = computed
        self.aliases = aliases
        self.stored_elsewhere = stored_elsewhere
        self.placed, self.holders = placement.placed_parts(
            graph, computed, stored_elsewhere, output_buffers, target
        )
        self.projections = {}  # id(node of several results) -> the `get`s of its results
        for g in graph.nodes:
            if isinstance(target.form_for(g.op), Projection):
                self.projections.setdefault(id(g.inputs[0]), []).append(g)
        last_use = {}
        for step, node in enumerate(computed):
            for value in node.inputs:
                last_use[self._key(value)] = step
        for output in kept:
            last_use[self._key(output)] = len(computed)
        requests = []  # (key, bytes, first step, last step)
        first_steps = self._first_part_steps()
        for step, node in enumerate(computed):
            if id(node) in self.placed:
                continue
            if _has_results(node):
                for k, (shape, dtype) in enumerate(node.dtype.parts):
                    key = (id(node), k)
                    if self._placed_result(node, k) or self._stored_elsewhere(node, k):
                        continue
                    requests.append((key, _bytes_of(shape, dtype), step, last_use.get(key, step)))
            if _is_structured(node, target):
                size = self._scratch_size(node, held_layouts, target)
                requests.append((("scratch", id(node)), size, step, step))
            elif not _has_results(node) and id(node) not in stored_elsewhere:
                first = first_steps.get(id(node), step)  # a holder: from its first part's step
                requests.append((id(node), _bytes(node), first, last_use.get(id(node), step)))
        requests.sort(key=lambda request: request[2])  # (stable: in step order)
        self.placement, self.blocks = _best_fit(requests)
        self.offsets, self.size = _packed(self.blocks)

    def _key(self, value):
        """What a value's block is found by: the node, or for a `get`, (its op's node, index)."""
        if id(value) in self.aliases:
            value = _source(id(value), self.aliases)
        if id(value) in self.placed:
            value = self.placed[id(value)][0]
        if isinstance(self.target.form_for(value.op), Projection):
            return (id(value.inputs[0]), value.attrs["index"])
        return id(value)

    def _placed_result(self, node, k):
        """Whether result `k` of `node` is computed in the storage of a value holding it."""
        return any(
            g.attrs["index"] == k and id(g) in self.placed
            for g in self.projections.get(id(node), ())
        )

    def _first_part_steps(self):
        """id(holder) -> the step of its first part computed in its storage."""
        step_of = {id(node): step for step, node in enumerate(self.computed)}
        first = {}
        for node in self.graph.nodes:
            if id(node) in self.placed:
                step = step_of[id(node.inputs[0] if node.op == "get" else node)]
                holder = id(self.placed[id(node)][0])
                first[holder] = min(first.get(holder, step), step)
        return first

    def _stored_elsewhere(self, node, k):
        return any(
            id(g) in self.stored_elsewhere and g.attrs["index"] == k
            for g in self.projections.get(id(node), ())
        )

    @staticmethod
    def _scratch_size(node, held_layouts, target):
        """The scratch area of a structured op: the largest of its held graphs' layouts
        (their sum, where sizes are known only at run time); each layout is kept in
        `held_layouts`."""
        sizes = []
        carried = target.form_for(node.op).carried(node)
        for key, value in node.attrs.items():
            if isinstance(value, Subgraph):
                graph = value.graph
                aliases = _aliases(graph, target)
                kept = [o for o in graph.outputs]
                computed = _computed(graph, aliases, target)
                over = _written_over(graph, carried.get(key, ()), computed, aliases, target)
                layout = _Layout(graph, computed, aliases, over, kept, held_layouts, target)
                layout.written_over = over
                held_layouts[id(graph)] = layout
                sizes.append(layout.size)
        if all(isinstance(size, int) for size in sizes):
            return max(sizes, default=0)
        return sum(sizes[1:], sizes[0])

    def assign(self, pointers, block_pointer, lowering):
        """Fill `pointers` (id(node) -> C pointer) for this graph's values, and `lowering`'s
        result and scratch pointers of its structured ops."""
        for key, block in self.placement.items():
            if isinstance(key, int):
                pointers[key] = block_pointer(block)
        for key, (holder, offset) in self.placed.items():
            pointers[key] = (
                f"({pointers[id(holder)]} + {offset})" if offset else pointers[id(holder)]
            )
        lowering.placed.update(self.holders)
        for node in self.computed:
            if _has_results(node):
                results = []
                for k in range(len(node.dtype.parts)):
                    block = self.placement.get((id(node), k))
                    results.append(block_pointer(block) if block is not None else None)
                for g in self.projections.get(id(node), ()):
                    if id(g) in pointers:
                        results[g.attrs["index"]] = pointers[id(g)]  # an output buffer
                lowering.results[id(node)] = results
            if _is_structured(node, self.target):
                scratch = self.placement[("scratch", id(node))]
                lowering.scratch[id(node)] = block_pointer(scratch)
        for node in self.graph.nodes:
            if isinstance(self.target.form_for(node.op), Projection):
                results = lowering.results[id(node.inputs[0])]
                pointers[id(node)] = results[node.attrs["index"]]
        for node in self.graph.nodes:  # in order: an alias of an alias follows its source
            if id(node) in self.aliases:
                source, offset = pointers[id(node.inputs[0])], _alias_offset(node, self.target)
                pointers[id(node)] = f"({source} + {offset})" if offset else source


def _best_fit(requests):
    """{key: block} and the block sizes for requests (key, bytes, first step, last step) in
    step order: each takes the smallest free block that fits (one of its size, where sizes
    are known only at run time), or a new one. Blocks free again after their last step;
    the work is n log n in the requests (an unrolled loop makes tens of thousands)."""
    blocks, placement = [], {}
    releases = []  # (last step, block) of the blocks in use
    free = []  # (size, block) of the free blocks of known size, sorted
    free_symbolic = {}  # size -> free blocks of that size, for sizes known at run time
    for key, size, step, until in requests:
        size = _aligned(size)
        while releases and releases[0][0] < step:
            _, k = heapq.heappop(releases)
            if isinstance(blocks[k], int):
                bisect.insort(free, (blocks[k], k))
            else:
                free_symbolic.setdefault(blocks[k], []).append(k)
        k = None
        if isinstance(size, int):
            position = bisect.bisect_left(free, (size, -1))
            if position < len(free):
                k = free.pop(position)[1]
        elif free_symbolic.get(size):
            k = free_symbolic[size].pop()
        if k is None:
            k = len(blocks)
            blocks.append(size)
        heapq.heappush(releases, (until, k))
        placement[key] = k
    return placement, blocks


def _packed(blocks):
    """(the offset of each block, the total): ints where every size is known; else C
    expressions of the dims, and a bound of the total, a Dim (a C and Python expression).

    An offset is the sum of the blocks before it, written as the known sizes' sum plus each
    size known at run time times the number of its blocks: a text of the distinct sizes,
    not of every block before (an unrolled loop has thousands, and every part of the entry
    point declares the offsets it reads)."""
    if all(isinstance(size, int) for size in blocks):
        starts = [0, *itertools.accumulate(blocks)]
        return starts[:-1], starts[-1]
    offsets, known, counts = [], 0, {}
    for size in blocks:
        offsets.append(_offset_text(known, counts))
        if isinstance(size, int):
            known += _aligned(size)
        else:
            counts[str(size)] = counts.get(str(size), 0) + 1
    total = sum((size + (ALIGN - 1) for size in blocks[1:]), blocks[0] + (ALIGN - 1))
    return offsets, total


def _offset_text(known, counts):
    """C text of `known` bytes plus each run-time size `s` of `counts` aligned, `n` times."""
    terms = [str(known)] if known else []
    terms += [f"TR_ALIGN({s})" if n == 1 else f"{n} * TR_ALIGN({s})" for s, n in counts.items()]
    return f"({' + '.join(terms) or '0'})"


def _render_kernel(node, name, lowering):
    """(C text of the kernel function, whether it returns an error code). Every kernel of a
    module with dimensions known only at run time takes them first (`dim_params`); those it
    does not read are marked used, for compilers that warn of unused parameters."""
    text, returns_error = _kernel_text(node, name, lowering)
    unread = [s for s in lowering.symbols if not re.search(rf"\b{s}\b", text.split("{", 1)[1])]
    if unread:
        header, body = text.split("{\n", 1)
        text = f"{header}{{\n    {' '.join(f'(void){s};' for s in unread)}\n{body}"
    return text, returns_error


def _kernel_text(node, name, lowering):
    plan = lowering.plan
    installed = conv_kernels.array_kernel(node) if lowering.array_kernels else None
    if installed is not None:
        text = templates.render(
            "installed_kernel.c.j2",
            name=name,
            comment=comment(node),
            dim_params=lowering.dim_params,
            **installed,
        )
        return text, False
    form = lowering.target.form_for(node.op)
    if isinstance(form, LOOP_FORMS):  # a fused body, or an op fusion would fold into one
        return _loop_kernel_text(node, name, lowering)
    if isinstance(form, Template):
        context = form.context(node, lowering.blas)
        if form.error is not None:
            exception, message = form.error(node)
            where = format_location(node.location)
            context["error"] = plan.error(exception, message + (f" (at {where})" if where else ""))
        text = templates.render(
            form.template_for(node),
            name=name,
            comment=comment(node),
            dim_params=lowering.dim_params,
            **lowering.cblas,
            **context,
        )
        shared = context.get("shared_kernel")
        if shared is not None and f" {shared[0]}(" in text:
            lowering.shared_kernel(*shared)
        return text, form.error is not None
    if isinstance(form, LoopNests):
        placed = lowering.placed.get(id(node))
        params, nests = form.nests(node, placed) if placed else form.nests(node)
        kernel = LoopNest(name, params, [(storage(node.dtype), "out")], comment(node))
        kernel.nests = nests
        kernel.dim_params = lowering.dim_params
        return templates.render("loops.c.j2", k=kernel), False
    reason = form.reason if isinstance(form, NotCompiled) else f"its C form is {form!r}"
    raise TypeError(f"{node.op} has no C code: {reason}")


def _loop_kernel_text(node, name, lowering):
    """(C text of a loop kernel, whether it returns an error code): where the loops square a
    float32 value in a module (not a profiled one, whose probes time one function a
    kernel, nor exported C), the loops twice, numpy's operations and every product,
    quotient and square root on float's grid, and the function that
    chooses between them by the CPU's status flags and the two's times
    (templates/grid_mode.c.j2), on a CPU that makes subnormals slowly
    (codegen/subnormals.py). A light kernel (`_light`) is written once, numpy's operations
    at the module's level: three functions cost its compile more than the subnormals of a
    few thousand elements cost a call; and so is every kernel where subnormals cost little."""
    params = [f"p{k}" for k in range(len(node.inputs))]

    def written(kernel_name, on_grid=False):
        kernel = fused_loop_nest(
            node,
            kernel_name,
            params,
            lowering.threads,
            lowering.plan.error,
            lowering.target,
            on_grid,
        )
        kernel.params = [(storage(i.dtype), p) for i, p in zip(node.inputs, params)]
        kernel.unread = [p for p in params if p not in kernel.loads]
        kernel.dim_params = lowering.dim_params
        return kernel

    kernel = written(name)
    if kernel.rows is not None:  # it computes the product its body holds
        if lowering.target is EXPORTED_C or kernel.returns_error:
            raise TypeError(f"{name}: a kernel computing a product is the C module's, unguarded")
        return row_products.kernel_text(node, name, kernel, lowering)
    if (
        lowering.target is not C_MODULE
        or kernel.returns_error
        or not _squares(node)
        or _light(node, lowering.target)
        or not subnormals.slow()
    ):
        return templates.render("loops.c.j2", k=kernel), kernel.returns_error
    kernel.name = f"{name}_plain"  # the same loops under the name the chooser calls
    plain = templates.render("loops.c.j2", k=kernel)
    kernel.name = name
    grid = templates.render("loops.c.j2", k=written(f"{name}_grid", on_grid=True))
    dims = re.findall(r"(\w+), ", lowering.dim_params)
    arguments = ", ".join([*dims, *params, *(out for _, out in kernel.outs)])
    text = templates.render("grid_mode.c.j2", k=kernel, plain=plain, grid=grid, arguments=arguments)
    return text, False


def _watch_helper():
    """The prologue's helper of watched loops (templates/watch.c.j2)."""
    return templates.render(
        "watch.c.j2",
        seconds=interrupts.WATCH_SECONDS,
        interval=round(interrupts.WATCH_SECONDS * 1e9),
        stop=interrupts.STOP,
        quiet=interrupts.QUIET,
    )


def _helpers(graph, vector_math, target):
    """The prologue helpers the module's kernels call, each once, in the order of first use
    (a float32 square's rounding on float's grid: codegen/loops.py's Emitter)."""
    found = {}
    for node in all_nodes(graph):
        form = target.form_for(node.op)
        if form is not None:
            found.update(form.helper_definitions(node, vector_math))
        if target is C_MODULE and squares_flow_on([node]) and subnormals.slow():  # the grid's
            found.update(FLOAT_GRID.definitions(node.dtype, vector_math))
            found.update(GRID_SQRT.definitions(node.dtype, vector_math))
    return list(found.values())


C_MODULE.implement(planner=plan_buffers)
EXPORTED_C.implement(planner=plan_buffers)
PROFILED_C.implement(planner=plan_buffers)
