/* gemm_dmma_tma.cuh - the Hopper (sm_90a) f64 GEMM: TMA loads, DMMA mma.sync, a producer. */
#ifndef DUET_KERNELS_GEMM_DMMA_TMA_CUH
#define DUET_KERNELS_GEMM_DMMA_TMA_CUH

#include <cuda.h> /* CUtensorMap (the type only; libcuda is not linked) */
#include <stdint.h>

#include "gemm_fast_dmma.cuh"
#include "wgmma_sm90.cuh"

/*
 * The same tensor-core instruction as gemm_fast_dmma.cuh (mma.sync m16n8k8 .f64; Hopper has no
 * f64 wgmma) and the same 64 x 32 warp tiles, fed differently. In the cp.async kernel every
 * warp computes its share of each slice's copies (address arithmetic, bounds) and waits at a
 * block-wide barrier per slice. Here a producer warpgroup's first lane issues one TMA load per
 * operand and stage (a box per 16 rows or columns for an MN-major operand) into a ring of 6
 * stages, each guarded by a "full" mbarrier (TMA bytes landed) and an "empty" one (every
 * consumer warp done reading); eight consumer warps run only fragment loads and mma on a
 * 128 x 128 tile. TMA zero-fills what lies past m, n and k, so no tile has an edge loop; the
 * epilogue tests the bounds. Blocks walk the tiles in gf_tile_coords' grouped order (a grid
 * smaller than the tiles loops, and the producer runs ahead into the next tile while the
 * consumers store the last one).
 *
 * Where it runs (src/cuda/gemm_dmma_tma.cu, gemm_dmma_tma_split): problems of at most two
 * well-filled rounds of its tiles, split slices counted (the launcher's split, or for the small
 * DMMA tile's problems a split of its own), where it measured 2-13% faster than the cp.async
 * kernel on the H100 (the small tile's problems up to 1.6x), and problems of 6 rounds or more:
 * those run at the 700 W cap, where this kernel holds a 7-10% higher clock. Between, the
 * partial last round costs it more than that kernel (two 128 x 64 blocks per SM)
 * (docs/performance.md).
 *
 * Shared layout: a stage holds BM x 16 doubles of A and BN x 16 of B. K-major operands come
 * as one box of 128-byte rows (16 doubles of k, the 128-byte swizzle's width: 16-byte chunk c
 * of row r sits at chunk c ^ (r % 8)); MN-major ones as boxes of 16 k-rows of 16 doubles of m
 * or n, 2 KiB each, swizzled the same way. Fragment loads (k order as in gemm_fast_dmma.cuh:
 * the k values t and t + 4 that lane t feeds an mma are the stored k = 2t and 2t + 1):
 *   - K-major tile, mma A operand (P): a lane reads rows sigma(g) and 8 + sigma(g) of its
 *     16-row block, one 16-byte chunk each, sigma(g) = 4 (g % 2) + g / 2. The eight lanes of a
 *     quarter warp read two rows whose row % 8 differ by 4, so their chunks land in the two
 *     halves of the 128-byte line: no bank conflict. The rows' permutation is undone in the
 *     epilogue.
 *   - K-major tile, mma B operand (Q): row sigma(g) of its 8-row block, one chunk.
 *   - MN-major tile as P: 16-byte loads of (row 2g, 2g + 1) pairs at k = 2t + q, q < 2: the
 *     k rows of a quarter warp are 0, 2, 4, 6 apart mod 8, so the swizzle spreads them.
 *   - MN-major tile as Q: 8-byte loads at k = 2t + q.
 * Roles: with a K-major A and an MN-major B (row-major A and B, the common case) the warp
 * computes its tile of C's transpose, B feeding P, as in gemm_fast_dmma.cuh: every fragment is
 * then a 16-byte load into the registers the mma reads.
 */

#define GD_BM             128
#define GD_BN             128
#define GD_BK             16   /* doubles: one 128-byte row */
#define GD_BOX_BYTES      2048 /* an MN-major box: 16 k-rows of 128 bytes */
#define GD_CONSUMER_WARPS 8    /* 2 x 4 warp tiles of 64 x 32 */
#define GD_THREADS        (128 + 32 * GD_CONSUMER_WARPS)
#define GD_STAGES         6
#define GD_A_BYTES        (GD_BM * GD_BK * 8)
#define GD_B_BYTES        (GD_BN * GD_BK * 8)
/* Stages, two mbarriers per stage, slack to align to the swizzle's 1024 bytes. */
#define GD_SHARED_BYTES (GD_STAGES * (GD_A_BYTES + GD_B_BYTES) + 2 * GD_STAGES * 8 + 1024)

/*
 * One block per SM: a producer warpgroup (setmaxnreg moves registers between warpgroups; its
 * first lane does all its work and it keeps 40 registers) and two consumer warpgroups of 232
 * (the 64 accumulators alone take 128). Registers are split among the SM's four partitions,
 * 16 Ki each, and a block's warps go round-robin over them: 40 + 2 x 232 <= 512 per lane.
 * A 128 x 64 tile on two blocks per SM of four consumer warps runs 4-10% slower than this one
 * on the squares of 2048-8192 (with one producer warp per block, two 5-warp blocks put 3 warps
 * on two partitions and cap every thread at 168 registers; with a producer warpgroup, 216).
 * Loading the next stage's first fragments during a stage's last mma (the cp.async kernel's
 * prefetch) spills 64-228 bytes here and gains nothing, so the consumers do not prefetch.
 */
#define GD_PRODUCER_REGS 40
#define GD_CONSUMER_REGS 232

#if DUET_SM90_DEVICE

DUET_SM90_INLINE gf_vec<double> gd_lds16(uint32_t addr)
{
    gf_vec<double> v;
    asm volatile("ld.shared.v2.f64 {%0, %1}, [%2];\n" : "=d"(v.e[0]), "=d"(v.e[1]) : "r"(addr));
    return v;
}
DUET_SM90_INLINE double gd_lds8(uint32_t addr)
{
    double v;
    asm volatile("ld.shared.f64 %0, [%1];\n" : "=d"(v) : "r"(addr));
    return v;
}
/* Byte offset of 16-byte chunk c of 128-byte row r in the 128-byte swizzle. */
DUET_SM90_INLINE uint32_t gd_swz(int r, int c)
{
    return (uint32_t)(r * 128 + ((c ^ (r & 7)) << 4));
}

#endif /* DUET_SM90_DEVICE */

/*
 * C = alpha A B + beta C in f64 (p as for gemm_fast_dmma_kernel: split-K slices by
 * blockIdx.y, tiles and batches by blockIdx.x with a stride of gridDim.x). AXK: A is K-major
 * (a.cs == 1), else M-major; BXK: B is K-major (b.rs == 1), else N-major. tma and tmb are 3D
 * maps (inner, outer, batch) of A and B, as src/cuda/gemm_dmma_tma.cu encodes them.
 */
template <bool AXK, bool BXK>
__global__ void __launch_bounds__(GD_THREADS, 1)
    gemm_dmma_tma_kernel(const __grid_constant__ CUtensorMap tma,
                         const __grid_constant__ CUtensorMap tmb, const gf_args<double> p)
{
#if DUET_SM90_DEVICE
    using MMA = gf_dmma<16, 8>;
    constexpr int BN = GD_BN;
    constexpr int ST = GD_STAGES;
    constexpr int WARPS_N = BN / 32;
    constexpr bool SWAP = AXK && !BXK; /* B's tile feeds the mma's A operand */
    constexpr bool PXK = SWAP ? BXK : AXK, QXK = SWAP ? AXK : BXK;
    constexpr int PW = SWAP ? 32 : 64, QW = SWAP ? 64 : 32;
    constexpr int MT = PW / 16, NT = QW / 8;
    constexpr uint32_t STAGE_TX = GD_A_BYTES + GD_B_BYTES;

    extern __shared__ __align__(16) uint8_t gd_smem_raw[];
    const uint32_t raw = sm90_smem_addr(gd_smem_raw);
    const uint32_t base = (raw + 1023) & ~1023u;
    const uint32_t sa = base, sb = base + ST * GD_A_BYTES;
    uint64_t *full =
        reinterpret_cast<uint64_t *>(gd_smem_raw + (base - raw) + ST * (GD_A_BYTES + GD_B_BYTES));
    uint64_t *empty = full + ST;

    const int warp = threadIdx.x / GF_MMA_LANES, lane = threadIdx.x % GF_MMA_LANES;
    if (threadIdx.x == 0) {
        for (int s = 0; s < ST; ++s) {
            sm90_mbar_init(&full[s], 1);
            sm90_mbar_init(&empty[s], GD_CONSUMER_WARPS);
        }
        sm90_mbar_fence_init();
        sm90_tma_prefetch_map(&tma);
        sm90_tma_prefetch_map(&tmb);
    }
    __syncthreads();

    const int64_t tiles = p.tiles_m * p.tiles_n, total = tiles * p.batch;
    int64_t k_begin, k_len;
    gf_slice(p, &k_begin, &k_len);
    const int kt_count = (int)((k_len + GD_BK - 1) / GD_BK);

    if (warp < 4) {
        /* Producer: one lane issues every load. A fresh barrier reports its "previous" phase
         * (parity 1) complete, so the first pass over the ring does not wait. */
        sm90_setmaxnreg_dec<GD_PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            int s = 0;
            uint32_t phase = 0;
            for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
                const int64_t bz = t / tiles;
                int64_t tm, tn;
                gf_tile_coords(t - bz * tiles, p.tiles_m, p.tiles_n, &tm, &tn);
                const int ba = p.a.bs != 0 ? (int)bz : 0, bb = p.b.bs != 0 ? (int)bz : 0;
                const int m0 = (int)(tm * GD_BM), n0 = (int)(tn * BN);
                for (int kt = 0; kt < kt_count; ++kt) {
                    sm90_mbar_wait(&empty[s], phase ^ 1);
                    sm90_mbar_arrive_expect_tx(&full[s], STAGE_TX);
                    const int k0 = (int)(k_begin + (int64_t)kt * GD_BK);
                    uint8_t *da = gd_smem_raw + (sa - raw) + s * GD_A_BYTES;
                    uint8_t *db = gd_smem_raw + (sb - raw) + s * GD_B_BYTES;
                    if constexpr (AXK) {
                        sm90_tma_load_3d(da, &tma, &full[s], k0, m0, ba);
                    } else {
#pragma unroll
                        for (int q = 0; q < GD_BM / 16; ++q)
                            sm90_tma_load_3d(da + q * GD_BOX_BYTES, &tma, &full[s], m0 + 16 * q, k0,
                                             ba);
                    }
                    if constexpr (BXK) {
                        sm90_tma_load_3d(db, &tmb, &full[s], k0, n0, bb);
                    } else {
#pragma unroll
                        for (int q = 0; q < BN / 16; ++q)
                            sm90_tma_load_3d(db + q * GD_BOX_BYTES, &tmb, &full[s], n0 + 16 * q, k0,
                                             bb);
                    }
                    if (++s == ST) {
                        s = 0;
                        phase ^= 1;
                    }
                }
            }
        }
        return;
    }

    /* Consumers: warps 4, 5, ... */
    sm90_setmaxnreg_inc<GD_CONSUMER_REGS>();
    const int cw = warp - 4;
    const int g = lane / 4, t4 = lane % 4;
    const int sg = 4 * (g & 1) + (g >> 1); /* sigma(g) */
    const int wm = (cw / WARPS_N) * 64, wn = (cw % WARPS_N) * 32;
    const int wp = SWAP ? wn : wm, wq = SWAP ? wm : wn;
    int s = 0;
    uint32_t phase = 0;
    for (int64_t tile = blockIdx.x; tile < total; tile += gridDim.x) {
        const int64_t bz = tile / tiles;
        int64_t tm, tn;
        gf_tile_coords(tile - bz * tiles, p.tiles_m, p.tiles_n, &tm, &tn);

        double acc[MT][NT][MMA::NC];
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j)
#pragma unroll
                for (int e = 0; e < MMA::NC; ++e) acc[i][j][e] = 0.0;

        /* Fragments of one k-step (8 of k): P rows of the warp tile (mma A), Q columns (mma B). */
        auto load = [&](uint32_t stage, int kk, double(&af)[MT][MMA::NA],
                        double(&bf)[NT][MMA::NB]) {
            const uint32_t ps = SWAP ? sb + stage * GD_B_BYTES : sa + stage * GD_A_BYTES;
            const uint32_t qs = SWAP ? sa + stage * GD_A_BYTES : sb + stage * GD_B_BYTES;
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const int row = wp + 16 * i;
                if constexpr (PXK) {
                    const gf_vec<double> v0 = gd_lds16(ps + gd_swz(row + sg, kk / 2 + t4));
                    const gf_vec<double> v1 = gd_lds16(ps + gd_swz(row + 8 + sg, kk / 2 + t4));
                    af[i][0] = v0.e[0];
                    af[i][1] = v1.e[0];
                    af[i][2] = v0.e[1];
                    af[i][3] = v1.e[1];
                } else {
                    const uint32_t box = ps + (row / 16) * GD_BOX_BYTES;
#pragma unroll
                    for (int q = 0; q < 2; ++q) {
                        const gf_vec<double> v = gd_lds16(box + gd_swz(kk + 2 * t4 + q, g));
                        af[i][2 * q] = v.e[0];
                        af[i][2 * q + 1] = v.e[1];
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int col = wq + 8 * j;
                if constexpr (QXK) {
                    const gf_vec<double> v = gd_lds16(qs + gd_swz(col + sg, kk / 2 + t4));
                    bf[j][0] = v.e[0];
                    bf[j][1] = v.e[1];
                } else {
                    const uint32_t box = qs + (col / 16) * GD_BOX_BYTES + (g & 1) * 8;
                    const int c = ((col % 16) + g) / 2;
#pragma unroll
                    for (int q = 0; q < 2; ++q)
                        bf[j][q] = gd_lds8(box + gd_swz(kk + 2 * t4 + q, c));
                }
            }
        };
        auto mma = [&](const double(&af)[MT][MMA::NA], const double(&bf)[NT][MMA::NB]) {
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) MMA::run(acc[i][j], af[i], bf[j]);
        };
        double fa[2][MT][MMA::NA], fb[2][NT][MMA::NB];
        for (int kt = 0; kt < kt_count; ++kt) {
            sm90_mbar_wait(&full[s], phase);
            load(s, 0, fa[0], fb[0]);
            load(s, 8, fa[1], fb[1]);
            mma(fa[0], fb[0]);
            mma(fa[1], fb[1]);
            /* Every lane's fragments are in registers (the mma above read them). */
            __syncwarp();
            if (lane == 0) sm90_mbar_arrive(&empty[s]);
            if (++s == ST) {
                s = 0;
                phase ^= 1;
            }
        }

        /* Epilogue. acc[i][j][e] is the mma's (row g + 8 (e / 2), column 2 t + e % 2) of block
         * (i, j); mapped back through the loads' permutations to P and Q, then to C's m and n
         * (SWAP: P is n). With an N-major B a thread holds pairs of adjacent n: e and e + 2
         * (SWAP, P pairs 2g, 2g + 1) or e and e + 1 (Q pairs 2t, 2t + 1). */
        double *cb = p.c + (int64_t)blockIdx.y * p.c_ss + bz * p.c_bs;
        const int64_t m0 = tm * GD_BM, n0 = tn * BN;
        constexpr int PAIR = SWAP ? 2 : 1;
        auto put = [&](int64_t gm, int64_t gn, double v) {
            if (gm < p.m && gn < p.n) {
                double *q = cb + gm * p.c_rs + gn * p.c_cs;
                *q = p.beta_zero ? v : fma(p.beta, *q, v);
            }
        };
#pragma unroll
        for (int i = 0; i < MT; ++i) {
#pragma unroll
            for (int j = 0; j < NT; ++j) {
#pragma unroll
                for (int e = 0; e < MMA::NC; ++e) {
                    const int h = e / 2, c = 2 * t4 + e % 2;
                    const int pi = wp + 16 * i + (PXK ? 8 * h + sg : 2 * g + h);
                    const int qi = wq + 8 * j + (QXK ? 4 * (c & 1) + (c >> 1) : c);
                    const int64_t gm = m0 + (SWAP ? qi : pi), gn = n0 + (SWAP ? pi : qi);
                    const double v = p.alpha * acc[i][j][e];
                    if constexpr (!BXK) {
                        /* e opens a pair of adjacent n when it is the pair's first */
                        if ((e & PAIR) == 0) {
                            const double v1 = p.alpha * acc[i][j][e + PAIR];
                            if (p.c_vec && gm < p.m && gn + 1 < p.n) {
                                double *q = cb + gm * p.c_rs + gn;
                                gf_vec<double> o;
                                o.e[0] = v;
                                o.e[1] = v1;
                                if (!p.beta_zero) {
                                    const gf_vec<double> old = gf_load16(q);
                                    o.e[0] = fma(p.beta, old.e[0], v);
                                    o.e[1] = fma(p.beta, old.e[1], v1);
                                }
                                gf_store16(q, o);
                            } else {
                                put(gm, gn, v);
                                put(gm, gn + 1, v1);
                            }
                        }
                    } else {
                        put(gm, gn, v);
                    }
                }
            }
        }
    }
#endif /* DUET_SM90_DEVICE */
}

#endif /* DUET_KERNELS_GEMM_DMMA_TMA_CUH */
