"""Keras 3's operations on KerasTensors: `x[:, -1]`, `a + b`, `-x`, `x @ w` in a functional
model. Each is recorded as a node of an `Operation`, a layer without weights that applies the
operator to real tensors when the model runs; as in Keras 3, operations are not among the
model's `layers`.

    >>> inputs = tt.keras.Input((5, 3))
    >>> last = tt.keras.Model(inputs, inputs[:, -1] * 2.0)
    >>> last(tt.ones((2, 5, 3))).shape
    TensorShape([2, 3])
"""

from tracer.keras import extensions
from tracer.keras.keras_tensor import KerasTensor
from tracer.keras.layers.layer import Layer, to_snake_case
from tracer.keras.naming import unique_layer_name


class Operation(Layer):
    """An operator applied to the KerasTensors among its operands, the other operands (a
    slice, a number, an array) held as given; named as Keras 3 names the operation
    (`get_item`, `multiply`). A model holding one saves no config (Keras's config names its
    ops' classes, which tracer does not write)."""

    def __init__(self, class_name, function, operands):
        super().__init__(name=unique_layer_name(to_snake_case(class_name)))
        self.class_name = class_name
        self.function = function
        self.operands = list(operands)
        self.positions = [k for k, x in enumerate(operands) if isinstance(x, KerasTensor)]

    def call(self, inputs):
        filled = list(self.operands)
        for position, tensor in zip(self.positions, inputs):
            filled[position] = tensor
        return self.function(*filled)


def apply(class_name, function, *operands):
    """`function(*operands)` recorded as a call of a new Operation on the KerasTensors among
    the operands; the KerasTensor it gives."""
    operation = Operation(class_name, function, operands)
    return operation([operands[k] for k in operation.positions])


extensions.operate = apply
