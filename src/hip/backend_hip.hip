/* backend_hip.hip - the HIP backend's core: devices, contexts, memory, streams, events. */
#include "hip/runtime_hip.h"

#include "gpu/backend_gpu.inc"
