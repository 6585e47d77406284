/* gemm_fast_f64.hip - the HIP backend's AUTO GEMM for f64 (its own translation unit). */
#include "hip/runtime_hip.h"

#define GF_COMPILE_F64 1 /* this dtype's launchers (src/gpu/gemm_fast_gpu.h) */
#include "gpu/gemm_fast_gpu.h"

template DUET_GEMM_FAST_INSTANCE(double);
