"""Keras 3's operations in a functional model's config: a `keras.ops` function applied to
KerasTensors is a node of the graph, saved as an entry of module `keras.src.ops.numpy`
(Keras's functional models hold the mask an Embedding with `mask_zero` makes as
`NotEqual(ids, 0)`, and a merge layer's as `LogicalOr` of its inputs', passed to the layers
after them as their `mask`). `OperationLayer` makes
such a node again from tracer's op of the same name, and saves it as Keras wrote it.
"""

from tracer.keras.layers.layer import Layer
from tracer.ops import math_ops

MODULE = "keras.src.ops.numpy"
# Keras's class name -> tracer's elementwise op of the same meaning
OPERATIONS = {
    "NotEqual": math_ops.not_equal,
    "Equal": math_ops.equal,
    "LogicalAnd": math_ops.logical_and,
    "LogicalOr": math_ops.logical_or,
    "Add": math_ops.add,
    "Subtract": math_ops.subtract,
    "Multiply": math_ops.multiply,
    "Divide": math_ops.divide,
}


class OperationLayer(Layer):
    """One `keras.ops` function of a functional config, applied to its arguments."""

    def __init__(self, operation, **kwargs):
        super().__init__(**kwargs)
        self.operation = operation

    def call(self, inputs, *args):
        return OPERATIONS[self.operation](inputs, *args)


def is_operation(entry):
    return str(entry.get("module") or "").startswith("keras.src.ops")


def make(entry):
    """The OperationLayer of a config entry of module keras.src.ops..., or the ValueError
    that names the operation tracer does not read."""
    name = entry.get("class_name")
    if entry.get("module") != MODULE or name not in OPERATIONS:
        raise ValueError(
            f"the file holds the Keras operation {name} ({entry.get('module')}); tracer reads "
            f"{', '.join(sorted(OPERATIONS))} of {MODULE}"
        )
    config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    return OperationLayer(name, name=config.get("name"))


def entry(layer):
    """Keras's config entry of an OperationLayer (without its nodes)."""
    return {
        "module": MODULE,
        "class_name": layer.operation,
        "config": {"name": layer.name},
        "registered_name": layer.operation,
    }
