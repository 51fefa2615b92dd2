"""A digest of a graph's structure that every process computes the same: the key of the
plan a compiled function stores beside its module (codegen/plans.py), so that a second
process that traces the same graph skips the passes and the lowering.

It covers what `structure_key` compares (each node's op, attributes, input positions,
shape and type, and the outputs), written in a form that does not depend on the process: a
constant by its dtype, shape and bytes. An attribute of a type this module does not know
(a Python function a node calls, an object of the user's) has no such form: the graph then
has no digest, and its plan is not stored.

The user's lines are not in the digest, only which nodes come from the same one: each
distinct (file, line) is a numbered place, and the places are returned beside the digest.
So the function moved to other lines, or its file to another folder, has the same digest,
and its stored plan is used with the C's comments and the error messages renamed to the
new places (codegen/plans.py); the passes do not read a line, only compare them.
"""

import hashlib
import marshal
from typing import NamedTuple

import numpy as np

from tracer.dtypes import DType
from tracer.ir.dims import Dim
from tracer.ir.graph import GraphAttribute, TupleType
from tracer.ir.literal import Literal


class _NoStableForm(Exception):
    pass


class Digest(NamedTuple):
    hex: str  # SHA-256 of the structure, places numbered
    places: tuple  # the (file, line) of each place, in the order of their numbers


class _Walk:
    """What a digest's walk keeps: the digest of each held graph met (by id), and the places
    numbered across the graph and every graph it holds."""

    def __init__(self):
        self.graphs = {}
        self.places = {}


def graph_digest(graph):
    """The Digest of `graph`'s structure, or None when some attribute has no form that is the
    same in every process."""
    walk = _Walk()
    try:
        return Digest(_digest(graph, walk), tuple(walk.places))
    except _NoStableForm:
        return None


def _digest(graph, walk):
    # marshal (format 2: no back-references, which would depend on object sharing) writes
    # the nested tuples of strings and integers faster than repr does
    return hashlib.sha256(marshal.dumps(_graph_form(graph, walk), 2)).hexdigest()


def _graph_form(graph, walk):
    """The graph as columns (op, inputs, attributes, numbered shape, type and location of
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
        [_form(node.attrs, walk) if node.attrs else () for node in nodes],
        [shape_number(node.shape, len(shapes)) for node in nodes],
        [type_number(node.dtype, len(types)) for node in nodes],
        [location_number(node.location, len(locations)) for node in nodes],
    )
    outputs = tuple(_position(o, positions, outside) for o in graph.outputs)
    if any(n.op == "const" and "value" not in n.attrs for n in outside):
        raise _NoStableForm
    captured = [(n.op, _form(n.attrs, walk), _form(n.shape, walk), _type(n.dtype)) for n in outside]
    tables = (
        [_form(shape, walk) for shape in shapes],
        [_type(dtype) for dtype in types],
        [_location(location, walk) for location in locations],
    )
    return columns, outputs, captured, tables


def _position(node, positions, outside):
    position = positions.get(node)
    if position is None:
        position = positions[node] = len(positions)
        outside.append(node)
    return position


def _location(location, walk):
    """A location as the number of its (file, line) place and what follows them ("grad of
    log")."""
    if location is None:
        return None
    if type(location) is not tuple or len(location) < 2:
        raise _NoStableForm
    file, line = location[:2]
    if type(file) is not str or not (type(line) is int or line is None):
        raise _NoStableForm  # (a frame's line is None where no line is known)
    return walk.places.setdefault((file, line), len(walk.places)), _form(location[2:], walk)


def _type(dtype):
    if type(dtype) is DType:
        return dtype.name
    if type(dtype) is TupleType:
        return tuple((_form(s, None), d.name) for s, d in dtype.parts)
    raise _NoStableForm


_PLAIN = (int, str, bool, type(None), type(Ellipsis))


def _form(value, walk):
    """`value` as nested tuples of strings and integers, the same in every process."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float or kind is complex:
        return (kind.__name__, repr(value))
    if kind is tuple:
        return tuple(_form(v, walk) for v in value)
    if kind is dict:  # a node's attributes
        return tuple((k, _form(v, walk)) for k, v in value.items())
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
        return ("slice", _form(value.start, walk), _form(value.stop, walk), _form(value.step, walk))
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return ("scalar", value.dtype.str, value.tobytes().hex())
    if kind is np.dtype and not value.hasobject:
        return ("np.dtype", value.str)
    if isinstance(value, GraphAttribute):
        digest = walk.graphs.get(id(value))
        if digest is None:
            digest = walk.graphs[id(value)] = _digest(value.graph, walk)
        return (kind.__name__, value.name, digest)
    raise _NoStableForm
