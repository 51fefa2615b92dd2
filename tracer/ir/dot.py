"""The IR as Graphviz DOT text, for `dot -Tsvg`."""

from tracer.ir.printer import format_type


def to_dot(graph, name="tracer"):
    ids = {id(node): f"n{k}" for k, node in enumerate(graph.nodes)}
    lines = [f"digraph {name} {{", "  node [shape=box, fontname=monospace];"]
    for node in graph.nodes:
        style = ", style=filled, fillcolor=lightgrey" if not node.inputs else ""
        label = f"{node.op}\\n{format_type(node)}"
        lines.append(f'  {ids[id(node)]} [label="{label}"{style}];')
        for position, inp in enumerate(node.inputs):
            lines.append(f'  {ids[id(inp)]} -> {ids[id(node)]} [label="{position}"];')
    for position, out in enumerate(graph.outputs):
        lines.append(f'  out{position} [label="output {position}", shape=ellipse];')
        lines.append(f"  {ids[id(out)]} -> out{position};")
    lines.append("}")
    return "\n".join(lines)
