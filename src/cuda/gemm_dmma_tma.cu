/* gemm_dmma_tma.cu - host side of the Hopper f64 GEMM on TMA loads: coverage, maps, launch. */
#include "cuda/gemm_dmma_tma.h"

#include "compat.h"
#include "cuda/runtime_cuda.h"
#include "cuda/tma_map.h"
#include "gemm_dmma_tma.cuh"

#include <atomic>

/* The kernel takes problems whose 128 x 128 tiles, times the split, fill at most this many
 * rounds of one block per SM, the last of them at least DUET_DMMA_TMA_MIN_FILL percent full.
 * On the H100 (docs/performance.md, 2026-11-25) it ran 2-13% faster than the cp.async kernel on
 * such problems (2048^3, 4096 x 1024 x 4096, and the split ones: 1024 x 1024 x 16384, 128 x 8192
 * x 8192, 8192 x 128 x 8192, 2048 x 512 x 8192, 1024 x 2048 x 8192, 256 x 256 x 32768), and 3-8%
 * slower from 2304^3 (2.5 rounds) up to 8192^3. A partial last round costs it more than the
 * cp.async kernel, whose half-size tiles spread over twice the SMs there: 1536 x 2048 x 2048
 * (1.45 rounds) ran at 0.73x cuBLAS against 0.87-0.93x. */
#ifndef DUET_DMMA_TMA_MAX_ROUNDS
#define DUET_DMMA_TMA_MAX_ROUNDS 2
#endif
#ifndef DUET_DMMA_TMA_MIN_FILL
#define DUET_DMMA_TMA_MIN_FILL 90
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

bool gemm_dmma_tma_launch(const gf_args<double> &p, int split, cudaStream_t stream,
                          const duet_device_props *props, cudaError_t *err, gemm_dmma_tma_ran *ran)
{
    if (!props || props->capability_major != 9 || props->capability_minor != 0) return false;
    if (props->shared_mem_per_block_optin < (size_t)GD_SHARED_BYTES) return false;
    const int64_t m = p.m, n = p.n, k = p.k, batch = p.batch;
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0 || split < 1) return false;
    if (m > INT32_MAX - 256 || n > INT32_MAX - 256 || k > INT32_MAX - 256 || batch > INT32_MAX)
        return false;
    if (split > 1 && p.slice_k % GD_BK != 0) return false;
    /* A 128 x 128 tile on a 64-wide C computes half its outputs for nothing (16384 x 64 x 4096:
     * 0.68x cuBLAS against 0.95x on the 128 x 64 tile). */
    if (m <= 64 || n <= 64) return false;
    const int sms = props->compute_units > 0 ? props->compute_units : 1;
    const int64_t tiles = ((m + GD_BM - 1) / GD_BM) * ((n + GD_BN - 1) / GD_BN) * batch;
    const int64_t blocks = tiles * split, rounds = (blocks + sms - 1) / sms;
    if (rounds > DUET_DMMA_TMA_MAX_ROUNDS || 100 * blocks < DUET_DMMA_TMA_MIN_FILL * rounds * sms)
        return false;

    /* A: K-major (a.cs == 1) or M-major (a.rs == 1); B: K-major (b.rs == 1) or N-major. TMA
     * wants 16-byte aligned bases and strides. */
    const bool axk = p.a.cs == 1, bxk = p.b.rs == 1;
    if (!axk && p.a.rs != 1) return false;
    if (!bxk && p.b.cs != 1) return false;
    const int64_t lda = axk ? p.a.rs : p.a.cs, ldb = bxk ? p.b.cs : p.b.rs;
    const bool batched_a = batch > 1 && p.a.bs != 0, batched_b = batch > 1 && p.b.bs != 0;
    if ((reinterpret_cast<uintptr_t>(p.a.base) & 15) ||
        (reinterpret_cast<uintptr_t>(p.b.base) & 15) || !even(lda) || !even(ldb) ||
        (batched_a && !even(p.a.bs)) || (batched_b && !even(p.b.bs)))
        return false;

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
    ran->tile_n = GD_BN;
    return true;
}
