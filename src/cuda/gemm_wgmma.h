/* gemm_wgmma.h - the Hopper (sm_90a) GEMM path's host entry point. */
#ifndef DUET_CUDA_GEMM_WGMMA_H
#define DUET_CUDA_GEMM_WGMMA_H

#include <cuda_runtime.h>

#include "common/internal.h"

/* Runs g on the sm_90a wgmma kernel, or returns DUET_ERROR_UNSUPPORTED with no message set
 * when this path does not cover it (not an sm_90 device; dtypes other than f16/bf16 -> f32 or
 * same, f32 TF32 or 3xTF32 -> f32, i8 -> i32; A or B not K-major (a.cs == 1, b.rs == 1) or C
 * without a unit column stride; a base, leading or batch stride not a multiple of 16 bytes; k == 0;
 * a problem below the size where it pays off), so the caller falls back to the portable
 * kernel. Launch failures return DUET_ERROR_LAUNCH_FAILED naming the kernel. On success info
 * (if not NULL) names the kernel and its configuration; math is DUET_MATH_TF32 on the TF32
 * path, DUET_MATH_3XTF32 on the 3xTF32 one (f32 inputs split in shared memory, 128 x 128
 * tiles). Queues work only: nothing is allocated or synchronised (graph capture works). */
duet_status gemm_wgmma_run(const dt_gemm *g, cudaStream_t stream, const duet_device_props *props,
                           duet_launch_info *info);

/* 3xTF32 with B already split by gemm_wgmma_x3_split (src/cuda/gemm_wgmma_x3.h): g->b views
 * the big parts (K-major, b.rs == 1), b_small the small parts in the same layout. Otherwise as
 * gemm_wgmma_run. */
duet_status gemm_wgmma_run_x3_split(const dt_gemm *g, const void *b_small, cudaStream_t stream,
                                    const duet_device_props *props, duet_launch_info *info);

/* Whether gemm_wgmma_run would take g as it is (no launch, no message). */
bool gemm_wgmma_covers(const dt_gemm *g, const duet_device_props *props);

/* Whether gemm_wgmma_run would take g if A and B were packed K-major with rows of *ld elements
 * (k rounded up to 16 bytes) and 16-byte-aligned bases: the caller may then copy them so
 * (src/gpu/ops_gpu.inc). Sets *ld either way. */
bool gemm_wgmma_covers_packed(const dt_gemm *g, const duet_device_props *props, int64_t *ld);

#endif /* DUET_CUDA_GEMM_WGMMA_H */
