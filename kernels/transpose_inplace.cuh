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

/* The square kernel with 16-byte global accesses in full tile pairs (the base, ld and the batch
 * stride 16-byte aligned; `vec` says so): a thread keeps LITER vectors of each tile in flight,
 * and a warp moves 512 contiguous bytes per access instead of 128, a quarter of the global
 * load and store instructions of the element-wide kernel for 4-byte elements. The shared tiles
 * and the pair walk are the square kernel's; edge pairs and unaligned views take its
 * element-wide loops. A 1-D block of IP_THREADS (32 x 8 in the element-wide loops). Cut for
 * four blocks an SM (56 registers for 4-byte 64-edge tiles with nvcc 13, sm_90; the
 * element-wide kernel's 78 keep three resident, not the six its shared memory would allow).
 * Selected by DUET_TRANSPOSE_INPLACE_SQUARE_VEC=1 until it is measured against the
 * element-wide kernel. */
template <typename U, int T>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(IP_THREADS, 4)
    transpose_inplace_square_vec_kernel(U *a, int64_t n, int64_t ld, int64_t bs, int64_t batch,
                                        int vec)
{
    enum {
        N = 16 / sizeof(U),     /* elements per vector                 */
        VPL = T / N,            /* vectors per tile row                */
        LSTEP = IP_THREADS / VPL, /* tile rows per pass of the block   */
        LITER = T / LSTEP       /* vectors per tile per thread         */
    };
    static_assert(T % IP_SQ_X == 0 && T % IP_SQ_Y == 0, "the tile is whole warps by rows");
    static_assert(IP_THREADS % VPL == 0 && T % LSTEP == 0, "vectors divide among the threads");
    __shared__ U s1[T][T + 1]; /* tile (bi, bj) */
    __shared__ U s2[T][T + 1]; /* tile (bj, bi) */
    const int tid = (int)threadIdx.x, tx = tid % IP_SQ_X, ty = tid / IP_SQ_X;
    const int vr = tid / VPL, vc = tid % VPL;
    const int64_t nt = (n + T - 1) / T, h = nt / 2 + 1;
    for (int64_t bz = blockIdx.z; bz < batch; bz += gridDim.z) {
        U *x = a + bz * bs;
        for (int64_t by = blockIdx.y; by < h; by += gridDim.y) {
            for (int64_t bx = blockIdx.x; bx < nt; bx += gridDim.x) {
                int64_t bi, bj;
                if (!ip_square_pair(nt, h, by, bx, bi, bj)) continue;
                const int64_t i0 = bi * T, j0 = bj * T;
                const bool diag = bi == bj, full = j0 + T <= n; /* j0 >= i0 */
                if (full && vec) {
                    const U *src1 = x + (i0 + vr) * ld + j0 + vc * N;
                    const U *src2 = x + (j0 + vr) * ld + i0 + vc * N;
                    const int64_t step = LSTEP * ld;
                    duet_vec16_t p1[LITER], p2[LITER];
#pragma unroll
                    for (int it = 0; it < LITER; ++it)
                        p1[it] = *reinterpret_cast<const duet_vec16_t *>(src1 + it * step);
                    if (!diag)
#pragma unroll
                        for (int it = 0; it < LITER; ++it)
                            p2[it] = *reinterpret_cast<const duet_vec16_t *>(src2 + it * step);
#pragma unroll
                    for (int it = 0; it < LITER; ++it)
#pragma unroll
                        for (int e = 0; e < N; ++e)
                            s1[vr + it * LSTEP][vc * N + e] = duet_vec16_get<U>(p1[it], e);
                    if (!diag)
#pragma unroll
                        for (int it = 0; it < LITER; ++it)
#pragma unroll
                            for (int e = 0; e < N; ++e)
                                s2[vr + it * LSTEP][vc * N + e] = duet_vec16_get<U>(p2[it], e);
                } else {
                    ip_tiles_load<T, true>(s1, s2, x, n, ld, i0, j0, diag, full, tx, ty);
                }
                /* Both tiles are in shared memory before either is overwritten. */
                duet_barrier();
                if (full && vec) {
                    U *dst1 = x + (i0 + vr) * ld + j0 + vc * N;
                    U *dst2 = x + (j0 + vr) * ld + i0 + vc * N;
                    const int64_t step = LSTEP * ld;
#pragma unroll
                    for (int it = 0; it < LITER; ++it) {
                        U v[N];
#pragma unroll
                        for (int e = 0; e < N; ++e)
                            v[e] = diag ? s1[vc * N + e][vr + it * LSTEP] : s2[vc * N + e][vr + it * LSTEP];
                        *reinterpret_cast<duet_vec16_t *>(dst1 + it * step) = duet_vec16_make<U>(v);
                    }
                    if (!diag)
#pragma unroll
                        for (int it = 0; it < LITER; ++it) {
                            U v[N];
#pragma unroll
                            for (int e = 0; e < N; ++e) v[e] = s1[vc * N + e][vr + it * LSTEP];
                            *reinterpret_cast<duet_vec16_t *>(dst2 + it * step) = duet_vec16_make<U>(v);
                        }
                } else {
                    ip_tiles_store<T, true>(s1, s2, x, n, ld, i0, j0, diag, full, tx, ty);
                }
                /* The next pair reuses the tiles. */
                duet_barrier();
            }
        }
    }
}

/* transpose_inplace_square_kernel with each thread's two addresses formed once per pair and
 * stepped by IP_SQ_Y rows (a loop-invariant stride), so a full pair's loads and stores carry
 * no 64-bit multiply and no bounds test each; edge pairs take the bounded loops. The same
 * pairs, tiles and barriers. Selected by DUET_TRANSPOSE_INPLACE_SQUARE=step (name ends in
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

/* ---- square: persistent, 16-byte swizzled tiles, pipelined pairs ---------------------------- */

/* cp.async (sm_80+) fills a stage of shared memory with no registers holding the loads, so a
 * block's next pair streams in while it stores the current one. Elsewhere (AMD, older NVIDIA)
 * the copy is a 16-byte load and store through a register: the same kernel, correct, with the
 * next pair loaded before (not during) the current pair's stores. */
#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#define DUET_IP_CP_ASYNC 1
#else
#define DUET_IP_CP_ASYNC 0
#endif /* DUET_GPU_CUDA && __CUDA_ARCH__ >= 800 */

DUET_INLINE void ip_copy16(duet_vec16_t *dst, const void *src)
{
#if DUET_IP_CP_ASYNC
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    /* .cg: every byte is read once; nothing to keep in L1. */
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
#else
    *dst = *reinterpret_cast<const duet_vec16_t *>(src);
#endif /* DUET_IP_CP_ASYNC */
}

DUET_INLINE void ip_copy_commit()
{
#if DUET_IP_CP_ASYNC
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif /* DUET_IP_CP_ASYNC */
}

/* Waits until at most N committed groups are still in flight. */
template <int N> DUET_INLINE void ip_copy_wait()
{
#if DUET_IP_CP_ASYNC
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif /* DUET_IP_CP_ASYNC */
}

/* The pairs bi <= bj of an nt x nt tiling as an exact rectangle of R rows of w cells, no pair
 * skipped or repeated, so a persistent block walks a plain linear range. Odd nt:
 * (nt + 1) / 2 x nt, cell (y, x) is the pair (y, x) on and above the diagonal and
 * (nt - y, nt - 1 - x) below it (row bi = nt - y >= (nt + 1) / 2 has nt - bi = y pairs, the y
 * cells below row y's diagonal). Even nt: nt / 2 x (nt + 1), cell (y, x) is (y, x - 1) for
 * x > y and (nt - 1 - y, nt - 1 - y + x) for x <= y (row nt - 1 - y has y + 1 pairs). A batch
 * stacks its matrices' rectangles. The position of pair g = (z R + y) w + x moves on by a
 * block's stride G with carries, not divisions: pair indices advance by adds alone. */
struct ip_pair_walk {
    int64_t nt, w, R;
    int64_t gx, gy, gz; /* G as (gz R + gy) w + gx */

    DUET_DEVICE void init(int64_t nt_, int64_t G)
    {
        nt = nt_;
        w = (nt & 1) ? nt : nt + 1;
        R = (nt & 1) ? (nt + 1) / 2 : nt / 2;
        gx = G % w;
        gy = G / w;
        gz = gy / R;
        gy -= gz * R;
    }
    /* The cursor (z, y, x) of pair g. */
    DUET_DEVICE void at(int64_t g, int64_t &z, int64_t &y, int64_t &x) const
    {
        y = g / w;
        x = g - y * w;
        z = y / R;
        y -= z * R;
    }
    DUET_DEVICE void step(int64_t &z, int64_t &y, int64_t &x) const
    {
        x += gx;
        const int64_t c = x >= w;
        if (c) x -= w;
        y += gy + c;
        if (y >= R) y -= R, ++z;
        z += gz;
    }
    DUET_DEVICE void tiles(int64_t y, int64_t x, int64_t &bi, int64_t &bj) const
    {
        if (nt & 1) {
            bi = x >= y ? y : nt - y;
            bj = x >= y ? x : nt - 1 - x;
        } else {
            bi = x > y ? y : nt - 1 - y;
            bj = x > y ? x - 1 : nt - 1 - y + x;
        }
    }
};

/*
 * The tile-pair swap as a persistent grid: block b takes pairs b, b + G, b + 2G, ... of all
 * batch * nt (nt + 1) / 2 pairs (G = gridDim.x), with S stages of shared memory (two T x T
 * tiles each): while it stores pair p it has pairs p + 1 .. p + S - 1 loading. Pairs are
 * disjoint sets of elements, each owned by one block, so a store never meets another pair's
 * loads; within a pair both tiles are in shared memory (wait, barrier) before either is
 * written, as in transpose_inplace_square_kernel.
 *
 * Full pairs of 16-byte aligned views move as 16-byte vectors both ways. A tile is kept as it
 * lies in memory, T rows of VT = T / N vectors (N elements of U each); vector c of row r sits
 * in slot c ^ ((r / N) % 8) of its row. A warp's cp.async of a tile row fills 8 distinct slots
 * per 8 lanes; for the store a thread takes an N x N block (rows N rb .. N rb + N - 1, slot
 * column cb), reading N vectors, transposes it in registers and writes N vectors of N
 * consecutive output rows; lanes with consecutive rb write consecutive vectors of one output
 * row and read slots cb ^ (rb % 8): distinct, so both sides are free of bank conflicts (the
 * design of the AUTO out-of-place kernels in kernels/transpose.cuh). Each thread steps one
 * pointer per tile by a loop-invariant stride: no per-element 64-bit multiplies.
 *
 * Edge pairs (n % T != 0) and unaligned views go element by element through the same stage
 * (an XOR-swizzled element layout against bank conflicts), loaded and stored in one step.
 */
template <typename U, int T, int THREADS, int S, int MINB>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(THREADS, MINB)
    transpose_inplace_square_pipe_kernel(U *a, int64_t n, int64_t ld, int64_t bs, int64_t batch,
                                         int vec)
{
    enum {
        N = 16 / (int)sizeof(U),   /* elements per vector                        */
        VT = T / N,                /* vectors per tile row                       */
        TV = T * VT,               /* vectors per tile                           */
        LROWS = THREADS / VT,      /* tile rows per pass of the block (loads)    */
        LIT = TV / THREADS,        /* vectors per tile per thread                */
        SROWS = THREADS / VT,      /* slot columns per pass (stores)             */
        SIT = VT / SROWS,          /* N x N blocks per tile per thread           */
        EM = (T < 32 ? T : 32) - 1 /* the element layout's swizzle mask          */
    };
    static_assert(VT >= 8 && (VT & (VT - 1)) == 0, "a tile row is a power of two of >= 8 vectors");
    static_assert(THREADS % VT == 0 && TV % THREADS == 0 && VT % SROWS == 0,
                  "the vectors divide among the threads");
    extern __shared__ __align__(16) unsigned char ip_pipe_smem[];
    duet_vec16_t *sm = reinterpret_cast<duet_vec16_t *>(ip_pipe_smem);
    const int tid = (int)threadIdx.x;
    ip_pair_walk walk;
    walk.init((n + T - 1) / T, (int64_t)gridDim.x);

    /* The pair's matrix, tile origins and kind. */
    struct pair {
        U *x;
        int64_t i0, j0;
        bool diag, fast;
    };
    const auto pair_at = [&](int64_t z, int64_t y, int64_t x) {
        pair p;
        int64_t bi, bj;
        walk.tiles(y, x, bi, bj);
        p.x = a + z * bs;
        p.i0 = bi * T;
        p.j0 = bj * T;
        p.diag = bi == bj;
        p.fast = vec && p.j0 + T <= n; /* j0 >= i0 */
        return p;
    };
    /* Starts the copy of a pair's tiles into stage st (nothing for an element-wise pair or
     * past the last pair). */
    const auto issue = [&](int64_t z, int64_t y, int64_t x, int st) {
        if (z >= batch) return;
        const pair p = pair_at(z, y, x);
        if (!p.fast) return;
        const int r0 = tid / VT, c = tid % VT;
        const int64_t step = (int64_t)LROWS * ld;
        duet_vec16_t *s1 = sm + (int64_t)st * 2 * TV, *s2 = s1 + TV;
        const U *q1 = p.x + (p.i0 + r0) * ld + p.j0 + c * N;
#pragma unroll
        for (int it = 0; it < LIT; ++it, q1 += step) {
            const int r = r0 + it * LROWS;
            ip_copy16(s1 + r * VT + (c ^ ((r / N) & 7)), q1);
        }
        if (!p.diag) {
            const U *q2 = p.x + (p.j0 + r0) * ld + p.i0 + c * N;
#pragma unroll
            for (int it = 0; it < LIT; ++it, q2 += step) {
                const int r = r0 + it * LROWS;
                ip_copy16(s2 + r * VT + (c ^ ((r / N) & 7)), q2);
            }
        }
    };
    /* Writes src (a tile as loaded) transposed at rows o_r, columns o_c of x. */
    const auto store_tile = [&](const duet_vec16_t *src, U *x, int64_t o_r, int64_t o_c) {
        const int rb = tid % VT, cb0 = tid / VT;
        const int64_t step = (int64_t)N * SROWS * ld;
        U *d = x + (o_r + (int64_t)N * cb0) * ld + o_c + rb * N;
#pragma unroll
        for (int it = 0; it < SIT; ++it, d += step) {
            const int cb = cb0 + it * SROWS;
            U e[N][N];
#pragma unroll
            for (int k = 0; k < N; ++k) {
                const duet_vec16_t v = src[(N * rb + k) * VT + (cb ^ (rb & 7))];
#pragma unroll
                for (int m = 0; m < N; ++m) e[m][k] = duet_vec16_get<U>(v, m);
            }
#pragma unroll
            for (int m = 0; m < N; ++m)
                *reinterpret_cast<duet_vec16_t *>(d + m * ld) = duet_vec16_make<U>(e[m]);
        }
    };

    /* Cursors: the pair to store (pz, py, px) and the next one to load (lz, ly, lx). */
    int64_t pz, py, px, lz, ly, lx;
    walk.at((int64_t)blockIdx.x, pz, py, px);
    lz = pz, ly = py, lx = px;
#pragma unroll
    for (int k = 0; k < S - 1; ++k) {
        issue(lz, ly, lx, k);
        ip_copy_commit();
        walk.step(lz, ly, lx);
    }
    int st = 0;
    for (; pz < batch; walk.step(pz, py, px)) {
        issue(lz, ly, lx, st + S - 1 >= S ? st - 1 : st + S - 1);
        ip_copy_commit();
        walk.step(lz, ly, lx);
        ip_copy_wait<S - 1>();
        /* Both tiles of the pair are in shared memory before either is overwritten. */
        duet_barrier();
        const pair p = pair_at(pz, py, px);
        duet_vec16_t *s1 = sm + (int64_t)st * 2 * TV, *s2 = s1 + TV;
        if (p.fast) {
            store_tile(p.diag ? s1 : s2, p.x, p.i0, p.j0);
            if (!p.diag) store_tile(s1, p.x, p.j0, p.i0);
        } else {
            U *e1 = reinterpret_cast<U *>(s1), *e2 = reinterpret_cast<U *>(s2);
            for (int w = tid; w < T * T; w += THREADS) {
                const int r = w / T, c = w % T, at = r * T + (c ^ (r & EM));
                if (p.i0 + r < n && p.j0 + c < n) e1[at] = p.x[(p.i0 + r) * ld + p.j0 + c];
                if (!p.diag && p.j0 + r < n && p.i0 + c < n)
                    e2[at] = p.x[(p.j0 + r) * ld + p.i0 + c];
            }
            /* Both tiles are in shared memory before either is overwritten. */
            duet_barrier();
            for (int w = tid; w < T * T; w += THREADS) {
                const int r = w / T, c = w % T, at = c * T + (r ^ (c & EM));
                if (p.i0 + r < n && p.j0 + c < n)
                    p.x[(p.i0 + r) * ld + p.j0 + c] = p.diag ? e1[at] : e2[at];
                if (!p.diag && p.j0 + r < n && p.i0 + c < n)
                    p.x[(p.j0 + r) * ld + p.i0 + c] = e1[at];
            }
        }
        /* The stage is refilled (S pairs on) only after every thread is done with it. */
        duet_barrier();
        st = st + 1 == S ? 0 : st + 1;
    }
    ip_copy_wait<0>();
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
