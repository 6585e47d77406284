/* api_device.c - devices, contexts, buffers, host memory, streams, events and profiling. */
#include "backend.h"
#include "internal.h"
#include "tuning.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Resolves a handle or returns DUET_ERROR_INVALID_HANDLE naming the argument. */
#define DT_RESOLVE(var, type, kind, handle, func, argname)                                     \
    type *var = (type *)dt_handle_get((handle), (kind));                                     \
    if (!var)                                                                                \
        return dt_fail(DUET_ERROR_INVALID_HANDLE, (func), "%s is %s", (argname),             \
                       (handle) ? "not a live handle (destroyed or never created)" : "NULL")

#define DT_NOT_NULL(ptr, func, argname)                                                      \
    if (!(ptr)) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, (func), "%s is NULL", (argname))

/* ---- devices ----------------------------------------------------------------------------- */

duet_status duet_device_count(int *count)
{
    dt_clear_error();
    DT_NOT_NULL(count, "duet_device_count", "count");
    *count = 0;
    return be_device_count(count);
}

static duet_status check_device(int device, const char *func)
{
    int count = 0;
    duet_status st = be_device_count(&count);
    if (st != DUET_SUCCESS) return st;
    if (device < 0 || device >= count)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "device (%d) is out of range: %d device%s present", device, count,
                       count == 1 ? "" : "s");
    return DUET_SUCCESS;
}

duet_status duet_device_get_props(int device, duet_device_props *props)
{
    dt_clear_error();
    DT_NOT_NULL(props, "duet_device_get_props", "props");
    duet_status st = check_device(device, "duet_device_get_props");
    if (st != DUET_SUCCESS) return st;
    return be_device_props(device, props);
}

/* ---- contexts ---------------------------------------------------------------------------- */

static duet_status stream_new(dt_context *ctx, int is_default, duet_stream **out,
                              const char *func)
{
    dt_stream *s = (dt_stream *)calloc(1, sizeof *s);
    if (!s) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func, "cannot allocate a stream object");
    s->ctx = ctx;
    s->is_default = is_default;
    if (pthread_mutex_init(&s->op_lock, NULL) != 0) {
        free(s);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func, "cannot create a stream's lock");
    }
    duet_status st = be_stream_create(ctx->be, &s->be);
    if (st != DUET_SUCCESS) {
        pthread_mutex_destroy(&s->op_lock);
        free(s);
        return st;
    }
    *out = (duet_stream *)dt_handle_new(DT_STREAM, s, ctx->self);
    if (!*out) {
        be_stream_destroy(ctx->be, s->be);
        pthread_mutex_destroy(&s->op_lock);
        free(s);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func, "the handle table cannot grow");
    }
    return DUET_SUCCESS;
}

/* Releases a stream whose work is complete: its workspace, backend stream and lock. */
static void stream_free(dt_context *ctx, dt_stream *s)
{
    dt_workspace_free(ctx, &s->ws);
    dt_workspace_free(ctx, &s->epi_ws);
    dt_workspace_free(ctx, &s->f8_ws);
    if (!s->foreign) be_stream_destroy(ctx->be, s->be); /* a wrapped stream is only forgotten */
    pthread_mutex_destroy(&s->op_lock);
    free(s);
}

duet_status duet_context_create(int device, duet_context **out)
{
    static const char *fn = "duet_context_create";
    dt_clear_error();
    DT_NOT_NULL(out, fn, "ctx");
    *out = NULL;
    duet_status st = check_device(device, fn);
    if (st != DUET_SUCCESS) return st;
    dt_context *ctx = (dt_context *)calloc(1, sizeof *ctx);
    if (!ctx) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate a context object");
    ctx->device = device;
    st = be_device_props(device, &ctx->props);
    if (st == DUET_SUCCESS) st = be_context_create(device, &ctx->be);
    if (st != DUET_SUCCESS) {
        free(ctx);
        return st;
    }
    /* Never fails the creation: a bad file leaves the built-in table and says why. */
    ctx->tuning = dt_tuning_load(ctx->props.arch);
    ctx->self = (duet_context *)dt_handle_new(DT_CONTEXT, ctx, NULL);
    if (!ctx->self) {
        be_context_destroy(ctx->be);
        dt_tuning_free(ctx->tuning);
        free(ctx);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "the handle table cannot grow");
    }
    st = stream_new(ctx, 1, &ctx->default_stream, fn);
    if (st != DUET_SUCCESS) {
        dt_handle_release(ctx->self);
        be_context_destroy(ctx->be);
        dt_tuning_free(ctx->tuning);
        free(ctx);
        return st;
    }
    *out = ctx->self;
    return DUET_SUCCESS;
}

static duet_status sync_stream_obj(void *obj, void *user)
{
    dt_stream *s = (dt_stream *)obj;
    (void)user;
    return be_stream_synchronize(s->ctx->be, s->be);
}

static duet_status refuse_capture_obj(void *obj, void *func)
{
    return dt_refuse_capture((const dt_stream *)obj, (const char *)func);
}

static duet_status refuse_capture_only_obj(void *obj, void *func)
{
    const dt_stream *s = (const dt_stream *)obj;
    int capturing = 0;
    if (be_stream_is_capturing(s->ctx->be, s->be, &capturing, (const char *)func) != DUET_SUCCESS)
        return DUET_SUCCESS;
    return capturing ? dt_refuse_capture(s, (const char *)func) : DUET_SUCCESS;
}

duet_status duet_context_synchronize(duet_context *handle)
{
    dt_clear_error();
    DT_RESOLVE(ctx, dt_context, DT_CONTEXT, handle, "duet_context_synchronize", "ctx");
    duet_status st = dt_handle_for_each_owned(ctx->self, DT_STREAM, refuse_capture_obj,
                                              (void *)"duet_context_synchronize");
    if (st != DUET_SUCCESS) return st;
    return dt_handle_for_each_owned(ctx->self, DT_STREAM, sync_stream_obj, NULL);
}

static void module_release(dt_module *m, const void *module_handle);

static int function_in_context(const void *obj, const void *ctx)
{
    return ((const dt_function *)obj)->module->ctx == (const dt_context *)ctx;
}

duet_status duet_context_destroy(duet_context *handle)
{
    dt_clear_error();
    DT_RESOLVE(ctx, dt_context, DT_CONTEXT, handle, "duet_context_destroy", "ctx");
    /* A stream that is capturing cannot be waited for (and its graph would keep our memory);
     * only a capture refuses: any other failure of the question must not stop the release. */
    if (dt_handle_for_each_owned(ctx->self, DT_STREAM, refuse_capture_only_obj,
                                 (void *)"duet_context_destroy") == DUET_ERROR_INVALID_ARGUMENT)
        return DUET_ERROR_INVALID_ARGUMENT;
    dt_clear_error();
    /* Finish queued work first so that nothing in flight touches memory freed below; an error
     * here (a lost device) must not stop the release. */
    (void)dt_handle_for_each_owned(ctx->self, DT_STREAM, sync_stream_obj, NULL);
    dt_clear_error();
    /* One pass over the handle table per kind: linear in the number of objects. */
    void *obj, *h;
    uint32_t cur = 0;
    while ((h = dt_handle_take_owned(ctx->self, DT_EVENT, &cur, &obj)) != NULL) {
        dt_event *e = (dt_event *)obj;
        if (!e->foreign) be_event_destroy(ctx->be, e->be);
        free(e);
    }
    cur = 0;
    while ((h = dt_handle_take_owned(ctx->self, DT_BUFFER, &cur, &obj)) != NULL) {
        dt_buffer *b = (dt_buffer *)obj;
        if (b->ptr && !b->foreign) be_free(ctx->be, b->ptr);
        dt_buffer_release(b);
    }
    cur = 0;
    while ((h = dt_handle_take_owned(ctx->self, DT_EPILOGUE_FN, &cur, &obj)) != NULL)
        dt_epilogue_fn_release((dt_epilogue_fn *)obj);
    /* The functions of all the context's modules at once, then the modules (releasing each
     * module's functions separately would scan the table once per module). */
    cur = 0;
    while ((h = dt_handle_take_matching(DT_FUNCTION, function_in_context, ctx, &cur, &obj)) != NULL)
        free(obj);
    cur = 0;
    while ((h = dt_handle_take_owned(ctx->self, DT_MODULE, &cur, &obj)) != NULL)
        module_release((dt_module *)obj, NULL);
    cur = 0;
    while ((h = dt_handle_take_owned(ctx->self, DT_STREAM, &cur, &obj)) != NULL) {
        dt_stream *s = (dt_stream *)obj;
        stream_free(ctx, s);
    }
    dt_host_release_context(ctx);
    dt_handle_release(ctx->self);
    be_context_destroy(ctx->be);
    dt_tuning_free(ctx->tuning);
    free(ctx);
    return DUET_SUCCESS;
}

duet_status duet_context_get_props(const duet_context *handle, duet_device_props *props)
{
    dt_clear_error();
    DT_RESOLVE(ctx, dt_context, DT_CONTEXT, handle, "duet_context_get_props", "ctx");
    DT_NOT_NULL(props, "duet_context_get_props", "props");
    *props = ctx->props;
    return DUET_SUCCESS;
}

duet_status duet_context_tuning_source(const duet_context *handle, const char **text)
{
    dt_clear_error();
    DT_RESOLVE(ctx, dt_context, DT_CONTEXT, handle, "duet_context_tuning_source", "ctx");
    DT_NOT_NULL(text, "duet_context_tuning_source", "text");
    *text = dt_tuning_source(ctx->tuning);
    return DUET_SUCCESS;
}

duet_status duet_context_default_stream(duet_context *handle, duet_stream **stream)
{
    dt_clear_error();
    DT_RESOLVE(ctx, dt_context, DT_CONTEXT, handle, "duet_context_default_stream", "ctx");
    DT_NOT_NULL(stream, "duet_context_default_stream", "stream");
    *stream = ctx->default_stream;
    return DUET_SUCCESS;
}

/* ---- streams (resolution shared with the ops) -------------------------------------------- */

/* The stream to queue on: the given one (which must belong to ctx) or ctx's default. */
duet_status dt_resolve_stream(duet_stream *handle, dt_context *ctx, const char *func,
                              dt_stream **out)
{
    duet_stream *h = handle ? handle : ctx->default_stream;
    dt_stream *s = (dt_stream *)dt_handle_get(h, DT_STREAM);
    if (!s)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, func,
                       "stream is not a live handle (destroyed or never created)");
    if (s->ctx != ctx)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "stream belongs to another context than the data it works on");
    *out = s;
    return DUET_SUCCESS;
}

duet_status duet_stream_create(duet_context *handle, duet_stream **stream)
{
    dt_clear_error();
    DT_RESOLVE(ctx, dt_context, DT_CONTEXT, handle, "duet_stream_create", "ctx");
    DT_NOT_NULL(stream, "duet_stream_create", "stream");
    *stream = NULL;
    return stream_new(ctx, 0, stream, "duet_stream_create");
}

duet_status duet_stream_destroy(duet_stream *handle)
{
    dt_clear_error();
    DT_RESOLVE(s, dt_stream, DT_STREAM, handle, "duet_stream_destroy", "stream");
    if (s->is_default)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_stream_destroy",
                       "stream is its context's default stream, which lives as long as the "
                       "context");
    duet_status st = dt_refuse_capture(s, "duet_stream_destroy");
    if (st != DUET_SUCCESS) return st;
    st = be_stream_synchronize(s->ctx->be, s->be);
    dt_handle_release(handle);
    stream_free(s->ctx, s);
    return st;
}

duet_status duet_stream_synchronize(duet_stream *handle)
{
    dt_clear_error();
    DT_RESOLVE(s, dt_stream, DT_STREAM, handle, "duet_stream_synchronize", "stream");
    duet_status st = dt_refuse_capture(s, "duet_stream_synchronize");
    if (st != DUET_SUCCESS) return st;
    return be_stream_synchronize(s->ctx->be, s->be);
}

/* ---- buffers ----------------------------------------------------------------------------- */

duet_status duet_buffer_create(duet_context *handle, size_t bytes, duet_buffer **buf)
{
    static const char *fn = "duet_buffer_create";
    dt_clear_error();
    DT_RESOLVE(ctx, dt_context, DT_CONTEXT, handle, fn, "ctx");
    DT_NOT_NULL(buf, fn, "buf");
    *buf = NULL;
    dt_buffer *b = (dt_buffer *)calloc(1, sizeof *b);
    if (!b) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate a buffer object");
    b->ctx = ctx;
    b->bytes = bytes;
    if (bytes > 0) {
        duet_status st = be_malloc(ctx->be, bytes, &b->ptr);
        if (st != DUET_SUCCESS) {
            free(b);
            return st;
        }
    }
    *buf = (duet_buffer *)dt_handle_new(DT_BUFFER, b, ctx->self);
    if (!*buf) {
        if (b->ptr) be_free(ctx->be, b->ptr);
        free(b);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "the handle table cannot grow");
    }
    return DUET_SUCCESS;
}

duet_status duet_buffer_destroy(duet_buffer *handle)
{
    dt_clear_error();
    DT_RESOLVE(b, dt_buffer, DT_BUFFER, handle, "duet_buffer_destroy", "buf");
    dt_handle_release(handle);
    if (b->ptr && !b->foreign) be_free(b->ctx->be, b->ptr);
    dt_buffer_release(b);
    return DUET_SUCCESS;
}

duet_status duet_buffer_size(const duet_buffer *handle, size_t *bytes)
{
    dt_clear_error();
    DT_RESOLVE(b, dt_buffer, DT_BUFFER, handle, "duet_buffer_size", "buf");
    DT_NOT_NULL(bytes, "duet_buffer_size", "bytes");
    *bytes = b->bytes;
    return DUET_SUCCESS;
}

/* offset + bytes within size, without overflow. */
static duet_status check_range(const dt_buffer *b, size_t offset, size_t bytes, const char *func,
                               const char *offname, const char *bufname)
{
    if (offset > b->bytes || bytes > b->bytes - offset)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s (%zu) + bytes (%zu) is past the end of %s (%zu bytes)", offname,
                       offset, bytes, bufname, b->bytes);
    return DUET_SUCCESS;
}

static duet_status host_copy(duet_stream *stream, duet_buffer *bh, size_t offset, void *host,
                             size_t bytes, int to_device, int wait, const char *func)
{
    DT_RESOLVE(b, dt_buffer, DT_BUFFER, bh, func, to_device ? "dst" : "src");
    if (to_device) {
        duet_status ro = dt_refuse_read_only(b, func, "dst");
        if (ro != DUET_SUCCESS) return ro;
    }
    if (!host && bytes > 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s is NULL",
                       to_device ? "src" : "dst");
    duet_status st = check_range(b, offset, bytes, func, to_device ? "dst_offset" : "src_offset",
                                 to_device ? "dst" : "src");
    if (st != DUET_SUCCESS) return st;
    dt_stream *s = NULL;
    st = dt_resolve_stream(stream, b->ctx, func, &s);
    if (st == DUET_SUCCESS && wait) st = dt_refuse_capture(s, func);
    if (st != DUET_SUCCESS || bytes == 0) return st;
    char *dev = (char *)b->ptr + offset;
    st = to_device ? be_memcpy(b->ctx->be, s->be, dev, host, bytes, BE_H2D)
                   : be_memcpy(b->ctx->be, s->be, host, dev, bytes, BE_D2H);
    if (st == DUET_SUCCESS && wait) st = be_stream_synchronize(b->ctx->be, s->be);
    return st;
}

duet_status duet_buffer_write(duet_stream *stream, duet_buffer *dst, size_t dst_offset,
                              const void *src, size_t bytes)
{
    dt_clear_error();
    return host_copy(stream, dst, dst_offset, (void *)src, bytes, 1, 1, "duet_buffer_write");
}

duet_status duet_buffer_read(duet_stream *stream, const duet_buffer *src, size_t src_offset,
                             void *dst, size_t bytes)
{
    dt_clear_error();
    return host_copy(stream, (duet_buffer *)src, src_offset, dst, bytes, 0, 1,
                     "duet_buffer_read");
}

duet_status duet_buffer_write_async(duet_stream *stream, duet_buffer *dst, size_t dst_offset,
                                    const void *src, size_t bytes)
{
    dt_clear_error();
    return host_copy(stream, dst, dst_offset, (void *)src, bytes, 1, 0,
                     "duet_buffer_write_async");
}

duet_status duet_buffer_read_async(duet_stream *stream, const duet_buffer *src,
                                   size_t src_offset, void *dst, size_t bytes)
{
    dt_clear_error();
    return host_copy(stream, (duet_buffer *)src, src_offset, dst, bytes, 0, 0,
                     "duet_buffer_read_async");
}

duet_status duet_buffer_copy(duet_stream *stream, duet_buffer *dsth, size_t dst_offset,
                             const duet_buffer *srch, size_t src_offset, size_t bytes)
{
    static const char *fn = "duet_buffer_copy";
    dt_clear_error();
    DT_RESOLVE(d, dt_buffer, DT_BUFFER, dsth, fn, "dst");
    DT_RESOLVE(s, dt_buffer, DT_BUFFER, srch, fn, "src");
    if (d->ctx != s->ctx)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "dst and src belong to different contexts");
    duet_status st = dt_refuse_read_only(d, fn, "dst");
    if (st != DUET_SUCCESS) return st;
    st = check_range(d, dst_offset, bytes, fn, "dst_offset", "dst");
    if (st == DUET_SUCCESS) st = check_range(s, src_offset, bytes, fn, "src_offset", "src");
    if (st != DUET_SUCCESS) return st;
    if (d == s && bytes > 0 && dst_offset < src_offset + bytes && src_offset < dst_offset + bytes)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "dst range [%zu, %zu) overlaps src range [%zu, %zu) in one buffer",
                       dst_offset, dst_offset + bytes, src_offset, src_offset + bytes);
    dt_stream *ss = NULL;
    st = dt_resolve_stream(stream, d->ctx, fn, &ss);
    if (st != DUET_SUCCESS || bytes == 0) return st;
    return be_memcpy(d->ctx->be, ss->be, (char *)d->ptr + dst_offset,
                     (const char *)s->ptr + src_offset, bytes, BE_D2D);
}

duet_status duet_buffer_memset(duet_stream *stream, duet_buffer *handle, size_t offset,
                               int value, size_t bytes)
{
    static const char *fn = "duet_buffer_memset";
    dt_clear_error();
    DT_RESOLVE(b, dt_buffer, DT_BUFFER, handle, fn, "buf");
    duet_status st = dt_refuse_read_only(b, fn, "buf");
    if (st != DUET_SUCCESS) return st;
    st = check_range(b, offset, bytes, fn, "offset", "buf");
    if (st != DUET_SUCCESS) return st;
    /* Each byte is set to value: anything outside a byte would be cut to its low 8 bits. */
    if (value < 0 || value > 255)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "value (%d) is not a byte value (0..255)", value);
    dt_stream *s = NULL;
    st = dt_resolve_stream(stream, b->ctx, fn, &s);
    if (st != DUET_SUCCESS || bytes == 0) return st;
    return be_memset(b->ctx->be, s->be, (char *)b->ptr + offset, value, bytes);
}

/* ---- events ------------------------------------------------------------------------------ */

duet_status duet_event_create(duet_context *handle, duet_event **event)
{
    static const char *fn = "duet_event_create";
    dt_clear_error();
    DT_RESOLVE(ctx, dt_context, DT_CONTEXT, handle, fn, "ctx");
    DT_NOT_NULL(event, fn, "event");
    *event = NULL;
    dt_event *e = (dt_event *)calloc(1, sizeof *e);
    if (!e) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate an event object");
    e->ctx = ctx;
    duet_status st = be_event_create(ctx->be, &e->be);
    if (st != DUET_SUCCESS) {
        free(e);
        return st;
    }
    *event = (duet_event *)dt_handle_new(DT_EVENT, e, ctx->self);
    if (!*event) {
        be_event_destroy(ctx->be, e->be);
        free(e);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "the handle table cannot grow");
    }
    return DUET_SUCCESS;
}

duet_status duet_event_destroy(duet_event *handle)
{
    dt_clear_error();
    DT_RESOLVE(e, dt_event, DT_EVENT, handle, "duet_event_destroy", "event");
    dt_handle_release(handle);
    if (!e->foreign) be_event_destroy(e->ctx->be, e->be);
    free(e);
    return DUET_SUCCESS;
}

duet_status duet_event_record(duet_event *handle, duet_stream *stream)
{
    dt_clear_error();
    DT_RESOLVE(e, dt_event, DT_EVENT, handle, "duet_event_record", "event");
    dt_stream *s = NULL;
    duet_status st = dt_resolve_stream(stream, e->ctx, "duet_event_record", &s);
    if (st != DUET_SUCCESS) return st;
    int capturing = 0;
    st = be_stream_is_capturing(e->ctx->be, s->be, &capturing, "duet_event_record");
    if (st != DUET_SUCCESS) return st;
    st = be_event_record(e->ctx->be, e->be, s->be);
    if (st == DUET_SUCCESS) {
        e->recorded = 1;
        e->captured = capturing;
    }
    return st;
}

duet_status duet_event_synchronize(duet_event *handle)
{
    dt_clear_error();
    DT_RESOLVE(e, dt_event, DT_EVENT, handle, "duet_event_synchronize", "event");
    if (!e->recorded) return DUET_SUCCESS; /* nothing to wait for, as in CUDA and HIP */
    if (e->captured)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_event_synchronize",
                       "event was last recorded while its stream was capturing into a graph: "
                       "it marks a graph node, not work the host can wait for");
    return be_event_synchronize(e->ctx->be, e->be);
}

duet_status duet_event_query(duet_event *handle)
{
    dt_clear_error();
    DT_RESOLVE(e, dt_event, DT_EVENT, handle, "duet_event_query", "event");
    if (!e->recorded) return DUET_SUCCESS; /* nothing to wait for, as in CUDA and HIP */
    if (e->captured)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_event_query",
                       "event was last recorded while its stream was capturing into a graph: "
                       "it marks a graph node, not work the host can ask about");
    return be_event_query(e->ctx->be, e->be);
}

duet_status duet_event_elapsed_ms(const duet_event *start, const duet_event *stop, float *ms)
{
    static const char *fn = "duet_event_elapsed_ms";
    dt_clear_error();
    DT_RESOLVE(a, dt_event, DT_EVENT, start, fn, "start");
    DT_RESOLVE(b, dt_event, DT_EVENT, stop, fn, "stop");
    DT_NOT_NULL(ms, fn, "ms");
    if (a->ctx != b->ctx)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "start and stop belong to different contexts");
    if (!a->recorded || !b->recorded)
        return dt_fail(DUET_ERROR_NOT_READY, fn, "%s has not been recorded",
                       !a->recorded ? "start" : "stop");
    if (a->captured || b->captured)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "%s was last recorded while its stream was capturing into a graph",
                       a->captured ? "start" : "stop");
    duet_status st = be_event_query(a->ctx->be, a->be);
    if (st == DUET_SUCCESS) st = be_event_query(b->ctx->be, b->be);
    if (st == DUET_ERROR_NOT_READY)
        return dt_fail(st, fn, "the recorded work has not completed yet");
    if (st != DUET_SUCCESS) return st;
    return be_event_elapsed_ms(a->ctx->be, a->be, b->be, ms);
}

/* ---- profiling --------------------------------------------------------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* After a failure inside duet_profile: the message names duet_profile (the user called it,
 * not the event or stream call that failed inside) and keeps what the failing call said. */
static duet_status profile_fail(duet_status st, const char *what)
{
    char inner[1024];
    snprintf(inner, sizeof inner, "%s", duet_last_error());
    /* "duet_event_record: X" -> "X": the inner call's name means nothing to the caller. */
    const char *msg = inner;
    if (strncmp(msg, "duet_", 5) == 0) {
        const char *colon = strstr(msg, ": ");
        if (colon && (size_t)(colon - msg) == strcspn(msg, ": ")) msg = colon + 2;
    }
    if (what)
        return dt_fail(st, "duet_profile", "%s returned %s%s%s", what, duet_status_string(st),
                       inner[0] ? ": " : "", inner);
    return dt_fail(st, "duet_profile", "%s", msg[0] ? msg : duet_status_string(st));
}

duet_status duet_profile(duet_context *handle, duet_stream *stream, duet_profile_fn fnc,
                         void *user, int warmup, int iters, duet_profile_result *result)
{
    static const char *fn = "duet_profile";
    dt_clear_error();
    DT_RESOLVE(ctx, dt_context, DT_CONTEXT, handle, fn, "ctx");
    DT_NOT_NULL(fnc, fn, "fn");
    DT_NOT_NULL(result, fn, "result");
    if (warmup < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "warmup (%d) is negative", warmup);
    if (iters < 1)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "iters (%d) is less than 1", iters);
    /* The median needs every sample; the cap bounds that memory (8 MiB). */
    if (iters > DUET_PROFILE_MAX_ITERS)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "iters (%d) is over DUET_PROFILE_MAX_ITERS (%d)", iters,
                       DUET_PROFILE_MAX_ITERS);
    dt_stream *s = NULL;
    duet_status st = dt_resolve_stream(stream, ctx, fn, &s);
    if (st != DUET_SUCCESS) return st;
    duet_stream *sh = stream ? stream : ctx->default_stream;
    /* From here on only handles are used: fn may destroy the stream or the whole context. */
    ctx = NULL;
    s = NULL;

    double *times = (double *)malloc((size_t)iters * sizeof *times);
    if (!times) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate %d timings", iters);
    duet_event *e0 = NULL, *e1 = NULL;
    st = duet_event_create(handle, &e0);
    if (st == DUET_SUCCESS) st = duet_event_create(handle, &e1);
    if (st != DUET_SUCCESS) st = profile_fail(st, NULL);
    int failed = st != DUET_SUCCESS; /* the message is final */
    const int64_t total = (int64_t)warmup + iters;
    for (int64_t i = 0; !failed && i < total; i++) {
        const int timed = i >= warmup;
        float ms = 0;
        /* Warm-up work is finished before the first timed call. */
        if (i == warmup && (st = duet_stream_synchronize(sh)) != DUET_SUCCESS) break;
        if (timed && (st = duet_event_record(e0, sh)) != DUET_SUCCESS) break;
        st = fnc(user);
        if (st != DUET_SUCCESS) {
            st = profile_fail(st, "the profiled function");
            failed = 1;
            break;
        }
        if (!dt_handle_get(sh, DT_STREAM)) {
            st = dt_fail(DUET_ERROR_INVALID_HANDLE, fn,
                         "the profiled function destroyed the stream it runs on%s",
                         dt_handle_get(handle, DT_CONTEXT) ? "" : " (with its context)");
            failed = 1;
            break;
        }
        if (!timed) continue;
        if ((st = duet_event_record(e1, sh)) != DUET_SUCCESS) break;
        if ((st = duet_event_synchronize(e1)) != DUET_SUCCESS) break;
        if ((st = duet_event_elapsed_ms(e0, e1, &ms)) != DUET_SUCCESS) break;
        times[i - warmup] = ms;
    }
    if (st != DUET_SUCCESS && !failed) st = profile_fail(st, NULL);
    if (st == DUET_SUCCESS) {
        double sum = 0;
        for (int i = 0; i < iters; i++) sum += times[i];
        qsort(times, (size_t)iters, sizeof *times, cmp_double);
        result->min_ms = times[0];
        result->max_ms = times[iters - 1];
        result->median_ms = (iters % 2) ? times[iters / 2]
                                        : 0.5 * (times[iters / 2 - 1] + times[iters / 2]);
        result->mean_ms = sum / iters;
        result->iters = iters;
    }
    /* Keep the first failure's message: the cleanup below would clear it. A context the
     * profiled function destroyed took the events with it (the calls then fail harmlessly). */
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", duet_last_error());
    if (e0) duet_event_destroy(e0);
    if (e1) duet_event_destroy(e1);
    free(times);
    if (st != DUET_SUCCESS) return dt_fail(st, NULL, "%s", saved);
    dt_clear_error();
    return DUET_SUCCESS;
}

/* ---- modules ----------------------------------------------------------------------------- */

static void module_release(dt_module *m, const void *module_handle)
{
    /* module_handle NULL: the functions are already released. */
    void *obj;
    uint32_t cur = 0;
    while (module_handle && dt_handle_take_owned(module_handle, DT_FUNCTION, &cur, &obj) != NULL)
        free(obj);
    be_module_destroy(m->ctx, m->be);
    free(m->log);
    free(m);
}

void dt_module_release(dt_module *m, const void *module_handle) { module_release(m, module_handle); }
