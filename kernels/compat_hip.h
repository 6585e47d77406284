/* compat_hip.h - the HIP side of kernels/compat.h: neutral device names mapped to HIP (AMD). */
#ifndef DUET_KERNELS_COMPAT_HIP_H
#define DUET_KERNELS_COMPAT_HIP_H

#include <hip/hip_runtime.h>

#define DUET_GPU_CUDA 0
#define DUET_GPU_HIP  1

#define DUET_DEVICE      __device__
#define DUET_GLOBAL      __global__
#define DUET_HOST_DEVICE __host__ __device__
#define DUET_INLINE      __forceinline__ __device__
#define DUET_RESTRICT    __restrict__

/*
 * Wavefront size. GCN and CDNA (gfx9: gfx908, gfx90a, gfx940/942) run 64-lane wavefronts;
 * RDNA (gfx10, gfx11, gfx12) runs 32 lanes in HIP. One build holds code for both, so the value
 * is decided per target, in the device pass. The generation decides it, as AMD now recommends:
 * clang deprecated __AMDGCN_WAVEFRONT_SIZE(__) in LLVM 20 and removed it later. Where the
 * compiler still has the macro, the two must agree (an RDNA build with -mwavefrontsize64 would
 * not, and is refused rather than silently mis-sized).
 *
 * The host pass parses kernel bodies too and needs some constant there; it gets 64, the larger
 * size, so arrays sized by it are never too small. Host code must not use DUET_WARP_SIZE for
 * launch math: it reads warp_size from duet_device_props (hipDeviceProp_t::warpSize).
 */
#if defined(__HIP_DEVICE_COMPILE__)
#if defined(__GFX10__) || defined(__GFX11__) || defined(__GFX12__)
#define DUET_WARP_SIZE 32
#else
#define DUET_WARP_SIZE 64
#endif /* RDNA */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-pragma"
#if defined(__AMDGCN_WAVEFRONT_SIZE) && __AMDGCN_WAVEFRONT_SIZE != DUET_WARP_SIZE
#error "duet: this target's wavefront size differs from its generation's (-mwavefrontsize64?)"
#endif /* __AMDGCN_WAVEFRONT_SIZE */
#pragma clang diagnostic pop
#else
#define DUET_WARP_SIZE 64
#endif /* __HIP_DEVICE_COMPILE__ */

#define duet_barrier() __syncthreads()

/* __launch_bounds__(threads, n): nvcc reads n as blocks per SM, hip-clang as waves per SIMD
 * (amdgpu_waves_per_eu), so passing a CUDA block count straight through asks AMD for something
 * else (4 "blocks" become a 64-VGPR cap on gfx908). DUET_LAUNCH_BOUNDS takes blocks per compute
 * unit on both and converts here: a gfx9 CU has 4 SIMDs, an RDNA CU 2 (HIP runs RDNA in CU
 * mode), and a block of `threads` is ceil(threads / DUET_WARP_SIZE) waves. */
#if defined(__GFX10__) || defined(__GFX11__) || defined(__GFX12__)
#define DUET_SIMDS_PER_CU 2
#else
#define DUET_SIMDS_PER_CU 4
#endif /* RDNA */
#if DUET_SIMDS_PER_CU == 2
/* RDNA: the converted hint (4 blocks of 256 threads = 16 waves per SIMD32) caps a wave at 64
 * VGPRs and made the AUTO copy and transpose kernels spill on gfx1030; the thread count alone
 * leaves the register budget to the compiler, as before the conversion existed. */
#define DUET_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads)
#else
#define DUET_LAUNCH_BOUNDS(threads, blocks)                                                        \
    __launch_bounds__((threads), ((blocks) * (((threads) + DUET_WARP_SIZE - 1) / DUET_WARP_SIZE) + \
                                  DUET_SIMDS_PER_CU - 1) /                                         \
                                     DUET_SIMDS_PER_CU)
#endif /* RDNA */

/* HIP's __shfl_xor exchanges over the whole wavefront (width = warpSize) and takes no lane
 * mask: a 32-bit mask such as CUDA's 0xffffffff would name only half of a wave64. duet's
 * kernels call it from converged code only, as on CUDA. */
template <typename T> DUET_INLINE T duet_shfl_xor(T v, int lane_mask)
{
    return __shfl_xor(v, lane_mask);
}

/* x unchanged, as a value the optimiser cannot see through. LLVM hoists per-thread index math
 * that is invariant in a loop out of it and holds the results in VGPRs for the whole loop; in
 * a persistent kernel with many per-element offsets (the tensor-core GEMM's loaders and
 * epilogue) that filled the register file on CDNA and spilled to scratch. Math derived from
 * duet_opaque(tid) inside the loop is recomputed where it is used: a few VALU instructions. */
DUET_INLINE int duet_opaque(int x)
{
    asm volatile("" : "+v"(x));
    return x;
}

/* HIP's uint4 is a 16-byte vector with 16-byte alignment, like CUDA's. */
typedef uint4 duet_vec16_t;
static_assert(sizeof(duet_vec16_t) == 16 && alignof(duet_vec16_t) == 16, "duet_vec16_t");

/* Shared with the host runtime header src/hip/runtime_hip.h, hence the common guard: the
 * backend's translation unit includes both. */
#ifndef DUET_GPU_BASIC_NAMES
#define DUET_GPU_BASIC_NAMES
typedef hipError_t duet_gpu_error_t;
typedef hipStream_t duet_gpu_stream_t;
#define DUET_GPU_SUCCESS hipSuccess
static inline duet_gpu_error_t duet_gpu_get_last_error(void) { return hipGetLastError(); }
static inline const char *duet_gpu_error_string(duet_gpu_error_t e) { return hipGetErrorString(e); }
#endif /* DUET_GPU_BASIC_NAMES */

/* Every AMD GPU duet targets gives a workgroup at most 64 KiB of LDS, with no opt-in step
 * (gfx950's 160 KiB aside); ROCm accepts the attribute and ignores it, and a launch asking for
 * more than the device has fails at launch. Kept so the launchers read the same on both. */
template <typename Kernel>
static inline duet_gpu_error_t duet_gpu_func_set_max_dynamic_shared(Kernel kernel, int bytes)
{
    return hipFuncSetAttribute(reinterpret_cast<const void *>(kernel),
                               hipFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

/* The same name as the host runtime header's (src/hip/runtime_hip.h). */
#ifndef duet_gpu_get_device
#define duet_gpu_get_device(dev) hipGetDevice(dev)
#endif

/* How many blocks of kernel (threads each, shared bytes of dynamic shared memory) one SM/CU
 * holds at once: the size of a persistent grid. */
template <typename Kernel>
static inline duet_gpu_error_t duet_gpu_occupancy(Kernel kernel, int threads, size_t shared,
                                                  int *blocks)
{
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(
        blocks, reinterpret_cast<const void *>(kernel), threads, shared);
}

#endif /* DUET_KERNELS_COMPAT_HIP_H */
