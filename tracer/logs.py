"""tracer's log, as TensorFlow's: `tt.get_logger()` is the `tracer` logger of Python's
`logging`, and tracer's modules log to its children (`tracer.function`, ...).

What TensorFlow logs rather than raises or warns, tracer logs too: notices about speed (a
retrace, a function that runs as Python at each call, a Python loop unrolled into many
nodes) and TensorFlow's own log lines (`tape.watch` of an integer tensor). Where the program
has not configured logging (the root logger has no handler), the `tracer` logger writes
lines at WARNING and above to standard error as TensorFlow's does, `WARNING:tracer.function:
...` (Python's BASIC_FORMAT); a program that configures logging gets them through its own
handlers instead. `tt.get_logger().setLevel("ERROR")` silences them.
"""

import logging
import sys

LOGGER = logging.getLogger("tracer")


def get_logger():
    """The `tracer` logger (TensorFlow's `tf.get_logger()`)."""
    return LOGGER


class _StandardError(logging.StreamHandler):
    """A handler writing to `sys.stderr` as it is at each line (a notebook, or a test, may
    replace it after tracer is imported)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _):
        pass


if not logging.getLogger().handlers and not LOGGER.handlers:
    _handler = _StandardError()
    _handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
    LOGGER.addHandler(_handler)
