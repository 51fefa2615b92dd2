"""The engine a held-out program runs on, named by its first argument: `tracer` imports
tracer as `tf`, anything else TensorFlow (which need not be installed where tracer is)."""

import sys

which = sys.argv[1] if len(sys.argv) > 1 else "tracer"
if which == "tracer":
    import tracer as tf
else:
    try:
        import tensorflow as tf
    except ImportError:
        sys.exit("TensorFlow is not installed here: run with `tracer` as the first argument")

__all__ = ["tf", "which"]
