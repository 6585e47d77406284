/* module_hip.hip - the HIP backend's runtime-compiled modules (their own translation unit). */
#include "hip/runtime_hip.h"

#include "gpu/gpu_internal.h"
#include "gpu/module_gpu.inc"
