/* gemm_lowp_gpu.h - the entry of the GPU backends' tensor-core GEMM (gemm_lowp_gpu.inc). */
#ifndef DUET_GEMM_LOWP_GPU_H
#define DUET_GEMM_LOWP_GPU_H

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

/* The split for g on props, where the swizzled kernel will run it: as it lies, or on K-major
 * copies of both operands when `packed`. split 1 wherever that kernel does not run g
 * (AMD, 3xTF32, batches, operands it cannot copy) or the grid already fills the device. */
void gpu_gemm_lowp_split_plan(const dt_gemm *g, const duet_device_props *props, bool packed,
                              gpu_lowp_split *sp);

/* Runs g when its inputs are f16, bf16 or i8, or f32 with a TF32 math mode (AUTO only), on
 * the portable tensor-core kernel or the SIMT one (the caller tried the Hopper path first),
 * split as sp says (NULL: not split; the caller reserved sp->ws). Returns
 * DUET_ERROR_UNSUPPORTED with no message only for an f32 math mode on a device without TF32
 * matrix instructions: the caller then runs exact f32 (and reports DEFAULT). Every other
 * failure sets the message; DUET_ERROR_DEVICE_LOST when the launch broke the context. */
duet_status gpu_gemm_lowp_run(const dt_gemm *g, duet_gpu_stream_t stream,
                              const duet_device_props *props, const gpu_lowp_split *sp,
                              duet_launch_info *info);

/* Whether g should run on copies of A and/or B packed K-major with 16-byte-aligned rows (the
 * caller packs them into the stream's workspace and calls gpu_gemm_lowp_run on the copies):
 * on NVIDIA, any problem that the swizzled kernel declines only because an operand is not
 * copyable as it lies, unless DUET_GEMM_NO_PACK=1 is in the environment (the tests' way to the
 * register-staged kernel, AMD's, on NVIDIA). *pack_a, *pack_b say which. Never on AMD or for
 * 3xTF32. */
bool gpu_gemm_lowp_pack_plan(const dt_gemm *g, const duet_device_props *props, bool *pack_a,
                             bool *pack_b);

#endif /* DUET_GEMM_LOWP_GPU_H */
