/* gemm_skinny.cu - the CUDA backend's memory-bound GEMM for a narrow C (its own translation unit). */
#include "cuda/runtime_cuda.h"

#include "gpu/gemm_skinny_gpu.inc"
