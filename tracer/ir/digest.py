"""A digest of a graph's structure that every process computes the same: the key of the
plan a compiled function stores beside its module (codegen/plans.py), so that a second
process that traces the same graph skips the passes and the lowering.

It covers what `structure_key` compares (each node's op, attributes, input positions,
shape, type and source line, and the outputs), written in a form that does not depend on
the process: a constant by its dtype, shape and bytes. An attribute of a type this module
does not know (a Python function a node calls, an object of the user's) has no such form:
the graph then has no digest, and its plan is not stored.
"""

import hashlib
import marshal

import numpy as np

from tracer.dtypes import DType
from tracer.ir.dims import Dim
from tracer.ir.graph import GraphAttribute, TupleType
from tracer.ir.literal import Literal


class _NoStableForm(Exception):
    pass


def graph_digest(graph):
    """A SHA-256 hex digest of `graph`'s structure, or None when some attribute has no form
    that is the same in every process."""
    try:
        return _digest(graph, {})
    except _NoStableForm:
        return None


def _digest(graph, held):
    # marshal (format 2: no back-references, which would depend on object sharing) writes
    # the nested tuples of strings and integers 4x faster than repr
    return hashlib.sha256(marshal.dumps(_graph_form(graph, held), 2)).hexdigest()


def _graph_form(graph, held):
    """The graph as columns (op, inputs, attributes, numbered shape, type and source line of
    each node), then the outputs, the values read from outside its nodes and the tables."""
    nodes = graph.nodes
    positions = {node: k for k, node in enumerate(nodes)}
    outside = []  # nodes read from outside the graph's own (a held graph's captures)
    try:
        at = positions.__getitem__
        inputs = [tuple(map(at, node.inputs)) for node in nodes]
    except KeyError:
        inputs = [tuple([_position(i, positions, outside) for i in n.inputs]) for n in nodes]
    if any(node.op == "const" and "value" not in node.attrs for node in nodes):
        raise _NoStableForm  # a value the graph does not hold
    shapes, types, locations = {}, {}, {}  # each distinct one, numbered by first use
    shape_number, type_number, location_number = (
        shapes.setdefault,
        types.setdefault,
        locations.setdefault,
    )
    columns = (
        [node.op for node in nodes],
        inputs,
        [_form(node.attrs, held) if node.attrs else () for node in nodes],
        [shape_number(node.shape, len(shapes)) for node in nodes],
        [type_number(node.dtype, len(types)) for node in nodes],
        [location_number(node.location, len(locations)) for node in nodes],
    )
    outputs = tuple(_position(o, positions, outside) for o in graph.outputs)
    if any(n.op == "const" and "value" not in n.attrs for n in outside):
        raise _NoStableForm
    captured = [(n.op, _form(n.attrs, held), _form(n.shape, held), _type(n.dtype)) for n in outside]
    tables = (
        [_form(shape, held) for shape in shapes],
        [_type(dtype) for dtype in types],
        [_form(location, held) for location in locations],
    )
    return columns, outputs, captured, tables


def _position(node, positions, outside):
    position = positions.get(node)
    if position is None:
        position = positions[node] = len(positions)
        outside.append(node)
    return position


def _type(dtype):
    if type(dtype) is DType:
        return dtype.name
    if type(dtype) is TupleType:
        return tuple((_form(s, None), d.name) for s, d in dtype.parts)
    raise _NoStableForm


_PLAIN = (int, str, bool, type(None), type(Ellipsis))


def _form(value, held):
    """`value` as nested tuples of strings and integers, the same in every process."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float or kind is complex:
        return (kind.__name__, repr(value))
    if kind is tuple:
        return tuple(_form(v, held) for v in value)
    if kind is dict:  # a node's attributes
        return tuple((k, _form(v, held)) for k, v in value.items())
    if kind is Literal:
        array = value.array
        if array.dtype.hasobject:
            raise _NoStableForm
        return (
            "literal",
            array.dtype.str,
            array.shape,
            hashlib.sha256(array.tobytes()).hexdigest(),
        )
    if kind is DType:
        return ("dtype", value.name)
    if kind is Dim:
        return ("dim", value.terms)
    if kind is slice:
        return ("slice", _form(value.start, held), _form(value.stop, held), _form(value.step, held))
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return ("scalar", value.dtype.str, value.tobytes().hex())
    if kind is np.dtype and not value.hasobject:
        return ("np.dtype", value.str)
    if isinstance(value, GraphAttribute):
        digest = held.get(id(value))
        if digest is None:
            digest = held[id(value)] = _digest(value.graph, held)
        return (kind.__name__, value.name, digest)
    raise _NoStableForm
