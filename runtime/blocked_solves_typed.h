/* Triangular solves op(A) X = B of a batch of systems, for eager kernels and compiled modules
 * alike, for one type: T, NAME and the V_* vector of blocked_products_typed.h, included after
 * it (its register blocks compute the updates). codegen/blocked_products.py says which
 * solves come here.
 *
 * OpenBLAS's trsm spends most of a mid-sized solve (a Gaussian process's 512 x 512 triangle
 * against 512 right-hand sides) outside its GEMM kernel, even by halves of the triangle with
 * a GEMM between them (array_kernels_typed.h's `triangular_solves`). Here the triangle is cut
 * in halves down to SOLVE_ROWS rows, each half's right-hand sides updated from the other's
 * solution by the register blocks (the product subtracted from them, pass by pass of the
 * depth), and a triangle of at most SOLVE_ROWS rows solved row by row, SOLVE_VECTORS vectors
 * of columns at once: each row's sum of known terms by fused multiply-adds in the order of
 * the columns of op(A), then divided by the diagonal. Every column's solution reads that
 * column alone, computed alike whichever part holds it: no value depends on the threads.
 *
 * Geometry (int64): the count of systems, n, the right-hand sides k, whether A is the lower
 * triangle (else the upper), whether op transposes it, then b's steps in elements between
 * its systems, its rows and its columns (a transposed view is read as it is). a holds the
 * count's n x n matrices and out their n x k solutions, C-contiguous. */

#define SOLVE_ROWS 16        /* a triangle of at most these rows is solved row by row */
#define SOLVE_VECTORS 4      /* the vectors of columns a row's solve carries at once */
#define SOLVE_PART_COLUMNS 32 /* the fewest right-hand sides of a part the threads share */
#define COPY_COLUMNS 16      /* columns of b copied at once where they are strided */

/* op(A) X = X in place for a triangle of n <= SOLVE_ROWS rows: row by row, first row first
   where `forward` (op(A) lower triangular), else last first; op(A)[i][j] is
   a[i * a_rows + j * a_columns]. */
static void NAME(solve_rows)(int forward, int64_t n, int64_t width, const T *a, int64_t a_rows,
                             int64_t a_columns, T *x, int64_t ldx)
{
    for (int64_t c0 = 0; c0 < width; c0 += SOLVE_VECTORS * V_LANES) {
        V_MASK masks[SOLVE_VECTORS];
        for (int v = 0; v < SOLVE_VECTORS; v++)
            masks[v] = NAME(column_lanes)(width - c0 - v * V_LANES);
        for (int64_t s = 0; s < n; s++) {
            const int64_t i = forward ? s : n - 1 - s;
            const int64_t from = forward ? 0 : i + 1, to = forward ? i : n;
            T *row = x + i * ldx + c0;
            V_TYPE sums[SOLVE_VECTORS];
            for (int v = 0; v < SOLVE_VECTORS; v++)
                sums[v] = V_MASK_LOAD(masks[v], row + v * V_LANES);
            for (int64_t j = from; j < to; j++) {
                const V_TYPE factor = V_SET1(a[i * a_rows + j * a_columns]);
                const T *known = x + j * ldx + c0;
                for (int v = 0; v < SOLVE_VECTORS; v++)
                    sums[v] = V_FNMADD(factor, V_MASK_LOAD(masks[v], known + v * V_LANES), sums[v]);
            }
            const V_TYPE diagonal = V_SET1(a[i * a_rows + i * a_columns]);
            for (int v = 0; v < SOLVE_VECTORS; v++)
                V_MASK_STORE(row + v * V_LANES, masks[v], V_DIV(sums[v], diagonal));
        }
    }
}

/* op(A) X = X in place for an n x width block of right-hand sides (rows ldx apart): the half
   of the triangle op(A) solves first, the other half's rows less op(A)'s block beside it
   times that solution, then the other half. */
static void NAME(solve_part)(int forward, int64_t n, int64_t width, const T *a, int64_t a_rows,
                             int64_t a_columns, T *x, int64_t ldx)
{
    if (n <= SOLVE_ROWS) {
        NAME(solve_rows)(forward, n, width, a, a_rows, a_columns, x, ldx);
        return;
    }
    const int64_t h = n / 2;
    const T *second = a + h * (a_rows + a_columns);
    T *top = x, *bottom = x + h * ldx;
    if (forward) {
        NAME(solve_part)(forward, h, width, a, a_rows, a_columns, top, ldx);
        NAME(product_less)(0, n - h, ldx, h, a + h * a_rows, a_rows, a_columns, top, ldx, 1,
                           bottom, 0, width);
        NAME(solve_part)(forward, n - h, width, second, a_rows, a_columns, bottom, ldx);
    } else {
        NAME(solve_part)(forward, n - h, width, second, a_rows, a_columns, bottom, ldx);
        NAME(product_less)(0, h, ldx, n - h, a + h * a_columns, a_rows, a_columns, bottom, ldx,
                           1, top, 0, width);
        NAME(solve_part)(forward, h, width, a, a_rows, a_columns, top, ldx);
    }
}

/* Columns `first` to `last` of an n-row block read through its steps (elements between rows
   and between columns) into x (rows ldx apart, from its column `first`): rows copied where
   the columns are contiguous, else COPY_COLUMNS columns at a time down all the rows (a
   transposed block is read in that many streams, x written a row's few lines at a time). */
static void NAME(copy_columns)(int64_t n, int64_t first, int64_t last, const T *b, int64_t b_rows,
                               int64_t b_columns, T *x, int64_t ldx)
{
    if (b_columns == 1) {
        for (int64_t i = 0; i < n; i++)
            memcpy(x + i * ldx, b + i * b_rows + first, sizeof(T) * (last - first));
        return;
    }
    for (int64_t c0 = first; c0 < last; c0 += COPY_COLUMNS) {
        const int64_t c1 = last - c0 < COPY_COLUMNS ? last : c0 + COPY_COLUMNS;
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = c0; c < c1; c++)
                x[i * ldx + c - first] = b[i * b_rows + c * b_columns];
    }
}

/* The batch's systems, each system's right-hand sides cut into parts of at least
   SOLVE_PART_COLUMNS where there are fewer systems than the pool has threads (one part a
   thread: each part reads the whole triangle again); the parts handed out one at a time,
   each copying its columns of b into out and solving them there. */
static void NAME(blocked_solves)(const int64_t *g, const T *a, const T *b, T *out)
{
    const int64_t count = g[0], n = g[1], k = g[2];
    const int lower = (int)g[3], adjoint = (int)g[4];
    const int64_t b_matrices = g[5], b_rows = g[6], b_columns = g[7];
    const int forward = lower != adjoint;
    const int64_t a_rows = adjoint ? 1 : n, a_columns = adjoint ? n : 1;
    const int threaded = THREADS() > 1 && (double)count * n * n * k >= GEMM_PARALLEL_MIN;
    const int64_t most = k / SOLVE_PART_COLUMNS > 1 ? k / SOLVE_PART_COLUMNS : 1;
    const int64_t wanted = threaded ? (THREADS() + count - 1) / count : 1;
    const int64_t parts = wanted < most ? wanted : most;
#pragma omp parallel for schedule(dynamic, 1) if (threaded)
    for (int64_t item = 0; item < count * parts; item++) {
        const int64_t s = item / parts, part = item % parts;
        const int64_t first = part * k / parts, last = (part + 1) * k / parts;
        T *x = out + s * n * k + first;
        NAME(copy_columns)(n, first, last, b + s * b_matrices, b_rows, b_columns, x, k);
        NAME(solve_part)(forward, n, last - first, a + s * n * n, a_rows, a_columns, x, k);
    }
}
#undef SOLVE_ROWS
#undef SOLVE_VECTORS
#undef SOLVE_PART_COLUMNS
#undef COPY_COLUMNS
