/* gemm_lowp.cu - the CUDA backend's f16, bf16, i8 and TF32 GEMM (its own translation unit). */
#include "cuda/runtime_cuda.h"

#include "gpu/gemm_lowp_gpu.inc"
