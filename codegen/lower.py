"""Lowering an optimized graph to one C module: kernels, the buffer plan, and the entry point.

The module exports `int tracer_run(char **args)`, with args = the graph's inputs, its
non-scalar constants, its output buffers (allocated by the caller), and one workspace
that holds every intermediate. The workspace is planned once: a buffer's block is reused
by a later one as soon as the last kernel that reads it has run. Outputs that are graph
inputs or constants are not computed in C; the plan says where the caller finds them.
"""

import numpy as np

from codegen import templates
from codegen.ctypes import storage
from codegen.forms import C_FORMS, LOOP_FORMS, LoopNests, NotCompiled, Template, View
from codegen.loops import LoopNest, comment, fused_loop_nest, reads_only_own_element
from tracer.ir import LEAF_OPS, dims, format_location, rewrite

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
        self.workspace_bytes = 0  # an int, or a Python expression of the dims
        self.errors = {}  # return code of tracer_run -> (exception class, message)

    def error(self, exception, message):
        """The return code that tells the caller to raise `exception(message)`."""
        code = len(self.errors) + 1
        self.errors[code] = (exception, message)
        return code


def lower(graph, title, blas=False, vector_math=False, threads=False, updates=None):
    """The ModulePlan (C source and calling convention) of `graph`.

    `updates` maps an output position to the position of the input it is the new value of
    (a variable's): the module writes the value into that input's buffer, in place where it
    safely can (`_written_in_place`), else by a copy after its last kernel. The caller
    passes such inputs contiguous, of their dtype and not shared with anything else.
    """
    updates = dict(updates or {})
    plan = ModulePlan()
    plan.input_dtypes = [n.dtype.as_numpy_dtype for n in graph.inputs]
    plan.input_shapes = [_text_shape(n.shape) for n in graph.inputs]
    plan.input_names = [n.attrs.get("name", f"input {k}") for k, n in enumerate(graph.inputs)]
    plan.updated_inputs = set(updates.values())
    symbols = rewrite.symbols(graph)
    plan.dims = [_where_read(graph, name) for name in symbols]
    dim_params = "".join(f"const int64_t {name}, " for name in symbols)
    dim_args = "".join(f"{name}, " for name in symbols)
    pointers = {id(n): f"args[{k}]" for k, n in enumerate(graph.inputs)}
    outputs = {id(o) for o in graph.outputs}
    aliases = {
        id(n): n.inputs[0] for n in graph.nodes if id(n) not in outputs and _moves_no_data(n)
    }
    computed = [n for n in graph.nodes if n.op not in LEAF_OPS and id(n) not in aliases]
    in_place = _written_in_place(graph, updates, computed, aliases)
    copied = [
        (graph.outputs[o], i)
        for o, i in updates.items()
        if graph.outputs[o] is not graph.inputs[i] and in_place.get(id(graph.outputs[o])) != i
    ]
    read = [i for c in computed for i in c.inputs] + [out for out, _ in copied]
    for node in graph.nodes:
        if node.op == "const" and any(node is r for r in read):
            pointers[id(node)] = f"args[{len(graph.inputs) + len(plan.constants)}]"
            plan.constants.append(np.ascontiguousarray(node.attrs["value"].array))
    buffer_args = {}
    for out in graph.outputs:
        if out.op in LEAF_OPS or id(out) in buffer_args or id(out) in in_place:
            continue
        buffer_args[id(out)] = len(plan.buffers)
        plan.buffers.append((_text_shape(out.shape), out.dtype.as_numpy_dtype))
    # an updated input that is the new value of another one (a swap) is copied first
    snapshots = {}
    for out, _ in copied:
        position = _input_position(graph, out)
        if position in plan.updated_inputs and id(out) not in snapshots:
            snapshots[id(out)] = (position, len(plan.buffers))
            plan.buffers.append((_text_shape(out.shape), out.dtype.as_numpy_dtype))
    first_output = len(graph.inputs) + len(plan.constants)
    for node_id, k in buffer_args.items():
        pointers[node_id] = f"args[{first_output + k}]"
    for node_id, k in in_place.items():
        pointers[node_id] = f"args[{k}]"
    placement, blocks = _plan_workspace(computed, {**buffer_args, **in_place}, aliases)
    offsets, plan.workspace_bytes = _offsets(blocks)
    names = list(offsets) if isinstance(offsets, dict) else offsets
    for node_id, block in placement.items():
        pointers[node_id] = f"(workspace + {names[block]})"
    for node_id in aliases:
        pointers[node_id] = pointers[id(_source(node_id, aliases))]
    plan.outputs = [
        _output(graph, k, out, buffer_args, in_place, updates)
        for k, out in enumerate(graph.outputs)
    ]
    kernels, steps = [], []
    for node_id, (position, k) in snapshots.items():
        out = next(o for o in graph.outputs if id(o) == node_id)
        steps.append(
            {
                "call": f"memcpy(args[{first_output + k}], args[{position}], {_bytes(out)});",
                "comment": f"the old value of input {position}",
            }
        )
    for position, node in enumerate(computed):
        name = f"k{position}_{_kernel_label(node)}"
        text, returns_error = _render_kernel(node, name, blas, threads, plan, dim_params)
        kernels.append(text)
        args = [f"({_pointer_type(i)})" + pointers[id(i)] for i in node.inputs]
        out = f"({storage(node.dtype)} *)" + pointers[id(node)]
        call = f"{name}({dim_args}{', '.join([*args, out])})"
        if returns_error:  # the kernel returns a code of plan.errors, or 0
            call = f"{{ const int error = {call}; if (error) return error; }}"
        else:
            call += ";"
        steps.append({"call": call, "comment": _step_comment(node)})
    for out, k in copied:
        source = pointers[id(out)]
        if id(out) in snapshots:
            source = f"args[{first_output + snapshots[id(out)][1]}]"
        steps.append(
            {
                "call": f"memcpy(args[{k}], {source}, {_bytes(out)});",
                "comment": f"the new value of input {k}",
            }
        )
    prologue = templates.render(
        "prologue.h.j2",
        title=title,
        blas=blas,
        vector_math=vector_math,
        helpers=_helpers(graph, vector_math),
    )
    plan.source = templates.render(
        "module.c.j2",
        prologue=prologue,
        kernels=kernels,
        steps=steps,
        title=title,
        n_inputs=len(graph.inputs),
        n_constants=len(plan.constants),
        n_outputs=len(plan.buffers),
        dims=symbols,
        offsets=list(offsets.items()) if isinstance(offsets, dict) else [],
    )
    return plan


def _text_shape(shape):
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
    size = dims.size(node.shape) * node.dtype.as_numpy_dtype().itemsize
    return size if isinstance(size, dims.Dim) else max(size, node.dtype.as_numpy_dtype().itemsize)


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


def _written_in_place(graph, updates, computed, aliases):
    """id(node) -> input position, for the updated values the module writes straight into
    their input's buffer: computed ones whose kernel comes after every other kernel that
    reads the old value, and that read it, if at all, only at the element they write."""
    step = {id(n): k for k, n in enumerate(computed)}
    chosen = {}
    for out_position, k in updates.items():
        out, old = graph.outputs[out_position], graph.inputs[k]
        if id(out) not in step or id(out) in chosen:
            continue
        readers = [n for n in computed if any(_is_or_aliases(i, old, aliases) for i in n.inputs)]
        if any(step[id(r)] > step[id(out)] for r in readers):
            continue
        if any(r is out for r in readers):
            through_alias = any(
                i is not old and _is_or_aliases(i, old, aliases) for i in out.inputs
            )
            if through_alias or not reads_only_own_element(out, old):
                continue
        chosen[id(out)] = k
    return chosen


def _is_or_aliases(node, source, aliases):
    """Whether `node` is `source` or a reshape of it that shares its buffer."""
    return node is source or (id(node) in aliases and _source(id(node), aliases) is source)


def _step_comment(node):
    return f"{node.op} {node.dtype.short_name}{list(node.shape)}{_where(node, ' #')}"


def _where(node, prefix=" at"):
    where = format_location(node.location)
    return f"{prefix} {where}" if where else ""


def _pointer_type(node):
    return f"const {storage(node.dtype)} *"


def _kernel_label(node):
    if node.op == "fused":
        return node.attrs["kernel"].name[2:]
    return node.op


def _moves_no_data(node):
    """A view that reads a stored (contiguous) value by flat offset, a reshape, standing alone
    or as the whole body of a fused node: its result is the same bytes, so it is an alias of
    its input's buffer rather than a copy."""
    if node.op == "fused":
        body = node.attrs["kernel"].body
        (node,) = body.outputs
        if len(body.nodes) != 2 or len(body.inputs) != 1 or node.inputs != body.inputs:
            return False
    form = C_FORMS.get(node.op)
    return isinstance(form, View) and form.flat_when_stored


def _source(node_id, aliases):
    """The stored value an alias (or a chain of them) reads."""
    node = aliases[node_id]
    while id(node) in aliases:
        node = aliases[id(node)]
    return node


def _plan_workspace(computed, stored_elsewhere, aliases):
    """The workspace blocks of every computed value not stored elsewhere: (id(node) -> block
    number, [block size in bytes]).

    A block is reused once the last step reading its value (directly or through an alias)
    has run, by a value it is large enough for (of the same size, where sizes are known only
    at run time); no step writes a block that one of its own inputs occupies.
    """
    last_use = {}
    for step, node in enumerate(computed):
        for inp in node.inputs:
            source = _source(id(inp), aliases) if id(inp) in aliases else inp
            last_use[id(source)] = step
    blocks, busy = [], []  # block sizes, and the step after which each is free
    placement = {}
    for step, node in enumerate(computed):
        if id(node) in stored_elsewhere:
            continue
        size = _bytes(node)
        if isinstance(size, int):
            size = -(-size // ALIGN) * ALIGN
        until = last_use.get(id(node), step)
        for k, block in enumerate(blocks):
            fits = block == size or (
                isinstance(block, int) and isinstance(size, int) and block >= size
            )
            if busy[k] < step and fits:
                busy[k] = until
                placement[id(node)] = k
                break
        else:
            placement[id(node)] = len(blocks)
            blocks.append(size)
            busy.append(until)
    return placement, blocks


def _offsets(blocks):
    """(offset of each block, workspace bytes): ints where every size is known; else C
    names (w<k>, computed at the start of tracer_run) and a Python expression of the dims."""
    if all(isinstance(size, int) for size in blocks):
        offsets, end = [], 0
        for size in blocks:
            offsets.append(end)
            end += size
        return offsets, end
    offsets = {
        f"w{k}": " + ".join(f"TR_ALIGN({s})" for s in blocks[:k]) or "0" for k in range(len(blocks))
    }
    total = " + ".join(f"align({s})" for s in blocks) or "0"
    return offsets, total


def _render_kernel(node, name, blas, threads, plan, dim_params):
    """(C text of the kernel function, whether it returns an error code). Every kernel of a
    module with dimensions known only at run time takes them first (`dim_params`)."""
    form = C_FORMS[node.op]
    if isinstance(form, LOOP_FORMS):  # a fused body, or an op fusion would fold into one
        params = [f"p{k}" for k in range(len(node.inputs))]
        kernel = fused_loop_nest(node, name, params, threads, plan.error)
        kernel.params = [(storage(i.dtype), p) for i, p in zip(node.inputs, params)]
        kernel.dim_params = dim_params
        return templates.render("loops.c.j2", k=kernel), kernel.returns_error
    if isinstance(form, Template):
        context = form.context(node, blas)
        if form.error is not None:
            exception, message = form.error(node)
            where = format_location(node.location)
            context["error"] = plan.error(exception, message + (f" (at {where})" if where else ""))
        text = templates.render(
            form.template, name=name, comment=comment(node), dim_params=dim_params, **context
        )
        return text, form.error is not None
    if isinstance(form, LoopNests):
        params, nests = form.nests(node)
        kernel = LoopNest(name, params, storage(node.dtype), comment(node))
        kernel.nests = nests
        kernel.dim_params = dim_params
        return templates.render("loops.c.j2", k=kernel), False
    reason = form.reason if isinstance(form, NotCompiled) else f"its C form is {form!r}"
    raise TypeError(f"{node.op} has no C code: {reason}")


def _helpers(graph, vector_math):
    """The prologue helpers the module's kernels call, each once, in the order of first use."""
    found = {}
    for node in _all_nodes(graph):
        form = C_FORMS.get(node.op)
        if form is not None:
            found.update(form.helper_definitions(node, vector_math))
    return list(found.values())


def _all_nodes(graph):
    for node in graph.nodes:
        yield node
        if node.op == "fused":
            yield from node.attrs["kernel"].body.nodes
