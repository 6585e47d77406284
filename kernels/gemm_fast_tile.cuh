/* gemm_fast_tile.cuh - pieces shared by the AUTO GEMM kernels: tile loaders, async copy, args. */
#ifndef DUET_KERNELS_GEMM_FAST_TILE_CUH
#define DUET_KERNELS_GEMM_FAST_TILE_CUH

#include "compat.h"

#include <stdint.h>

/*
 * Both AUTO kernels (gemm_fast.cuh on the FMA units, gemm_fast_dmma.cuh on the f64 tensor
 * cores) stage A and B through shared memory in the same k-major layout:
 *
 *     As[k][m]  (pitch BM + GF_PAD)        Bs[k][n]  (pitch BN + GF_PAD)
 *
 * so that one k-step of the inner product reads a thread's (or warp's) m values and n values
 * as contiguous 16-byte vectors. A loader handles one operand; the operand is described by its
 * "x" axis (m for A, n for B) and k, with strides sx and sk, so A and B share one code path.
 */

/* Pad of each shared row, in elements. It keeps 16-byte alignment of every row for float and
 * uint32 (and 32 bytes for double), and with BM or BN = 128 (or 64) it shifts consecutive k
 * rows by 4 banks: the transposing stores of a k-contiguous operand (lanes walk k fastest) and
 * the DMMA fragment reads then land in distinct banks. */
#define GF_PAD 4

/* __launch_bounds__ with a minimum of resident blocks: on CUDA that caps registers so that
 * `blocks` blocks fit one SM; HIP reads a second argument as waves per SIMD, so it gets only
 * the thread count. */
#if DUET_GPU_CUDA
#define GF_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
#else
#define GF_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads)
#endif /* DUET_GPU_CUDA */

/* ---- asynchronous global -> shared copy ------------------------------------------------- */

/* cp.async (sm_80+) lets a tile's copy run while the previous tile is multiplied, with no
 * registers held for it. Elsewhere (older NVIDIA, every AMD GPU) the same calls are plain
 * loads and stores: correct, just not overlapped, and the kernels use their register-staged
 * pipeline there instead. */
#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#define DUET_GEMM_CP_ASYNC 1
#else
#define DUET_GEMM_CP_ASYNC 0
#endif /* DUET_GPU_CUDA && __CUDA_ARCH__ >= 800 */

/* Copies src_bytes (0..BYTES) from src to the shared dst and zero-fills the rest of BYTES. */
template <int BYTES>
DUET_INLINE void gf_copy_async(void *dst, const void *src, int src_bytes)
{
#if DUET_GEMM_CP_ASYNC
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    if (BYTES == 16) {
        /* .cg: the tile is used once per block; keep L1 for the other operand's reuse. */
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src),
                     "r"(src_bytes)
                     : "memory");
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src),
                     "n"(BYTES), "r"(src_bytes)
                     : "memory");
    }
#else
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *q = (const unsigned char *)src;
    for (int i = 0; i < BYTES; ++i) d[i] = i < src_bytes ? q[i] : (unsigned char)0;
#endif /* DUET_GEMM_CP_ASYNC */
}

DUET_INLINE void gf_copy_commit()
{
#if DUET_GEMM_CP_ASYNC
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif /* DUET_GEMM_CP_ASYNC */
}

/* Waits until at most N committed groups are still in flight. */
template <int N>
DUET_INLINE void gf_copy_wait()
{
#if DUET_GEMM_CP_ASYNC
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif /* DUET_GEMM_CP_ASYNC */
}

/* ---- 16-byte vectors --------------------------------------------------------------------- */

/* 16 bytes as elements of T: the unit of every vectorized global and shared access. */
template <typename T>
struct gf_vec {
    static constexpr int N = 16 / (int)sizeof(T);
    T e[N];
};

template <typename T>
DUET_INLINE gf_vec<T> gf_load16(const T *p)
{
    const duet_vec16_t raw = *reinterpret_cast<const duet_vec16_t *>(p);
    gf_vec<T> v;
    __builtin_memcpy(&v, &raw, 16);
    return v;
}

template <typename T>
DUET_INLINE void gf_store16(T *p, const gf_vec<T> &v)
{
    duet_vec16_t raw;
    __builtin_memcpy(&raw, &v, 16);
    *reinterpret_cast<duet_vec16_t *>(p) = raw;
}

/* ---- arithmetic per element type --------------------------------------------------------- */

/* i32 GEMM computes in uint32_t: wrapping modulo 2^32 is then defined behaviour. */
DUET_INLINE float gf_fma(float a, float b, float c) { return fmaf(a, b, c); }
DUET_INLINE double gf_fma(double a, double b, double c) { return fma(a, b, c); }
DUET_INLINE uint32_t gf_fma(uint32_t a, uint32_t b, uint32_t c) { return a * b + c; }

/* ---- kernel arguments -------------------------------------------------------------------- */

/* One strided operand: element (b, i, j) at base + b*bs + i*rs + j*cs (elements). */
template <typename T>
struct gf_operand {
    const T *base;
    int64_t rs, cs, bs;
};

template <typename T>
struct gf_args {
    int64_t m, n, k, batch;
    int64_t tiles_m, tiles_n; /* tiles of C per matrix                                     */
    T alpha, beta;
    int beta_zero;            /* beta == 0: C is never read                                */
    int c_vec;                /* C rows are 16-byte aligned with unit column stride        */
    gf_operand<T> a, b;
    T *c;
    int64_t c_rs, c_cs, c_bs;
    /* Split-K: block (x, y, z) multiplies K range [y slice_k, min(k, (y + 1) slice_k)) and
     * writes its tile at c + y c_ss (the workspace; gemm_splitk.cuh sums the slices). Without
     * a split gridDim.y is 1, slice_k = k and c_ss = 0. */
    int64_t slice_k, c_ss;
};

/* The K range of this block's slice: its first k and its length. */
template <typename T>
DUET_INLINE void gf_slice(const gf_args<T> &p, int64_t *k0, int64_t *klen)
{
    const int64_t begin = (int64_t)blockIdx.y * p.slice_k;
    const int64_t len = p.k - begin < p.slice_k ? p.k - begin : p.slice_k;
    *k0 = begin;
    *klen = len < 0 ? 0 : len;
}

/* Raster order of the tiles of one matrix: groups of GF_GROUP_M tile rows are walked column by
 * column, so the blocks resident at one time share A rows and B columns in L2 instead of
 * sweeping all of B per tile row (the same idea as Triton's grouped ordering). */
#define GF_GROUP_M 8

DUET_INLINE void gf_tile_coords(int64_t tile, int64_t tiles_m, int64_t tiles_n, int64_t *tm,
                                int64_t *tn)
{
    const int64_t per_group = (int64_t)GF_GROUP_M * tiles_n;
    const int64_t group = tile / per_group;
    const int64_t first = group * GF_GROUP_M;
    const int64_t rows = tiles_m - first < GF_GROUP_M ? tiles_m - first : GF_GROUP_M;
    const int64_t in_group = tile - group * per_group;
    *tm = first + in_group % rows;
    *tn = in_group / rows;
}

/* A compile-time int as a value (the kernels' generic lambdas take their tile kind this way). */
template <int V> struct gf_int {
    static constexpr int value = V;
};

/* ---- the operand tile loader ------------------------------------------------------------- */

/*
 * Loads a BX x BK tile (x = m for A, n for B) into shared s[k * PITCH + x].
 *   XC: the operand is walked along x by neighbouring threads (it is contiguous along x, or
 *       has no unit stride and x is its smaller stride); otherwise along k.
 *   V:  elements per access: 16 / sizeof(T) when the contiguous axis has unit stride and every
 *       row start is 16-byte aligned (checked by the launcher), else 1.
 * Thread t handles vectors t, t + THREADS, ...; vector i is at position i % CN along the
 * walked axis (in vectors) and i / CN along the other, so a warp reads whole 32-byte sectors.
 * Out-of-range elements (past m, n or k) are stored as zero: they then add nothing to the
 * product, and no uninitialised shared memory (possibly NaN bit patterns) is ever multiplied.
 */
template <typename T, int BX, int BK, int THREADS, bool XC, int V, int PAD = GF_PAD>
struct gf_loader {
    static constexpr int PITCH = BX + PAD;
    static constexpr int CN = XC ? BX / V : BK / V;
    static constexpr int COUNT = BX * BK / V / THREADS;
    static constexpr int OSTEP = THREADS / CN;
    static_assert(V == 1 || V == 16 / (int)sizeof(T), "V is 1 or one 16-byte vector");
    static_assert((XC ? BX : BK) % V == 0, "the walked axis holds whole vectors");
    static_assert((BX * BK / V) % THREADS == 0, "every thread loads the same number of vectors");
    static_assert(THREADS % CN == 0, "a thread keeps its position along the walked axis");

    int xl0, kl0; /* this thread's first element inside the tile */

    DUET_DEVICE explicit gf_loader(int tid)
    {
        const int c = tid % CN, o = tid / CN;
        xl0 = XC ? c * V : o;
        kl0 = XC ? o : c * V;
    }
    DUET_DEVICE int xl(int r) const { return XC ? xl0 : xl0 + r * OSTEP; }
    DUET_DEVICE int kl(int r) const { return XC ? kl0 + r * OSTEP : kl0; }

    /* Register-staged path, step 1: global -> registers. base points at element (x0, k0). */
    DUET_DEVICE void fetch(T (&reg)[COUNT][V], const T *base, int64_t sx, int64_t sk,
                           int64_t xrem, int64_t krem, bool interior) const
    {
        if (interior) {
            /* Whole tile inside the matrix: one address, stepped (as in copy_async). */
            const T *p = base + (int64_t)xl0 * sx + (int64_t)kl0 * sk;
            const int64_t step = (int64_t)OSTEP * (XC ? sk : sx);
#pragma unroll
            for (int r = 0; r < COUNT; ++r, p += step) {
                if (V == 1) {
                    reg[r][0] = *p;
                } else {
                    const gf_vec<T> v = gf_load16(p);
#pragma unroll
                    for (int e = 0; e < V; ++e) reg[r][e] = v.e[e];
                }
            }
            return;
        }
#pragma unroll
        for (int r = 0; r < COUNT; ++r) {
            const int x = xl(r), k = kl(r);
            const T *p = base + (int64_t)x * sx + (int64_t)k * sk;
            if (V == 1) {
                reg[r][0] = (interior || (x < xrem && k < krem)) ? *p : T(0);
            } else {
                const int64_t lim = XC ? xrem - x : krem - k;
                const bool other = XC ? k < krem : x < xrem;
                if (interior || (other && lim >= V)) {
                    const gf_vec<T> v = gf_load16(p);
#pragma unroll
                    for (int e = 0; e < V; ++e) reg[r][e] = v.e[e];
                } else {
                    /* A vector cut by the edge of the matrix: element by element. */
#pragma unroll
                    for (int e = 0; e < V; ++e) reg[r][e] = (other && e < lim) ? p[e] : T(0);
                }
            }
        }
    }

    /* Register-staged path, step 2: registers -> shared (transposed when walked along k). */
    DUET_DEVICE void store(T *s, const T (&reg)[COUNT][V]) const
    {
#pragma unroll
        for (int r = 0; r < COUNT; ++r) {
            const int x = xl(r), k = kl(r);
            if (XC && V > 1) {
                gf_vec<T> v;
#pragma unroll
                for (int e = 0; e < V; ++e) v.e[e] = reg[r][e];
                gf_store16(s + k * PITCH + x, v);
            } else {
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    if (XC)
                        s[k * PITCH + x + e] = reg[r][e];
                    else
                        s[(k + e) * PITCH + x] = reg[r][e];
                }
            }
        }
    }

    /* cp.async path: global -> shared with no registers in between. A k-walked operand is
     * copied element by element (cp.async cannot transpose a vector); launchers pick V = 1
     * for it so a warp's lanes still cover whole sectors. */
    DUET_DEVICE void copy_async(T *s, const T *base, int64_t sx, int64_t sk, int64_t xrem,
                                int64_t krem, bool interior) const
    {
        if (interior) {
            /* Whole tile inside the matrix: one address, stepped by a loop-invariant stride,
             * so each copy is an add and a cp.async (the general path below spends two 64-bit
             * multiplies and a bounds test on every element; in the f64 DMMA kernel that
             * address arithmetic outnumbered the mma instructions). */
            const T *p = base + (int64_t)xl0 * sx + (int64_t)kl0 * sk;
            const int64_t step = (int64_t)OSTEP * (XC ? sk : sx);
#pragma unroll
            for (int r = 0; r < COUNT; ++r, p += step) {
                const int x = xl(r), k = kl(r);
                if (XC && V > 1) {
                    gf_copy_async<16>(s + k * PITCH + x, p, 16);
                } else {
#pragma unroll
                    for (int e = 0; e < V; ++e)
                        gf_copy_async<(int)sizeof(T)>(
                            s + (XC ? k : k + e) * PITCH + (XC ? x + e : x),
                            XC ? (const void *)(p + e) : (const void *)(p + (int64_t)e * sk),
                            (int)sizeof(T));
                }
            }
            return;
        }
#pragma unroll
        for (int r = 0; r < COUNT; ++r) {
            const int x = xl(r), k = kl(r);
            const T *p = base + (int64_t)x * sx + (int64_t)k * sk;
            if (XC && V > 1) {
                int valid = V;
                if (!interior) {
                    const int64_t lim = k < krem ? xrem - x : 0;
                    valid = lim >= V ? V : (lim > 0 ? (int)lim : 0);
                }
                if (valid == V) {
                    gf_copy_async<16>(s + k * PITCH + x, p, 16);
                } else {
                    /* A run cut by the matrix's edge goes element by element, so that nothing
                     * past the last element is addressed: a 16-byte copy with a shorter source
                     * size reads no more, but memory checkers count all 16 bytes (a buffer of
                     * exactly the matrix's size was reported under compute-sanitizer). */
#pragma unroll
                    for (int e = 0; e < V; ++e)
                        gf_copy_async<(int)sizeof(T)>(s + k * PITCH + x + e,
                                                      e < valid ? (const void *)(p + e)
                                                                : (const void *)base,
                                                      e < valid ? (int)sizeof(T) : 0);
                }
            } else {
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const int xe = XC ? x + e : x, ke = XC ? k : k + e;
                    const bool ok = interior || (xe < xrem && ke < krem);
                    const T *q = XC ? p + e : p + (int64_t)e * sk;
                    gf_copy_async<(int)sizeof(T)>(s + ke * PITCH + xe,
                                                  ok ? (const void *)q : (const void *)base,
                                                  ok ? (int)sizeof(T) : 0);
                }
            }
        }
    }

    /* cp.async path for a tile cut by the matrix's edge along x only (every k of the slice
     * inside; see fetch_rows): stepped addresses, each copy's source size set by its x alone,
     * zero past xrem. */
    DUET_DEVICE void copy_async_rows(T *s, const T *base, int64_t sx, int64_t sk,
                                     int64_t xrem) const
    {
        const T *p = base + (int64_t)xl0 * sx + (int64_t)kl0 * sk;
        const int64_t step = (int64_t)OSTEP * (XC ? sk : sx);
#pragma unroll
        for (int r = 0; r < COUNT; ++r, p += step) {
            const int x = xl(r), k = kl(r);
            const int64_t lim = xrem - x;
            if (XC && V > 1 && lim >= V) {
                gf_copy_async<16>(s + k * PITCH + x, p, 16);
            } else {
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const bool ok = XC ? e < lim : lim > 0;
                    const T *q = XC ? p + e : p + (int64_t)e * sk;
                    gf_copy_async<(int)sizeof(T)>(s + (XC ? k : k + e) * PITCH + (XC ? x + e : x),
                                                  ok ? (const void *)q : (const void *)base,
                                                  ok ? (int)sizeof(T) : 0);
                }
            }
        }
    }
};

#endif /* DUET_KERNELS_GEMM_FAST_TILE_CUH */
