/* gpu_internal.h - what the GPU backends' translation units share: context state, error checks. */
#ifndef DUET_GPU_INTERNAL_H
#define DUET_GPU_INTERNAL_H

/*
 * The shared GPU host code is compiled as several translation units per backend, so that a
 * parallel build is not bound by one large file:
 *   backend_<rt>  backend_gpu.inc: devices, contexts, memory, streams, events (defines the
 *                 functions declared here)
 *   module_<rt>   module_gpu.inc: runtime-compiled modules
 *   ops_<rt>      ops_gpu.inc: gemm, transpose, scale/add/fill
 *   gemm_fast_<dtype>  the AUTO GEMM of one dtype (src/gpu/gemm_fast_gpu.h)
 * Each includes its runtime header (runtime_cuda.h / runtime_hip.h) first, then this one. The
 * functions are C++ (not exported: the library's symbols are hidden by default).
 */
#include "common/backend.h"

#include <atomic>
#include <stdio.h>

enum { GPU_USABLE = 0, GPU_MARKING = 1, GPU_LOST = 2 };

/* Backend state of one duet context. A sticky runtime error (illegal address, device assert,
 * ...) ruins the process's context on that device: from then on every call through this duet
 * context answers DUET_ERROR_DEVICE_LOST with the first error, instead of whatever confusing
 * status the runtime gives the next call. */
struct gpu_context {
    int device;
    std::atomic<int> state;
    char lost_msg[512];
};

/* Records the first sticky error of a context; later callers see it in their message. */
void gpu_mark_lost(gpu_context *gc, const char *msg);

/* Maps a failed runtime call to a duet status and this thread's message. Non-sticky errors are
 * also cleared from the runtime's per-thread last error, so a failed allocation does not make
 * the next kernel launch look failed. */
duet_status gpu_report(gpu_context *gc, duet_gpu_error_t e, const char *func, const char *call,
                       const char *file, int line);

/* Every call on a context starts here: refuse a lost context, then make its device current for
 * this thread. */
duet_status gpu_enter(gpu_context *gc, const char *func);

/* The one check macro: records the call, file and line, and returns the mapped status. The
 * call is stringified after expansion, so the message names the runtime's own function. */
#define GPU_STR_(x) #x
#define GPU_STR(x)  GPU_STR_(x)
#define GPU_CHECK(gc, func, call)                                                                  \
    do {                                                                                           \
        duet_gpu_error_t gpu_e_ = (call);                                                          \
        if (gpu_e_ != DUET_GPU_SUCCESS)                                                            \
            return gpu_report((gc), gpu_e_, (func), GPU_STR(call), __FILE__, __LINE__);            \
    } while (0)

#define GPU_TRY(expr)                                                                              \
    do {                                                                                           \
        duet_status gpu_s_ = (expr);                                                               \
        if (gpu_s_ != DUET_SUCCESS) return gpu_s_;                                                 \
    } while (0)

/* The runtime's stream for a backend stream pointer (NULL: the runtime's default stream). */
static inline duet_gpu_stream_t gpu_stream(void *stream) { return (duet_gpu_stream_t)stream; }

#endif /* DUET_GPU_INTERNAL_H */
