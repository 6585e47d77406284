/* gemm_tc_small.cu - the CUDA backend's small-problem tensor-core GEMM (its own translation
 * unit). */
#include "cuda/gemm_tc_small.h"

#include "common/gemm_plan.h"

/* The planner (src/common/gemm_plan.c) sizes grids and the cluster split with these shapes. */
static_assert(TCSM_BM == DT_TC_SMALL_TILE, "the planner's small tile differs from the kernel's");
static_assert(TC_BKW * 4 == DT_TC_SMALL_KBYTES, "the planner's k-tile differs from the kernel's");
static_assert(TC_CSPLIT_MIN_BLOCKS == DT_TC_SMALL_BLOCKS_PER_UNIT,
              "the planner's resident blocks differ from the kernel's launch bound");

template <int KIND>
static cudaError_t tcsm_launch(const tc_args &p, dim3 grid, cudaStream_t stream, size_t *shared,
                               int *threads)
{
    constexpr int bytes = tc_shared_bytes<TCSM_BM, TCSM_BM, TCSM_STAGES>();
    static_assert(TCSM_BM * tc_csplit_pitch<TCSM_BM, TCSM_BM>() * 4 <= bytes,
                  "the cluster split's sums fit in the stages");
    auto kernel = gemm_tc_kernel<KIND, false, TCSM_BM, TCSM_BM, TCSM_W, TCSM_W, TCSM_STAGES,
                                 TC_LOAD_REG, TC_LOAD_REG, true>;
    *shared = (size_t)bytes;
    *threads = (TCSM_BM / TCSM_W) * (TCSM_BM / TCSM_W) * 32;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3((unsigned)*threads);
    cfg.dynamicSmemBytes = (size_t)bytes;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1;
    attr[0].val.clusterDim.y = grid.y;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = grid.y > 1 ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, p);
}

cudaError_t gemm_tc_small_launch(int kind, const tc_args &p, dim3 grid, cudaStream_t stream,
                                 size_t *shared, int *threads)
{
    switch (kind) {
    case DUET_MMA_F16: return tcsm_launch<DUET_MMA_F16>(p, grid, stream, shared, threads);
    case DUET_MMA_BF16: return tcsm_launch<DUET_MMA_BF16>(p, grid, stream, shared, threads);
    case DUET_MMA_I8: return tcsm_launch<DUET_MMA_I8>(p, grid, stream, shared, threads);
    default: return cudaErrorInvalidValue; /* no such instance: the plan and the kernel disagree */
    }
}
