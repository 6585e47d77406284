/* workspace.c - per-stream device scratch that grows once and is reused (no allocation per op). */
#include "backend.h"
#include "internal.h"

#include <stdint.h>

/* Requests are rounded up to a power of two of at least 1 MiB, so a sequence of slightly
 * larger problems does not reallocate each time. */
static size_t round_up(size_t bytes)
{
    size_t r = (size_t)1 << 20;
    while (r < bytes && r <= SIZE_MAX / 2) r <<= 1;
    return r < bytes ? bytes : r;
}

duet_status dt_workspace_reserve(dt_context *ctx, void *be_stream, dt_workspace *ws, size_t bytes,
                                 const char *func, void **ptr)
{
    *ptr = NULL;
    if (bytes <= ws->bytes) {
        *ptr = ws->ptr;
        return DUET_SUCCESS;
    }
    if (ws->fixed)
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func,
                       "%zu bytes of workspace requested where %zu are set aside", bytes,
                       ws->bytes);
    /* Growing waits for the stream and allocates: both would break a graph capture (and the
     * graph would keep the old block's address), so a capture needs the workspace grown by an
     * uncaptured run of the same op first. */
    int capturing = 0;
    duet_status cst = be_stream_is_capturing(ctx->be, be_stream, &capturing, func);
    if (cst != DUET_SUCCESS) return cst;
    if (capturing)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "the stream is capturing into a graph and its workspace (%zu bytes) must "
                       "grow to %zu bytes, which would allocate: run the op once on the stream "
                       "before capturing it",
                       ws->bytes, bytes);
    if (ws->ptr) {
        /* Queued ops of this stream may still read or write the old block. */
        duet_status st = be_stream_synchronize(ctx->be, be_stream);
        if (st != DUET_SUCCESS) return st;
        be_free(ctx->be, ws->ptr);
        ws->ptr = NULL;
        ws->bytes = 0;
    }
    size_t got = round_up(bytes);
    void *p = NULL;
    duet_status st = be_malloc(ctx->be, got, &p);
    if (st != DUET_SUCCESS && got > bytes) {
        dt_clear_error();
        got = bytes; /* the rounding may be what does not fit */
        st = be_malloc(ctx->be, got, &p);
    }
    if (st != DUET_SUCCESS)
        return dt_fail(st, func, "cannot allocate %zu bytes of workspace on the device", bytes);
    ws->ptr = p;
    ws->bytes = got;
    *ptr = p;
    return DUET_SUCCESS;
}

void dt_workspace_free(dt_context *ctx, dt_workspace *ws)
{
    if (ws->ptr) be_free(ctx->be, ws->ptr);
    ws->ptr = NULL;
    ws->bytes = 0;
}
