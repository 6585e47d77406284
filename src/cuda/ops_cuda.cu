/* ops_cuda.cu - the CUDA backend's gemm, transpose and scale/add/fill (a unit of its own). */
#include "cuda/runtime_cuda.h"

#include "gpu/gemm_fast_gpu.h" /* the AUTO GEMM's declarations; its instances: gemm_fast_*.cu */
#include "gpu/gpu_internal.h"
#include "gpu/ops_gpu.inc"
