/* rtc_cuda.h - the neutral runtime-compilation names of src/gpu/module_gpu.inc mapped to NVRTC and the CUDA runtime's library API. */
#ifndef DUET_RTC_CUDA_H
#define DUET_RTC_CUDA_H

/*
 * Neutral names module_gpu.inc is written against; src/hip/rtc_hip.h defines the same list for
 * hiprtc and hipModule*. Compiler calls return duet_rtc_result_t, loader calls return
 * duet_gpu_error_t (runtime_cuda.h), so loader errors are classified like every other runtime
 * error of the backend.
 *
 * Compiler
 *   duet_rtc_program_t, duet_rtc_result_t, DUET_RTC_SUCCESS
 *   DUET_RTC_COMPILER_NAME              "NVRTC", for messages
 *   duet_rtc_version(int *major, int *minor)
 *   duet_rtc_result_class(r)            duet_rtc_class_t (below)
 *   duet_rtc_error_string(r)            const char *
 *   duet_rtc_create(p, source, name)    a program from NUL-terminated source
 *   duet_rtc_compile(p, n, options)
 *   duet_rtc_log_size(p, size_t *n), duet_rtc_log(p, char *log)
 *   duet_rtc_code_size(p, binary, size_t *n), duet_rtc_code(p, binary, char *code)
 *                                       binary: 1 for a device binary (cubin), 0 for PTX
 *   duet_rtc_destroy(duet_rtc_program_t *p)   void
 *   duet_rtc_target(props, char *opt, size_t n, int *binary, char *why, size_t why_n)
 *                                       the architecture option for the device; 0 and a reason
 *                                       in why when the compiler cannot target it
 * Loader
 *   duet_rtc_module_t, duet_rtc_function_t
 *   DUET_RTC_LOAD_CALL, DUET_RTC_GET_FUNCTION_CALL, DUET_RTC_LAUNCH_CALL   call names, for messages
 *   duet_rtc_module_load(duet_rtc_module_t *m, const void *image, size_t bytes)
 *   duet_rtc_module_unload(m)
 *   duet_rtc_module_get_function(duet_rtc_function_t *f, m, name)
 *   duet_rtc_is_not_found(e)            the module has no kernel of that name
 *   DUET_RTC_HAS_PARAM_INFO             1 when the runtime tells a kernel's parameters
 *   duet_rtc_param_size(f, index, size_t *bytes)
 *   duet_rtc_is_past_last_param(e)      the error duet_rtc_param_size gives past the last one
 *   duet_rtc_set_max_dynamic_shared(f, bytes)
 *   duet_rtc_launch(f, gx, gy, gz, bx, by, bz, shared_bytes, stream, void **args)
 */

#include "duet/duet.h"

#include <cuda_runtime.h>
#include <nvrtc.h>

#include <stdio.h>
#include <stdlib.h>

/* cudaLibraryLoadData and cudaKernel_t arrived in CUDA 12.0. */
#if CUDART_VERSION < 12000
#error "duet's runtime compilation needs the CUDA 12.0 runtime or later (cudaLibraryLoadData)"
#endif /* CUDART_VERSION < 12000 */

/* ---- compiler ---------------------------------------------------------------------------- */

typedef nvrtcProgram duet_rtc_program_t;
typedef nvrtcResult duet_rtc_result_t;
#define DUET_RTC_SUCCESS NVRTC_SUCCESS
#define DUET_RTC_COMPILER_NAME "NVRTC"

/* How module_gpu.inc reports a compiler result (the same classes in rtc_hip.h). */
typedef enum duet_rtc_class_t {
    DUET_RTC_CLASS_OTHER = 0,     /* DUET_ERROR_BACKEND (a broken install, say)            */
    DUET_RTC_CLASS_COMPILE,       /* the source or an option was rejected: DUET_ERROR_COMPILE */
    DUET_RTC_CLASS_OUT_OF_MEMORY  /* DUET_ERROR_OUT_OF_MEMORY                               */
} duet_rtc_class_t;

static inline duet_rtc_class_t duet_rtc_result_class(nvrtcResult r)
{
    switch (r) {
    case NVRTC_ERROR_COMPILATION:
    case NVRTC_ERROR_INVALID_OPTION:
        return DUET_RTC_CLASS_COMPILE;
    case NVRTC_ERROR_OUT_OF_MEMORY:
        return DUET_RTC_CLASS_OUT_OF_MEMORY;
    default:
        return DUET_RTC_CLASS_OTHER;
    }
}

static inline const char *duet_rtc_error_string(nvrtcResult r) { return nvrtcGetErrorString(r); }
static inline nvrtcResult duet_rtc_version(int *major, int *minor)
{
    return nvrtcVersion(major, minor);
}
static inline nvrtcResult duet_rtc_create(nvrtcProgram *p, const char *source, const char *name)
{
    return nvrtcCreateProgram(p, source, name, 0, NULL, NULL);
}
static inline nvrtcResult duet_rtc_compile(nvrtcProgram p, int n, const char *const *options)
{
    return nvrtcCompileProgram(p, n, options);
}
static inline nvrtcResult duet_rtc_log_size(nvrtcProgram p, size_t *n)
{
    return nvrtcGetProgramLogSize(p, n);
}
static inline nvrtcResult duet_rtc_log(nvrtcProgram p, char *log)
{
    return nvrtcGetProgramLog(p, log);
}
/* A real architecture (sm_XY) gives a cubin the driver loads as it is; a virtual one
 * (compute_XY) gives PTX the driver compiles when the library is loaded. */
static inline nvrtcResult duet_rtc_code_size(nvrtcProgram p, int binary, size_t *n)
{
    return binary ? nvrtcGetCUBINSize(p, n) : nvrtcGetPTXSize(p, n);
}
static inline nvrtcResult duet_rtc_code(nvrtcProgram p, int binary, char *code)
{
    return binary ? nvrtcGetCUBIN(p, code) : nvrtcGetPTX(p, code);
}
static inline void duet_rtc_destroy(nvrtcProgram *p) { (void)nvrtcDestroyProgram(p); }

/* The device's own architecture when NVRTC knows it (cubin: nothing is left to the driver's
 * JIT, and the first launch is not slowed by it). A device newer than this NVRTC gets PTX for
 * the newest architecture NVRTC has below it, which the driver compiles forward; a device
 * older than NVRTC's oldest target cannot be served. */
static inline int duet_rtc_target(const duet_device_props *props, char *opt, size_t n,
                                  int *binary, char *why, size_t why_n)
{
    int cc = props->capability_major * 10 + props->capability_minor;
    int count = 0;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) {
        snprintf(why, why_n, "nvrtcGetNumSupportedArchs failed");
        return 0;
    }
    int *archs = (int *)malloc((size_t)count * sizeof *archs);
    if (!archs) {
        snprintf(why, why_n, "cannot allocate %d architecture numbers", count);
        return 0;
    }
    int exact = 0, below = 0, oldest = 0;
    if (nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS) {
        for (int i = 0; i < count; i++) {
            if (archs[i] == cc) exact = 1;
            if (archs[i] < cc && archs[i] > below) below = archs[i];
            if (oldest == 0 || archs[i] < oldest) oldest = archs[i];
        }
    }
    free(archs);
    if (exact) {
        snprintf(opt, n, "--gpu-architecture=sm_%d", cc);
        *binary = 1;
        return 1;
    }
    if (below) {
        snprintf(opt, n, "--gpu-architecture=compute_%d", below);
        *binary = 0;
        return 1;
    }
    snprintf(why, why_n, "this NVRTC cannot target sm_%d (its oldest architecture is sm_%d)", cc,
             oldest);
    return 0;
}

/* ---- loader ------------------------------------------------------------------------------ */

/* The runtime's library API (CUDA 12.0+) loads cubin or PTX without libduet linking the driver
 * library (libcuda.so): the runtime opens the driver itself, so a machine without one still
 * loads libduet and reports DUET_ERROR_NO_DEVICE. A library is context-independent: the kernel
 * handle launches on whichever device is current. */
typedef cudaLibrary_t duet_rtc_module_t;
typedef cudaKernel_t duet_rtc_function_t;
#define DUET_RTC_LOAD_CALL "cudaLibraryLoadData"
#define DUET_RTC_GET_FUNCTION_CALL "cudaLibraryGetKernel"
#define DUET_RTC_LAUNCH_CALL "cudaLaunchKernel"

static inline cudaError_t duet_rtc_module_load(cudaLibrary_t *m, const void *image, size_t bytes)
{
    (void)bytes; /* a cubin carries its size and PTX is NUL-terminated */
    return cudaLibraryLoadData(m, image, NULL, NULL, 0, NULL, NULL, 0);
}
/* Launches still queued on any stream may use the library's code: let them finish first
 * (rare and cheap next to a compile; a sticky error is left for the unload to report). */
static inline cudaError_t duet_rtc_module_unload(cudaLibrary_t m)
{
    (void)cudaDeviceSynchronize();
    return cudaLibraryUnload(m);
}
static inline cudaError_t duet_rtc_module_get_function(cudaKernel_t *f, cudaLibrary_t m,
                                                       const char *name)
{
    return cudaLibraryGetKernel(f, m, name);
}
static inline int duet_rtc_is_not_found(cudaError_t e)
{
    return e == cudaErrorSymbolNotFound || e == cudaErrorSharedObjectSymbolNotFound;
}

/* cudaFuncGetParamInfo (CUDA 12.4+) takes a cudaKernel_t and answers cudaErrorInvalidValue for
 * an index past the last parameter, which is how the count is found. A driver older than the
 * runtime answers something else, and launches then go unchecked. */
#if CUDART_VERSION >= 12040
#define DUET_RTC_HAS_PARAM_INFO 1
static inline cudaError_t duet_rtc_param_size(cudaKernel_t f, size_t index, size_t *bytes)
{
    size_t offset = 0;
    return cudaFuncGetParamInfo((const void *)f, index, &offset, bytes);
}
#else
#define DUET_RTC_HAS_PARAM_INFO 0
static inline cudaError_t duet_rtc_param_size(cudaKernel_t f, size_t index, size_t *bytes)
{
    (void)f;
    (void)index;
    *bytes = 0;
    return cudaErrorNotSupported;
}
#endif /* CUDART_VERSION >= 12040 */
static inline int duet_rtc_is_past_last_param(cudaError_t e) { return e == cudaErrorInvalidValue; }

static inline cudaError_t duet_rtc_set_max_dynamic_shared(cudaKernel_t f, size_t bytes)
{
    return cudaFuncSetAttribute((const void *)f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)bytes);
}
static inline cudaError_t duet_rtc_launch(cudaKernel_t f, unsigned gx, unsigned gy, unsigned gz,
                                          unsigned bx, unsigned by, unsigned bz,
                                          size_t shared_bytes, cudaStream_t stream, void **args)
{
    return cudaLaunchKernel((const void *)f, dim3(gx, gy, gz), dim3(bx, by, bz), args,
                            shared_bytes, stream);
}

#endif /* DUET_RTC_CUDA_H */
