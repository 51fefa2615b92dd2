"""`tt.io`: TensorFlow's `tf.io` functions tracer has."""

from tracer.ops.string_splits import decode_raw  # noqa: F401
