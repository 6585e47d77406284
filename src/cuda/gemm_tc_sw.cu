/* gemm_tc_sw.cu - the CUDA backend's swizzled mma.sync GEMM kernels (their own translation unit).
 */
#include "cuda/gemm_tc_sw.h"

#include "common/gemm_plan.h"
#include "gemm_tc_sw.cuh"

/* The planner (src/common/gemm_plan.c) sizes grids and split-K with these shapes. */
static_assert(TCS_BM == DT_TCS_BM && TCS_BN == DT_TCS_BN,
              "the planner's swizzled-kernel tile differs from the kernel's");

/* One instantiation, opted in to its shared memory once per device. */
template <int KIND, int LA, int LB>
static cudaError_t tcs_launch(const tc_args &p, dim3 grid, cudaStream_t stream, size_t *shared,
                              int *threads)
{
    constexpr int bytes = tcs_shared_bytes<TCS_BM, TCS_BN, TCS_STAGES>();
    auto kernel = gemm_tcs_kernel<KIND, TCS_BM, TCS_BN, TCS_STAGES, LA, LB>;
    static std::atomic<uint64_t> ready{0};
    const cudaError_t e = duet_gpu_opt_in_shared(kernel, bytes, ready);
    if (e != cudaSuccess) return e;
    *shared = (size_t)bytes;
    *threads = (TCS_BM / TCS_W) * (TCS_BN / TCS_W) * 32;
    kernel<<<grid, *threads, bytes, stream>>>(p);
    return cudaGetLastError();
}

size_t gemm_tcs_shared_bytes(void) { return (size_t)tcs_shared_bytes<TCS_BM, TCS_BN, TCS_STAGES>(); }

cudaError_t gemm_tcs_launch(int kind, int la, int lb, const tc_args &p, dim3 grid,
                            cudaStream_t stream, size_t *shared, int *threads)
{
    constexpr int A = TC_LOAD_ASYNC, M = TC_LOAD_ASYNC_MN;
#define TCS_LAYOUTS(KIND)                                                                          \
    if (la == A && lb == A) return tcs_launch<KIND, A, A>(p, grid, stream, shared, threads);       \
    if (la == A && lb == M) return tcs_launch<KIND, A, M>(p, grid, stream, shared, threads);       \
    if (la == M && lb == A) return tcs_launch<KIND, M, A>(p, grid, stream, shared, threads);       \
    if (la == M && lb == M) return tcs_launch<KIND, M, M>(p, grid, stream, shared, threads);       \
    break
    switch (kind) {
    case DUET_MMA_F16: TCS_LAYOUTS(DUET_MMA_F16);
    case DUET_MMA_BF16: TCS_LAYOUTS(DUET_MMA_BF16);
    case DUET_MMA_TF32:
        if (la == A && lb == A) return tcs_launch<DUET_MMA_TF32, A, A>(p, grid, stream, shared, threads);
        break;
    default:
        if (la == A && lb == A) return tcs_launch<DUET_MMA_I8, A, A>(p, grid, stream, shared, threads);
        break;
    }
#undef TCS_LAYOUTS
    return cudaErrorInvalidValue; /* no such instantiation: the plan and the kernel disagree */
}
