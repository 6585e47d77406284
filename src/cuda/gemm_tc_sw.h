/* gemm_tc_sw.h - the CUDA backend's swizzled mma.sync GEMM (kernels/gemm_tc_sw.cuh): host entry. */
#ifndef DUET_CUDA_GEMM_TC_SW_H
#define DUET_CUDA_GEMM_TC_SW_H

#include <cuda_runtime.h>

#include "gemm_tc.cuh"

/* Block tile of the swizzled kernel: 128 x 128, four warps of 64 x 64, three cp.async stages
 * (96 KiB of shared memory, two blocks per SM). On the H100 (bf16 > f32) 128 x 256 blocks of
 * eight warps run within a few percent of it from 2048^3 up (either way by shape and layout)
 * and at 0.70-0.75x its speed at 1024^3 and below, where half as many tiles leave SMs idle;
 * four stages (one block per SM) run 10-20% slower. */
#define TCS_BM     128
#define TCS_BN     128
#define TCS_STAGES 3

/* Shared memory of one block (its staged tiles), which bounds the blocks resident per SM. */
size_t gemm_tcs_shared_bytes(void);

/* Launches it on p (tiles of TCS_BM x TCS_BN) over grid; *shared and *threads say how. The
 * instantiations: f16 and bf16 with each operand by TC_LOAD_ASYNC or TC_LOAD_ASYNC_MN, tf32
 * (one pass, not 3xTF32) and i8 with both by TC_LOAD_ASYNC (the planner's rule); any other pair
 * returns cudaErrorInvalidValue. */
cudaError_t gemm_tcs_launch(int kind, int la, int lb, const tc_args &p, dim3 grid,
                            cudaStream_t stream, size_t *shared, int *threads);

#endif /* DUET_CUDA_GEMM_TC_SW_H */
