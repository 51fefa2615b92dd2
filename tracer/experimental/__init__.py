"""`tt.experimental`: TensorFlow's `tf.experimental` names that tracer has.

`ExtensionType` and its kin (tracer/extension_type.py).
"""

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
]
