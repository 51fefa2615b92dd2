"""ConcreteFunctions as the entry points of one exported C file pair (`codegen.export`):
their inputs and outputs named, their side effects checked (docs/export-c.md)."""

import contextlib
import os
import secrets

from codegen.export import Entry, ExportError, export_sources
from tracer.ir import all_nodes, format_location
from tracer.passes.pipeline import run_nested
from tracer.passes.row_products import products_stored
from tracer.tensor import TensorLike

VARIABLE_MODES = ("frozen", "arguments")


def export_concretes(directory, prefix, named, variables=None, native=False):
    """Write ConcreteFunctions as the entry points of one file pair: `named` lists
    (name, ConcreteFunction), each name made a C identifier (`codegen.export.identifier`);
    `ConcreteFunction.export_c` exports one."""
    entries = [entry(name, concrete, variables) for name, concrete in named]
    return write(directory, prefix, entries, native, "")


def write(directory, prefix, entries, native, origin):
    """Write the files of `entries` into `directory`: their paths."""
    files = export_sources(prefix, entries, native=native, origin=origin)
    os.makedirs(directory, exist_ok=True)
    return [_write_inside(directory, name, text) for name, text in files.items()]


def _write_inside(directory, file_name, text):
    """Write `text` as `directory`/`file_name` (its path) through a new file beside it and a
    rename. The rename replaces a link planted under that name (an output directory may be
    shared) instead of writing where it points, so nothing outside `directory` is written,
    and a reader never sees half a file."""
    path = os.path.join(directory, file_name)
    staging = os.path.join(directory, f".{file_name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    descriptor = os.open(staging, flags, 0o666)  # the umask applies, as with open(path, "w")
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
        os.replace(staging, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        raise
    return path


def entry(name, concrete, variables, summary=None, outputs=None):
    """The codegen Entry of a ConcreteFunction, its side effects checked; its outputs named
    `outputs`, or after the structure of its result."""
    if variables not in (None, *VARIABLE_MODES):
        raise ValueError(
            f"export_c: variables is one of {VARIABLE_MODES} or None, not {variables!r}"
        )
    # the C module's graph, its products computed by kernels stored again (exported C's loops
    # have no buffers of their own)
    graph = run_nested(products_stored, concrete.stages.final)
    printed = next((n for n in all_nodes(graph) if n.op == "print"), None)
    if printed is not None:
        where = format_location(printed.attrs["call"].location)
        raise ExportError(
            f"{concrete.name} calls tt.print{' at ' + where if where else ''}: exported C has no "
            "Python to print with; remove the call (or return the value) to export it"
        )
    n_arguments = len(graph.inputs) - len(concrete._variables)
    input_names = []  # made C identifiers, each once, by codegen.export
    for node in graph.inputs:
        given = str(node.attrs.get("name", "arg"))  # a variable's ends in ":0", as TF's
        input_names.append(given[:-2] if given.endswith(":0") else given)
    n_outputs = len(concrete._tensor_positions)
    output_names = (outputs or _output_names(concrete._structure))[:n_outputs]
    if len(output_names) != n_outputs:
        raise ExportError(
            f"{concrete.name} returns {n_outputs} tensors, and {len(output_names)} names were "
            "found for them"
        )
    frozen, updates = {}, {}
    if concrete._variables:
        if variables is None:
            variable = concrete._variables[0]
            where = format_location(variable._node.location)
            raise ExportError(
                f"{concrete.name} reads the variable {variable.name!r}"
                f"{' (created at ' + where + ')' if where else ''}: export it with "
                "variables='frozen' (its current value built into the C) or "
                "variables='arguments' (an argument of the C function)"
            )
        if variables == "frozen":
            if concrete._assigned:
                variable = concrete._assigned[0]
                raise ExportError(
                    f"{concrete.name} assigns the variable {variable.name!r}: a frozen variable "
                    "cannot change; export with variables='arguments'"
                )
            frozen = {n_arguments + k: v.numpy() for k, v in enumerate(concrete._variables)}
        else:
            updates = concrete._updates
    if len(graph.outputs) > n_outputs + len(concrete._assigned):
        raise ExportError(f"{concrete.name} has outputs exported C cannot place")
    entry = Entry(name, graph, input_names, output_names, updates, frozen)
    entry.summary = summary or f"{concrete.name}({', '.join(n for n, _ in concrete._named)})"
    return entry


def _output_names(structure):
    """A name per tensor leaf of a function's result: `out` for one tensor, dict keys, or
    `out0`, `out1`, ... by position (nested: `out0_1`)."""
    if isinstance(structure, TensorLike):
        return ["out"]
    names = []

    def visit(prefix, value):
        if isinstance(value, dict):
            for key in sorted(value):
                visit(f"{prefix}_{key}" if prefix else str(key), value[key])
        elif isinstance(value, (list, tuple)):
            for k, item in enumerate(value):
                visit(f"{prefix}_{k}" if prefix else f"out{k}", item)
        elif isinstance(value, TensorLike):
            names.append(prefix or "out")
        elif hasattr(value, "_tensor_components"):  # an IndexedSlices, a SparseTensor: its parts
            for part in value._component_names:
                names.append(f"{prefix or 'out'}_{part}")

    visit("", structure)
    return names
