"""Everything the report page shows, gathered from one traced signature: the facts the
template lays out, with each element's source-line keys already attached.

The ConcreteFunction gives the graphs of every stage, the C and the executable's metadata;
its Function (where the report was given one) the retraces and the trace time; a profile
(anything with `line_seconds(concrete)` -> {(filename, lineno): seconds} and
`node_seconds(concrete)` -> {'%k': seconds} of the final IR's top-level nodes) the times.
"""

import os

from codegen.lower import plan_buffers
from tracer.ir import all_nodes, node_names
from tracer.passes.pipeline import PIPELINE
from tracer.report.buffers import summarize
from tracer.report.c_text import link_steps, read_c
from tracer.report.ir_text import printed_lines, stage_change
from tracer.report.locations import Locations, function_source, source_rows
from tracer.report.svg import draw
from tracer.report.timing import compile_phases, total


class Stage:
    """One stage of the pipeline: its name, the pass that made it, its printed lines (each
    with `locs` and, on the final stage, `seconds`) and what the pass changed."""

    def __init__(self, name, made_by, lines, change):
        self.name = name
        self.made_by = made_by
        self.lines = lines
        self.change = change


class KernelEntry:
    """A fused node of the final graph: its kernel's name, the C function computing it,
    the node's name and printed line, its body's lines, the source lines it holds."""

    def __init__(self, node, name, line, c_name, body, locs, seconds):
        self.node = node
        self.kernel = node.attrs["kernel"].name
        self.name = name
        self.line = line
        self.c_name = c_name
        self.body = body
        self.locs = locs
        self.seconds = seconds


class Contents:
    """The report's facts (see the module docstring); built by `gather`."""


def gather(concrete, function=None, profile=None):
    """The Contents of the report of `concrete`, traced by `function` (a tt.function, or None
    where unknown), with the times of `profile` where one is given."""
    # a module from a plan stored by an earlier process skipped the passes: `stages` runs
    # them now, when first asked for
    passes_ran_for_report = getattr(concrete, "_stages", True) is None
    stages = concrete.stages
    final = stages.final
    locations = Locations()
    c = Contents()
    c.name = concrete.name
    c.signature = concrete.pretty_printed_signature()
    c.backend = concrete.backend
    c.profiled = profile is not None
    node_seconds = profile.node_seconds(concrete) if profile is not None else {}
    c.stages = _stages(stages, locations, node_seconds)
    c.final_stage = c.stages[-1].name
    names = node_names(final)
    final_lines = {id(line.node): line.text for line in c.stages[-1].lines if line.name}
    c.svg, c.svg_note = draw(final, names, final_lines, locations)
    c.c_lines, kernel_of = _c(concrete, final, locations)
    c.kernels = _kernels(final, names, final_lines, kernel_of, locations, node_seconds)
    c.buffers = summarize(final, concrete._updates, names) if c.c_lines is not None else None
    for block in c.buffers.blocks if c.buffers is not None else ():
        for value in block.values:
            value.locs = locations.keys_of([value.node])
    c.workspace = getattr(getattr(concrete._executable, "plan", None), "workspace_bytes", None)
    build_times = getattr(function, "_build_times", {}).get(concrete)
    c.phases = compile_phases(concrete, build_times, passes_ran_for_report)
    c.compile_seconds = total(c.phases)
    c.phase_max = max((p.seconds for p in c.phases if p.seconds), default=1.0)
    c.rows = _rows(function, stages, locations)
    c.call_seconds = _line_times(c.rows, concrete, profile) if profile is not None else None
    c.line_total = sum(r.seconds for r in c.rows if r.seconds)
    c.line_max = max((r.seconds for r in c.rows if r.seconds), default=1.0)
    c.retraces = list(getattr(function, "_retrace_reasons", ())) if function else None
    c.signatures = [
        (other.pretty_printed_signature(), other is concrete)
        for other in (getattr(function, "_concrete", {}).values() if function else ())
    ]
    c.node_count = len(final.nodes)
    return c


def _stages(stages, locations, node_seconds):
    made_by = dict((name, run_pass.__name__) for name, run_pass in PIPELINE)
    result, previous = [], None
    for name, graph in stages.items():
        lines = printed_lines(graph)
        for line in lines:
            line.locs = locations.keys_of([line.node]) if line.node is not None else ""
            line.seconds = None
        result.append(Stage(name, made_by.get(name), lines, stage_change(previous, graph)))
        previous = graph
    for line in result[-1].lines:
        line.seconds = node_seconds.get(line.name) if line.name else None
    return result


def _c(concrete, final, locations):
    """(the C's CLines, {id(node): C name of its kernel}), or (None, {}) with no C."""
    try:
        source = concrete.c_source()
    except RuntimeError:  # the interpreter runs it: there is no C
        return None, {}
    if source is None:
        return None, {}
    c = read_c(source, locations)
    link_steps(c, plan_buffers(final, concrete._updates).computed, locations)
    return c.lines, c.kernel_of


def _kernels(final, names, lines, kernel_of, locations, node_seconds):
    entries = []
    for node in all_nodes(final):
        if node.op != "fused":
            continue
        body = printed_lines(node.attrs["kernel"].graph, "    ", top=False)
        name = names.get(id(node))
        locs = locations.keys_of([node, *node.attrs["kernel"].graph.nodes])
        c_name = kernel_of.get(id(node))
        line = lines.get(id(node), f"{node.op} (in a held graph)")
        seconds = node_seconds.get(name) if name else None
        entries.append(KernelEntry(node, name, line, c_name, body, locs, seconds))
    for entry in entries:
        for line in entry.body:
            line.locs = locations.keys_of([line.node]) if line.node is not None else ""
    return entries


def _rows(function, stages, locations):
    """The source rows, each with its node counts per stage."""
    counts, gradients = {}, set()
    for stage, graph in stages.items():
        for node in all_nodes(graph):
            key = locations.key(node.location)
            if key is not None:
                counts.setdefault(key, {}).setdefault(stage, 0)
                counts[key][stage] += 1
                if len(node.location) > 2:
                    gradients.add(key)
    python = getattr(function, "python_function", None)
    rows = source_rows(function_source(python) if python else None, locations)
    for row in rows:
        row.counts = counts.get(row.key, {})
        row.gradient = row.key in gradients
    return rows


def _line_times(rows, concrete, profile):
    """Put the profile's time of each line on its row; the seconds of no line (a call's
    own work: arguments, results, Python) are returned."""
    elsewhere = 0.0
    for key, seconds in profile.line_seconds(concrete).items():
        row = _row_at(rows, *key) if key is not None and key[0] is not None else None
        if row is None:
            elsewhere += seconds
        else:
            row.seconds = (row.seconds or 0.0) + seconds
    return elsewhere


def _row_at(rows, filename, lineno):
    """The row of a profiled line: the same file (by its absolute path, else by its base
    name, as the C's comments name it) and line."""
    path = os.path.abspath(filename)
    for exact in (True, False):
        for row in rows:
            same = (
                os.path.abspath(row.filename) == path
                if exact
                else os.path.basename(row.filename) == os.path.basename(filename)
            )
            if same and row.lineno == lineno:
                return row
    return None
