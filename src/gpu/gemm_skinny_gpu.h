/* gemm_skinny_gpu.h - the entry of the GPU backends' memory-bound GEMM (gemm_skinny_gpu.inc). */
#ifndef DUET_GEMM_SKINNY_GPU_H
#define DUET_GEMM_SKINNY_GPU_H

#include "common/gemm_plan.h"
#include "common/internal.h"

/* Runs g (AUTO) as plan (dt_gemm_plan_skinny, within dt_gemm_plan_gpu) says on `stream`, the
 * partial sums of a split in plan->workspace bytes at ws (reserved by the caller). Every
 * failure sets the message; DUET_ERROR_DEVICE_LOST when a launch broke the context. */
duet_status gpu_gemm_skinny_run(dt_context *ctx, duet_gpu_stream_t stream, const dt_gemm *g,
                                const dt_skinny_plan *plan, void *ws, duet_launch_info *info);

#endif /* DUET_GEMM_SKINNY_GPU_H */
