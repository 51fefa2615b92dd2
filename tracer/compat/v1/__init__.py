"""`tt.compat.v1`: TensorFlow 1's graph mode, as tracer runs it (tracer/compat/v1/graphs.py):
build a `Graph` with placeholders, differentiate it with `gradients` or a tape, and
`Session.run` what it computes for fed values, each distinct run compiled once; and
TensorFlow 1's `Dimension` and `==` by identity (`disable_tensor_equality`). `keras` is
`tt.keras`, as TensorFlow 2's `tf.compat.v1.keras` is its Keras; `io` has TensorFlow 1's
`tf_record_iterator`."""

import importlib as _importlib

from tracer.compat.v1 import io
from tracer.compat.v1.behaviors import disable_tensor_equality, enable_tensor_equality
from tracer.compat.v1.graphs import (
    Graph,
    disable_eager_execution,
    enable_eager_execution,
    get_default_graph,
    placeholder,
    reset_default_graph,
)
from tracer.compat.v1.sessions import Session
from tracer.framework import executing_eagerly
from tracer.symbolic_gradients import gradients
from tracer.tensor_shape import Dimension, dimension_value

__all__ = [
    "Dimension",
    "Graph",
    "Session",
    "dimension_value",
    "disable_eager_execution",
    "disable_tensor_equality",
    "enable_eager_execution",
    "enable_tensor_equality",
    "executing_eagerly",
    "get_default_graph",
    "gradients",
    "io",
    "keras",
    "placeholder",
    "reset_default_graph",
]


def __getattr__(name):
    """`keras` at its first use (tt.keras, imported when used, as `tt.keras` is)."""
    if name == "keras":
        return _importlib.import_module("tracer.keras")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
