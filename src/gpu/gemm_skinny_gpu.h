/* gemm_skinny_gpu.h - the entry of the GPU backends' memory-bound GEMM (gemm_skinny_gpu.inc). */
#ifndef DUET_GEMM_SKINNY_GPU_H
#define DUET_GEMM_SKINNY_GPU_H

#include "common/gemm_plan.h"
#include "common/internal.h"

/* Runs g (AUTO) as plan (dt_gemm_plan_skinny) says on the stream `stream` of ctx (be_stream: the
 * backend's stream handle, for the workspace). When the workspace cannot grow (a stream being
 * captured), the problem runs unsplit instead. Every failure sets the message;
 * DUET_ERROR_DEVICE_LOST when a launch broke the context. */
duet_status gpu_gemm_skinny_run(dt_context *ctx, void *be_stream, duet_gpu_stream_t stream,
                                const dt_gemm *g, const dt_skinny_plan *plan,
                                duet_launch_info *info);

#endif /* DUET_GEMM_SKINNY_GPU_H */
