/* The convolution and pooling kernels of compiled modules, built once, when tracer is
 * installed, for any geometry: a module calls these instead of compiling its own.
 *
 *     table() -> the address of a table of the kernels (KERNELS names them in its order),
 *                or 0 where this CPU lacks an instruction set the build used, or has a
 *                fused multiply-add where the build had none (or none where it had one)
 *
 * A convolution's patch products and pooling's window kernels were most of a CNN step's
 * compile (templates/patch_product.c.j2 and windows.c.j2, specialised to each geometry).
 * These loops are those templates' with the geometry read at run time: the same sums in the
 * same order, the same multiply-adds, the same selections, so a module that calls them gives
 * the bits of one that compiled its own (tests/test_installed_kernels.py holds them to it). Each
 * output element's sum is its own, whichever register block computes it, so the blocks here
 * are a few fixed sizes (codegen/conv_kernels.py says which nodes the table serves).
 *
 * The geometry `g` (int64): n, height, width, channels, kernel (2), strides (2), dilations
 * (2), before (2), out (2), m (the product's output channels), chunks (the weights' partial
 * sums), activation (0 none, 1 relu: the patch product's and the depthwise product's, after
 * their bias where they are given one). The patch product and the depthwise input gradient
 * take a gate (NULL for none): relu_grad(gate, value), the value where the gate is positive
 * (tracer/ops/conv_epilogues.py). The window kernels read the image geometry alone.
 *
 * Beside them, the padding, relu gradient and bias gradient of a CNN's step, and for eager
 * kernels relu, a select, +, -, *, / and negation by rows, Adam's update of an optimizer's
 * variable, batches of triangular solves and products in parts (array_kernels_typed.h), and
 * where the CPU has AVX-512 products and batches of them by register blocks
 * (blocked_products_typed.h) and triangular solves on those blocks (blocked_solves_typed.h),
 * which take geometries of their own. And one that moves bytes: an eager concat or a
 * slice's gradient written in pieces on the threads (`pieces`).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runs_here.h"
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "openmp_entries.h" /* its parallel loops run on tracer's pool */
#ifdef _OPENMP
#include <omp.h>
#define THREADS() omp_get_max_threads() /* the threads a parallel loop may use now */
#define THREAD_COUNT() omp_get_num_threads() /* inside a parallel region: its shares */
#define THREAD_NUMBER() omp_get_thread_num() /* and the one this thread runs */
#else
#define THREADS() 1
#define THREAD_COUNT() 1
#define THREAD_NUMBER() 0
#endif

#define INTERFACE 19 /* runtime/native.py refuses a module of another */

/* as the modules' prologue (templates/prologue.h.j2) */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define TR_MADDF(a, b, c) fmaf(a, b, c)
#define TR_MADD(a, b, c) fma(a, b, c)
#else
#define TR_MADDF(a, b, c) ((a) * (b) + (c))
#define TR_MADD(a, b, c) ((a) * (b) + (c))
#endif
#define PARALLEL_MIN 131072 /* codegen.loops.PARALLEL_MIN */
/* elements from which the elementwise loops of array_kernels_typed.h run on the threads:
   half PARALLEL_MIN, as their work an element is a load and a store (tracer/ops/math_ops.py's
   ARITHMETIC_ON_THREADS_FROM) */
#define ELEMENTS_PARALLEL_MIN 65536
#define GEMM_PARALLEL_MIN 1048576 /* tracer/ops/linalg_ops.py's GEMM_PARALLEL_MIN */
#define SOLVE_BY_TRSM_ROWS 64     /* tracer/ops/factorization_ops.py's SOLVE_BY_TRSM_ROWS */
#define COLUMN_BLOCK 1024   /* codegen.loops.COLUMN_BLOCK */
#define COLUMN_STEP 16      /* a narrower block of column_sums is whole 64-byte lines of float */
#define MOST_RANK 8         /* codegen/conv_kernels.py pads no more axes */

enum { N, H, W, C, KH, KW, SH, SW, DH, DW, BH, BW, OH, OW, M, CHUNKS, ACTIVATION, GEOMETRY };

/* the register blocks, as tracer/ops/patch_product_ops.py's BLOCKS */
#if defined(__AVX512F__)
#define PRODUCT_ROWS 7
#define WEIGHT_COLUMNS 6
#define LANE_BYTES 256
#else
#define PRODUCT_ROWS 6
#define WEIGHT_COLUMNS 6
#define LANE_BYTES 64
#endif
#define MOST_CHANNELS 4096 /* the padding's zeros; codegen/conv_kernels.py keeps larger images out */
/* a depthwise convolution's blocks, as tracer/ops/depthwise_ops.py's (POSITIONS, and
   DEPTHWISE_LANES 64 bytes of channels); the most taps its filter gradient takes */
#define DEPTHWISE_POSITIONS 4
#define DEPTHWISE_TAPS 49
/* the blocks of channels whose filter-gradient totals one thread holds at once (31 KB) */
#define DEPTHWISE_GROUP_MOST 10

static const float zeros_f32[MOST_CHANNELS];
static const double zeros_f64[MOST_CHANNELS];

/* A block's call, unrolled for a count of LANES output channels, half or a quarter of it
   (the blocks of common channel counts), else for the `count` it is given. */
#define LANE_CASES(CASE, ROWS)                                                                 \
    do {                                                                                       \
        if (count == LANES) CASE(ROWS, LANES);                                                 \
        else if (count == LANES / 2) CASE(ROWS, LANES / 2);                                    \
        else if (count == LANES / 4) CASE(ROWS, LANES / 4);                                    \
        else CASE(ROWS, count);                                                                \
    } while (0)

static inline float relu_f32(float x) { return (x > 0 || x != x) ? x : (float)0; }
static inline double relu_f64(double x) { return (x > 0 || x != x) ? x : (double)0; }

/* float's rounding of x, a double holding one float product's, quotient's or square root's
   exact result or its double rounding (harmless for *, / and sqrt: double has more than twice
   float's bits): the conversion, which rounds below float's normal range as float's
   operations do and costs no microcode assist where it makes a subnormal (a product does).
   __builtin_assoc_barrier, or where the compiler lacks it a select on NaN, which GCC cannot
   see through, keeps it from narrowing `(float)((double)a * (double)b)` back into the float
   product, which would make the subnormal (codegen/loops.py's FLOAT_GRID is the same). Sums
   and differences need none: they read and make subnormals without an assist. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_assoc_barrier)
#define ASSOC_BARRIER
#endif
#endif
static inline float float_grid(double x)
{
#ifdef ASSOC_BARRIER
    return (float)__builtin_assoc_barrier(x);
#else
    const double rounded = (double)(float)x;
    return (float)(x == x ? rounded : x);
#endif
}

/* Adam's second moment v b2 + (g g) c2, each operation rounded to T as numpy's are. In
   float, the square of a gradient under 2^-63 is subnormal, and the CPU takes a microcode
   assist (a hundred cycles or more) for each vector instruction that makes or reads one,
   which a variable whose gradients had vanished paid on every block. So the square and its
   scaling are made in double and rounded to float (`float_grid`; a module's loops round so
   too: codegen/loops.py's FLOAT_GRID). */
static inline float second_moment_f32(float v, float b2, float g, float c2)
{
    const float scaled = float_grid((double)float_grid((double)g * g) * c2);
    return v * b2 + scaled;
}
static inline double second_moment_f64(double v, double b2, double g, double c2)
{
    return v * b2 + g * g * c2;
}

/* Whether any of `count` float gradients is nonzero and under 2^-48 (its square under
   2^-96: scaled by Adam's 1 - b2 it nears float's subnormals), so that the block's second
   moment is made by `second_moment_f32`. A prediction only: a block it misses is updated
   exactly, more slowly. In double a square is subnormal under 2^-511: none predicted. */
static inline int tiny_gradients_f32(const float *g, int64_t count)
{
    int found = 0;
#pragma omp simd reduction(| : found)
    for (int64_t i = 0; i < count; i++) found |= (g[i] != 0) & (fabsf(g[i]) < 0x1p-48f);
    return found;
}
static inline int tiny_gradients_f64(const double *g, int64_t count)
{
    (void)g, (void)count;
    return 0;
}

/* Whether any of `count` float moments or gradients is subnormal (the moments of a gradient
   that vanished decay through float's subnormal range over thousands of steps), so that the
   block's whole step is made on float's grid (`adam_on_grid_f32`). A prediction from the
   inputs only, as `tiny_gradients_f32`'s; in double, none predicted. */
static inline int subnormal_values_f32(const float *m, const float *v, const float *g,
                                       int64_t count)
{
    int found = 0;
#pragma omp simd reduction(| : found)
    for (int64_t i = 0; i < count; i++)
        found |= ((m[i] != 0) & (fabsf(m[i]) < 0x1p-126f)) | ((v[i] != 0) & (v[i] < 0x1p-126f)) |
                 ((g[i] != 0) & (fabsf(g[i]) < 0x1p-126f));
    return found;
}
static inline int subnormal_values_f64(const double *m, const double *v, const double *g,
                                       int64_t count)
{
    (void)m, (void)v, (void)g, (void)count;
    return 0;
}

/* Adam's step of one element (array_kernels_typed.h's ADAM_STEP) with every product,
   quotient and square root made in double and rounded to float (`float_grid`; a root so
   made is float's correctly rounded root), sums and differences float's own: numpy's bits,
   and no subnormal read or made by an operation that takes an assist for one. */
static inline void adam_on_grid_f32(float x, float m, float v, float g, float b1, float c1,
                                    float b2, float c2, float step, float eps, float *m_out,
                                    float *v_out, float *x_out)
{
    const float first = float_grid((double)m * b1) + float_grid((double)g * c1);
    const float square = float_grid((double)float_grid((double)g * g) * c2);
    const float second = float_grid((double)v * b2) + square;
    const float scaled = float_grid((double)step * first);
    const float root = float_grid(sqrt((double)second)) + eps;
    *m_out = first;
    *v_out = second;
    *x_out = x - float_grid((double)scaled / root);
}
static inline void adam_on_grid_f64(double x, double m, double v, double g, double b1,
                                    double c1, double b2, double c2, double step, double eps,
                                    double *m_out, double *v_out, double *x_out)
{
    const double first = m * b1 + g * c1, second = v * b2 + g * g * c2;
    *m_out = first;
    *v_out = second;
    *x_out = x - step * first / (sqrt(second) + eps);
}

#define T float
#define BITS uint32_t /* an unsigned integer of T's size */
#define NAME(name) name##_f32
#define SQRT sqrtf
#define MADD TR_MADDF
#define ZEROS zeros_f32
#define LANES (LANE_BYTES / 4)
#define DEPTHWISE_LANES 16
#include "conv_kernels_typed.h"
#include "array_kernels_typed.h"
#if defined(__AVX512F__)
#define V_TYPE __m512
#define V_MASK __mmask16
#define V_LANES 16
#define V_ZERO _mm512_setzero_ps
#define V_SET1 _mm512_set1_ps
#define V_LOAD _mm512_loadu_ps
#define V_STORE _mm512_storeu_ps
#define V_MASK_LOAD _mm512_maskz_loadu_ps
#define V_MASK_STORE _mm512_mask_storeu_ps
#define V_FMA _mm512_fmadd_ps
#define V_ADD _mm512_add_ps
#define V_SUB _mm512_sub_ps
#define V_DIV _mm512_div_ps
#define V_FNMADD _mm512_fnmadd_ps
#define V_INDEX __m512i
#define V_INDICES(step)                                                                        \
    _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), \
                       _mm512_set1_epi32(step))
#define V_GATHER(mask, lanes, at) _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, lanes, at, 4)
#include "blocked_products_typed.h"
#include "blocked_solves_typed.h"
#include "blocked_products_undef.h"
#endif
#undef T
#undef BITS
#undef NAME
#undef SQRT
#undef MADD
#undef ZEROS
#undef LANES
#undef PRODUCT_CASE
#undef WEIGHTS_CASE
#undef DEPTHWISE_LANES
#undef DEPTHWISE_CASE
#undef DEPTHWISE_LANE_CASES

#define T double
#define BITS uint64_t
#define NAME(name) name##_f64
#define SQRT sqrt
#define MADD TR_MADD
#define ZEROS zeros_f64
#define LANES (LANE_BYTES / 8)
#define DEPTHWISE_LANES 8
#include "conv_kernels_typed.h"
#include "array_kernels_typed.h"
#if defined(__AVX512F__)
#define V_TYPE __m512d
#define V_MASK __mmask8
#define V_LANES 8
#define V_ZERO _mm512_setzero_pd
#define V_SET1 _mm512_set1_pd
#define V_LOAD _mm512_loadu_pd
#define V_STORE _mm512_storeu_pd
#define V_MASK_LOAD _mm512_maskz_loadu_pd
#define V_MASK_STORE _mm512_mask_storeu_pd
#define V_FMA _mm512_fmadd_pd
#define V_ADD _mm512_add_pd
#define V_SUB _mm512_sub_pd
#define V_DIV _mm512_div_pd
#define V_FNMADD _mm512_fnmadd_pd
#define V_INDEX __m256i
#define V_INDICES(step)                                                                        \
    _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32(step))
#define V_GATHER(mask, lanes, at) _mm512_mask_i32gather_pd(_mm512_setzero_pd(), mask, lanes, at, 8)
#include "blocked_products_typed.h"
#include "blocked_solves_typed.h"
#include "blocked_products_undef.h"
#else /* no AVX-512: the table's slots of these kernels are empty */
#define blocked_products_f32 NULL
#define blocked_products_f64 NULL
#define blocked_solves_f32 NULL
#define blocked_solves_f64 NULL
#endif

/* `adam_update` of each of g[0] variables of one dtype, of g[1], g[2], ... elements, with the
   same scalars s: `arrays` holds seven pointers a variable (x, m, v, grad, m', v', x'). One
   call for all the variables an eager apply_gradients updates, where a call each cost a small
   variable five times its arithmetic. */
#define ADAM_UPDATES(SUFFIX, T)                                                                \
    static void adam_updates_##SUFFIX(const int64_t *g, const T *s, void *const *arrays)      \
    {                                                                                          \
        for (int64_t k = 0; k < g[0]; k++) {                                                   \
            void *const *at = arrays + 7 * k;                                                  \
            adam_update_##SUFFIX(g + 1 + k, at[0], at[1], at[2], at[3], s, at[4], at[5],       \
                                 at[6]);                                                       \
        }                                                                                      \
    }
ADAM_UPDATES(f32, float)
ADAM_UPDATES(f64, double)
#undef ADAM_UPDATES

/* The table, in the order of KERNELS (runtime/installed_kernels.py names them alike). */
typedef void (*kernel)(void);
static const kernel kernels[] = {
    (kernel)patch_product_f32,     (kernel)patch_product_f64,
    (kernel)patch_weights_f32,     (kernel)patch_weights_f64,
    (kernel)window_max_pool_f32,   (kernel)window_max_pool_f64,
    (kernel)window_max_scatter_f32, (kernel)window_max_scatter_f64,
    (kernel)pad_zeros_f32,         (kernel)pad_zeros_f64,
    (kernel)select_positive_f32,   (kernel)select_positive_f64,
    (kernel)column_sums_f32,       (kernel)column_sums_f64,
    (kernel)adam_updates_f32,      (kernel)adam_updates_f64,
    (kernel)relu_values_f32,       (kernel)relu_values_f64,
    (kernel)triangular_solves_f32, (kernel)triangular_solves_f64,
    (kernel)gemm_parts_f32,        (kernel)gemm_parts_f64,
    (kernel)select_values_f32,     (kernel)select_values_f64,
    (kernel)arithmetic_rows_f32,   (kernel)arithmetic_rows_f64,
    (kernel)blocked_products_f32,  (kernel)blocked_products_f64,
    (kernel)blocked_solves_f32,    (kernel)blocked_solves_f64,
    (kernel)depthwise_product_f32, (kernel)depthwise_product_f64,
    (kernel)depthwise_input_f32,   (kernel)depthwise_input_f64,
    (kernel)depthwise_filter_f32,  (kernel)depthwise_filter_f64,
};
static const char *kernel_names =
    "patch_product_f32 patch_product_f64 patch_weights_f32 patch_weights_f64 "
    "window_max_pool_f32 window_max_pool_f64 window_max_scatter_f32 window_max_scatter_f64 "
    "pad_zeros_f32 pad_zeros_f64 select_positive_f32 select_positive_f64 "
    "column_sums_f32 column_sums_f64 adam_updates_f32 adam_updates_f64 "
    "relu_values_f32 relu_values_f64 triangular_solves_f32 triangular_solves_f64 "
    "gemm_parts_f32 gemm_parts_f64 select_values_f32 select_values_f64 "
    "arithmetic_rows_f32 arithmetic_rows_f64 blocked_products_f32 blocked_products_f64 "
    "blocked_solves_f32 blocked_solves_f64 depthwise_product_f32 depthwise_product_f64 "
    "depthwise_input_f32 depthwise_input_f64 depthwise_filter_f32 depthwise_filter_f64";

static PyObject *
table(PyObject *self, PyObject *unused)
{
    return PyLong_FromVoidPtr(runs_here() ? (void *)kernels : NULL);
}

/* numpy's empty and ndarray, and uint8's dtype, for `arithmetic`'s results (set at import) */
static PyObject *numpy_empty, *numpy_ndarray, *uint8_dtype;

#define ALIGNMENT 64 /* runtime/aligned.py's ALIGNMENT */

/* An uninitialized C-contiguous ndarray of `shape` and `dtype`, `nbytes` long, its data at a
   multiple of ALIGNMENT bytes: a view of a uint8 array only it holds, as runtime/aligned.py's
   `empty` makes (so the straight-line program may write into it as into one it owns). */
static PyObject *
aligned_empty(PyObject *shape, PyObject *dtype, Py_ssize_t nbytes)
{
    PyObject *size = PyLong_FromSsize_t(nbytes + ALIGNMENT);
    if (size == NULL) return NULL;
    PyObject *raw_arguments[] = {size, uint8_dtype};
    PyObject *raw = PyObject_Vectorcall(numpy_empty, raw_arguments, 2, NULL);
    Py_DECREF(size);
    if (raw == NULL) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(raw, &view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(raw);
        return NULL;
    }
    const Py_ssize_t start = (Py_ssize_t)(-(uintptr_t)view.buf % ALIGNMENT);
    PyBuffer_Release(&view);
    PyObject *offset = PyLong_FromSsize_t(start);
    if (offset == NULL) {
        Py_DECREF(raw);
        return NULL;
    }
    PyObject *arguments[] = {shape, dtype, raw, offset};
    PyObject *result = PyObject_Vectorcall(numpy_ndarray, arguments, 4, NULL);
    Py_DECREF(raw);
    Py_DECREF(offset);
    return result;
}

/* Whether buffers `a` and `b` have the same shape. */
static int
same_shape(const Py_buffer *a, const Py_buffer *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k]) return 0;
    return 1;
}

/* How arithmetic_rows reads operand `b` of a result of `whole`'s shape, as
   codegen/array_math.py's `_operand_kind` says: 0 whole (its shape, ones before it), 1 one
   row (the result's last axes, ones before them), 2 one column (the result's leading axes,
   a last axis of one), 3 one element; -1 for anything else, or where b has more axes. */
static int
operand_kind(const Py_buffer *b, const Py_buffer *whole)
{
    const int lead = whole->ndim - b->ndim;
    if (lead < 0) return -1;
    if (b->len == b->itemsize) return 3;
    /* b's shape with ones before it, as long as whole's */
#define PADDED(k) ((k) < lead ? 1 : b->shape[(k) - lead])
    int leading = 0; /* the first axis of b's padded shape that is not one */
    while (leading < whole->ndim && PADDED(leading) == 1) leading++;
    int same_from_leading = 1, same_before_last = 1, same = 1;
    for (int k = 0; k < whole->ndim; k++) {
        const int equal = PADDED(k) == whole->shape[k];
        same &= equal;
        if (k >= leading) same_from_leading &= equal;
        if (k < whole->ndim - 1) same_before_last &= equal;
    }
    const int last_is_one = whole->ndim > 0 && PADDED(whole->ndim - 1) == 1;
#undef PADDED
    if (same) return 0;
    if (same_from_leading) return 1;
    if (last_is_one && same_before_last) return 2;
    return -1;
}

/* arithmetic(op, x, y, out) -> x op y into `out` (None: a new aligned array), by
   arithmetic_rows (op as its g[0]: 0 +, 1 -, 2 *, 3 /), where x and y are float32 or float64
   arrays (or numpy scalars) of one dtype, stored in C order, one of the result's shape and
   the other read as `operand_kind` says (whole, a bias, a column or one element), and `out`
   is a writeable C-contiguous array of the result's shape and dtype, x or y included; None
   for anything else, which codegen/array_math.py's `arithmetic` then takes. That function's
   common case without its Python: an eager step's large +, -, * and /. */
static PyObject *
arithmetic(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyLong_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "arithmetic(op, x, y, out)");
        return NULL;
    }
    const long op = PyLong_AsLong(args[0]);
    if (op < 0 || op > 3) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "arithmetic: op is 0 to 3");
        return NULL;
    }
    if (!runs_here()) Py_RETURN_NONE;
    Py_buffer x, y, out;
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
    if (PyObject_GetBuffer(args[1], &x, flags) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (PyObject_GetBuffer(args[2], &y, flags) < 0) {
        PyErr_Clear();
        PyBuffer_Release(&x);
        Py_RETURN_NONE;
    }
    PyObject *result = NULL;
    const char *format = x.format;
    const int typed = format != NULL && y.format != NULL && !strcmp(format, y.format) &&
                      (!strcmp(format, "d") || !strcmp(format, "f"));
    /* the operand of the result's shape, and the operands' kinds (`operand_kind`) */
    const Py_buffer *whole = NULL;
    int64_t kinds[2] = {0, 0};
    if (typed && (kinds[1] = operand_kind(&y, &x)) >= 0)
        whole = &x;
    else if (typed && (kinds[0] = operand_kind(&x, &y)) >= 0)
        whole = &y, kinds[1] = 0;
    if (whole == NULL || whole->len == 0) {
        Py_INCREF(Py_None);
        result = Py_None;
        goto release;
    }
    if (args[3] == Py_None) {
        PyObject *holder = whole == &x ? args[1] : args[2];
        PyObject *shape = PyObject_GetAttrString(holder, "shape");
        PyObject *dtype = shape == NULL ? NULL : PyObject_GetAttrString(holder, "dtype");
        result = dtype == NULL ? NULL : aligned_empty(shape, dtype, whole->len);
        Py_XDECREF(shape);
        Py_XDECREF(dtype);
        if (result == NULL) goto release;
    } else
        result = Py_NewRef(args[3]);
    if (PyObject_GetBuffer(result, &out, flags | PyBUF_WRITABLE) < 0) {
        if (args[3] == Py_None) goto fail;
        PyErr_Clear();
        Py_SETREF(result, Py_NewRef(Py_None));
        goto release;
    }
    if (out.format == NULL || strcmp(out.format, format) || !same_shape(&out, whole)) {
        PyBuffer_Release(&out);
        Py_SETREF(result, Py_NewRef(Py_None));
        goto release;
    }
    /* a row's length: the bias's where one is, else the last axis's */
    const int64_t columns = kinds[0] == 1   ? x.len / x.itemsize
                            : kinds[1] == 1 ? y.len / y.itemsize
                            : whole->ndim   ? whole->shape[whole->ndim - 1]
                                            : 1;
    const int64_t geometry[5] = {op, whole->len / whole->itemsize / columns, columns, kinds[0],
                                 kinds[1]};
    Py_BEGIN_ALLOW_THREADS
    if (format[0] == 'd')
        arithmetic_rows_f64(geometry, x.buf, y.buf, out.buf);
    else
        arithmetic_rows_f32(geometry, x.buf, y.buf, out.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&out);
    goto release;
fail:
    Py_CLEAR(result);
release:
    PyBuffer_Release(&x);
    PyBuffer_Release(&y);
    return result;
}

/* out's bytes as consecutive pieces, each copied from a source (`from`) or zeroed (NULL),
   on the threads from ELEMENTS_PARALLEL_MIN of out's `elements` (of `itemsize` bytes): each
   thread writes the elements a static loop over them gives it (as arithmetic_rows's flat
   loop cuts them), so that the elements a thread wrote in an eager step's last op are the
   ones it writes or reads in this one (runtime/thread_pool.c: owned shares). */
struct piece {
    const char *from;
    int64_t bytes;
};
static void fill_pieces(char *out, const struct piece *parts, int64_t count, int64_t elements,
                        int64_t itemsize)
{
#pragma omp parallel if (elements >= ELEMENTS_PARALLEL_MIN)
    {
        const int64_t team = THREAD_COUNT(), me = THREAD_NUMBER();
        const int64_t share = elements / team, longer = elements % team;
        const int64_t first = (me * share + (me < longer ? me : longer)) * itemsize;
        const int64_t last = first + (share + (me < longer)) * itemsize;
        int64_t at = 0;
        for (int64_t k = 0; k < count && at < last; k++) {
            const int64_t end = at + parts[k].bytes;
            const int64_t low = at > first ? at : first, high = end < last ? end : last;
            if (high > low) {
                if (parts[k].from)
                    memcpy(out + low, parts[k].from + (low - at), (size_t)(high - low));
                else
                    memset(out + low, 0, (size_t)(high - low));
            }
            at = end;
        }
    }
}

#define MOST_PIECES 64

/* pieces(out, parts) -> out: `parts`, a tuple of C-contiguous arrays (copied whole) and ints
   (that many bytes of zeros), written one after the other into the writeable C-contiguous
   array `out`, whose length in bytes they must make up (fill_pieces); None where this CPU
   cannot run the extension's kernels. An eager concat of many elements, and a slice's
   gradient, on the threads (codegen/array_math.py's `joined`). */
static PyObject *
pieces(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) > MOST_PIECES) {
        PyErr_Format(PyExc_TypeError, "pieces(out, parts): parts a tuple of at most %d",
                     MOST_PIECES);
        return NULL;
    }
    if (!runs_here()) Py_RETURN_NONE;
    Py_buffer out, views[MOST_PIECES];
    struct piece parts[MOST_PIECES];
    const Py_ssize_t count = PyTuple_GET_SIZE(args[1]);
    Py_ssize_t held = 0, bytes = 0;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(args[0], &out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return NULL;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *part = PyTuple_GET_ITEM(args[1], k);
        if (PyLong_Check(part)) {
            parts[k].from = NULL;
            parts[k].bytes = PyLong_AsSsize_t(part);
            if (parts[k].bytes < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "pieces: a count of zero bytes below 0");
                goto release;
            }
        } else {
            if (PyObject_GetBuffer(part, &views[held], PyBUF_C_CONTIGUOUS) < 0) goto release;
            parts[k].from = views[held].buf;
            parts[k].bytes = views[held++].len;
        }
        bytes += parts[k].bytes;
    }
    if (bytes != out.len) {
        PyErr_Format(PyExc_ValueError, "pieces: the parts make %zd bytes, out has %zd", bytes,
                     out.len);
        goto release;
    }
    Py_BEGIN_ALLOW_THREADS
    fill_pieces(out.buf, parts, count, out.len / out.itemsize, out.itemsize);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(args[0]);
release:
    while (held > 0) PyBuffer_Release(&views[--held]);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef methods[] = {
    {"table", table, METH_NOARGS,
     "The address of the kernels' table, or 0 where this CPU cannot run them as built."},
    {"arithmetic", (PyCFunction)(void (*)(void))arithmetic, METH_FASTCALL,
     "x op y of float arrays (whole, a bias, a column or one element) by arithmetic_rows; "
     "None for others."},
    {"pieces", (PyCFunction)(void (*)(void))pieces, METH_FASTCALL,
     "pieces(out, parts): arrays and counts of zero bytes, one after the other, into out."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_conv_kernels",
    "Convolution and pooling kernels for any geometry, built when tracer is installed "
    "(see conv_kernels.c).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__conv_kernels(void)
{
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (numpy == NULL) return NULL;
    numpy_empty = PyObject_GetAttrString(numpy, "empty");
    numpy_ndarray = PyObject_GetAttrString(numpy, "ndarray");
    PyObject *uint8 = PyObject_GetAttrString(numpy, "uint8");
    uint8_dtype = uint8 == NULL ? NULL : PyObject_CallMethod(numpy, "dtype", "O", uint8);
    Py_XDECREF(uint8);
    Py_DECREF(numpy);
    if (numpy_empty == NULL || numpy_ndarray == NULL || uint8_dtype == NULL) return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
    if (PyModule_AddIntConstant(module, "INTERFACE", INTERFACE) < 0 ||
        PyModule_AddIntConstant(module, "GEOMETRY", GEOMETRY) < 0 ||
        PyModule_AddIntConstant(module, "MOST_CHANNELS", MOST_CHANNELS) < 0 ||
        PyModule_AddIntConstant(module, "MOST_RANK", MOST_RANK) < 0 ||
        PyModule_AddIntConstant(module, "ELEMENTS_PARALLEL_MIN", ELEMENTS_PARALLEL_MIN) < 0 ||
        PyModule_AddStringConstant(module, "KERNELS", kernel_names) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
