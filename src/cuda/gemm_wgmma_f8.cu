/* gemm_wgmma_f8.cu - the Hopper GEMM's instances on 8-bit float inputs (kernels/gemm_wgmma.cuh,
 * the WG_F8 kinds: e4m3 and e5m2 for A and B, K-major), C of f32, bf16 or f16; gemm_wgmma.cu
 * checks coverage, builds the tensor maps and calls gemm_wgmma_f8_launch. A translation unit
 * of their own, so that they compile beside the other instances. */
#include "cuda/gemm_wgmma_launch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

template <int KIND>
cudaError_t launch_c(duet_dtype cd, const CUtensorMap &ta, const CUtensorMap &tb,
                     const CUtensorMap &tc, const wg_params &p, const wg_epi &e, int grid,
                     cudaStream_t stream, size_t *shared)
{
    switch (cd) {
    case DUET_DTYPE_F32:
        return launch<KIND, float, 0, false>(ta, tb, tc, p, e, grid, stream, shared);
    case DUET_DTYPE_BF16:
        return launch<KIND, __nv_bfloat16, 0, false>(ta, tb, tc, p, e, grid, stream, shared);
    case DUET_DTYPE_F16:
        return launch<KIND, __half, 0, false>(ta, tb, tc, p, e, grid, stream, shared);
    default: return cudaErrorInvalidValue;
    }
}

} /* namespace */

cudaError_t gemm_wgmma_f8_launch(int kind, duet_dtype cd, const CUtensorMap &ta,
                                 const CUtensorMap &tb, const CUtensorMap &tc, const wg_params &p,
                                 const wg_epi &e, int grid, cudaStream_t stream, size_t *shared)
{
    switch (kind) {
    case WG_F8_44: return launch_c<WG_F8_44>(cd, ta, tb, tc, p, e, grid, stream, shared);
    case WG_F8_45: return launch_c<WG_F8_45>(cd, ta, tb, tc, p, e, grid, stream, shared);
    case WG_F8_54: return launch_c<WG_F8_54>(cd, ta, tb, tc, p, e, grid, stream, shared);
    case WG_F8_55: return launch_c<WG_F8_55>(cd, ta, tb, tc, p, e, grid, stream, shared);
    default: return cudaErrorInvalidValue;
    }
}
