/* gemm_dmma_tma.cu - host side of the Hopper f64 GEMM on TMA loads: coverage, maps, launch. */
#include "cuda/gemm_dmma_tma.h"

#include "compat.h"
#include "cuda/runtime_cuda.h"
#include "cuda/tma_map.h"
#include "gemm_dmma_tma.cuh"

#include <atomic>

/* The kernel takes problems whose 128 x 128 tiles, times the split, fill at most this many
 * rounds of one block per SM, the last of them at least DUET_DMMA_TMA_MIN_FILL percent full.
 * On the H100 (docs/performance.md) it runs 2-13% faster than the cp.async kernel on
 * such problems (2048^3, 4096 x 1024 x 4096, and the split ones: 1024 x 1024 x 16384, 128 x 8192
 * x 8192, 8192 x 128 x 8192, 2048 x 512 x 8192, 1024 x 2048 x 8192, 256 x 256 x 32768); in
 * short runs from 2304^3 (2.5 rounds) up to 8192^3 it is as fast or up to 11% slower (but see
 * DUET_DMMA_TMA_MANY_ROUNDS). A partial last round costs
 * it more than the cp.async kernel, whose half-size tiles spread over twice the SMs there: 1536 x
 * 2048 x 2048 (1.45 rounds) runs at 0.73x cuBLAS against 0.87-0.93x. */
#ifndef DUET_DMMA_TMA_MAX_ROUNDS
#define DUET_DMMA_TMA_MAX_ROUNDS 2
#endif
#ifndef DUET_DMMA_TMA_MIN_FILL
#define DUET_DMMA_TMA_MIN_FILL 90
#endif
/* Problems of this many rounds or more run here too. A DGEMM that lasts runs at the H100's
 * 700 W cap, and there this kernel holds a higher clock than the cp.async kernel (1756-1773
 * against 1586-1607 MHz over 2-second runs of 6144^3 and 4096^3: 5-10% faster, 0.96-0.99x
 * cuBLAS against 0.90-0.93x); in short runs, below the cap, the two take the same time on
 * 4096^3-8192^3, and the partial last round weighs less the more rounds there are (3072^3,
 * 4.4 rounds: 5% slower). */
#ifndef DUET_DMMA_TMA_MANY_ROUNDS
#define DUET_DMMA_TMA_MANY_ROUNDS 6
#endif
/* Problems the launcher plans on the small DMMA tile (64 x 64) move here when a split of K into
 * at most DUET_DMMA_TMA_MAX_SPLIT slices of DUET_DMMA_TMA_MIN_SLICE or more fills the rounds as
 * above, and C covers DUET_DMMA_TMA_MIN_INSIDE percent of the 128 x 128 tiles: 1000^3, 2000 x
 * 1000 x 1000, 2048 x 1024 x 1024 and 1000 x 500 x 2000 went from 0.48-0.69x cuBLAS to
 * 0.85-1.06x; 1024^3 (which the 64 x 64 kernel runs without edge tiles) from 0.843x to 0.823x. */
#ifndef DUET_DMMA_TMA_MAX_SPLIT
#define DUET_DMMA_TMA_MAX_SPLIT 64
#endif
#ifndef DUET_DMMA_TMA_MIN_SLICE
#define DUET_DMMA_TMA_MIN_SLICE 256
#endif
#ifndef DUET_DMMA_TMA_MIN_INSIDE
#define DUET_DMMA_TMA_MIN_INSIDE 75
#endif

namespace {

template <bool AXK, bool BXK>
cudaError_t gd_launch(const CUtensorMap &ta, const CUtensorMap &tb, const gf_args<double> &p,
                      dim3 grid, cudaStream_t stream)
{
    static std::atomic<uint64_t> ready{0};
    const cudaError_t e =
        duet_gpu_opt_in_shared(gemm_dmma_tma_kernel<AXK, BXK>, GD_SHARED_BYTES, ready);
    if (e != cudaSuccess) return e;
    gemm_dmma_tma_kernel<AXK, BXK><<<grid, GD_THREADS, GD_SHARED_BYTES, stream>>>(ta, tb, p);
    return cudaGetLastError();
}

bool even(int64_t v) { return (v & 1) == 0; }

} /* namespace */

/* Whether the kernel takes p's operands and sizes (the rounds aside). */
static bool gd_covers(const gf_args<double> &p, const duet_device_props *props)
{
    if (!props || props->capability_major != 9 || props->capability_minor != 0) return false;
    if (props->shared_mem_per_block_optin < (size_t)GD_SHARED_BYTES) return false;
    const int64_t m = p.m, n = p.n, k = p.k, batch = p.batch;
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return false;
    if (m > INT32_MAX - 256 || n > INT32_MAX - 256 || k > INT32_MAX - 256 || batch > INT32_MAX)
        return false;
    /* A 128 x 128 tile on a 64-wide C computes half its outputs for nothing (16384 x 64 x 4096:
     * 0.68x cuBLAS against 0.95x on the 128 x 64 tile). */
    if (m <= 64 || n <= 64) return false;
    /* A: K-major (a.cs == 1) or M-major (a.rs == 1); B: K-major (b.rs == 1) or N-major. TMA
     * wants 16-byte aligned bases and strides. */
    const bool axk = p.a.cs == 1, bxk = p.b.rs == 1;
    if (!axk && p.a.rs != 1) return false;
    if (!bxk && p.b.cs != 1) return false;
    const int64_t lda = axk ? p.a.rs : p.a.cs, ldb = bxk ? p.b.cs : p.b.rs;
    const bool batched_a = batch > 1 && p.a.bs != 0, batched_b = batch > 1 && p.b.bs != 0;
    return !((reinterpret_cast<uintptr_t>(p.a.base) & 15) ||
             (reinterpret_cast<uintptr_t>(p.b.base) & 15) || !even(lda) || !even(ldb) ||
             (batched_a && !even(p.a.bs)) || (batched_b && !even(p.b.bs)));
}

/* The kernel's tiles over all batches, capped at 2^40 (far past any rule's limit; no overflow). */
static int64_t gd_tiles(const gf_args<double> &p)
{
    const int64_t cap = (int64_t)1 << 40;
    const int64_t per = ((p.m + GD_BM - 1) / GD_BM) * ((p.n + GD_BN - 1) / GD_BN);
    return per > cap || p.batch > cap / per ? cap : per * p.batch;
}

/* Whether `blocks` fill at most DUET_DMMA_TMA_MAX_ROUNDS rounds, the last DUET_DMMA_TMA_MIN_FILL
 * percent full, or DUET_DMMA_TMA_MANY_ROUNDS rounds or more. */
static bool gd_fills(int64_t blocks, int sms)
{
    const int64_t rounds = (blocks + sms - 1) / sms;
    if (rounds >= DUET_DMMA_TMA_MANY_ROUNDS) return true;
    return rounds <= DUET_DMMA_TMA_MAX_ROUNDS &&
           100 * blocks >= DUET_DMMA_TMA_MIN_FILL * rounds * sms;
}

int gemm_dmma_tma_split(const gf_args<double> &p, int planned, const duet_device_props *props)
{
    if (!gd_covers(p, props)) return 0;
    const int sms = props->compute_units > 0 ? props->compute_units : 1;
    const int64_t tiles = gd_tiles(p);
    if (planned >= 1 && gd_fills(tiles * planned, sms)) return planned;
    /* Else (mostly the problems of the launcher's small tile) a split of its own that fills the
     * rounds, if its slices stay deep and the tiles are mostly inside C. */
    const int64_t tm = (p.m + GD_BM - 1) / GD_BM, tn = (p.n + GD_BN - 1) / GD_BN;
    if (100.0 * (double)p.m * (double)p.n <
        (double)DUET_DMMA_TMA_MIN_INSIDE * (double)(tm * tn) * GD_BM * GD_BN)
        return 0;
    const int64_t steps = (p.k + GD_BK - 1) / GD_BK;
    for (int s = 1; s <= DUET_DMMA_TMA_MAX_SPLIT; ++s) {
        const int64_t slice = (steps + s - 1) / s * GD_BK;
        if (s > 1 && slice < DUET_DMMA_TMA_MIN_SLICE) break;
        if (tiles * s > (int64_t)DUET_DMMA_TMA_MAX_ROUNDS * sms) break;
        if (gd_fills(tiles * s, sms)) return s;
    }
    return 0;
}

bool gemm_dmma_tma_launch(const gf_args<double> &p, int split, cudaStream_t stream,
                          const duet_device_props *props, cudaError_t *err, gemm_dmma_tma_ran *ran)
{
    if (split < 1 || !gd_covers(p, props)) return false;
    if (split > 1 && p.slice_k % GD_BK != 0) return false;
    const int sms = props->compute_units > 0 ? props->compute_units : 1;
    const int64_t tiles = gd_tiles(p);
    if (!gd_fills(tiles * split, sms)) return false;
    const int64_t m = p.m, n = p.n, k = p.k, batch = p.batch;
    const bool axk = p.a.cs == 1, bxk = p.b.rs == 1;
    const int64_t lda = axk ? p.a.rs : p.a.cs, ldb = bxk ? p.b.cs : p.b.rs;

    CUtensorMap ta, tb;
    const CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    void *a = const_cast<double *>(p.a.base), *b = const_cast<double *>(p.b.base);
    const bool ok =
        (axk ? duet_tma_encode_operand(&ta, type, 8, a, k, m, lda, batch, p.a.bs, GD_BK, GD_BM)
             : duet_tma_encode_operand(&ta, type, 8, a, m, k, lda, batch, p.a.bs, 16, GD_BK)) &&
        (bxk ? duet_tma_encode_operand(&tb, type, 8, b, k, n, ldb, batch, p.b.bs, GD_BK, GD_BN)
             : duet_tma_encode_operand(&tb, type, 8, b, n, k, ldb, batch, p.b.bs, 16, GD_BK));
    if (!ok) return false;

    gf_args<double> q = p;
    q.tiles_m = (m + GD_BM - 1) / GD_BM;
    q.tiles_n = (n + GD_BN - 1) / GD_BN;
    /* One block per tile (at most two rounds): the hardware hands the second round's tiles to
     * whichever SMs free up first. */
    const dim3 grid((unsigned)tiles, (unsigned)split, 1);
    if (axk)
        *err = bxk ? gd_launch<true, true>(ta, tb, q, grid, stream)
                   : gd_launch<true, false>(ta, tb, q, grid, stream);
    else
        *err = bxk ? gd_launch<false, true>(ta, tb, q, grid, stream)
                   : gd_launch<false, false>(ta, tb, q, grid, stream);
    ran->grid_x = grid.x;
    ran->threads = GD_THREADS;
    ran->shared = GD_SHARED_BYTES;
    ran->tile_m = GD_BM;
    ran->tile_n = GD_BN;
    return true;
}
