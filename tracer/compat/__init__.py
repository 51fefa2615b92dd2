"""`tt.compat`: TensorFlow's compatibility namespaces (`tt.compat.v1`, TensorFlow 1's graphs
and sessions)."""

from tracer.compat import v1

__all__ = ["v1"]
