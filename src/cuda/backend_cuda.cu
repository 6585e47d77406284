/* backend_cuda.cu - the CUDA backend: CUDA's runtime names, then duet's shared GPU host code. */
#include "cuda/runtime_cuda.h"

#include "gpu/backend_gpu.inc"
#include "gpu/module_gpu.inc"
#include "gpu/ops_gpu.inc"
