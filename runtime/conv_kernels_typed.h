/* The kernels of runtime/conv_kernels.c for one type: T (float or double), NAME(x) adds the
 * type's suffix, MADD its multiply-add, ZEROS its padding, LANES its elements per block of
 * output channels, DEPTHWISE_LANES a depthwise convolution's. Included once per type. Each loop nest is its template's
 * (templates/patch_product.c.j2, templates/windows.c.j2, templates/depthwise.c.j2) with the
 * geometry read from g. */

/* ---- patch_product ------------------------------------------------------------------- */

/* A block of `rows` output positions by `count` output channels, summed in registers: the
 * template's product_block. Inlined into callers that pass constants, so that the compiler
 * unrolls and vectorizes it as it does the template's. */
static inline __attribute__((always_inline)) void
NAME(product_block)(const int64_t *g, const T *restrict x, const T *restrict w,
                    const T *restrict bias, const T *restrict gate, T *restrict out,
                    int64_t b, int64_t oh,
                    int64_t first_tap, int64_t last_tap, int64_t ow0, int64_t n0,
                    const int64_t rows, const int64_t count)
{
    const int64_t width = g[W], channels = g[C], kw = g[KW], m = g[M];
    T acc[PRODUCT_ROWS][LANES];
#pragma GCC unroll 16
    for (int64_t r = 0; r < rows; r++)
#pragma omp simd
        for (int64_t l = 0; l < count; l++) acc[r][l] = 0;
    for (int64_t i = first_tap; i < last_tap; i++) {
        const T *image_row = x + (b * g[H] + oh * g[SH] + i * g[DH] - g[BH]) * (width * channels);
        for (int64_t j = 0; j < kw; j++) {
            const T *at[PRODUCT_ROWS]; /* each position's pixel at tap (i, j), or padding */
            for (int64_t r = 0; r < rows; r++) {
                const int64_t column = (ow0 + r) * g[SW] + j * g[DW] - g[BW];
                at[r] = column >= 0 && column < width ? image_row + column * channels : ZEROS;
            }
            const T *wt = w + (i * kw + j) * (channels * m) + n0;
            for (int64_t c = 0; c < channels; c++) {
#pragma GCC unroll 16
                for (int64_t r = 0; r < rows; r++) {
                    const T s = at[r][c];
#pragma omp simd
                    for (int64_t l = 0; l < count; l++) acc[r][l] = MADD(s, wt[c * m + l], acc[r][l]);
                }
            }
        }
    }
    const int64_t o = (b * g[OH] + oh) * g[OW] + ow0;
#pragma GCC unroll 16
    for (int64_t r = 0; r < rows; r++) {
        T *to = out + (o + r) * m + n0;
        if (bias && g[ACTIVATION]) {
#pragma omp simd
            for (int64_t l = 0; l < count; l++) to[l] = NAME(relu)(acc[r][l] + bias[n0 + l]);
        } else if (bias) {
#pragma omp simd
            for (int64_t l = 0; l < count; l++) to[l] = acc[r][l] + bias[n0 + l];
        } else if (g[ACTIVATION]) {
#pragma omp simd
            for (int64_t l = 0; l < count; l++) to[l] = NAME(relu)(acc[r][l]);
        } else {
#pragma omp simd
            for (int64_t l = 0; l < count; l++) to[l] = acc[r][l];
        }
        if (gate) { /* relu_grad(gate, value): the value where the gate is positive, else 0 */
            const T *open = gate + (o + r) * m + n0;
#pragma omp simd
            for (int64_t l = 0; l < count; l++) to[l] = open[l] > 0 ? to[l] : (T)0;
        }
    }
}

#define PRODUCT_CASE(ROWS, COUNT)                                                              \
    NAME(product_block)(g, x, w, bias, gate, out, b, oh, first_tap, last_tap, ow0, n0, ROWS, COUNT)

/* The block sizes compiled: PRODUCT_ROWS positions or one, by the lanes LANE_CASES names. */
static void NAME(product_blocks)(const int64_t *g, const T *restrict x, const T *restrict w,
                                 const T *restrict bias, const T *restrict gate, T *restrict out,
                                 int64_t b, int64_t oh,
                                 int64_t first_tap, int64_t last_tap, int64_t ow0, int64_t n0,
                                 int64_t rows, int64_t count)
{
    if (rows == PRODUCT_ROWS) {
        LANE_CASES(PRODUCT_CASE, PRODUCT_ROWS);
        return;
    }
    for (int64_t r = 0; r < rows; r++, ow0++) LANE_CASES(PRODUCT_CASE, 1);
}

static void NAME(patch_product)(const int64_t *g, const T *restrict x, const T *restrict w,
                                const T *restrict bias, const T *restrict gate, T *restrict out)
{
    const int64_t m = g[M], out_w = g[OW], rows_all = g[N] * g[OH];
    const int64_t lanes = m < LANES ? m : LANES, blocks = (m + lanes - 1) / lanes;
    const int64_t block = out_w < PRODUCT_ROWS ? out_w : PRODUCT_ROWS;
    const int64_t work = m * g[KH] * g[KW] * g[C] * rows_all * out_w;
#pragma omp parallel for collapse(2) schedule(static) if (work >= PARALLEL_MIN)
    for (int64_t row = 0; row < rows_all; row++)
        for (int64_t nb = 0; nb < blocks; nb++) {
            const int64_t b = row / g[OH], oh = row % g[OH], n0 = nb * lanes;
            /* the taps i whose image row is inside the image */
            int64_t first_tap = 0, last_tap = g[KH];
            while (first_tap < last_tap && oh * g[SH] + first_tap * g[DH] - g[BH] < 0) first_tap++;
            while (last_tap > first_tap && oh * g[SH] + (last_tap - 1) * g[DH] - g[BH] >= g[H])
                last_tap--;
            const int64_t count = n0 + lanes <= m ? lanes : m % lanes;
            int64_t ow0 = 0;
            for (; ow0 + block <= out_w; ow0 += block)
                NAME(product_blocks)(g, x, w, bias, gate, out, b, oh, first_tap, last_tap, ow0, n0,
                                     block, count);
            if (out_w % block)
                NAME(product_blocks)(g, x, w, bias, gate, out, b, oh, first_tap, last_tap, ow0, n0,
                                     out_w % block, count);
        }
}

/* ---- patch_weights ------------------------------------------------------------------- */

/* `columns` patch columns from k0 by `count` output channels from n0, summed over the rows
 * first .. last - 1 of the images' output rows: the template's weights_block */
static inline __attribute__((always_inline)) void
NAME(weights_block)(const int64_t *g, const T *restrict x, const T *restrict gr, T *restrict to,
                    int64_t first, int64_t last, int64_t k0, int64_t n0, const int64_t columns,
                    const int64_t count)
{
    const int64_t width = g[W], channels = g[C], kw = g[KW], m = g[M], out_w = g[OW];
    int64_t off[WEIGHT_COLUMNS]; /* where column k0 + q reads, from a window's corner */
    for (int64_t q = 0; q < columns; q++) {
        const int64_t tap = (k0 + q) / channels, c = (k0 + q) % channels;
        off[q] = ((tap / kw) * g[DH] * width + (tap % kw) * g[DW]) * channels + c;
    }
    T acc[WEIGHT_COLUMNS][LANES];
#pragma GCC unroll 16
    for (int64_t q = 0; q < columns; q++)
#pragma omp simd
        for (int64_t l = 0; l < count; l++) acc[q][l] = 0;
    for (int64_t row = first; row < last; row++) {
        const int64_t b = row / g[OH], oh = row % g[OH];
        const T *image = x + (b * g[H] + oh * g[SH]) * (width * channels);
        const T *grow = gr + row * (out_w * m) + n0;
        for (int64_t ow = 0; ow < out_w; ow++) {
            const T *at = image + ow * (g[SW] * channels);
#pragma GCC unroll 16
            for (int64_t q = 0; q < columns; q++) {
                const T s = at[off[q]];
#pragma omp simd
                for (int64_t l = 0; l < count; l++) acc[q][l] = MADD(s, grow[ow * m + l], acc[q][l]);
            }
        }
    }
#pragma GCC unroll 16
    for (int64_t q = 0; q < columns; q++)
#pragma omp simd
        for (int64_t l = 0; l < count; l++) to[(k0 + q) * m + n0 + l] = acc[q][l];
}

#define WEIGHTS_CASE(COLUMNS, COUNT)                                                           \
    NAME(weights_block)(g, x, gr, to, first, last, k0, n0, COLUMNS, COUNT)

/* The block sizes compiled: WEIGHT_COLUMNS columns or one, by the lanes LANE_CASES names. */
static void NAME(weights_blocks)(const int64_t *g, const T *restrict x, const T *restrict gr,
                                 T *restrict to, int64_t first, int64_t last, int64_t k0,
                                 int64_t n0, int64_t columns, int64_t count)
{
    if (columns == WEIGHT_COLUMNS) {
        LANE_CASES(WEIGHTS_CASE, WEIGHT_COLUMNS);
        return;
    }
    for (int64_t q = 0; q < columns; q++, k0++) LANE_CASES(WEIGHTS_CASE, 1);
}

static void NAME(patch_weights)(const int64_t *g, const T *restrict x, const T *restrict gr,
                                T *restrict out)
{
    const int64_t m = g[M], chunks = g[CHUNKS], rows_all = g[N] * g[OH];
    const int64_t depth = g[KH] * g[KW] * g[C];
    const int64_t lanes = m < LANES ? m : LANES, blocks = (m + lanes - 1) / lanes;
    const int64_t block = depth < WEIGHT_COLUMNS ? depth : WEIGHT_COLUMNS;
    const int64_t work = m * depth * rows_all * g[OW];
#pragma omp parallel for collapse(3) schedule(static) if (work >= PARALLEL_MIN)
    for (int64_t chunk = 0; chunk < chunks; chunk++)
        for (int64_t kb = 0; kb < (depth + block - 1) / block; kb++)
            for (int64_t nb = 0; nb < blocks; nb++) {
                /* chunk: its run of the images' output rows, summed into its own partial */
                const int64_t first = chunk * rows_all / chunks;
                const int64_t last = (chunk + 1) * rows_all / chunks;
                const int64_t k0 = kb * block, n0 = nb * lanes;
                const int64_t count = n0 + lanes <= m ? lanes : m % lanes;
                const int64_t columns = k0 + block <= depth ? block : depth % block;
                NAME(weights_blocks)(g, x, gr, out + chunk * depth * m, first, last, k0, n0,
                                     columns, count);
            }
}

/* ---- depthwise convolutions (templates/depthwise.c.j2) ---------------------------------- */

/* `rows` positions from p0 by `count` channels from c0 of output row (b, h), summed in
 * registers, taps in row-major order: the template's block_sums. The product (`transposed`
 * 0) reads image x, padding as zeros; the input gradient (1) reads the cotangent at the
 * windows that read (b, h, p0 + r) alone (`unit`: its windows one column apart; `present`:
 * a window at every tap of a row reads each position, so none is tested). */
static inline __attribute__((always_inline)) void
NAME(depthwise_block)(const int64_t *g, const T *restrict x, const T *restrict w,
                      const T *restrict bias, const T *restrict gate_row, T *restrict out_row,
                      int64_t b, int64_t h, int64_t p0, int64_t c0,
                      const int64_t rows, const int64_t count, const int transposed,
                      const int unit, const int present)
{
    const int64_t channels = g[C], kw = g[KW], sw = unit ? 1 : g[SW];
    T acc[DEPTHWISE_POSITIONS][DEPTHWISE_LANES];
#pragma GCC unroll 16
    for (int64_t r = 0; r < rows; r++)
#pragma omp simd
        for (int64_t l = 0; l < count; l++) acc[r][l] = 0;
    for (int64_t i = 0; i < g[KH]; i++) {
        const T *row;
        int inside = 1;
        if (transposed) {
            /* the cotangent's row whose windows read this row at tap i, if any */
            const int64_t reach = h + g[BH] - i * g[DH];
            if (reach < 0 || reach % g[SH] != 0 || reach / g[SH] >= g[OH]) continue;
            row = x + (b * g[OH] + reach / g[SH]) * (g[OW] * channels);
        } else {
            const int64_t image_h = h * g[SH] + i * g[DH] - g[BH];
            inside = image_h >= 0 && image_h < g[H];
            row = inside ? x + (b * g[H] + image_h) * (g[W] * channels) : x;
        }
        for (int64_t j = 0; j < kw; j++) {
            const T *at[DEPTHWISE_POSITIONS];
#pragma GCC unroll 16
            for (int64_t r = 0; r < rows; r++) {
                if (present) {
                    at[r] = row + ((p0 + r) + g[BW] - j * g[DW]) * channels + c0;
                } else if (transposed) {
                    const int64_t column = (p0 + r) + g[BW] - j * g[DW];
                    at[r] = column >= 0 && column % sw == 0 && column / sw < g[OW]
                                ? row + column / sw * channels + c0
                                : NULL;
                } else {
                    const int64_t column = (p0 + r) * g[SW] + j * g[DW] - g[BW];
                    at[r] = inside && column >= 0 && column < g[W] ? row + column * channels + c0
                                                                   : ZEROS;
                }
            }
            const T *tap = w + (i * kw + j) * channels + c0;
#pragma GCC unroll 16
            for (int64_t r = 0; r < rows; r++) {
                if (transposed && !present && at[r] == NULL) continue;
#pragma omp simd
                for (int64_t l = 0; l < count; l++) acc[r][l] = MADD(at[r][l], tap[l], acc[r][l]);
            }
        }
    }
#pragma GCC unroll 16
    for (int64_t r = 0; r < rows; r++) {
        T *to = out_row + (p0 + r) * channels + c0;
#pragma omp simd
        for (int64_t l = 0; l < count; l++) to[l] = acc[r][l];
        /* the epilogue, on the values just stored: the bias, relu, the gate (relu_grad) */
        if (bias) {
#pragma omp simd
            for (int64_t l = 0; l < count; l++) to[l] = to[l] + bias[c0 + l];
        }
        if (g[ACTIVATION]) {
#pragma omp simd
            for (int64_t l = 0; l < count; l++) to[l] = NAME(relu)(to[l]);
        }
        if (gate_row) {
            const T *open = gate_row + (p0 + r) * channels + c0;
#pragma omp simd
            for (int64_t l = 0; l < count; l++) to[l] = open[l] > 0 ? to[l] : (T)0;
        }
    }
}

/* a block's arguments in depthwise_row */
#define DEPTHWISE_ARGS g, x, w, bias, gate_row, out_row, b, h
#define DEPTHWISE_CASE(ROWS, FIRST, COUNT)                                                     \
    do {                                                                                       \
        if (!transposed)                                                                       \
            NAME(depthwise_block)(DEPTHWISE_ARGS, FIRST, c0, ROWS, COUNT, 0, 0, 0);            \
        else if (g[SW] == 1 && FIRST >= (g[KW] - 1) * g[DW] - g[BW] &&                         \
                 FIRST + ROWS - 1 + g[BW] < g[OW])                                             \
            NAME(depthwise_block)(DEPTHWISE_ARGS, FIRST, c0, ROWS, COUNT, 1, 1, 1);            \
        else if (g[SW] == 1)                                                                   \
            NAME(depthwise_block)(DEPTHWISE_ARGS, FIRST, c0, ROWS, COUNT, 1, 1, 0);            \
        else                                                                                   \
            NAME(depthwise_block)(DEPTHWISE_ARGS, FIRST, c0, ROWS, COUNT, 1, 0, 0);            \
    } while (0)
#define DEPTHWISE_LANE_CASES(ROWS, FIRST)                                                      \
    do {                                                                                       \
        if (count == DEPTHWISE_LANES) DEPTHWISE_CASE(ROWS, FIRST, DEPTHWISE_LANES);            \
        else DEPTHWISE_CASE(ROWS, FIRST, count);                                               \
    } while (0)

/* Output row `row` (b, h) of the product or the input gradient, in blocks. */
static void NAME(depthwise_row)(const int64_t *g, const T *restrict x, const T *restrict w,
                                const T *restrict bias, const T *restrict gate, T *restrict out,
                                int64_t row, int transposed)
{
    const int64_t height = transposed ? g[H] : g[OH], width = transposed ? g[W] : g[OW];
    const int64_t channels = g[C], b = row / height, h = row % height;
    const int64_t lanes = channels < DEPTHWISE_LANES ? channels : DEPTHWISE_LANES;
    const int64_t block = width < DEPTHWISE_POSITIONS ? width : DEPTHWISE_POSITIONS;
    T *out_row = out + row * (width * channels);
    const T *gate_row = gate ? gate + row * (width * channels) : NULL;
    for (int64_t p0 = 0; p0 < width; p0 += block) {
        const int64_t rows = p0 + block <= width ? block : width - p0;
        for (int64_t c0 = 0; c0 < channels; c0 += lanes) {
            const int64_t count = c0 + lanes <= channels ? lanes : channels - c0;
            if (rows == DEPTHWISE_POSITIONS) DEPTHWISE_LANE_CASES(DEPTHWISE_POSITIONS, p0);
            else
                for (int64_t q = p0; q < p0 + rows; q++) DEPTHWISE_LANE_CASES(1, q);
        }
    }
}

/* depthwise_conv2d(x, w): out (N, OH, OW, C) from image x and taps w (KH, KW, C), plus the
 * bias (C) where there is one, through relu where g[ACTIVATION] is 1. */
static void NAME(depthwise_product)(const int64_t *g, const T *restrict x, const T *restrict w,
                                    const T *restrict bias, T *restrict out)
{
    const int64_t rows = g[N] * g[OH], work = g[N] * g[H] * g[W] * g[C] * g[KH] * g[KW];
#pragma omp parallel for schedule(static) if (work >= PARALLEL_MIN)
    for (int64_t row = 0; row < rows; row++) NAME(depthwise_row)(g, x, w, bias, NULL, out, row, 0);
}

/* depthwise_conv2d_backprop_input(gr, w): out (N, H, W, C) from the cotangent (N, OH, OW, C),
 * through relu_grad(gate, .) where a gate (N, H, W, C) is given. */
static void NAME(depthwise_input)(const int64_t *g, const T *restrict gr, const T *restrict w,
                                  const T *restrict gate, T *restrict out)
{
    const int64_t rows = g[N] * g[H], work = g[N] * g[H] * g[W] * g[C] * g[KH] * g[KW];
#pragma omp parallel for schedule(static) if (work >= PARALLEL_MIN)
    for (int64_t row = 0; row < rows; row++) NAME(depthwise_row)(g, gr, w, NULL, gate, out, row, 1);
}

/* One output row of channels c0 .. c0 + count - 1 of the filter gradient: each tap's products
 * summed over the row in registers, then added to the tap's totals (the template's
 * row_sums). */
static inline __attribute__((always_inline)) void
NAME(depthwise_filter_row)(const int64_t *g, const T *restrict x, const T *restrict gr,
                           T (*restrict total)[DEPTHWISE_LANES], int64_t row, int64_t c0,
                           const int64_t kh, const int64_t kw, const int64_t count)
{
    const int64_t channels = g[C], out_h = g[OH], out_w = g[OW];
    const int64_t b = row / out_h, oh = row % out_h;
    T acc[DEPTHWISE_TAPS][DEPTHWISE_LANES];
#pragma GCC unroll 16
    for (int64_t t = 0; t < kh * kw; t++)
#pragma omp simd
        for (int64_t l = 0; l < count; l++) acc[t][l] = 0;
    for (int64_t ow = 0; ow < out_w; ow++) {
        const T *gl = gr + (row * out_w + ow) * channels + c0;
#pragma GCC unroll 16
        for (int64_t i = 0; i < kh; i++) {
            const int64_t ih = oh * g[SH] + i * g[DH] - g[BH];
#pragma GCC unroll 16
            for (int64_t j = 0; j < kw; j++) {
                const int64_t iw = ow * g[SW] + j * g[DW] - g[BW];
                const T *xl = ih < 0 || ih >= g[H] || iw < 0 || iw >= g[W]
                                  ? ZEROS
                                  : x + ((b * g[H] + ih) * g[W] + iw) * channels + c0;
#pragma omp simd
                for (int64_t l = 0; l < count; l++)
                    acc[i * kw + j][l] = MADD(xl[l], gl[l], acc[i * kw + j][l]);
            }
        }
    }
#pragma GCC unroll 16
    for (int64_t t = 0; t < kh * kw; t++)
#pragma omp simd
        for (int64_t l = 0; l < count; l++) total[t][l] += acc[t][l];
}

/* depthwise_conv2d_backprop_filter(x, gr): out (KH, KW, C), each block of channels summing
 * over every window, rows in order, on its own (at most DEPTHWISE_TAPS taps:
 * codegen/conv_kernels.py). The blocks are cut into a group for each thread (the template's:
 * one group on one thread, more where their totals would pass DEPTHWISE_GROUP_MOST blocks),
 * and a group's blocks take each row in turn, the row read from memory once for them all. */
static void NAME(depthwise_filter)(const int64_t *g, const T *restrict x, const T *restrict gr,
                                   T *restrict out)
{
    const int64_t channels = g[C], kh = g[KH], kw = g[KW];
    const int64_t lanes = channels < DEPTHWISE_LANES ? channels : DEPTHWISE_LANES;
    const int64_t blocks = (channels + lanes - 1) / lanes;
    const int64_t work = g[N] * g[H] * g[W] * channels * kh * kw;
    const int64_t threads = THREADS() < blocks ? THREADS() : blocks;
    const int64_t fewest = (blocks + DEPTHWISE_GROUP_MOST - 1) / DEPTHWISE_GROUP_MOST;
    const int64_t groups = threads > fewest ? threads : fewest;
#pragma omp parallel for schedule(static) if (work >= PARALLEL_MIN)
    for (int64_t group = 0; group < groups; group++) {
        const int64_t first = group * blocks / groups, last = (group + 1) * blocks / groups;
        T total[DEPTHWISE_GROUP_MOST][DEPTHWISE_TAPS][DEPTHWISE_LANES];
        for (int64_t block = first; block < last; block++)
            for (int64_t t = 0; t < kh * kw; t++)
                for (int64_t l = 0; l < lanes; l++) total[block - first][t][l] = 0;
        for (int64_t row = 0; row < g[N] * g[OH]; row++)
            for (int64_t block = first; block < last; block++) {
                const int64_t c0 = block * lanes;
                const int64_t count = c0 + lanes <= channels ? lanes : channels - c0;
                if (kh == 3 && kw == 3 && count == DEPTHWISE_LANES)
                    NAME(depthwise_filter_row)(g, x, gr, total[block - first], row, c0, 3, 3,
                                               DEPTHWISE_LANES);
                else
                    NAME(depthwise_filter_row)(g, x, gr, total[block - first], row, c0, kh, kw,
                                               count);
            }
        for (int64_t block = first; block < last; block++) {
            const int64_t c0 = block * lanes;
            const int64_t count = c0 + lanes <= channels ? lanes : channels - c0;
            for (int64_t t = 0; t < kh * kw; t++)
                for (int64_t l = 0; l < count; l++)
                    out[t * channels + c0 + l] = total[block - first][t][l];
        }
    }
}

/* ---- window_max_gather (max pooling) and window_max_scatter ------------------------ */

/* first_max's choice: whether element e takes the place of the largest so far */
#define TAKES(e, best) ((e) > (best) || ((e) != (e) && (best) == (best)))

/* the offset in x of window (oh, ow)'s element at tap (i, j), or -1 where it is padding */
static inline int64_t NAME(tap)(const int64_t *g, int64_t b, int64_t oh, int64_t ow, int64_t i,
                                int64_t j)
{
    const int64_t h = oh * g[SH] + i * g[DH] - g[BH], w = ow * g[SW] + j * g[DW] - g[BW];
    return h < 0 || h >= g[H] || w < 0 || w >= g[W] ? -1 : ((b * g[H] + h) * g[W] + w) * g[C];
}

/* window (oh, ow)'s first largest element of each channel (the first NaN), into best[c], and
 * whether the window reads any element of x (else it is padding alone): first_max without
 * the offsets, which max pooling's values do not need (each a lane of int64 to select) */
static inline int NAME(largest)(const int64_t *g, const T *restrict x, int64_t b, int64_t oh,
                                int64_t ow, T *restrict best)
{
    const int64_t channels = g[C];
    int found = 0;
    for (int64_t i = 0; i < g[KH]; i++)
        for (int64_t j = 0; j < g[KW]; j++) {
            const int64_t base = NAME(tap)(g, b, oh, ow, i, j);
            if (base < 0) continue;
            const T *e = x + base;
            if (!found) {
                memcpy(best, e, channels * sizeof(T));
                found = 1;
                continue;
            }
#pragma omp simd
            for (int64_t c = 0; c < channels; c++) best[c] = TAKES(e[c], best[c]) ? e[c] : best[c];
        }
    return found;
}

/* window (oh, ow)'s first largest element of each channel (the first NaN): its offset in x,
 * into at[c], and its value, into best[c]; at[c] = -1 for a window of padding alone */
static inline void NAME(first_max)(const int64_t *g, const T *restrict x, int64_t b, int64_t oh,
                                   int64_t ow, int64_t *restrict at, T *restrict best)
{
    const int64_t channels = g[C];
    int found = 0;
    for (int64_t i = 0; i < g[KH]; i++)
        for (int64_t j = 0; j < g[KW]; j++) {
            const int64_t base = NAME(tap)(g, b, oh, ow, i, j);
            if (base < 0) continue;
            if (!found) {
                for (int64_t c = 0; c < channels; c++) {
                    best[c] = x[base + c];
                    at[c] = base + c;
                }
                found = 1;
                continue;
            }
#pragma omp simd
            for (int64_t c = 0; c < channels; c++) {
                const T e = x[base + c];
                const int take = TAKES(e, best[c]);
                best[c] = take ? e : best[c];
                at[c] = take ? base + c : at[c];
            }
        }
    if (!found)
        for (int64_t c = 0; c < channels; c++) at[c] = -1;
}

/* Whether the windows are 2 x 2, two apart, each inside x (no padding, no dilation): the
 * usual max pooling (an odd row or column of x is in no window), whose kernels below keep
 * each window's four elements in registers. */
static inline int NAME(pairs)(const int64_t *g)
{
    return g[KH] == 2 && g[KW] == 2 && g[SH] == 2 && g[SW] == 2 && g[DH] == 1 && g[DW] == 1 &&
           g[BH] == 0 && g[BW] == 0 && g[OH] > 0 && g[OH] * 2 <= g[H] && g[OW] * 2 <= g[W];
}

/* Row r of 2 x 2 windows two apart: each window's first largest element (the first NaN) */
static inline void NAME(pairs_pool_row)(const int64_t *g, const T *restrict x, T *restrict out,
                                        int64_t r)
{
    const int64_t channels = g[C], out_w = g[OW], row = g[W] * channels;
    const T *top = x + (r / g[OH] * g[H] + r % g[OH] * 2) * row;
    for (int64_t ow = 0; ow < out_w; ow++) {
        const T *a = top + ow * 2 * channels;
        T *to = out + (r * out_w + ow) * channels;
#pragma omp simd
        for (int64_t c = 0; c < channels; c++) {
            const T e1 = a[channels + c], e2 = a[row + c], e3 = a[row + channels + c];
            T best = a[c];
            best = TAKES(e1, best) ? e1 : best;
            best = TAKES(e2, best) ? e2 : best;
            to[c] = TAKES(e3, best) ? e3 : best;
        }
    }
}

/* Row r of the scatter of 2 x 2 windows two apart: each window's term where its first
 * largest element is, 0 at its other three, and 0 in x's odd column and the last window
 * row's odd row, which no window reads. Chosen by masks of the bits, not by selects: GCC
 * makes a select of a stored value a masked store behind a branch on the mask, which the
 * data decide (four a window, mispredicted about half the time). */
static inline void NAME(pairs_scatter_row)(const int64_t *g, const T *restrict x,
                                           const T *restrict gr, T *restrict out, int64_t r)
{
    const int64_t channels = g[C], out_w = g[OW], row = g[W] * channels;
    const int64_t oh = r % g[OH], first = (r / g[OH] * g[H] + oh * 2) * row;
    for (int64_t ow = 0; ow < out_w; ow++) {
        const int64_t at = first + ow * 2 * channels;
        const T *a = x + at, *from = gr + (r * out_w + ow) * channels;
        T *to = out + at;
#pragma omp simd
        for (int64_t c = 0; c < channels; c++) {
            const T e1 = a[channels + c], e2 = a[row + c], e3 = a[row + channels + c];
            T best = a[c];
            const BITS t1 = -(BITS)TAKES(e1, best);
            best = t1 ? e1 : best;
            const BITS t2 = -(BITS)TAKES(e2, best);
            best = t2 ? e2 : best;
            const BITS t3 = -(BITS)TAKES(e3, best);
            const T term = (T)0 + from[c]; /* 0 + g: never -0 */
            const BITS m0 = ~(t1 | t2 | t3), m1 = t1 & ~(t2 | t3), m2 = t2 & ~t3;
            BITS bits, kept;
            memcpy(&bits, &term, sizeof bits);
            kept = bits & m0;
            memcpy(to + c, &kept, sizeof kept);
            kept = bits & m1;
            memcpy(to + channels + c, &kept, sizeof kept);
            kept = bits & m2;
            memcpy(to + row + c, &kept, sizeof kept);
            kept = bits & t3;
            memcpy(to + row + channels + c, &kept, sizeof kept);
        }
    }
    const int64_t covered = out_w * 2 * channels; /* the elements of a row in windows */
    for (int64_t k = covered; k < row; k++) out[first + k] = out[first + row + k] = 0;
    if (oh == g[OH] - 1)
        for (int64_t h = oh * 2 + 2; h < g[H]; h++)
            for (int64_t k = 0; k < row; k++) out[first + (h - oh * 2) * row + k] = 0;
}

/* A 3 x 3 window inside the image (`a` its first element, `to` the gradient's there; taps
 * `down` and `right` elements apart): its taps in registers, the number of its first largest
 * in `t`, and each tap's element adds the term or, where it is not that one, +0, chosen by
 * masks of the bits as the template's (an element is never -0: adding +0 keeps its bits). */
static inline void NAME(scatter_inside_3x3)(const T *restrict a, T *restrict to,
                                            const T *restrict from, int64_t down, int64_t right,
                                            int64_t channels)
{
#pragma omp simd
    for (int64_t c = 0; c < channels; c++) {
        T best = a[c];
        BITS t = 0, term;
#define TAP(i, j)                                                                              \
    {                                                                                          \
        const T e = a[(i) * down + (j) * right + c];                                           \
        const int take = TAKES(e, best);                                                       \
        best = take ? e : best;                                                                \
        t = take ? (i) * 3 + (j) : t;                                                          \
    }
        TAP(0, 1) TAP(0, 2) TAP(1, 0) TAP(1, 1) TAP(1, 2) TAP(2, 0) TAP(2, 1) TAP(2, 2)
#undef TAP
        memcpy(&term, from + c, sizeof term);
#define ADD(i, j)                                                                              \
    {                                                                                          \
        const BITS kept = term & -(BITS)(t == (i) * 3 + (j));                                  \
        T added, *element = to + (i) * down + (j) * right + c;                                 \
        memcpy(&added, &kept, sizeof added);                                                   \
        *element = *element + added;                                                           \
    }
        ADD(0, 0) ADD(0, 1) ADD(0, 2) ADD(1, 0) ADD(1, 1) ADD(1, 2) ADD(2, 0) ADD(2, 1) ADD(2, 2)
#undef ADD
    }
}
#undef TAKES

static void NAME(window_max_pool)(const int64_t *g, const T *restrict x, T *restrict out)
{
    const int64_t channels = g[C], out_h = g[OH], out_w = g[OW];
    const int64_t work = g[N] * out_h * out_w * channels * g[KH] * g[KW];
    if (NAME(pairs)(g)) {
#pragma omp parallel for if (work >= PARALLEL_MIN)
        for (int64_t r = 0; r < g[N] * out_h; r++) NAME(pairs_pool_row)(g, x, out, r);
        return;
    }
#pragma omp parallel for if (work >= PARALLEL_MIN)
    for (int64_t r = 0; r < g[N] * out_h; r++) {
        const int64_t b = r / out_h, oh = r % out_h;
        for (int64_t ow = 0; ow < out_w; ow++) {
            T *to = out + (r * out_w + ow) * channels;
            if (!NAME(largest)(g, x, b, oh, ow, to)) memset(to, 0, channels * sizeof(T));
        }
    }
}

static void NAME(window_max_scatter)(const int64_t *g, const T *restrict x, const T *restrict gr,
                                     T *restrict out)
{
    const int64_t height = g[H], width = g[W], channels = g[C], out_h = g[OH], out_w = g[OW];
    const int64_t kh = g[KH], kw = g[KW], sh = g[SH], sw = g[SW], dh = g[DH], dw = g[DW];
    const int64_t bh = g[BH], bw = g[BW];
    const int64_t work = g[N] * height * width * channels * kh * kw;
    const int tiles = bh == 0 && bw == 0 && dh == 1 && dw == 1 && sh == kh && sw == kw &&
                      out_h * sh == height && out_w * sw == width;
    const int disjoint = sh >= (kh - 1) * dh + 1 && sw >= (kw - 1) * dw + 1;
    if (NAME(pairs)(g)) {
#pragma omp parallel for if (work >= PARALLEL_MIN)
        for (int64_t r = 0; r < g[N] * out_h; r++) NAME(pairs_scatter_row)(g, x, gr, out, r);
    } else if (tiles) { /* each window writes its elements, its largest its term, the others 0 */
#pragma omp parallel for if (work >= PARALLEL_MIN)
        for (int64_t r = 0; r < g[N] * out_h; r++) {
            const int64_t b = r / out_h, oh = r % out_h;
            int64_t at[MOST_CHANNELS];
            T best[MOST_CHANNELS];
            for (int64_t ow = 0; ow < out_w; ow++) {
                NAME(first_max)(g, x, b, oh, ow, at, best);
                const T *from = gr + (r * out_w + ow) * channels;
                for (int64_t i = 0; i < kh; i++)
                    for (int64_t j = 0; j < kw; j++) {
                        const int64_t base = ((b * height + oh * sh + i) * width + ow * sw + j) * channels;
                        for (int64_t c = 0; c < channels; c++)
                            out[base + c] = at[c] == base + c ? (T)((T)0 + from[c]) : (T)0;
                    }
            }
        }
    } else if (disjoint) { /* each element gets at most one term, written by its window */
#pragma omp parallel for if (work >= PARALLEL_MIN)
        for (int64_t r = 0; r < g[N] * height; r++)
            for (int64_t k = 0; k < width * channels; k++) out[r * width * channels + k] = 0;
#pragma omp parallel for if (work >= PARALLEL_MIN)
        for (int64_t r = 0; r < g[N] * out_h; r++) {
            const int64_t b = r / out_h, oh = r % out_h;
            int64_t at[MOST_CHANNELS];
            T best[MOST_CHANNELS];
            for (int64_t ow = 0; ow < out_w; ow++) {
                NAME(first_max)(g, x, b, oh, ow, at, best);
                const T *from = gr + (r * out_w + ow) * channels;
                for (int64_t c = 0; c < channels; c++)
                    if (at[c] >= 0) out[at[c]] = (T)((T)0 + from[c]); /* 0 + g: never -0 */
            }
        }
    } else { /* overlapping windows: an image's windows, from the last, add their terms to
              * their largest elements: each element's terms in the order of its taps, as
              * the numpy kernel adds them; one thread an image writes it alone */
#pragma omp parallel for if (work >= PARALLEL_MIN)
        for (int64_t b = 0; b < g[N]; b++) {
            int64_t at[MOST_CHANNELS];
            T best[MOST_CHANNELS];
            T *image = out + b * height * width * channels;
            for (int64_t k = 0; k < height * width * channels; k++) image[k] = 0;
            for (int64_t oh = out_h - 1; oh >= 0; oh--)
                for (int64_t ow = out_w - 1; ow >= 0; ow--) {
                    const T *from = gr + ((b * out_h + oh) * out_w + ow) * channels;
                    const int64_t top = oh * sh - bh, left = ow * sw - bw;
                    if (kh == 3 && kw == 3 && top >= 0 && left >= 0 && top + 2 * dh < height &&
                        left + 2 * dw < width) {
                        const int64_t first = ((b * height + top) * width + left) * channels;
                        NAME(scatter_inside_3x3)(x + first, out + first, from, dh * width * channels,
                                                 dw * channels, channels);
                        continue;
                    }
                    NAME(first_max)(g, x, b, oh, ow, at, best);
                    for (int64_t c = 0; c < channels; c++)
                        if (at[c] >= 0) out[at[c]] = (T)(out[at[c]] + from[c]);
                }
        }
    }
}
