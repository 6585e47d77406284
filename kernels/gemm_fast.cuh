/* gemm_fast.cuh - the AUTO GEMM's register-tiled FMA kernel (src/gpu/gemm_fast_gpu.inc runs it). */
#ifndef DUET_KERNELS_GEMM_FAST_CUH
#define DUET_KERNELS_GEMM_FAST_CUH

#include "compat.h"
#include "gemm_fast_dmma.cuh"
#include "gemm_fast_tile.cuh"

#include <stdint.h>

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

#endif /* DUET_KERNELS_GEMM_FAST_CUH */
