"""Keras's symbolic tensors: a `KerasTensor` stands for a value of a functional model (its
shape with None where any size goes, and its dtype), and a `Node` records one call of a
layer on KerasTensors. Keras 3's bookkeeping, which its `.keras` files are written from: a
KerasTensor's `_keras_history` is (layer, node index, tensor index), and each call of a
layer on KerasTensors appends a Node to `layer._inbound_nodes`.
"""

import collections
import operator

from tracer import nest
from tracer.dtypes import as_dtype
from tracer.keras import extensions
from tracer.keras.naming import unique_layer_name

KerasHistory = collections.namedtuple("KerasHistory", ["operation", "node_index", "tensor_index"])
Arguments = collections.namedtuple("Arguments", ["args", "kwargs"])


class KerasTensor:
    """A symbolic tensor: the shape (None where any size goes, the batch axis of an Input)
    and dtype of a value that flows through a functional model, and the layer call that makes
    it (`_keras_history`). It holds no value; layers called on it give more of them.

    >>> tt.keras.Input(shape=(28, 28), name="image")
    <KerasTensor shape=(None, 28, 28), dtype=float32, sparse=False, ragged=False, name=image>
    """

    # `_keras_mask`, the KerasTensor of the mask a layer attached (Keras 3's), is unset, so
    # missing, where there is none
    __slots__ = ("shape", "dtype", "name", "_keras_history", "_keras_mask", "sparse")

    def __init__(self, shape, dtype="float32", name=None, history=None, sparse=False):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = as_dtype(dtype).name  # a string, as Keras 3's
        self.name = name or unique_layer_name("keras_tensor")
        self._keras_history = history
        self.sparse = bool(sparse)  # an Input(sparse=True): the model takes a SparseTensor

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return (
            f"<KerasTensor shape={self.shape}, dtype={self.dtype}, sparse={self.sparse}, "
            f"ragged=False, name={self.name}>"
        )

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"{self!r} is symbolic: it has no value to convert. Call layers on it, or "
            "Python's operators (x[:, -1], a + b), and call the model made with "
            "tt.keras.Model(inputs, outputs) on real tensors"
        )

    # Keras 3's operators: each is recorded as an operation of the model
    # (tracer/keras/operations.py), named by Keras's class for it
    def __getitem__(self, key):
        return extensions.operate("GetItem", operator.getitem, self, key)

    def __add__(self, other):
        return extensions.operate("Add", operator.add, self, other)

    def __radd__(self, other):
        return extensions.operate("Add", operator.add, other, self)

    def __sub__(self, other):
        return extensions.operate("Subtract", operator.sub, self, other)

    def __rsub__(self, other):
        return extensions.operate("Subtract", operator.sub, other, self)

    def __mul__(self, other):
        return extensions.operate("Multiply", operator.mul, self, other)

    def __rmul__(self, other):
        return extensions.operate("Multiply", operator.mul, other, self)

    def __truediv__(self, other):
        return extensions.operate("TrueDivide", operator.truediv, self, other)

    def __rtruediv__(self, other):
        return extensions.operate("TrueDivide", operator.truediv, other, self)

    def __pow__(self, other):
        return extensions.operate("Power", operator.pow, self, other)

    def __matmul__(self, other):
        return extensions.operate("Matmul", operator.matmul, self, other)

    def __rmatmul__(self, other):
        return extensions.operate("Matmul", operator.matmul, other, self)

    def __neg__(self):
        return extensions.operate("Negative", operator.neg, self)

    def __abs__(self):
        return extensions.operate("Absolute", abs, self)


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
