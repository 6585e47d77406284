/* transpose_inplace_cpu.c - in-place transpose on the host: tile-pair swaps, super-elements, C2R. */
#define _POSIX_C_SOURCE 200809L

#include "cpu_internal.h"
#include "common/transpose_inplace_plan.h"

#include <stdio.h>
#include <string.h>

/*
 * The descriptor (src/common/internal.h, dt_copy2d.in_place): the stored source is m = cols
 * lines of n = rows elements at stride in.cs; the result is n lines of m elements at stride
 * out.rs, in the same storage.
 *
 * Square (m == n): the tiles (bi, bj) and (bj, bi) (64 x 64 elements, 32 x 32 of 8 bytes) swap
 * with each other, transposed, through two local buffers; a diagonal tile transposes within
 * itself. Each pair is one task, so tasks never share an element.
 *
 * Rectangular with a large c = gcd(m, n) and short bands: the super-element reduction to the
 * square case of src/common/transpose_inplace_plan.h (band permute, square transpose of
 * w-element super-elements, band permute), the same plan and index digits as the GPU kernels.
 *
 * Other rectangles: the decomposition of B. Catanzaro, A. Keller and M. Garland, "A Decomposition
 * for In-place Matrix Transposition", PPoPP 2014 (the C2R direction), written here from the
 * index algebra below. With c = gcd(m, n), a = m / c, b = n / c, the m x n row-major source A
 * becomes its n x m transpose through three permutations, each a gather within one column or
 * one row of the m x n grid:
 *   1. column rotate (only when c > 1): P(i, j) = A((i + j / b) mod m, j). Afterwards every
 *      row holds exactly one element bound for each of the n destination columns (the element
 *      A(i, j) lands at linear position j * m + i, column (j * m + i) mod n; j * m mod n runs
 *      over the multiples of c as j / b is fixed, and the rotation spreads the c residues).
 *   2. row shuffle: T(i, k) = P(i, j) for the j of row i bound for column k:
 *      q = (k - i) mod c, i0 = (i + q) mod m, s = ((k - i0) mod n) / c * a^-1 mod b, j = q b + s.
 *   3. column shuffle: D(r, k) = T(i, k) for the row i holding the element of linear position
 *      l = r n + k, which is A(l mod m, l / m): i = (l mod m - (l / m) / b) mod m.
 * D read as n x m row-major is A^T. Each phase copies a group of lines into scratch and gathers
 * them back, so scratch is CPU_IP_GROUP columns (or one row) per thread: O(max(m, n)) elements.
 */

enum {
    CPU_IP_GROUP = 16  /* columns gathered together: 16 x 4 bytes = one 64-byte cache line  */
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* x^-1 mod m for gcd(x, m) == 1 (extended Euclid); 0 when m == 1. */
static int64_t mod_inverse(int64_t x, int64_t m)
{
    if (m == 1) return 0;
    int64_t r0 = m, r1 = x % m, t0 = 0, t1 = 1;
    while (r1) {
        int64_t q = r0 / r1, r = r0 - q * r1, t = t0 - q * t1;
        r0 = r1;
        r1 = r;
        t0 = t1;
        t1 = t;
    }
    return t0 < 0 ? t0 + m : t0;
}

static int64_t mod64(int64_t x, int64_t m)
{
    int64_t r = x % m;
    return r < 0 ? r + m : r;
}

/* x * y mod m for 0 <= x, y < m: the product passes 2^63 once m does 2^31.5. */
static int64_t mulmod(int64_t x, int64_t y, int64_t m)
{
    if (m <= ((int64_t)1 << 31)) return x * y % m;
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 u128;
    return (int64_t)((u128)x * (u128)y % (u128)m);
#else
    int64_t r = 0; /* double and add */
    for (x %= m; y; y >>= 1, x = (x >= m - x) ? x - (m - x) : x + x)
        if (y & 1) r = (r >= m - x) ? r - (m - x) : r + x;
    return r;
#endif
}

/* ---- square ---------------------------------------------------------------------------------- */

/* Both tiles are copied into local buffers row by row, then written back row by row from the
 * other buffer read across: every line of the matrix is read once and written once, in order.
 * Swapping element pairs in place instead walks a tile column with a stride of ld, and a
 * power-of-two ld maps all those lines to one L1 set (2048 x 2048 floats ran 20x slower). */
#define SQUARE_PAIR(BITS, U, T)                                                                    \
    static void square_pair_##BITS(U *a, int64_t ld, int64_t n, int64_t bi, int64_t bj)           \
    {                                                                                              \
        U ta[T][T], tb[T][T];                                                                      \
        const int64_t i0 = bi * T, j0 = bj * T;                                                    \
        const int hi = (int)min64(T, n - i0), hj = (int)min64(T, n - j0);                          \
        for (int r = 0; r < hi; ++r) memcpy(ta[r], a + (i0 + r) * ld + j0, (size_t)hj * sizeof(U)); \
        if (bi != bj)                                                                              \
            for (int r = 0; r < hj; ++r)                                                           \
                memcpy(tb[r], a + (j0 + r) * ld + i0, (size_t)hi * sizeof(U));                     \
        U(*const src)[T] = bi == bj ? ta : tb; /* what lands on tile (bi, bj) */                   \
        for (int r = 0; r < hi; ++r) {                                                             \
            U *row = a + (i0 + r) * ld + j0;                                                       \
            for (int c = 0; c < hj; ++c) row[c] = src[c][r];                                       \
        }                                                                                          \
        if (bi != bj)                                                                              \
            for (int r = 0; r < hj; ++r) {                                                         \
                U *row = a + (j0 + r) * ld + i0;                                                   \
                for (int c = 0; c < hi; ++c) row[c] = ta[c][r];                                    \
            }                                                                                      \
    }

/* Tiles of 256-byte lines (64 elements up to 4 bytes, 32 of 8): each tile row spans four cache
 * lines of one page, and the two buffers (32 KB at most) stay in L1. */
SQUARE_PAIR(8, uint8_t, 64)
SQUARE_PAIR(16, uint16_t, 64)
SQUARE_PAIR(32, uint32_t, 64)
SQUARE_PAIR(64, uint64_t, 32)

static int64_t square_tile(size_t elem) { return elem == 8 ? 32 : 64; }

/* The square transpose of batch matrices n x n (row stride ld, batch stride bs, all in units
 * of elem bytes, elem 1, 2, 4 or 8) at base: one task per tile pair. */
static void square_run(char *base, size_t elem, int64_t n, int64_t ld, int64_t bs, int64_t batch)
{
    const int64_t nt = dt_ceil_div(n, square_tile(elem));
    const int64_t pairs = nt * (nt + 1) / 2, tasks = batch * pairs;
    const int thr = cpu_threads_for(batch * n * n);
    (void)thr;
    CPU_OMP("omp parallel for schedule(static) num_threads(thr) if(thr > 1)")
    for (int64_t x = 0; x < tasks; ++x) {
        const int64_t b = x / pairs;
        int64_t k = x % pairs, bi = 0;
        /* Pair k of the upper triangle, row by row: row bi holds nt - bi pairs. */
        while (k >= nt - bi) k -= nt - bi++;
        const int64_t bj = bi + k;
        char *mat = base + (size_t)(b * bs) * elem;
        switch (elem) {
        case 1: square_pair_8((uint8_t *)mat, ld, n, bi, bj); break;
        case 2: square_pair_16((uint16_t *)mat, ld, n, bi, bj); break;
        case 4: square_pair_32((uint32_t *)mat, ld, n, bi, bj); break;
        default: square_pair_64((uint64_t *)mat, ld, n, bi, bj); break;
        }
    }
}

static void square(const dt_copy2d *t)
{
    square_run((char *)t->out.base, t->elem, t->rows, t->out.rs, t->out.bs, t->batch);
}

/* ---- rectangular: Catanzaro, Keller, Garland (PPoPP 2014) ------------------------------------ */

typedef struct c2r {
    int64_t m, n, c, a, b, ainv;
} c2r;

/* Phase 1: the source row of P(i, j). */
static inline int64_t rotate_src(const c2r *p, int64_t i, int64_t j)
{
    return mod64(i + j / p->b, p->m);
}

/* Phase 2: the column of P that T(i, k) takes. */
static inline int64_t shuffle_row_src(const c2r *p, int64_t i, int64_t k)
{
    const int64_t q = mod64(k - i, p->c);
    const int64_t i0 = mod64(i + q, p->m);
    const int64_t s = mulmod(mod64(k - i0, p->n) / p->c, p->ainv, p->b);
    return q * p->b + s;
}

/* Phase 3: the row of T that D(r, k) takes. */
static inline int64_t shuffle_col_src(const c2r *p, int64_t r, int64_t k)
{
    const int64_t l = r * p->n + k;
    return mod64(l % p->m - l / p->m / p->b, p->m);
}

/* Gathers columns [j0, j1) of the m x n matrix x: x(i, j) = old x(src(i, j), j). The group is
 * copied out whole (scratch[i][j - j0], whole cache lines), then gathered back. */
#define PHASE_COLS(BITS, U)                                                                        \
    static void cols_##BITS(const c2r *p, U *x, U *scratch, int64_t j0, int64_t j1, int rotate)    \
    {                                                                                              \
        const int64_t g = j1 - j0;                                                                 \
        for (int64_t i = 0; i < p->m; ++i)                                                         \
            memcpy(scratch + i * g, x + i * p->n + j0, (size_t)g * sizeof(U));                     \
        for (int64_t i = 0; i < p->m; ++i)                                                         \
            for (int64_t j = j0; j < j1; ++j) {                                                    \
                const int64_t src = rotate ? rotate_src(p, i, j) : shuffle_col_src(p, i, j);       \
                x[i * p->n + j] = scratch[src * g + (j - j0)];                                     \
            }                                                                                      \
    }

/* Gathers row i: x(i, k) = old x(i, shuffle_row_src(i, k)). */
#define PHASE_ROW(BITS, U)                                                                         \
    static void row_##BITS(const c2r *p, U *x, U *scratch, int64_t i)                              \
    {                                                                                              \
        U *row = x + i * p->n;                                                                     \
        memcpy(scratch, row, (size_t)p->n * sizeof(U));                                            \
        for (int64_t k = 0; k < p->n; ++k) row[k] = scratch[shuffle_row_src(p, i, k)];             \
    }

PHASE_COLS(8, uint8_t)
PHASE_COLS(16, uint16_t)
PHASE_COLS(32, uint32_t)
PHASE_COLS(64, uint64_t)
PHASE_ROW(8, uint8_t)
PHASE_ROW(16, uint16_t)
PHASE_ROW(32, uint32_t)
PHASE_ROW(64, uint64_t)

static void run_cols(const c2r *p, size_t elem, void *x, void *scratch, int64_t j0, int64_t j1,
                     int rotate)
{
    switch (elem) {
    case 1: cols_8(p, (uint8_t *)x, (uint8_t *)scratch, j0, j1, rotate); break;
    case 2: cols_16(p, (uint16_t *)x, (uint16_t *)scratch, j0, j1, rotate); break;
    case 4: cols_32(p, (uint32_t *)x, (uint32_t *)scratch, j0, j1, rotate); break;
    default: cols_64(p, (uint64_t *)x, (uint64_t *)scratch, j0, j1, rotate); break;
    }
}

static void run_row(const c2r *p, size_t elem, void *x, void *scratch, int64_t i)
{
    switch (elem) {
    case 1: row_8(p, (uint8_t *)x, (uint8_t *)scratch, i); break;
    case 2: row_16(p, (uint16_t *)x, (uint16_t *)scratch, i); break;
    case 4: row_32(p, (uint32_t *)x, (uint32_t *)scratch, i); break;
    default: row_64(p, (uint64_t *)x, (uint64_t *)scratch, i); break;
    }
}

/* Scratch per thread, in elements: a column group of m or one row of n. */
static int64_t scratch_per_thread(int64_t m, int64_t n)
{
    return max64(CPU_IP_GROUP * m, n);
}

static void rectangular(const dt_copy2d *t, char *scratch, int threads)
{
    c2r p;
    p.m = t->cols;
    p.n = t->rows;
    p.c = gcd64(p.m, p.n);
    p.a = p.m / p.c;
    p.b = p.n / p.c;
    p.ainv = mod_inverse(p.a % p.b, p.b);
    const size_t per = (size_t)scratch_per_thread(p.m, p.n) * t->elem;
    const int64_t groups = dt_ceil_div(p.n, CPU_IP_GROUP);
    char *const base = (char *)t->out.base;
    const int64_t bs = t->out.bs;
    const size_t elem = t->elem;
    for (int phase = p.c > 1 ? 1 : 2; phase <= 3; ++phase) {
        const int64_t tasks = t->batch * (phase == 2 ? p.m : groups);
        CPU_OMP("omp parallel for schedule(static) num_threads(threads) if(threads > 1)")
        for (int64_t x = 0; x < tasks; ++x) {
            char *mine = scratch + (size_t)cpu_share_index(threads) * per;
            if (phase == 2) {
                const int64_t b = x / p.m;
                run_row(&p, elem, base + (size_t)(b * bs) * elem, mine, x % p.m);
            } else {
                const int64_t b = x / groups, j0 = x % groups * CPU_IP_GROUP;
                run_cols(&p, elem, base + (size_t)(b * bs) * elem, mine, j0,
                         min64(j0 + CPU_IP_GROUP, p.n), phase == 1);
            }
        }
    }
}

/* ---- rectangular: super-elements (src/common/transpose_inplace_plan.h) ----------------------- */

/* A band of the super-element path is moved whole through a thread's buffer, which should stay
 * in L2 (bands of the shapes that matter, 2 x 8192 floats, are 64 KB); the generic square step
 * swaps tile pairs of up to CPU_IP_PAIR_BYTES bytes each. */
enum { CPU_IP_BAND_BYTES = 256 << 10, CPU_IP_PAIR_BYTES = 32 << 10 };

/* One band of p->len elements at x: copied whole into buf, then written back permuted: the
 * destination digits d2, d1, d0 of the plan header (destination strides n1 n0, n0, 1) take
 * the element at d2 s2 + d1 s1 + d0 s0. The innermost loop runs over the longest digit: in
 * the 2 : 1 shapes that matter two of the three radices are 1 or 2, and a loop nest in digit
 * order would spend itself on loop overhead. */
typedef struct band_dim {
    int64_t n, d, s; /* extent, destination stride, source stride */
} band_dim;

static void band_loops(const dt_ip_band *p, band_dim *outer, band_dim *mid, band_dim *inner)
{
    band_dim dims[3];
    dims[0].n = p->n2, dims[0].d = p->n1 * p->n0, dims[0].s = p->s2;
    dims[1].n = p->n1, dims[1].d = p->n0, dims[1].s = p->s1;
    dims[2].n = p->n0, dims[2].d = 1, dims[2].s = p->s0;
    int in = 2;
    if (dims[1].n > dims[in].n) in = 1;
    if (dims[0].n > dims[in].n) in = 0;
    *inner = dims[in];
    *outer = dims[in == 0 ? 1 : 0];
    *mid = dims[in == 2 ? 1 : 2];
}

#define BAND_PERMUTE(BITS, U)                                                                      \
    static void band_##BITS(const dt_ip_band *p, U *x, U *buf)                                     \
    {                                                                                              \
        band_dim o, m, in;                                                                         \
        band_loops(p, &o, &m, &in);                                                                \
        memcpy(buf, x, (size_t)p->len * sizeof(U));                                                \
        for (int64_t i = 0; i < o.n; ++i)                                                          \
            for (int64_t j = 0; j < m.n; ++j) {                                                    \
                U *dst = x + i * o.d + j * m.d;                                                    \
                const U *src = buf + i * o.s + j * m.s;                                            \
                for (int64_t k = 0; k < in.n; ++k) dst[k * in.d] = src[k * in.s];                  \
            }                                                                                      \
    }

BAND_PERMUTE(8, uint8_t)
BAND_PERMUTE(16, uint16_t)
BAND_PERMUTE(32, uint32_t)
BAND_PERMUTE(64, uint64_t)

/* Steps 1 and 3: the c bands of every matrix, one task each. */
static void super_bands(const dt_copy2d *t, const dt_ip_super *sp, const dt_ip_band *p,
                        char *scratch, size_t per, int threads)
{
    const int64_t tasks = t->batch * sp->c;
    char *const base = (char *)t->out.base;
    const size_t elem = t->elem;
    CPU_OMP("omp parallel for schedule(static) num_threads(threads) if(threads > 1)")
    for (int64_t x = 0; x < tasks; ++x) {
        char *mine = scratch + (size_t)cpu_share_index(threads) * per;
        const int64_t b = x / sp->c, g = x % sp->c;
        char *band = base + (size_t)(b * t->out.bs + g * p->len) * elem;
        switch (elem) {
        case 1: band_8(p, (uint8_t *)band, (uint8_t *)mine); break;
        case 2: band_16(p, (uint16_t *)band, (uint16_t *)mine); break;
        case 4: band_32(p, (uint32_t *)band, (uint32_t *)mine); break;
        default: band_64(p, (uint64_t *)band, (uint64_t *)mine); break;
        }
    }
}

/* The tile edge of the generic square step for super-elements of sz bytes: the largest power of
 * two up to 32 whose tile fits CPU_IP_PAIR_BYTES (1 for super-elements that long alone). */
static int64_t super_tile(size_t sz)
{
    int64_t tile = 32;
    while (tile > 1 && (size_t)(tile * tile) * sz > (size_t)CPU_IP_PAIR_BYTES) tile /= 2;
    return tile;
}

/* The generic square step: tiles (bi, bj) and (bj, bi) of T x T super-elements of sz bytes in
 * the c x c matrix x swap through ta and tb (T T sz bytes each), each transposed. */
static void super_pair(char *x, int64_t c, size_t sz, int64_t tile, int64_t bi, int64_t bj,
                       char *ta, char *tb)
{
    const int64_t i0 = bi * tile, j0 = bj * tile;
    const int64_t hi = min64(tile, c - i0), hj = min64(tile, c - j0);
    const size_t row = (size_t)tile * sz;
    for (int64_t r = 0; r < hi; ++r)
        memcpy(ta + (size_t)r * row, x + (size_t)((i0 + r) * c + j0) * sz, (size_t)hj * sz);
    if (bi != bj)
        for (int64_t r = 0; r < hj; ++r)
            memcpy(tb + (size_t)r * row, x + (size_t)((j0 + r) * c + i0) * sz, (size_t)hi * sz);
    const char *src = bi == bj ? ta : tb; /* what lands on tile (bi, bj) */
    for (int64_t r = 0; r < hi; ++r)
        for (int64_t k = 0; k < hj; ++k)
            memcpy(x + (size_t)((i0 + r) * c + j0 + k) * sz, src + (size_t)k * row + (size_t)r * sz,
                   sz);
    if (bi != bj)
        for (int64_t r = 0; r < hj; ++r)
            for (int64_t k = 0; k < hi; ++k)
                memcpy(x + (size_t)((j0 + r) * c + i0 + k) * sz,
                       ta + (size_t)k * row + (size_t)r * sz, sz);
}

/* 1 when the super-elements of sz bytes move as whole 2-, 4- or 8-byte words: the square step
 * is then the square path's own tile-pair swap with those words as elements. */
static int super_words(const dt_copy2d *t, size_t sz)
{
    return (sz == 2 || sz == 4 || sz == 8) && (uintptr_t)t->out.base % sz == 0 &&
           (size_t)t->out.bs * t->elem % sz == 0;
}

/* Step 2: the c x c transpose of the super-elements of w elements. */
static void super_square(const dt_copy2d *t, const dt_ip_super *sp, char *scratch, size_t per,
                         int threads)
{
    const size_t sz = (size_t)sp->w * t->elem;
    if (super_words(t, sz)) {
        square_run((char *)t->out.base, sz, sp->c, sp->c, (int64_t)((size_t)t->out.bs * t->elem / sz),
                   t->batch);
        return;
    }
    const int64_t tile = super_tile(sz), nt = dt_ceil_div(sp->c, tile);
    const int64_t pairs = nt * (nt + 1) / 2, tasks = t->batch * pairs;
    char *const base = (char *)t->out.base;
    CPU_OMP("omp parallel for schedule(static) num_threads(threads) if(threads > 1)")
    for (int64_t x = 0; x < tasks; ++x) {
        char *mine = scratch + (size_t)cpu_share_index(threads) * per;
        const int64_t b = x / pairs;
        int64_t k = x % pairs, bi = 0;
        while (k >= nt - bi) k -= nt - bi++; /* as in square_run */
        super_pair(base + (size_t)(b * t->out.bs) * t->elem, sp->c, sz, tile, bi, bi + k, mine,
                   mine + (size_t)(tile * tile) * sz);
    }
}

/* Scratch per thread, in bytes: the longer band, and the generic square step's two tiles. */
static size_t super_scratch_per_thread(const dt_ip_super *sp, size_t elem)
{
    const size_t sz = (size_t)sp->w * elem, tile = (size_t)super_tile(sz);
    const size_t band = (size_t)max64(sp->a > 1 ? sp->to_blocks.len : 0,
                                      sp->b > 1 ? sp->to_lines.len : 0) * elem;
    const size_t pair = 2 * tile * tile * sz;
    return band > pair ? band : pair;
}

static void super_run(const dt_copy2d *t, const dt_ip_super *sp, char *scratch, size_t per,
                      int threads)
{
    if (sp->a > 1) super_bands(t, sp, &sp->to_blocks, scratch, per, threads);
    super_square(t, sp, scratch, per, threads);
    if (sp->b > 1) super_bands(t, sp, &sp->to_lines, scratch, per, threads);
}

duet_status cpu_transpose_inplace(dt_context *ctx, void *stream, const dt_copy2d *t,
                                  const dt_plan *plan, duet_launch_info *info)
{
    char name[64];
    if (t->rows == t->cols) {
        square(t);
        snprintf(name, sizeof name, "cpu_transpose_inplace_square_%zub", t->elem);
        dt_fill_info(info, name, plan, 1);
        return DUET_SUCCESS;
    }
    const int threads = cpu_threads_for(t->batch * t->rows * t->cols);
    dt_ip_super sp;
    if (dt_ip_super_plan(t->cols, t->rows, t->elem, CPU_IP_BAND_BYTES, &sp)) {
        const size_t per = super_scratch_per_thread(&sp, t->elem);
        const size_t sbytes = (size_t)threads * per;
        void *sscratch = NULL;
        duet_status sst =
            dt_workspace_reserve(ctx, stream, t->ws, sbytes, "duet_transpose", &sscratch);
        if (sst != DUET_SUCCESS) return sst;
        super_run(t, &sp, (char *)sscratch, per, threads);
        snprintf(name, sizeof name, "cpu_transpose_inplace_super%lld_%zub", (long long)sp.w,
                 t->elem);
        dt_fill_info(info, name, plan, 1);
        if (info) info->workspace_bytes = sbytes;
        return DUET_SUCCESS;
    }
    const size_t bytes =
        (size_t)threads * (size_t)scratch_per_thread(t->cols, t->rows) * t->elem;
    void *scratch = NULL;
    duet_status st =
        dt_workspace_reserve(ctx, stream, t->ws, bytes, "duet_transpose", &scratch);
    if (st != DUET_SUCCESS) return st;
    rectangular(t, (char *)scratch, threads);
    snprintf(name, sizeof name, "cpu_transpose_inplace_c2r_%zub", t->elem);
    dt_fill_info(info, name, plan, 1);
    if (info) info->workspace_bytes = bytes;
    return DUET_SUCCESS;
}
