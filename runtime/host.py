"""Python functions that compiled modules call back (the C form `codegen.forms.HostCall`).

`HOST_FUNCTIONS[name](source, target, **options)` computes the flat numpy array `target`
from `source` (a read-only flat array of the same size and dtype, or `target` itself when
the module passes one buffer for both). An exception it raises is kept here, the module returns the call's error code, and the caller
raises that same exception (`take_error`), as if the function had been called from Python.
"""

import threading

import numpy as np

HOST_FUNCTIONS = {}
_raised = threading.local()  # the exception of the last failed callback, per thread


def callback(ffi, name, options, dtype, error_code):
    """A cffi callback `int(void *source, void *target, int64_t bytes)` that runs the host
    function on the two buffers as numpy arrays."""
    function = HOST_FUNCTIONS[name]
    dtype = np.dtype(dtype)

    def call(source, target, size):
        try:
            out = np.frombuffer(ffi.buffer(target, size), dtype)
            given = out if source == target else np.frombuffer(ffi.buffer(source, size), dtype)
            function(given, out, **options)
            return 0
        except BaseException as error:
            _raised.error = error
            return error_code

    return ffi.callback("int(void *, void *, int64_t)", call)


def take_error():
    """The exception the last failed callback of this thread raised (once), or None."""
    error = getattr(_raised, "error", None)
    _raised.error = None
    return error
