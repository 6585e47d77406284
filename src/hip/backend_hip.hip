/* backend_hip.hip - the HIP backend: HIP's runtime names, then duet's shared GPU host code. */
#include "hip/runtime_hip.h"

#include "gpu/backend_gpu.inc"
#include "gpu/module_gpu.inc"
#include "gpu/ops_gpu.inc"
