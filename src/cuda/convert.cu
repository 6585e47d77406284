/* convert.cu - the CUDA backend's duet_convert (its own translation unit). */
#include "cuda/runtime_cuda.h"

#include "gpu/convert_gpu.inc"
