"""The engine a held-out program runs on, named by its first argument: `tracer` imports
tracer as `tf`, anything else TensorFlow (which need not be installed where tracer is).
`MODES` are the ways a differential program runs each case, (name, wrap of a function or
None for eager): tracer's eager, compiled C and interpreter; TensorFlow's eager and
tf.function."""

import re
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


def failure(e):
    """A case's error as its line shows it: the class and the first 80 characters of the
    message, TensorFlow's node names and "Graph execution error:" left out, so that the two
    engines' lines can be compared."""
    message = re.sub(r"\{\{[^}]*\}\}|Graph execution error:", "", str(e))
    message = " ".join(message.split())[:80]
    return f"ERR {type(e).__name__}: {message}"


__all__ = ["MODES", "failure", "tf", "which"]
