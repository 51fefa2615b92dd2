"""Nodes with several results, and `get`, which takes one of them out.

A structured op (a cond, a while loop) is one node of `TupleType`: a tuple of results. Other
nodes read its results through `get[index]` nodes; in compiled code its code writes each
result straight into the buffer of its `get` (`forms.Projection`), and the interpreter
passes a `TupleValue`. The cotangent of such a node is a `TupleCotangent`: one per result, None
where it is zero.
"""

import numpy as np

from codegen import forms
from tracer import dtypes
from tracer.ir.graph import TupleType
from tracer.ops.array_ops import zeros
from tracer.ops.core import Results, apply
from tracer.ops.registry import primitive


class TupleCotangent:
    """The cotangents of a node's results, None where zero (what its gradient rule gets)."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = list(parts)

    def dense(self, node, positions):
        """The cotangents of results `positions` of `node`, zeros where none flowed."""
        return [
            part if (part := self.parts[k]) is not None else zeros(*node.dtype.parts[k])
            for k in positions
        ]

    def plus(self, other):
        """The sum of two cotangents of the same node (a None adds nothing)."""
        summed = [
            b if a is None else a if b is None else a + b for a, b in zip(self.parts, other.parts)
        ]
        return TupleCotangent(summed)


class TupleValue(tuple):
    """The value of a node of several results, run eagerly: its results, in order."""

    __slots__ = ()
    shape = ()
    ndim = 0

    @property
    def dtype(self):
        return TupleType([(np.shape(v), dtypes.as_dtype(np.asarray(v).dtype)) for v in self])


def tuple_type(tensors_or_parts):
    """The TupleType of results of these shapes and dtypes."""
    return TupleType([(p.shape, p.dtype) if hasattr(p, "shape") else p for p in tensors_or_parts])


def _get_grad(node, g):
    parts = [None] * len(node.inputs[0].dtype.parts)
    parts[node.attrs["index"]] = g
    return (TupleCotangent(parts),)


def _infer_get(attrs, t):
    parts = getattr(t.dtype, "parts", None)
    if parts is None or not 0 <= attrs["index"] < len(parts):
        raise TypeError(f"get takes a result out of a node with several, not of a {t.dtype!r}")
    return parts[attrs["index"]]


GET = primitive(
    "get",
    _infer_get,
    strings=True,
    grad=_get_grad,
    jvp=lambda node, tangents, inputs, out: tangents[0].parts[node.attrs["index"]],
    batch=lambda node, args, flags, size: _get_batch(node, args),
    kernel=lambda results, index: results[index],
    c=forms.Projection(),
)


def _get_batch(node, args):
    """A result of a batched node of several: the batched node's own, or, where its rule
    gave its results one by one (`core.Results`, each with the batch axis), that one."""
    if type(args[0]) is Results:
        return args[0][node.attrs["index"]]
    return apply(GET, (args[0],), node.attrs)


def get(results, index):
    return apply(GET, (results,), {"index": index})


def unpack(results):
    """Every result of a node with several, in order."""
    return [get(results, k) for k in range(len(results.dtype.parts))]
