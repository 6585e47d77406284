/* gemm_tiny.cu - the CUDA backend's small-problem GEMM (its own translation unit). */
#include "cuda/runtime_cuda.h"

#include "gpu/gemm_tiny_gpu.inc"
