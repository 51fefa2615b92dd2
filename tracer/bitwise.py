"""`tt.bitwise`: bit operations on integer tensors, as in `tf.bitwise`."""

from tracer.ops.bitwise_ops import (  # noqa: F401
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    invert,
    left_shift,
    right_shift,
)
