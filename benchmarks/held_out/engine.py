"""The engine a held-out program runs on, named by its first argument: `tracer` imports
tracer as `tf`, anything else TensorFlow (which need not be installed where tracer is).
`MODES` are the ways a differential program runs each case, (name, wrap of a function or
None for eager): tracer's eager, compiled C and interpreter; TensorFlow's eager and
tf.function."""

import sys

which = sys.argv[1] if len(sys.argv) > 1 else "tracer"
if which == "tracer":
    import tracer as tf
else:
    try:
        import tensorflow as tf
    except ImportError:
        sys.exit("TensorFlow is not installed here: run with `tracer` as the first argument")

if which == "tracer":
    MODES = [
        ("eager", None),
        ("c", lambda f: tf.function(f, backend="c")),
        ("interp", lambda f: tf.function(f, backend="interpreter")),
    ]
else:
    MODES = [("eager", None), ("function", tf.function)]

__all__ = ["MODES", "tf", "which"]
