"""TensorFlow 1's behaviours that `tt.compat.v1` switches back on: `==` on tensors and
variables by identity, with variables hashable (TensorFlow 1's `Tensor.__eq__`)."""

from tracer.context import tensor_equality


def disable_tensor_equality():
    """`==` and `!=` on tensors and variables compare identity (a Python bool), and
    variables hash by identity, as in TensorFlow 1 (eager tensors stay unhashable, as
    TensorFlow's do)."""
    tensor_equality.enabled = False


def enable_tensor_equality():
    """`==` and `!=` elementwise again (TensorFlow 2's, the default); variables unhashable
    (use `.ref()` as a key)."""
    tensor_equality.enabled = True
