/* compat.h - the neutral device-side vocabulary of duet's kernels (CUDA or HIP). */
#ifndef DUET_KERNELS_COMPAT_H
#define DUET_KERNELS_COMPAT_H

/*
 * Neutral names every vendor header (compat_cuda.h, compat_hip.h) defines. Kernels and their
 * launchers use only these and plain CUDA-syntax built-ins (threadIdx, blockIdx, blockDim,
 * gridDim, __shared__, <<<...>>>), which hip-clang accepts as they are.
 *
 *   DUET_GPU_CUDA / DUET_GPU_HIP   1 for the vendor being compiled, 0 for the other
 *   DUET_DEVICE                    device function qualifier (__device__)
 *   DUET_GLOBAL                    kernel qualifier (__global__)
 *   DUET_HOST_DEVICE               __host__ __device__
 *   DUET_INLINE                    force-inline device helper (__forceinline__ __device__)
 *   DUET_RESTRICT                  __restrict__
 *   DUET_WARP_SIZE                 threads per warp/wavefront. In device code a compile-time
 *                                  constant (32 on NVIDIA; 64 or 32 on AMD, from
 *                                  __AMDGCN_WAVEFRONT_SIZE). Host code must read the device's
 *                                  warp_size from duet_device_props instead: one HIP binary
 *                                  may serve wave64 and wave32 GPUs.
 *   duet_barrier()                 block-wide barrier (__syncthreads)
 *   DUET_LAUNCH_BOUNDS(threads, blocks)
 *                                  __launch_bounds__ with a minimum of resident blocks per
 *                                  SM / compute unit (HIP converts blocks to waves per SIMD)
 *   duet_shfl_xor(v, lane_mask)    butterfly exchange over the whole warp/wavefront
 *   duet_opaque(x)                 an int x the optimiser cannot see through (identity on
 *                                  NVIDIA): per-thread index math derived from it inside a loop
 *                                  is not hoisted out and held in registers across the loop
 *   duet_vec16_t                   a 16-byte, 16-byte-aligned type for vectorized global access
 *   duet_gpu_stream_t              the runtime's stream type, for launchers
 *   duet_gpu_error_t               the runtime's error type
 *   DUET_GPU_SUCCESS               its success value
 *   duet_gpu_get_last_error()      returns and clears the calling thread's last runtime error
 *   duet_gpu_error_string(e)       a constant description of e
 *   duet_gpu_func_set_max_dynamic_shared(kernel, bytes)
 *                                  opts a kernel in to more than 48 KiB of dynamic shared
 *                                  memory on the current device; returns duet_gpu_error_t
 *   duet_gpu_get_device(&device)   the calling thread's current device
 *   duet_gpu_opt_in_shared(kernel, bytes, ready)
 *                                  the opt-in once per device (below)
 */

#if defined(__HIPCC__) || defined(DUET_HIP)
#include "compat_hip.h"
#else
#include "compat_cuda.h"
#endif /* __HIPCC__ || DUET_HIP */

#include <atomic>
#include <stdint.h>

/* Opts kernel in to `bytes` of dynamic shared memory on the calling thread's current device, once
 * per device. The attribute belongs to a device: set once per process, a kernel launched on a
 * second device (duet_group_gemm's members) asked that device for more than its default and
 * failed to launch. `ready` is the kernel's own mask of the devices done (one static per
 * instantiation); devices past 63 set it on every launch. Racing first calls set the same value
 * twice, which is harmless. */
template <typename Kernel>
static inline duet_gpu_error_t duet_gpu_opt_in_shared(Kernel kernel, int bytes,
                                                      std::atomic<uint64_t> &ready)
{
    int device = 0;
    duet_gpu_error_t e = duet_gpu_get_device(&device);
    if (e != DUET_GPU_SUCCESS) return e;
    const uint64_t bit = device >= 0 && device < 64 ? (uint64_t)1 << device : 0;
    if (bit && (ready.load(std::memory_order_acquire) & bit)) return DUET_GPU_SUCCESS;
    e = duet_gpu_func_set_max_dynamic_shared(kernel, bytes);
    if (e == DUET_GPU_SUCCESS) ready.fetch_or(bit, std::memory_order_release);
    return e;
}

#endif /* DUET_KERNELS_COMPAT_H */
