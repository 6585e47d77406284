/* gemm_wgmma_x3.cu - the Hopper 3xTF32 kernel's instantiation and launch (its own translation
 * unit: one kernel, compiled in parallel with gemm_wgmma.cu). */
#include "cuda/gemm_wgmma_x3.h"

#include "gemm_wgmma_x3.cuh"

#include <atomic>

cudaError_t gemm_wgmma_x3_launch(const CUtensorMap &ta, const CUtensorMap &tb,
                                 const wg_params &p, int grid, cudaStream_t stream,
                                 size_t *shared)
{
    const int bytes = X3_SHARED_BYTES;
    *shared = (size_t)bytes;
    /* The opt-in above 48 KiB of shared memory, once per device (as gemm_wgmma.cu does). */
    static std::atomic<uint64_t> ready{0};
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    const uint64_t bit = dev >= 0 && dev < 64 ? (uint64_t)1 << dev : 0;
    if (!bit || !(ready.load(std::memory_order_acquire) & bit)) {
        e = cudaFuncSetAttribute(gemm_wgmma_x3_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 bytes);
        if (e != cudaSuccess) return e;
        ready.fetch_or(bit, std::memory_order_release);
    }
    gemm_wgmma_x3_kernel<<<grid, WG_THREADS, bytes, stream>>>(ta, tb, p);
    return cudaGetLastError();
}

size_t gemm_wgmma_x3_shared_bytes(void) { return X3_SHARED_BYTES; }
