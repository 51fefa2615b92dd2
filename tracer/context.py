"""Thread-local execution state: the stack of recording tapes and the source-location override.

Tapes are thread-local, as in TensorFlow: a tape entered in one thread records nothing
that another thread computes.
"""

import contextlib
import threading


class _State(threading.local):
    def __init__(self):
        self.tapes = []  # the tapes recording now, innermost last
        self.location = None  # when set, new nodes take this location instead of the caller's
        self.trace = None  # the tracing.Trace of the tt.function being traced, if any
        self.paused = []  # tapes inside their stop_recording() block


state = _State()


class NumericsCheck:
    """Whether every op's result is checked for NaN and Inf (tt.debugging.enable_check_numerics).

    Global, not per thread, as in TensorFlow; one attribute read per op when off (a slot,
    which the C op path reads directly).
    """

    __slots__ = ("enabled",)

    def __init__(self):
        self.enabled = False


numerics = NumericsCheck()


@contextlib.contextmanager
def location_override(location):
    """Nodes made inside take `location`: the gradient of a line points at that line."""
    saved, state.location = state.location, location
    try:
        yield
    finally:
        state.location = saved


@contextlib.contextmanager
def no_recording():
    """Nothing computed inside is recorded on any tape (used while building gradient graphs)."""
    saved, state.tapes = state.tapes, []
    try:
        yield
    finally:
        state.tapes = saved
