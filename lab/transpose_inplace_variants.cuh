/* transpose_inplace_variants.cuh - square in-place transpose kernels the library does not run:
 * 16-byte accesses, and a persistent pipelined grid. */
#ifndef DUET_LAB_TRANSPOSE_INPLACE_VARIANTS_CUH
#define DUET_LAB_TRANSPOSE_INPLACE_VARIANTS_CUH

/* They share the library's tile-pair walk, tiles and element loops (kernels/
 * transpose_inplace.cuh) and are timed beside its kernels by transpose_inplace_lab.cu. Neither
 * beat the kernels the tuning table chooses, so no table names them. */
#include "transpose_inplace.cuh"

/* The square kernel with 16-byte global accesses in full tile pairs (the base, ld and the batch
 * stride 16-byte aligned; `vec` says so): a thread keeps LITER vectors of each tile in flight,
 * and a warp moves 512 contiguous bytes per access instead of 128, a quarter of the global
 * load and store instructions of the element-wide kernel for 4-byte elements. The shared tiles
 * and the pair walk are the square kernel's; edge pairs and unaligned views take its
 * element-wide loops. A 1-D block of IP_THREADS (32 x 8 in the element-wide loops). Cut for
 * four blocks an SM (56 registers for 4-byte 64-edge tiles with nvcc 13, sm_90; the
 * element-wide kernel's 78 keep three resident, not the six its shared memory would allow).
 * On the H100 it runs the 4-byte square slower than the element-wide kernel. */
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

#endif /* DUET_LAB_TRANSPOSE_INPLACE_VARIANTS_CUH */
