"""BLAS's triangular solve and LAPACK's Cholesky factorization over arrays, for the eager
kernels.

numpy has no triangular solve: np.linalg.solve factors the triangle again (LU, n^3 more
work), and the blocks the eager kernel builds from matrix products still end in it. Its
Cholesky factorization copies each matrix into LAPACK's layout and back. The compiled
backend calls BLAS's trsm (trsv for one right-hand side) and LAPACK's potrf from
scipy-openblas32; the eager kernels call the same functions of the same library, through
cffi (codegen/array_blas.py), so their values are the compiled code's, with nothing to
compile. A solve's right-hand sides are cut into the compiled code's parts, which tracer's
threads solve at once, each by halves of the triangle with a GEMM between them, in a loop
installed with tracer (runtime/array_kernels_typed.h, `triangular_solves`: the modules' BLAS
runs on the thread that calls it, runtime/thread_pools.py). Where the CPU has AVX-512, a
solve of two right-hand sides or more is the installed `blocked_solves` instead, in compiled
modules too (codegen/blocked_products.py's `solve_geometry`). Where the BLAS or the installed
kernels are not there, `triangular_solve` and `cholesky` say so with None and the caller
keeps its own way.
"""

import math

import numpy as np

from codegen import array_blas, blas_library, blocked_products, conv_kernels
from runtime import installed_kernels

_LETTERS = {np.dtype(np.float32): ("s", "float"), np.dtype(np.float64): ("d", "double")}
_TRSM = "void (*)(int, int, int, int, int, int, int, {T}, void *, int, void *, int)"
_TRSV = "void (*)(int, int, int, int, int, void *, int, void *, int)"
_POTRF = "int (*)(int, char, int, void *, int)"
_COLUMN_MAJOR = 102  # LAPACK's layout


def triangular_solve(a, b, lower, adjoint):
    """x with op(A) x = b, A the lower (or upper) triangle of each (..., n, n) matrix of `a`
    and op its transpose where `adjoint` (the real matrices trsm takes), for b (..., n, k)
    of a's dtype (float32 or float64), batch axes broadcast; None where the BLAS or the
    installed kernels are not there, or for another dtype."""
    names = _LETTERS.get(a.dtype)
    if names is None or b.dtype != a.dtype:
        return None
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n, k = b.shape[-2:]
    count = math.prod(batch)
    # one matrix of right-hand sides for every system is read through its strides
    shared = b.ndim == 2 and not any(step % b.itemsize for step in b.strides)
    steps = (0, *(step // b.itemsize for step in b.strides)) if shared else None
    blocked = blocked_products.solve_geometry(a.dtype, count, n, k, lower, adjoint, steps)
    if blocked is not None:
        kernel, geometry = blocked
        rhs = b if shared else np.ascontiguousarray(np.broadcast_to(b, batch + (n, k)))
        matrices = np.ascontiguousarray(np.broadcast_to(a, batch + (n, n)))
        x = np.empty(batch + (n, k), a.dtype)
        geometry = np.array(geometry, np.int64)
        kernel(*(installed_kernels.pointer(y) for y in (geometry, matrices, rhs, x)))
        return x
    letter, ctype = names
    trsm = blas_library.function(f"scipy_cblas_{letter}trsm", _TRSM.format(T=ctype))
    trsv = blas_library.function(f"scipy_cblas_{letter}trsv", _TRSV)
    gemm = array_blas.gemm(a.dtype)
    if None in (trsm, trsv, gemm) or not conv_kernels.available():
        return None
    matrices = np.ascontiguousarray(np.broadcast_to(a, batch + (n, n)))
    x = np.array(np.broadcast_to(b, batch + (n, k)), order="C")  # solved in place
    geometry = [count, n, k, bool(lower), bool(adjoint)]
    if count and n and k:
        installed_kernels.call(
            f"triangular_solves_{installed_kernels.suffix(a.dtype)}",
            np.array(geometry, np.int64),
            (blas_library.address(trsm, trsv, gemm), matrices),
            x,
        )
    return x


def cholesky(a):
    """The lower-triangular factors of the symmetric matrices (..., n, n) whose lower
    triangles `a` holds (float32 or float64), as the compiled backend computes them (zeros
    above the diagonal); False where one is not positive definite; None where the library is
    not there, or for another dtype."""
    names = _LETTERS.get(a.dtype)
    if names is None:
        return None
    letter, _ = names
    potrf = blas_library.function(f"scipy_LAPACKE_{letter}potrf_work", _POTRF)
    if potrf is None:
        return None
    n = a.shape[-1]
    factors = np.tril(a)  # a new C-contiguous array, factored in place
    count = int(np.prod(a.shape[:-2], dtype=np.int64))
    at, step = factors.ctypes.data, factors.itemsize * n * n
    for matrix in range(count if n else 0):  # row-major lower: column-major upper
        if potrf(_COLUMN_MAJOR, b"U", n, blas_library.pointer(at + matrix * step), n) != 0:
            return False
    return factors
