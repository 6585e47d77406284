/* ops_hip.hip - the HIP backend's gemm, transpose and scale/add/fill (a unit of its own). */
#include "hip/runtime_hip.h"

#include "gpu/gemm_fast_gpu.h" /* the AUTO GEMM's declarations; its instances: gemm_fast_*.hip */
#include "gpu/gpu_internal.h"
#include "gpu/ops_gpu.inc"
