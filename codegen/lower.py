"""Lowering an optimized graph to one C module: kernels, the buffer plan, and the entry point.

The module exports `int tracer_run(char **args)`, with args = the graph's inputs, its
non-scalar constants, its output buffers (allocated by the caller), and one workspace
that holds every intermediate. The workspace is planned once: a buffer's block is reused
by a later one as soon as the last kernel that reads it has run. Outputs that are graph
inputs or constants are not computed in C; the plan says where the caller finds them.
"""

import numpy as np

from codegen import templates
from codegen.affine import Affine, broadcast_map, offset
from codegen.ctypes import compute, literal, storage
from codegen.expressions import C_EXPRESSIONS
from codegen.loops import (
    INDEX,
    REDUCTIONS,
    VIEWS,
    LoopNest,
    Nest,
    copy_nest,
    format_location,
    fused_loop_nest,
    identity_map,
    slice_source_map,
)

LEAVES = ("input", "variable", "const")
ALIGN = 64


class ModulePlan:
    """Everything the caller needs besides the compiled code."""

    def __init__(self):
        self.source = ""
        self.input_dtypes = []  # numpy dtypes of the graph inputs
        self.input_shapes = []  # and their shapes
        self.constants = []  # numpy arrays passed after the inputs
        self.buffers = []  # (shape, numpy dtype) of the output buffers the caller allocates
        self.outputs = []  # per graph output: ("buffer", k) | ("input", k) | ("constant", array)
        self.workspace_bytes = 0
        self.errors = {}  # return code -> message


def lower(graph, title, blas=False, vector_math=False, threads=False):
    plan = ModulePlan()
    plan.input_dtypes = [n.dtype.as_numpy_dtype for n in graph.inputs]
    plan.input_shapes = [n.shape for n in graph.inputs]
    pointers = {id(n): f"args[{k}]" for k, n in enumerate(graph.inputs)}
    outputs = {id(o) for o in graph.outputs}
    aliases = {
        id(n): n.inputs[0] for n in graph.nodes if id(n) not in outputs and _moves_no_data(n)
    }
    computed = [n for n in graph.nodes if n.op not in LEAVES and id(n) not in aliases]
    constants = [
        n
        for n in graph.nodes
        if n.op == "const" and any(n is i for c in computed for i in c.inputs)
    ]
    for node in constants:
        pointers[id(node)] = f"args[{len(graph.inputs) + len(plan.constants)}]"
        plan.constants.append(np.ascontiguousarray(node.attrs["value"].array))
    buffer_args = {}
    for out in graph.outputs:
        if out.op in LEAVES or id(out) in buffer_args:
            continue
        buffer_args[id(out)] = len(plan.buffers)
        plan.buffers.append((out.shape, out.dtype.as_numpy_dtype))
    first_output = len(graph.inputs) + len(plan.constants)
    for node_id, k in buffer_args.items():
        pointers[node_id] = f"args[{first_output + k}]"
    workspace = _plan_workspace(computed, buffer_args, aliases)
    plan.workspace_bytes = workspace.pop(None, 0)
    for node_id, at in workspace.items():
        pointers[node_id] = f"(workspace + {at})"
    for node_id in aliases:
        pointers[node_id] = pointers[id(_source(node_id, aliases))]
    for out in graph.outputs:
        if id(out) in buffer_args:
            plan.outputs.append(("buffer", buffer_args[id(out)]))
        elif out.op == "const":
            plan.outputs.append(("constant", out.attrs["value"].array))
        else:
            plan.outputs.append(("input", next(k for k, n in enumerate(graph.inputs) if n is out)))
    kernels, steps = [], []
    for position, node in enumerate(computed):
        name = f"k{position}_{_kernel_label(node)}"
        text, returns_error = _render_kernel(node, name, blas, threads)
        kernels.append(text)
        args = [f"({_pointer_type(i)})" + pointers[id(i)] for i in node.inputs]
        call = f"{name}({', '.join(args + [f'({storage(node.dtype)} *)' + pointers[id(node)]])})"
        if returns_error:
            code = len(plan.errors) + 1
            plan.errors[code] = f"{node.op}: an index is out of range" + _where(node)
            call = f"if ({call}) return {code};"
        else:
            call += ";"
        steps.append(
            {
                "call": call,
                "comment": f"{node.op} {node.dtype.short_name}{list(node.shape)}{_where(node, ' #')}",
            }
        )
    prologue = templates.render("prologue.h.j2", title=title, blas=blas, vector_math=vector_math)
    plan.source = templates.render(
        "module.c.j2",
        prologue=prologue,
        kernels=kernels,
        steps=steps,
        title=title,
        n_inputs=len(graph.inputs),
        n_constants=len(plan.constants),
        n_outputs=len(plan.buffers),
    )
    return plan


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
    """A reshape of a stored (contiguous) value: its result is the same bytes, so it is an
    alias of its input's buffer rather than a copy."""
    if node.op == "reshape":
        return True
    if node.op != "fused":
        return False
    body = node.attrs["kernel"].body
    return (
        len(body.nodes) == 2
        and body.nodes[1].op == "reshape"
        and body.nodes[1].inputs[0] is body.inputs[0]
    )


def _source(node_id, aliases):
    """The stored value an alias (or a chain of them) reads."""
    node = aliases[node_id]
    while id(node) in aliases:
        node = aliases[id(node)]
    return node


def _plan_workspace(computed, buffer_args, aliases):
    """Offsets in the workspace for every computed value that is not an output.

    A block is reused once the last step reading its value (directly or through an alias)
    has run; no step writes a block that one of its own inputs occupies.
    """
    last_use = {}
    for step, node in enumerate(computed):
        for inp in node.inputs:
            source = _source(id(inp), aliases) if id(inp) in aliases else inp
            last_use[id(source)] = step
    blocks = []  # [offset, size, busy until step]
    offsets, end = {}, 0
    for step, node in enumerate(computed):
        if id(node) in buffer_args:
            continue
        size = max(1, int(np.prod(node.shape))) * node.dtype.as_numpy_dtype().itemsize
        size = -(-size // ALIGN) * ALIGN
        until = last_use.get(id(node), step)
        for block in blocks:
            if block[2] < step and block[1] >= size:
                block[2] = until
                offsets[id(node)] = block[0]
                break
        else:
            blocks.append([end, size, until])
            offsets[id(node)] = end
            end += size
    offsets[None] = end
    return offsets


def _render_kernel(node, name, blas, threads):
    """(C text of the kernel function, whether it returns an error code)."""
    # fused kernels, and any op that fusion normally folds into one when it stands alone
    if node.op == "fused" or node.op in REDUCTIONS or node.op in C_EXPRESSIONS or node.op in VIEWS:
        params = [f"p{k}" for k in range(len(node.inputs))]
        kernel = fused_loop_nest(node, name, params, threads)
        kernel.params = [(storage(i.dtype), p) for i, p in zip(node.inputs, params)]
        return templates.render("loops.c.j2", k=kernel), False
    render = SPECIAL[node.op]
    return render(node, name, blas)


def _comment(node):
    return f"{node.op}: {node.dtype.short_name}{list(node.shape)}{_where(node, '  #')}"


def _loop_kernel(node, name, params, nests):
    kernel = LoopNest(name, params, storage(node.dtype), _comment(node))
    kernel.nests = nests
    return templates.render("loops.c.j2", k=kernel), False


def _matmul(node, name, blas):
    a, b = node.inputs
    ta, tb = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    m, k = (a.shape[-1], a.shape[-2]) if ta else a.shape[-2:]
    n = b.shape[-2] if tb else b.shape[-1]
    batch = node.shape[:-2]
    index = identity_map(len(batch))
    a_batch = _batch_offset(index, batch, a.shape[:-2])
    b_batch = _batch_offset(index, batch, b.shape[:-2])
    routine = {"float32": "s", "float64": "d"}.get(node.dtype.name) if blas else None
    return templates.render(
        "matmul.c.j2",
        comment=_comment(node),
        name=name,
        T=storage(node.dtype),
        batch_loops=[(INDEX[d], e) for d, e in enumerate(batch)],
        m=m,
        k=k,
        n=n,
        a_offset=a_batch.c(INDEX),
        b_offset=b_batch.c(INDEX),
        out_offset=offset(index, batch).c(INDEX),
        blas=routine,
        ta=ta,
        tb=tb,
    ), False


def _batch_offset(index, out_batch, in_batch):
    return offset(broadcast_map(index, out_batch, in_batch), in_batch)


def _gather_like(template):
    def render(node, name, blas):
        axis = node.attrs["axis"]
        data, indices = node.inputs
        full = node.attrs["shape"] if "shape" in node.attrs else data.shape
        return templates.render(
            template,
            comment=_comment(node),
            name=name,
            T=storage(node.dtype),
            I=storage(indices.dtype),
            outer=int(np.prod(full[:axis])),
            size=full[axis],
            inner=int(np.prod(full[axis + 1 :])),
            count=int(np.prod(indices.shape)),
            error=1,
        ), True

    return render


def _scan(node, name, blas):
    axis = node.attrs["axis"]
    shape = node.shape
    operator = "+" if node.op == "cumsum" else "*"
    return templates.render(
        "scan.c.j2",
        comment=_comment(node),
        name=name,
        T=storage(node.dtype),
        C=compute(node.dtype),
        outer=int(np.prod(shape[:axis])),
        n=shape[axis],
        inner=int(np.prod(shape[axis + 1 :])),
        identity="0" if node.op == "cumsum" else "1",
        combine=f"acc {operator} ({compute(node.dtype)})x[at]",
        exclusive=node.attrs["exclusive"],
        reverse=node.attrs["reverse"],
    ), False


def _argreduce(node, name, blas):
    (x,) = node.inputs
    axis = node.attrs["axis"]
    return templates.render(
        "argreduce.c.j2",
        comment=_comment(node),
        name=name,
        T=storage(x.dtype),
        C=compute(x.dtype),
        O=storage(node.dtype),
        outer=int(np.prod(x.shape[:axis])),
        n=x.shape[axis],
        inner=int(np.prod(x.shape[axis + 1 :])),
        compare=">" if node.op == "argmax" else "<",
    ), False


def _fill(node, name, blas):
    index = identity_map(len(node.shape))
    value = literal(node.attrs["value"], node.dtype)
    store = f"out[{offset(index, node.shape).c(INDEX)}] = ({storage(node.dtype)}){value};"
    return _loop_kernel(node, name, [], [Nest(_loops(node.shape), [], store)])


def _concat(node, name, blas):
    axis, start, nests, params = node.attrs["axis"], 0, [], []
    for k, part in enumerate(node.inputs):
        index = identity_map(len(part.shape))
        shifted = tuple(a + start if d == axis else a for d, a in enumerate(index))
        nests.append(
            copy_nest(
                f"p{k}", part.shape, index, shifted, node.shape, node.dtype, _loops(part.shape)
            )
        )
        params.append((storage(part.dtype), f"p{k}"))
        start += part.shape[axis]
    return _loop_kernel(node, name, params, nests)


def _slice_grad(node, name, blas):
    (g,) = node.inputs
    zero = Nest(
        _loops(node.shape),
        [],
        f"out[{offset(identity_map(len(node.shape)), node.shape).c(INDEX)}] = 0;",
    )
    index = identity_map(len(g.shape))
    target = slice_source_map(node.attrs["index"], index, len(node.shape))
    write = copy_nest("p0", g.shape, index, target, node.shape, node.dtype, _loops(g.shape))
    return _loop_kernel(node, name, [(storage(g.dtype), "p0")], [zero, write])


def _tile(node, name, blas):
    (x,) = node.inputs
    multiples, rank = node.attrs["multiples"], len(x.shape)
    copies = [Affine.index(2 * d) for d in range(rank)]
    within = [Affine.index(2 * d + 1) for d in range(rank)]
    out_map = tuple(c * x.shape[d] + w for d, (c, w) in enumerate(zip(copies, within)))
    loops = [
        (INDEX[i], extent)
        for i, extent in enumerate(e for d in range(rank) for e in (multiples[d], x.shape[d]))
    ]
    nest = copy_nest("p0", x.shape, tuple(within), out_map, node.shape, node.dtype, loops)
    return _loop_kernel(node, name, [(storage(x.dtype), "p0")], [nest])


def _loops(shape):
    return [(INDEX[k], d) for k, d in enumerate(shape)]


SPECIAL = {
    "matmul": _matmul,
    "gather": _gather_like("gather.c.j2"),
    "scatter_add": _gather_like("scatter_add.c.j2"),
    "cumsum": _scan,
    "cumprod": _scan,
    "argmax": _argreduce,
    "argmin": _argreduce,
    "fill": _fill,
    "concat": _concat,
    "slice_grad": _slice_grad,
    "tile": _tile,
}
