"""Python functions that compiled modules call back (the C form `codegen.forms.HostCall`).

`HOST_FUNCTIONS[name](source, target, **options)` computes the flat numpy array `target`
from `source` (a read-only flat array of the same size and dtype, or `target` itself when
the module passes one buffer for both). An exception it raises is kept here, the module returns the call's error code, and the caller
raises that same exception (`take_error`), as if the function had been called from Python.
"""

import math
import threading

import numpy as np

HOST_FUNCTIONS = {}
_raised = threading.local()  # the exception of the last failed callback, per thread


def callback(ffi, name, options, dtype, error_code, reads_all=None):
    """A cffi callback `int(void *source, void *target, int64_t bytes)` that runs the host
    function on the two buffers as numpy arrays. With `reads_all` ([(dtype, rank) of each
    input], rank of the result), `source` is an array of pointers to the inputs and then to
    their sizes and the result's (int64, one after the other), `bytes` the inputs' count,
    and the function takes the list of input arrays (the result's buffer flat)."""
    function = HOST_FUNCTIONS[name]
    dtype = np.dtype(dtype)
    if reads_all is not None:
        specs, result_rank = reads_all
        specs = [(np.dtype(d), rank) for d, rank in specs]

    def call(source, target, size_or_count):
        try:
            if reads_all is None:
                out = np.frombuffer(ffi.buffer(target, size_or_count), dtype)
                given = (
                    out
                    if source == target
                    else np.frombuffer(ffi.buffer(source, size_or_count), dtype)
                )
            else:
                pointers = ffi.cast("void **", source)
                sizes = ffi.cast("int64_t *", pointers[len(specs)])
                given, at = [], 0
                for k, (input_dtype, rank) in enumerate(specs):
                    shape = tuple(sizes[at + j] for j in range(rank))
                    given.append(_array(ffi, pointers[k], shape, input_dtype))
                    at += rank
                size = 1
                for j in range(result_rank):
                    size *= sizes[at + j]
                out = _array(ffi, target, (size,), dtype)
            function(given, out, **options)
            return 0
        except BaseException as error:
            _raised.error = error
            return error_code

    return ffi.callback("int(void *, void *, int64_t)", call)


def _array(ffi, pointer, shape, dtype):
    """The array of `shape` at `pointer` (no elements: no read)."""
    count = math.prod(shape)
    if count == 0:
        return np.empty(shape, dtype)
    return np.frombuffer(ffi.buffer(pointer, count * dtype.itemsize), dtype).reshape(shape)


def take_error():
    """The exception the last failed callback of this thread raised (once), or None."""
    error = getattr(_raised, "error", None)
    _raised.error = None
    return error
