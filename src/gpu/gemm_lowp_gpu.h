/* gemm_lowp_gpu.h - the entry of the GPU backends' tensor-core GEMM (gemm_lowp_gpu.inc). */
#ifndef DUET_GEMM_LOWP_GPU_H
#define DUET_GEMM_LOWP_GPU_H

#include "common/internal.h"

/* Runs g when its inputs are f16, bf16 or i8, or f32 with a TF32 math mode (AUTO only), on
 * the portable tensor-core kernel or the SIMT one (the caller tried the Hopper path first).
 * Returns DUET_ERROR_UNSUPPORTED with no message only for an f32 math mode on a device without
 * TF32 matrix instructions: the caller then runs exact f32 (and reports DEFAULT). Every other
 * failure sets the message; DUET_ERROR_DEVICE_LOST when the launch broke the context. */
duet_status gpu_gemm_lowp_run(const dt_gemm *g, duet_gpu_stream_t stream,
                              const duet_device_props *props, duet_launch_info *info);

/* Whether g should run on copies of A and/or B packed K-major with 16-byte-aligned rows (the
 * caller packs them into the stream's workspace and calls gpu_gemm_lowp_run on the copies):
 * on NVIDIA, a problem of at least 2^27 multiply-adds (any size with DUET_GEMM_PACK_ALL=1 in
 * the environment, for the tests) that the swizzled kernel declines only because an operand
 * is not copyable as it lies. *pack_a, *pack_b say which. Never on AMD or for 3xTF32. */
bool gpu_gemm_lowp_pack_plan(const dt_gemm *g, const duet_device_props *props, bool *pack_a,
                             bool *pack_b);

#endif /* DUET_GEMM_LOWP_GPU_H */
