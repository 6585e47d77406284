/* backend_cuda.cu - the CUDA backend's core: devices, contexts, memory, streams, events. */
#include "cuda/runtime_cuda.h"

#include "gpu/backend_gpu.inc"
