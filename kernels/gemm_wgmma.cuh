/* gemm_wgmma.cuh - the Hopper (sm_90a) GEMM: TMA loads, wgmma, warp-specialised warpgroups. */
#ifndef DUET_KERNELS_GEMM_WGMMA_CUH
#define DUET_KERNELS_GEMM_WGMMA_CUH

#include <cuda.h> /* CUtensorMap (the type only; libcuda is not linked) */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "wgmma_sm90.cuh"

/* Design (one CTA per SM, persistent):
 * - Block tile 128 x 256; each shared-memory stage holds a 128-byte slice of K for A (128 rows)
 *   and B (256 rows), both K-major, written by TMA with the 128-byte swizzle that the wgmma
 *   descriptors name. A 128-byte slice is 64 bf16/f16, 32 tf32 or 128 i8 values, so the stage
 *   geometry (48 KiB) and the descriptor walk (four 32-byte K steps) are the same for every
 *   input type; only the wgmma instruction changes.
 * - Warpgroup 0 is the producer: one thread issues the TMA loads into a ring of WG_STAGES
 *   stages, each guarded by a "full" mbarrier (TMA bytes landed) and an "empty" one (both
 *   consumers done reading). It gives registers away (setmaxnreg) since it needs few.
 * - Warpgroups 1 and 2 are consumers: each owns 64 rows of the block tile (a 64 x 256 f32 or
 *   s32 accumulator, 128 registers per thread), keeps one wgmma group in flight while it
 *   waits for the next stage, and writes its rows of C straight from registers with bounds
 *   checks, so M and N edges need no special tiles; K edges read TMA's zero fill.
 * - Tiles (and batches) are walked by every CTA with a stride of gridDim.x in a grouped order
 *   (WG_GROUP_M tile rows at a time, column by column), so the CTAs resident at one moment
 *   share A row panels and B column panels in L2. The producer runs ahead into the next tile
 *   while the consumers store the last one. */

#define WG_BM 128
#define WG_BN 256
#define WG_KBYTES 128
#define WG_STAGES 4
#define WG_THREADS 384
#define WG_GROUP_M 8
#define WG_A_STAGE_BYTES (WG_BM * WG_KBYTES)
#define WG_B_STAGE_BYTES (WG_BN * WG_KBYTES)
/* Stages, 2 mbarriers per stage, and slack to align the ring to the swizzle's 1024 bytes. */
#define WG_SHARED_BYTES \
    (WG_STAGES * (WG_A_STAGE_BYTES + WG_B_STAGE_BYTES) + 2 * WG_STAGES * 8 + 1024)

/* Input kinds (A's and B's dtype and the instruction that multiplies them). */
enum wg_kind { WG_BF16 = 0, WG_F16 = 1, WG_TF32 = 2, WG_I8 = 3 };

struct wg_params {
    void *c;
    int64_t ldc, bsc;        /* C's row and batch strides, in elements (c.cs == 1)      */
    int m, n, ktiles;        /* ktiles: K in 128-byte slices, rounded up                */
    int tiles_m, tiles_n;
    int64_t tiles_total;     /* tiles_m * tiles_n * batch                               */
    int a_batched, b_batched; /* 0: the operand is shared by every batch (stride 0)     */
    int beta_zero;
    float alpha, beta;       /* floating kinds                                          */
    uint32_t ialpha, ibeta;  /* i8: int32 values whose uint32 images wrap modulo 2^32   */
};

template <int KIND> struct wg_traits;
template <> struct wg_traits<WG_BF16> { typedef float acc_t; };
template <> struct wg_traits<WG_F16> { typedef float acc_t; };
template <> struct wg_traits<WG_TF32> { typedef float acc_t; };
template <> struct wg_traits<WG_I8> { typedef int32_t acc_t; };

#if DUET_SM90_DEVICE

/* One 32-byte K step of the 64 x 256 warpgroup tile. */
template <int KIND> DUET_SM90_INLINE void wg_mma(typename wg_traits<KIND>::acc_t *d, uint64_t da,
                                                 uint64_t db, int scale_d);
template <> DUET_SM90_INLINE void wg_mma<WG_BF16>(float *d, uint64_t da, uint64_t db, int sd)
{
    sm90_wgmma_m64n256k16_bf16<0, 0>(d, da, db, sd);
}
template <> DUET_SM90_INLINE void wg_mma<WG_F16>(float *d, uint64_t da, uint64_t db, int sd)
{
    sm90_wgmma_m64n256k16_f16<0, 0>(d, da, db, sd);
}
template <> DUET_SM90_INLINE void wg_mma<WG_TF32>(float *d, uint64_t da, uint64_t db, int sd)
{
    sm90_wgmma_m64n256k8_tf32(d, da, db, sd);
}
template <> DUET_SM90_INLINE void wg_mma<WG_I8>(int32_t *d, uint64_t da, uint64_t db, int sd)
{
    sm90_wgmma_m64n256k32_s8(d, da, db, sd);
}

/* C element conversions for the epilogue. */
DUET_SM90_INLINE float wg_to_float(float v) { return v; }
DUET_SM90_INLINE float wg_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
DUET_SM90_INLINE float wg_to_float(__half v) { return __half2float(v); }
template <typename CT> DUET_SM90_INLINE CT wg_from_float(float v);
template <> DUET_SM90_INLINE float wg_from_float<float>(float v) { return v; }
template <> DUET_SM90_INLINE __nv_bfloat16 wg_from_float<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}
template <> DUET_SM90_INLINE __half wg_from_float<__half>(float v) { return __float2half_rn(v); }

/* Two horizontally adjacent results (col, col + 1) of one row; col + 1 may be past N. */
template <typename CT>
DUET_SM90_INLINE void wg_store2(CT *p, bool two, float v0, float v1, const wg_params &pr)
{
    float r0 = pr.alpha * v0, r1 = pr.alpha * v1;
    if (!pr.beta_zero) {
        r0 += pr.beta * wg_to_float(p[0]);
        if (two) r1 += pr.beta * wg_to_float(p[1]);
    }
    if (two && (reinterpret_cast<uintptr_t>(p) % (2 * sizeof(CT))) == 0) {
        if (sizeof(CT) == 4) {
            *reinterpret_cast<float2 *>(p) = make_float2(r0, r1);
        } else {
            CT h[2] = {wg_from_float<CT>(r0), wg_from_float<CT>(r1)};
            *reinterpret_cast<uint32_t *>(p) = *reinterpret_cast<const uint32_t *>(h);
        }
    } else {
        p[0] = wg_from_float<CT>(r0);
        if (two) p[1] = wg_from_float<CT>(r1);
    }
}
DUET_SM90_INLINE void wg_store2(int32_t *p, bool two, int32_t v0, int32_t v1, const wg_params &pr)
{
    uint32_t r0 = pr.ialpha * (uint32_t)v0, r1 = pr.ialpha * (uint32_t)v1;
    if (!pr.beta_zero) {
        r0 += pr.ibeta * (uint32_t)p[0];
        if (two) r1 += pr.ibeta * (uint32_t)p[1];
    }
    if (two && (reinterpret_cast<uintptr_t>(p) % 8) == 0) {
        *reinterpret_cast<int2 *>(p) = make_int2((int32_t)r0, (int32_t)r1);
    } else {
        p[0] = (int32_t)r0;
        if (two) p[1] = (int32_t)r1;
    }
}

/* Tile t of the grouped order: batch, tile row, tile column. */
DUET_SM90_INLINE void wg_tile_coords(int64_t t, const wg_params &p, int &bt, int &tm, int &tn)
{
    const int64_t per_batch = (int64_t)p.tiles_m * p.tiles_n;
    bt = (int)(t / per_batch);
    const int64_t r = t - (int64_t)bt * per_batch;
    const int64_t width = (int64_t)WG_GROUP_M * p.tiles_n;
    const int group = (int)(r / width);
    const int first_m = group * WG_GROUP_M;
    const int rows = min(p.tiles_m - first_m, WG_GROUP_M);
    const int in_group = (int)(r - (int64_t)group * width);
    tm = first_m + in_group % rows;
    tn = in_group / rows;
}

#endif /* DUET_SM90_DEVICE */

/* The tensor maps are 3D (K, rows, batch) with a (128-byte K slice) x rows x 1 box and the
 * 128-byte swizzle; A's box has WG_BM rows, B's WG_BN (B is stored N x K, K-major). */
template <int KIND, typename CT>
__global__ void __launch_bounds__(WG_THREADS, 1)
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap tma,
                      const __grid_constant__ CUtensorMap tmb, const wg_params p)
{
#if DUET_SM90_DEVICE
    typedef typename wg_traits<KIND>::acc_t acc_t;
    constexpr int kelems = KIND == WG_TF32 ? 32 : (KIND == WG_I8 ? 128 : 64);

    extern __shared__ uint8_t wg_smem_raw[];
    uint8_t *smem = reinterpret_cast<uint8_t *>(
        (reinterpret_cast<uintptr_t>(wg_smem_raw) + 1023) & ~static_cast<uintptr_t>(1023));
    uint8_t *sa = smem;
    uint8_t *sb = smem + WG_STAGES * WG_A_STAGE_BYTES;
    uint64_t *full = reinterpret_cast<uint64_t *>(sb + WG_STAGES * WG_B_STAGE_BYTES);
    uint64_t *empty = full + WG_STAGES;

    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < WG_STAGES; ++s) {
            sm90_mbar_init(&full[s], 1);
            sm90_mbar_init(&empty[s], 2); /* one arrival per consumer warpgroup */
        }
        sm90_mbar_fence_init();
        sm90_tma_prefetch_map(&tma);
        sm90_tma_prefetch_map(&tmb);
    }
    __syncthreads();

    if (wg == 0) {
        /* Producer: 2 x 128 x 232 + 128 x 40 registers fit the SM's 64 Ki. */
        sm90_setmaxnreg_dec<40>();
        if (tid == 0) {
            int s = 0;
            uint32_t phase = 0;
            for (int64_t t = blockIdx.x; t < p.tiles_total; t += gridDim.x) {
                int bt, tm, tn;
                wg_tile_coords(t, p, bt, tm, tn);
                const int ba = p.a_batched ? bt : 0, bb = p.b_batched ? bt : 0;
                for (int kt = 0; kt < p.ktiles; ++kt) {
                    /* A fresh barrier reports its "previous" phase (parity 1) complete. */
                    sm90_mbar_wait(&empty[s], phase ^ 1);
                    sm90_mbar_arrive_expect_tx(&full[s], WG_A_STAGE_BYTES + WG_B_STAGE_BYTES);
                    sm90_tma_load_3d(sa + s * WG_A_STAGE_BYTES, &tma, &full[s], kt * kelems,
                                     tm * WG_BM, ba);
                    sm90_tma_load_3d(sb + s * WG_B_STAGE_BYTES, &tmb, &full[s], kt * kelems,
                                     tn * WG_BN, bb);
                    if (++s == WG_STAGES) {
                        s = 0;
                        phase ^= 1;
                    }
                }
            }
        }
    } else {
        sm90_setmaxnreg_inc<232>();
        acc_t acc[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = 0;
        const uint32_t a_off = (uint32_t)(wg - 1) * 64 * WG_KBYTES;
        const uint32_t sa_addr = sm90_smem_addr(sa) + a_off, sb_addr = sm90_smem_addr(sb);
        const int warp = tid / 32, lane = tid % 32;
        int s = 0, prev = 0;
        uint32_t phase = 0;
        for (int64_t t = blockIdx.x; t < p.tiles_total; t += gridDim.x) {
            int bt, tm, tn;
            wg_tile_coords(t, p, bt, tm, tn);
#pragma unroll 1
            for (int kt = 0; kt < p.ktiles; ++kt) {
                sm90_mbar_wait(&full[s], phase);
#pragma unroll
                for (int i = 0; i < 128; ++i) sm90_fence_operand(acc[i]);
                sm90_wgmma_fence();
                const uint64_t da = sm90_desc_kmajor_sw128(sa_addr + s * WG_A_STAGE_BYTES);
                const uint64_t db = sm90_desc_kmajor_sw128(sb_addr + s * WG_B_STAGE_BYTES);
#pragma unroll
                for (int kk = 0; kk < WG_KBYTES / 32; ++kk)
                    wg_mma<KIND>(acc, da + 2 * kk, db + 2 * kk, (kt | kk) != 0);
                sm90_wgmma_commit();
                /* The previous stage's group is done once at most this one is pending. */
                sm90_wgmma_wait<1>();
#pragma unroll
                for (int i = 0; i < 128; ++i) sm90_fence_operand(acc[i]);
                if (kt > 0 && tid == 0) sm90_mbar_arrive(&empty[prev]);
                prev = s;
                if (++s == WG_STAGES) {
                    s = 0;
                    phase ^= 1;
                }
            }
            sm90_wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < 128; ++i) sm90_fence_operand(acc[i]);
            if (tid == 0) sm90_mbar_arrive(&empty[prev]);

            /* Epilogue straight from the accumulator registers. */
            const int row0 = tm * WG_BM + (wg - 1) * 64 + warp * 16 + lane / 4;
            const int col0 = tn * WG_BN + (lane % 4) * 2;
            CT *cb = static_cast<CT *>(p.c) + (int64_t)bt * p.bsc;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + 8 * h;
                if (row >= p.m) continue;
                CT *crow = cb + (int64_t)row * p.ldc;
#pragma unroll
                for (int j = 0; j < 32; ++j) {
                    const int col = col0 + 8 * j;
                    if (col < p.n)
                        wg_store2(crow + col, col + 1 < p.n, acc[4 * j + 2 * h],
                                  acc[4 * j + 2 * h + 1], p);
                }
            }
        }
    }
#endif /* DUET_SM90_DEVICE */
}

#endif /* DUET_KERNELS_GEMM_WGMMA_CUH */
