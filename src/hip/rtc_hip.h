/* rtc_hip.h - the neutral runtime-compilation names of src/gpu/module_gpu.inc mapped to hiprtc and hipModule*. */
#ifndef DUET_RTC_HIP_H
#define DUET_RTC_HIP_H

/*
 * The same list as src/cuda/rtc_cuda.h (see there for each name). Differences that matter:
 *   - hiprtc always produces a code object for one gfx target: there is no PTX-like fallback,
 *     so a device the compiler cannot target fails to compile, with the compiler's log.
 *   - hipModule* has no query of a kernel's parameters (nothing like cudaFuncGetParamInfo), so
 *     DUET_RTC_HAS_PARAM_INFO is 0 and duet_launch cannot check the argument count on HIP.
 *   - AMD GPUs have given every kernel their whole LDS (64 KiB) without an opt-in; the limit
 *     is still raised as on CUDA (hipFuncSetAttribute), and a runtime that has no such limit
 *     for module functions is not an error.
 * hiprtc lives in libamdhip64 up to ROCm 5.2 (Debian's packages too) and in its own
 * libhiprtc from ROCm 5.3 on; cmake/DuetHip.cmake links whichever holds hiprtcCreateProgram.
 */

#include "duet/duet.h"

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#include <limits.h>

#include <stdio.h>

/* ---- compiler ---------------------------------------------------------------------------- */

typedef hiprtcProgram duet_rtc_program_t;
typedef hiprtcResult duet_rtc_result_t;
#define DUET_RTC_SUCCESS HIPRTC_SUCCESS
#define DUET_RTC_COMPILER_NAME "hiprtc"

typedef enum duet_rtc_class_t {
    DUET_RTC_CLASS_OTHER = 0,
    DUET_RTC_CLASS_COMPILE,
    DUET_RTC_CLASS_OUT_OF_MEMORY
} duet_rtc_class_t;

static inline duet_rtc_class_t duet_rtc_result_class(hiprtcResult r)
{
    switch (r) {
    case HIPRTC_ERROR_COMPILATION:
    case HIPRTC_ERROR_INVALID_OPTION:
        return DUET_RTC_CLASS_COMPILE;
    case HIPRTC_ERROR_OUT_OF_MEMORY:
        return DUET_RTC_CLASS_OUT_OF_MEMORY;
    default:
        return DUET_RTC_CLASS_OTHER;
    }
}

static inline const char *duet_rtc_error_string(hiprtcResult r) { return hiprtcGetErrorString(r); }
static inline hiprtcResult duet_rtc_version(int *major, int *minor)
{
    return hiprtcVersion(major, minor);
}
static inline hiprtcResult duet_rtc_create(hiprtcProgram *p, const char *source, const char *name)
{
    return hiprtcCreateProgram(p, source, name, 0, NULL, NULL);
}
static inline hiprtcResult duet_rtc_compile(hiprtcProgram p, int n, const char *const *options)
{
    /* hiprtc's prototype takes char ** but does not write through it. */
    return hiprtcCompileProgram(p, n, (const char **)options);
}
static inline hiprtcResult duet_rtc_log_size(hiprtcProgram p, size_t *n)
{
    return hiprtcGetProgramLogSize(p, n);
}
static inline hiprtcResult duet_rtc_log(hiprtcProgram p, char *log)
{
    return hiprtcGetProgramLog(p, log);
}
static inline hiprtcResult duet_rtc_code_size(hiprtcProgram p, int binary, size_t *n)
{
    (void)binary; /* always a code object */
    return hiprtcGetCodeSize(p, n);
}
static inline hiprtcResult duet_rtc_code(hiprtcProgram p, int binary, char *code)
{
    (void)binary;
    return hiprtcGetCode(p, code);
}
static inline void duet_rtc_destroy(hiprtcProgram *p) { (void)hiprtcDestroyProgram(p); }

/* props->arch is the gfx name without feature flags ("gfx90a"): a code object built for it
 * without xnack/sramecc settings loads in either mode. */
static inline int duet_rtc_target(const duet_device_props *props, char *opt, size_t n,
                                  int *binary, char *why, size_t why_n)
{
    if (props->arch[0] == '\0') {
        snprintf(why, why_n, "the device reports no gfx architecture");
        return 0;
    }
    snprintf(opt, n, "--gpu-architecture=%s", props->arch);
    *binary = 1;
    return 1;
}

/* ---- loader ------------------------------------------------------------------------------ */

/* hipModuleLoadData loads into the current device's context: module_gpu.inc makes the
 * context's device current first. */
typedef hipModule_t duet_rtc_module_t;
typedef hipFunction_t duet_rtc_function_t;
#define DUET_RTC_LOAD_CALL "hipModuleLoadData"
#define DUET_RTC_GET_FUNCTION_CALL "hipModuleGetFunction"
#define DUET_RTC_LAUNCH_CALL "hipModuleLaunchKernel"

static inline hipError_t duet_rtc_module_load(hipModule_t *m, const void *image, size_t bytes)
{
    (void)bytes; /* a code object is an ELF file that carries its size */
    return hipModuleLoadData(m, image);
}
/* Launches still queued on any stream may use the module's code: let them finish first. */
static inline hipError_t duet_rtc_module_unload(hipModule_t m)
{
    (void)hipDeviceSynchronize();
    return hipModuleUnload(m);
}
static inline hipError_t duet_rtc_module_get_function(hipFunction_t *f, hipModule_t m,
                                                      const char *name)
{
    return hipModuleGetFunction(f, m, name);
}
/* ROCm documents hipErrorNotFound; some releases answer hipErrorInvalidDeviceFunction. */
static inline int duet_rtc_is_not_found(hipError_t e)
{
    return e == hipErrorNotFound || e == hipErrorInvalidDeviceFunction ||
           e == hipErrorSharedObjectSymbolNotFound;
}

#define DUET_RTC_HAS_PARAM_INFO 0
static inline hipError_t duet_rtc_param_size(hipFunction_t f, size_t index, size_t *bytes)
{
    (void)f;
    (void)index;
    *bytes = 0;
    return hipErrorNotSupported;
}
static inline int duet_rtc_is_past_last_param(hipError_t e) { return e == hipErrorInvalidValue; }

/* As CUDA's path does: raise the function's limit before a launch above the default
 * per-block amount. Devices whose kernels may use more LDS than the default need it; a
 * runtime that keeps no per-function limit (the whole LDS is every kernel's) answers
 * "not supported" or "invalid device function" for a module function, which is no error here:
 * the launch itself reports a real excess. */
static inline hipError_t duet_rtc_set_max_dynamic_shared(hipFunction_t f, size_t bytes)
{
    if (bytes > (size_t)INT_MAX) return hipErrorInvalidValue;
    hipError_t e = hipFuncSetAttribute((const void *)f, hipFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)bytes);
    if (e == hipErrorNotSupported || e == hipErrorInvalidDeviceFunction) {
        (void)hipGetLastError();
        return hipSuccess;
    }
    return e;
}
static inline hipError_t duet_rtc_launch(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                         unsigned bx, unsigned by, unsigned bz,
                                         size_t shared_bytes, hipStream_t stream, void **args)
{
    return hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, (unsigned)shared_bytes, stream, args,
                                 NULL);
}

#endif /* DUET_RTC_HIP_H */
