"""Standalone C: graphs lowered into a header, a source and a Makefile that need no Python,
no tracer runtime and no allocation (docs/export-c.md).

Each entry point is a graph lowered as for a compiled module (`codegen.lower.lower`), its
kernels named after the entry. Where a module takes `char **args`, the entry point takes
named pointers and fills that array itself; constants (and frozen variables) are
`static const` arrays of the source; every intermediate lives in one workspace the caller
gives, of `<prefix>_work_size(dims)` bytes. The source is C99 with no OpenMP pragma and no
machine-specific flag; CBLAS is called only where `<PREFIX>_USE_CBLAS` is defined.
"""

import re

import numpy as np

from codegen import templates, units
from codegen.ctypes import float_literal, storage
from codegen.forms import C_FORMS, HostCall, NotCompiled
from codegen.lower import ALIGN, lower, text_shape
from tracer.ir import LEAF_OPS, all_nodes, dims, format_location

EXPORTED_DTYPES = ("float32", "float64", "complex64", "complex128", "int32", "int64", "bool")
C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while bool true false work".split()
)


class ExportError(ValueError):
    """A graph that has no standalone C: the op, dtype or line that stops it is named."""


class Entry:
    """One exported function: `graph`, the C names of its inputs and of its first
    len(output_names) outputs; the outputs after those are the new values of inputs
    (`updates`: output position -> input position), which the caller passes read-write.
    `frozen` maps an input position to the array built into the source in its place."""

    def __init__(self, name, graph, input_names, output_names, updates=None, frozen=None):
        self.name = name
        self.graph = graph
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        self.updates = dict(updates or {})
        self.frozen = dict(frozen or {})
        self.summary = ""  # one line for the header: what the entry computes


def identifier(name, taken=()):
    """A C identifier for a Python name: other characters become `_`, and a keyword, a
    leading digit or a name in `taken` gets a suffix."""
    cleaned = re.sub(r"\W", "_", str(name)) or "arg"
    if cleaned[0].isdigit():
        cleaned = "_" + cleaned
    if cleaned in C_KEYWORDS:
        cleaned += "_"
    unique, k = cleaned, 1
    while unique in taken:
        unique, k = f"{cleaned}_{k}", k + 1
    return unique


def export_sources(prefix, entries, native=False, origin=""):
    """{file name: text} of `prefix`.h, `prefix`.c and the Makefile for `entries`."""
    macro = prefix.upper() + "_USE_CBLAS"
    rendered, helpers, errors = [], {}, {}
    for entry in entries:
        _check(entry)
        plan = lower(
            entry.graph,
            title=entry.name,
            blas=True,
            updates=entry.updates,
            names=f"{entry.name}_",
            cblas_guard=macro,
            first_error=len(errors),
            in_place=False,
            compact_calls=False,  # every call written out, however many: a file to read
        )
        errors.update({code: message for code, (_, message) in plan.errors.items()})
        helpers.update(dict.fromkeys(plan.helpers))
        rendered.append(_entry_context(entry, plan))
    symbols = sorted({s for r in rendered for s in r["symbols"]}, key=lambda s: int(s[1:]))
    values = dict(
        prefix=prefix,
        guard=re.sub(r"\W", "_", prefix.upper()) + "_H",
        cblas_macro=macro,
        entries=rendered,
        symbols=symbols,
        errors=sorted(errors.items()),
        origin=origin,
    )
    prologue = templates.render(
        "prologue.h.j2",
        title=prefix,
        libc=None,
        vector_math=False,
        helpers=list(helpers),
        compact=False,
    )
    return {
        f"{prefix}.h": templates.render("export.h.j2", **values),
        f"{prefix}.c": templates.render("export.c.j2", prologue=prologue, **values),
        "Makefile": templates.render("export.mk.j2", native=native, **values),
    }


def _check(entry):
    """Raise ExportError for what standalone C cannot hold."""
    for node in all_nodes(entry.graph):
        parts = node.dtype.parts if getattr(node.dtype, "is_tuple", False) else [(0, node.dtype)]
        for _, dtype in parts:
            if dtype.name not in EXPORTED_DTYPES:
                raise ExportError(
                    f"{entry.name}: {node.op}{_where(node)} computes {dtype.name} values; "
                    f"exported C holds {', '.join(EXPORTED_DTYPES)}"
                )
        form = C_FORMS.get(node.op)
        if node.op not in LEAF_OPS and (form is None or isinstance(form, NotCompiled)):
            reason = f": {form.reason}" if form is not None else ""
            raise ExportError(f"{entry.name}: {node.op}{_where(node)} has no C form{reason}")
        if isinstance(form, HostCall):
            raise ExportError(
                f"{entry.name}: {node.op}{_where(node)} calls back into Python, which exported "
                "C does not have; export the function without it (the gradients, say) and "
                "combine its results in the C program (with MPI_Allreduce, say)"
            )


def _where(node):
    where = format_location(node.location)
    return f" (at {where})" if where else ""


def _entry_context(entry, plan):
    """What export.c.j2 and export.h.j2 need of one entry point."""
    graph = entry.graph
    n_inputs, n_constants = len(graph.inputs), len(plan.constants)
    slots, params, outputs, before, after, docs = [], [], [], [], [], []
    arrays = []  # (C name, C type, initializer) of the static arrays: constants, frozen inputs
    for k, node in enumerate(graph.inputs):
        name = entry.input_names[k]
        if k in entry.frozen:
            array_name = f"{entry.name}_{name}"
            arrays.append(_static_array(array_name, entry.frozen[k]))
            slots.append(f"(char *){array_name}")
            continue
        written = k in plan.updated_inputs
        params.append(f"{'' if written else 'const '}{storage(node.dtype)} *{name}")
        slots.append(f"(char *){name}")
        role = "input, read and written (its new value)" if written else "input"
        docs.append((name, _shape_text(node.dtype, plan.input_shapes[k]), role))
    for j, array in enumerate(plan.constants):
        array_name = f"{entry.name}_c{j}"
        arrays.append(_static_array(array_name, array))
        slots.append(f"(char *){array_name}")
    buffer_slots = [None] * len(plan.buffers)
    for position, name in enumerate(entry.output_names):
        out = graph.outputs[position]
        kind, where = plan.outputs[position]
        outputs.append(f"{storage(out.dtype)} *{name}")
        docs.append((name, _shape_text(out.dtype, text_shape(out.shape)), "output"))
        if kind == "buffer" and buffer_slots[where] is None:
            buffer_slots[where] = f"(char *){name}"
            continue
        if kind == "buffer":  # an output the function returns twice
            source = buffer_slots[where]
        elif kind == "constant":
            source = _constant_slot(arrays, entry, position, where)
        else:  # "input", "input before": an argument returned as it is
            source = slots[where]
        copy = f"memcpy({name}, {source}, {_c(_c_bytes(out))});"
        (before if kind == "input before" else after).append(copy)
    work_bytes = _c(plan.workspace_bytes)
    for k, slot in enumerate(buffer_slots):
        if slot is None:  # a buffer no output names (an input's old value): in the workspace
            shape, dtype = plan.buffers[k]
            start = f"(({work_bytes} + {ALIGN - 1}) / {ALIGN} * {ALIGN})"
            buffer_slots[k] = f"((char *)work + {start})"
            work_bytes = f"({start} + {_c(_c_bytes_of(shape, dtype))})"
    slots += buffer_slots
    slots.append("(char *)work")
    if plan.symbols:
        slots.append("(char *)dims")
    return dict(
        name=entry.name,
        summary=entry.summary,
        symbols=plan.symbols,
        params=[*params, *(f"int64_t {s}" for s in plan.symbols), *outputs, "void *work"],
        docs=docs,
        arrays=arrays,
        slots=slots,
        before=before,
        after=after,
        work_bytes=work_bytes,
        run=templates.render(
            "module.c.j2",
            prologue="",
            entry_point=f"static int {entry.name}_run",
            # one file: every kernel defined before it is called, none in a block, and no
            # estimates of compile work
            layout=units.Layout(
                [],
                [(_without_openmp(kernel), None) for kernel, _ in plan.layout.kernels],
                ["#if TR_IN_UNIT"] * len(plan.layout.parts),
                "#if TR_IN_UNIT",
            ),
            parts=plan.parts,
            title=entry.name,
            n_inputs=n_inputs,
            n_constants=n_constants,
            n_outputs=len(plan.buffers),
            dims=plan.symbols,
            n_host_calls=0,  # (refused by _check: exported C has no Python to call)
        ),
    )


def _constant_slot(arrays, entry, position, value):
    """The slot of a constant output's value: a static array of its own."""
    name = f"{entry.name}_out{position}"
    arrays.append(_static_array(name, value))
    return f"(const char *){name}"


def _static_array(name, array):
    """(name, C element type, initializer) of `array` as a static const array (one element
    at least: C has no empty arrays)."""
    array = np.ascontiguousarray(array)
    if array.dtype.kind == "c":  # C99: a complex is an array of its real and imaginary parts
        array = array.view(array.real.dtype)
    flat = array.reshape(-1)
    if array.dtype == np.bool_:
        items = ["1" if v else "0" for v in flat]
    elif array.dtype.kind in "iu":
        items = [_integer_literal(int(v), array.dtype) for v in flat]
    else:
        suffix = "f" if array.dtype == np.float32 else ""
        items = [_float_item(float(v), suffix) for v in flat]
    ctype = {"bool": "bool", "float32": "float", "float64": "double"}.get(
        array.dtype.name, f"{array.dtype.name}_t"
    )
    return (name, ctype, len(items) or 1, ", ".join(items) or "0")


def _float_item(value, suffix):
    text = float_literal(value)
    return text + suffix if text[-1].isdigit() else text


def _integer_literal(value, dtype):
    """An integer literal of `dtype` (the most negative value written as C requires)."""
    bits = np.dtype(dtype).itemsize * 8
    if value == -(2 ** (bits - 1)):
        return f"(-INT{bits}_C({2 ** (bits - 1) - 1}) - 1)"
    return f"INT{bits}_C({value})"


def _without_openmp(kernel):
    """A kernel without its OpenMP pragmas: exported C is plain C99 (compilers warn of
    pragmas they do not know)."""
    return "".join(
        line for line in kernel.splitlines(True) if not line.lstrip().startswith("#pragma omp")
    )


def _shape_text(dtype, shape):
    return f"{dtype.name}[{', '.join(str(d) for d in shape)}]"


def _c_bytes(node):
    return _c_bytes_of(node.shape, node.dtype)


def _c_bytes_of(shape, dtype):
    itemsize = np.dtype(getattr(dtype, "as_numpy_dtype", dtype)).itemsize
    return dims.size(shape) * itemsize


def _c(size):
    """A size (an int, or a Dim of the dims) as a C expression."""
    return f"(size_t)({size})"
