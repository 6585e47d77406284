/* gemm_wgmma_epi.cu - the Hopper GEMM's instances with duet_gemm_ex's epilogue fused into
 * their store (kernels/gemm_wgmma.cuh, EPI); gemm_wgmma.cu checks coverage, builds the tensor
 * maps and calls gemm_wgmma_epi_launch. A translation unit of their own: their stores are the
 * larger part of the Hopper GEMM's code. */
#include "cuda/gemm_wgmma_launch.h"

cudaError_t gemm_wgmma_epi_launch(int kind, int layout, const CUtensorMap &ta,
                                  const CUtensorMap &tb, const CUtensorMap &tc, const wg_params &p,
                                  const wg_epi &e, int grid, cudaStream_t stream, size_t *shared)
{
    switch (kind) {
    case WG_BF16:
        return launch_layout<WG_BF16, float, true>(layout, ta, tb, tc, p, e, grid, stream, shared);
    case WG_F16:
        return launch_layout<WG_F16, float, true>(layout, ta, tb, tc, p, e, grid, stream, shared);
    case WG_TF32:
        return launch_layout<WG_TF32, float, true>(0, ta, tb, tc, p, e, grid, stream, shared);
    default: return cudaErrorInvalidValue;
    }
}
