"""The IR of each stage as the printer writes it, each line with the node it prints, and what
each pass changed as a line diff against the stage before it.

The text is `format_graph`'s, so the page shows exactly what `concrete.ir(stage)` prints;
the nodes are found by the names the printer gives (`node_names`), so that each line can
carry its node's source line and time.
"""

import difflib
import re

from tracer.ir import all_nodes, format_graph, node_names

_NAME = re.compile(r"(%\d+):")
DIFF_CONTEXT = 1  # unchanged lines shown around each change


class IrLine:
    """One printed line: its text, the node it prints (None for `return` and headers), and
    the node's name in the top-level graph (None inside a fused body)."""

    def __init__(self, text, node=None, name=None):
        self.text = text
        self.node = node
        self.name = name


def printed_lines(graph, indent="", top=True):
    """The IrLines of `format_graph(graph)`, with the graphs its nodes show indented under
    them as the printer does (a fused body, a cond's branches)."""
    names = node_names(graph)
    nodes = {names[id(n)]: n for n in _named(graph) if id(n) in names}
    lines = []
    for text in format_graph(graph).splitlines():
        if text.startswith(" "):  # a shown graph's line: written below, from its own graph
            continue
        match = _NAME.match(text)
        node = nodes.get(match.group(1)) if match else None
        lines.append(IrLine(indent + text, node, match.group(1) if match and top else None))
        if node is not None:
            lines.extend(_shown(node, indent))
    return lines


def _named(graph):
    """The nodes the printer may name: the graph's, and operands from outside it."""
    seen = {}
    for node in graph.nodes:
        for inp in node.inputs:
            seen.setdefault(id(inp), inp)
        seen.setdefault(id(node), node)
    return seen.values()


def _shown(node, indent):
    shown = [(k, v) for k, v in node.attrs.items() if getattr(v, "shown", False)]
    lines = []
    for name, attribute in shown:
        if len(shown) > 1:
            lines.append(IrLine(f"{indent}  {name}:"))
        lines.extend(printed_lines(attribute.graph, indent + "    ", top=False))
    return lines


class StageChange:
    """What the pass that made a stage changed: its diff lines ((kind, text), kind one of
    " ", "+", "-", "@"), and the node counts before and after (held graphs' nodes too)."""

    def __init__(self, before, after, diff):
        self.before = before
        self.after = after
        self.diff = diff

    @property
    def added(self):
        return sum(kind == "+" for kind, _ in self.diff)

    @property
    def removed(self):
        return sum(kind == "-" for kind, _ in self.diff)


def stage_change(previous, graph):
    """The StageChange from the graph `previous` to `graph` (None: `graph` is the first)."""
    after = sum(1 for _ in all_nodes(graph))
    if previous is None:
        return StageChange(None, after, [])
    old = format_graph(previous).splitlines()
    new = format_graph(graph).splitlines()
    diff = []
    for text in difflib.unified_diff(old, new, lineterm="", n=DIFF_CONTEXT):
        if text.startswith(("---", "+++")):
            continue
        diff.append((text[0], text[1:]) if text[0] in " +-" else ("@", text))
    return StageChange(sum(1 for _ in all_nodes(previous)), after, diff)
