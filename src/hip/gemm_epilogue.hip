/* gemm_epilogue.hip - the HIP backend's epilogue pass of duet_gemm_ex (its own translation unit). */
#include "hip/runtime_hip.h"

#include "gpu/gemm_epilogue_gpu.inc"
