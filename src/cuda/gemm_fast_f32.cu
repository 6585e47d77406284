/* gemm_fast_f32.cu - the CUDA backend's AUTO GEMM for f32 (its own translation unit). */
#include "cuda/runtime_cuda.h"

#define GF_COMPILE_F32 1 /* this dtype's launchers (src/gpu/gemm_fast_gpu.h) */
#include "gpu/gemm_fast_gpu.h"

template DUET_GEMM_FAST_INSTANCE(float);
