"""The graph drawn as SVG by tracer itself (no Graphviz): a layered layout, top to bottom.

Each node goes in the layer one below its deepest input (inputs and constants on top);
within a layer nodes are ordered by the mean position of their inputs in the layers above
(one barycentre sweep, which untangles most edges of a dataflow graph); edges are curves
from an input's bottom to its user's top. Past MAX_NODES nodes, the first ones in
topological order are drawn and a note says how many are left out.
"""

from html import escape

from tracer.ir.printer import format_type

MAX_NODES = 400
WIDTH, HEIGHT = 150, 36  # a node's box
GAP_X, GAP_Y = 20, 44
LABEL_CHARS = 22  # the longest text a box shows (its full line is the tooltip)


def layers(nodes):
    """{id(node): layer} of `nodes` (in topological order): 0 for a node none of whose
    inputs are among them, else one more than its deepest input's."""
    depth = {}
    for node in nodes:
        depth[id(node)] = 1 + max((depth[id(i)] for i in node.inputs if id(i) in depth), default=-1)
    return depth


def ordered_layers(nodes):
    """The nodes of each layer, left to right."""
    depth = layers(nodes)
    rows = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for node in nodes:
        rows[depth[id(node)]].append(node)
    column = {id(n): k for k, n in enumerate(rows[0])} if rows else {}
    for row in rows[1:]:
        row.sort(key=lambda n: _barycentre(n, column))
        column.update((id(n), k) for k, n in enumerate(row))
    return rows


def _barycentre(node, column):
    places = [column[id(i)] for i in node.inputs if id(i) in column]
    return sum(places) / len(places) if places else 0.0


def draw(graph, names, lines, locations):
    """(SVG text, note) of `graph`: a `<g class="node">` per node drawn, with the source line
    keys (`data-locs`, from `locations`) and the node's printed line (`lines`: id(node) ->
    text) as its tooltip; the note says what was left out, or is empty."""
    nodes = graph.nodes[:MAX_NODES]
    note = (
        f"the first {MAX_NODES} of {len(graph.nodes)} nodes" if len(graph.nodes) > MAX_NODES else ""
    )
    rows = ordered_layers(nodes)
    width = max((len(r) for r in rows), default=0) * (WIDTH + GAP_X) + GAP_X
    height = len(rows) * (HEIGHT + GAP_Y) + GAP_Y
    place = {}
    for y, row in enumerate(rows):
        offset = (width - len(row) * (WIDTH + GAP_X) - GAP_X) / 2  # each row centred
        for x, node in enumerate(row):
            place[id(node)] = (offset + GAP_X + x * (WIDTH + GAP_X), GAP_Y + y * (HEIGHT + GAP_Y))
    outputs = {id(o) for o in graph.outputs}
    parts = [
        f'<svg class="graph" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">'
    ]
    for node in nodes:
        x, y = place[id(node)]
        for inp in node.inputs:
            if id(inp) in place:
                sx, sy = place[id(inp)]
                parts.append(_edge(sx + WIDTH / 2, sy + HEIGHT, x + WIDTH / 2, y))
    for node in nodes:
        parts.append(_box(node, place[id(node)], names, lines, locations, id(node) in outputs))
    parts.append("</svg>")
    return "\n".join(parts), note


def _edge(x0, y0, x1, y1):
    bend = (y1 - y0) / 2
    return (
        f'<path class="edge" d="M{x0:.0f},{y0:.0f} C{x0:.0f},{y0 + bend:.0f} '
        f'{x1:.0f},{y1 - bend:.0f} {x1:.0f},{y1:.0f}"/>'
    )


def _box(node, where, names, lines, locations, is_output):
    x, y = where
    kind = "fused" if node.op == "fused" else "leaf" if not node.inputs else "op"
    classes = f"node {kind}" + (" output" if is_output else "")
    name = names.get(id(node), "")
    title = lines.get(id(node)) or f"{node.op} {format_type(node)}"
    label = node.attrs["kernel"].name if node.op == "fused" else node.op
    if not name and node.op == "const" and "value" in node.attrs:
        label = repr(node.attrs["value"])  # a literal, written inline by the printer
    locs = locations.keys_of([node])
    return (
        f'<g class="{classes}" data-name="{escape(name)}" data-locs="{locs}" '
        f'transform="translate({x:.0f},{y:.0f})"><title>{escape(title)}</title>'
        f'<rect width="{WIDTH}" height="{HEIGHT}" rx="5"/>'
        f'<text x="6" y="14">{escape(_short(f"{name} {label}".strip()))}</text>'
        f'<text x="6" y="29" class="type">{escape(_short(format_type(node)))}</text></g>'
    )


def _short(text):
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
