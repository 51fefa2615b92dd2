"""The generated C, read back: its kernels, the steps that call them, and the source lines
its comments name.

Lowering (codegen/lower.py) names each kernel `k<N>_<label>` (the label: a fused kernel's
name without its `k_`, or the op; a kernel whose loops are also written on float's grid has
`_plain` and `_grid` versions before it), writes a comment with the user's line above each kernel
and on each of its statements, and calls the kernels from the entry point in the order of
the buffer plan's steps, each call with a comment `/* fused f32[14] # model.py:12 */`. So
the calls, read in order, pair with the plan's computed nodes: that is how a kernel is
linked to its IR nodes.
"""

import re

from tracer.report.locations import join_keys

_DEFINITION = re.compile(r"^(?:static|TR_PART)\b[^(]*?\b(k\d+_\w+?)(?:_plain|_grid)?\(")
_CALL = re.compile(r"\b(k\d+_\w+?)(?:_step)?\b\s*[(,]")


class CLine:
    """One line of the C: its text, the kernel whose definition holds it (None in the entry
    point and the prologue), the kernel it calls, and the keys of the source lines it is
    linked to (a `data-locs` value)."""

    def __init__(self, text):
        self.text = text
        self.kernel = None
        self.calls = None
        self.defines = False  # the first line of its kernel's definition
        self.locs = ""


class CSource:
    """The C's lines, with each kernel's definition found (`starts`: C name -> line index)
    and its calls paired with the nodes they compute (`nodes`: C name -> [node])."""

    def __init__(self, lines, starts):
        self.lines = lines
        self.starts = starts
        self.nodes = {name: [] for name in starts}
        self.kernel_of = {}  # id(node) -> the C name of the kernel that computes it


def read_c(source, locations):
    """The CSource of `source`, each line linked to the source lines its comment names (the
    report's `Locations`)."""
    pattern, texts = locations.pattern()
    lines, starts, current = [], {}, None
    for text in source.splitlines():
        line = CLine(text)
        definition = _DEFINITION.match(text)
        if definition:  # (a kernel written twice, grid_mode.c.j2's, is one kernel)
            current = definition.group(1)
            line.defines = current not in starts
            starts.setdefault(current, len(lines))
        elif current is None:  # the entry point (or the prologue): a call, or a table's row
            called = _CALL.search(text)
            line.calls = called.group(1) if called else None
        line.kernel = current
        if pattern is not None:
            line.locs = join_keys(key for found in pattern.findall(text) for key in texts[found])
        lines.append(line)
        if current is not None and text == "}":
            current = None
    c = CSource(lines, starts)
    for line in lines:  # (a call of a name no kernel has is not a kernel's call)
        if line.calls not in starts:
            line.calls = None
    return c


def link_steps(c, computed, locations):
    """Pair the kernel calls of the entry point, in order, with the nodes of the buffer
    plan's steps (`computed`) they compute: each call takes the next step whose node has
    its label, skipping steps that call no kernel (a loop's statements, a host call). Each
    kernel's definition line then carries the source lines of its nodes."""
    position = 0
    for line in c.lines:
        if line.calls is None or line.kernel is not None:
            continue
        label = line.calls.split("_", 1)[1]
        for k in range(position, len(computed)):
            if kernel_label(computed[k]) == label:
                node = computed[k]
                c.nodes[line.calls].append(node)
                c.kernel_of[id(node)] = line.calls
                position = k + 1
                break
    for name, nodes in c.nodes.items():
        held = [inner for node in nodes for inner in _body(node)]
        first = c.lines[c.starts[name]]
        first.locs = join_keys([*locations.keys_of([*nodes, *held]).split(), *first.locs.split()])
    return c


def kernel_label(node):
    """What lowering writes after `k<N>_` in the name of the kernel computing `node`."""
    if node.op == "fused":
        return node.attrs["kernel"].name[2:]
    return node.op


def _body(node):
    kernel = node.attrs.get("kernel") if node.op == "fused" else None
    return kernel.graph.nodes if kernel is not None else ()
