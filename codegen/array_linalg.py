"""BLAS's triangular solve and LAPACK's Cholesky factorization over arrays, for the eager
kernels.

numpy has no triangular solve: np.linalg.solve factors the triangle again (LU, n^3 more
work), and the blocks the eager kernel builds from matrix products still end in it. Its
Cholesky factorization copies each matrix into LAPACK's layout and back. The compiled
backend calls BLAS's trsm and LAPACK's potrf from scipy-openblas32; a module built as
compiled modules are (the same flags, the disk cache), linking the same library and called
through its entry point, gives the eager kernels those, with the compiled code's values. The
right-hand sides of a solve are cut into column blocks that tracer's threads solve at once
(the modules' BLAS runs on the thread that calls it, codegen/thread_pools.py). The first
call on a machine builds the module; later processes load it from the cache. Where none
can be built (no compiler, no scipy-openblas32), `triangular_solve` and `cholesky` say so
with None and the caller keeps its own way.
"""

import threading

import numpy as np

from codegen import build, libc
from codegen.errors import BuildFailure

_LETTERS = {np.dtype(np.float32): ("s", "float"), np.dtype(np.float64): ("d", "double")}
COLUMNS_PER_THREAD = 64  # right-hand sides each thread takes at least
_SOURCE = """\
/* tracer: BLAS's triangular solve over a batch of {T} systems (codegen/array_linalg.py) */
#include <stdint.h>
int tracer_run(char **args) {{
    const {T} *a = (const {T} *)args[0];
    {T} *x = ({T} *)args[1];
    const int64_t *sizes = (const int64_t *)args[2];
    const int64_t batch = sizes[0], n = sizes[1], k = sizes[2];
    const int lower = (int)sizes[3], adjoint = (int)sizes[4];
    if (sizes[5]) {{  /* potrf of x's matrices, lower triangles with zeros above, in place */
        for (int64_t b = 0; b < batch; b++)  /* row-major lower: column-major upper */
            if (scipy_LAPACKE_{letter}potrf_work(LAPACK_COL_MAJOR, 'U', (lapack_int)n, x + b * n * n, (lapack_int)n) != 0)
                return 1;
        return 0;
    }}
    const int64_t blocks = (k + {columns} - 1) / {columns};
    #pragma omp parallel for collapse(2) schedule(dynamic) if (n * n * k > 262144)
    for (int64_t b = 0; b < batch; b++)
        for (int64_t c = 0; c < blocks; c++) {{
            const int64_t first = c * {columns};
            const int64_t width = k - first < {columns} ? k - first : {columns};
            scipy_cblas_{letter}trsm(CblasRowMajor, CblasLeft, lower ? CblasLower : CblasUpper,
                adjoint ? CblasTrans : CblasNoTrans, CblasNonUnit, (int)n, (int)width, 1,
                a + b * n * n, (int)n, x + b * n * k + first, (int)k);
        }}
    return 0;
}}
"""
_ffi = build.Library.ffi
_built = {}  # C type -> the loaded module, or None where it cannot be built
_building = threading.Lock()


def triangular_solve(a, b, lower, adjoint):
    """x with op(A) x = b, A the lower (or upper) triangle of each (..., n, n) matrix of `a`
    and op its transpose where `adjoint` (the real matrices trsm takes), for b (..., n, k)
    of a's dtype (float32 or float64), batch axes broadcast; None where no module can be
    built or for another dtype."""
    letter = _LETTERS.get(a.dtype)
    if letter is None or b.dtype != a.dtype:
        return None
    library = _library(*letter)
    if library is None:
        return None
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n, k = b.shape[-2:]
    matrices = np.ascontiguousarray(np.broadcast_to(a, batch + (n, n)))
    x = np.array(np.broadcast_to(b, batch + (n, k)), order="C")  # solved in place
    count = int(np.prod(batch, dtype=np.int64))
    sizes = np.array([count, n, k, bool(lower), bool(adjoint), 0], np.int64)
    if count and n and k:
        _run(library, matrices, x, sizes)
    return x


def cholesky(a):
    """The lower-triangular factors of the symmetric matrices (..., n, n) whose lower
    triangles `a` holds (float32 or float64), as the compiled backend computes them (zeros
    above the diagonal); False where one is not positive definite; None where no module can
    be built or for another dtype."""
    letter = _LETTERS.get(a.dtype)
    library = None if letter is None else _library(*letter)
    if library is None:
        return None
    n = a.shape[-1]
    factors = np.tril(a)  # a new C-contiguous array, factored in place
    count = int(np.prod(a.shape[:-2], dtype=np.int64))
    sizes = np.array([count, n, n, 1, 0, 1], np.int64)
    if count and n and _run(library, factors, factors, sizes) != 0:
        return False
    return factors


def _run(library, a, x, sizes):
    pointers = [_ffi.cast("char *", v.ctypes.data) for v in (a, x, sizes)]
    return library.run(_ffi.new("char *[]", pointers))


def _library(letter, ctype):
    if ctype not in _built:
        with _building:
            if ctype not in _built:
                _built[ctype] = _build(letter, ctype)
    return _built[ctype]


def _build(letter, ctype):
    if build.blas() is None:
        return None
    body = _SOURCE.format(T=ctype, letter=letter, columns=COLUMNS_PER_THREAD)
    declared = f"#include <stdint.h>\n{libc.declarations([body], True)}\n"
    try:
        return build.load(body.replace("#include <stdint.h>\n", declared, 1), uses_blas=True)[0]
    except BuildFailure:
        return None
