"""`tt.nn`: activations, as in `tf.nn`."""

from tracer.ops.math_ops import relu, sigmoid, softplus, tanh  # noqa: F401
