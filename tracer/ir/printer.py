"""The IR's text form: one node per line, deterministic, names given at print time.

    %0: f32[2,3] = input[name='x']               # model.py:3
    %1: f32[2,3] = mul %0, 2.0                   # model.py:5
    %2: f32[] = reduce_sum[axis=(0, 1), keepdims=False] %1   # model.py:6
    return %2

Scalar constants are written inline where they are used; other constants get a line
(`const[value=...]` when the graph holds the value, a bare `const` when it does not, as
for values an eager tape saw but did not need to keep). `docs/ir.md` gives the grammar.
"""

from tracer.dtypes import DType
from tracer.ir.literal import Literal
from tracer.ir.source import format_location

COMMENT_COLUMN = 44


def format_type(node):
    if getattr(node.dtype, "is_tuple", False):
        return node.dtype.short_name
    return f"{node.dtype.short_name}[{','.join(map(str, node.shape))}]"


def _format_attr(value):
    if isinstance(value, DType):
        return value.name
    if isinstance(value, Literal):
        return repr(value)
    return repr(value)


def _is_inline_literal(node):
    return node.op == "const" and isinstance(node.attrs.get("value"), Literal) and not node.shape


def format_node(node, names):
    """One line for `node`; `names` maps id(node) -> '%k' for the nodes printed so far."""
    attrs = ", ".join(f"{k}={_format_attr(v)}" for k, v in node.attrs.items())
    op = f"{node.op}[{attrs}]" if attrs else node.op
    args = ", ".join(_operand(inp, names) for inp in node.inputs)
    text = f"{names[id(node)]}: {format_type(node)} = {op}" + (f" {args}" if args else "")
    where = format_location(node.location)
    return f"{text.ljust(COMMENT_COLUMN)} # {where}" if where else text


def _operand(node, names):
    if _is_inline_literal(node):
        return repr(node.attrs["value"])
    return names[id(node)]


def format_nodes(nodes, outputs=()):
    """Lines for `nodes`; an operand not among them is declared as a `const` line at first use
    (from this graph's point of view it is a value that comes from outside)."""
    names, lines = {}, []
    for node, declared in _in_print_order(nodes, outputs, names):
        if declared:
            lines.append(f"{names[id(node)]}: {format_type(node)} = const")
            continue
        lines.append(format_node(node, names))
        lines.extend(_shown_graphs(node))
    if outputs:
        lines.append("return " + ", ".join(_operand(out, names) for out in outputs))
    return "\n".join(lines)


def node_names(graph):
    """{id(node): '%k'}: the names `format_graph` gives the nodes of `graph` (the profiler
    and the compile report name nodes as the printed IR does)."""
    names = {}
    for _ in _in_print_order(graph.nodes, graph.outputs, names):
        pass
    return names


def _in_print_order(nodes, outputs, names):
    """(node, whether it is an outside operand declared as `const`) of each printed line, in
    order, naming each in `names` (id(node) -> '%k') as it comes."""
    for node in nodes:
        if _is_inline_literal(node) and node not in outputs:
            continue
        for inp in node.inputs:
            if id(inp) not in names and not _is_inline_literal(inp):
                names[id(inp)] = f"%{len(names)}"
                yield inp, True
        names[id(node)] = f"%{len(names)}"
        yield node, False


def _shown_graphs(node):
    """The graphs a node holds and shows, indented under it: a fused node's body as it is;
    several (a cond's branches) each under its attribute's name."""
    shown = [(k, v) for k, v in node.attrs.items() if getattr(v, "shown", False)]
    lines = []
    for name, attribute in shown:
        if len(shown) > 1:
            lines.append(f"  {name}:")
        lines.extend("    " + line for line in format_graph(attribute.graph).splitlines())
    return lines


def format_graph(graph):
    return format_nodes(graph.nodes, graph.outputs)
