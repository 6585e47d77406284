/* error.c - status names, the per-thread last-error message and compile log, version info. */
#include "backend.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_MSC_VER)
#define DT_THREAD_LOCAL __declspec(thread)
#else
#define DT_THREAD_LOCAL _Thread_local
#endif

/* Long enough for a compile log's first lines after the function name. */
static DT_THREAD_LOCAL char g_last_error[1024];
static DT_THREAD_LOCAL char *g_compile_log;

duet_status dt_fail(duet_status status, const char *func, const char *fmt, ...)
{
    /* Formatted into a local buffer first: an argument may point into g_last_error itself (a
     * message being rewritten or prefixed), and vsnprintf must not read what it writes. */
    char msg[sizeof g_last_error];
    int n = func ? snprintf(msg, sizeof msg, "%s: ", func) : 0;
    if (n < 0 || (size_t)n >= sizeof msg) return status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    memcpy(g_last_error, msg, sizeof msg);
    return status;
}

void dt_clear_error(void) { g_last_error[0] = '\0'; }

const char *duet_last_error(void) { return g_last_error; }

void dt_set_compile_log(const char *log)
{
    free(g_compile_log);
    g_compile_log = NULL;
    if (log) {
        size_t len = strlen(log);
        g_compile_log = (char *)malloc(len + 1);
        if (g_compile_log) memcpy(g_compile_log, log, len + 1);
    }
}

const char *duet_last_compile_log(void) { return g_compile_log ? g_compile_log : ""; }

const char *duet_status_string(duet_status status)
{
    switch (status) {
    case DUET_SUCCESS: return "success";
    case DUET_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case DUET_ERROR_INVALID_HANDLE: return "invalid handle";
    case DUET_ERROR_OUT_OF_MEMORY: return "out of memory";
    case DUET_ERROR_NO_DEVICE: return "no device";
    case DUET_ERROR_UNSUPPORTED: return "unsupported";
    case DUET_ERROR_LAUNCH_FAILED: return "launch failed";
    case DUET_ERROR_BACKEND: return "backend error";
    case DUET_ERROR_COMPILE: return "compile error";
    case DUET_ERROR_DEVICE_LOST: return "device lost";
    case DUET_ERROR_NOT_READY: return "not ready";
    }
    return "unknown status";
}

int duet_version(void) { return DUET_VERSION; }

/* Built once: the backend's name is known only at run time through be_name(). */
static char g_version_text[64];
static pthread_once_t g_version_once = PTHREAD_ONCE_INIT;

static void version_text_init(void)
{
    snprintf(g_version_text, sizeof g_version_text, "%s (%s)", DUET_VERSION_STRING, be_name());
}

const char *duet_version_string(void)
{
    pthread_once(&g_version_once, version_text_init);
    return g_version_text;
}

const char *duet_backend_name(void) { return be_name(); }

size_t duet_dtype_size(duet_dtype dtype)
{
    switch (dtype) {
    case DUET_DTYPE_F32: return 4;
    case DUET_DTYPE_F64: return 8;
    case DUET_DTYPE_I32: return 4;
    case DUET_DTYPE_F16: return 2;
    case DUET_DTYPE_BF16: return 2;
    case DUET_DTYPE_I8: return 1;
    case DUET_DTYPE_F8E4M3: return 1;
    case DUET_DTYPE_F8E5M2: return 1;
    }
    return 0;
}

const char *duet_dtype_name(duet_dtype dtype)
{
    switch (dtype) {
    case DUET_DTYPE_F32: return "f32";
    case DUET_DTYPE_F64: return "f64";
    case DUET_DTYPE_I32: return "i32";
    case DUET_DTYPE_F16: return "f16";
    case DUET_DTYPE_BF16: return "bf16";
    case DUET_DTYPE_I8: return "i8";
    case DUET_DTYPE_F8E4M3: return "f8e4m3";
    case DUET_DTYPE_F8E5M2: return "f8e5m2";
    }
    return "invalid dtype";
}

const char *duet_algorithm_name(duet_algorithm algorithm)
{
    switch (algorithm) {
    case DUET_ALGO_AUTO: return "auto";
    case DUET_ALGO_NAIVE: return "naive";
    case DUET_ALGO_TILED: return "tiled";
    case DUET_ALGO_TILED_PADDED: return "tiled_padded";
    case DUET_ALGO_GRID_STRIDE: return "grid_stride";
    }
    return "invalid algorithm";
}

const char *duet_math_mode_name(duet_math_mode mode)
{
    switch (mode) {
    case DUET_MATH_DEFAULT: return "default";
    case DUET_MATH_TF32: return "tf32";
    case DUET_MATH_3XTF32: return "3xtf32";
    case DUET_MATH_FAST_ACCUM: return "fast_accum";
    }
    return "invalid math mode";
}

void dt_fill_info(duet_launch_info *info, const char *kernel, const dt_plan *plan, int launches)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    snprintf(info->kernel, sizeof info->kernel, "%s", kernel ? kernel : "");
    if (plan) {
        info->algorithm = plan->algo;
        info->config = plan->cfg;
        info->tile = plan->tile;
    }
    info->launches = launches;
    info->tuning[0] = '-';
}
