"""The IR: graphs of nodes, their text and DOT printers."""

from tracer.ir import dims
from tracer.ir.dot import to_dot
from tracer.ir.graph import (
    LEAF_OPS,
    Graph,
    GraphAttribute,
    Node,
    Subgraph,
    TupleType,
    all_nodes,
    holds_strings,
    topological_closure,
)
from tracer.ir.literal import Literal
from tracer.ir.printer import format_graph, format_nodes, node_names
from tracer.ir.source import backward_location, format_location, user_location

__all__ = [
    "LEAF_OPS",
    "Graph",
    "GraphAttribute",
    "Literal",
    "Node",
    "Subgraph",
    "TupleType",
    "all_nodes",
    "holds_strings",
    "dims",
    "format_graph",
    "backward_location",
    "format_location",
    "format_nodes",
    "node_names",
    "to_dot",
    "topological_closure",
    "user_location",
]
