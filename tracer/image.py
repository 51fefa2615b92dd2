"""`tt.image`: image ops, as in `tf.image`."""

from tracer.ops.conv_ops import extract_patches  # noqa: F401
