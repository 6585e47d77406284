/* runtime_hip.h - the neutral host runtime names of src/gpu/ mapped to the HIP runtime (ROCm). */
#ifndef DUET_RUNTIME_HIP_H
#define DUET_RUNTIME_HIP_H

/*
 * The same list as src/cuda/runtime_cuda.h (see there for each name). Differences that matter:
 *   - warpSize is the wavefront size of the device: 64 on GCN/CDNA (gfx9), 32 on RDNA (gfx10+).
 *     One HIP binary serves both, so host code reads it from here, never from DUET_WARP_SIZE.
 *   - The architecture is gcnArchName ("gfx90a:sramecc+:xnack-") cut at its first ':': the
 *     suffix is the mode the driver runs the GPU in; code built for the plain target runs in
 *     either mode, and the tuning tables and hiprtc key on the plain name.
 *   - AMD GPUs have no opt-in shared-memory (LDS) limit beyond the per-block one; ROCm before
 *     6.0 has no sharedMemPerBlockOptin field at all, so duet_gpu_device_prop_t adds it there.
 *   - Every HIP call returns a [[nodiscard]] hipError_t: shared code casts the ones it ignores.
 */

#include <hip/hip_runtime.h>
#include <hip/hip_version.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The few names kernels/compat_hip.h also defines (launchers need them) sit behind one guard,
 * so the two headers can be included in either order. */
#ifndef DUET_GPU_BASIC_NAMES
#define DUET_GPU_BASIC_NAMES
typedef hipError_t duet_gpu_error_t;
typedef hipStream_t duet_gpu_stream_t;
#define DUET_GPU_SUCCESS hipSuccess
#define DUET_GPU_ERROR_INVALID_VALUE hipErrorInvalidValue
static inline hipError_t duet_gpu_get_last_error(void) { return hipGetLastError(); }
static inline const char *duet_gpu_error_string(hipError_t e) { return hipGetErrorString(e); }
#endif /* DUET_GPU_BASIC_NAMES */

typedef hipEvent_t duet_gpu_event_t;
typedef hipMemcpyKind duet_gpu_memcpy_kind_t;

#if HIP_VERSION_MAJOR >= 6
typedef hipDeviceProp_t duet_gpu_device_prop_t;
#else
/* ROCm 5's hipDeviceProp_t has no opt-in limit. The added field stays 0 (backend_gpu.inc zeroes
 * the struct, and 0 means "not reported": the per-block limit applies, which on AMD is the
 * whole 64 KiB a workgroup can have anyway). */
struct duet_gpu_device_prop_t : hipDeviceProp_t {
    size_t sharedMemPerBlockOptin;
};
#endif /* HIP_VERSION_MAJOR >= 6 */

#define DUET_GPU_RUNTIME_NAME "HIP"
#define DUET_GPU_BACKEND_NAME "hip"
#define DUET_GPU_MEMCPY_H2D   hipMemcpyHostToDevice
#define DUET_GPU_MEMCPY_D2H   hipMemcpyDeviceToHost
#define DUET_GPU_MEMCPY_D2D   hipMemcpyDeviceToDevice

/* How duet reports a runtime error (the same classes as runtime_cuda.h). */
typedef enum duet_gpu_error_class_t {
    DUET_GPU_CLASS_OTHER = 0,     /* DUET_ERROR_BACKEND                                     */
    DUET_GPU_CLASS_NO_DEVICE,     /* no GPU, no or too old a driver: DUET_ERROR_NO_DEVICE   */
    DUET_GPU_CLASS_OUT_OF_MEMORY, /* DUET_ERROR_OUT_OF_MEMORY; the context stays usable     */
    DUET_GPU_CLASS_STICKY,        /* corrupts the context: DUET_ERROR_DEVICE_LOST from now  */
    DUET_GPU_CLASS_LAUNCH,        /* a launch rejected before it ran: DUET_ERROR_LAUNCH_FAILED */
    DUET_GPU_CLASS_NOT_READY,     /* DUET_ERROR_NOT_READY                                   */
    DUET_GPU_CLASS_INVALID        /* a bad value or host range: DUET_ERROR_INVALID_ARGUMENT */
} duet_gpu_error_class_t;

static inline duet_gpu_error_class_t duet_gpu_error_class(hipError_t e)
{
    switch (e) {
    /* A machine without an AMD GPU or without /dev/kfd access answers hipErrorNoDevice; a
     * kernel driver too old for the runtime hipErrorInsufficientDriver; a runtime that could
     * not start (no HSA agents) hipErrorNotInitialized or hipErrorInvalidDevice. */
    case hipErrorNoDevice:
    case hipErrorInsufficientDriver:
    case hipErrorInvalidDevice:
    case hipErrorNotInitialized:
    case hipErrorDeinitialized: return DUET_GPU_CLASS_NO_DEVICE;
    case hipErrorOutOfMemory: return DUET_GPU_CLASS_OUT_OF_MEMORY;
    /* The errors a faulting kernel leaves behind. ROCm usually ends the process on a GPU
     * memory fault before any call can return; when it does not, the queue is dead.
     * hipErrorUnknown is not here: ROCm uses it for ordinary failures too. */
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorAssert:
    case hipErrorLaunchTimeOut:
    case hipErrorECCNotCorrectable:
    case hipErrorContextIsDestroyed: return DUET_GPU_CLASS_STICKY;
    case hipErrorInvalidConfiguration:
    case hipErrorMissingConfiguration:
    case hipErrorLaunchOutOfResources:
    case hipErrorInvalidDeviceFunction:
    case hipErrorNoBinaryForGpu:
    case hipErrorInvalidImage:
    case hipErrorInvalidKernelFile:
    case hipErrorSharedObjectInitFailed:
    case hipErrorCooperativeLaunchTooLarge: return DUET_GPU_CLASS_LAUNCH;
    case hipErrorNotReady: return DUET_GPU_CLASS_NOT_READY;
    case hipErrorInvalidValue:
    case hipErrorHostMemoryAlreadyRegistered:
    case hipErrorHostMemoryNotRegistered: return DUET_GPU_CLASS_INVALID;
    default: return DUET_GPU_CLASS_OTHER;
    }
}

static inline const char *duet_gpu_error_name(hipError_t e) { return hipGetErrorName(e); }

/* The runtime calls are macros, not wrappers, so that a check macro which stringifies its
 * expanded argument names the real runtime call in messages ("hipMalloc(&p, bytes) failed"). */
#define duet_gpu_get_device_count(n)           hipGetDeviceCount(n)
#define duet_gpu_get_device_properties(p, dev) hipGetDeviceProperties((p), (dev))
#define duet_gpu_set_device(dev)               hipSetDevice(dev)
#define duet_gpu_get_device(dev)               hipGetDevice(dev)
/* hipFree(NULL) does nothing but start the runtime on the current device, so a missing driver
 * or an inaccessible /dev/kfd shows up at duet_context_create rather than at the first buffer. */
#define duet_gpu_device_init()                         hipFree(NULL)
#define duet_gpu_mem_get_info(free_bytes, total_bytes) hipMemGetInfo((free_bytes), (total_bytes))

#define duet_gpu_malloc(p, n) hipMalloc((p), (n))
#define duet_gpu_free(p)      hipFree(p)
/* Portable: pinned for every device of the process, like memory from duet_host_register. */
#define duet_gpu_host_alloc(p, n)                   hipHostMalloc((p), (n), hipHostMallocPortable)
#define duet_gpu_host_free(p)                       hipHostFree(p)
#define duet_gpu_host_register(p, n)                hipHostRegister((p), (n), hipHostRegisterPortable)
#define duet_gpu_host_unregister(p)                 hipHostUnregister(p)
#define duet_gpu_memcpy_async(dst, src, n, kind, s) hipMemcpyAsync((dst), (src), (n), (kind), (s))
#define duet_gpu_memset_async(dst, value, n, s)     hipMemsetAsync((dst), (value), (n), (s))
/* Copies between devices (cross-context copies, group gemm) and 2D host panels. */
#define duet_gpu_memcpy2d_async(dst, dpitch, src, spitch, w, h, kind, s) \
    hipMemcpy2DAsync((dst), (dpitch), (src), (spitch), (w), (h), (kind), (s))
#define duet_gpu_memcpy_peer_async(dst, ddev, src, sdev, n, s) \
    hipMemcpyPeerAsync((dst), (ddev), (src), (sdev), (n), (s))
#define duet_gpu_device_can_access_peer(can, dev, peer) hipDeviceCanAccessPeer((can), (dev), (peer))
/* Enables the current device's access to peer's memory. */
#define duet_gpu_device_enable_peer_access(peer) hipDeviceEnablePeerAccess((peer), 0)
#define DUET_GPU_ERROR_PEER_ACCESS_ALREADY_ENABLED hipErrorPeerAccessAlreadyEnabled

/* Non-blocking: duet's streams never serialise with the null stream that other code in the
 * process may use. */
#define duet_gpu_stream_create(s)                  hipStreamCreateWithFlags((s), hipStreamNonBlocking)
#define duet_gpu_stream_destroy(s)                 hipStreamDestroy(s)
#define duet_gpu_stream_synchronize(s)             hipStreamSynchronize(s)
#define duet_gpu_event_create(e)                   hipEventCreate(e)
#define duet_gpu_event_destroy(e)                  hipEventDestroy(e)
#define duet_gpu_event_record(e, s)                hipEventRecord((e), (s))
#define duet_gpu_event_synchronize(e)              hipEventSynchronize(e)
#define duet_gpu_event_query(e)                    hipEventQuery(e)
#define duet_gpu_event_elapsed_ms(ms, start, stop) hipEventElapsedTime((ms), (start), (stop))
/* The event may belong to another device than the stream. */
#define duet_gpu_stream_wait_event(s, e) hipStreamWaitEvent((s), (e), 0)

/* What a pointer is, as far as the runtime knows (the same list as runtime_cuda.h). */
typedef enum duet_gpu_ptr_kind_t {
    DUET_GPU_PTR_UNKNOWN = 0, /* not known to the runtime: plain host memory or garbage */
    DUET_GPU_PTR_HOST,        /* pinned or registered host memory                      */
    DUET_GPU_PTR_DEVICE,      /* device memory                                         */
    DUET_GPU_PTR_MANAGED      /* managed (unified) memory                              */
} duet_gpu_ptr_kind_t;

/* ROCm 6 renamed hipPointerAttribute_t's memoryType to type. */
#if defined(HIP_VERSION_MAJOR) && HIP_VERSION_MAJOR >= 6
#define DUET_HIP_PTR_TYPE(a) ((a).type)
#else
#define DUET_HIP_PTR_TYPE(a) ((a).memoryType)
#endif

static inline duet_gpu_ptr_kind_t duet_gpu_pointer_kind(const void *p, int *device)
{
    hipPointerAttribute_t a;
    memset(&a, 0, sizeof a);
    *device = -1;
    if (hipPointerGetAttributes(&a, p) != hipSuccess) {
        (void)hipGetLastError(); /* HIP reports plain host memory as an invalid value */
        return DUET_GPU_PTR_UNKNOWN;
    }
    *device = a.device;
    if (a.isManaged) return DUET_GPU_PTR_MANAGED;
    switch (DUET_HIP_PTR_TYPE(a)) {
    case hipMemoryTypeDevice: return DUET_GPU_PTR_DEVICE;
    case hipMemoryTypeHost: return DUET_GPU_PTR_HOST;
    default: return DUET_GPU_PTR_UNKNOWN;
    }
}

#define duet_gpu_stream_get_flags(s, flags) hipStreamGetFlags((s), (flags))

static inline hipError_t duet_gpu_stream_is_capturing(hipStream_t s, int *capturing)
{
    hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
    const hipError_t e = hipStreamIsCapturing(s, &st);
    *capturing = e == hipSuccess && st != hipStreamCaptureStatusNone;
    return e;
}

/* gcnArchName up to its first ':' ("gfx90a:sramecc+:xnack-" gives "gfx90a"). */
static inline void duet_gpu_arch_string(const duet_gpu_device_prop_t *p, char *buf, size_t n)
{
    const size_t len = strcspn(p->gcnArchName, ":");
    snprintf(buf, n, "%.*s", (int)len, p->gcnArchName);
}

#endif /* DUET_RUNTIME_HIP_H */
