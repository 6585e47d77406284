/* gemm_split_reduce.h - the launch of the split GEMMs' reduction (kernels/gemm_skinny.cuh), with
 * or without duet_gemm_ex's epilogue; shared by the memory-bound family and the swizzled kernel. */
#ifndef DUET_GEMM_SPLIT_REDUCE_H
#define DUET_GEMM_SPLIT_REDUCE_H

#include "gemm_skinny.cuh"
#include "gpu/gemm_epilogue_args.h"

/* The split reduction of the memory-bound family (and of the swizzled kernel), with e applied
 * (epi) or storing C as the GEMM's own (kernels/gemm_skinny.cuh). */
template <typename ACC>
static void gpu_skinny_reduce_launch(bool epi, dim3 grid, duet_gpu_stream_t s, const sk_args &p,
                                     const ge_args &e)
{
    if (epi)
        gemm_skinny_reduce_kernel<ACC, true><<<grid, SK_REDUCE_THREADS, 0, s>>>(p, e);
    else
        gemm_skinny_reduce_kernel<ACC, false><<<grid, SK_REDUCE_THREADS, 0, s>>>(p, e);
}

#endif /* DUET_GEMM_SPLIT_REDUCE_H */
