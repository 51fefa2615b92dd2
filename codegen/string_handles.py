"""tt.string values through a compiled module: each element a handle, the strings in Python.

A string is a Python `bytes` (tracer/dtypes.py), which C never holds. A graph that holds
strings is compiled with each string element replaced by an int64 handle, its index in a
table of strings that the call keeps in Python (runtime/string_table.py):

- the ops that only move elements (`MOVES`: reshape, transpose, slices, gather, concat,
  tile, select, a branch's or a loop's values, ...) move handles in C, as they move int64s;
- every other op that reads or makes a string (the tt.strings ops, `==` and `+` on strings,
  tt.print of a string, a tt.py_function given one) becomes a `strings_on_host` step: the
  module calls back Python (a `codegen.forms.HostCall`), which runs the op's numpy kernel on
  the strings its handles name and writes its result, as handles of strings added to the
  table or as numbers;
- a string constant's elements are the first handles of every call's table.

So the numbers of a function that also handles text are computed in C. The fusion pass
(tracer/passes/fuse.py) keeps the ops that compute on strings out of fused kernels
(`computes_on_strings`), so they stay nodes of their own here.
"""

import numpy as np

from codegen import forms
from codegen.errors import UnsupportedGraph
from codegen.targets import C_MODULE, PROFILED_C
from runtime.string_table import HOST_FUNCTION, StringLayout
from tracer import dtypes
from tracer.ir import (
    LEAF_OPS,
    Graph,
    GraphAttribute,
    Node,
    TupleType,
    all_nodes,
    dims,
    format_location,
)
from tracer.ir.literal import Literal

HOSTED = forms.HOSTED

# The ops that give each element of their result from one element of an input (or a
# literal that is no string), and the graph's leaves: on handles, they compute what they
# compute on strings.
MOVES = LEAF_OPS | frozenset(
    (
        "broadcast_to",
        "concat",
        "gather",
        "gather_nd",
        "get",
        "identity",
        "reshape",
        "reverse",
        "select",
        "slice",
        "stop_gradient",
        "tile",
        "transpose",
        "cond",
        "switch",
        "while",
        "fused",
    )
)


def _is_string(dtype):
    if not dtype.is_tuple:  # (asked for every node of a graph, by fusion: kept short)
        return dtype.is_string
    return any(d.is_string for _, d in dtype.parts)


def touches_strings(node):
    """Whether `node` reads or makes a tt.string value."""
    if _is_string(node.dtype):
        return True
    for value in node.inputs:
        if _is_string(value.dtype):
            return True
    return False


def computes_on_strings(node):
    """Whether `node` reads or makes a string other than by moving elements: its code runs
    in Python (`HOSTED`), never in a fused C kernel."""
    return node.op not in MOVES and touches_strings(node)


# A graph that holds strings is compiled where its numbers are worth C: a loop of numbers,
# or numeric steps of this many elements in all. Each step a module hands back to Python
# costs about 10 us more than the interpreter's, a call with strings about 5 us more, and
# the first call waits for the compiler; C saves about a nanosecond an element
# (benchmarks/RESULTS.md, "Strings in compiled code").
NUMBERS_WORTH_COMPILING = 1 << 14


def numbers_worth_compiling(graph):
    """Whether compiled code would compute enough of `graph`'s numbers (in the graphs it
    holds too) to pay for the steps on strings it hands back to Python."""
    elements = 0
    for node in all_nodes(graph):
        if node.op in LEAF_OPS or touches_strings(node):
            continue
        if node.op == "while":
            return True
        size = dims.size(node.shape) if not node.dtype.is_tuple else 1
        if isinstance(size, dims.Dim):  # known when it runs: maybe large
            return True
        elements += size
        if elements >= NUMBERS_WORTH_COMPILING:
            return True
    return False


def with_handles(graph):
    """(`graph` with handles for its strings, the StringLayout the call converts with). A
    string variable the module updates is an output like the others: its new value is
    read from the table."""
    constants = []  # the strings of the graph's constants, each element's handle its index
    rewritten = _rewritten(graph, constants)
    layout = StringLayout(
        constants,
        [n.dtype.is_string for n in graph.inputs],
        [n.dtype.is_string for n in graph.outputs],
    )
    return rewritten, layout


def _rewritten(graph, constants):
    mapping = {}
    for node in graph.nodes:
        mapping[id(node)] = _node(node, [mapping.get(id(i), i) for i in node.inputs], constants)
    if all(mapping[id(n)] is n for n in graph.nodes):
        return graph
    return Graph(
        [mapping[id(n)] for n in graph.inputs],
        [mapping[id(n)] for n in graph.nodes],
        [mapping.get(id(n), n) for n in graph.outputs],
    )


def _node(node, inputs, constants):
    """`node` on its rewritten `inputs`: a string constant as its handles, an op computing
    on strings as a HOSTED step, another op with handles for its strings."""
    if node.op == "const" and node.dtype.is_string:
        values = node.attrs["value"].array
        start = len(constants)
        constants.extend(values.ravel().tolist())
        handles = np.arange(start, start + values.size, dtype=np.int64).reshape(values.shape)
        return Node(
            "const", (), {"value": Literal(handles)}, node.shape, dtypes.int64, node.location
        )
    if computes_on_strings(node):
        if node.dtype.is_tuple:
            where = format_location(node.location)
            raise UnsupportedGraph(
                f"{node.op}{f' at {where}' if where else ''} reads tt.string values and has "
                "several results, which the C module cannot hand to Python"
            )
        attrs = {
            "hosted_op": node.op,
            "attrs": tuple(sorted(node.attrs.items())),
            "strings": tuple(i.dtype.is_string for i in node.inputs),
            "string_result": node.dtype.is_string,
        }
        return Node(HOSTED, tuple(inputs), attrs, node.shape, _handles(node.dtype), node.location)
    attrs = {k: _held(v, constants) for k, v in node.attrs.items()}
    if node.op == "fused" and any(
        isinstance(v, GraphAttribute) and any(n.op == HOSTED for n in v.graph.nodes)
        for v in attrs.values()
    ):  # the fusion pass keeps such ops out of kernels (computes_on_strings)
        raise UnsupportedGraph(f"a fused kernel computes on tt.string values: {node!r}")
    dtype = _handles(node.dtype)
    same_attrs = all(attrs[k] is v for k, v in node.attrs.items())
    if same_attrs and dtype is node.dtype and all(a is b for a, b in zip(inputs, node.inputs)):
        return node
    return Node(node.op, tuple(inputs), attrs, node.shape, dtype, node.location)


def _held(value, constants):
    """A graph attribute (a fused body, a branch, a loop's body) with handles for its strings."""
    if not isinstance(value, GraphAttribute):
        return value
    inner = _rewritten(value.graph, constants)
    return value if inner is value.graph else value.with_graph(inner)


def _handles(dtype):
    """`dtype` with int64 (a handle) for each string."""
    if dtype.is_tuple:
        if not _is_string(dtype):
            return dtype
        return TupleType((s, dtypes.int64 if d.is_string else d) for s, d in dtype.parts)
    return dtypes.int64 if dtype.is_string else dtype


def _host_function(node):
    """The HOSTED step's callback and its options (runtime/string_table.py)."""
    attrs = node.attrs
    options = {
        "op": attrs["hosted_op"],
        "attrs": dict(attrs["attrs"]),
        "strings": attrs["strings"],
        "string_result": attrs["string_result"],
    }
    return HOST_FUNCTION, options


for _target in (C_MODULE, PROFILED_C):
    _target.register_form(HOSTED, forms.HostCall(_host_function, reads_all=True))
