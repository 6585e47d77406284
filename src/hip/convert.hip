/* convert.hip - the HIP backend's duet_convert (its own translation unit). */
#include "hip/runtime_hip.h"

#include "gpu/convert_gpu.inc"
