"""What a tape holds while it records: a `Recording`.

`apply` writes to it for every op that touches a tracked value (in Python, or in the C
fast path of `tracer/ops/fast_apply.c`, which keeps these same fields); `gradient` reads it.
"""

from tracer.events import TapeEvents
from tracer.ir import Graph


class Recording:
    """What one tape holds: recorded nodes in order, the values their gradient rules need,
    the watched leaves, the nodes it tracks (watched or recorded), and its `signature`.

    The signature has one hashable entry per tracked node, in the order of tracking, a flat
    tuple: its op, attributes, shape, dtype and line, how it was watched (None for an op),
    then each of its inputs, named by identity. A tracked
    input is its position; any other node is ("outside", k, shape, dtype), k numbering such
    nodes by first use; a watched node also names the outside number it had before it was
    watched, if any. So the signature fixes which node is which, as pruning and the gradient
    rules see them: two tapes with equal signatures have the same gradient graph, and
    `gradient` looks its graph up without pruning or walking nodes.
    """

    __slots__ = (
        "nodes",
        "saved",
        "tracked",
        "outside",
        "order",
        "signature",
        "watched",
        "variables",
        "variable_reads",
        "events",
        "untracked",
    )

    def __init__(self):
        self.nodes = []
        self.saved = []  # per node of `order`, the tensors its gradient rule needs (watched: None)
        # node -> its position in `order`, for the nodes this tape can differentiate (a Node
        # hashes and compares by identity)
        self.tracked = {}
        # node -> its signature entry ("outside", number, shape, dtype name), for untracked
        # nodes that tracked ones read
        self.outside = {}
        self.order = []  # tracked nodes, watched and recorded, in the order they were tracked
        self.signature = []  # one entry per node of `order`; see the class docstring
        self.watched = []  # input and variable nodes, in order of watching
        self.variables = {}  # Variable._unique_id -> Variable
        # Variable._unique_id -> the nodes of its reads after an assign in traced code, each
        # a leaf its gradient sums over beside the variable's own node (Variable._read)
        self.variable_reads = {}
        self.events = TapeEvents()  # what tape.explain needs beyond the graph
        # how many of the first records the collector no longer walks (fast_apply.c untracks
        # a large tape's records as it records them)
        self.untracked = 0

    def record(self, node, saved):
        """Track op `node`, keeping `saved` for its gradient rule."""
        position = self.tracked.get(node)
        if position is None:
            position = self._track(node, None)
            self.nodes.append(node)
        self.saved[position] = saved

    def watch_node(self, node):
        if node not in self.tracked:
            entry = self.outside.get(node)
            self._track(node, ("watched", None if entry is None else entry[1]))
            self.watched.append(node)

    def _track(self, node, watched):
        tracked, outside = self.tracked, self.outside
        entries = []
        for inp in node.inputs:
            entry = tracked.get(inp)  # its position
            if entry is None:
                entry = outside.get(inp)
            if entry is None:  # an outside node read for the first time
                entry = outside[inp] = ("outside", len(outside), inp.shape, inp.dtype.name)
            entries.append(entry)
        position = tracked[node] = len(self.order)
        self.order.append(node)
        self.saved.append(None)
        attrs = tuple(node.attrs.items()) if node.attrs else ()
        self.signature.append(
            (node.op, attrs, node.shape, node.dtype.name, node.location, watched, *entries)
        )
        return position

    def graph(self):
        return Graph(self.watched, self.watched + self.nodes, ())

    def tracked_node(self, tensor):
        """The node of `tensor` if this tape can differentiate with respect to it, else None."""
        node = tensor._node
        return node if node is not None and node in self.tracked else None
