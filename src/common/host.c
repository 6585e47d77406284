/* host.c - duet_host_alloc/free/register/unregister: one record of host ranges for every backend. */
#include "backend.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

/* Every host range allocated (duet_host_alloc) or registered (duet_host_register) through
 * duet, with the context it belongs to. The rules are checked here, before any runtime call,
 * so that every backend refuses the same misuse with the same status and message:
 *   - a range belongs to one context: free or unregister it through that context;
 *   - ranges never overlap, whatever their context: CUDA and HIP pin memory for the whole
 *     process, so a second registration of the same memory (through any context) is refused
 *     there by the runtime, and the cpu backend refuses it the same way here;
 *   - destroying a context frees its allocations and unregisters its ranges.
 * One table for all contexts (not one per context) because the overlap rule spans contexts;
 * it holds a handful of entries in practice, so lookups are linear scans under one lock. */
typedef struct host_range {
    const dt_context *ctx;
    char *base;
    size_t bytes;
    int allocated; /* 1: from duet_host_alloc (freed by the backend), 0: registered */
} host_range;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static host_range *g_ranges;
static size_t g_count, g_cap;

/* Index of the range of kind `allocated` that starts at p, or -1. Lock held. */
static ptrdiff_t find_start(const void *p, int allocated)
{
    for (size_t i = 0; i < g_count; i++)
        if (g_ranges[i].base == p && g_ranges[i].allocated == allocated) return (ptrdiff_t)i;
    return -1;
}

/* The first range overlapping [p, p + bytes), or NULL. Lock held. */
static const host_range *find_overlap(const char *p, size_t bytes)
{
    const uintptr_t lo = (uintptr_t)p;
    const uintptr_t hi = bytes > UINTPTR_MAX - lo ? UINTPTR_MAX : lo + bytes;
    for (size_t i = 0; i < g_count; i++) {
        const uintptr_t rlo = (uintptr_t)g_ranges[i].base;
        const uintptr_t rhi = rlo + g_ranges[i].bytes;
        if (lo < rhi && rlo < hi) return &g_ranges[i];
    }
    return NULL;
}

/* Appends a range. Lock held. */
static duet_status add_range(const dt_context *ctx, void *p, size_t bytes, int allocated,
                             const char *func)
{
    if (g_count == g_cap) {
        const size_t cap = g_cap ? 2 * g_cap : 16;
        host_range *r = (host_range *)realloc(g_ranges, cap * sizeof *r);
        if (!r)
            return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func,
                           "cannot grow the table of host ranges: realloc failed");
        g_ranges = r;
        g_cap = cap;
    }
    host_range *r = &g_ranges[g_count++];
    r->ctx = ctx;
    r->base = (char *)p;
    r->bytes = bytes;
    r->allocated = allocated;
    return DUET_SUCCESS;
}

static void remove_range(size_t i) { g_ranges[i] = g_ranges[--g_count]; }

#define DT_HOST_CTX(var, handle, func)                                                       \
    dt_context *var = (dt_context *)dt_handle_get((handle), DT_CONTEXT);                     \
    if (!var)                                                                                \
        return dt_fail(DUET_ERROR_INVALID_HANDLE, (func), "ctx is %s",                       \
                       (handle) ? "not a live handle (destroyed or never created)" : "NULL")

duet_status duet_host_alloc(duet_context *handle, size_t bytes, void **ptr)
{
    static const char *fn = "duet_host_alloc";
    dt_clear_error();
    DT_HOST_CTX(ctx, handle, fn);
    if (!ptr) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "ptr is NULL");
    *ptr = NULL;
    if (bytes == 0) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "bytes is 0");
    void *p = NULL;
    duet_status st = be_host_alloc(ctx->be, bytes, &p);
    if (st != DUET_SUCCESS) return st;
    pthread_mutex_lock(&g_lock);
    st = add_range(ctx, p, bytes, 1, fn);
    pthread_mutex_unlock(&g_lock);
    if (st != DUET_SUCCESS) {
        char saved[1024];
        snprintf(saved, sizeof saved, "%s", duet_last_error());
        (void)be_host_free(ctx->be, p);
        return dt_fail(st, NULL, "%s", saved);
    }
    *ptr = p;
    return DUET_SUCCESS;
}

duet_status duet_host_free(duet_context *handle, void *ptr)
{
    static const char *fn = "duet_host_free";
    dt_clear_error();
    DT_HOST_CTX(ctx, handle, fn);
    if (!ptr) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "ptr is NULL");
    pthread_mutex_lock(&g_lock);
    ptrdiff_t i = find_start(ptr, 1);
    const dt_context *owner = i >= 0 ? g_ranges[i].ctx : NULL;
    if (owner == ctx) remove_range((size_t)i);
    pthread_mutex_unlock(&g_lock);
    if (owner != ctx)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "ptr was not allocated with duet_host_alloc on this context%s",
                       owner ? " (it was allocated on another context)" : "");
    return be_host_free(ctx->be, ptr);
}

duet_status duet_host_register(duet_context *handle, void *ptr, size_t bytes)
{
    static const char *fn = "duet_host_register";
    dt_clear_error();
    DT_HOST_CTX(ctx, handle, fn);
    if (!ptr) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "ptr is NULL");
    if (bytes == 0) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "bytes is 0");
    /* The lock is held across the runtime call so that two threads cannot both pass the
     * overlap check for the same memory. */
    pthread_mutex_lock(&g_lock);
    duet_status st = DUET_SUCCESS;
    const host_range *o = find_overlap((const char *)ptr, bytes);
    if (o)
        st = dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                     "ptr and bytes (%zu) overlap host memory already %s on %s context", bytes,
                     o->allocated ? "allocated with duet_host_alloc" : "registered",
                     o->ctx == ctx ? "this" : "another");
    /* Reserve the table entry first: a registration duet cannot record must not happen. */
    if (st == DUET_SUCCESS) st = add_range(ctx, ptr, bytes, 0, fn);
    if (st == DUET_SUCCESS) {
        st = be_host_register(ctx->be, ptr, bytes);
        if (st != DUET_SUCCESS) g_count--;
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

duet_status duet_host_unregister(duet_context *handle, void *ptr)
{
    static const char *fn = "duet_host_unregister";
    dt_clear_error();
    DT_HOST_CTX(ctx, handle, fn);
    if (!ptr) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "ptr is NULL");
    pthread_mutex_lock(&g_lock);
    ptrdiff_t i = find_start(ptr, 0);
    const dt_context *owner = i >= 0 ? g_ranges[i].ctx : NULL;
    if (owner == ctx) remove_range((size_t)i);
    pthread_mutex_unlock(&g_lock);
    if (owner != ctx)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "ptr is not the start of a range registered on this context%s",
                       owner ? " (it was registered on another context)" : "");
    return be_host_unregister(ctx->be, ptr);
}

void dt_host_release_context(dt_context *ctx)
{
    /* Take the context's ranges out under the lock, then call the runtime for each one
     * without it (a runtime call may block). */
    for (;;) {
        host_range r;
        int found = 0;
        pthread_mutex_lock(&g_lock);
        for (size_t i = 0; i < g_count; i++)
            if (g_ranges[i].ctx == ctx) {
                r = g_ranges[i];
                remove_range(i);
                found = 1;
                break;
            }
        if (g_count == 0) {
            free(g_ranges);
            g_ranges = NULL;
            g_cap = 0;
        }
        pthread_mutex_unlock(&g_lock);
        if (!found) break;
        if (r.allocated)
            (void)be_host_free(ctx->be, r.base);
        else
            (void)be_host_unregister(ctx->be, r.base);
    }
    dt_clear_error();
}
