/* transpose_inplace.hip - the HIP unit of the in-place transpose kernels and launches. */
#include "hip/runtime_hip.h"

#include "gpu/transpose_inplace_gpu.inc"
