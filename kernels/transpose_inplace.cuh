/* transpose_inplace.cuh - in-place transpose kernels: square tile-pair swap, super-elements, C2R. */
#ifndef DUET_KERNELS_TRANSPOSE_INPLACE_CUH
#define DUET_KERNELS_TRANSPOSE_INPLACE_CUH

#include "kernel_util.cuh"

/*
 * The descriptor (dt_copy2d.in_place, src/common/internal.h): the stored source is m lines of
 * n elements (m = t->cols, n = t->rows), the result n lines of m, in the same storage.
 *
 * Square (m == n, any ld): one pass. A block owns the tile pair (bi, bj), bj >= bi: it loads
 * both T x T tiles into shared memory, and only after the barrier writes each one, transposed,
 * where the other was; a diagonal tile (bi == bj) is loaded whole and written back transposed.
 * No element is read by one block and written by another, so one launch needs no ordering. The
 * pairs are folded into an nt x (nt / 2 + 1) grid, so almost no block is idle.
 *
 * Rectangular (packed) with a large c = gcd(m, n) and bands that fit shared memory: the
 * super-element reduction to the square case, src/common/transpose_inplace_plan.h (the
 * derivation is there): a band permute (transpose_inplace_band_kernel), the square tile-pair
 * swap over super-elements of w elements (transpose_inplace_square_kernel when a super-element
 * is one 2-, 4- or 8-byte word, else transpose_inplace_super_square_kernel), a band permute.
 *
 * Other rectangles (packed): the decomposition of Catanzaro, Keller and Garland, "A Decomposition
 * for In-place Matrix Transposition" (PPoPP 2014), C2R direction; the index algebra is written
 * out in src/cpu/transpose_inplace_cpu.c. With c = gcd(m, n), a = m / c, b = n / c:
 *   1. column rotate (c > 1):  P(i, j) = A((i + j / b) mod m, j)
 *   2. row shuffle:            T(i, k) = P(i, q b + s), q = (k - i) mod c,
 *                              s = ((k - (i + q) mod m) mod n) / c * a^-1 mod b
 *   3. column shuffle:         D(r, k) = T((l mod m - (l / m) / b) mod m, k), l = r n + k
 * Each phase is a gather within columns or within rows. A block that can hold whole lines in
 * shared memory gathers them there (one launch per phase for the whole batch); longer lines go
 * through the stream's workspace, a group of lines at a time: a stage kernel copies the group
 * out, a gather kernel writes it back permuted (two launches per group, in stream order, no
 * host synchronisation).
 */

/* ---- index algebra -------------------------------------------------------------------------- */

/* The decomposition of one m x n matrix. I is the index type: uint32_t when m * n < 2^31
 * (a 32-bit division costs a fraction of a 64-bit one on GPUs, and the phases are mostly index
 * arithmetic), else int64_t. Every quantity below stays non-negative, so the modular
 * reductions are conditional subtractions wherever the operand is known to lie below 2m. */
template <typename I> struct ip_c2r {
    I m, n, c, b, ainv;
};

/* x * y mod m for 0 <= x, y < m without overflow (double and add past 2^31). */
template <typename I> DUET_INLINE I ip_mulmod(I x, I y, I m)
{
    if (m <= (I)65536) return (I)((uint32_t)x * (uint32_t)y % (uint32_t)m);
    if ((int64_t)m <= ((int64_t)1 << 31)) return (I)((uint64_t)x * (uint64_t)y % (uint64_t)m);
    I r = 0;
    for (; y; y >>= 1, x = x >= m - x ? x - (m - x) : x + x)
        if (y & 1) r = r >= m - x ? r - (m - x) : r + x;
    return r;
}

enum { IP_ROTATE = 0, IP_COL_SHUFFLE = 1 };

/* Column phases: the row of the old column j that row i takes. Rotate: (i + j / b) mod m with
 * j / b < c <= m. Shuffle: (l mod m - (l / m) / b) mod m, l = i n + j, with (l / m) / b < c. */
template <int OP, typename I> DUET_INLINE I ip_col_src(const ip_c2r<I> &p, I i, I j)
{
    if (OP == IP_ROTATE) {
        const I t = i + j / p.b;
        return t >= p.m ? t - p.m : t;
    }
    const I l = i * p.n + j, lq = l / p.m, lr = l - lq * p.m, s = lq / p.b;
    return lr >= s ? lr - s : lr + p.m - s;
}

/* Row phase: the column of old row i that column k takes: q b + s with q = (k - i) mod c,
 * i0 = (i + q) mod m, s = ((k - i0) mod n) / c * a^-1 mod b. */
template <typename I> DUET_INLINE I ip_row_src(const ip_c2r<I> &p, I i, I k)
{
    const I kc = k % p.c, ic = i % p.c;
    const I q = kc >= ic ? kc - ic : kc + p.c - ic;
    I i0 = i + q;
    if (i0 >= p.m) i0 -= p.m;
    const I i0n = i0 % p.n;
    const I d = k >= i0n ? k - i0n : k + p.n - i0n;
    return q * p.b + ip_mulmod<I>(d / p.c, p.ainv, p.b);
}

/* ---- square: tile-pair swap ----------------------------------------------------------------- */

enum { IP_SQ_X = 32, IP_SQ_Y = 8, IP_THREADS = 256 };

/* The tile pairs bi <= bj of an nt x nt tiling, for the square kernels and the super-element
 * one. The nt (nt + 1) / 2 pairs are folded into an nt x h rectangle, h = nt / 2 + 1, which the
 * grid's x and y walk (the host's grid is nt x h, or less and strided): cell (y, x) is the pair
 * (y, x) on and above the diagonal, and below it the pair (nt - y, nt - 1 - x), whose rows
 * nt - y >= h the rectangle's upper part does not reach (for even nt one row of blocks falls
 * on rows it does reach and steps on: false, skip the cell). */
DUET_INLINE bool ip_square_pair(int64_t nt, int64_t h, int64_t y, int64_t x, int64_t &bi,
                                int64_t &bj)
{
    bi = y, bj = x;
    if (x < y) {
        bi = nt - y;
        bj = nt - 1 - x;
        if (bi < h) return false;
    }
    return true;
}

/*
 * The element-wise halves of a pair's swap. Element (r, c) of each tile: s1 is the tile at
 * rows i0, columns j0 of x, s2 the one at rows j0, columns i0 (none for a diagonal pair, diag).
 * `full` (j0 + T <= n with j0 >= i0: the pair lies inside the matrix) drops the bounds tests.
 */
template <int T, typename U>
DUET_INLINE void ip_tile_load_at(U (&s1)[T][T + 1], U (&s2)[T][T + 1], const U *x, int64_t n,
                                 int64_t ld, int64_t i0, int64_t j0, bool diag, bool full, int r,
                                 int c)
{
    if (full || (i0 + r < n && j0 + c < n)) s1[r][c] = x[(i0 + r) * ld + j0 + c];
    if (!diag && (full || (j0 + r < n && i0 + c < n))) s2[r][c] = x[(j0 + r) * ld + i0 + c];
}

/* After the barrier: each tile written transposed where the other was (a diagonal tile where it
 * was). */
template <int T, typename U>
DUET_INLINE void ip_tile_store_at(const U (&s1)[T][T + 1], const U (&s2)[T][T + 1], U *x, int64_t n,
                                  int64_t ld, int64_t i0, int64_t j0, bool diag, bool full, int r,
                                  int c)
{
    if (full || (i0 + r < n && j0 + c < n)) x[(i0 + r) * ld + j0 + c] = diag ? s1[c][r] : s2[c][r];
    if (!diag && (full || (j0 + r < n && i0 + c < n))) x[(j0 + r) * ld + i0 + c] = s1[c][r];
}

/* Thread (tx, ty) of a 32 x 8 block takes the elements (rr + ty, cc + tx) of each tile. UNROLL:
 * the loops unrolled whole, as the tile and vec kernels take them for every pair. The step
 * kernel takes them for edge pairs only and leaves them to nvcc's own unrolling, as it always
 * did: unrolled whole they make it half as long again (4-byte 64-edge tiles, sm_90). */
template <int T, bool UNROLL, typename F>
DUET_INLINE void ip_tiles_walk(int tx, int ty, F &&at)
{
    if constexpr (UNROLL) {
#pragma unroll
        for (int rr = 0; rr < T; rr += IP_SQ_Y)
#pragma unroll
            for (int cc = 0; cc < T; cc += IP_SQ_X) at(rr + ty, cc + tx);
    } else {
        for (int rr = 0; rr < T; rr += IP_SQ_Y)
            for (int cc = 0; cc < T; cc += IP_SQ_X) at(rr + ty, cc + tx);
    }
}

template <int T, bool UNROLL, typename U>
DUET_INLINE void ip_tiles_load(U (&s1)[T][T + 1], U (&s2)[T][T + 1], const U *x, int64_t n,
                               int64_t ld, int64_t i0, int64_t j0, bool diag, bool full, int tx,
                               int ty)
{
    ip_tiles_walk<T, UNROLL>(tx, ty, [&](int r, int c) {
        ip_tile_load_at<T>(s1, s2, x, n, ld, i0, j0, diag, full, r, c);
    });
}

template <int T, bool UNROLL, typename U>
DUET_INLINE void ip_tiles_store(const U (&s1)[T][T + 1], const U (&s2)[T][T + 1], U *x, int64_t n,
                                int64_t ld, int64_t i0, int64_t j0, bool diag, bool full, int tx,
                                int ty)
{
    ip_tiles_walk<T, UNROLL>(tx, ty, [&](int r, int c) {
        ip_tile_store_at<T>(s1, s2, x, n, ld, i0, j0, diag, full, r, c);
    });
}

template <typename U, int T>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_SQ_X *IP_SQ_Y, (T > 32 ? 3 : 4))
    transpose_inplace_square_kernel(U *a, int64_t n, int64_t ld, int64_t bs, int64_t batch)
{
    static_assert(T % IP_SQ_X == 0 && T % IP_SQ_Y == 0, "the tile is whole warps by rows");
    __shared__ U s1[T][T + 1]; /* tile (bi, bj); the +1 column: conflict-free column reads */
    __shared__ U s2[T][T + 1]; /* tile (bj, bi) */
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t nt = (n + T - 1) / T, h = nt / 2 + 1;
    for (int64_t bz = blockIdx.z; bz < batch; bz += gridDim.z) {
        U *x = a + bz * bs;
        for (int64_t by = blockIdx.y; by < h; by += gridDim.y) {
            for (int64_t bx = blockIdx.x; bx < nt; bx += gridDim.x) {
                int64_t bi, bj;
                if (!ip_square_pair(nt, h, by, bx, bi, bj)) continue;
                const int64_t i0 = bi * T, j0 = bj * T;
                const bool diag = bi == bj, full = j0 + T <= n; /* j0 >= i0 */
                ip_tiles_load<T, true>(s1, s2, x, n, ld, i0, j0, diag, full, tx, ty);
                /* Both tiles are in shared memory before either is overwritten. */
                duet_barrier();
                ip_tiles_store<T, true>(s1, s2, x, n, ld, i0, j0, diag, full, tx, ty);
                /* The next pair reuses the tiles. */
                duet_barrier();
            }
        }
    }
}

/* transpose_inplace_square_kernel with each thread's two addresses formed once per pair and
 * stepped by IP_SQ_Y rows (a loop-invariant stride), so a full pair's loads and stores carry
 * no 64-bit multiply and no bounds test each; edge pairs take the bounded loops. The same
 * pairs, tiles and barriers. Chosen by the tuning row's square_kernel "step" (name ends in
 * "s"). */
template <typename U, int T, int MINB>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_SQ_X *IP_SQ_Y, MINB)
    transpose_inplace_square_step_kernel(U *a, int64_t n, int64_t ld, int64_t bs, int64_t batch)
{
    __shared__ U s1[T][T + 1];
    __shared__ U s2[T][T + 1];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t nt = (n + T - 1) / T, h = nt / 2 + 1, step = (int64_t)IP_SQ_Y * ld;
    for (int64_t bz = blockIdx.z; bz < batch; bz += gridDim.z) {
        U *x = a + bz * bs;
        for (int64_t by = blockIdx.y; by < h; by += gridDim.y) {
            for (int64_t bx = blockIdx.x; bx < nt; bx += gridDim.x) {
                int64_t bi, bj;
                if (!ip_square_pair(nt, h, by, bx, bi, bj)) continue;
                const int64_t i0 = bi * T, j0 = bj * T;
                const bool diag = bi == bj, full = j0 + T <= n;
                if (full) {
                    U *p1 = x + (i0 + ty) * ld + j0 + tx, *p2 = x + (j0 + ty) * ld + i0 + tx;
                    {
                        const U *q1 = p1, *q2 = p2;
#pragma unroll
                        for (int rr = 0; rr < T; rr += IP_SQ_Y, q1 += step, q2 += step)
#pragma unroll
                            for (int cc = 0; cc < T; cc += IP_SQ_X) {
                                s1[rr + ty][cc + tx] = q1[cc];
                                if (!diag) s2[rr + ty][cc + tx] = q2[cc];
                            }
                    }
                    duet_barrier();
#pragma unroll
                    for (int rr = 0; rr < T; rr += IP_SQ_Y, p1 += step, p2 += step)
#pragma unroll
                        for (int cc = 0; cc < T; cc += IP_SQ_X) {
                            p1[cc] = diag ? s1[cc + tx][rr + ty] : s2[cc + tx][rr + ty];
                            if (!diag) p2[cc] = s1[cc + tx][rr + ty];
                        }
                } else {
                    ip_tiles_load<T, false>(s1, s2, x, n, ld, i0, j0, diag, false, tx, ty);
                    duet_barrier();
                    ip_tiles_store<T, false>(s1, s2, x, n, ld, i0, j0, diag, false, tx, ty);
                }
                duet_barrier();
            }
        }
    }
}

/* ---- rectangular: super-elements ----------------------------------------------------------- */

/* A band permutation of src/common/transpose_inplace_plan.h in 32-bit quantities (a band fits
 * in shared memory): destination offset (d2 n1 + d1) n0 + d0 of a band takes the element at
 * d2 s2 + d1 s1 + d0 s0 of it. */
struct ip_band32 {
    uint32_t len, n2, n1, n0, s2, s1, s0;
};

/* An offset into a group of consecutive bands as digits: g len + (d2 n1 + d1) n0 + d0. */
struct ip_digits {
    uint32_t g, d2, d1, d0;
};

DUET_INLINE ip_digits ip_digits_of(const ip_band32 &p, uint32_t d)
{
    ip_digits r;
    const uint32_t inner = p.n1 * p.n0;
    r.g = d / p.len;
    d -= r.g * p.len;
    r.d2 = d / inner;
    d -= r.d2 * inner;
    r.d1 = d / p.n0;
    r.d0 = d - r.d1 * p.n0;
    return r;
}

/* x += t digit by digit. Each digit of both lies below its radix, so a digit sum with the carry
 * in stays below twice the radix: one conditional subtraction per digit, no division. */
DUET_INLINE void ip_digits_add(const ip_band32 &p, ip_digits &x, const ip_digits &t)
{
    uint32_t k;
    x.d0 += t.d0;
    k = x.d0 >= p.n0;
    if (k) x.d0 -= p.n0;
    x.d1 += t.d1 + k;
    k = x.d1 >= p.n1;
    if (k) x.d1 -= p.n1;
    x.d2 += t.d2 + k;
    k = x.d2 >= p.n2;
    if (k) x.d2 -= p.n2;
    x.g += t.g + k;
}

DUET_INLINE uint32_t ip_band_src(const ip_band32 &p, const ip_digits &d)
{
    return d.g * p.len + d.d2 * p.s2 + d.d1 * p.s1 + d.d0 * p.s0;
}

/* Steps 1 and 3: bands [g0, g0 + per) of each matrix (`bands` of p.len elements from a + bz bs)
 * are loaded whole into shared memory and, after the barrier, written back in destination
 * order, each element gathered from its source offset: coalesced global reads and writes, the
 * permutation done in shared memory. The digits of each thread's offset step by the block's
 * stride without a division. vec (the base, the batch stride and a band all 16-byte aligned):
 * the band moves as 16-byte vectors both ways, four loads in flight per thread. */
template <typename U>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_THREADS, 1)
    transpose_inplace_band_kernel(U *a, const ip_band32 p, int64_t bands, int64_t bs,
                                  int64_t batch, uint32_t per, int vec)
{
    enum { N = 16 / sizeof(U), UNROLL = 4 };
    extern __shared__ __align__(16) unsigned char ip_band_smem[];
    U *s = reinterpret_cast<U *>(ip_band_smem);
    const uint32_t tid = (uint32_t)threadIdx.x, unit = vec ? (uint32_t)N : 1u;
    const ip_digits first = ip_digits_of(p, tid * unit), step = ip_digits_of(p, IP_THREADS * unit);
    const ip_digits one = ip_digits_of(p, 1);
    for (int64_t bz = blockIdx.z; bz < batch; bz += gridDim.z) {
        for (int64_t g0 = (int64_t)blockIdx.x * per; g0 < bands; g0 += (int64_t)gridDim.x * per) {
            const int64_t left = bands - g0;
            const uint32_t cnt = (uint32_t)(left < (int64_t)per ? left : (int64_t)per) * p.len;
            U *x = a + bz * bs + g0 * (int64_t)p.len;
            if (vec) {
                const duet_vec16_t *xv = reinterpret_cast<const duet_vec16_t *>(x);
                duet_vec16_t *sv = reinterpret_cast<duet_vec16_t *>(s);
                const uint32_t nv = cnt / N;
                for (uint32_t v0 = tid; v0 < nv; v0 += UNROLL * IP_THREADS) {
                    duet_vec16_t r[UNROLL];
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u)
                        if (v0 + u * IP_THREADS < nv) r[u] = xv[v0 + u * IP_THREADS];
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u)
                        if (v0 + u * IP_THREADS < nv) sv[v0 + u * IP_THREADS] = r[u];
                }
                duet_barrier();
                duet_vec16_t *ov = reinterpret_cast<duet_vec16_t *>(x);
                ip_digits dv = first;
                for (uint32_t v = tid; v < nv; v += IP_THREADS) {
                    ip_digits d = dv;
                    U e[N];
#pragma unroll
                    for (int i = 0; i < N; ++i) {
                        e[i] = s[ip_band_src(p, d)];
                        ip_digits_add(p, d, one);
                    }
                    ov[v] = duet_vec16_make<U>(e);
                    ip_digits_add(p, dv, step);
                }
            } else {
                for (uint32_t e = tid; e < cnt; e += IP_THREADS) s[e] = x[e];
                duet_barrier();
                ip_digits d = first;
                for (uint32_t e = tid; e < cnt; e += IP_THREADS) {
                    x[e] = s[ip_band_src(p, d)];
                    ip_digits_add(p, d, step);
                }
            }
            /* The next group reuses the shared band. */
            duet_barrier();
        }
    }
}

/* Step 2 when a super-element is not one 2-, 4- or 8-byte word: the square kernel's tile-pair
 * swap over the c x c matrix of super-elements of w words U (row stride c w words), tiles of
 * T x T super-elements (T a power of two up to 32, so that two tiles fit 48 KiB). A tile row is
 * T w contiguous words, read and written along rows (coalesced); the shared tiles keep one
 * spare super-element per row (pitch (T + 1) w), the +1 column of the square kernel, so that
 * reading a tile across its rows spreads over the banks. A thread's position in a tile is the
 * digits (r, cc, k): row, super-element, word; they step by the block's stride with carries. */
template <typename U>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_THREADS, 1)
    transpose_inplace_super_square_kernel(U *a, int64_t c, uint32_t w, uint32_t T, int64_t bs,
                                          int64_t batch)
{
    extern __shared__ __align__(16) unsigned char ip_super_smem[];
    U *s1 = reinterpret_cast<U *>(ip_super_smem); /* tile (bi, bj) */
    const uint32_t pitch = (T + 1) * w, tw = T * w, cnt = T * tw;
    U *s2 = s1 + T * pitch; /* tile (bj, bi) */
    const uint32_t tid = (uint32_t)threadIdx.x;
    const uint32_t r0 = tid / tw, c0 = (tid - r0 * tw) / w, k0 = tid - r0 * tw - c0 * w;
    const uint32_t sr = IP_THREADS / tw, sc = (IP_THREADS - sr * tw) / w,
                   sk = IP_THREADS - sr * tw - sc * w;
    const int64_t nt = (c + T - 1) / T, h = nt / 2 + 1, row = c * (int64_t)w;
    for (int64_t bz = blockIdx.z; bz < batch; bz += gridDim.z) {
        U *x = a + bz * bs;
        /* The pairs folded as in the square kernels. */
        for (int64_t by = blockIdx.y; by < h; by += gridDim.y) {
            for (int64_t bx = blockIdx.x; bx < nt; bx += gridDim.x) {
                int64_t bi, bj;
                if (!ip_square_pair(nt, h, by, bx, bi, bj)) continue;
                const int64_t i0 = bi * T, j0 = bj * T;
                const bool diag = bi == bj;
                const uint32_t hi = (uint32_t)(c - i0 < (int64_t)T ? c - i0 : (int64_t)T);
                const uint32_t hj = (uint32_t)(c - j0 < (int64_t)T ? c - j0 : (int64_t)T);
                uint32_t r = r0, cc = c0, k = k0;
                for (uint32_t e = tid; e < cnt; e += IP_THREADS) {
                    const uint32_t sh = r * pitch + cc * w + k;
                    if (r < hi && cc < hj) s1[sh] = x[(i0 + r) * row + (j0 + cc) * w + k];
                    if (!diag && r < hj && cc < hi) s2[sh] = x[(j0 + r) * row + (i0 + cc) * w + k];
                    k += sk;
                    if (k >= w) k -= w, ++cc;
                    cc += sc;
                    if (cc >= T) cc -= T, ++r;
                    r += sr;
                }
                /* Both tiles are in shared memory before either is overwritten. */
                duet_barrier();
                r = r0, cc = c0, k = k0;
                for (uint32_t e = tid; e < cnt; e += IP_THREADS) {
                    const uint32_t sh = cc * pitch + r * w + k;
                    if (r < hi && cc < hj) x[(i0 + r) * row + (j0 + cc) * w + k] = diag ? s1[sh] : s2[sh];
                    if (!diag && r < hj && cc < hi) x[(j0 + r) * row + (i0 + cc) * w + k] = s1[sh];
                    k += sk;
                    if (k >= w) k -= w, ++cc;
                    cc += sc;
                    if (cc >= T) cc -= T, ++r;
                    r += sr;
                }
                /* The next pair reuses the tiles. */
                duet_barrier();
            }
        }
    }
}

/* ---- rectangular: whole lines in shared memory ---------------------------------------------- */

/* Rows [g * rpb, g * rpb + rpb) of each matrix: loaded, then gathered back (phase 2). */
template <typename U, typename I>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_THREADS, 1)
    transpose_inplace_rows_smem_kernel(U *a, const ip_c2r<I> p, int64_t bs, int64_t batch, I rpb)
{
    extern __shared__ __align__(16) unsigned char ip_rows_smem[];
    U *s = reinterpret_cast<U *>(ip_rows_smem);
    const I tid = (I)threadIdx.x;
    for (int64_t bz = blockIdx.z; bz < batch; bz += gridDim.z) {
        for (I g = (I)blockIdx.x; g * rpb < p.m; g += (I)gridDim.x) {
            const I i0 = g * rpb, rows = p.m - i0 < rpb ? p.m - i0 : rpb, cnt = rows * p.n;
            U *x = a + bz * bs + (int64_t)i0 * p.n;
            for (I e = tid; e < cnt; e += IP_THREADS) s[e] = x[e];
            duet_barrier();
            for (I e = tid; e < cnt; e += IP_THREADS) {
                const I r = e / p.n, k = e - r * p.n;
                x[e] = s[r * p.n + ip_row_src<I>(p, i0 + r, k)];
            }
            duet_barrier();
        }
    }
}

/* Columns [g * w, g * w + w) of each matrix: loaded as m x w, then gathered back (phases 1, 3). */
template <typename U, int OP, typename I>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_THREADS, 1)
    transpose_inplace_cols_smem_kernel(U *a, const ip_c2r<I> p, int64_t bs, int64_t batch, I w)
{
    extern __shared__ __align__(16) unsigned char ip_cols_smem[];
    U *s = reinterpret_cast<U *>(ip_cols_smem);
    const I tid = (I)threadIdx.x;
    for (int64_t bz = blockIdx.z; bz < batch; bz += gridDim.z) {
        for (I g = (I)blockIdx.x; g * w < p.n; g += (I)gridDim.x) {
            const I j0 = g * w, cw = p.n - j0 < w ? p.n - j0 : w, cnt = p.m * cw;
            U *x = a + bz * bs + j0;
            for (I e = tid; e < cnt; e += IP_THREADS) {
                const I i = e / cw, jj = e - i * cw;
                s[e] = x[(int64_t)i * p.n + jj];
            }
            duet_barrier();
            for (I e = tid; e < cnt; e += IP_THREADS) {
                const I i = e / cw, jj = e - i * cw;
                x[(int64_t)i * p.n + jj] = s[ip_col_src<OP, I>(p, i, j0 + jj) * cw + jj];
            }
            duet_barrier();
        }
    }
}

/* ---- rectangular: a group of lines through the workspace ------------------------------------ */

/* scratch (h x w, packed) = x[r0 .. r0 + h) x [c0 .. c0 + w) of one matrix with rows of n. */
template <typename U, typename I>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_THREADS, 1)
    transpose_inplace_stage_kernel(const U *x, I n, I r0, I c0, I h, I w, U *scratch)
{
    const I cnt = h * w, step = (I)gridDim.x * IP_THREADS;
    for (I e = (I)blockIdx.x * IP_THREADS + (I)threadIdx.x; e < cnt; e += step) {
        const I i = e / w, jj = e - i * w;
        scratch[e] = x[(int64_t)(r0 + i) * n + c0 + jj];
    }
}

/* Columns [c0, c0 + w) from their staged copy (m x w): x(i, j) = staged(src(i, j), j). */
template <typename U, int OP, typename I>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_THREADS, 1)
    transpose_inplace_gather_cols_kernel(U *x, const ip_c2r<I> p, I c0, I w, const U *scratch)
{
    const I cnt = p.m * w, step = (I)gridDim.x * IP_THREADS;
    for (I e = (I)blockIdx.x * IP_THREADS + (I)threadIdx.x; e < cnt; e += step) {
        const I i = e / w, jj = e - i * w;
        x[(int64_t)i * p.n + c0 + jj] = scratch[(int64_t)ip_col_src<OP, I>(p, i, c0 + jj) * w + jj];
    }
}

/* Rows [r0, r0 + h) from their staged copy (h x n): x(i, k) = staged(i, src(i, k)). */
template <typename U, typename I>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_THREADS, 1)
    transpose_inplace_gather_rows_kernel(U *x, const ip_c2r<I> p, I r0, I h, const U *scratch)
{
    const I cnt = h * p.n, step = (I)gridDim.x * IP_THREADS;
    for (I e = (I)blockIdx.x * IP_THREADS + (I)threadIdx.x; e < cnt; e += step) {
        const I r = e / p.n, k = e - r * p.n;
        x[(int64_t)(r0 + r) * p.n + k] = scratch[(int64_t)r * p.n + ip_row_src<I>(p, r0 + r, k)];
    }
}

#endif /* DUET_KERNELS_TRANSPOSE_INPLACE_CUH */
