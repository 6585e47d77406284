/* gemm_lowp_gpu.h - the entry of the GPU backends' tensor-core GEMM (gemm_lowp_gpu.inc). */
#ifndef DUET_GEMM_LOWP_GPU_H
#define DUET_GEMM_LOWP_GPU_H

#include "common/gemm_plan.h"
#include "common/internal.h"

/* A split-K of the swizzled kernel (dt_gemm_tile_split): `split` slices of `kslice` k, their
 * raw partial sums (f32; i32 for i8) in `bytes` of the stream's workspace at `ws`. split 1:
 * not split (ws unused). */
typedef struct gpu_lowp_split {
    int split;
    int64_t kslice;
    size_t bytes;
    void *ws;
} gpu_lowp_split;

/* Runs g when its inputs are f16, bf16 or i8, or f32 with a TF32 math mode, on the family the
 * planner chose (dt_gemm_plan_gpu): DT_GEMM_TCS (NVIDIA's swizzled kernel, split as sp says:
 * NULL or split 1 is whole; the caller reserved sp->ws), DT_GEMM_TC (register-staged mma.sync
 * or MFMA) or DT_GEMM_LOWP_SIMT. Every failure sets the message; DUET_ERROR_DEVICE_LOST when
 * the launch broke the context. */
duet_status gpu_gemm_lowp_run(const dt_gemm *g, dt_gemm_family family, duet_gpu_stream_t stream,
                              const duet_device_props *props, const gpu_lowp_split *sp,
                              duet_launch_info *info);

/* Shared bytes of one block of the swizzled kernel (0 where it does not exist): the planner's
 * dt_gemm_target.tcs_shared. */
size_t gpu_gemm_tcs_shared_bytes(void);

#endif /* DUET_GEMM_LOWP_GPU_H */
