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
        text = repr(_graph_form(graph, {}))
    except _NoStableForm:
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def _graph_form(graph, held):
    nodes = graph.nodes
    positions = {node: k for k, node in enumerate(nodes)}
    outside = []  # nodes read from outside the graph's own (a held graph's captures)
    shapes, types, locations = {}, {}, {}  # each one's form, or number, written once
    entries = []
    for node in nodes:
        if node.op == "const" and "value" not in node.attrs:  # its value is not in the graph
            raise _NoStableForm
        try:
            inputs = tuple(map(positions.__getitem__, node.inputs))
        except KeyError:
            inputs = tuple(_outside_position(i, positions, outside) for i in node.inputs)
        attrs = tuple([(k, _form(v, held)) for k, v in node.attrs.items()]) if node.attrs else ()
        shape = shapes.get(node.shape)
        if shape is None:
            shape = shapes[node.shape] = _form(node.shape, held)
        dtype = types.get(node.dtype)
        if dtype is None:
            dtype = types[node.dtype] = _type(node.dtype)
        location = locations.setdefault(node.location, len(locations))
        entries.append((node.op, inputs, attrs, shape, dtype, location))
    outputs = tuple(_outside_position(o, positions, outside) for o in graph.outputs)
    captured = [(n.op, _form(n.attrs, held), _form(n.shape, held), _type(n.dtype)) for n in outside]
    if any(n.op == "const" and "value" not in n.attrs for n in outside):
        raise _NoStableForm
    return entries, outputs, captured, tuple(locations)


def _outside_position(node, positions, outside):
    position = positions.get(node)
    if position is None:
        position = positions[node] = len(positions)
        outside.append(node)
    return position


def _type(dtype):
    if type(dtype) is DType:
        return dtype.name
    if type(dtype) is TupleType:
        return tuple((tuple(_shape_form(s)), d.name) for s, d in dtype.parts)
    raise _NoStableForm


def _shape_form(shape):
    return [("dim", d.terms) if type(d) is Dim else d for d in shape]


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
            text = repr(_graph_form(value.graph, held))
            digest = held[id(value)] = hashlib.sha256(text.encode()).hexdigest()
        return (kind.__name__, value.name, digest)
    raise _NoStableForm
