"""Keras's symbolic tensors: a `KerasTensor` stands for a value of a functional model (its
shape with None where any size goes, and its dtype), and a `Node` records one call of a
layer on KerasTensors. Keras 3's bookkeeping, which its `.keras` files are written from: a
KerasTensor's `_keras_history` is (layer, node index, tensor index), and each call of a
layer on KerasTensors appends a Node to `layer._inbound_nodes`.
"""

import collections

from tracer import nest
from tracer.dtypes import as_dtype
from tracer.keras.naming import unique_layer_name

KerasHistory = collections.namedtuple("KerasHistory", ["operation", "node_index", "tensor_index"])
Arguments = collections.namedtuple("Arguments", ["args", "kwargs"])


class KerasTensor:
    """A symbolic tensor: the shape (None where any size goes, the batch axis of an Input)
    and dtype of a value that flows through a functional model, and the layer call that makes
    it (`_keras_history`). It holds no value; layers called on it give more of them.

    >>> tt.keras.Input(shape=(28, 28), name="image")
    <KerasTensor shape=(None, 28, 28), dtype=float32, name=image>
    """

    # `_keras_mask`, the KerasTensor of the mask a layer attached (Keras 3's), is unset, so
    # missing, where there is none
    __slots__ = ("shape", "dtype", "name", "_keras_history", "_keras_mask")

    def __init__(self, shape, dtype="float32", name=None, history=None):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = as_dtype(dtype).name  # a string, as Keras 3's
        self.name = name or unique_layer_name("keras_tensor")
        self._keras_history = history

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"{self!r} is symbolic: it has no value to convert. Call layers on it (for "
            "arithmetic: tt.keras.layers.Add, Multiply, Concatenate, Activation), and call the "
            "model made with tt.keras.Model(inputs, outputs) on real tensors"
        )


class Node:
    """One call of a layer (`operation`) on KerasTensors: the arguments as given
    (`arguments.args`, `arguments.kwargs`, KerasTensors in place), the KerasTensors among
    them (`input_tensors`, flattened) and the KerasTensors it gave (`outputs`, flattened).
    An Input's node has no arguments."""

    __slots__ = ("operation", "arguments", "input_tensors", "outputs")

    def __init__(self, operation, args=(), kwargs=None, outputs=()):
        self.operation = operation
        self.arguments = Arguments(tuple(args), dict(kwargs or {}))
        leaves = nest.flatten(self.arguments)
        self.input_tensors = [leaf for leaf in leaves if isinstance(leaf, KerasTensor)]
        self.outputs = list(outputs)

    @property
    def is_input(self):
        return not self.input_tensors

    output_tensors = property(lambda self: self.outputs)

    @property
    def parent_nodes(self):
        """The nodes that made this node's inputs."""
        return [node_of(tensor) for tensor in self.input_tensors]

    def __repr__(self):
        return f"<Node {self.operation.name}[{inbound_nodes(self.operation).index(self)}]>"


def node_of(tensor):
    layer, node_index, _ = tensor._keras_history
    return layer._inbound_nodes[node_index]


def inbound_nodes(layer):
    """`layer._inbound_nodes`, made empty on the layer's first symbolic call."""
    nodes = getattr(layer, "_inbound_nodes", None)
    if nodes is None:
        nodes = layer._inbound_nodes = []
    return nodes
