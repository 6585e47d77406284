/* module_cuda.cu - the CUDA backend's runtime-compiled modules (their own translation unit). */
#include "cuda/runtime_cuda.h"

#include "gpu/gpu_internal.h"
#include "gpu/module_gpu.inc"
