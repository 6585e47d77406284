/* gemm_tiny_gpu.h - the entry of the GPU backends' small-problem GEMM (gemm_tiny_gpu.inc). */
#ifndef DUET_GEMM_TINY_GPU_H
#define DUET_GEMM_TINY_GPU_H

#include "common/gemm_plan.h"
#include "common/internal.h"

/* Runs g (any input dtype: f32 in any math mode runs as exact f32) on the compact SIMT kernel
 * (kernels/gemm_tiny.cuh) in one launch, on tiles of side `tile` (16, 32 or 64), as the
 * planner's DT_GEMM_TINY says. Every failure sets the message; DUET_ERROR_DEVICE_LOST when the
 * launch broke the context. */
duet_status gpu_gemm_tiny_run(const dt_gemm *g, int tile, duet_gpu_stream_t stream,
                              const duet_device_props *props, duet_launch_info *info);

#endif /* DUET_GEMM_TINY_GPU_H */
