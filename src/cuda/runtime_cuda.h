/* runtime_cuda.h - the neutral host runtime names of src/gpu/ mapped to the CUDA runtime. */
#ifndef DUET_RUNTIME_CUDA_H
#define DUET_RUNTIME_CUDA_H

/*
 * Neutral names the shared host code (src/gpu/ .inc files) is written against. runtime_hip.h
 * defines the same list for HIP. The runtime calls are function-like macros (see below) returning
 * duet_gpu_error_t; the rest are types, constants and inline helpers.
 *
 * Types and constants
 *   duet_gpu_error_t, DUET_GPU_SUCCESS, DUET_GPU_ERROR_INVALID_VALUE (a launcher given a case
 *   it has no instance for), duet_gpu_stream_t, duet_gpu_event_t,
 *   duet_gpu_device_prop_t, DUET_GPU_RUNTIME_NAME ("CUDA", for messages),
 *   DUET_GPU_BACKEND_NAME ("cuda", be_name())
 * Errors
 *   duet_gpu_get_last_error()          returns and clears this thread's last error
 *   duet_gpu_error_string(e)           const char *
 *   duet_gpu_error_name(e)             const char *, e.g. "cudaErrorMemoryAllocation"
 *   duet_gpu_error_class(e)            duet_gpu_error_class_t (below): how duet reports e
 * Devices
 *   duet_gpu_get_device_count(int *n)
 *   duet_gpu_get_device_properties(duet_gpu_device_prop_t *p, int dev)
 *   duet_gpu_arch_string(const duet_gpu_device_prop_t *p, char *buf, size_t n)   void
 *   duet_gpu_set_device(int dev), duet_gpu_get_device(int *dev)
 *   duet_gpu_device_init()             creates the device's context (first call is slow)
 *   duet_gpu_mem_get_info(size_t *free_bytes, size_t *total_bytes)
 * Memory
 *   duet_gpu_malloc(void **p, size_t n), duet_gpu_free(void *p)
 *   duet_gpu_host_alloc(void **p, size_t n), duet_gpu_host_free(void *p)
 *   duet_gpu_host_register(void *p, size_t n), duet_gpu_host_unregister(void *p)
 *   duet_gpu_memcpy_async(void *dst, const void *src, size_t n, duet_gpu_memcpy_kind_t k,
 *                         duet_gpu_stream_t s), kinds DUET_GPU_MEMCPY_H2D / _D2H / _D2D
 *   duet_gpu_memset_async(void *dst, int value, size_t n, duet_gpu_stream_t s)
 *   duet_gpu_memcpy2d_async(dst, dpitch, src, spitch, width, height, kind, s)
 *   duet_gpu_memcpy_peer_async(dst, dst_dev, src, src_dev, n, s)
 *   duet_gpu_device_can_access_peer(int *can, dev, peer)
 *   duet_gpu_device_enable_peer_access(peer)   from the current device; an already enabled
 *                                      pair gives DUET_GPU_ERROR_PEER_ACCESS_ALREADY_ENABLED
 * Streams and events
 *   duet_gpu_stream_create(duet_gpu_stream_t *s)      non-blocking w.r.t. the legacy stream
 *   duet_gpu_stream_destroy(s), duet_gpu_stream_synchronize(s)
 *   duet_gpu_event_create(duet_gpu_event_t *e)        with timing
 *   duet_gpu_event_destroy(e), duet_gpu_event_record(e, s), duet_gpu_event_synchronize(e),
 *   duet_gpu_event_query(e), duet_gpu_event_elapsed_ms(float *ms, start, stop)
 *   duet_gpu_stream_wait_event(s, e)   e may be of another device
 * Foreign objects and graph capture
 *   duet_gpu_pointer_kind(const void *p, int *device)  duet_gpu_ptr_kind_t (below); *device is
 *                                      the owning device for DEVICE and MANAGED; never fails
 *   duet_gpu_stream_get_flags(s, unsigned *flags)      checks that s is a live stream
 *   duet_gpu_stream_is_capturing(s, int *capturing)
 */

#include <cuda_runtime.h>

#include <stddef.h>
#include <stdio.h>

/* The few names kernels/compat_cuda.h also defines (launchers need them) sit behind one guard,
 * so the two headers can be included in either order. */
#ifndef DUET_GPU_BASIC_NAMES
#define DUET_GPU_BASIC_NAMES
typedef cudaError_t duet_gpu_error_t;
typedef cudaStream_t duet_gpu_stream_t;
#define DUET_GPU_SUCCESS cudaSuccess
#define DUET_GPU_ERROR_INVALID_VALUE cudaErrorInvalidValue
static inline cudaError_t duet_gpu_get_last_error(void) { return cudaGetLastError(); }
static inline const char *duet_gpu_error_string(cudaError_t e) { return cudaGetErrorString(e); }
#endif /* DUET_GPU_BASIC_NAMES */

typedef cudaEvent_t duet_gpu_event_t;
typedef cudaDeviceProp duet_gpu_device_prop_t;
typedef cudaMemcpyKind duet_gpu_memcpy_kind_t;

#define DUET_GPU_RUNTIME_NAME "CUDA"
#define DUET_GPU_BACKEND_NAME "cuda"
#define DUET_GPU_MEMCPY_H2D   cudaMemcpyHostToDevice
#define DUET_GPU_MEMCPY_D2H   cudaMemcpyDeviceToHost
#define DUET_GPU_MEMCPY_D2D   cudaMemcpyDeviceToDevice

/* How duet reports a runtime error (the same classes in runtime_hip.h). */
typedef enum duet_gpu_error_class_t {
    DUET_GPU_CLASS_OTHER = 0,     /* DUET_ERROR_BACKEND                                     */
    DUET_GPU_CLASS_NO_DEVICE,     /* no GPU, no or too old a driver: DUET_ERROR_NO_DEVICE   */
    DUET_GPU_CLASS_OUT_OF_MEMORY, /* DUET_ERROR_OUT_OF_MEMORY; the context stays usable     */
    DUET_GPU_CLASS_STICKY,        /* corrupts the context: DUET_ERROR_DEVICE_LOST from now  */
    DUET_GPU_CLASS_LAUNCH,        /* a launch rejected before it ran: DUET_ERROR_LAUNCH_FAILED */
    DUET_GPU_CLASS_NOT_READY,     /* DUET_ERROR_NOT_READY                                   */
    DUET_GPU_CLASS_INVALID        /* a bad value or host range: DUET_ERROR_INVALID_ARGUMENT */
} duet_gpu_error_class_t;

static inline duet_gpu_error_class_t duet_gpu_error_class(cudaError_t e)
{
    switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorStubLibrary:
    case cudaErrorSystemNotReady:
    case cudaErrorCudartUnloading: return DUET_GPU_CLASS_NO_DEVICE;
    case cudaErrorMemoryAllocation: return DUET_GPU_CLASS_OUT_OF_MEMORY;
    /* The CUDA documentation lists these as leaving the process's context in an inconsistent
     * state: every later call on it fails, so the context must be recreated. */
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorExternalDevice:
    case cudaErrorUnknown: return DUET_GPU_CLASS_STICKY;
    case cudaErrorInvalidConfiguration:
    case cudaErrorLaunchOutOfResources:
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidKernelImage:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInvalidPtx:
    case cudaErrorSharedObjectInitFailed:
    case cudaErrorCooperativeLaunchTooLarge:
    case cudaErrorLaunchIncompatibleTexturing: return DUET_GPU_CLASS_LAUNCH;
    case cudaErrorNotReady: return DUET_GPU_CLASS_NOT_READY;
    case cudaErrorInvalidValue:
    case cudaErrorHostMemoryAlreadyRegistered:
    case cudaErrorHostMemoryNotRegistered: return DUET_GPU_CLASS_INVALID;
    default: return DUET_GPU_CLASS_OTHER;
    }
}

static inline const char *duet_gpu_error_name(cudaError_t e) { return cudaGetErrorName(e); }

/* The runtime calls are macros, not wrappers, so that a check macro which stringifies its
 * expanded argument names the real runtime call in messages ("cudaMalloc(&p, bytes) failed"). */
#define duet_gpu_get_device_count(n)           cudaGetDeviceCount(n)
#define duet_gpu_get_device_properties(p, dev) cudaGetDeviceProperties((p), (dev))
#define duet_gpu_set_device(dev)               cudaSetDevice(dev)
#define duet_gpu_get_device(dev)               cudaGetDevice(dev)
/* cudaFree(0) is the documented way to create the lazily made context now, so that a broken
 * driver shows up at duet_context_create rather than at the first buffer. */
#define duet_gpu_device_init()                         cudaFree(0)
#define duet_gpu_mem_get_info(free_bytes, total_bytes) cudaMemGetInfo((free_bytes), (total_bytes))

#define duet_gpu_malloc(p, n) cudaMalloc((p), (n))
#define duet_gpu_free(p)      cudaFree(p)
/* Portable: pinned for every context of the process, like memory from duet_host_register. */
#define duet_gpu_host_alloc(p, n)                   cudaHostAlloc((p), (n), cudaHostAllocPortable)
#define duet_gpu_host_free(p)                       cudaFreeHost(p)
#define duet_gpu_host_register(p, n)                cudaHostRegister((p), (n), cudaHostRegisterPortable)
#define duet_gpu_host_unregister(p)                 cudaHostUnregister(p)
#define duet_gpu_memcpy_async(dst, src, n, kind, s) cudaMemcpyAsync((dst), (src), (n), (kind), (s))
#define duet_gpu_memset_async(dst, value, n, s)     cudaMemsetAsync((dst), (value), (n), (s))
/* Copies between devices (cross-context copies, group gemm) and 2D host panels. */
#define duet_gpu_memcpy2d_async(dst, dpitch, src, spitch, w, h, kind, s) \
    cudaMemcpy2DAsync((dst), (dpitch), (src), (spitch), (w), (h), (kind), (s))
#define duet_gpu_memcpy_peer_async(dst, ddev, src, sdev, n, s) \
    cudaMemcpyPeerAsync((dst), (ddev), (src), (sdev), (n), (s))
#define duet_gpu_device_can_access_peer(can, dev, peer) cudaDeviceCanAccessPeer((can), (dev), (peer))
/* Enables the current device's access to peer's memory. */
#define duet_gpu_device_enable_peer_access(peer) cudaDeviceEnablePeerAccess((peer), 0)
#define DUET_GPU_ERROR_PEER_ACCESS_ALREADY_ENABLED cudaErrorPeerAccessAlreadyEnabled

/* Non-blocking: duet's streams never serialise with the legacy default stream that other code
 * in the process may use. */
#define duet_gpu_stream_create(s)                  cudaStreamCreateWithFlags((s), cudaStreamNonBlocking)
#define duet_gpu_stream_destroy(s)                 cudaStreamDestroy(s)
#define duet_gpu_stream_synchronize(s)             cudaStreamSynchronize(s)
#define duet_gpu_event_create(e)                   cudaEventCreate(e)
#define duet_gpu_event_destroy(e)                  cudaEventDestroy(e)
#define duet_gpu_event_record(e, s)                cudaEventRecord((e), (s))
#define duet_gpu_event_synchronize(e)              cudaEventSynchronize(e)
#define duet_gpu_event_query(e)                    cudaEventQuery(e)
#define duet_gpu_event_elapsed_ms(ms, start, stop) cudaEventElapsedTime((ms), (start), (stop))
/* The event may belong to another device than the stream. */
#define duet_gpu_stream_wait_event(s, e) cudaStreamWaitEvent((s), (e), 0)

/* What a pointer is, as far as the runtime knows. */
typedef enum duet_gpu_ptr_kind_t {
    DUET_GPU_PTR_UNKNOWN = 0, /* not known to the runtime: plain host memory or garbage */
    DUET_GPU_PTR_HOST,        /* pinned or registered host memory                      */
    DUET_GPU_PTR_DEVICE,      /* device memory                                         */
    DUET_GPU_PTR_MANAGED      /* managed (unified) memory                              */
} duet_gpu_ptr_kind_t;

static inline duet_gpu_ptr_kind_t duet_gpu_pointer_kind(const void *p, int *device)
{
    cudaPointerAttributes a;
    *device = -1;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return DUET_GPU_PTR_UNKNOWN;
    }
    *device = a.device;
    switch (a.type) {
    case cudaMemoryTypeDevice: return DUET_GPU_PTR_DEVICE;
    case cudaMemoryTypeManaged: return DUET_GPU_PTR_MANAGED;
    case cudaMemoryTypeHost: return DUET_GPU_PTR_HOST;
    default: return DUET_GPU_PTR_UNKNOWN;
    }
}

#define duet_gpu_stream_get_flags(s, flags) cudaStreamGetFlags((s), (flags))

/* Active or invalidated both count: either way a blocking call must not run on the stream. */
static inline cudaError_t duet_gpu_stream_is_capturing(cudaStream_t s, int *capturing)
{
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    const cudaError_t e = cudaStreamIsCapturing(s, &st);
    *capturing = e == cudaSuccess && st != cudaStreamCaptureStatusNone;
    return e;
}

static inline void duet_gpu_arch_string(const cudaDeviceProp *p, char *buf, size_t n)
{
    snprintf(buf, n, "sm_%d%d", p->major, p->minor);
}

#endif /* DUET_RUNTIME_CUDA_H */
