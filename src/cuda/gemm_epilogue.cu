/* gemm_epilogue.cu - the CUDA backend's epilogue pass of duet_gemm_ex (its own translation unit). */
#include "cuda/runtime_cuda.h"

#include "gpu/gemm_epilogue_gpu.inc"
