"""`tt.linalg`: linear algebra, as in `tf.linalg`."""

from tracer.ops.linalg_ops import matmul  # noqa: F401
