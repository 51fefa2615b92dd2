"""The four window ops over arrays, in C, for the eager kernels.

The numpy kernels of tracer/ops/window_ops.py work tap by tap on whole shifted copies of the
image: the patches are stacked copies, their sum adds each tap's part into a padded copy,
and max pooling compares the taps as copies and adds each one's share: several passes over
the image per tap. A loop over the windows reads or writes each tap once. The loops take the
geometry at run time, so one module per dtype serves every image; it is built as compiled
modules are (the same flags, the disk cache) and called through its entry point. The first
call in a process starts a thread that builds it (on a machine's first use) or loads it from
the cache; until it is ready, and where none can be built, each function here says so with
None and the caller keeps its numpy kernel, which gives the same bits: no eager call waits
for the compiler.

Max pooling and its gradient (a gather of the image's own maxima, and the scatter) call the
kernels installed with tracer instead (runtime/conv_kernels.c, through their table: the
compiled modules' first kernels), which need no module and run faster, with the same
selections and sums (tests/test_array_windows.py compares their bits with numpy's).

The patches are copies; their sum gathers, for each image element, the taps that read it,
from 0 in the taps' order, as numpy's tap-by-tap additions sum it. Each max window selects
its first largest image element, row-major, or its first NaN (padding never wins), as the
numpy kernels do; the scatter adds tap by tap, so that an element several windows select
sums their cotangents in the same order.
"""

import threading

import numpy as np

from codegen import build, conv_kernels
from codegen.errors import BuildFailure
from runtime import installed_kernels

_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_SOURCE = """\
/* tracer: max pooling's window ops over {T} images, any geometry (codegen/array_windows.py) */
#include <stdint.h>
void *malloc(__SIZE_TYPE__);
void free(void *);
void *memset(void *, int, __SIZE_TYPE__);
#define CHUNK 64 /* channels chosen at once */

/* g: N, H, W, C, OH, OW, KH, KW, SH, SW, DH, DW, BH, BW. For window w = (n, oh, ow) and
   channels c0 .. c0 + count - 1: the tap of the first largest image element, or the first
   NaN (tap[c], -1 where no tap lies inside the image), and where x holds it (at[c]). */
static void choose(const {T} *x, const int64_t *g, int64_t w, int64_t c0, int64_t count,
                   int32_t *tap, int64_t *at) {{
    const int64_t H = g[1], W = g[2], C = g[3], OH = g[4], OW = g[5];
    const int64_t ow = w % OW, oh = w / OW % OH, n = w / OW / OH;
    {T} top[CHUNK];
    int first = 1;
    for (int64_t c = 0; c < count; c++) tap[c] = -1;
    for (int64_t i = 0; i < g[6]; i++) {{
        const int64_t r = oh * g[8] + i * g[10] - g[12];
        if (r < 0 || r >= H) continue;
        for (int64_t j = 0; j < g[7]; j++) {{
            const int64_t s = ow * g[9] + j * g[11] - g[13];
            if (s < 0 || s >= W) continue;
            const int32_t t = (int32_t)(i * g[7] + j);
            const int64_t base = ((n * H + r) * W + s) * C + c0;
            const {T} *row = x + base;
            if (first) {{
                for (int64_t c = 0; c < count; c++) {{
                    top[c] = row[c];
                    tap[c] = t;
                    at[c] = base + c;
                }}
                first = 0;
                continue;
            }}
            for (int64_t c = 0; c < count; c++) {{
                const {T} value = row[c];
                /* a NaN chosen stays; a larger value or a NaN is chosen */
                const int take = top[c] == top[c] && (value > top[c] || value != value);
                top[c] = take ? value : top[c];
                tap[c] = take ? t : tap[c];
                at[c] = take ? base + c : at[c];
            }}
        }}
    }}
}}

/* args: x; v (gather), the pooled cotangent (scatter) or the patches (their sum); out; the
   geometry g; the mode (0: out = v where each window selects; 1: out = zeros, each window's
   cotangent added where it selects, tap by tap; 2: x's patches; 3: the patches summed back
   into the image, tap by tap) */
int tracer_run(char **args) {{
    const {T} *x = (const {T} *)args[0];
    const {T} *v = (const {T} *)args[1];
    {T} *out = ({T} *)args[2];
    const int64_t *g = (const int64_t *)args[3];
    const int64_t mode = *(const int64_t *)args[4];
    const int64_t H = g[1], W = g[2], C = g[3], OH = g[4], OW = g[5], KW = g[7];
    const int64_t windows = g[0] * OH * OW, taps = g[6] * KW;
    if (mode == 2) {{ /* the patches: out (windows, taps * C), padding reads 0 */
        #pragma omp parallel for if (windows * C * taps > {parallel_min})
        for (int64_t w = 0; w < windows; w++) {{
            const int64_t ow = w % OW, oh = w / OW % OH, n = w / OW / OH;
            for (int64_t t = 0; t < taps; t++) {{
                const int64_t r = oh * g[8] + t / KW * g[10] - g[12];
                const int64_t s = ow * g[9] + t % KW * g[11] - g[13];
                {T} *to = out + (w * taps + t) * C;
                const int inside = r >= 0 && r < H && s >= 0 && s < W;
                const {T} *from = x + ((n * H + (inside ? r : 0)) * W + (inside ? s : 0)) * C;
                for (int64_t c = 0; c < C; c++) to[c] = inside ? from[c] : 0;
            }}
        }}
        return 0;
    }}
    if (mode == 3) {{ /* their sum: v the patches, out (N, H, W, C), tap by tap */
        /* each image element gathers the taps that read it, from 0 in the taps' order (the
           numpy kernel's order): one pass over out, none over it per tap */
        #pragma omp parallel for if (windows * C * taps > {parallel_min})
        for (int64_t p = 0; p < g[0] * H * W; p++) {{
            const int64_t s = p % W, r = p / W % H, n = p / W / H;
            {T} *to = out + p * C;
            for (int64_t c = 0; c < C; c++) to[c] = 0;
            for (int64_t t = 0; t < taps; t++) {{
                /* the window whose tap t reads (r, s): oh * SH = r + BH - i * DH, ... */
                const int64_t a = r + g[12] - t / KW * g[10], b = s + g[13] - t % KW * g[11];
                if (a < 0 || b < 0 || a % g[8] || b % g[9]) continue;
                const int64_t oh = a / g[8], ow = b / g[9];
                if (oh >= OH || ow >= OW) continue;
                const {T} *from = v + (((n * OH + oh) * OW + ow) * taps + t) * C;
                for (int64_t c = 0; c < C; c++) to[c] += from[c];
            }}
        }}
        return 0;
    }}
    int32_t *picked = 0;
    if (mode == 1) {{
        picked = malloc((__SIZE_TYPE__)(windows * C > 0 ? windows * C : 1) * sizeof(int32_t));
        if (!picked) return 1;
    }}
    #pragma omp parallel for if (windows * C * taps > {parallel_min})
    for (int64_t w = 0; w < windows; w++) {{
        int32_t tap[CHUNK];
        int64_t at[CHUNK];
        for (int64_t c0 = 0; c0 < C; c0 += CHUNK) {{
            const int64_t count = C - c0 < CHUNK ? C - c0 : CHUNK;
            choose(x, g, w, c0, count, tap, at);
            for (int64_t c = 0; c < count; c++) {{
                if (mode == 0) out[w * C + c0 + c] = tap[c] < 0 ? 0 : v[at[c]];
                else picked[w * C + c0 + c] = tap[c];
            }}
        }}
    }}
    if (mode == 0) return 0;
    memset(out, 0, (__SIZE_TYPE__)(g[0] * H * W * C) * sizeof({T}));
    for (int64_t t = 0; t < taps; t++) {{ /* a tap's windows select distinct elements */
        const int64_t i = t / KW, j = t % KW;
        #pragma omp parallel for if (windows * C > {parallel_min})
        for (int64_t w = 0; w < windows; w++) {{
            const int64_t ow = w % OW, oh = w / OW % OH, n = w / OW / OH;
            const int64_t r = oh * g[8] + i * g[10] - g[12], s = ow * g[9] + j * g[11] - g[13];
            if (r < 0 || r >= H || s < 0 || s >= W) continue;
            {T} *to = out + ((n * H + r) * W + s) * C;
            const int32_t *chosen = picked + w * C;
            const {T} *from = v + w * C;
            /* + 0 where another tap is chosen: the numpy kernel's sum, without a branch */
            for (int64_t c = 0; c < C; c++) to[c] += chosen[c] == t ? from[c] : 0;
        }}
    }}
    free(picked);
    return 0;
}}
"""
PARALLEL_MIN = 65536  # elements read before a loop is shared among threads
_ffi = build.Library.ffi
_built = {}  # C type -> the loaded module, or None while it builds or where it cannot be built
_building = threading.Lock()
_builders = []  # the threads that build the modules


def gather(x, v, attrs):
    """window_max_gather's values: v where x is largest in each window (N, OH, OW, C); None
    where no module can be built, or for dtypes other than float32 and float64. Max
    pooling (v the image's own elements) is the installed kernel's where the table is
    there."""
    shape = (x.shape[0], *attrs["out"], x.shape[3])
    if _same_array(x, v):
        pooled = _installed("window_max_pool", shape, attrs, x)
        if pooled is not None:
            return pooled
    out = _out(x, v, shape)
    return out if out is None else _run(x, v, out, attrs, 0)


def scatter(x, g, attrs):
    """window_max_scatter's values: (N, H, W, C) zeros, each window's g added where x is
    largest in it; None as for `gather`. The installed kernel's where the table is there."""
    scattered = _installed("window_max_scatter", x.shape, attrs, x, g)
    if scattered is not None:
        return scattered
    out = _out(x, g, x.shape)
    return out if out is None else _run(x, g, out, attrs, 1)


def _same_array(x, v):
    """Whether x and v are the same elements (max pooling gathers the image's own)."""
    a, b = x.__array_interface__, v.__array_interface__
    return all(a[key] == b[key] for key in ("data", "shape", "strides", "typestr"))


def _installed(name, shape, attrs, *inputs):
    """The installed kernel `name` (runtime/conv_kernels.c, the compiled modules' first
    kernels: the same selections and sums, tap by tap) on `inputs` into a new array of
    `shape`; None where the table is not there or takes no such image."""
    x = inputs[0]
    suffix = installed_kernels.suffix(x.dtype)
    if suffix is None or any(i.dtype != x.dtype for i in inputs) or not conv_kernels.available():
        return None
    geometry = conv_kernels.window_geometry(x.shape, attrs)
    if geometry is None:
        return None
    out = np.empty(shape, x.dtype)
    arrays = [np.ascontiguousarray(i) for i in inputs]
    installed_kernels.call(f"{name}_{suffix}", np.array(geometry, np.int64), arrays, out)
    return out


def patches(x, attrs):
    """extract_patches' values: (N, OH, OW, taps * C), each window's elements tap by tap,
    padding 0; None as for `gather`."""
    taps = attrs["kernel"][0] * attrs["kernel"][1]
    out = _out(x, x, (x.shape[0], *attrs["out"], taps * x.shape[3]))
    return out if out is None else _run(x, x, out, attrs, 2)


def summed_patches(cols, attrs):
    """sum_patches' values: (N, H, W, C), each element the sum of the patch entries that
    read it, tap by tap; None as for `gather`."""
    taps = attrs["kernel"][0] * attrs["kernel"][1]
    n, channels = cols.shape[0], cols.shape[3] // taps
    out = _out(cols, cols, (n, *attrs["sizes"], channels))
    return out if out is None else _run(out, cols, out, attrs, 3)


def _out(x, v, shape):
    ctype = _TYPES.get(x.dtype)
    if ctype is None or v.dtype != x.dtype or _library(ctype) is None:
        return None
    return np.empty(shape, x.dtype)


def _run(x, v, out, attrs, mode):
    x, v = np.ascontiguousarray(x), np.ascontiguousarray(v)
    n, _, _, channels = x.shape
    pairs = [attrs[name] for name in ("out", "kernel", "strides", "dilations", "before")]
    geometry = np.array(
        [n, *attrs["sizes"], channels, *(value for pair in pairs for value in pair)], np.int64
    )
    mode = np.array([mode], np.int64)
    pointers = [_ffi.from_buffer(a) for a in (x, v, out, geometry, mode)]  # all C-contiguous
    if _library(_TYPES[x.dtype]).run(_ffi.new("char *[]", pointers)) != 0:
        return None  # no memory for the scatter's selections: the numpy kernel's way
    return out


def _library(ctype):
    """The module for `ctype`, or None while a thread builds it (the first call starts the
    thread) or where it cannot be built."""
    if ctype not in _built:
        with _building:
            if ctype not in _built:
                _built[ctype] = None
                builder = threading.Thread(target=_build_into, args=(ctype,), daemon=True)
                _builders.append(builder)
                builder.start()
    return _built[ctype]


def wait():
    """Wait for the modules whose builds have started (what tests compare with numpy)."""
    for builder in list(_builders):
        builder.join()


def _build_into(ctype):
    _built[ctype] = _build(ctype)


def _build(ctype):
    try:
        source = _SOURCE.format(T=ctype, parallel_min=PARALLEL_MIN)
        return build.load(source, uses_blas=False)[0]
    except (BuildFailure, OSError):  # (OSError: a cache taken away while it builds)
        return None
