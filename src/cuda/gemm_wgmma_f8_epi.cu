/* gemm_wgmma_f8_epi.cu - the Hopper GEMM's 8-bit float instances with duet_gemm_ex's epilogue
 * fused into their store (kernels/gemm_wgmma.cuh, EPI; D's dtype is e.d_dtype): per-tensor
 * scales, a bias and an activation on inference's FP8 GEMMs. A translation unit of their own,
 * like gemm_wgmma_epi.cu's. */
#include "cuda/gemm_wgmma_launch.h"

cudaError_t gemm_wgmma_f8_epi_launch(int kind, const CUtensorMap &ta, const CUtensorMap &tb,
                                     const CUtensorMap &tc, const wg_params &p, const wg_epi &e,
                                     int grid, cudaStream_t stream, size_t *shared)
{
    switch (kind) {
    case WG_F8_44: return launch<WG_F8_44, float, 0, true>(ta, tb, tc, p, e, grid, stream, shared);
    case WG_F8_45: return launch<WG_F8_45, float, 0, true>(ta, tb, tc, p, e, grid, stream, shared);
    case WG_F8_54: return launch<WG_F8_54, float, 0, true>(ta, tb, tc, p, e, grid, stream, shared);
    case WG_F8_55: return launch<WG_F8_55, float, 0, true>(ta, tb, tc, p, e, grid, stream, shared);
    default: return cudaErrorInvalidValue;
    }
}
