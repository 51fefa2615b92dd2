"""Ctrl-C in compiled loops: Python's own signal handlers, run while a loop runs.

Python runs a signal's handler in the main thread, between two instructions of Python; a
compiled call runs no Python, so a loop in it would run on through Ctrl-C. A module's loops
that may run long (codegen/lower.py, `StructuredSite.watch`) call back `tracer_watch`, the
C function `watch_function` gives, about every WATCH_SECONDS (templates/watch.c.j2 says
when): on the main thread, Python runs the handlers of the signals that came meanwhile as
the call back starts, and one that raises (`default_int_handler`'s KeyboardInterrupt, the
SIGALRM handler of a time-out) stops the loop. The module returns that loop's error code,
and the call raises the handler's exception (`take_error`) with a note naming the loop's
line. A handler that returns lets the loop go on; SIG_IGN ignores Ctrl-C as it did.

On other threads (only the main one runs handlers) the first call back answers QUIET, and
the loop calls no more. No handler is installed and nothing runs per call: a loop costs a
comparison per iteration, and a reading of a coarse clock at iterations 2, 4, 8, ... (then
about every 0.025-0.05 s).
"""

import threading

WATCH_SECONDS = 0.1
GO, STOP, QUIET = 0, 1, 2  # the answers of the call back (templates/watch.c.j2 reads them)

_stopped = threading.local()  # the exception that stopped this thread's loop, until taken
_function = None  # the C function (a cffi callback): one for the process, never freed


def watch_function(ffi):
    """The C function `int tracer_watch(void)` that loops call back, made with `ffi`."""
    global _function
    if _function is None:
        _function = ffi.callback("int(void)", _watch, STOP, _keep)
    return _function


def _watch():
    # NOTE: Python runs the pending handlers as this function starts, before its first line:
    # an exception one raises reaches `_keep`, and the call back answers STOP
    return GO if threading.current_thread() is threading.main_thread() else QUIET


def _keep(kind, error, traceback):
    _stopped.error = error


def take_error():
    """The exception a signal handler raised in a loop of this thread's last call (once), or
    None."""
    error = getattr(_stopped, "error", None)
    _stopped.error = None
    return error
