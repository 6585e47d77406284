/* gemm_fast.cuh - the AUTO GEMM: register-tiled FMA kernel, and the launcher for every engine. */
#ifndef DUET_KERNELS_GEMM_FAST_CUH
#define DUET_KERNELS_GEMM_FAST_CUH

#include "compat.h"
#include "gemm_fast_dmma.cuh"
#if defined(DUET_HAVE_WGMMA) && DUET_GPU_CUDA
#include "cuda/gemm_dmma_tma.h" /* the sm_90a f64 kernel on TMA loads (its own translation unit) */
#endif
#include "gemm_fast_tile.cuh"
#include "gemm_splitk.cuh"
#include "transpose.cuh"

#include "common/internal.h"
#include "common/tuning.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>

/*
 * The FMA kernel (every dtype, every device).
 *
 * A block computes a BM x BN tile of C; its THREADS threads form a (BM/TM) x (BN/TN) grid and
 * each owns TM x TN outputs in registers. Per k-step a thread reads TM values of A and TN of B
 * from shared memory and does TM * TN fused multiply-adds: a 16 x 8 tile (the H100's f32 shape)
 * spends 128 FMAs per six 16-byte shared loads, so the multiply pipes, not shared memory, set
 * the pace.
 *
 * A thread's TM rows are not contiguous: they are TM / VR groups of VR (one 16-byte vector)
 * spaced BM / (TM / VR) apart, and likewise for columns. Neighbouring threads then read
 * neighbouring 16-byte vectors of a shared row, so the 8 lanes of each quarter-warp cover 128
 * contiguous bytes (no bank conflict), where contiguous 8-wide blocks per thread would put two
 * lanes on each bank. The same spacing makes each row of a warp's C stores one contiguous run.
 *
 * Pipelines (STAGES from the tuning table):
 *   STAGES == 2: register-staged double buffer. It runs on every device and is the only
 *     pipeline where there is no cp.async (AMD, sm_70): the next slice is loaded into registers
 *     before the inner product of the current one and written to the other shared buffer after
 *     it, so the global latency hides behind BK k-steps of FMAs. It also transposes 16-byte loads of a
 *     k-contiguous operand on the way to shared memory, which is why the H100's large f32 tile
 *     uses it (4% faster than the ring there: docs/performance.md).
 *   STAGES >= 3: a ring of shared stages filled by cp.async (sm_80+): STAGES - 1 slices are in
 *     flight while one is multiplied, with no registers held for them.
 * Either way one barrier per slice.
 */

/* Blocks per SM the register budget is capped for (256-thread blocks): one for 128 accumulator
 * registers per thread and more (such a thread needs up to 255; 128-thread blocks still fit
 * two), two for 64 (at most 128 registers, 16 warps per SM: enough for the FMA latency) and for
 * any register-staged pipeline (its staging registers spill under a tighter cap), three
 * otherwise. */
template <typename T, int TM, int TN, int STAGES>
constexpr int gf_fma_min_blocks()
{
    return TM * TN * (int)sizeof(T) / 4 >= 128                  ? 1
           : (TM * TN * (int)sizeof(T) / 4 >= 64 || STAGES == 2) ? 2
                                                                 : 3;
}

template <typename T, int BM, int BN, int BK, int TM, int TN, int THREADS, int STAGES, bool AXC,
          int AV, bool BXC, int BV, bool HALF>
DUET_GLOBAL void GF_LAUNCH_BOUNDS(THREADS, (gf_fma_min_blocks<T, TM, TN, STAGES>()))
    gemm_fast_fma_kernel(const gf_args<T> p)
{
    constexpr bool ASYNC = STAGES > 2;
    constexpr int VR = 16 / (int)sizeof(T);
    constexpr int TX = BN / TN, TY = BM / TM;
    constexpr int APITCH = BM + GF_PAD, BPITCH = BN + GF_PAD;
    constexpr int ASTAGE = BK * APITCH, BSTAGE = BK * BPITCH;
    static_assert(TX * TY == THREADS, "the thread grid covers the tile");
    static_assert(TM % VR == 0 && TN % VR == 0, "thread tiles are whole 16-byte vectors");
    static_assert(STAGES >= 2, "double buffering at least");
    static_assert(!HALF || (STAGES > 2 && (TM / VR) % 2 == 0),
                  "HALF: a ring whose threads' rows split evenly at BM / 2");

    __shared__ __align__(16) T smem[STAGES * (ASTAGE + BSTAGE)];
    T *As = smem;
    T *Bs = smem + STAGES * ASTAGE;

    using LA = gf_loader<T, BM, BK, THREADS, AXC, AV>;
    using LB = gf_loader<T, BN, BK, THREADS, BXC, BV>;
    const int tid = threadIdx.x;
    const LA la(tid);
    const LB lb(tid);
    const int tx = tid % TX, ty = tid / TX;
    const int64_t tiles = p.tiles_m * p.tiles_n;
    int64_t k_begin, k_len;
    gf_slice(p, &k_begin, &k_len);
    const int64_t kt_count = (k_len + BK - 1) / BK;

    for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
        for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int64_t tm, tn;
            gf_tile_coords(tile, p.tiles_m, p.tiles_n, &tm, &tn);
            const int64_t m0 = tm * BM, n0 = tn * BN;
            const int64_t mrem = p.m - m0, nrem = p.n - n0;
            /* A(m0, 0) and B(0, n0) of this batch; A walks x = m, B walks x = n. */
            const T *a = p.a.base + bz * p.a.bs + m0 * p.a.rs + k_begin * p.a.cs;
            const T *b = p.b.base + bz * p.b.bs + n0 * p.b.cs + k_begin * p.b.rs;
            const bool a_full = mrem >= BM, b_full = nrem >= BN;

            T acc[TM][TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

            /* half: the tile's rows past BM / 2 lie outside m, and their products are
             * skipped (a thread's rows i >= TM / 2 are exactly those). */
            auto multiply = [&](const T *as, const T *bs, auto half) {
                constexpr int ROWS = decltype(half)::value != 0 ? TM / 2 : TM;
#pragma unroll
                for (int kk = 0; kk < BK; ++kk) {
                    T af[TM], bf[TN];
#pragma unroll
                    for (int gi = 0; gi < ROWS / VR; ++gi) {
                        const gf_vec<T> v = gf_load16(as + kk * APITCH + gi * TY * VR + ty * VR);
#pragma unroll
                        for (int e = 0; e < VR; ++e) af[gi * VR + e] = v.e[e];
                    }
#pragma unroll
                    for (int gj = 0; gj < TN / VR; ++gj) {
                        const gf_vec<T> v = gf_load16(bs + kk * BPITCH + gj * TX * VR + tx * VR);
#pragma unroll
                        for (int e = 0; e < VR; ++e) bf[gj * VR + e] = v.e[e];
                    }
                    /* Rows in a zigzag: odd rows walk the columns backwards, so every FMA
                     * shares an operand with the one before (af[i] along a row, bf[j] at the
                     * turn) and can take it from the operand reuse cache. With two operands
                     * to read instead of three, ptxas can keep them in different register
                     * banks: the FMA loop of the 128 x 128 tile has 88 instead of 140 FMAs
                     * whose operands collide in a bank, the 128 x 64 tile 70 instead of 150
                     * (sm_90 SASS). Each output still adds its products in ascending k. */
#pragma unroll
                    for (int i = 0; i < ROWS; ++i)
#pragma unroll
                        for (int jj = 0; jj < TN; ++jj) {
                            const int j = (i & 1) ? TN - 1 - jj : jj;
                            acc[i][j] = gf_fma(af[i], bf[j], acc[i][j]);
                        }
                }
            };

            /*
             * The k-loop exists twice (kloop, EDGE a compile-time flag): once for tiles inside
             * m and n with a whole slice at least, once for the others. Inside, a partial last
             * slice of k is loaded first (with every test, as logical slice 0; logical slice
             * t >= 1 is then global slice t - 1), so the loop's loads are all of whole slices
             * inside the matrix and take gf_loader's stepped path with no test (the scheme of
             * gemm_fast_dmma.cuh). The edge loop tests each slice as before. On the H100, with
             * the zigzag above, the 128 x 128 tile's loop went from 1,279 to 1,173 instructions
             * per 1,024 FMAs and 4096^3 from 0.85x to 0.96x cuBLAS; the 128 x 64 ring's from 910
             * to 660 per 512 FMAs and 1024^3 from 0.83x to 0.90x (docs/performance.md).
             */
            const int64_t k_whole = k_len / BK, last = kt_count - 1;
            const int res = kt_count > k_whole ? 1 : 0; /* one partial slice, taken first */
            if (ASYNC) {
                /* Logical slice t's copies. Every tile takes the partial slice first, with
                 * every test; the whole slices after it are copied untested, or, in an edge
                 * tile (EDGE) by an operand cut along x, tested against x alone (the same
                 * tests in every slice; before, an edge tile tested x and k on every copy of
                 * every slice). On the H100 1000^3, one wave of 128 x 64 tiles whose last row
                 * and column are cut, went from 83 to 78.6 us, 333 x 777 x 5555 from 121 to
                 * 116 us (docs/performance.md). */
                auto issue = [&](int64_t t, int stage, auto edge) {
                    constexpr bool EDGE = decltype(edge)::value != 0;
                    const bool whole = !(res && t == 0);
                    const int64_t gk = !res ? t : (t == 0 ? k_whole : t - 1);
                    const int64_t k0 = gk * BK, krem = k_len - k0;
                    T *sa = As + stage * ASTAGE, *sb = Bs + stage * BSTAGE;
                    const T *ga = a + k0 * p.a.cs, *gb = b + k0 * p.b.rs;
                    if (EDGE && whole && !a_full)
                        la.copy_async_rows(sa, ga, p.a.rs, p.a.cs, mrem);
                    else
                        la.copy_async(sa, ga, p.a.rs, p.a.cs, mrem, krem, whole);
                    if (EDGE && whole && !b_full)
                        lb.copy_async_rows(sb, gb, p.b.cs, p.b.rs, nrem);
                    else
                        lb.copy_async(sb, gb, p.b.cs, p.b.rs, nrem, krem, whole);
                };
                auto kloop = [&](auto edge, auto half) {
#pragma unroll
                    for (int s = 0; s < STAGES - 1; ++s) {
                        if (s < kt_count) issue(s, s, edge);
                        gf_copy_commit();
                    }
                    int read_stage = 0, write_stage = STAGES - 1;
                    for (int64_t kt = 0; kt < kt_count; ++kt) {
                        /* Publishes slice kt and retires the stage the next copy overwrites
                         * (it was read in the previous iteration), with one barrier. */
                        gf_copy_wait<(STAGES > 2 ? STAGES - 2 : 0)>();
                        duet_barrier();
                        if (kt + STAGES - 1 < kt_count) issue(kt + STAGES - 1, write_stage, edge);
                        gf_copy_commit();
                        write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
                        multiply(As + read_stage * ASTAGE, Bs + read_stage * BSTAGE, half);
                        read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
                    }
                };
                if constexpr (HALF)
                    kloop(gf_int<1>(), gf_int<1>());
                else if (a_full && b_full && k_whole >= 1)
                    kloop(gf_int<0>(), gf_int<0>());
                else
                    kloop(gf_int<1>(), gf_int<0>());
                gf_copy_wait<0>();
            } else {
                T ra[LA::COUNT][AV], rb[LB::COUNT][BV];
                /* Global slice gk into registers, tested where EDGE. */
                auto fetch = [&](int64_t gk, auto edge) {
                    constexpr bool EDGE = decltype(edge)::value != 0;
                    const int64_t k0 = gk * BK, krem = k_len - k0;
                    la.fetch(ra, a + k0 * p.a.cs, p.a.rs, p.a.cs, mrem, krem,
                             !EDGE || (a_full && krem >= BK));
                    lb.fetch(rb, b + k0 * p.b.rs, p.b.cs, p.b.rs, nrem, krem,
                             !EDGE || (b_full && krem >= BK));
                };
                /* The next slice's loads sit behind a branch, in a block of their own, and
                 * ptxas issues them before the FMAs. In one block with the FMAs (the loop
                 * without a branch, past the last slice loading the last one again) it sank
                 * them past half the slice, which left their latency exposed at one block per
                 * SM: 8192 x 128 x 8192 unsplit ran at 0.32x cuBLAS against 0.42x. The machine
                 * code is fragile here (a rewrite of this loop with the same semantics had
                 * ptxas move the whole branch behind the FMAs: 4096^3 at 0.70x); check the
                 * SASS when changing it. */
                auto kloop = [&](auto edge) {
                    constexpr bool EDGE = decltype(edge)::value != 0;
                    if (EDGE || !res)
                        fetch(0, edge);
                    else
                        fetch(k_whole, gf_int<1>());
                    la.store(As, ra);
                    lb.store(Bs, rb);
                    duet_barrier();
                    for (int64_t kt = 0; kt < kt_count; ++kt) {
                        const int cur = (int)(kt & 1);
                        if (kt < last) fetch(EDGE ? kt + 1 : kt + 1 - res, edge);
                        multiply(As + cur * ASTAGE, Bs + cur * BSTAGE, gf_int<0>());
                        /* on the last slice: the last slice again, into the buffer nobody
                         * reads (no branch around the stores) */
                        la.store(As + (cur ^ 1) * ASTAGE, ra);
                        lb.store(Bs + (cur ^ 1) * BSTAGE, rb);
                        duet_barrier();
                    }
                };
                /* Element-wise loads (operands not 16-byte aligned) keep the loop as it was,
                 * one for every tile, tests chosen per slice: 4095 x 4097 x 4093 ran at 0.79x
                 * cuBLAS with kloop (every tile), 0.86x with kloop's edge loop for every tile,
                 * 0.90x with this one. */
                if constexpr (AV > 1 && BV > 1) {
                    if (a_full && b_full && k_whole >= 1)
                        kloop(gf_int<0>());
                    else
                        kloop(gf_int<1>());
                } else {
                    fetch(0, gf_int<1>());
                    la.store(As, ra);
                    lb.store(Bs, rb);
                    duet_barrier();
                    for (int64_t kt = 0; kt < kt_count; ++kt) {
                        const int cur = (int)(kt & 1);
                        if (kt + 1 < kt_count) fetch(kt + 1, gf_int<1>());
                        multiply(As + cur * ASTAGE, Bs + cur * BSTAGE, gf_int<0>());
                        if (kt + 1 < kt_count) {
                            la.store(As + (cur ^ 1) * ASTAGE, ra);
                            lb.store(Bs + (cur ^ 1) * BSTAGE, rb);
                        }
                        duet_barrier();
                    }
                }
            }

            /* Epilogue: alpha * acc + beta * C; beta == 0 never reads C. */
            T *cb = p.c + (int64_t)blockIdx.y * p.c_ss + bz * p.c_bs;
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const int64_t gm = m0 + (i / VR) * TY * VR + ty * VR + i % VR;
                if (gm >= p.m) continue;
                T *crow = cb + gm * p.c_rs;
#pragma unroll
                for (int gj = 0; gj < TN / VR; ++gj) {
                    const int64_t gn = n0 + gj * TX * VR + tx * VR;
                    if (p.c_vec && gn + VR <= p.n) {
                        gf_vec<T> o;
#pragma unroll
                        for (int e = 0; e < VR; ++e) o.e[e] = p.alpha * acc[i][gj * VR + e];
                        if (!p.beta_zero) {
                            const gf_vec<T> old = gf_load16(crow + gn);
#pragma unroll
                            for (int e = 0; e < VR; ++e) o.e[e] = gf_fma(p.beta, old.e[e], o.e[e]);
                        }
                        gf_store16(crow + gn, o);
                    } else {
#pragma unroll
                        for (int e = 0; e < VR; ++e) {
                            if (gn + e >= p.n) break;
                            T *q = crow + (gn + e) * p.c_cs;
                            const T v = p.alpha * acc[i][gj * VR + e];
                            *q = p.beta_zero ? v : gf_fma(p.beta, *q, v);
                        }
                    }
                }
            }
            /* The next tile's first copies overwrite the shared buffers. */
            duet_barrier();
        }
    }
}

/* ---- launcher ----------------------------------------------------------------------------- */

/*
 * Shapes compiled per engine and dtype, written (bm, bn, bk, tm, tn, threads, stages). Every
 * shape a row of src/common/tuning.c names must be listed here; a row naming another shape
 * falls back to its dtype's default row. Each shape is compiled for the operand layouts below
 * (16 register-staged kernels, 9 for a cp.async ring), so the lists stay short.
 */
/* The AMD rows' f32/i32 shape: 128 x 128 x 8 with 16 x 8 per thread spills i32 on gfx90a and
 * gfx940, 64 x 64 x 16 with 4 x 4 compiles without scratch but for i32 on gfx1030 (36 bytes,
 * docs/hip-resources.md). Compiled for HIP only: no CUDA row names it, so CUDA builds keep
 * exactly their kernels. */
#if DUET_GPU_HIP
#define GF_FMA_SHAPES_F32_AMD(X) X(64, 64, 16, 4, 4, 256, 2)
#else
#define GF_FMA_SHAPES_F32_AMD(X)
#endif /* DUET_GPU_HIP */
#ifndef GF_FMA_SHAPES_F32
#define GF_FMA_SHAPES_F32(X)                                                                       \
    X(128, 128, 8, 16, 8, 128, 2)                                                                  \
    X(128, 64, 16, 8, 4, 256, 3)                                                                   \
    X(128, 64, 16, 8, 4, 256, 2)                                                                   \
    GF_FMA_SHAPES_F32_AMD(X)
#endif
#ifndef GF_FMA_SHAPES_I32
#define GF_FMA_SHAPES_I32(X) GF_FMA_SHAPES_F32(X)
#endif
#ifndef GF_FMA_SHAPES_F64
#define GF_FMA_SHAPES_F64(X)                                                                       \
    X(128, 64, 8, 8, 4, 256, 2)                                                                    \
    X(64, 64, 8, 4, 4, 256, 2)
#endif
#ifndef GF_DMMA_SHAPES
#define GF_DMMA_SHAPES(X)                                                                          \
    X(128, 128, 16, 64, 32, 256, 3)                                                                \
    X(128, 64, 16, 64, 32, 128, 3)                                                                 \
    X(64, 64, 16, 32, 32, 128, 3)
#endif

template <typename T>
struct gf_dtype;
template <>
struct gf_dtype<float> {
    static constexpr duet_dtype id = DUET_DTYPE_F32;
    static const char *name() { return "f32"; }
};
template <>
struct gf_dtype<double> {
    static constexpr duet_dtype id = DUET_DTYPE_F64;
    static const char *name() { return "f64"; }
};
template <>
struct gf_dtype<uint32_t> {
    static constexpr duet_dtype id = DUET_DTYPE_I32;
    static const char *name() { return "i32"; }
};

/*
 * Operand layout, one of four per operand, chosen at run time from the strides:
 *   GF_X_VEC: walked along x (m for A, n for B) with 16-byte vectors: unit stride along x, and
 *             the base, the k stride and the batch stride all keep 16-byte alignment;
 *   GF_X_ONE: walked along x one element at a time (unit stride but unaligned, or no unit
 *             stride and x the smaller stride);
 *   GF_K_ONE: walked along k one element at a time (unit stride along k: row-major A,
 *             column-major B, unaligned);
 *   GF_K_VEC: walked along k with 16-byte vectors (aligned row-major A, column-major B). The
 *             register-staged pipeline transposes each vector on its way to shared memory (one
 *             16-byte load instead of four 4-byte loads: about 3% on an H100); a cp.async ring
 *             cannot transpose and uses GF_K_ONE instead, whose lanes along k still read whole
 *             32-byte sectors and store conflict-free into the k-major tile.
 */
enum { GF_X_VEC = 0, GF_X_ONE = 1, GF_K_ONE = 2, GF_K_VEC = 3 };

template <typename T>
static int gf_operand_layout(const void *base, int64_t sx, int64_t sk, int64_t bs, int64_t batch)
{
    const int64_t vn = 16 / (int64_t)sizeof(T);
    const bool base_ok = ((uintptr_t)base % 16) == 0 && (batch == 1 || bs % vn == 0);
    if (sx != 1 && (sk == 1 || sk < sx))
        return sk == 1 && base_ok && sx % vn == 0 ? GF_K_VEC : GF_K_ONE;
    if (sx != 1) return GF_X_ONE;
    return base_ok && sk % vn == 0 ? GF_X_VEC : GF_X_ONE;
}

/* The kernel template arguments of a layout: rings fold GF_K_VEC into GF_K_ONE, so both name
 * one instantiation. */
constexpr int gf_effective_layout(int l, bool ring) { return ring && l == GF_K_VEC ? GF_K_ONE : l; }
constexpr bool gf_walks_x(int l) { return l == GF_X_VEC || l == GF_X_ONE; }
constexpr int gf_vector_width(int l, int vn) { return l == GF_X_VEC || l == GF_K_VEC ? vn : 1; }

/* half: every tile of the grid lies at most half inside m (one row of tiles, 2 m <= BM). The
 * f32 ring then runs an instantiation whose k-loop skips the dead rows' FMAs: a split 64 x 64
 * output on the 128 x 64 tile did half its FMAs on zeros (64 x 64 x 65536 at 0.85x cuBLAS
 * against 1.02x without them, H100, docs/performance.md). A separate kernel rather than a third
 * loop in the same one: inside it, the extra loop changed the code ptxas made of the others
 * (1024^3 fell from 0.91x to 0.73x). f32 on CUDA only (no AMD row runs a ring): i32 and the
 * register-staged shapes keep one kernel per layout. */
template <typename T, int BM, int BN, int BK, int TM, int TN, int TH, int ST, int LA, int LB>
static void gf_launch_fma_layout(const gf_args<T> &args, bool half, dim3 grid,
                                 duet_gpu_stream_t stream)
{
    constexpr int VN = 16 / (int)sizeof(T);
    constexpr int la = gf_effective_layout(LA, ST > 2), lb = gf_effective_layout(LB, ST > 2);
    constexpr bool HALVES =
        DUET_GPU_CUDA && gf_dtype<T>::id == DUET_DTYPE_F32 && ST > 2 && (TM / VN) % 2 == 0;
    if constexpr (HALVES) {
        if (half) {
            gemm_fast_fma_kernel<T, BM, BN, BK, TM, TN, TH, ST, gf_walks_x(la),
                                 gf_vector_width(la, VN), gf_walks_x(lb), gf_vector_width(lb, VN),
                                 true><<<grid, TH, 0, stream>>>(args);
            return;
        }
    }
    gemm_fast_fma_kernel<T, BM, BN, BK, TM, TN, TH, ST, gf_walks_x(la), gf_vector_width(la, VN),
                         gf_walks_x(lb), gf_vector_width(lb, VN), false>
        <<<grid, TH, 0, stream>>>(args);
}

template <int BM, int BN, int BK, int WM, int WN, int TH, int ST, int AM, int AK, int LA, int LB>
static duet_gpu_error_t gf_launch_dmma_layout(const gf_args<double> &args, dim3 grid,
                                              duet_gpu_stream_t stream)
{
    /* An operand contiguous along k keeps its vectors (x-by-k tile, gemm_fast_dmma.cuh) where
     * the mma allows; otherwise k-walked operands are copied element by element. */
    constexpr bool axk = gf_dmma_xk(LA, AM, AK), bxk = gf_dmma_xk(LB, AM, AK);
    constexpr int la = axk ? LA : gf_effective_layout(LA, true);
    constexpr int lb = bxk ? LB : gf_effective_layout(LB, true);
    auto kernel = gemm_fast_dmma_kernel<BM, BN, BK, WM, WN, TH, ST, AM, AK, gf_walks_x(la),
                                        gf_vector_width(la, 2), gf_walks_x(lb),
                                        gf_vector_width(lb, 2)>;
    const int bytes = (int)gf_dmma_smem_bytes<BM, BN, BK, ST, AM, AK, axk, bxk>();
    const duet_gpu_error_t e = duet_gpu_func_set_max_dynamic_shared(kernel, bytes);
    if (e != DUET_GPU_SUCCESS) return e;
    kernel<<<grid, TH, bytes, stream>>>(args);
    return DUET_GPU_SUCCESS;
}

/* The 16 layout pairs as one switch (code = 4 * layout_a + layout_b). */
#define GF_LAYOUT_SWITCH(code, CALL)                                                               \
    switch (code) {                                                                                \
    case 0: CALL(0, 0); break;                                                                     \
    case 1: CALL(0, 1); break;                                                                     \
    case 2: CALL(0, 2); break;                                                                     \
    case 3: CALL(0, 3); break;                                                                     \
    case 4: CALL(1, 0); break;                                                                     \
    case 5: CALL(1, 1); break;                                                                     \
    case 6: CALL(1, 2); break;                                                                     \
    case 7: CALL(1, 3); break;                                                                     \
    case 8: CALL(2, 0); break;                                                                     \
    case 9: CALL(2, 1); break;                                                                     \
    case 10: CALL(2, 2); break;                                                                    \
    case 11: CALL(2, 3); break;                                                                    \
    case 12: CALL(3, 0); break;                                                                    \
    case 13: CALL(3, 1); break;                                                                    \
    case 14: CALL(3, 2); break;                                                                    \
    default: CALL(3, 3); break;                                                                    \
    }

static inline bool gf_same_tile(const dt_gemm_tile &t, int bm, int bn, int bk, int tm, int tn,
                                int th, int st)
{
    return t.bm == bm && t.bn == bn && t.bk == bk && t.tm == tm && t.tn == tn &&
           t.threads == th && t.stages == st;
}

/* Launches the FMA kernel of shape t if it is compiled for T (each dtype instantiates only
 * its own list); false when t is not in the list. */
#define GF_CALL_FMA(la, lb)                                                                        \
    gf_launch_fma_layout<T, BM_, BN_, BK_, TM_, TN_, TH_, ST_, la, lb>(args, half, grid, stream)
#define GF_TRY_FMA(bm, bn, bk, tm, tn, th, st)                                                     \
    if (gf_same_tile(t, bm, bn, bk, tm, tn, th, st)) {                                             \
        constexpr int BM_ = bm, BN_ = bn, BK_ = bk, TM_ = tm, TN_ = tn, TH_ = th, ST_ = st;         \
        GF_LAYOUT_SWITCH(code, GF_CALL_FMA)                                                        \
        return true;                                                                               \
    }
#define GF_FMA_DISPATCH(type, LIST)                                                                \
    static bool gf_launch_fma(const dt_gemm_tile &t, int code, const gf_args<type> &args,          \
                              bool half, dim3 grid, duet_gpu_stream_t stream)                      \
    {                                                                                              \
        typedef type T;                                                                            \
        LIST(GF_TRY_FMA)                                                                           \
        return false;                                                                              \
    }
/* The launchers are plain functions, so each instantiates every kernel of its dtype wherever
 * this header is included; an includer that compiles one dtype per translation unit
 * (src/gpu/gemm_fast_gpu.h) turns the others off. Calling gemm_fast_run for a dtype that is
 * off does not compile (no gf_launch_fma for it). */
#ifndef GF_COMPILE_F32
#define GF_COMPILE_F32 1
#endif
#ifndef GF_COMPILE_F64
#define GF_COMPILE_F64 1
#endif
#ifndef GF_COMPILE_I32
#define GF_COMPILE_I32 1
#endif
#if GF_COMPILE_F32
GF_FMA_DISPATCH(float, GF_FMA_SHAPES_F32)
#endif
#if GF_COMPILE_F64
GF_FMA_DISPATCH(double, GF_FMA_SHAPES_F64)
#endif
#if GF_COMPILE_I32
GF_FMA_DISPATCH(uint32_t, GF_FMA_SHAPES_I32)
#endif
#undef GF_FMA_DISPATCH
#undef GF_TRY_FMA
#undef GF_CALL_FMA

/* Launches the DMMA kernel of shape t with the AM x 8 x AK mma; false when t is not listed. */
#define GF_CALL_DMMA(la, lb)                                                                       \
    *err = gf_launch_dmma_layout<BM_, BN_, BK_, TM_, TN_, TH_, ST_, AM, AK, la, lb>(args, grid,    \
                                                                                  stream)
#define GF_TRY_DMMA(bm, bn, bk, tm, tn, th, st)                                                    \
    if (gf_same_tile(t, bm, bn, bk, tm, tn, th, st)) {                                             \
        constexpr int BM_ = bm, BN_ = bn, BK_ = bk, TM_ = tm, TN_ = tn, TH_ = th, ST_ = st;         \
        GF_LAYOUT_SWITCH(code, GF_CALL_DMMA)                                                       \
        return true;                                                                               \
    }
template <int AM, int AK>
static bool gf_launch_dmma_atom(const dt_gemm_tile &t, int code, const gf_args<double> &args,
                                dim3 grid, duet_gpu_stream_t stream, duet_gpu_error_t *err)
{
    GF_DMMA_SHAPES(GF_TRY_DMMA)
    return false;
}
#undef GF_TRY_DMMA
#undef GF_CALL_DMMA

/* Only f64 has a tensor-core path: the other dtypes get this no-op overload. */
template <typename T>
static bool gf_launch_dmma(const dt_gemm_tile &, int, const gf_args<T> &, dim3, duet_gpu_stream_t,
                           const duet_device_props *, duet_gpu_error_t *)
{
    return false;
}
#if GF_COMPILE_F64
static bool gf_launch_dmma(const dt_gemm_tile &t, int code, const gf_args<double> &args,
                           dim3 grid, duet_gpu_stream_t stream, const duet_device_props *props,
                           duet_gpu_error_t *err)
{
#if DUET_GPU_CUDA
    /* sm_90 has the m16n8k* f64 shapes; sm_80 only m8n8k4. */
    if (props->capability_major >= 9)
        return gf_launch_dmma_atom<16, 8>(t, code, args, grid, stream, err);
    return gf_launch_dmma_atom<8, 4>(t, code, args, grid, stream, err);
#else
    return false;
#endif /* DUET_GPU_CUDA */
}
#endif /* GF_COMPILE_F64 */

/* Fills the kernel arguments of g for one shape. */
template <typename T>
static gf_args<T> gf_make_args(const dt_gemm *g, const dt_gemm_tile &t)
{
    gf_args<T> a;
    a.m = g->m;
    a.n = g->n;
    a.k = g->k;
    a.batch = g->batch < 1 ? 1 : g->batch;
    a.tiles_m = dt_ceil_div(g->m, t.bm);
    a.tiles_n = dt_ceil_div(g->n, t.bn);
    if (gf_dtype<T>::id == DUET_DTYPE_I32) {
        /* alpha and beta are int32 values; their uint32 images multiply modulo 2^32. */
        a.alpha = (T)(uint32_t)(int32_t)g->alpha;
        a.beta = (T)(uint32_t)(int32_t)g->beta;
    } else {
        a.alpha = (T)g->alpha;
        a.beta = (T)g->beta;
    }
    a.beta_zero = g->beta == 0.0;
    a.a.base = (const T *)g->a.base;
    a.a.rs = g->a.rs;
    a.a.cs = g->a.cs;
    a.a.bs = g->a.bs;
    a.b.base = (const T *)g->b.base;
    a.b.rs = g->b.rs;
    a.b.cs = g->b.cs;
    a.b.bs = g->b.bs;
    a.c = (T *)g->c.base;
    a.c_rs = g->c.rs;
    a.c_cs = g->c.cs;
    a.c_bs = g->c.bs;
    const int64_t vn = 16 / (int64_t)sizeof(T);
    a.c_vec = g->c.cs == 1 && ((uintptr_t)g->c.base % 16) == 0 && g->c.rs % vn == 0 &&
              (a.batch == 1 || g->c.bs % vn == 0);
    a.slice_k = g->k;
    a.c_ss = 0;
    return a;
}

/* Picks the row's large shape once its grid has large_waves blocks per compute unit; the small
 * shape below that (its grid is four or two times larger, so it fills the device sooner). */
static inline const dt_gemm_tile &gf_pick_tile(const dt_gemm_tuning *row, const dt_gemm *g,
                                               const duet_device_props *props)
{
    const int64_t batch = g->batch < 1 ? 1 : g->batch;
    const int64_t blocks =
        dt_ceil_div(g->m, row->large.bm) * dt_ceil_div(g->n, row->large.bn) * batch;
    const int64_t waves = row->large_waves > 0 ? row->large_waves : 1;
    return blocks < waves * props->compute_units ? row->small : row->large;
}

/*
 * Split-K (rule: dt_gemm_split_plan and dt_gemm_split_k in src/common/tuning.c). Only problems
 * the row sends to its small shape split (the large one is picked when its grid already fills
 * the device); the plan may move them to the large shape. The partial products go to the
 * stream's workspace (batch x m x n per slice), so nothing is allocated per call once the
 * workspace has grown to the largest split problem seen; when even that allocation fails the
 * problem runs unsplit on the planned shape (slower, and correct). Returns the split to run
 * (1: none) and sets *ws; an error other than out-of-memory (a lost device while the
 * workspace waits for the stream) is returned in *status.
 */
template <typename T>
static int gf_reserve_split(dt_context *ctx, void *be_stream, const dt_gemm *g, int split,
                            T **ws, duet_status *status)
{
    *ws = NULL;
    *status = DUET_SUCCESS;
    if (split <= 1) return 1;
    const int64_t batch = g->batch < 1 ? 1 : g->batch;
    const size_t bytes = (size_t)split * (size_t)batch * (size_t)g->m * (size_t)g->n * sizeof(T);
    void *p = NULL;
    const duet_status st = dt_workspace_reserve(ctx, be_stream, g->ws, bytes, "duet_gemm", &p);
    if (st == DUET_ERROR_OUT_OF_MEMORY) {
        dt_clear_error();
        return 1;
    }
    if (st != DUET_SUCCESS) {
        *status = st;
        return 1;
    }
    *ws = (T *)p;
    return split;
}

/* What one launch of gf_run_tile ran, for duet_launch_info. */
struct gf_ran {
    char name[64];
    dt_plan plan;
    int launches;
};

/*
 * Runs g on tile t of the row's engine, K split `planned` times (when the workspace allows).
 * Returns DUET_ERROR_UNSUPPORTED, without launching, when t is not compiled for T or the engine
 * cannot run on the device. When ran is not NULL it receives the kernel's name and launch.
 */
template <typename T>
static duet_status gf_run_tile(dt_context *ctx, void *be_stream, const dt_gemm *g,
                               duet_gpu_stream_t stream, const duet_device_props *props,
                               const dt_gemm_tuning *row, const dt_gemm_tile &t, int planned,
                               gf_ran *ran)
{
    gf_args<T> args = gf_make_args<T>(g, t);
    const bool dmma = row->engine == DT_GEMM_ENGINE_DMMA;
    if (dmma &&
        (!DUET_GPU_CUDA || gf_dtype<T>::id != DUET_DTYPE_F64 || props->capability_major < 8))
        return DUET_ERROR_UNSUPPORTED;
    /* The partial products of a split: raw sums (alpha 1, beta 0) into the workspace; C's
     * arguments stay in `out` for the reduction. */
    const gf_args<T> out = args;
#if defined(DUET_HAVE_WGMMA) && DUET_GPU_CUDA
    /* On sm_90 a DMMA problem of at most two well-filled rounds of 128 x 128 tiles (with the
     * planned split, or for the small tile's problems a split of its own) runs on the kernel fed
     * by TMA where the operands allow (src/cuda/gemm_dmma_tma.cu). */
    int tma_split = 0;
    if constexpr (gf_dtype<T>::id == DUET_DTYPE_F64) {
        if (dmma) {
            tma_split = gemm_dmma_tma_split(args, planned, props);
            /* A split of its own needs the workspace and stays within the row's bound (a
             * tuning file with split-K off gets none). */
            if (tma_split > 1 && tma_split != planned &&
                (!(ctx && g->ws) || tma_split > row->split.max))
                tma_split = 0;
            if (tma_split > 0) planned = tma_split;
        }
    }
#endif /* DUET_HAVE_WGMMA */
    T *ws = NULL;
    duet_status split_status = DUET_SUCCESS;
    const int split = gf_reserve_split<T>(ctx, be_stream, g, planned, &ws, &split_status);
    if (split_status != DUET_SUCCESS) return split_status;
    if (split > 1) {
        const int64_t vn = 16 / (int64_t)sizeof(T);
        args.slice_k = dt_gemm_split_slice_k(g->k, t.bk, split);
        args.c = ws;
        args.c_rs = g->n;
        args.c_cs = 1;
        args.c_bs = g->m * g->n;
        args.c_ss = args.batch * g->m * g->n;
        args.alpha = (T)1;
        args.beta = (T)0;
        args.beta_zero = 1;
        /* The workspace is allocation-aligned; rows are 16-byte aligned when n is. */
        args.c_vec = g->n % vn == 0;
    }

    const int64_t tiles = args.tiles_m * args.tiles_n;
    int64_t gx = tiles, gz = args.batch;
    if (props->max_grid_dims[0] > 0 && gx > props->max_grid_dims[0]) gx = props->max_grid_dims[0];
    if (gz > 65535) gz = 65535;
    if (props->max_grid_dims[2] > 0 && gz > props->max_grid_dims[2]) gz = props->max_grid_dims[2];
    const dim3 grid((unsigned)gx, (unsigned)split, (unsigned)gz);

    const int code = 4 * gf_operand_layout<T>(g->a.base, g->a.rs, g->a.cs, g->a.bs, args.batch) +
                     gf_operand_layout<T>(g->b.base, g->b.cs, g->b.rs, g->b.bs, args.batch);

    bool tma = false; /* the sm_90a kernel on TMA loads ran (its own tile and grid) */
    int threads = t.threads, tile_m = t.bm, tile_n = t.bn;
    /* The kernel's name (tile, "_splitk" and slices), formatted only for info or an error:
     * formatting costs more host time than the rest of a small GEMM's call. */
    char name[64];
    auto format_name = [&]() {
        if (dmma)
            snprintf(name, sizeof name, "gemm_auto_dmma%s_%dx%dx%d_f64", tma ? "_tma" : "", tile_m,
                     tile_n, t.bk);
        else
            snprintf(name, sizeof name, "gemm_auto_%dx%dx%d_%s", t.bm, t.bn, t.bk,
                     gf_dtype<T>::name());
        if (split > 1) {
            const size_t len = strlen(name);
            snprintf(name + len, sizeof name - len, "_splitk%d", split);
        }
    };
    size_t shared = 0;
    duet_gpu_error_t err = DUET_GPU_SUCCESS;
#if defined(DUET_HAVE_WGMMA) && DUET_GPU_CUDA
    if constexpr (gf_dtype<T>::id == DUET_DTYPE_F64) {
        /* The TMA kernel declines when the workspace gave no split (or a smaller one) and the
         * rounds no longer fill: the cp.async kernel below runs the tile then. */
        gemm_dmma_tma_ran tr;
        if (tma_split > 0 && gemm_dmma_tma_launch(args, split, stream, props, &err, &tr)) {
            tma = true;
            gx = tr.grid_x;
            gz = 1;
            threads = tr.threads;
            shared = tr.shared;
            tile_m = tr.tile_m;
            tile_n = tr.tile_n;
        }
    }
#endif /* DUET_HAVE_WGMMA */
    if (tma) {
        /* launched above */
    } else if (dmma) {
        /* The ring lives in dynamic shared memory, past the 48 KiB default. */
        shared = (size_t)t.stages * t.bk * ((t.bm + GF_PAD) + (t.bn + GF_PAD)) * sizeof(T);
        if (shared > props->shared_mem_per_block_optin) return DUET_ERROR_UNSUPPORTED;
        if (!gf_launch_dmma(t, code, args, grid, stream, props, &err))
            return DUET_ERROR_UNSUPPORTED;
    } else {
        const bool half = args.tiles_m == 1 && 2 * g->m <= t.bm;
        if (!gf_launch_fma(t, code, args, half, grid, stream)) return DUET_ERROR_UNSUPPORTED;
    }
    if (err == DUET_GPU_SUCCESS) err = duet_gpu_get_last_error();
    unsigned reduce_grid = 0;
    if (err == DUET_GPU_SUCCESS && split > 1) {
        gemm_splitk_args<T> r;
        r.ws = ws;
        r.split = split;
        r.slice_stride = args.c_ss;
        r.m = g->m;
        r.n = g->n;
        r.c = out.c;
        r.c_rs = out.c_rs;
        r.c_cs = out.c_cs;
        r.c_bs = out.c_bs;
        r.alpha = out.alpha;
        r.beta = out.beta;
        r.beta_zero = out.beta_zero;
        err = gemm_splitk_reduce<T>(r, props->max_grid_dims[0], stream, &reduce_grid);
    }
    if (err != DUET_GPU_SUCCESS) {
        format_name();
        duet_status status = DUET_ERROR_LAUNCH_FAILED;
#if defined(DUET_RUNTIME_CUDA_H) || defined(DUET_RUNTIME_HIP_H)
        /* Inside the backend: an error that poisons the context is reported as such. */
        if (duet_gpu_error_class(err) == DUET_GPU_CLASS_STICKY) status = DUET_ERROR_DEVICE_LOST;
#endif /* the backend's runtime header */
        if (reduce_grid)
            return dt_fail(status, "duet_gemm",
                           "launch of gemm_splitk_reduce<<<%u, %d>>> after %s: %s", reduce_grid,
                           GEMM_SPLITK_THREADS, name, duet_gpu_error_string(err));
        return dt_fail(status, "duet_gemm", "launch of %s<<<(%u,%d,%u), %d, %zu>>>: %s", name,
                       (unsigned)gx, split, (unsigned)gz, threads, shared,
                       duet_gpu_error_string(err));
    }

    /* ran reports the GEMM kernel's launch (the reduction's is small and fixed). */
    if (!ran) return DUET_SUCCESS;
    format_name();
    snprintf(ran->name, sizeof ran->name, "%s", name);
    ran->plan.algo = DUET_ALGO_AUTO;
    ran->plan.tile = t.bm;
    ran->plan.cfg.grid.x = (uint32_t)gx;
    ran->plan.cfg.grid.y = (uint32_t)split;
    ran->plan.cfg.grid.z = (uint32_t)gz;
    ran->plan.cfg.block.x = (uint32_t)threads;
    ran->plan.cfg.block.y = 1;
    ran->plan.cfg.block.z = 1;
    ran->plan.cfg.shared_bytes = shared;
    ran->launches = split > 1 ? 2 : 1;
    return DUET_SUCCESS;
}

/* Whether the FMA kernel of shape t is compiled for T (the list gf_launch_fma tries). */
#define GF_IS_FMA(bm, bn, bk, tm, tn, th, st)                                                      \
    if (gf_same_tile(t, bm, bn, bk, tm, tn, th, st)) return true;
#define GF_FMA_LISTED(type, LIST)                                                                  \
    static bool gf_fma_listed(const dt_gemm_tile &t, const type *)                                 \
    {                                                                                              \
        LIST(GF_IS_FMA)                                                                            \
        return false;                                                                              \
    }
GF_FMA_LISTED(float, GF_FMA_SHAPES_F32)
GF_FMA_LISTED(double, GF_FMA_SHAPES_F64)
GF_FMA_LISTED(uint32_t, GF_FMA_SHAPES_I32)
#undef GF_FMA_LISTED
#undef GF_IS_FMA

/* One launch (and its reduction) of a plan: rows [m0, m0 + m) and columns [n0, n0 + n) of C
 * (all of K), on tile t, K split `split` times. */
struct gf_part {
    int64_t m0, n0, m, n;
    const dt_gemm_tile *t;
    int split;
};

/* g restricted to rows [m0, m0 + m) of op(A) and C and columns [n0, n0 + n) of op(B) and C. */
template <typename T>
static dt_gemm gf_view(const dt_gemm *g, int64_t m0, int64_t n0, int64_t m, int64_t n)
{
    dt_gemm v = *g;
    v.m = m;
    v.n = n;
    v.a.base = (T *)g->a.base + m0 * g->a.rs;
    v.b.base = (T *)g->b.base + n0 * g->b.cs;
    v.c.base = (T *)g->c.base + m0 * g->c.rs + n0 * g->c.cs;
    return v;
}

/*
 * The parts of block v of the problem (at m0, n0) with no edge split off: one part, on the shape
 * gf_pick_tile picks (split by dt_gemm_split_plan when that is the small one); or two, when the
 * large shape's last round would leave most slots idle (dt_gemm_tail_plan, FMA rows): the rows
 * of the full rounds unsplit, then the rows after them split. Returns the count.
 */
template <typename T>
static int gf_plan_rounds(dt_context *ctx, const dt_gemm *v, int64_t m0, int64_t n0,
                          const duet_device_props *props, const dt_gemm_tuning *row, gf_part *out)
{
    const dt_gemm_tile *tp = &gf_pick_tile(row, v, props);
    const int64_t nb = v->batch < 1 ? 1 : v->batch;
    int planned = 1;
    int64_t top = 0;
    if (ctx && v->ws && tp == &row->small) {
        /* The DMMA kernel's large shape takes a split only where both operands are read in
         * 16-byte runs: with rows not 16-byte aligned (127 x 129 x 16383, 8191 x 131 x 8189)
         * the small shape's split is 25-50% faster on the H100 (docs/performance.md). */
        dt_gemm_tuning r = *row;
        if (row->engine == DT_GEMM_ENGINE_DMMA) {
            const int la = gf_operand_layout<T>(v->a.base, v->a.rs, v->a.cs, v->a.bs, nb);
            const int lb = gf_operand_layout<T>(v->b.base, v->b.cs, v->b.rs, v->b.bs, nb);
            if ((la != GF_X_VEC && la != GF_K_VEC) || (lb != GF_X_VEC && lb != GF_K_VEC))
                r.split.large_fill = 0;
        }
        tp = dt_gemm_split_plan(&r, v->m, v->n, v->k, nb, props->compute_units, &planned) ==
                     &r.large
                 ? &row->large
                 : &row->small;
    } else if (ctx && v->ws && row->engine == DT_GEMM_ENGINE_FMA && row->split.tail > 0) {
        int s = 1;
        const dt_gemm_tile *tt =
            dt_gemm_tail_plan(row, v->m, v->n, v->k, nb, props->compute_units, &top, &s);
        if (tt) {
            tp = tt;
            planned = s;
        } else {
            top = 0;
        }
    }
    if (top == 0) {
        out[0] = {m0, n0, v->m, v->n, tp, planned};
        return 1;
    }
    out[0] = {m0, n0, top, v->n, &row->large, 1};
    out[1] = {m0 + top, n0, v->m - top, v->n, tp, planned};
    return 2;
}

/* How one operand is copied before the GEMM (DT_GEMM_EDGE_PACK): `runs` runs of `len`
 * contiguous elements, each to a row of `ld` (len rounded up to 16 bytes) at ws + offset. */
struct gf_pack {
    bool on;
    bool along_rows; /* the runs are the view's rows (unit column stride), else its columns */
    int64_t runs, len, ld;
    size_t offset, bytes;
};

/* The copy of operand view v (rows x cols, batch 1) when it has a unit stride but rows that are
 * not 16-byte aligned (the element-wise loaders): in its own orientation, rows padded. */
template <typename T>
static gf_pack gf_pack_plan(const dt_view &v, int64_t rows, int64_t cols, int layout)
{
    gf_pack p = {};
    const int64_t vn = 16 / (int64_t)sizeof(T);
    if (layout == GF_X_VEC || layout == GF_K_VEC || rows <= 1 || cols <= 1) return p;
    if (v.cs == 1) {
        p.along_rows = true;
        p.runs = rows;
        p.len = cols;
    } else if (v.rs == 1) {
        p.runs = cols;
        p.len = rows;
    } else {
        return p; /* no unit stride: not a row copy */
    }
    p.on = true;
    p.ld = (p.len + vn - 1) / vn * vn;
    p.bytes = ((size_t)p.runs * (size_t)p.ld * sizeof(T) + 255) & ~(size_t)255;
    return p;
}

/* Queues the copy of p from view v into ws + p.offset and points v at the copy. */
template <typename T>
static duet_gpu_error_t gf_pack_run(const gf_pack &p, dt_view *v, void *ws,
                                    const duet_device_props *props, duet_gpu_stream_t stream)
{
    T *dst = (T *)((unsigned char *)ws + p.offset);
    dt_copy2d c;
    memset(&c, 0, sizeof c);
    c.elem = sizeof(T);
    c.rows = p.runs;
    c.cols = p.len;
    c.batch = 1;
    c.in.base = v->base;
    c.in.rs = p.along_rows ? v->rs : v->cs;
    c.in.cs = 1;
    c.out.base = dst;
    c.out.rs = p.ld;
    c.out.cs = 1;
    /* Moved as unsigned integers of T's size: the instantiations duet_transpose has. */
    typedef typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type U;
    static_assert(sizeof(U) == sizeof(T), "4- or 8-byte elements");
    duet_auto_result r;
    const duet_gpu_error_t e = transpose_auto_launch<U>(&c, props, stream, &r);
    v->base = dst;
    v->rs = p.along_rows ? p.ld : 1;
    v->cs = p.along_rows ? 1 : p.ld;
    v->bs = 0;
    return e;
}

/* The kernel name of part `ran` after the first: without "gemm_auto_" and the dtype (the
 * first part names them), so that three parts fit duet_launch_info.kernel. */
static void gf_short_name(const char *name, const char *dtype, char *out, size_t size)
{
    if (strncmp(name, "gemm_auto_", 10) == 0) name += 10;
    char d[16];
    snprintf(d, sizeof d, "_%s", dtype);
    const char *at = strstr(name, d);
    if (!at) {
        snprintf(out, size, "%s", name);
        return;
    }
    snprintf(out, size, "%.*s%s", (int)(at - name), name, at + strlen(d));
}

/*
 * Runs g with the given row (tests and benchmarks can pass rows of their own). Returns
 * DUET_ERROR_UNSUPPORTED, without launching, when the row's shape is not compiled for T or
 * its engine cannot run on the device; gemm_fast_run then falls back to the default row.
 * ctx and be_stream (the backend's stream pointer, for the workspace) may be NULL: then K is
 * never split.
 *
 * A problem may run in parts, each a plain GEMM on views of A, B and C (gf_part), so that each
 * part's results are those of that part run alone: fixed by shape and device.
 *   - The tail (gf_plan_rounds, dt_gemm_tail_plan): a large-shape problem whose last round of
 *     tiles would leave most slots idle runs the rows of the full rounds unsplit, then the rows
 *     after them split. "+" in the name.
 *   - The edges (the row's split.edges, FMA rows). Problems gf_pick_tile sends to the large
 *     shape: with DT_GEMM_EDGE_PACK, operands whose rows are not 16-byte aligned are first
 *     copied into the stream's workspace with aligned rows when the copy pays
 *     (dt_gemm_pack_pays; one matrix, not batches), and the parts read the copies; with
 *     DT_GEMM_EDGE_STRIP, a partial last column of large tiles runs as a GEMM of its own
 *     (dt_gemm_edge_cols: always when both operands are read in 16-byte vectors, else where it
 *     saves a round). A problem the split plan runs (the small shape's, or with the tail rule
 *     one of less than a round of large tiles) splits off that column where the plan then
 *     fills its slots better (dt_gemm_edge_cols_split). "|" in the name; a packed run reports
 *     its workspace in duet_launch_info.workspace_bytes and the copies in its launches.
 * Every part's shape is checked compiled before the first launch: a part refused after another
 * ran would leave C half written for the fallback row to scale again.
 */
template <typename T>
static duet_status gemm_fast_run_row(dt_context *ctx, void *be_stream, const dt_gemm *g,
                                     duet_gpu_stream_t stream, const duet_device_props *props,
                                     const dt_gemm_tuning *row, duet_launch_info *info)
{
    const int64_t nb = g->batch < 1 ? 1 : g->batch;
    const T *tag = NULL;
    const bool fma = row->engine == DT_GEMM_ENGINE_FMA;
    const bool edge_rules = ctx && g->ws && fma && row->split.edges != 0;
    const bool edges = edge_rules && &gf_pick_tile(row, g, props) == &row->large;
    const int64_t large_tiles =
        dt_ceil_div(g->m, row->large.bm) * dt_ceil_div(g->n, row->large.bn) * nb;
    const int64_t large_slots =
        (int64_t)(row->split.large_fill > 0 ? row->split.large_fill : 1) * props->compute_units;
    const int la = gf_operand_layout<T>(g->a.base, g->a.rs, g->a.cs, g->a.bs, nb);
    const int lb = gf_operand_layout<T>(g->b.base, g->b.cs, g->b.rs, g->b.bs, nb);

    /* The copies, when they pay. */
    gf_pack pa = {}, pb = {};
    if (edges && nb == 1 && (row->split.edges & DT_GEMM_EDGE_PACK)) {
        pa = gf_pack_plan<T>(g->a, g->m, g->k, la);
        pb = gf_pack_plan<T>(g->b, g->k, g->n, lb);
        const int64_t elements = (pa.on ? pa.runs * pa.len : 0) + (pb.on ? pb.runs * pb.len : 0);
        if (!dt_gemm_pack_pays(row, g->m, g->n, g->k, elements, props->compute_units))
            pa.on = pb.on = false;
        pb.offset = pa.on ? pa.bytes : 0;
    }

    gf_part parts[4];
    int count = 0;
    size_t need = 0; /* the parts' split workspace, the largest of them */
    for (;;) {
        /* Layouts after the copies: a copied operand is read in 16-byte vectors. */
        const bool vectors = (pa.on || la == GF_X_VEC || la == GF_K_VEC) &&
                             (pb.on || lb == GF_X_VEC || lb == GF_K_VEC);
        int64_t n_main = 0;
        if (edges) {
            n_main = dt_gemm_edge_cols(row, g->m, g->n, nb, props->compute_units, vectors);
            /* Less than one round of large tiles goes whole to the split plan
             * (dt_gemm_tail_plan): that plan's rule then. */
            if (n_main == 0 && row->split.tail > 0 && large_tiles < large_slots)
                n_main = dt_gemm_edge_cols_split(row, g->m, g->n, g->k, nb, props->compute_units);
        } else if (edge_rules) {
            n_main = dt_gemm_edge_cols_split(row, g->m, g->n, g->k, nb, props->compute_units);
        }
        if (n_main > 0) {
            const dt_gemm left = gf_view<T>(g, 0, 0, g->m, n_main);
            const dt_gemm right = gf_view<T>(g, 0, n_main, g->m, g->n - n_main);
            count = gf_plan_rounds<T>(ctx, &left, 0, 0, props, row, parts);
            count += gf_plan_rounds<T>(ctx, &right, 0, n_main, props, row, parts + count);
        } else {
            count = gf_plan_rounds<T>(ctx, g, 0, 0, props, row, parts);
        }
        bool listed = true;
        need = 0;
        for (int i = 0; i < count; i++) {
            if (fma && count > 1) listed = listed && gf_fma_listed(*parts[i].t, tag);
            if (parts[i].split > 1) {
                const size_t b = (size_t)parts[i].split * (size_t)nb * (size_t)parts[i].m *
                                 (size_t)parts[i].n * sizeof(T);
                need = b > need ? b : need;
            }
        }
        if (!listed) {
            /* A row naming shapes that are not compiled: the problem whole on the shape the row
             * picks (gf_run_tile refuses it then, with nothing launched). */
            pa.on = pb.on = false;
            count = 1;
            parts[0] = {0, 0, g->m, g->n, &gf_pick_tile(row, g, props), 1};
            need = 0;
            break;
        }
        if (!pa.on && !pb.on) break;
        void *ws = NULL;
        const duet_status st = dt_workspace_reserve(ctx, be_stream, g->ws,
                                                    pb.offset + pb.bytes + need, "duet_gemm", &ws);
        if (st == DUET_SUCCESS) break;
        /* A capture that would grow the workspace (or a lost device) fails as a split does. */
        if (st != DUET_ERROR_OUT_OF_MEMORY) return st;
        /* No room for the copies: plan again on the operands as they lie. */
        dt_clear_error();
        pa.on = pb.on = false;
    }

    /* The copies, and a window of the workspace past them for the parts' splits. */
    dt_gemm work = *g;
    dt_workspace window = {};
    int copies = 0;
    size_t copied = 0;
    if (pa.on || pb.on) {
        void *ws = NULL;
        const size_t total = pb.offset + pb.bytes + need;
        const duet_status st = dt_workspace_reserve(ctx, be_stream, g->ws, total, "duet_gemm", &ws);
        if (st != DUET_SUCCESS) return st; /* reserved above: only a lost device fails here */
        duet_gpu_error_t e = DUET_GPU_SUCCESS;
        if (pa.on) e = gf_pack_run<T>(pa, &work.a, ws, props, stream), copies++;
        if (e == DUET_GPU_SUCCESS && pb.on)
            e = gf_pack_run<T>(pb, &work.b, ws, props, stream), copies++;
        if (e != DUET_GPU_SUCCESS)
            return dt_fail(DUET_ERROR_LAUNCH_FAILED, "duet_gemm",
                           "launch of the operand copy before the GEMM: %s",
                           duet_gpu_error_string(e));
        copied = total;
        window.ptr = (unsigned char *)ws + pb.offset + pb.bytes;
        window.bytes = need;
        window.fixed = 1;
        work.ws = &window;
    }

    gf_ran ran[4];
    int launches = copies;
    for (int i = 0; i < count; i++) {
        const gf_part &q = parts[i];
        const dt_gemm v = count == 1 ? work : gf_view<T>(&work, q.m0, q.n0, q.m, q.n);
        const duet_status st = gf_run_tile<T>(ctx, be_stream, &v, stream, props, row, *q.t,
                                              q.split, info ? &ran[i] : NULL);
        if (st != DUET_SUCCESS) return st;
        if (info) launches += ran[i].launches;
    }
    if (!info) return DUET_SUCCESS;
    /* "gemm_auto_128x128x8_f32+128x64x16_splitk4|128x64x16_splitk12": the first part's kernel,
     * then "+" for each further part of the same columns (the tail), "|" for the columns split
     * off; config describes the first launch. */
    char name[64];
    snprintf(name, sizeof name, "%s", ran[0].name);
    for (int i = 1; i < count; i++) {
        char part[64];
        gf_short_name(ran[i].name, gf_dtype<T>::name(), part, sizeof part);
        const size_t len = strlen(name), plen = strlen(part);
        if (len + 1 + plen >= sizeof name) break;
        name[len] = parts[i].n0 == parts[i - 1].n0 ? '+' : '|';
        memcpy(name + len + 1, part, plen + 1);
    }
    dt_fill_info(info, name, &ran[0].plan, launches);
    if (copied) info->workspace_bytes = copied;
    return DUET_SUCCESS;
}

/* Names the row that ran in info->tuning ("file:sm_90", "builtin:default"). */
static inline void gf_report_row(duet_launch_info *info, const dt_gemm_tuning *row, int from_file)
{
    if (info) snprintf(info->tuning, sizeof info->tuning, "%s:%s", from_file ? "file" : "builtin",
                       row->arch);
}

/* The AUTO GEMM entry point (src/gpu/ops_gpu.inc): the context's tuning-file row for the
 * device, else the built-in row, else the default row of the dtype, each tried when the one
 * before cannot run here (a file's shapes are all compiled in, but its engine may not run on
 * this device). */
template <typename T>
duet_status gemm_fast_run(dt_context *ctx, void *be_stream, const dt_gemm *g,
                          duet_gpu_stream_t stream, const duet_device_props *props,
                          duet_launch_info *info)
{
    const duet_dtype dtype = gf_dtype<T>::id;
    int from_file = 0;
    const dt_gemm_tuning *row =
        dt_gemm_tuning_select(ctx ? ctx->tuning : NULL, props->arch, dtype, &from_file);
    duet_status s = row ? gemm_fast_run_row<T>(ctx, be_stream, g, stream, props, row, info)
                        : DUET_ERROR_UNSUPPORTED;
    if (s == DUET_SUCCESS) gf_report_row(info, row, from_file);
    if (s != DUET_ERROR_UNSUPPORTED) return s;
    const dt_gemm_tuning *builtin = dt_gemm_tuning_lookup(props->arch, dtype);
    if (from_file && builtin) {
        row = builtin;
        s = gemm_fast_run_row<T>(ctx, be_stream, g, stream, props, row, info);
        if (s == DUET_SUCCESS) gf_report_row(info, row, 0);
        if (s != DUET_ERROR_UNSUPPORTED) return s;
    }
    const dt_gemm_tuning *fallback = dt_gemm_tuning_lookup(NULL, dtype);
    if (fallback && fallback != row) {
        s = gemm_fast_run_row<T>(ctx, be_stream, g, stream, props, fallback, info);
        if (s == DUET_SUCCESS) gf_report_row(info, fallback, 0);
    }
    if (s == DUET_ERROR_UNSUPPORTED)
        return dt_fail(DUET_ERROR_UNSUPPORTED, "duet_gemm",
                       "no AUTO kernel is compiled for %s on %s", gf_dtype<T>::name(),
                       props->arch);
    return s;
}

#endif /* DUET_KERNELS_GEMM_FAST_CUH */
