"""BLAS's triangular solve over arrays, for the eager kernels.

numpy has no triangular solve: np.linalg.solve factors the triangle again (LU, n^3 more
work), and the blocks the eager kernel builds from matrix products still end in it. The
compiled backend calls BLAS's trsm from scipy-openblas32; a module built as compiled
modules are (the same flags, the disk cache), linking the same library and called through
its entry point, gives the eager kernel that trsm, with the compiled code's values. The
right-hand sides are cut into column blocks that tracer's threads solve at once (the
modules' BLAS runs on the thread that calls it, codegen/thread_pools.py). The first call on
a machine builds the module; later processes load it from the cache. Where none can be
built (no compiler, no scipy-openblas32), `triangular_solve` says so with None and the
caller keeps its own way.
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
    sizes = np.array([count, n, k, bool(lower), bool(adjoint)], np.int64)
    if count and n and k:
        pointers = [_ffi.cast("char *", v.ctypes.data) for v in (matrices, x, sizes)]
        library.run(_ffi.new("char *[]", pointers))
    return x


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
