/* gemm_skinny.hip - the HIP backend's memory-bound GEMM for a narrow C (its own translation unit). */
#include "hip/runtime_hip.h"

#include "gpu/gemm_skinny_gpu.inc"
