"""`tt.experimental`: TensorFlow's `tf.experimental` names that tracer has.

`ExtensionType` and its kin (tracer/extension_type.py), dispatch of tracer's APIs to a
user's functions for them (tracer/dispatch.py), the shape of a ragged tensor
(`DynamicRaggedShape`, `RowPartition`: tracer/ragged_shape.py), `Optional`
(tracer/data/optional.py), and `numpy`, TensorFlow's NumPy API (tracer/experimental/numpy/).
"""

from tracer.dispatch import (
    dispatch_for_api,
    dispatch_for_binary_elementwise_apis,
    dispatch_for_unary_elementwise_apis,
    unregister_dispatch_for,
)
from tracer.extension_type import (
    BatchableExtensionType,
    BatchableExtensionTypeSpec,
    ExtensionType,
    ExtensionTypeSpec,
)
from tracer.ragged_shape import DynamicRaggedShape, RowPartition

__all__ = [
    "BatchableExtensionType",
    "BatchableExtensionTypeSpec",
    "DynamicRaggedShape",
    "ExtensionType",
    "ExtensionTypeSpec",
    "Optional",
    "RowPartition",
    "dispatch_for_api",
    "dispatch_for_binary_elementwise_apis",
    "dispatch_for_unary_elementwise_apis",
    "numpy",
    "unregister_dispatch_for",
]


def __getattr__(name):
    """`tt.experimental.numpy` at its first use (it imports tracer's ops, which are not
    imported yet when tracer imports this package)."""
    if name == "numpy":
        import importlib

        return importlib.import_module(f"{__name__}.numpy")
    if name == "Optional":  # (tt.data's, which imports the ops too)
        from tracer.data.optional import Optional

        return Optional
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
