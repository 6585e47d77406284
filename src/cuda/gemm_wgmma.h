/* gemm_wgmma.h - the Hopper (sm_90a) GEMM path's host entry point. */
#ifndef DUET_CUDA_GEMM_WGMMA_H
#define DUET_CUDA_GEMM_WGMMA_H

#include <cuda_runtime.h>

#include "common/internal.h"

/* Runs g on the sm_90a wgmma kernel, as the planner (dt_gemm_plan_gpu, src/common/gemm_plan.c)
 * chose: capability 9.0; f16/bf16 -> f32 or same, f32 TF32 or 3xTF32 -> f32, i8 -> i32, 8-bit
 * floats (A's g->dtype, B's g->b_dtype, e4m3 or e5m2 each) -> f32, f16 or bf16; A and B
 * K-major (16-bit inputs also MN-major) and C with a unit column stride; bases, leading and
 * batch strides multiples of 16 bytes; k >= 1. Returns DUET_ERROR_UNSUPPORTED with no message
 * when g breaks one of those rules (the plan and the kernel disagree: the caller reports it).
 * Launch failures return DUET_ERROR_LAUNCH_FAILED naming the kernel. On success info (if not
 * NULL) names the kernel and its configuration; math is DUET_MATH_TF32 on the TF32 path,
 * DUET_MATH_3XTF32 on the 3xTF32 one (f32 inputs split in shared memory, 128 x 128 tiles).
 * With g->epi (dt_gemm_epilogue_fuses said so: 16-bit, TF32 or 8-bit float inputs, beta 0, D f32,
 * f16 or bf16 as g->c) the kernel applies duet_gemm_ex's epilogue in its store ("_epi" kernels).
 * Queues work only: nothing is allocated or synchronised (graph capture works). */
duet_status gemm_wgmma_run(const dt_gemm *g, cudaStream_t stream, const duet_device_props *props,
                           duet_launch_info *info);

/* 3xTF32 with B already split by gemm_wgmma_x3_split (src/cuda/gemm_wgmma_x3.h): g->b views
 * the big parts (K-major, b.rs == 1), b_small the small parts in the same layout. Otherwise as
 * gemm_wgmma_run. */
duet_status gemm_wgmma_run_x3_split(const dt_gemm *g, const void *b_small, cudaStream_t stream,
                                    const duet_device_props *props, duet_launch_info *info);

/* Shared bytes a block of the wgmma kernels needs (the largest of the f32-C, 16-bit-C and
 * fused-epilogue configurations): the planner's dt_gemm_target.wgmma_shared. */
size_t gemm_wgmma_shared_bytes(void);

/* Whether tensor maps can be encoded (the driver's cuTensorMapEncodeTiled was found). */
bool gemm_wgmma_ready(void);

#endif /* DUET_CUDA_GEMM_WGMMA_H */
