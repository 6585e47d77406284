/* api_interop.c - the application's own memory, streams and events as duet handles; capture. */
#include "backend.h"
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>

#define RESOLVE(var, type, kind, handle, func, argname)                                          \
    type *var = (type *)dt_handle_get((handle), (kind));                                       \
    if (!var)                                                                                  \
        return dt_fail(DUET_ERROR_INVALID_HANDLE, (func), "%s is %s", (argname),               \
                       (handle) ? "not a live handle (destroyed or never created)" : "NULL")

#define NOT_NULL(ptr, func, argname)                                                           \
    if (!(ptr)) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, (func), "%s is NULL", (argname))

duet_status dt_refuse_capture(const dt_stream *s, const char *func)
{
    int capturing = 0;
    duet_status st = be_stream_is_capturing(s->ctx->be, s->be, &capturing, func);
    if (st != DUET_SUCCESS) return st;
    if (capturing)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "the stream is capturing into a graph: a call that blocks the host on it "
                       "would invalidate the capture (end the capture first, or use the "
                       "asynchronous form)");
    return DUET_SUCCESS;
}

/* ---- buffers ----------------------------------------------------------------------------- */

duet_status dt_buffer_wrap(dt_context *ctx, void *ptr, size_t bytes, void (*release)(void *),
                           void *release_arg, int read_only, const char *func, duet_buffer **out)
{
    *out = NULL;
    if (!ptr && bytes > 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "ptr is NULL but bytes is %zu", bytes);
    if (bytes > 0 && bytes - 1 > UINTPTR_MAX - (uintptr_t)ptr)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "ptr (%p) + bytes (%zu) wraps around the address space", ptr, bytes);
    if (bytes > 0) {
        duet_status st = be_pointer_check(ctx->be, ptr, bytes, func);
        if (st != DUET_SUCCESS) return st;
    }
    dt_buffer *b = (dt_buffer *)calloc(1, sizeof *b);
    if (!b) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func, "cannot allocate a buffer object");
    b->ctx = ctx;
    b->ptr = bytes > 0 ? ptr : NULL;
    b->bytes = bytes;
    b->foreign = 1;
    b->read_only = read_only;
    *out = (duet_buffer *)dt_handle_new(DT_BUFFER, b, ctx->self);
    if (!*out) {
        free(b);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func, "the handle table cannot grow");
    }
    /* Set last: nothing above may run the callback on a failure. */
    b->release = release;
    b->release_arg = release_arg;
    return DUET_SUCCESS;
}

duet_status dt_refuse_read_only(const dt_buffer *b, const char *func, const char *argname)
{
    if (!b->read_only) return DUET_SUCCESS;
    return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                   "%s is read-only: it was imported from a DLPack tensor flagged "
                   "DLPACK_FLAG_BITMASK_READ_ONLY, and no duet call writes it",
                   argname);
}

void dt_buffer_release(dt_buffer *b)
{
    if (b->release) b->release(b->release_arg);
    free(b);
}

duet_status duet_buffer_wrap(duet_context *handle, void *ptr, size_t bytes, duet_buffer **buf)
{
    static const char *fn = "duet_buffer_wrap";
    dt_clear_error();
    RESOLVE(ctx, dt_context, DT_CONTEXT, handle, fn, "ctx");
    NOT_NULL(buf, fn, "buf");
    return dt_buffer_wrap(ctx, ptr, bytes, NULL, NULL, 0, fn, buf);
}

duet_status duet_buffer_is_wrapped(const duet_buffer *handle, int *wrapped)
{
    dt_clear_error();
    RESOLVE(b, dt_buffer, DT_BUFFER, handle, "duet_buffer_is_wrapped", "buf");
    NOT_NULL(wrapped, "duet_buffer_is_wrapped", "wrapped");
    *wrapped = b->foreign;
    return DUET_SUCCESS;
}

duet_status duet_buffer_device_ptr(const duet_buffer *handle, size_t offset, void **ptr)
{
    static const char *fn = "duet_buffer_device_ptr";
    dt_clear_error();
    RESOLVE(b, dt_buffer, DT_BUFFER, handle, fn, "buf");
    NOT_NULL(ptr, fn, "ptr");
    if (offset > b->bytes)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "offset (%zu) is past the end of buf (%zu bytes)", offset, b->bytes);
    *ptr = b->ptr ? (char *)b->ptr + offset : NULL;
    return DUET_SUCCESS;
}

/* ---- streams ----------------------------------------------------------------------------- */

duet_status duet_stream_wrap(duet_context *handle, void *native, duet_stream **stream)
{
    static const char *fn = "duet_stream_wrap";
    dt_clear_error();
    RESOLVE(ctx, dt_context, DT_CONTEXT, handle, fn, "ctx");
    NOT_NULL(stream, fn, "stream");
    *stream = NULL;
    void *be = NULL;
    duet_status st = be_stream_wrap(ctx->be, native, &be, fn);
    if (st != DUET_SUCCESS) return st;
    dt_stream *s = (dt_stream *)calloc(1, sizeof *s);
    if (!s) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate a stream object");
    s->ctx = ctx;
    s->be = be;
    s->foreign = 1;
    if (pthread_mutex_init(&s->op_lock, NULL) != 0) {
        free(s);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot create a stream's lock");
    }
    *stream = (duet_stream *)dt_handle_new(DT_STREAM, s, ctx->self);
    if (!*stream) {
        pthread_mutex_destroy(&s->op_lock);
        free(s);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "the handle table cannot grow");
    }
    return DUET_SUCCESS;
}

duet_status duet_stream_native(const duet_stream *handle, void **native)
{
    dt_clear_error();
    RESOLVE(s, dt_stream, DT_STREAM, handle, "duet_stream_native", "stream");
    NOT_NULL(native, "duet_stream_native", "native");
    *native = s->be;
    return DUET_SUCCESS;
}

/* ---- events ------------------------------------------------------------------------------ */

duet_status duet_event_wrap(duet_context *handle, void *native, duet_event **event)
{
    static const char *fn = "duet_event_wrap";
    dt_clear_error();
    RESOLVE(ctx, dt_context, DT_CONTEXT, handle, fn, "ctx");
    NOT_NULL(event, fn, "event");
    *event = NULL;
    void *be = NULL;
    duet_status st = be_event_wrap(ctx->be, native, &be, fn);
    if (st != DUET_SUCCESS) return st;
    if (!native) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "native is NULL");
    dt_event *e = (dt_event *)calloc(1, sizeof *e);
    if (!e) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate an event object");
    e->ctx = ctx;
    e->be = be;
    e->foreign = 1;
    e->recorded = 1; /* the application may have recorded it; the runtime answers for it */
    *event = (duet_event *)dt_handle_new(DT_EVENT, e, ctx->self);
    if (!*event) {
        free(e);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "the handle table cannot grow");
    }
    return DUET_SUCCESS;
}

duet_status duet_event_native(const duet_event *handle, void **native)
{
    dt_clear_error();
    RESOLVE(e, dt_event, DT_EVENT, handle, "duet_event_native", "event");
    NOT_NULL(native, "duet_event_native", "native");
    *native = e->be;
    return DUET_SUCCESS;
}
