"""The compiled modules' BLAS (scipy-openblas32) loaded into this process for the eager
kernels: its functions by name (called through cffi, each call on the calling thread:
runtime/thread_pools.py), pointers and addresses for them, and the core whose kernels it
runs, which codegen/blocked_products.py's rule reads."""

import functools
import os

import _cffi_backend
import numpy as np

from codegen import build
from runtime import thread_pools

_ffi = _cffi_backend.FFI()


@functools.cache
def function(name, signature):
    """The function `name` of the compiled modules' BLAS (scipy-openblas32, loaded to run each
    call on the calling thread), as a cffi function of the C type `signature` (pointers as
    `void *`); None where there is no BLAS or no such function."""
    found = build.blas()
    if found is None:
        return None
    _, folder, library_name = found
    thread_pools.blas_on_calling_thread(folder, library_name)
    for suffix in (".so", ".dylib"):
        try:
            library = _cffi_backend.load_library(
                os.path.join(folder, f"lib{library_name}{suffix}"), os.RTLD_NOW | os.RTLD_LOCAL
            )
            return library.load_function(_ffi.typeof(signature), name)
        except (OSError, AttributeError):
            continue
    return None


def core():
    """The name of the core whose kernels the BLAS runs (OpenBLAS's `get_corename`: Haswell,
    SkylakeX, ...), or None where there is no BLAS."""
    corename = function("scipy_openblas_get_corename", "char *(*)(void)")
    return None if corename is None else _ffi.string(corename()).decode("ascii", "replace")


def pointer(at):
    """A `void *` at the address `at` (an int), for the functions of `function`."""
    return _ffi.cast("void *", at)


def address(*functions):
    """The addresses of cffi functions, as an array for an installed kernel to read."""
    return np.array([int(_ffi.cast("uintptr_t", f)) for f in functions], np.uintp)
