/* backend.h - the internal interface every backend (cpu, cuda, hip) implements, nothing more. */
#ifndef DUET_BACKEND_H
#define DUET_BACKEND_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every function returns DUET_SUCCESS or a status whose message it has set with dt_fail()
 * naming the failing runtime call. Arguments arrive validated: handles are live, sizes fit,
 * ranges are inside their buffers, launch configs are within the device's limits.
 * Functions marked "queue" are ordered on the given stream and may return before the work is
 * done. A backend never exits, aborts or throws. */

/* Backend name: "cpu", "cuda", "hip". */
const char *be_name(void);

/* Devices. */
duet_status be_device_count(int *count);
duet_status be_device_props(int device, duet_device_props *props);

/* Contexts: *ctx is backend state for one device (may be NULL-free of meaning on cpu). */
duet_status be_context_create(int device, void **ctx);
void be_context_destroy(void *ctx);

/* Device memory. bytes > 0. */
duet_status be_malloc(void *ctx, size_t bytes, void **ptr);
void be_free(void *ctx, void *ptr);

/* Pinned host memory. */
duet_status be_host_alloc(void *ctx, size_t bytes, void **ptr);
duet_status be_host_free(void *ctx, void *ptr);
duet_status be_host_register(void *ctx, void *ptr, size_t bytes);
duet_status be_host_unregister(void *ctx, void *ptr);

/* Streams. */
duet_status be_stream_create(void *ctx, void **stream);
void be_stream_destroy(void *ctx, void *stream);
duet_status be_stream_synchronize(void *ctx, void *stream);

/* Foreign objects (duet_buffer_wrap, duet_stream_wrap, duet_event_wrap). func names the
 * caller in messages. be_pointer_check: ptr != NULL, bytes > 0; DUET_ERROR_INVALID_ARGUMENT
 * unless [ptr, ptr + bytes) can be device-accessible memory of ctx's device (what the runtime
 * can tell; the cpu backend accepts any host pointer). be_stream_wrap / be_event_wrap check a
 * native handle and return the backend's stream / event for it (on GPUs the handle itself),
 * which be_stream_destroy / be_event_destroy are then never given. The backend stream of every
 * stream is its native handle (duet_stream_native). */
duet_status be_pointer_check(void *ctx, const void *ptr, size_t bytes, const char *func);
duet_status be_stream_wrap(void *ctx, void *native, void **stream, const char *func);
duet_status be_event_wrap(void *ctx, void *native, void **event, const char *func);
/* *capturing = 1 while the stream is capturing into a graph (always 0 on cpu). Never blocks
 * and never disturbs a capture. func names the caller in messages. */
duet_status be_stream_is_capturing(void *ctx, void *stream, int *capturing, const char *func);

typedef enum be_copy_kind { BE_H2D = 0, BE_D2H = 1, BE_D2D = 2 } be_copy_kind;
/* queue: bytes > 0. */
duet_status be_memcpy(void *ctx, void *stream, void *dst, const void *src, size_t bytes,
                      be_copy_kind kind);
duet_status be_memset(void *ctx, void *stream, void *dst, int value, size_t bytes);
/* queue: height lines of width bytes, at pitches dpitch and spitch (>= width); width > 0,
 * height > 0. func names the caller in messages. */
duet_status be_memcpy2d(void *ctx, void *stream, void *dst, size_t dpitch, const void *src,
                        size_t spitch, size_t width, size_t height, be_copy_kind kind,
                        const char *func);
/* queue on stream of dst_ctx: bytes > 0 from src (memory of src_ctx, which may be on another
 * device or the same one) to dst (memory of dst_ctx). GPUs: a peer copy, with peer access
 * enabled once per pair of devices where the devices allow it. */
duet_status be_memcpy_peer(void *dst_ctx, void *stream, void *dst, void *src_ctx,
                           const void *src, size_t bytes);
/* queue: later work on stream (of ctx) waits for event (of event_ctx, maybe another device). */
duet_status be_stream_wait_event(void *ctx, void *stream, void *event_ctx, void *event);

/* Events. */
duet_status be_event_create(void *ctx, void **event);
void be_event_destroy(void *ctx, void *event);
duet_status be_event_record(void *ctx, void *event, void *stream);
duet_status be_event_synchronize(void *ctx, void *event);
/* DUET_SUCCESS when complete, DUET_ERROR_NOT_READY when not. */
duet_status be_event_query(void *ctx, void *event);
duet_status be_event_elapsed_ms(void *ctx, void *start, void *stop, float *ms);

/* Ops (queue). ctx is the full context (props included). info may be NULL. */
duet_status be_gemm(dt_context *ctx, void *stream, const dt_gemm *g, const dt_plan *plan,
                    duet_launch_info *info);
duet_status be_copy2d(dt_context *ctx, void *stream, const dt_copy2d *t, const dt_plan *plan,
                      duet_launch_info *info);
duet_status be_elementwise(dt_context *ctx, void *stream, const dt_elementwise *e,
                           const dt_plan *plan, duet_launch_info *info);
/* Whether be_gemm runs g with the epilogue g->epi applied in the GEMM kernel's own store (no
 * intermediate, no epilogue pass): g is the GEMM be_gemm will receive (c is D). The answer
 * is the backend's plan for g (on GPUs dt_gemm_plan_gpu and dt_gemm_epilogue_fuses; it may
 * grow the stream's workspace for the plan, as be_gemm would), and be_gemm then runs that
 * plan. 0: the common layer runs the GEMM and be_gemm_epilogue. */
int be_gemm_fuses_epilogue(dt_context *ctx, void *stream, const dt_gemm *g);
/* Whether be_gemm multiplies g's 8-bit float A and B (g->dtype, g->b_dtype) itself, on a kernel
 * with FP8 instructions: g is the GEMM be_gemm will receive, and the answer is the backend's
 * plan for it (on GPUs dt_gemm_plan_gpu; it may grow the stream's workspace for the plan, as
 * be_gemm would). 0: the common layer decodes A and B to 16 bits and plans that GEMM. */
int be_gemm_takes_f8(dt_context *ctx, void *stream, const dt_gemm *g);
/* The epilogue pass of duet_gemm_ex (one launch on GPUs). info, when not NULL, already
 * describes the GEMM: the backend writes its kernel's name to info->epilogue and adds its
 * launch to info->launches, leaving the rest. */
duet_status be_gemm_epilogue(dt_context *ctx, void *stream, const dt_epilogue *e,
                             duet_launch_info *info);

/* duet_convert (queue): one pass over the elements; with c->amax, which the backend first sets
 * to 0 itself, the maximum is taken with integer atomics on the bit patterns (GPUs). */
duet_status be_convert(dt_context *ctx, void *stream, const dt_convert *c,
                       duet_launch_info *info);

/* Runtime compilation. A backend without it returns DUET_ERROR_UNSUPPORTED from
 * be_module_create with a message naming the backends that have it. On DUET_ERROR_COMPILE,
 * *log holds the compiler's log (malloc'd, the caller frees) and *module is NULL; on success
 * *log may hold warnings. */
duet_status be_module_create(dt_context *ctx, const char *source,
                             const duet_module_options *options, void **module, char **log);
void be_module_destroy(dt_context *ctx, void *module);
duet_status be_module_get_function(dt_context *ctx, void *module, const char *name,
                                   void **function);
/* args[i] are already resolved: pointers are device addresses (buffer base + offset). */
typedef struct be_arg {
    duet_arg_kind kind;
    union {
        void *ptr;
        int32_t i32;
        int64_t i64;
        uint32_t u32;
        uint64_t u64;
        float f32;
        double f64;
    } v;
} be_arg;
duet_status be_launch(dt_context *ctx, void *stream, void *function,
                      const duet_launch_config *cfg, const be_arg *args, int num_args);

#ifdef __cplusplus
}
#endif

#endif /* DUET_BACKEND_H */
