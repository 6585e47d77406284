/* gemm_wgmma_x3.cu - the Hopper 3xTF32 kernels' instantiations and launches (a translation unit
 * of their own, compiled in parallel with gemm_wgmma.cu). */
#include "cuda/gemm_wgmma_x3.h"

#include "compat.h"
#include "gemm_wgmma_x3.cuh"

#include <atomic>

namespace {

template <bool PRE>
cudaError_t launch(const CUtensorMap &ta, const CUtensorMap &tb, const CUtensorMap &tbs,
                   const wg_params &p, int grid, cudaStream_t stream)
{
    /* The opt-in above 48 KiB of shared memory, once per kernel and device. */
    static std::atomic<uint64_t> ready{0};
    const cudaError_t e = duet_gpu_opt_in_shared(gemm_wgmma_x3_kernel<PRE>, X3_SHARED_BYTES, ready);
    if (e != cudaSuccess) return e;
    gemm_wgmma_x3_kernel<PRE><<<grid, WG_THREADS, X3_SHARED_BYTES, stream>>>(ta, tb, tbs, p);
    return cudaGetLastError();
}

} /* namespace */

cudaError_t gemm_wgmma_x3_launch(const CUtensorMap &ta, const CUtensorMap &tb,
                                 const CUtensorMap *tbs, const wg_params &p, int grid,
                                 cudaStream_t stream, size_t *shared)
{
    *shared = (size_t)X3_SHARED_BYTES;
    return tbs ? launch<true>(ta, tb, *tbs, p, grid, stream)
               : launch<false>(ta, tb, tb, p, grid, stream);
}

size_t gemm_wgmma_x3_shared_bytes(void) { return X3_SHARED_BYTES; }

cudaError_t gemm_wgmma_x3_split(const float *src, int64_t rs, int64_t cs, int64_t bs, int64_t k,
                                int64_t n, int64_t batch, float *big, float *small, int64_t ld,
                                cudaStream_t stream, unsigned grid[3])
{
    const int64_t gx = (k + 31) / 32, gy = (n + 31) / 32;
    if (gx > INT32_MAX || gy > 65535 || batch > 65535) return cudaErrorInvalidConfiguration;
    grid[0] = (unsigned)gx;
    grid[1] = (unsigned)gy;
    grid[2] = (unsigned)batch;
    gemm_x3_split_kernel<<<dim3(grid[0], grid[1], grid[2]), dim3(32, 8), 0, stream>>>(
        src, rs, cs, bs, k, n, big, small, ld, rs == 1 ? 1 : 0);
    return cudaGetLastError();
}
