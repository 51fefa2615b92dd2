"""`tt.experimental`: TensorFlow's `tf.experimental` names that tracer has.

`ExtensionType` and its kin (tracer/extension_type.py), and dispatch of tracer's APIs to
a user's functions for them (tracer/dispatch.py).
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

__all__ = [
    "BatchableExtensionType",
    "BatchableExtensionTypeSpec",
    "ExtensionType",
    "ExtensionTypeSpec",
    "dispatch_for_api",
    "dispatch_for_binary_elementwise_apis",
    "dispatch_for_unary_elementwise_apis",
    "unregister_dispatch_for",
]
