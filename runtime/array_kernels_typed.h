/* The kernels of runtime/conv_kernels.c that a CNN's step needs around its convolutions, for
 * one type: T (float or double), NAME(x) adds the type's suffix. Included once per type.
 *
 * A module that calls the convolution kernels is built again with its own (codegen/
 * conv_kernels.py), so the rest of its first build is worth as little compiler time as the
 * convolutions' were. These three were most of that rest in a CNN's step: the zero padding
 * of a SAME convolution's gradient, relu's gradient, and a bias's gradient (a sum over the
 * leading axes). Each gives the bits of the module's own kernel: the first two compute
 * nothing but copies and selections, and the sums add each column's terms in the order of
 * the rows, in double, as codegen/loops.py's reductions over leading axes do. Beside them,
 * for the eager kernels: relu, a select, +, - and * by rows, Adam's update of a variable, the
 * BLAS's triangular solves of a batch in parts on the threads, and the BLAS's products in
 * parts on them.
 *
 * Geometries (int64): pad_zeros: rank r, then x's shape (r), the zeros before each axis (r)
 * and out's shape (r); select_positive: the element count; column_sums: rows, columns. */

/* out: x inside zeros, x's rows copied whole (the last axis is contiguous in both). */
static void NAME(pad_zeros)(const int64_t *g, const T *restrict x, T *restrict out)
{
    const int64_t rank = g[0];
    const int64_t *in = g + 1, *before = g + 1 + rank, *shape = g + 1 + 2 * rank;
    int64_t stride[MOST_RANK], total = 1, rows = 1, base = 0;
    for (int64_t k = rank - 1; k >= 0; k--) {
        stride[k] = total;
        base += before[k] * total;
        total *= shape[k];
    }
    for (int64_t k = 0; k + 1 < rank; k++) rows *= in[k];
    const int64_t row = in[rank - 1];
    memset(out, 0, (size_t)total * sizeof(T)); /* +0.0, all bits zero */
#pragma omp parallel for schedule(static) if (total >= ELEMENTS_PARALLEL_MIN)
    for (int64_t r = 0; r < rows; r++) {
        int64_t at = base, rest = r;
        for (int64_t k = rank - 2; k >= 0; k--) {
            at += rest % in[k] * stride[k];
            rest /= in[k];
        }
        memcpy(out + at, x + r * row, (size_t)row * sizeof(T));
    }
}

/* relu's gradient, select(x > 0, y, 0): x may be out (no restrict). Two loops, not one
   `parallel for simd ... if`: GCC leaves that one's loop without threads scalar, branching
   on each element (2-3 ns an element where the signs are random, 1 ns where they are not). */
static void NAME(select_positive)(const int64_t *g, const T *x, const T *y, T *out)
{
    const int64_t n = g[0];
    if (n >= ELEMENTS_PARALLEL_MIN) {
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; i++) out[i] = x[i] > 0 ? y[i] : (T)0;
    } else {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = x[i] > 0 ? y[i] : (T)0;
    }
}

/* relu as numpy's maximum(x, 0) gives it (and compiled modules do): x where x > 0 or NaN,
   else +0. Two loops, as select_positive's. */
static void NAME(relu_values)(const int64_t *g, const T *restrict x, T *restrict out)
{
    const int64_t n = g[0];
    if (n >= ELEMENTS_PARALLEL_MIN) {
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; i++) out[i] = NAME(relu)(x[i]);
    } else {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = NAME(relu)(x[i]);
    }
}

/* select(c, x, y) as numpy's where(c, x, y) gives it: x[i] where c[i] (a bool, one byte), else
   y[i], or y[0] where g[1] is 0 (a scalar); selections, so numpy's bits. Two loops each, as
   select_positive's. */
#define SELECT_LOOP(OTHER)                                                                     \
    do {                                                                                       \
        if (n >= ELEMENTS_PARALLEL_MIN) {                                                      \
            _Pragma("omp parallel for simd schedule(static)")                                  \
            for (int64_t i = 0; i < n; i++) out[i] = c[i] ? x[i] : (OTHER);                     \
        } else {                                                                               \
            _Pragma("omp simd")                                                                \
            for (int64_t i = 0; i < n; i++) out[i] = c[i] ? x[i] : (OTHER);                     \
        }                                                                                      \
    } while (0)
static void NAME(select_values)(const int64_t *g, const uint8_t *restrict c, const T *restrict x,
                                const T *restrict y, T *restrict out)
{
    const int64_t n = g[0];
    if (g[1]) {
        SELECT_LOOP(y[i]);
    } else {
        const T other = y[0];
        SELECT_LOOP(other);
    }
}
#undef SELECT_LOOP

/* out = x op y (op +, -, *, / by g[0]: 0, 1, 2, 3; 4: -x, y unread) for out of g[1] rows of
   g[2] columns, each of x and y by its kind (g[3], g[4]): 0 out's shape, 1 one row (a bias),
   2 one column, 3 one element; on the threads from ELEMENTS_PARALLEL_MIN elements: where
   neither operand is a row or a column, the elements as one flat range (an array of one long
   row, a 1-D gradient, is shared too), else its rows. IEEE's operations one by one, so numpy's
   bits. out may be x or y, of out's shape (the straight-line program writes a dead operand):
   no restrict on them, each element is read before it is written, and `omp simd` makes the
   loops vector loops without it. */
#define ARITHMETIC_ROW(A, B)                                                                   \
    do {                                                                                       \
        if (op == 0) {                                                                         \
            _Pragma("omp simd") for (int64_t c = 0; c < columns; c++) to[c] = (A) + (B);       \
        } else if (op == 1) {                                                                  \
            _Pragma("omp simd") for (int64_t c = 0; c < columns; c++) to[c] = (A) - (B);       \
        } else if (op == 2) {                                                                  \
            _Pragma("omp simd") for (int64_t c = 0; c < columns; c++) to[c] = (A) * (B);       \
        } else if (op == 3) {                                                                  \
            _Pragma("omp simd") for (int64_t c = 0; c < columns; c++) to[c] = (A) / (B);       \
        } else {                                                                               \
            _Pragma("omp simd") for (int64_t c = 0; c < columns; c++) to[c] = -(A);            \
        }                                                                                      \
    } while (0)
#define ARITHMETIC_FLAT(A, B)                                                                  \
    do {                                                                                       \
        if (op == 0) {                                                                         \
            FLAT_LOOP(out[i] = (A) + (B));                                                     \
        } else if (op == 1) {                                                                  \
            FLAT_LOOP(out[i] = (A) - (B));                                                     \
        } else if (op == 2) {                                                                  \
            FLAT_LOOP(out[i] = (A) * (B));                                                     \
        } else if (op == 3) {                                                                  \
            FLAT_LOOP(out[i] = (A) / (B));                                                     \
        } else {                                                                               \
            FLAT_LOOP(out[i] = -(A));                                                          \
        }                                                                                      \
    } while (0)
#define FLAT_LOOP(STATEMENT)                                                                   \
    _Pragma("omp parallel for simd schedule(static) if (n >= ELEMENTS_PARALLEL_MIN)")          \
    for (int64_t i = 0; i < n; i++) STATEMENT
static void NAME(arithmetic_rows)(const int64_t *g, const T *x, const T *y, T *out)
{
    const int op = (int)g[0];
    const int64_t rows = g[1], columns = g[2], x_kind = g[3], y_kind = g[4];
    if ((x_kind == 0 || x_kind == 3) && (y_kind == 0 || y_kind == 3)) {
        const int64_t n = rows * columns;
        if (x_kind == 3) {
            const T first = x[0];
            ARITHMETIC_FLAT(first, y[i]);
        } else if (y_kind == 3) {
            const T second = y[0];
            ARITHMETIC_FLAT(x[i], second);
        } else
            ARITHMETIC_FLAT(x[i], y[i]);
        return;
    }
#pragma omp parallel for schedule(static) if (rows * columns >= ELEMENTS_PARALLEL_MIN)
    for (int64_t r = 0; r < rows; r++) {
        /* this row's x and y: their own row, the one row, or one element */
        const T *a = x + (x_kind == 0 ? r * columns : x_kind == 2 ? r : 0);
        const T *b = y + (y_kind == 0 ? r * columns : y_kind == 2 ? r : 0);
        T *to = out + r * columns;
        if (x_kind >= 2) {
            const T first = a[0];
            ARITHMETIC_ROW(first, b[c]);
        } else if (y_kind >= 2) {
            const T second = b[0];
            ARITHMETIC_ROW(a[c], second);
        } else
            ARITHMETIC_ROW(a[c], b[c]);
    }
}
#undef ARITHMETIC_ROW
#undef ARITHMETIC_FLAT
#undef FLAT_LOOP

/* out[c] = the sum over r of x[r][c], in the order of r, in double; blocks of columns on the
   threads, of up to COLUMN_BLOCK columns, narrower where the threads would otherwise share
   fewer blocks than they are (a bias's gradient of 512 columns: one block). */
static void NAME(column_sums)(const int64_t *g, const T *restrict x, T *restrict out)
{
    const int64_t rows = g[0], columns = g[1];
    const int threaded = rows * columns >= ELEMENTS_PARALLEL_MIN && THREADS() > 1;
    int64_t width = COLUMN_BLOCK;
    if (threaded) {
        const int64_t share = (columns + THREADS() - 1) / THREADS();
        const int64_t whole = (share + COLUMN_STEP - 1) / COLUMN_STEP * COLUMN_STEP;
        width = whole < width ? whole : width;
    }
    const int64_t blocks = (columns + width - 1) / width;
#pragma omp parallel for schedule(static) if (threaded && blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const int64_t first = b * width;
        const int64_t count = columns - first < width ? columns - first : width;
        double acc[COLUMN_BLOCK];
        for (int64_t c = 0; c < count; c++) acc[c] = 0;
        for (int64_t r = 0; r < rows; r++) {
            const T *row = x + r * columns + first;
#pragma omp simd
            for (int64_t c = 0; c < count; c++) acc[c] += row[c];
        }
        for (int64_t c = 0; c < count; c++) out[first + c] = (T)acc[c];
    }
}

/* Adam's update of one variable (tracer/optimizers.py, eager), as numpy computes it one
   operation at a time, each rounded to T: m' = m b1 + g c1, v' = v b2 + (g g) c2,
   x' = x - (step m') / (sqrt(v') + eps), the scalars s = (b1, c1, b2, c2, step, eps) already
   in T; into new arrays (an eager assign gives a variable a new array). In blocks of
   ADAM_BLOCK elements: a block holding a subnormal moment or gradient
   (`NAME(subnormal_values)`) takes the whole step made without subnormals
   (`NAME(adam_on_grid)`, conv_kernels.c: the same bits, in slower double vectors); one
   holding a gradient so small that its square's scaling falls below the normal range
   (`NAME(tiny_gradients)`), the second moment so (`NAME(second_moment)`); the others
   numpy's operations. */
#define ADAM_BLOCK 256
#define ADAM_STEP(i, SECOND_MOMENT)                                                            \
    do {                                                                                       \
        const T first = m[i] * b1 + grad[i] * c1;                                              \
        const T second = SECOND_MOMENT(v[i], b2, grad[i], c2);                                 \
        m_out[i] = first;                                                                      \
        v_out[i] = second;                                                                     \
        x_out[i] = x[i] - step * first / (SQRT(second) + eps);                                 \
    } while (0)
#define PLAIN_SECOND_MOMENT(v, b2, g, c2) ((v) * (b2) + (g) * (g) * (c2))
static void NAME(adam_update)(const int64_t *g, const T *restrict x, const T *restrict m,
                              const T *restrict v, const T *restrict grad, const T *restrict s,
                              T *restrict m_out, T *restrict v_out, T *restrict x_out)
{
    const int64_t n = g[0];
    const T b1 = s[0], c1 = s[1], b2 = s[2], c2 = s[3], step = s[4], eps = s[5];
#pragma omp parallel for schedule(static) if (n >= ELEMENTS_PARALLEL_MIN)
    for (int64_t start = 0; start < n; start += ADAM_BLOCK) {
        const int64_t end = n - start < ADAM_BLOCK ? n : start + ADAM_BLOCK;
        if (NAME(subnormal_values)(m + start, v + start, grad + start, end - start)) {
#pragma omp simd
            for (int64_t i = start; i < end; i++)
                NAME(adam_on_grid)(x[i], m[i], v[i], grad[i], b1, c1, b2, c2, step, eps,
                                   m_out + i, v_out + i, x_out + i);
        } else if (NAME(tiny_gradients)(grad + start, end - start)) {
#pragma omp simd
            for (int64_t i = start; i < end; i++) ADAM_STEP(i, NAME(second_moment));
        } else {
#pragma omp simd
            for (int64_t i = start; i < end; i++) ADAM_STEP(i, PLAIN_SECOND_MOMENT);
        }
    }
}
#undef ADAM_STEP
#undef PLAIN_SECOND_MOMENT
#undef ADAM_BLOCK

/* op(A) X = B in place, for A's n x n triangle and an n x width block X: the triangle cut
   in halves of its rows down to SOLVE_BY_TRSM_ROWS, each half's right-hand sides updated by a
   GEMM with the block off the diagonal (op(A)'s, A's own or the transpose of the one across
   it): templates/solve_halves.c.j2's calls, so its bits. */
typedef void (*NAME(trsm_call))(int, int, int, int, int, int, int, T, const T *, int, T *, int);
typedef void (*NAME(trsv_call))(int, int, int, int, int, const T *, int, T *, int);
typedef void (*NAME(gemm_call))(int, int, int, int, int, int, T, const T *, int, const T *, int,
                                T, T *, int);
static void NAME(solve_halves)(NAME(trsm_call) trsm, NAME(gemm_call) gemm, int lower,
                               int adjoint, int n, int width, const T *a, int lda, T *x, int ldx)
{
    if (n <= SOLVE_BY_TRSM_ROWS) {
        trsm(101, 141, lower ? 122 : 121, adjoint ? 112 : 111, 131, n, width, (T)1, a, lda, x,
             ldx); /* CBLAS's enumerations */
        return;
    }
    const int h = n / 2, op = adjoint ? 112 : 111;
    const T *off = a + (lower ? (int64_t)h * lda : h), *second = a + (int64_t)h * lda + h;
    T *top = x, *bottom = x + (int64_t)h * ldx;
    if (lower != adjoint) {
        NAME(solve_halves)(trsm, gemm, lower, adjoint, h, width, a, lda, top, ldx);
        gemm(101, op, 111, n - h, width, h, (T)-1, off, lda, top, ldx, (T)1, bottom, ldx);
        NAME(solve_halves)(trsm, gemm, lower, adjoint, n - h, width, second, lda, bottom, ldx);
    } else {
        NAME(solve_halves)(trsm, gemm, lower, adjoint, n - h, width, second, lda, bottom, ldx);
        gemm(101, op, 111, h, width, n - h, (T)-1, off, lda, bottom, ldx, (T)1, top, ldx);
        NAME(solve_halves)(trsm, gemm, lower, adjoint, h, width, a, lda, top, ldx);
    }
}

/* BLAS's triangular solves of a batch of systems op(A) X = B, in place in x, as a compiled
   module makes them (templates/triangular_solve.c.j2): the right-hand sides in parts of whole
   blocks of 16 columns, two for each thread, which the threads take as they come free, each
   part solved by halves (`solve_halves`); a single right-hand side is trsv's (trsm packs the
   whole triangle for it, four times trsv's time). trsm, trsv and gemm for T by their addresses
   in f[0], f[1] and f[2] (the compiled modules' BLAS, which runs each call on the thread that
   makes it). g: the count of systems, n, the right-hand sides k, whether A is the lower
   triangle, whether op transposes it. */
static void NAME(triangular_solves)(const int64_t *g, const uintptr_t *f, const T *a, T *x)
{
    const int64_t count = g[0], n = g[1], k = g[2];
    const int lower = (int)g[3], adjoint = (int)g[4];
    const NAME(trsm_call) trsm = (NAME(trsm_call))f[0];
    const NAME(trsv_call) trsv = (NAME(trsv_call))f[1];
    const NAME(gemm_call) gemm = (NAME(gemm_call))f[2];
    if (k == 1) {
        for (int64_t b = 0; b < count; b++)
            trsv(101, lower ? 122 : 121, adjoint ? 112 : 111, 131, (int)n, a + b * n * n, (int)n,
                 x + b * n, 1);
        return;
    }
    const int threaded = THREADS() > 1 && (double)n * n * k >= GEMM_PARALLEL_MIN;
    const int64_t blocks = (k + 15) / 16, most = blocks / 4 > 1 ? blocks / 4 : 1;
    const int64_t wanted = threaded ? 2 * THREADS() : 1;
    const int64_t parts = wanted < most ? wanted : most;
    for (int64_t b = 0; b < count; b++) {
#pragma omp parallel for schedule(dynamic, 1) if (threaded && parts > 1)
        for (int64_t part = 0; part < parts; part++) {
            const int64_t first = part * blocks / parts * 16;
            const int64_t last = part + 1 == parts ? k : (part + 1) * blocks / parts * 16;
            NAME(solve_halves)(trsm, gemm, lower, adjoint, (int)n, (int)(last - first),
                               a + b * n * n, (int)n, x + b * n * k + first, (int)k);
        }
    }
}

/* One part of a product op(a) op(b), rows x columns of the output, through the BLAS: gemv
   where the whole product has one row (m) or one column (n), else gemm (templates/
   gemm_parts.c.j2 and matmul.c.j2, and codegen/row_products.py, make the same calls). gemm
   packs both operands first, several times gemv's time for such a product (docs/threads.md,
   rule 1). */
typedef void (*NAME(gemv_call))(int, int, int, int, T, const T *, int, const T *, int, T, T *,
                                int);
static void NAME(product_part)(NAME(gemm_call) gemm, NAME(gemv_call) gemv, int ta, int tb,
                               int64_t m, int64_t n, int64_t rows, int64_t columns, int64_t k,
                               const T *a, int64_t lda, const T *b, int64_t ldb, T *out,
                               int64_t ldc)
{
    if (m == 1) /* out's row: op(b)^T times a's one row (a column of lda apart where ta) */
        gemv(101, tb ? 111 : 112, (int)(tb ? columns : k), (int)(tb ? k : columns), (T)1, b,
             (int)ldb, a, ta ? (int)lda : 1, (T)0, out, 1);
    else if (n == 1) /* out's column: op(a) times b's one column */
        gemv(101, ta ? 112 : 111, (int)(ta ? k : rows), (int)(ta ? rows : k), (T)1, a, (int)lda,
             b, tb ? 1 : (int)ldb, (T)0, out, (int)ldc);
    else
        gemm(101, ta ? 112 : 111, tb ? 112 : 111, (int)rows, (int)columns, (int)k, (T)1, a,
             (int)lda, b, (int)ldb, (T)0, out, (int)ldc); /* CBLAS's enumerations */
}

/* Products op(a) op(b) through the BLAS, a batch of them, in parts on the threads, as a
   compiled module makes them (templates/matmul.c.j2 and gemm_parts.c.j2: the same parts, so
   the same bits), for the eager products that numpy would run on OpenBLAS's own threads or
   on one (codegen/array_blas.py). g: whether op transposes a, and b, m, n, k, lda, ldb, ldc,
   whether the parts are rows of the output (else columns), the count of products; gemm and
   gemv for T by their addresses in f[0] and f[1] (the compiled modules' BLAS, which runs
   each call on the thread that makes it; `product_part`); product p reads a from a_at[p]
   and b from b_at[p], and writes out's p-th m x n block. */
static void NAME(gemm_parts)(const int64_t *g, const uintptr_t *f, const int64_t *a_at,
                             const int64_t *b_at, const T *a, const T *b, T *out)
{
    const int ta = (int)g[0], tb = (int)g[1], split_rows = (int)g[8];
    const int64_t m = g[2], n = g[3], k = g[4], lda = g[5], ldb = g[6], ldc = g[7], gemms = g[9];
    const NAME(gemm_call) gemm = (NAME(gemm_call))f[0];
    const NAME(gemv_call) gemv = (NAME(gemv_call))f[1];
    const int64_t extent = split_rows ? m : n;
    const int64_t blocks = (extent + 15) / 16, most = blocks / 4 > 1 ? blocks / 4 : 1;
    const int threaded = THREADS() > 1 && (double)gemms * m * n * k >= GEMM_PARALLEL_MIN;
    const int64_t wanted = threaded ? (THREADS() + gemms - 1) / gemms : 1;
    const int64_t parts = wanted < most ? wanted : most;
#pragma omp parallel for collapse(2) schedule(dynamic, 1) if (threaded)
    for (int64_t p = 0; p < gemms; p++)
        for (int64_t part = 0; part < parts; part++) {
            const int64_t first = part * blocks / parts * 16;
            const int64_t last = part + 1 == parts ? extent : (part + 1) * blocks / parts * 16;
            const T *A = a + a_at[p], *B = b + b_at[p];
            T *C = out + p * m * n;
            if (split_rows)
                NAME(product_part)(gemm, gemv, ta, tb, m, n, last - first, n, k,
                                   A + first * (ta ? 1 : k), lda, B, ldb, C + first * n, ldc);
            else
                NAME(product_part)(gemm, gemv, ta, tb, m, n, m, last - first, k, A, lda,
                                   B + first * (tb ? k : 1), ldb, C + first, ldc);
        }
}
