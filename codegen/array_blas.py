"""Matrix products for the eager kernels through the compiled modules' BLAS.

numpy's OpenBLAS computes a product of more than 2^18 multiply-adds on threads of its own,
which then wait for the next product spinning (up to OpenBLAS's thread time-out, a tenth of
a second, on x86 without yielding), on the cores that tracer's next parallel loop wants: an
eager convolution, GELU, a softmax, a triangular solve. In an eager CNN step whose only
numpy products were its dense layer's (2^21 multiply-adds each), its convolutions took twice
their time; in an eager GP step, its triangular solves after numpy's 512^3 product twice
theirs. So the products numpy would thread (from `NUMPY_THREADS_MACS`) are computed by the
compiled modules' BLAS (scipy-openblas32, which runs each call on the thread that makes it:
codegen/thread_pools.py), called through cffi, with nothing to compile: below
`ONE_THREAD_MACS` in one call on the calling thread (at most about a hundred microseconds
on one core), from there in parts on tracer's threads (the installed kernels' `gemm_parts`,
templates/gemm_parts.c.j2's parts), so that an eager step has one pool of threads, as a
compiled one has; so are batches of such products (matmul.c.j2's parts of a batch). Smaller
products stay numpy's, which computes them on the calling thread with less overhead than a
call through cffi, batches of them included.

A product is routed by its sizes alone, so a given product always comes from the same
library; the compiled modules call the same one, in one call below 2^20 multiply-adds and in
the same parts above, where their products and the eager kernels' give the same bits.
"""

import functools
import math
import os

import _cffi_backend
import numpy as np

from codegen import build, conv_kernels, thread_pools
from runtime import installed_kernels

NUMPY_THREADS_MACS = 1 << 18  # OpenBLAS threads a product of more multiply-adds
ONE_THREAD_MACS = 1 << 22
INT_MAX = (1 << 31) - 1  # the largest size or leading dimension the BLAS's int takes
_ffi = _cffi_backend.FFI()
_GEMM = "void (*)(int, int, int, int, int, int, {T}, void *, int, void *, int, {T}, void *, int)"
_FUNCTIONS = {np.dtype(np.float32): ("sgemm", "float"), np.dtype(np.float64): ("dgemm", "double")}
_ROW_MAJOR, _NO_TRANSPOSE, _TRANSPOSE = 101, 111, 112  # CBLAS's enumerations


def product(a, b, transpose_a, transpose_b):
    """op(a) @ op(b) of arrays of one floating dtype (op: the transpose of the last two axes
    where asked, batch axes broadcast) through the compiled modules' BLAS where numpy would
    thread the products; else None (numpy's then, on the calling thread: a batch of small
    products costs it less than calls through cffi would). A single product below
    ONE_THREAD_MACS is one call on this thread; the others are the compiled code's parts on
    the threads (the installed kernels' `gemm_parts`, where they are there)."""
    names = _FUNCTIONS.get(a.dtype)
    if names is None or b.dtype != a.dtype or a.ndim < 2 or b.ndim < 2:
        return None
    m, k = a.shape[:-3:-1] if transpose_a else a.shape[-2:]
    n = b.shape[-2] if transpose_b else b.shape[-1]
    macs = m * n * k
    if macs <= NUMPY_THREADS_MACS or not fits_ints(m, n, k):  # numpy's product takes these
        return None
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:  # numpy's product says what does not match
        return None
    in_parts = bool(batch) or macs >= ONE_THREAD_MACS
    if in_parts and not conv_kernels.available():
        return None
    gemm = _gemm(*names)
    if gemm is None:
        return None
    a, flag_a, lda = _operand(a, transpose_a)
    b, flag_b, ldb = _operand(b, transpose_b)
    out = np.empty((*batch, m, n), a.dtype)
    if in_parts:
        transposes = [flag_a == _TRANSPOSE, flag_b == _TRANSPOSE]
        rows = m >= n  # tracer/ops/linalg_ops.py's rule for the parts
        geometry = [*transposes, m, n, k, lda, ldb, max(1, n), rows, math.prod(batch)]
        offsets = (_offsets(a, batch), _offsets(b, batch))
        installed_kernels.call(
            f"gemm_parts_{installed_kernels.suffix(a.dtype)}",
            np.array(geometry, np.int64),
            (address(gemm), *offsets, a, b),
            out,
        )
        return out
    pointer = _ffi.cast
    gemm(
        _ROW_MAJOR,
        flag_a,
        flag_b,
        m,
        n,
        k,
        1,
        pointer("void *", a.ctypes.data),
        lda,
        pointer("void *", b.ctypes.data),
        ldb,
        0,
        pointer("void *", out.ctypes.data),
        n,
    )
    return out


def fits_ints(*sizes):
    """Whether the BLAS can take `sizes` (its sizes and leading dimensions are C ints); an
    unknown size (a symbolic dimension) is taken to fit."""
    return all(not isinstance(size, int) or size <= INT_MAX for size in sizes)


def _operand(x, transposed):
    """(x in a layout the BLAS reads: C-contiguous, its transpose flag, its leading
    dimension): x whose matrices are column-major is read as the row-major transposes they
    are."""
    swapped = np.swapaxes(x, -1, -2)
    if not x.flags.c_contiguous and swapped.flags.c_contiguous:
        x, transposed = swapped, not transposed
    x = np.ascontiguousarray(x)
    return x, _TRANSPOSE if transposed else _NO_TRANSPOSE, max(1, x.shape[-1])


def _offsets(x, batch):
    """Where each matrix of the batch `batch` starts in C-contiguous x, its batch axes
    broadcast (int64 element offsets)."""
    size = x.shape[-2] * x.shape[-1]
    index = np.arange(math.prod(x.shape[:-2]), dtype=np.int64).reshape(x.shape[:-2])
    return np.ascontiguousarray(np.broadcast_to(index, batch).reshape(-1) * size)


def _gemm(function, ctype):
    """The BLAS's gemm for `ctype`, as a cffi function; None where there is no BLAS."""
    return blas_function(f"scipy_cblas_{function}", _GEMM.format(T=ctype))


@functools.cache
def blas_function(name, signature):
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


def pointer(at):
    """A `void *` at the address `at` (an int), for the functions of `blas_function`."""
    return _ffi.cast("void *", at)


def address(*functions):
    """The addresses of cffi functions, as an array for an installed kernel to read."""
    return np.array([int(_ffi.cast("uintptr_t", f)) for f in functions], np.uintp)
