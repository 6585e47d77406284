/* gemm_lowp.hip - the HIP backend's f16, bf16 and i8 GEMM (its own translation unit). */
#include "hip/runtime_hip.h"

#include "gpu/gemm_lowp_gpu.inc"
