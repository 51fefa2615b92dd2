"""A compiled function's graph as TensorBoard reads it: a `GraphDef` event, and, when the
function was profiled, a `TaggedRunMetadata` event with each node's measured time.

The graph is the function's optimized graph, the one its C runs: one node per IR node (a
fused kernel is one node, the nodes it computes in its `nodes` attribute), named
`<function>/<file>_line<N>/<op>_<k>` (`%k` as the printed IR names it), so that TensorBoard
groups the nodes of each of the user's lines into one box. Each node's attributes hold its
dtype, its shape (`_output_shapes`, which TensorBoard writes on the edges) and its line.
"""

import os
import re

import numpy as np

from tracer.ir import format_location, node_names
from tracer.summary.events import DATA_TYPES
from tracer.summary.protobuf import message_field, string_field, varint_field

PRODUCER = 1  # GraphDef.versions.producer: the graph format TensorBoard assumes (any works)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")  # TensorFlow's node names: no ':' nor '%'


def graph_names(graph, function):
    """{id(node): its name in the GraphDef} of `graph`'s nodes."""
    printed = node_names(graph)
    names = {}
    for node in graph.nodes:
        if id(node) not in printed:  # a literal written inline
            continue
        base = f"{node.op}_{printed[id(node)][1:]}"
        if node.op in ("input", "variable") and "name" in node.attrs:
            base = _UNSAFE.sub("_", str(node.attrs["name"]))
        if node.location is not None:
            filename, line = node.location[0], node.location[1]
            scope = _UNSAFE.sub("_", os.path.basename(filename)) + f"_line{line}"
            base = f"{scope}/{base}"
        names[id(node)] = f"{_UNSAFE.sub('_', function)}/{base}"
    return names


def names_by_printed(graph, function):
    """{the printed IR's name ('%k'): the GraphDef's name} of `graph`'s nodes."""
    printed, names = node_names(graph), graph_names(graph, function)
    return {printed[key]: name for key, name in names.items()}


def graph_def(functions):
    """The serialized GraphDef of `functions`, [(optimized IR graph, function name)]."""
    nodes = []
    for graph, function in functions:
        names = graph_names(graph, function)
        nodes += [_node_def(node, names) for node in graph.nodes if id(node) in names]
    return b"".join(message_field(1, n) for n in nodes) + message_field(
        4, varint_field(1, PRODUCER)
    )


def _node_def(node, names):
    inputs = [names[id(i)] for i in node.inputs if id(i) in names]
    attrs = {"_output_shapes": _list_of_shapes(node)}
    dtype = _data_type(node)
    if dtype:
        attrs["T"] = varint_field(6, dtype)
    if node.location is not None:
        attrs["line"] = string_field(2, format_location(node.location))
    kernel = node.attrs.get("kernel") if node.op == "fused" else None
    if kernel is not None:
        held = [f"{n.op} {format_location(n.location)}".rstrip() for n in kernel.graph.nodes]
        attrs["nodes"] = message_field(1, b"".join(string_field(2, h) for h in held))
    return (
        string_field(1, names[id(node)])
        + string_field(2, node.op)
        + b"".join(string_field(3, name) for name in inputs)
        + b"".join(
            message_field(5, string_field(1, key) + message_field(2, value))
            for key, value in sorted(attrs.items())
        )
    )


def _list_of_shapes(node):
    """An AttrValue holding a list of the node's result shapes (one, or a tuple's)."""
    parts = node.dtype.parts if getattr(node.dtype, "is_tuple", False) else [(node.shape, None)]
    shapes = b"".join(message_field(7, _shape(shape)) for shape, _ in parts)
    return message_field(1, shapes)


def _shape(shape):
    """A TensorShapeProto; a size known only when the code runs is -1."""
    return b"".join(
        message_field(2, varint_field(1, size if isinstance(size, int) else -1)) for size in shape
    )


def _data_type(node):
    if getattr(node.dtype, "is_tuple", False):
        return 0
    return _DATA_TYPES.get(np.dtype(node.dtype.as_numpy_dtype), 0)


# TensorFlow's DataType enum (types.proto), complex types too
_DATA_TYPES = {**DATA_TYPES, np.dtype(np.complex64): 8, np.dtype(np.complex128): 18}


def run_metadata(record, names, start_ns):
    """The serialized RunMetadata of one profiled function (a tt.profiler FunctionRecord):
    each step's node (`names`: names_by_printed) with its mean time a call, starting when
    the first call did (µs from `start_ns`)."""
    own_calls = max(len(record.calls), 1)
    first_call = record.calls[0][0] if record.calls else start_ns
    stats = []
    for probe in record.probes:
        name = names.get(probe.node_name)
        if name is None:  # a step of a region's body: in its region's time
            continue
        total_ns, _ = record.totals[probe.index]
        micros = int(total_ns) // 1000 // own_calls
        stats.append(
            string_field(1, name)
            + varint_field(2, (first_call - start_ns) // 1000)
            + varint_field(4, micros)
            + varint_field(5, micros)
        )
    device = string_field(1, "/job:localhost/replica:0/task:0/device:CPU:0") + b"".join(
        message_field(2, s) for s in stats
    )
    return message_field(1, message_field(1, device))


def tagged_run_metadata(tag, metadata):
    """An Event's `tagged_run_metadata` field's message."""
    return string_field(1, tag) + message_field(2, metadata)
