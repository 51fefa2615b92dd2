"""`tt.io`: TensorFlow's `tf.io` functions tracer has."""

from tracer.ops.string_ops import read_file  # noqa: F401
from tracer.ops.string_splits import decode_raw  # noqa: F401
