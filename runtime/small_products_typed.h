/* Batches of small matrix products for the eager kernels, for one type: T (float or double),
 * NAME(x) adds the type's suffix, and the AVX-512 vector of T as V_* (runtime/conv_kernels.c
 * defines them where the CPU has AVX-512; without it there is no such kernel, and its slot
 * in the table is empty). Included once per type.
 *
 * An attention's products are batches of many small products (64 x 64 x 32 per head): the
 * BLAS spends longer on each call's set-up and packing than on its multiply-adds, and
 * numpy's product, which calls it once per matrix, copies an operand that is a strided view
 * (a head split off by a transpose) first. Here one call computes the whole batch: each
 * operand is read through its strides as it is (no copy), the right operand packed once per
 * product into rows of up to three vectors, and each block of up to 8 rows x 3 vectors of
 * the result held in registers while the depth runs. Each result element is the sum of its
 * terms in the order of the depth, by fused multiply-adds (in passes of SMALL_DEPTH terms, each
 * pass's sum added to the result), whichever block computes it: no value depends on the
 * threads.
 *
 * Geometry (int64): m, n, k, the batch's size, then a's and b's steps in elements between
 * the rows and between the columns of op(a) (m x k) and op(b) (k x n); `a_at` and `b_at`
 * are each matrix's first element's offset (int64, elements), and out is C-contiguous
 * (batch, m, n). */

#define SMALL_ROWS 8     /* rows of a register block */
#define SMALL_VECTORS 3  /* vectors of a register block's row, and of a packed row */
#define SMALL_DEPTH 256  /* the depth of a pass: a packed sliver stays in the L1 cache */

/* The mask of a vector's lanes that hold columns, where its first lane is `left` columns
   before a row's end: all lanes from a vector's width on, none at 0 or less. */
static inline V_MASK NAME(small_lanes)(int64_t left)
{
    return left >= V_LANES ? (V_MASK)-1 : left > 0 ? (V_MASK)((1u << left) - 1) : (V_MASK)0;
}

/* out[rows x width] (+ where `add`) = a[rows x depth] b[depth x width], b packed (rows
   `sliver` elements apart, `vectors` vectors of them read, the first `width` written). */
static inline __attribute__((always_inline)) void NAME(small_block)(
    const int rows, const int vectors, int64_t depth, const T *restrict a, int64_t a_rows,
    int64_t a_columns, const T *restrict b, int64_t sliver, T *restrict out, int64_t n,
    int64_t width, int add)
{
    V_TYPE sums[SMALL_ROWS][SMALL_VECTORS];
    for (int i = 0; i < rows; i++)
        for (int v = 0; v < vectors; v++) sums[i][v] = V_ZERO();
    for (int64_t p = 0; p < depth; p++) {
        V_TYPE row[SMALL_VECTORS];
        for (int v = 0; v < vectors; v++) row[v] = V_LOAD(b + v * V_LANES);
        for (int i = 0; i < rows; i++) {
            const V_TYPE factor = V_SET1(a[i * a_rows]);
            for (int v = 0; v < vectors; v++) sums[i][v] = V_FMA(factor, row[v], sums[i][v]);
        }
        a += a_columns;
        b += sliver;
    }
    for (int v = 0; v < vectors; v++) {
        const V_MASK mask = NAME(small_lanes)(width - v * V_LANES);
        for (int i = 0; i < rows; i++) {
            T *at = out + i * n + v * V_LANES;
            V_TYPE value = sums[i][v];
            if (add) value = V_ADD(value, V_MASK_LOAD(mask, at));
            V_MASK_STORE(at, mask, value);
        }
    }
}

#define SMALL_BLOCK(ROWS, VECTORS)                                                             \
    NAME(small_block)(ROWS, VECTORS, depth, a, a_rows, a_columns, b, sliver, out, n, width, add)
#define SMALL_ROWS_CASE(ROWS)                                                                  \
    case ROWS:                                                                                 \
        if (vectors == 3) SMALL_BLOCK(ROWS, 3);                                                \
        else if (vectors == 2) SMALL_BLOCK(ROWS, 2);                                           \
        else SMALL_BLOCK(ROWS, 1);                                                             \
        break;

/* A block of `rows` (1 to 8) rows and `vectors` (1 to 3) vectors, unrolled for both. */
static void NAME(small_any_block)(int rows, int vectors, int64_t depth, const T *a,
                                  int64_t a_rows, int64_t a_columns, const T *b,
                                  int64_t sliver, T *out, int64_t n, int64_t width, int add)
{
    switch (rows) {
        SMALL_ROWS_CASE(8)
        SMALL_ROWS_CASE(7)
        SMALL_ROWS_CASE(6)
        SMALL_ROWS_CASE(5)
        SMALL_ROWS_CASE(4)
        SMALL_ROWS_CASE(3)
        SMALL_ROWS_CASE(2)
        SMALL_ROWS_CASE(1)
    }
}
#undef SMALL_ROWS_CASE
#undef SMALL_BLOCK

/* b's first `depth` rows, in slivers of `span` columns (whole vectors, at most
   SMALL_VECTORS), each sliver's rows one after another, zeros past the last column: rows
   copied where b's columns are contiguous, else each vector's columns gathered (a column
   step that fits an int32 index a vector's times: codegen/array_blas.py refuses others). */
static void NAME(small_pack)(int64_t depth, int64_t n, int64_t span, const T *b,
                             int64_t b_rows, int64_t b_columns, T *restrict packed)
{
    const V_INDEX lanes = V_INDICES((int32_t)b_columns);
    for (int64_t j0 = 0; j0 < n; j0 += span, packed += depth * span) {
        const int64_t width = n - j0 < span ? n - j0 : span;
        for (int64_t p = 0; p < depth; p++)
            for (int64_t v = 0; v < span / V_LANES; v++) {
                const V_MASK mask = NAME(small_lanes)(width - v * V_LANES);
                const T *from = b + p * b_rows + (j0 + v * V_LANES) * b_columns;
                V_STORE(packed + p * span + v * V_LANES,
                        b_columns == 1 ? V_MASK_LOAD(mask, from) : V_GATHER(mask, lanes, from));
            }
    }
}

/* The columns of a packed sliver for n columns: whole vectors, at most SMALL_VECTORS, as
   many in each sliver (n = 64 is two of two vectors, not one of three and one of one, whose
   block would read a vector of b for each broadcast of a). */
static int64_t NAME(small_span)(int64_t n)
{
    const int64_t vectors = (n + V_LANES - 1) / V_LANES;
    const int64_t slivers = (vectors + SMALL_VECTORS - 1) / SMALL_VECTORS;
    return (vectors + slivers - 1) / slivers * V_LANES;
}

/* out (m x n, C-contiguous) = op(a) op(b), `packed` room for a pass of b. */
static void NAME(small_product)(int64_t m, int64_t n, int64_t k, const T *a, int64_t a_rows,
                                int64_t a_columns, const T *b, int64_t b_rows,
                                int64_t b_columns, T *out, T *packed)
{
    const int64_t span = NAME(small_span)(n);
    if (k == 0) memset(out, 0, sizeof(T) * m * n);  /* an empty sum */
    for (int64_t p0 = 0; p0 < k; p0 += SMALL_DEPTH) {
        const int64_t depth = k - p0 < SMALL_DEPTH ? k - p0 : SMALL_DEPTH;
        NAME(small_pack)(depth, n, span, b + p0 * b_rows, b_rows, b_columns, packed);
        for (int64_t i0 = 0; i0 < m; i0 += SMALL_ROWS) {
            const int rows = m - i0 < SMALL_ROWS ? (int)(m - i0) : SMALL_ROWS;
            for (int64_t j0 = 0; j0 < n; j0 += span) {
                const int64_t width = n - j0 < span ? n - j0 : span;
                NAME(small_any_block)(rows, (int)((width + V_LANES - 1) / V_LANES), depth,
                                      a + i0 * a_rows + p0 * a_columns, a_rows, a_columns,
                                      packed + j0 * depth, span, out + i0 * n + j0, n, width,
                                      p0 > 0);
            }
        }
    }
}

/* 0, or 1 where there was no memory to pack b in (out is then unfinished). */
static int NAME(small_products)(const int64_t *g, const T *a, const T *b, const int64_t *a_at,
                                const int64_t *b_at, T *out)
{
    const int64_t m = g[0], n = g[1], k = g[2], batch = g[3];
    const int64_t a_rows = g[4], a_columns = g[5], b_rows = g[6], b_columns = g[7];
    const int64_t span = NAME(small_span)(n);
    const int64_t room = (k < SMALL_DEPTH ? k : SMALL_DEPTH) * ((n + span - 1) / span) * span;
    const int threaded = THREADS() > 1 && batch > 1 && (double)batch * m * n * k >= GEMM_PARALLEL_MIN;
    int failed = 0;
#pragma omp parallel if (threaded) reduction(| : failed)
    {
        T *packed = malloc(sizeof(T) * (room > 0 ? room : 1));
        failed |= packed == NULL;
#pragma omp for schedule(dynamic, 1)
        for (int64_t s = 0; s < batch; s++)
            if (packed != NULL)
                NAME(small_product)(m, n, k, a + a_at[s], a_rows, a_columns, b + b_at[s],
                                    b_rows, b_columns, out + s * m * n, packed);
        free(packed);
    }
    return failed;
}
