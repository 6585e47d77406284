/* compat_cuda.h - the CUDA side of kernels/compat.h: neutral device names mapped to CUDA. */
#ifndef DUET_KERNELS_COMPAT_CUDA_H
#define DUET_KERNELS_COMPAT_CUDA_H

#include <cuda_runtime.h>

#define DUET_GPU_CUDA 1
#define DUET_GPU_HIP  0

#define DUET_DEVICE      __device__
#define DUET_GLOBAL      __global__
#define DUET_HOST_DEVICE __host__ __device__
#define DUET_INLINE      __forceinline__ __device__
#define DUET_RESTRICT    __restrict__

/* Every NVIDIA GPU so far runs 32-thread warps; warpSize is not a compile-time constant, so
 * kernels that size arrays by the warp use this instead. */
#define DUET_WARP_SIZE 32

#define duet_barrier() __syncthreads()

/* Launch bounds with a minimum of resident blocks per SM: exactly nvcc's own meaning. The
 * neutral name exists because hip-clang reads the second argument differently (waves per
 * SIMD), so compat_hip.h converts it there. */
#define DUET_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)

/* All lanes take part: duet's kernels call it only from converged code. */
template <typename T> DUET_INLINE T duet_shfl_xor(T v, int lane_mask)
{
    return __shfl_xor_sync(0xffffffffu, v, lane_mask);
}

/* The identity, so NVIDIA code compiles as before. NVVM hoists the same index math that
 * compat_hip.h describes (ptxas spills in the tensor-core GEMM's register-staged sm_90
 * instantiations); whether recomputing it pays there is for an H100 measurement to say. */
DUET_INLINE int duet_opaque(int x) { return x; }

typedef uint4 duet_vec16_t;

/* Shared with the host runtime header src/cuda/runtime_cuda.h, hence the common guard: the
 * backend's translation unit includes both. */
#ifndef DUET_GPU_BASIC_NAMES
#define DUET_GPU_BASIC_NAMES
typedef cudaError_t duet_gpu_error_t;
typedef cudaStream_t duet_gpu_stream_t;
#define DUET_GPU_SUCCESS cudaSuccess
static inline duet_gpu_error_t duet_gpu_get_last_error(void) { return cudaGetLastError(); }
static inline const char *duet_gpu_error_string(duet_gpu_error_t e)
{
    return cudaGetErrorString(e);
}
#endif /* DUET_GPU_BASIC_NAMES */

template <typename Kernel>
static inline duet_gpu_error_t duet_gpu_func_set_max_dynamic_shared(Kernel kernel, int bytes)
{
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

/* The same name as the host runtime header's (src/cuda/runtime_cuda.h). */
#ifndef duet_gpu_get_device
#define duet_gpu_get_device(dev) cudaGetDevice(dev)
#endif

/* How many blocks of kernel (threads each, shared bytes of dynamic shared memory) one SM/CU
 * holds at once: the size of a persistent grid. */
template <typename Kernel>
static inline duet_gpu_error_t duet_gpu_occupancy(Kernel kernel, int threads, size_t shared,
                                                  int *blocks)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, shared);
}

#endif /* DUET_KERNELS_COMPAT_CUDA_H */
