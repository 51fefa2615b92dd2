"""libm functions numpy lacks, over whole arrays, for the eager kernels.

numpy has no erf. Computed element by element in Python (`math.erf`), it costs far more
than numpy's own functions, and GELU's erf made most of an eager transformer step
(benchmarks/RESULTS.md). A loop over the array, built as a compiled module is (the same
flags, glibc's vector erf, the disk cache) and called through its entry point, costs what
C's erf does. The first call on a machine builds the module; later processes load it from
the cache. Where no module can be built (no compiler, a cache that cannot hold it), `apply`
says so with None and the caller keeps its own way.
"""

import threading

import numpy as np

from codegen import build
from codegen.ctypes import MATH_SUFFIX
from codegen.errors import BuildFailure

FUNCTIONS = ("erf",)  # what `apply` computes
_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_SOURCE = """\
/* tracer: libm's {name}{f} over an array of {T} (codegen/array_math.py) */
#include <stdint.h>
{declaration}{T} {name}{f}({T});
int tracer_run(char **args) {{
    const {T} *restrict x = (const {T} *)args[0];
    {T} *restrict out = ({T} *)args[1];
    const int64_t n = *(const int64_t *)args[2];
    #pragma omp simd
    for (int64_t i = 0; i < n; i++) out[i] = {name}{f}(x[i]);
    return 0;
}}
"""
_ffi = build.Library.ffi
_built = {}  # (name, C type) -> the loaded module, or None where it cannot be built
_building = threading.Lock()


def apply(name, x):
    """libm's `name` (one of FUNCTIONS) of each element of the float32 or float64 array `x`,
    as a new array of its shape and dtype; None where no module can be built."""
    ctype = _TYPES.get(x.dtype)
    if name not in FUNCTIONS or ctype is None:
        raise ValueError(f"array_math computes {FUNCTIONS} of float32 or float64, not {name}")
    library = _library(name, ctype)
    if library is None:
        return None
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    count = np.array([x.size], np.int64)
    pointers = [_ffi.cast("char *", a.ctypes.data) for a in (x, out, count)]
    library.run(_ffi.new("char *[]", pointers))
    return out


def _library(name, ctype):
    key = (name, ctype)
    if key not in _built:
        with _building:
            if key not in _built:
                _built[key] = _build(name, ctype)
    return _built[key]


def _build(name, ctype):
    vectorized = "#pragma omp declare simd notinbranch\n" if build.vector_math() else ""
    source = _SOURCE.format(
        name=name,
        f=MATH_SUFFIX[ctype],
        T=ctype,
        declaration=vectorized + "__attribute__((const)) ",
    )
    try:
        return build.load(source, uses_blas=False)[0]
    except BuildFailure:
        return None
