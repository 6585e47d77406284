/* runtime_hip.h - the neutral host runtime names of src/gpu/ mapped to the HIP runtime (ROCm). */
#ifndef DUET_RUNTIME_HIP_H
#define DUET_RUNTIME_HIP_H

/*
 * The same list as src/cuda/runtime_cuda.h (see there for each name). Differences that matter:
 *   - warpSize is the wavefront size of the device: 64 on GCN/CDNA (gfx9), 32 on RDNA (gfx10+).
 *     One HIP binary serves both, so host code reads it from here, never from DUET_WARP_SIZE.
 *   - The architecture is gcnArchName ("gfx90a:sramecc+:xnack-") cut at its first ':': the
 *     feature suffix depends on how the driver runs the GPU, not on what code it accepts, and
 *     the tuning tables and hiprtc want the plain target name.
 *   - AMD GPUs have no opt-in shared-memory (LDS) limit beyond the per-block one; ROCm before
 *     6.0 does not report sharedMemPerBlockOptin at all, so it is filled in here.
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
static inline hipError_t duet_gpu_get_last_error(void) { return hipGetLastError(); }
static inline const char *duet_gpu_error_string(hipError_t e) { return hipGetErrorString(e); }
#endif /* DUET_GPU_BASIC_NAMES */

typedef hipEvent_t duet_gpu_event_t;
typedef hipMemcpyKind duet_gpu_memcpy_kind_t;

#if HIP_VERSION_MAJOR >= 6
typedef hipDeviceProp_t duet_gpu_device_prop_t;
#else
/* ROCm 5's hipDeviceProp_t lacks the opt-in limit; on AMD it equals the per-block one. */
struct duet_gpu_device_prop_t : hipDeviceProp_t {
    size_t sharedMemPerBlockOptin;
};
#endif /* HIP_VERSION_MAJOR >= 6 */

#define DUET_GPU_RUNTIME_NAME "HIP"
#define DUET_GPU_BACKEND_NAME "hip"
#define DUET_GPU_MEMCPY_H2D hipMemcpyHostToDevice
#define DUET_GPU_MEMCPY_D2H hipMemcpyDeviceToHost
#define DUET_GPU_MEMCPY_D2D hipMemcpyDeviceToDevice

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
    case hipErrorDeinitialized:
        return DUET_GPU_CLASS_NO_DEVICE;
    case hipErrorOutOfMemory:
        return DUET_GPU_CLASS_OUT_OF_MEMORY;
    /* The errors a faulting kernel leaves behind. ROCm usually ends the process on a GPU
     * memory fault before any call can return; when it does not, the queue is dead.
     * hipErrorUnknown is not here: ROCm uses it for ordinary failures too. */
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorAssert:
    case hipErrorLaunchTimeOut:
    case hipErrorECCNotCorrectable:
    case hipErrorContextIsDestroyed:
        return DUET_GPU_CLASS_STICKY;
    case hipErrorInvalidConfiguration:
    case hipErrorMissingConfiguration:
    case hipErrorLaunchOutOfResources:
    case hipErrorInvalidDeviceFunction:
    case hipErrorNoBinaryForGpu:
    case hipErrorInvalidImage:
    case hipErrorInvalidKernelFile:
    case hipErrorSharedObjectInitFailed:
    case hipErrorCooperativeLaunchTooLarge:
        return DUET_GPU_CLASS_LAUNCH;
    case hipErrorNotReady:
        return DUET_GPU_CLASS_NOT_READY;
    case hipErrorInvalidValue:
    case hipErrorHostMemoryAlreadyRegistered:
    case hipErrorHostMemoryNotRegistered:
        return DUET_GPU_CLASS_INVALID;
    default:
        return DUET_GPU_CLASS_OTHER;
    }
}

static inline const char *duet_gpu_error_name(hipError_t e) { return hipGetErrorName(e); }

static inline hipError_t duet_gpu_get_device_count(int *n) { return hipGetDeviceCount(n); }
static inline hipError_t duet_gpu_get_device_properties(duet_gpu_device_prop_t *p, int dev)
{
#if HIP_VERSION_MAJOR >= 6
    return hipGetDeviceProperties(p, dev);
#else
    hipDeviceProp_t *base = p;
    const hipError_t e = hipGetDeviceProperties(base, dev);
    p->sharedMemPerBlockOptin = e == hipSuccess ? base->sharedMemPerBlock : 0;
    return e;
#endif /* HIP_VERSION_MAJOR >= 6 */
}
static inline void duet_gpu_arch_string(const duet_gpu_device_prop_t *p, char *buf, size_t n)
{
    const size_t len = strcspn(p->gcnArchName, ":");
    snprintf(buf, n, "%.*s", (int)len, p->gcnArchName);
}
static inline hipError_t duet_gpu_set_device(int dev) { return hipSetDevice(dev); }
/* hipFree(NULL) does nothing but start the runtime on the current device, so a missing
 * driver or an inaccessible /dev/kfd shows up at duet_context_create. */
static inline hipError_t duet_gpu_device_init(void) { return hipFree(NULL); }
static inline hipError_t duet_gpu_mem_get_info(size_t *free_bytes, size_t *total_bytes)
{
    return hipMemGetInfo(free_bytes, total_bytes);
}

static inline hipError_t duet_gpu_malloc(void **p, size_t n) { return hipMalloc(p, n); }
static inline hipError_t duet_gpu_free(void *p) { return hipFree(p); }
/* Portable: pinned for every device of the process, like memory from duet_host_register. */
static inline hipError_t duet_gpu_host_alloc(void **p, size_t n)
{
    return hipHostMalloc(p, n, hipHostMallocPortable);
}
static inline hipError_t duet_gpu_host_free(void *p) { return hipHostFree(p); }
static inline hipError_t duet_gpu_host_register(void *p, size_t n)
{
    return hipHostRegister(p, n, hipHostRegisterPortable);
}
static inline hipError_t duet_gpu_host_unregister(void *p) { return hipHostUnregister(p); }
static inline hipError_t duet_gpu_memcpy_async(void *dst, const void *src, size_t n,
                                               hipMemcpyKind k, hipStream_t s)
{
    return hipMemcpyAsync(dst, src, n, k, s);
}
static inline hipError_t duet_gpu_memset_async(void *dst, int value, size_t n, hipStream_t s)
{
    return hipMemsetAsync(dst, value, n, s);
}

/* Non-blocking: duet's streams never serialise with the null stream of other code in the
 * process. */
static inline hipError_t duet_gpu_stream_create(hipStream_t *s)
{
    return hipStreamCreateWithFlags(s, hipStreamNonBlocking);
}
static inline hipError_t duet_gpu_stream_destroy(hipStream_t s) { return hipStreamDestroy(s); }
static inline hipError_t duet_gpu_stream_synchronize(hipStream_t s)
{
    return hipStreamSynchronize(s);
}
static inline hipError_t duet_gpu_event_create(hipEvent_t *e) { return hipEventCreate(e); }
static inline hipError_t duet_gpu_event_destroy(hipEvent_t e) { return hipEventDestroy(e); }
static inline hipError_t duet_gpu_event_record(hipEvent_t e, hipStream_t s)
{
    return hipEventRecord(e, s);
}
static inline hipError_t duet_gpu_event_synchronize(hipEvent_t e)
{
    return hipEventSynchronize(e);
}
static inline hipError_t duet_gpu_event_query(hipEvent_t e) { return hipEventQuery(e); }
static inline hipError_t duet_gpu_event_elapsed_ms(float *ms, hipEvent_t start, hipEvent_t stop)
{
    return hipEventElapsedTime(ms, start, stop);
}

#endif /* DUET_RUNTIME_HIP_H */
