/* transpose_inplace.cu - the CUDA unit of the in-place transpose kernels and launches. */
#include "cuda/runtime_cuda.h"

#include "gpu/transpose_inplace_gpu.inc"
