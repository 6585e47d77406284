/* api_group.c - cross-context copies and waits, groups of contexts and the GEMM over a group. */
#include "backend.h"
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

duet_status dt_resolve_stream(duet_stream *handle, dt_context *ctx, const char *func,
                              dt_stream **out);

#define GR_RESOLVE(var, type, kind, handle, func, argname)                                     \
    type *var = (type *)dt_handle_get((handle), (kind));                                     \
    if (!var)                                                                                \
        return dt_fail(DUET_ERROR_INVALID_HANDLE, (func), "%s is %s", (argname),             \
                       (handle) ? "not a live handle (destroyed or never created)" : "NULL")

/* ---- cross-context copies and waits ------------------------------------------------------ */

duet_status duet_buffer_copy_peer(duet_stream *stream, duet_buffer *dsth, size_t dst_offset,
                                  const duet_buffer *srch, size_t src_offset, size_t bytes)
{
    static const char *fn = "duet_buffer_copy_peer";
    dt_clear_error();
    GR_RESOLVE(d, dt_buffer, DT_BUFFER, dsth, fn, "dst");
    GR_RESOLVE(s, dt_buffer, DT_BUFFER, srch, fn, "src");
    duet_status ro = dt_refuse_read_only(d, fn, "dst");
    if (ro != DUET_SUCCESS) return ro;
    if (dst_offset > d->bytes || bytes > d->bytes - dst_offset)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "dst_offset (%zu) + bytes (%zu) is past the end of dst (%zu bytes)",
                       dst_offset, bytes, d->bytes);
    if (src_offset > s->bytes || bytes > s->bytes - src_offset)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "src_offset (%zu) + bytes (%zu) is past the end of src (%zu bytes)",
                       src_offset, bytes, s->bytes);
    /* Overlap is a question of memory, not of handles: two contexts of one device (or, on the
     * cpu backend, of the host) may wrap the same memory. Addresses of different GPUs never
     * coincide (one virtual address space per process). */
    if (bytes > 0) {
        const uintptr_t dp = (uintptr_t)d->ptr + dst_offset, sp = (uintptr_t)s->ptr + src_offset;
        if (dp < sp + bytes && sp < dp + bytes)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "dst range [%zu, %zu) overlaps src range [%zu, %zu) in memory%s",
                           dst_offset, dst_offset + bytes, src_offset, src_offset + bytes,
                           d == s ? " (one buffer)" : " (the two buffers share memory)");
    }
    dt_stream *ss = NULL;
    duet_status st = dt_resolve_stream(stream, d->ctx, fn, &ss);
    if (st != DUET_SUCCESS) {
        if (stream && st == DUET_ERROR_INVALID_ARGUMENT)
            return dt_fail(st, fn, "stream belongs to another context than dst (the copy is "
                                   "queued on dst's context)");
        return st;
    }
    if (bytes == 0) return DUET_SUCCESS;
    return be_memcpy_peer(d->ctx->be, ss->be, (char *)d->ptr + dst_offset, s->ctx->be,
                          (const char *)s->ptr + src_offset, bytes);
}

duet_status duet_stream_wait_event(duet_stream *stream, duet_event *event)
{
    static const char *fn = "duet_stream_wait_event";
    dt_clear_error();
    GR_RESOLVE(s, dt_stream, DT_STREAM, stream, fn, "stream");
    GR_RESOLVE(e, dt_event, DT_EVENT, event, fn, "event");
    if (!e->recorded) return DUET_SUCCESS; /* as in CUDA and HIP: nothing to wait for */
    return be_stream_wait_event(s->ctx->be, s->be, e->ctx->be, e->be);
}

/* ---- groups ------------------------------------------------------------------------------ */

/* What one member keeps: two streams (copies, compute), an event pair per slot and the
 * double-buffered panels, all created on the member's context through the public calls, so
 * that the context owns them (and releases them if it is destroyed first). */
typedef struct gr_member {
    duet_context *ctx;
    duet_stream *copy, *compute;
    duet_event *loaded[2], *done[2]; /* per C slot                                   */
    duet_event *a_free[2], *b_free[2]; /* after the last gemm that read an A / B slot  */
    duet_buffer *pa[2], *pb[2], *pc[2];
    size_t cap_a, cap_b, cap_c; /* bytes of each slot's panels */
} gr_member;

typedef struct dt_group {
    int count;
    int64_t tile; /* 0: the default */
    pthread_mutex_t lock; /* one gemm at a time: the panels are the group's */
    duet_buffer *probe;   /* 16 bytes on member 0: the gemm's argument probe */
    gr_member m[DUET_GROUP_MAX];
} dt_group;

/* The message of a failed public call made on the group's behalf, renamed to func. */
static duet_status gr_rename(duet_status st, const char *func, const char *prefix)
{
    char inner[1024];
    snprintf(inner, sizeof inner, "%s", duet_last_error());
    const char *msg = inner;
    if (strncmp(msg, "duet_", 5) == 0) {
        const char *colon = strstr(msg, ": ");
        if (colon && (size_t)(colon - msg) == strcspn(msg, ": ")) msg = colon + 2;
    }
    return dt_fail(st, func, "%s%s", prefix ? prefix : "", msg[0] ? msg : duet_status_string(st));
}

static void gr_release(dt_group *g)
{
    /* The handles may have died with their context: those calls fail harmlessly. */
    for (int i = 0; i < g->count; i++) {
        gr_member *m = &g->m[i];
        if (m->copy) (void)duet_stream_destroy(m->copy);
        if (m->compute) (void)duet_stream_destroy(m->compute);
        for (int s = 0; s < 2; s++) {
            if (m->loaded[s]) (void)duet_event_destroy(m->loaded[s]);
            if (m->done[s]) (void)duet_event_destroy(m->done[s]);
            if (m->a_free[s]) (void)duet_event_destroy(m->a_free[s]);
            if (m->b_free[s]) (void)duet_event_destroy(m->b_free[s]);
            if (m->pa[s]) (void)duet_buffer_destroy(m->pa[s]);
            if (m->pb[s]) (void)duet_buffer_destroy(m->pb[s]);
            if (m->pc[s]) (void)duet_buffer_destroy(m->pc[s]);
        }
    }
    if (g->probe) (void)duet_buffer_destroy(g->probe);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

duet_status duet_group_create(duet_context *const *contexts, int count, duet_group **out)
{
    static const char *fn = "duet_group_create";
    dt_clear_error();
    if (!out) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "group is NULL");
    *out = NULL;
    if (!contexts) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "contexts is NULL");
    if (count < 1 || count > DUET_GROUP_MAX)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "count (%d) is outside 1..%d", count,
                       DUET_GROUP_MAX);
    for (int i = 0; i < count; i++) {
        if (!dt_handle_get(contexts[i], DT_CONTEXT))
            return dt_fail(DUET_ERROR_INVALID_HANDLE, fn, "contexts[%d] is %s", i,
                           contexts[i] ? "not a live context (destroyed or never created)"
                                       : "NULL");
        for (int j = 0; j < i; j++)
            if (contexts[j] == contexts[i])
                return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                               "contexts[%d] is contexts[%d] again: each member needs a context "
                               "of its own (create several on one device to share it)",
                               i, j);
    }
    dt_group *g = (dt_group *)calloc(1, sizeof *g);
    if (!g) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate a group object");
    if (pthread_mutex_init(&g->lock, NULL) != 0) {
        free(g);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot create a group's lock");
    }
    g->count = count;
    duet_status st = DUET_SUCCESS;
    for (int i = 0; i < count && st == DUET_SUCCESS; i++) {
        gr_member *m = &g->m[i];
        m->ctx = contexts[i];
        st = duet_stream_create(m->ctx, &m->copy);
        if (st == DUET_SUCCESS) st = duet_stream_create(m->ctx, &m->compute);
        for (int s = 0; s < 2 && st == DUET_SUCCESS; s++) {
            st = duet_event_create(m->ctx, &m->loaded[s]);
            if (st == DUET_SUCCESS) st = duet_event_create(m->ctx, &m->done[s]);
            if (st == DUET_SUCCESS) st = duet_event_create(m->ctx, &m->a_free[s]);
            if (st == DUET_SUCCESS) st = duet_event_create(m->ctx, &m->b_free[s]);
            if (st == DUET_SUCCESS) st = duet_buffer_create(m->ctx, 0, &m->pa[s]);
            if (st == DUET_SUCCESS) st = duet_buffer_create(m->ctx, 0, &m->pb[s]);
            if (st == DUET_SUCCESS) st = duet_buffer_create(m->ctx, 0, &m->pc[s]);
        }
    }
    if (st == DUET_SUCCESS) st = duet_buffer_create(g->m[0].ctx, 16, &g->probe);
    /* Defined contents: the probe may scale its C (a checker of uninitialised reads would
     * otherwise object). */
    if (st == DUET_SUCCESS) st = duet_buffer_memset(NULL, g->probe, 0, 0, 16);
    if (st == DUET_SUCCESS) st = duet_context_synchronize(g->m[0].ctx);
    if (st != DUET_SUCCESS) {
        st = gr_rename(st, fn, NULL);
        char saved[1024];
        snprintf(saved, sizeof saved, "%s", duet_last_error());
        gr_release(g);
        return dt_fail(st, NULL, "%s", saved);
    }
    *out = (duet_group *)dt_handle_new(DT_GROUP, g, NULL);
    if (!*out) {
        gr_release(g);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "the handle table cannot grow");
    }
    dt_clear_error();
    return DUET_SUCCESS;
}

duet_status duet_group_destroy(duet_group *handle)
{
    dt_clear_error();
    GR_RESOLVE(g, dt_group, DT_GROUP, handle, "duet_group_destroy", "group");
    dt_handle_release(handle);
    pthread_mutex_lock(&g->lock); /* a gemm on another thread finishes first */
    pthread_mutex_unlock(&g->lock);
    gr_release(g); /* duet_stream_destroy waits for each stream's work */
    dt_clear_error();
    return DUET_SUCCESS;
}

duet_status duet_group_set_tile(duet_group *handle, int64_t tile)
{
    dt_clear_error();
    GR_RESOLVE(g, dt_group, DT_GROUP, handle, "duet_group_set_tile", "group");
    if (tile < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_group_set_tile",
                       "tile (%lld) is negative (0 restores the default)", (long long)tile);
    pthread_mutex_lock(&g->lock);
    g->tile = tile;
    pthread_mutex_unlock(&g->lock);
    return DUET_SUCCESS;
}

/* ---- operands: host matrices and matrices in a member's buffer ---------------------------- */

/* One operand, host or device, described alike: h is a copy of the host matrix, or of the
 * device matrix with data set to its first element's address in the buffer (so the tiling
 * and overlap arithmetic is the same for both); buf is NULL for a host operand. */
typedef struct gr_host {
    duet_host_matrix h;
    dt_buffer *buf; /* the device operand's buffer (its context is a member's) */
    size_t elem;
    int64_t batch, bs;
    int empty;
    uintptr_t lo, hi; /* the bytes the matrix spans (0, 0 when empty) */
} gr_host;

static int valid_dtype(int d) { return d >= DUET_DTYPE_F32 && d <= DUET_DTYPE_F8E5M2; }

/* As duet_gemm's check of a duet_matrix, against host memory instead of a buffer. */
static duet_status check_host(const duet_host_matrix *m, const char *func, const char *name,
                              const char *ldname, int is_output, gr_host *out)
{
    memset(out, 0, sizeof *out);
    if (!m) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s is NULL", name);
    out->h = *m;
    dt_shape sh;
    duet_status st = dt_check_shape(func, name, ldname, m->dtype, m->layout, m->rows, m->cols,
                                    m->ld, m->batch_count, m->batch_stride, &sh);
    if (st != DUET_SUCCESS) return st;
    out->elem = sh.elem;
    out->batch = sh.batch;
    out->bs = sh.bs;
    out->empty = sh.empty;
    if (out->empty) return DUET_SUCCESS; /* touches no memory: data may be NULL */
    if (!m->data) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s.data is NULL", name);
    uint64_t total;
    st = dt_check_span(func, name, ldname, is_output, m->ld, m->batch_stride, &sh, &total);
    if (st != DUET_SUCCESS) return st;
    if (total > (UINTPTR_MAX - (uintptr_t)m->data) / out->elem)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s: data + extent (%llu elements) overflows the address space", name,
                       (unsigned long long)total);
    out->lo = (uintptr_t)m->data;
    out->hi = out->lo + (uintptr_t)total * out->elem;
    return DUET_SUCCESS;
}

/* A device operand: checked as duet_gemm checks a duet_matrix (the buffer live and of one of
 * the group's contexts, the extent within it), then described as check_host describes a host
 * matrix, data being the address of element 0. */
static duet_status check_device(const dt_group *g, const duet_matrix *m, const char *func,
                                const char *name, const char *ldname, int is_output,
                                gr_host *out)
{
    memset(out, 0, sizeof *out);
    if (!m) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s is NULL", name);
    dt_buffer *buf = (dt_buffer *)dt_handle_get(m->buffer, DT_BUFFER);
    if (!buf)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, func, "%s.buffer is %s", name,
                       m->buffer ? "not a live handle (destroyed or never created)" : "NULL");
    int member = -1;
    for (int i = 0; i < g->count && member < 0; i++)
        if (buf->ctx->self == g->m[i].ctx) member = i;
    if (member < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s.buffer belongs to a context that is not one of the group's", name);
    if (is_output) {
        char arg[32];
        snprintf(arg, sizeof arg, "%s.buffer", name);
        const duet_status ro = dt_refuse_read_only(buf, func, arg);
        if (ro != DUET_SUCCESS) return ro;
    }
    duet_host_matrix h;
    memset(&h, 0, sizeof h);
    h.dtype = m->dtype;
    h.layout = m->layout;
    h.rows = m->rows;
    h.cols = m->cols;
    h.ld = m->ld;
    h.batch_count = m->batch_count;
    h.batch_stride = m->batch_stride;
    /* A dtype outside the enum is refused by check_host before its size is used. */
    const size_t elem = valid_dtype((int)m->dtype) ? duet_dtype_size(m->dtype) : 1;
    if (m->offset > buf->bytes / elem)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s.offset (%zu) is past the end of its buffer (%zu bytes of %zu-byte "
                       "elements)",
                       name, m->offset, buf->bytes, elem);
    /* Any non-NULL address for an empty matrix or a 0-byte buffer: nothing is touched. */
    h.data = buf->ptr ? (char *)buf->ptr + m->offset * elem : (void *)buf;
    duet_status st = check_host(&h, func, name, ldname, is_output, out);
    if (st != DUET_SUCCESS) return st;
    out->buf = buf;
    if (!out->empty && out->hi - (uintptr_t)buf->ptr > buf->bytes)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s needs bytes [%zu, %zu) of its buffer, which holds %zu bytes "
                       "(the buffer is too small)",
                       name, (size_t)(out->lo - (uintptr_t)buf->ptr),
                       (size_t)(out->hi - (uintptr_t)buf->ptr), buf->bytes);
    return DUET_SUCCESS;
}

/* An operand: exactly one of o.host and o.device. */
static duet_status check_operand(const dt_group *g, duet_group_operand o, const char *func,
                                 const char *name, const char *ldname, int is_output,
                                 gr_host *out)
{
    memset(out, 0, sizeof *out);
    if (o.host && o.device)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s has both host and device set (exactly one describes an operand)", name);
    if (o.device) return check_device(g, o.device, func, name, ldname, is_output, out);
    return check_host(o.host, func, name, ldname, is_output, out);
}

static int host_overlaps(const gr_host *x, const gr_host *y)
{
    return !x->empty && !y->empty && x->lo < y->hi && y->lo < x->hi;
}

/* ---- the gemm over a group --------------------------------------------------------------- */

/* The problem as every member sees it (read-only while the members run). */
typedef struct gr_job {
    dt_group *g;
    duet_op op_a, op_b;
    double alpha, beta;
    gr_host a, b, c;
    int64_t m, n, k; /* k: 0 when alpha == 0 (then A and B are never read) */
    int64_t tile, tiles_m, tiles_n, total;
    duet_op_options opt; /* the caller's, info NULL */
    duet_launch_info *info;
    int stop; /* set, under stop_lock, by a member that fails */
    pthread_mutex_t stop_lock;
} gr_job;

typedef struct gr_worker {
    gr_job *job;
    int idx;
    duet_status st;
    char msg[1024];
} gr_worker;

static int gr_stopped(gr_job *j)
{
    pthread_mutex_lock(&j->stop_lock);
    const int s = j->stop;
    pthread_mutex_unlock(&j->stop_lock);
    return s;
}

/* The stored rectangle [r0, r0 + nr) x [c0, c0 + nc) of batch b of host matrix x, as lines:
 * its first element, the number of lines and their length (elements). */
static void host_rect(const gr_host *x, int64_t b, int64_t r0, int64_t nr, int64_t c0,
                      int64_t nc, char **first, int64_t *lines, int64_t *len)
{
    const duet_host_matrix *h = &x->h;
    const int rm = h->layout == DUET_LAYOUT_ROW_MAJOR;
    const int64_t idx = b * x->bs + (rm ? r0 * h->ld + c0 : c0 * h->ld + r0);
    *first = (char *)h->data + (size_t)idx * x->elem;
    *lines = rm ? nr : nc;
    *len = rm ? nc : nr;
}

/* A packed device matrix over buf with host matrix x's dtype and layout. */
static duet_matrix dev_matrix(duet_buffer *buf, const gr_host *x, int64_t rows, int64_t cols)
{
    duet_matrix d;
    memset(&d, 0, sizeof d);
    d.buffer = buf;
    d.dtype = x->h.dtype;
    d.layout = x->h.layout;
    d.rows = rows;
    d.cols = cols;
    const int64_t len = d.layout == DUET_LAYOUT_ROW_MAJOR ? cols : rows;
    d.ld = len > 0 ? len : 1;
    d.batch_count = 1;
    return d;
}

/* Makes each of the member's two slot buffers hold bytes; growing replaces the buffer (the
 * member's streams are idle between gemm calls, so nothing in flight uses the old one). */
static duet_status grow(gr_member *m, duet_buffer **slots, size_t *cap, size_t bytes)
{
    if (bytes <= *cap) return DUET_SUCCESS;
    size_t r = (size_t)1 << 20; /* powers of two from 1 MiB: growing stays rare */
    while (r < bytes && r <= SIZE_MAX / 2) r <<= 1;
    if (r < bytes) r = bytes;
    for (int s = 0; s < 2; s++) {
        (void)duet_buffer_destroy(slots[s]);
        slots[s] = NULL;
        duet_status st = duet_buffer_create(m->ctx, r, &slots[s]);
        if (st != DUET_SUCCESS && r > bytes) st = duet_buffer_create(m->ctx, r = bytes, &slots[s]);
        if (st != DUET_SUCCESS) {
            *cap = 0;
            return st;
        }
    }
    *cap = r;
    return DUET_SUCCESS;
}

/* Queues a copy of a stored rectangle between operand x and the member's panel buf on the
 * member's copy stream: to_device: x -> buf, else buf -> x. x in host memory: a 2D host copy;
 * in a buffer of this member's context: a 2D device copy; of another member's context: peer
 * copies (backends have no 2D peer copy), one per line unless the lines are contiguous. The
 * peer copy is queued on this member's stream either way (the GPU runtimes accept a copy on a
 * stream of another device), so it is ordered with this member's events. */
static duet_status rect_copy(gr_member *m, duet_buffer *buf, const gr_host *x, int64_t b,
                             int64_t r0, int64_t nr, int64_t c0, int64_t nc, int to_device)
{
    char *first;
    int64_t lines, len;
    host_rect(x, b, r0, nr, c0, nc, &first, &lines, &len);
    if (lines == 0 || len == 0) return DUET_SUCCESS;
    dt_buffer *d = (dt_buffer *)dt_handle_get(buf, DT_BUFFER);
    dt_stream *s = (dt_stream *)dt_handle_get(m->copy, DT_STREAM);
    if (!d || !s)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, "duet_group_gemm",
                       "a member's context was destroyed while the group still uses it");
    const size_t w = (size_t)len * x->elem, hp = (size_t)x->h.ld * x->elem;
    if (x->buf && x->buf->ctx == d->ctx)
        return to_device ? be_memcpy2d(d->ctx->be, s->be, d->ptr, w, first, hp, w, (size_t)lines,
                                       BE_D2D, "duet_group_gemm")
                         : be_memcpy2d(d->ctx->be, s->be, first, hp, d->ptr, w, w,
                                       (size_t)lines, BE_D2D, "duet_group_gemm");
    if (x->buf) {
        void *const xb = x->buf->ctx->be, *const db = d->ctx->be;
        if (lines == 1 || w == hp) /* one run of lines * w bytes */
            return to_device ? be_memcpy_peer(db, s->be, d->ptr, xb, first, w * (size_t)lines)
                             : be_memcpy_peer(xb, s->be, first, db, d->ptr, w * (size_t)lines);
        for (int64_t i = 0; i < lines; i++) {
            char *const xp = first + (size_t)i * hp, *const dp = (char *)d->ptr + (size_t)i * w;
            const duet_status st = to_device ? be_memcpy_peer(db, s->be, dp, xb, xp, w)
                                             : be_memcpy_peer(xb, s->be, xp, db, dp, w);
            if (st != DUET_SUCCESS) return st;
        }
        return DUET_SUCCESS;
    }
    return to_device ? be_memcpy2d(d->ctx->be, s->be, d->ptr, w, first, hp, w, (size_t)lines,
                                   BE_H2D, "duet_group_gemm")
                     : be_memcpy2d(d->ctx->be, s->be, first, hp, d->ptr, w, w, (size_t)lines,
                                   BE_D2H, "duet_group_gemm");
}

typedef struct gr_tile {
    int64_t b, i0, mt, j0, nt;
} gr_tile;

static gr_tile tile_of(const gr_job *j, int64_t t)
{
    gr_tile x;
    const int64_t per = j->tiles_m * j->tiles_n;
    x.b = t / per;
    const int64_t r = t % per, ti = r / j->tiles_n, tj = r % j->tiles_n;
    x.i0 = ti * j->tile;
    x.mt = j->m - x.i0 < j->tile ? j->m - x.i0 : j->tile;
    x.j0 = tj * j->tile;
    x.nt = j->n - x.j0 < j->tile ? j->n - x.j0 : j->tile;
    return x;
}

/* Copies the finished C tile of slot s back to the host once its gemm is done. */
static duet_status tile_back(gr_job *j, gr_member *m, int s, const gr_tile *x)
{
    duet_status st = duet_stream_wait_event(m->copy, m->done[s]);
    if (st != DUET_SUCCESS) return st;
    return rect_copy(m, m->pc[s], &j->c, x->b, x->i0, x->mt, x->j0, x->nt, 0);
}

/* The slot (0 or 1) of a two-slot panel cache holding key, loading it if neither does. A miss
 * takes the slot the previous tile did not use (so that panel stays for a later hit), after
 * the copy stream has waited for the last gemm that read that slot (its free event). */
typedef struct gr_cache {
    int64_t key[2][2]; /* (batch, first row or column) per slot; -1: empty */
    int last;          /* the slot the previous tile used */
} gr_cache;

static duet_status cache_get(gr_member *m, gr_cache *c, duet_event *const *free_ev,
                             int64_t batch, int64_t first, int *slot, int *load)
{
    for (int q = 0; q < 2; q++)
        if (c->key[q][0] == batch && c->key[q][1] == first) {
            *slot = c->last = q;
            *load = 0;
            return DUET_SUCCESS;
        }
    const int q = c->last ^ 1;
    duet_status st = duet_stream_wait_event(m->copy, free_ev[q]);
    if (st != DUET_SUCCESS) return st;
    c->key[q][0] = batch;
    c->key[q][1] = first;
    *slot = c->last = q;
    *load = 1;
    return DUET_SUCCESS;
}

/* One member's share: the member-th contiguous run of the tiles (in the order batch, tile row,
 * tile column), so consecutive tiles share their A panel. A and B panels live in two-slot
 * caches (cache_get); C tiles alternate between two slots (s = n % 2 for the run's n-th
 * tile). Per tile, the copy stream loads what is missing (and C when beta != 0) and records
 * loaded[s]; the compute stream waits for it, runs duet_gemm and records done[s] and the
 * free events of the A and B slots it read; then the copy stream waits for the previous
 * tile's done and copies that tile's C back. The copy stream thus loads tile n + 1 while
 * tile n computes; a C slot is reloaded only after the copy-back of the tile that last used
 * it (earlier on the same stream), a panel slot only after its free event. */
static duet_status member_run(gr_job *j, int idx, char *msg, size_t msg_size)
{
    dt_group *g = j->g;
    gr_member *m = &g->m[idx];
    const int64_t t_begin = j->total * idx / g->count, t_end = j->total * (idx + 1) / g->count;
    if (t_begin >= t_end) return DUET_SUCCESS;
    const int64_t tm = j->m < j->tile ? j->m : j->tile, tn = j->n < j->tile ? j->n : j->tile;
    duet_status st = grow(m, m->pa, &m->cap_a, (size_t)(tm * j->k) * j->a.elem);
    if (st == DUET_SUCCESS) st = grow(m, m->pb, &m->cap_b, (size_t)(tn * j->k) * j->b.elem);
    if (st == DUET_SUCCESS) st = grow(m, m->pc, &m->cap_c, (size_t)(tm * tn) * j->c.elem);
    if (st != DUET_SUCCESS) return st;
    gr_cache ca = {{{-1, -1}, {-1, -1}}, 1}, cb = {{{-1, -1}, {-1, -1}}, 1};
    gr_tile prev = {0, 0, 0, 0, 0};
    int have_prev = 0, n = 0;
    for (int64_t t = t_begin; t < t_end; t++, n++) {
        if (gr_stopped(j)) break;
        const int s = n & 1;
        const gr_tile x = tile_of(j, t);
        const int64_t ba = j->a.batch == 1 ? 0 : x.b, bb = j->b.batch == 1 ? 0 : x.b;
        int as = 0, bs = 0, load = 0;
        if (j->k > 0) { /* k == 0 (or alpha == 0): no panel is read */
            st = cache_get(m, &ca, m->a_free, ba, x.i0, &as, &load);
            if (st == DUET_SUCCESS && load)
                st = j->op_a == DUET_OP_N
                         ? rect_copy(m, m->pa[as], &j->a, ba, x.i0, x.mt, 0, j->k, 1)
                         : rect_copy(m, m->pa[as], &j->a, ba, 0, j->k, x.i0, x.mt, 1);
            if (st == DUET_SUCCESS) st = cache_get(m, &cb, m->b_free, bb, x.j0, &bs, &load);
            if (st == DUET_SUCCESS && load)
                st = j->op_b == DUET_OP_N
                         ? rect_copy(m, m->pb[bs], &j->b, bb, 0, j->k, x.j0, x.nt, 1)
                         : rect_copy(m, m->pb[bs], &j->b, bb, x.j0, x.nt, 0, j->k, 1);
            if (st != DUET_SUCCESS) break;
        }
        if (j->beta != 0.0) { /* beta == 0 never reads C */
            st = rect_copy(m, m->pc[s], &j->c, x.b, x.i0, x.mt, x.j0, x.nt, 1);
            if (st != DUET_SUCCESS) break;
        }
        st = duet_event_record(m->loaded[s], m->copy);
        if (st == DUET_SUCCESS) st = duet_stream_wait_event(m->compute, m->loaded[s]);
        if (st != DUET_SUCCESS) break;
        const duet_matrix da = j->op_a == DUET_OP_N ? dev_matrix(m->pa[as], &j->a, x.mt, j->k)
                                                    : dev_matrix(m->pa[as], &j->a, j->k, x.mt);
        const duet_matrix db = j->op_b == DUET_OP_N ? dev_matrix(m->pb[bs], &j->b, j->k, x.nt)
                                                    : dev_matrix(m->pb[bs], &j->b, x.nt, j->k);
        duet_matrix dc = dev_matrix(m->pc[s], &j->c, x.mt, x.nt);
        duet_op_options opt = j->opt;
        opt.info = (t == 0) ? j->info : NULL;
        /* alpha == 0 is run as k == 0: the same C = beta * C, with no panels read. */
        st = duet_gemm(m->compute, j->op_a, j->op_b, j->k > 0 ? j->alpha : 0.0, &da, &db,
                       j->beta, &dc, &opt);
        if (st == DUET_SUCCESS) st = duet_event_record(m->done[s], m->compute);
        if (st == DUET_SUCCESS) st = duet_event_record(m->a_free[as], m->compute);
        if (st == DUET_SUCCESS) st = duet_event_record(m->b_free[bs], m->compute);
        if (st == DUET_SUCCESS && have_prev) st = tile_back(j, m, s ^ 1, &prev);
        if (st != DUET_SUCCESS) break;
        prev = x;
        have_prev = 1;
    }
    if (st == DUET_SUCCESS && have_prev && !gr_stopped(j)) st = tile_back(j, m, (n - 1) & 1, &prev);
    /* The host's C is complete (or the failure is final) only when the copies are done. The
     * failure's message is kept first: every call below clears the thread's last error. */
    if (st != DUET_SUCCESS) snprintf(msg, msg_size, "%s", duet_last_error());
    duet_stream *const streams[2] = {m->compute, m->copy};
    for (int i = 0; i < 2; i++) {
        const duet_status s = duet_stream_synchronize(streams[i]);
        if (st == DUET_SUCCESS && s != DUET_SUCCESS) {
            st = s;
            snprintf(msg, msg_size, "%s", duet_last_error());
        }
    }
    return st;
}

static void *member_main(void *arg)
{
    gr_worker *w = (gr_worker *)arg;
    w->st = member_run(w->job, w->idx, w->msg, sizeof w->msg);
    if (w->st != DUET_SUCCESS) {
        if (!w->msg[0]) snprintf(w->msg, sizeof w->msg, "%s", duet_last_error());
        pthread_mutex_lock(&w->job->stop_lock);
        w->job->stop = 1;
        pthread_mutex_unlock(&w->job->stop_lock);
    }
    return NULL;
}

/* The tile edge: the group's, else DUET_GROUP_TILE, else 4096 halved (not below 256) while
 * there are fewer tiles than members. */
static int64_t choose_tile(const dt_group *g, int64_t m, int64_t n, int64_t batch)
{
    if (g->tile > 0) return g->tile;
    const char *env = getenv("DUET_GROUP_TILE");
    if (env && *env) {
        char *end = NULL;
        const long long v = strtoll(env, &end, 10);
        if (end && *end == '\0' && v > 0) return (int64_t)v;
    }
    int64_t t = 4096;
    while (t > 256 && dt_ceil_div(m, t) * dt_ceil_div(n, t) * batch < g->count) t /= 2;
    return t;
}

static duet_status group_gemm(dt_group *g, duet_op op_a, duet_op op_b, double alpha,
                              duet_group_operand oa, duet_group_operand ob, double beta,
                              duet_group_operand oc, const duet_op_options *options,
                              const char *fn)
{
    for (int i = 0; i < g->count; i++)
        if (!dt_handle_get(g->m[i].ctx, DT_CONTEXT))
            return dt_fail(DUET_ERROR_INVALID_HANDLE, fn,
                           "the group's context %d was destroyed (destroy the group before its "
                           "contexts)",
                           i);
    if (op_a != DUET_OP_N && op_a != DUET_OP_T)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "op_a (%d) is not a duet_op", (int)op_a);
    if (op_b != DUET_OP_N && op_b != DUET_OP_T)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "op_b (%d) is not a duet_op", (int)op_b);
    gr_job j;
    memset(&j, 0, sizeof j);
    duet_status st = check_operand(g, oc, fn, "C", "ldc", 1, &j.c);
    if (st == DUET_SUCCESS) st = check_operand(g, oa, fn, "A", "lda", 0, &j.a);
    if (st == DUET_SUCCESS) st = check_operand(g, ob, fn, "B", "ldb", 0, &j.b);
    if (st != DUET_SUCCESS) return st;
    const duet_host_matrix *a = &j.a.h, *b = &j.b.h, *c = &j.c.h;
    const int64_t m = op_a == DUET_OP_N ? a->rows : a->cols;
    const int64_t k = op_a == DUET_OP_N ? a->cols : a->rows;
    const int64_t kb = op_b == DUET_OP_N ? b->rows : b->cols;
    const int64_t n = op_b == DUET_OP_N ? b->cols : b->rows;
    if (k != kb)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "op(A) is %lld x %lld but op(B) is %lld x %lld: inner dimensions differ",
                       (long long)m, (long long)k, (long long)kb, (long long)n);
    if (c->rows != m || c->cols != n)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "C is %lld x %lld but op(A) * op(B) is %lld x %lld", (long long)c->rows,
                       (long long)c->cols, (long long)m, (long long)n);
    if (j.a.batch != j.c.batch && j.a.batch != 1)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "A.batch_count (%lld) is neither C's (%lld) nor 1", (long long)j.a.batch,
                       (long long)j.c.batch);
    if (j.b.batch != j.c.batch && j.b.batch != 1)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "B.batch_count (%lld) is neither C's (%lld) nor 1", (long long)j.b.batch,
                       (long long)j.c.batch);
    /* By address: a buffer's memory and host memory never share addresses on a GPU, and are
     * one memory on the cpu backend, where an overlap is as real as between two buffers. */
    if (host_overlaps(&j.c, &j.a) || host_overlaps(&j.c, &j.b)) {
        const gr_host *x = host_overlaps(&j.c, &j.a) ? &j.a : &j.b;
        const char *where = !j.c.buf && !x->buf ? "host memory"
                            : j.c.buf && j.c.buf == x->buf ? "its buffer"
                                                           : "memory";
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "C overlaps %s in %s",
                       x == &j.a ? "A" : "B", where);
    }

    /* Everything duet_gemm checks beyond the shapes (dtype combination, math mode, algorithm
     * and its options, integral alpha and beta) is asked of duet_gemm itself, on a 1 x 1 C
     * with k == 0 in the probe buffer of member 0, before any tile runs: so a bad request
     * writes nothing and says what duet_gemm says. */
    {
        gr_member *m0 = &g->m[0];
        duet_matrix pa, pb, pc;
        memset(&pa, 0, sizeof pa);
        pa.buffer = g->probe;
        pa.dtype = a->dtype;
        pa.layout = a->layout;
        pa.ld = 1;
        pb = pa;
        pb.dtype = b->dtype;
        pb.layout = b->layout;
        pc = pa;
        pc.dtype = c->dtype;
        pc.layout = c->layout;
        pc.rows = pc.cols = 1;
        if (op_a == DUET_OP_N) pa.rows = 1; else pa.cols = 1;
        if (op_b == DUET_OP_N) pb.cols = 1; else pb.rows = 1;
        duet_op_options po;
        memset(&po, 0, sizeof po);
        if (options) po = *options;
        po.info = NULL;
        st = duet_gemm(m0->compute, op_a, op_b, alpha, &pa, &pb, beta, &pc, &po);
        if (st == DUET_SUCCESS) st = duet_stream_synchronize(m0->compute);
        if (st != DUET_SUCCESS) return gr_rename(st, fn, NULL);
    }
    /* Device operands may have been written by work the caller queued on their contexts: the
     * group's streams cannot wait for it (it is on the caller's streams), so it is awaited
     * here, once per context holding an operand that will be touched. */
    {
        const gr_host *ops[3] = {&j.a, &j.b, &j.c};
        const duet_context *done[3] = {NULL, NULL, NULL};
        for (int q = 0; q < 3 && m > 0 && n > 0; q++) {
            if (!ops[q]->buf || ops[q]->empty) continue;
            duet_context *cx = ops[q]->buf->ctx->self;
            if (cx == done[0] || cx == done[1]) continue;
            done[q] = cx;
            st = duet_context_synchronize(cx);
            if (st != DUET_SUCCESS) return gr_rename(st, fn, NULL);
        }
    }
    duet_launch_info *info = options ? options->info : NULL;
    if (m == 0 || n == 0) {
        if (info) {
            memset(info, 0, sizeof *info);
            snprintf(info->tuning, sizeof info->tuning, "-");
        }
        return DUET_SUCCESS;
    }

    j.g = g;
    j.op_a = op_a;
    j.op_b = op_b;
    j.alpha = alpha;
    j.beta = beta;
    j.m = m;
    j.n = n;
    j.k = alpha == 0.0 ? 0 : k;
    j.tile = choose_tile(g, m, n, j.c.batch);
    j.tiles_m = dt_ceil_div(m, j.tile);
    j.tiles_n = dt_ceil_div(n, j.tile);
    j.total = j.tiles_m * j.tiles_n * j.c.batch;
    if (options) j.opt = *options;
    j.opt.info = NULL;
    j.info = info;
    if (pthread_mutex_init(&j.stop_lock, NULL) != 0)
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot create a lock");

    /* One host thread per member beyond the first: copies from and to plain (pageable) host
     * memory block the thread that queues them, which must not hold up the other devices. */
    gr_worker w[DUET_GROUP_MAX];
    pthread_t th[DUET_GROUP_MAX];
    int started[DUET_GROUP_MAX];
    const int busy = g->count; /* a member whose run of tiles is empty returns at once */
    for (int i = 0; i < busy; i++) {
        w[i].job = &j;
        w[i].idx = i;
        w[i].st = DUET_SUCCESS;
        w[i].msg[0] = '\0';
        started[i] = i > 0 && pthread_create(&th[i], NULL, member_main, &w[i]) == 0;
    }
    member_main(&w[0]);
    for (int i = 1; i < busy; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            member_main(&w[i]); /* no thread to be had: run it here, after member 0 */
    }
    pthread_mutex_destroy(&j.stop_lock);
    /* The first member that failed for a reason of its own (not stopped by another). */
    for (int i = 0; i < busy; i++)
        if (w[i].st != DUET_SUCCESS)
            return dt_fail(w[i].st, fn, "member %d: %s", i, w[i].msg);
    return DUET_SUCCESS;
}

static duet_status group_gemm_entry(duet_group *handle, duet_op op_a, duet_op op_b,
                                    double alpha, duet_group_operand a, duet_group_operand b,
                                    double beta, duet_group_operand c,
                                    const duet_op_options *options, const char *fn);

duet_group_operand duet_group_host(const duet_host_matrix *m)
{
    duet_group_operand o;
    o.host = m;
    o.device = NULL;
    return o;
}

duet_group_operand duet_group_device(const duet_matrix *m)
{
    duet_group_operand o;
    o.host = NULL;
    o.device = m;
    return o;
}

duet_status duet_group_gemm(duet_group *handle, duet_op op_a, duet_op op_b, double alpha,
                            const duet_host_matrix *a, const duet_host_matrix *b, double beta,
                            duet_host_matrix *c, const duet_op_options *options)
{
    return group_gemm_entry(handle, op_a, op_b, alpha, duet_group_host(a), duet_group_host(b),
                            beta, duet_group_host(c), options, "duet_group_gemm");
}

duet_status duet_group_gemm_ex(duet_group *handle, duet_op op_a, duet_op op_b, double alpha,
                               duet_group_operand a, duet_group_operand b, double beta,
                               duet_group_operand c, const duet_op_options *options)
{
    return group_gemm_entry(handle, op_a, op_b, alpha, a, b, beta, c, options,
                            "duet_group_gemm_ex");
}

static duet_status group_gemm_entry(duet_group *handle, duet_op op_a, duet_op op_b,
                                    double alpha, duet_group_operand a, duet_group_operand b,
                                    double beta, duet_group_operand c,
                                    const duet_op_options *options, const char *fn)
{
    dt_clear_error();
    GR_RESOLVE(g, dt_group, DT_GROUP, handle, fn, "group");
    pthread_mutex_lock(&g->lock);
    duet_status st = group_gemm(g, op_a, op_b, alpha, a, b, beta, c, options, fn);
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", duet_last_error());
    pthread_mutex_unlock(&g->lock);
    if (st != DUET_SUCCESS) return dt_fail(st, NULL, "%s", saved);
    dt_clear_error();
    return DUET_SUCCESS;
}
