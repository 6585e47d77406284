/* gemm_wgmma_launch.h - the launch of one Hopper GEMM instance (kernels/gemm_wgmma.cuh), for the
 * translation units that instantiate them: gemm_wgmma.cu (the plain GEMMs), gemm_wgmma_epi.cu
 * (duet_gemm_ex's fused epilogues) and gemm_wgmma_f8.cu, gemm_wgmma_f8_epi.cu (8-bit float
 * inputs), so that the sets compile in parallel and each only once. */
#ifndef DUET_CUDA_GEMM_WGMMA_LAUNCH_H
#define DUET_CUDA_GEMM_WGMMA_LAUNCH_H

#include "compat.h"
#include "gemm_wgmma.cuh"

#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <stddef.h>

namespace {

template <int KIND, typename CT, int LAYOUT, bool EPI>
cudaError_t launch(const CUtensorMap &ta, const CUtensorMap &tb, const CUtensorMap &tc,
                   const wg_params &p, const wg_epi &e, int grid, cudaStream_t stream,
                   size_t *shared)
{
    const int bytes = wg_config<CT, EPI>::shared_bytes;
    *shared = (size_t)bytes;
    /* The opt-in above 48 KiB of shared memory, once per kernel and device. */
    static std::atomic<uint64_t> ready{0};
    const cudaError_t err =
        duet_gpu_opt_in_shared(gemm_wgmma_kernel<KIND, CT, LAYOUT, EPI>, bytes, ready);
    if (err != cudaSuccess) return err;
    gemm_wgmma_kernel<KIND, CT, LAYOUT, EPI><<<grid, WG_THREADS, bytes, stream>>>(ta, tb, tc, p, e);
    return cudaGetLastError();
}

/* The 16-bit kinds take every operand layout; TF32 and i8 wgmma read K-major operands only. */
template <int KIND, typename CT, bool EPI = false>
cudaError_t launch_layout(int layout, const CUtensorMap &ta, const CUtensorMap &tb,
                          const CUtensorMap &tc, const wg_params &p, const wg_epi &e, int grid,
                          cudaStream_t stream, size_t *shared)
{
    if constexpr (KIND == WG_BF16 || KIND == WG_F16) {
        switch (layout) {
        case 1: return launch<KIND, CT, 1, EPI>(ta, tb, tc, p, e, grid, stream, shared);
        case 2: return launch<KIND, CT, 2, EPI>(ta, tb, tc, p, e, grid, stream, shared);
        case 3: return launch<KIND, CT, 3, EPI>(ta, tb, tc, p, e, grid, stream, shared);
        default: break;
        }
    }
    return launch<KIND, CT, 0, EPI>(ta, tb, tc, p, e, grid, stream, shared);
}

} /* namespace */

/* The fused-epilogue instances (EPI, C's type float: D's dtype is e.d_dtype), defined in
 * gemm_wgmma_epi.cu. kind: WG_BF16, WG_F16 (layout 0-3, bit 0 A M-major, bit 1 B N-major) or
 * WG_TF32 (layout 0); any other kind is cudaErrorInvalidValue. */
cudaError_t gemm_wgmma_epi_launch(int kind, int layout, const CUtensorMap &ta,
                                  const CUtensorMap &tb, const CUtensorMap &tc, const wg_params &p,
                                  const wg_epi &e, int grid, cudaStream_t stream, size_t *shared);

/* The 8-bit float instances (kind WG_F8_44 .. WG_F8_55, K-major operands), defined in
 * gemm_wgmma_f8.cu: C of cd (f32, bf16 or f16); and with the fused epilogue, in
 * gemm_wgmma_f8_epi.cu. Anything else is cudaErrorInvalidValue. */
cudaError_t gemm_wgmma_f8_launch(int kind, duet_dtype cd, const CUtensorMap &ta,
                                 const CUtensorMap &tb, const CUtensorMap &tc, const wg_params &p,
                                 const wg_epi &e, int grid, cudaStream_t stream, size_t *shared);
cudaError_t gemm_wgmma_f8_epi_launch(int kind, const CUtensorMap &ta, const CUtensorMap &tb,
                                     const CUtensorMap &tc, const wg_params &p, const wg_epi &e,
                                     int grid, cudaStream_t stream, size_t *shared);

#endif /* DUET_CUDA_GEMM_WGMMA_LAUNCH_H */
