/* gemm_tc_small.h - the CUDA backend's small-problem tensor-core GEMM (kernels/gemm_tc.cuh on
 * 64 x 64 tiles): host entry. */
#ifndef DUET_CUDA_GEMM_TC_SMALL_H
#define DUET_CUDA_GEMM_TC_SMALL_H

#include <cuda_runtime.h>

#include "gemm_tc.cuh"

/* Block tile: 64 x 64, four warps of 32 x 32, both operands register-staged (any layout and
 * alignment: no copies), two stages (20 KiB of shared memory). */
#define TCSM_BM     64
#define TCSM_W      32
#define TCSM_STAGES 4

/* Launches it on p (tiles of TCSM_BM x TCSM_BM) over grid, f16, bf16 or i8 by kind. grid.y > 1
 * splits k over a cluster of grid.y blocks (p.kslice each; sm_90, at most 8). *shared and *threads
 * say how it ran. */
cudaError_t gemm_tc_small_launch(int kind, const tc_args &p, dim3 grid, cudaStream_t stream,
                                 size_t *shared, int *threads);

#endif /* DUET_CUDA_GEMM_TC_SMALL_H */
