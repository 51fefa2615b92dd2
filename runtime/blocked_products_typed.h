/* Matrix products and batches of them by register blocks, for eager kernels and compiled
 * modules alike, for one type: T (float or double), NAME(x) adds the type's suffix, and the
 * AVX-512 vector of T as V_* (runtime/conv_kernels.c defines them where the CPU has
 * AVX-512; without it there is no such kernel, and its slot in the table is empty).
 * Included once per type. codegen/blocked_products.py says which products come here.
 *
 * An attention's products are batches of many small products (64 x 64 x 32 per head): the
 * BLAS spends longer on each call's set-up and packing than on its multiply-adds, and
 * numpy's product, which calls it once per matrix, copies an operand that is a strided view
 * (a head split off by a transpose) first; and on the mid-sized products of a training step
 * (up to 2^27 multiply-adds) OpenBLAS's kernel ran slower than these blocks. One call
 * computes a whole batch: each operand is read through its strides as it is (no copy), the
 * right operand packed on the stack a sliver at a time (up to three vectors of columns by
 * up to PASS_DEPTH rows), and each block of up to 8 rows x 3 vectors of the result held in
 * registers while the depth runs. Each result element is the sum of its terms in the order
 * of the depth, by fused multiply-adds (in passes of PASS_DEPTH terms, each pass's sum added
 * to the result), whichever block or thread computes it: no value depends on the threads.
 *
 * Geometry (int64): m, n, k, then a's and b's steps in elements between the rows and between
 * the columns of op(a) (m x k) and op(b) (k x n), the multiply-adds in all from which the
 * pool's threads share the work, the batch's rank r and shape (r), and a's and b's steps
 * between the matrices along each batch axis (r each; 0 where the operand is broadcast
 * along it). out is C-contiguous (batch..., m, n). */

#define BLOCK_ROWS 8    /* rows of a register block */
#define BLOCK_VECTORS 3 /* vectors of a register block's row, and of a packed row */
#define PASS_DEPTH 256  /* the depth of a pass: a packed sliver stays in the L1 cache */
/* the steps of the depth ahead of a block's that a's line is fetched for, where a's columns
   are not contiguous (a transposed operand: its rows 4 KiB apart put each step's line on
   a page of its own, which the hardware does not fetch ahead) */
#define FETCH_AHEAD 8

/* The mask of a vector's lanes that hold columns, where its first lane is `left` columns
   before a row's end: all lanes from a vector's width on, none at 0 or less. */
static inline V_MASK NAME(column_lanes)(int64_t left)
{
    return left >= V_LANES ? (V_MASK)-1 : left > 0 ? (V_MASK)((1u << left) - 1) : (V_MASK)0;
}

/* out[rows x width] = a[rows x depth] b[depth x width], b packed (rows `sliver` elements
   apart, `vectors` vectors of them read, the first `width` written); where `add` is 1 the
   product is added to out, where it is -1 subtracted from it. */
static inline __attribute__((always_inline)) void NAME(register_block)(
    const int rows, const int vectors, int64_t depth, const T *restrict a, int64_t a_rows,
    int64_t a_columns, const T *restrict b, int64_t sliver, T *restrict out, int64_t n,
    int64_t width, int add)
{
    V_TYPE sums[BLOCK_ROWS][BLOCK_VECTORS];
    for (int i = 0; i < rows; i++)
        for (int v = 0; v < vectors; v++) sums[i][v] = V_ZERO();
    for (int64_t p = 0; p < depth; p++) {
        V_TYPE row[BLOCK_VECTORS];
        for (int v = 0; v < vectors; v++) row[v] = V_LOAD(b + v * V_LANES);
        if (a_columns != 1) /* a transposed: each step a new line, maybe a new page */
            __builtin_prefetch(a + FETCH_AHEAD * a_columns);
        for (int i = 0; i < rows; i++) {
            const V_TYPE factor = V_SET1(a[i * a_rows]);
            for (int v = 0; v < vectors; v++) sums[i][v] = V_FMA(factor, row[v], sums[i][v]);
        }
        a += a_columns;
        b += sliver;
    }
    for (int v = 0; v < vectors; v++) {
        const V_MASK mask = NAME(column_lanes)(width - v * V_LANES);
        for (int i = 0; i < rows; i++) {
            T *at = out + i * n + v * V_LANES;
            V_TYPE value = sums[i][v];
            if (add > 0) value = V_ADD(value, V_MASK_LOAD(mask, at));
            else if (add < 0) value = V_SUB(V_MASK_LOAD(mask, at), value);
            V_MASK_STORE(at, mask, value);
        }
    }
}

#define REGISTER_BLOCK(ROWS, VECTORS)                                                          \
    NAME(register_block)(ROWS, VECTORS, depth, a, a_rows, a_columns, b, sliver, out, n, width, \
                         add)
#define BLOCK_ROWS_CASE(ROWS)                                                                  \
    case ROWS:                                                                                 \
        if (vectors == 3) REGISTER_BLOCK(ROWS, 3);                                             \
        else if (vectors == 2) REGISTER_BLOCK(ROWS, 2);                                        \
        else REGISTER_BLOCK(ROWS, 1);                                                          \
        break;

/* A block of `rows` (1 to 8) rows and `vectors` (1 to 3) vectors, unrolled for both; inlined
   into its caller (called from two, it was not, and B2's product ran slower:
   benchmarks/RESULTS.md). */
static inline __attribute__((always_inline)) void NAME(any_register_block)(
    int rows, int vectors, int64_t depth, const T *a, int64_t a_rows, int64_t a_columns,
    const T *b, int64_t sliver, T *out, int64_t n, int64_t width, int add)
{
    switch (rows) {
        BLOCK_ROWS_CASE(8)
        BLOCK_ROWS_CASE(7)
        BLOCK_ROWS_CASE(6)
        BLOCK_ROWS_CASE(5)
        BLOCK_ROWS_CASE(4)
        BLOCK_ROWS_CASE(3)
        BLOCK_ROWS_CASE(2)
        BLOCK_ROWS_CASE(1)
    }
}
#undef BLOCK_ROWS_CASE
#undef REGISTER_BLOCK

/* A sliver of b: its first `depth` rows of its first `width` columns (at most `span`, whole
   vectors), each row `span` elements after the last, zeros past the last column: copied
   where b's columns are contiguous, else each vector's columns gathered (a column step
   that fits an int32 index a vector's times: codegen/blocked_products.py refuses others). */
static void NAME(pack_sliver)(int64_t depth, int64_t width, int64_t span, const T *b,
                              int64_t b_rows, int64_t b_columns, T *restrict packed)
{
    const V_INDEX lanes = V_INDICES((int32_t)b_columns);
    for (int64_t p = 0; p < depth; p++)
        for (int64_t v = 0; v < span / V_LANES; v++) {
            const V_MASK mask = NAME(column_lanes)(width - v * V_LANES);
            const T *from = b + p * b_rows + v * V_LANES * b_columns;
            V_STORE(packed + p * span + v * V_LANES,
                    b_columns == 1 ? V_MASK_LOAD(mask, from) : V_GATHER(mask, lanes, from));
        }
}

/* A run of columns is packed in the fewest slivers of at most BLOCK_VECTORS vectors whose
   counts differ by at most one: 64 columns are two slivers of two vectors, not one of three
   and one of one, whose block would read a vector of b for each broadcast of a; 256 are four
   of three and two of two. The slivers of `vectors` vectors: */
static inline int64_t NAME(slivers)(int64_t vectors)
{
    return (vectors + BLOCK_VECTORS - 1) / BLOCK_VECTORS;
}

/* The vectors of sliver `s` of `slivers`, for a run of `vectors`. */
static inline int64_t NAME(sliver_vectors)(int64_t s, int64_t vectors, int64_t slivers)
{
    return vectors / slivers + (s < vectors % slivers);
}

/* Rows `top` to `bottom` and columns `first` (a vector's multiple) to `last` of out (rows n
   elements apart) = op(a) op(b), or less it where `subtract` (each pass's sum subtracted in
   turn): for each pass of the depth and each sliver of b's columns (`sliver_vectors`), the
   sliver packed (on the stack: at most PASS_DEPTH x BLOCK_VECTORS vectors), then every block
   of rows against it. Inlined into `blocked_part` and `product_less`, so that each has its
   blocks' code for its own `subtract`. */
static inline __attribute__((always_inline)) void NAME(product_passes)(
    int64_t top, int64_t bottom, int64_t n, int64_t k, const T *a, int64_t a_rows,
    int64_t a_columns, const T *b, int64_t b_rows, int64_t b_columns, T *out, int64_t first,
    int64_t last, const int subtract)
{
    T packed[PASS_DEPTH * BLOCK_VECTORS * V_LANES] __attribute__((aligned(64)));
    const int64_t vectors = (last - first + V_LANES - 1) / V_LANES;
    const int64_t slivers = NAME(slivers)(vectors);
    if (k == 0 && !subtract) /* an empty sum */
        for (int64_t i = top; i < bottom; i++)
            memset(out + i * n + first, 0, sizeof(T) * (last - first));
    for (int64_t p0 = 0; p0 < k; p0 += PASS_DEPTH) {
        const int64_t depth = k - p0 < PASS_DEPTH ? k - p0 : PASS_DEPTH;
        int64_t j0 = first;
        for (int64_t s = 0; s < slivers; s++) {
            const int64_t sliver = NAME(sliver_vectors)(s, vectors, slivers);
            const int64_t span = sliver * V_LANES;
            const int64_t width = last - j0 < span ? last - j0 : span;
            NAME(pack_sliver)(depth, width, span, b + p0 * b_rows + j0 * b_columns, b_rows,
                              b_columns, packed);
            for (int64_t i0 = top; i0 < bottom; i0 += BLOCK_ROWS)
                NAME(any_register_block)(bottom - i0 < BLOCK_ROWS ? (int)(bottom - i0) : BLOCK_ROWS,
                                         (int)sliver, depth, a + i0 * a_rows + p0 * a_columns,
                                         a_rows, a_columns, packed, span, out + i0 * n + j0, n,
                                         width, subtract ? -1 : p0 > 0);
            j0 += span;
        }
    }
}

/* `product_passes` into out. */
static void NAME(blocked_part)(int64_t top, int64_t bottom, int64_t n, int64_t k, const T *a,
                               int64_t a_rows, int64_t a_columns, const T *b, int64_t b_rows,
                               int64_t b_columns, T *out, int64_t first, int64_t last)
{
    NAME(product_passes)(top, bottom, n, k, a, a_rows, a_columns, b, b_rows, b_columns, out,
                         first, last, 0);
}

/* `product_passes` subtracted from out (blocked_solves_typed.h's updates). */
static void NAME(product_less)(int64_t top, int64_t bottom, int64_t n, int64_t k, const T *a,
                               int64_t a_rows, int64_t a_columns, const T *b, int64_t b_rows,
                               int64_t b_columns, T *out, int64_t first, int64_t last)
{
    NAME(product_passes)(top, bottom, n, k, a, a_rows, a_columns, b, b_rows, b_columns, out,
                         first, last, 1);
}

/* The batch's products, each cut into parts where the batch has fewer products than the
   pool has threads: along its longer side, in whole blocks of rows or vectors of columns, as
   evenly as those go (a part packs the slivers it reads; cut by columns, only its own, cut
   into slivers of its own: 512 columns in two parts are 16 vectors each, where whole slivers
   of three vectors were 15 and 17); the parts handed out one at a time. */
static void NAME(blocked_products)(const int64_t *g, const T *a, const T *b, T *out)
{
    const int64_t m = g[0], n = g[1], k = g[2];
    const int64_t a_rows = g[3], a_columns = g[4], b_rows = g[5], b_columns = g[6];
    const int64_t threads_from = g[7], rank = g[8];
    const int64_t *shape = g + 9, *a_steps = g + 9 + rank, *b_steps = g + 9 + 2 * rank;
    int64_t batch = 1;
    for (int64_t d = 0; d < rank; d++) batch *= shape[d];
    const int threaded = THREADS() > 1 && (double)batch * m * n * k >= (double)threads_from;
    const int by_rows = m >= n;
    const int64_t unit = by_rows ? BLOCK_ROWS : V_LANES, extent = by_rows ? m : n;
    const int64_t units = (extent + unit - 1) / unit;
    const int64_t wanted = threaded ? (THREADS() + batch - 1) / batch : 1;
    const int64_t parts = wanted < units ? wanted : units;
#pragma omp parallel for schedule(dynamic, 1) if (threaded)
    for (int64_t item = 0; item < batch * parts; item++) {
        const int64_t s = item / parts, part = item % parts;
        int64_t rest = s, a_at = 0, b_at = 0;
        for (int64_t d = rank - 1; d >= 0; d--) {
            const int64_t index = rest % shape[d];
            rest /= shape[d];
            a_at += index * a_steps[d];
            b_at += index * b_steps[d];
        }
        const int64_t from = part * units / parts * unit;
        const int64_t to = part + 1 == parts ? extent : (part + 1) * units / parts * unit;
        NAME(blocked_part)(by_rows ? from : 0, by_rows ? to : m, n, k, a + a_at, a_rows,
                           a_columns, b + b_at, b_rows, b_columns, out + s * m * n,
                           by_rows ? 0 : from, by_rows ? n : to);
    }
}
