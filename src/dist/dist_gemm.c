/* dist_gemm.c - duet_dist_gemm: SUMMA over a 2D grid, operand redistribution, panel pipeline. */
#include "dist_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A distributed operand as the SUMMA loop reads it: descriptor plus this rank's buffer. */
typedef struct operand {
    duet_dist_desc d;
    duet_buffer *buf;
    int64_t lrows, lcols;
} operand;

/* Elements from the first to the last of a local matrix (0 when empty). */
static int64_t local_extent(const duet_dist_desc *d, int64_t rows, int64_t cols)
{
    if (rows == 0 || cols == 0) return 0;
    return d->layout == DUET_LAYOUT_ROW_MAJOR ? (rows - 1) * d->lld + cols
                                              : (cols - 1) * d->lld + rows;
}

static int64_t l2g(int64_t l, int64_t nb, int iproc, int isrc, int nprocs)
{
    const int mydist = (nprocs + iproc - isrc) % nprocs;
    return ((l / nb) * nprocs + mydist) * nb + l % nb;
}

static size_t local_index(const duet_dist_desc *d, int64_t li, int64_t lj)
{
    return d->offset +
           (size_t)(d->layout == DUET_LAYOUT_ROW_MAJOR ? li * d->lld + lj : lj * d->lld + li);
}

/* Checks one local matrix on this rank: its ld and that its buffer holds it. */
static duet_status check_local(const duet_dist_grid *g, const duet_dist_desc *d, duet_buffer *buf,
                               const char *name, const char *bufname, const char *fn)
{
    int64_t rows, cols;
    dd_local_shape(g, d, &rows, &cols);
    const int64_t line = d->layout == DUET_LAYOUT_ROW_MAJOR ? cols : rows;
    const int64_t need = line > 1 ? line : 1;
    if (d->lld < need)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "%s.lld (%lld) is smaller than the local %s of %s (%lld) on grid "
                       "process (%d, %d)",
                       name, (long long)d->lld,
                       d->layout == DUET_LAYOUT_ROW_MAJOR ? "columns" : "rows", bufname,
                       (long long)need, g->myrow, g->mycol);
    if (!buf) return dd_fail(DUET_ERROR_INVALID_HANDLE, fn, "%s is NULL", bufname);
    size_t bytes = 0;
    duet_status st = duet_buffer_size(buf, &bytes);
    if (st != DUET_SUCCESS)
        return dd_fail(DUET_ERROR_INVALID_HANDLE, fn, "%s is not a live buffer: %s", bufname,
                       duet_last_error());
    const size_t es = duet_dtype_size(d->dtype);
    const int64_t ext = local_extent(d, rows, cols);
    if (ext > 0) {
        const size_t maxel = bytes / es;
        if (d->offset > maxel || (uint64_t)ext > maxel - d->offset)
            return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "the local %lld x %lld matrix of %s (offset %zu, lld %lld) needs "
                           "%lld elements but its buffer holds %zu",
                           (long long)rows, (long long)cols, bufname, d->offset, (long long)d->lld,
                           (long long)(d->offset + (size_t)ext), maxel);
    }
    return DUET_SUCCESS;
}

static int dtypes_supported(duet_dtype ab, duet_dtype c)
{
    switch (ab) {
    case DUET_DTYPE_F32: return c == DUET_DTYPE_F32;
    case DUET_DTYPE_F64: return c == DUET_DTYPE_F64;
    case DUET_DTYPE_I32: return c == DUET_DTYPE_I32;
    case DUET_DTYPE_F16:
    case DUET_DTYPE_BF16: return c == DUET_DTYPE_F32;
    case DUET_DTYPE_I8: return c == DUET_DTYPE_I32;
    case DUET_DTYPE_F8E4M3:
    case DUET_DTYPE_F8E5M2: return 0;
    }
    return 0;
}

static int integer_scalar_ok(double v)
{
    return v == floor(v) && v >= (double)INT32_MIN && v <= (double)INT32_MAX;
}

/* Moves src (transposed when transpose) into dst, of the same dtype, through host memory and
 * one MPI_Alltoallv. Every rank packs its elements in the order of its local rows, then
 * columns (global source order); each receiver walks its own elements in the order that
 * reproduces each sender's, so no indices travel. A local failure is recorded in *st and the
 * collective still runs, so no rank is left waiting on this one. */
typedef struct redist_mem {
    unsigned char *s_host, *d_host, *sendbuf, *recvbuf;
    int *cnt, *sdisp, *rcnt, *rdisp;
    int64_t *cursor;
} redist_mem;

static void redist_free(redist_mem *m)
{
    free(m->s_host);
    free(m->d_host);
    free(m->sendbuf);
    free(m->recvbuf);
    free(m->cnt);
    free(m->cursor);
    memset(m, 0, sizeof *m);
}

/* Host memory for one redistribution, taken before the ranks agree to go ahead (a rank that
 * could not take part in the all-to-all would leave the others waiting). */
static duet_status redist_alloc(const duet_dist_grid *g, const operand *src, const operand *dst,
                                redist_mem *m, const char *fn)
{
    const size_t es = duet_dtype_size(src->d.dtype);
    const int64_t s_ext = local_extent(&src->d, src->lrows, src->lcols);
    const int64_t d_ext = local_extent(&dst->d, dst->lrows, dst->lcols);
    const int64_t s_count = src->lrows * src->lcols, d_count = dst->lrows * dst->lcols;
    memset(m, 0, sizeof *m);
    if (s_count > INT_MAX || d_count > INT_MAX)
        return dd_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "a local matrix of more than 2^31 - 1 elements cannot be redistributed "
                       "(transposed or with other blocks than C's) in one MPI_Alltoallv");
    m->s_host = malloc((size_t)(s_ext > 0 ? s_ext : 1) * es);
    m->d_host = malloc((size_t)(d_ext > 0 ? d_ext : 1) * es);
    m->sendbuf = malloc((size_t)(s_count > 0 ? s_count : 1) * es);
    m->recvbuf = malloc((size_t)(d_count > 0 ? d_count : 1) * es);
    m->cnt = calloc((size_t)g->size * 4, sizeof *m->cnt);
    m->cursor = calloc((size_t)g->size, sizeof *m->cursor);
    if (!m->s_host || !m->d_host || !m->sendbuf || !m->recvbuf || !m->cnt || !m->cursor) {
        redist_free(m);
        return dd_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "out of host memory for a redistribution");
    }
    m->sdisp = m->cnt + g->size;
    m->rcnt = m->cnt + 2 * g->size;
    m->rdisp = m->cnt + 3 * g->size;
    return DUET_SUCCESS;
}

static void redistribute(duet_dist_grid *g, const operand *src, int transpose, const operand *dst,
                         redist_mem *m, MPI_Datatype elem, duet_status *st, const char *fn)
{
    const size_t es = duet_dtype_size(src->d.dtype);
    const int size = g->size;
    const duet_dist_desc *sd = &src->d, *dd = &dst->d;
    const int64_t s_ext = local_extent(sd, src->lrows, src->lcols);
    const int64_t d_ext = local_extent(dd, dst->lrows, dst->lcols);
    unsigned char *s_host = m->s_host, *d_host = m->d_host;
    unsigned char *sendbuf = m->sendbuf, *recvbuf = m->recvbuf;
    int *cnt = m->cnt, *sdisp = m->sdisp, *rcnt = m->rcnt, *rdisp = m->rdisp;
    int64_t *cursor = m->cursor;
    if (*st == DUET_SUCCESS && s_ext > 0) {
        duet_status s2 =
            duet_buffer_read(g->stream, src->buf, sd->offset * es, s_host, (size_t)s_ext * es);
        if (s2 != DUET_SUCCESS) *st = dd_fail_duet(s2, fn, "reading an operand to redistribute");
    }
    {
        /* Source order: global row, then column, of the source. */
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                int64_t acc = 0;
                for (int r = 0; r < size; r++) {
                    sdisp[r] = (int)acc;
                    cursor[r] = acc;
                    acc += cnt[r];
                }
            }
            for (int64_t li = 0; li < src->lrows; li++) {
                const int64_t i = l2g(li, sd->mb, g->myrow, sd->rsrc, g->prow);
                for (int64_t lj = 0; lj < src->lcols; lj++) {
                    const int64_t j = l2g(lj, sd->nb, g->mycol, sd->csrc, g->pcol);
                    const int64_t ti = transpose ? j : i, tj = transpose ? i : j;
                    const int r = (int)((ti / dd->mb + dd->rsrc) % g->prow) * g->pcol +
                                  (int)((tj / dd->nb + dd->csrc) % g->pcol);
                    if (pass == 0)
                        cnt[r]++;
                    else
                        memcpy(sendbuf + (size_t)cursor[r]++ * es,
                               s_host + (local_index(sd, li, lj) - sd->offset) * es, es);
                }
            }
        }
        /* Receiver order: the same global source order, walked over the destination. Without a
         * transpose that is destination rows, then columns; with one, columns, then rows. */
        const int64_t outer = transpose ? dst->lcols : dst->lrows;
        const int64_t inner = transpose ? dst->lrows : dst->lcols;
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                int64_t acc = 0;
                for (int r = 0; r < size; r++) {
                    rdisp[r] = (int)acc;
                    cursor[r] = acc;
                    acc += rcnt[r];
                }
            }
            for (int64_t a = 0; a < outer; a++)
                for (int64_t b = 0; b < inner; b++) {
                    const int64_t dli = transpose ? b : a, dlj = transpose ? a : b;
                    const int64_t ti = l2g(dli, dd->mb, g->myrow, dd->rsrc, g->prow);
                    const int64_t tj = l2g(dlj, dd->nb, g->mycol, dd->csrc, g->pcol);
                    const int64_t i = transpose ? tj : ti, j = transpose ? ti : tj;
                    const int r = (int)((i / sd->mb + sd->rsrc) % g->prow) * g->pcol +
                                  (int)((j / sd->nb + sd->csrc) % g->pcol);
                    if (pass == 0)
                        rcnt[r]++;
                    else
                        cursor[r]++;
                }
        }
    }
    /* Everyone takes part even after a local failure (counts are computed from the global
     * descriptors alone, so they match between ranks). */
    int err = MPI_Alltoallv(sendbuf, cnt, sdisp, elem, recvbuf, rcnt, rdisp, elem, g->comm);
    if (err != MPI_SUCCESS && *st == DUET_SUCCESS) *st = dd_mpi_fail(err, fn, "MPI_Alltoallv");
    if (*st == DUET_SUCCESS) {
        const int64_t outer = transpose ? dst->lcols : dst->lrows;
        const int64_t inner = transpose ? dst->lrows : dst->lcols;
        for (int r = 0; r < size; r++) cursor[r] = rdisp[r];
        for (int64_t a = 0; a < outer; a++)
            for (int64_t b = 0; b < inner; b++) {
                const int64_t dli = transpose ? b : a, dlj = transpose ? a : b;
                const int64_t ti = l2g(dli, dd->mb, g->myrow, dd->rsrc, g->prow);
                const int64_t tj = l2g(dlj, dd->nb, g->mycol, dd->csrc, g->pcol);
                const int64_t i = transpose ? tj : ti, j = transpose ? ti : tj;
                const int r = (int)((i / sd->mb + sd->rsrc) % g->prow) * g->pcol +
                              (int)((j / sd->nb + sd->csrc) % g->pcol);
                memcpy(d_host + (local_index(dd, dli, dlj) - dd->offset) * es,
                       recvbuf + (size_t)cursor[r]++ * es, es);
            }
        if (d_ext > 0) {
            duet_status s2 =
                duet_buffer_write(g->stream, dst->buf, dd->offset * es, d_host, (size_t)d_ext * es);
            if (s2 != DUET_SUCCESS) *st = dd_fail_duet(s2, fn, "writing a redistributed operand");
        }
    }
}

/* One k panel of the SUMMA loop: columns [k0, k0 + kw) of A (root: grid column acol, local
 * column ka there) and rows [k0, k0 + kw) of B (root: grid row brow, local row kb there). */
typedef struct panel {
    int64_t k0, kw, ka, kb;
    int acol, brow;
} panel;

/* A group's broadcasts on the host-staged transport: two requests a panel (A's, B's; null where
 * the operand is not staged), of which n are posted, and which of them have completed. A
 * request completed while the host waited for something else is marked in landed (MPI sets it
 * to MPI_REQUEST_NULL), so that its slice still goes up to the device. */
#define DD_GROUP_MAX 64
typedef struct bcasts {
    MPI_Request req[2 * DD_GROUP_MAX];
    unsigned char landed[2 * DD_GROUP_MAX];
    int n;
} bcasts;

/* Moves MPI along on b's posted requests and marks the completed ones. A failed broadcast is
 * reported by the wait that completes the group. */
static void progress(bcasts *b)
{
    if (!b || b->n <= 0) return;
    int out = 0, idx[2 * DD_GROUP_MAX];
    if (MPI_Testsome(b->n, b->req, &out, idx, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return;
    for (int i = 0; i < out && out != MPI_UNDEFINED; i++) b->landed[idx[i]] = 1;
}

/* Waits for event on the host while driving MPI's progress on the broadcasts of prev and cur
 * (an MPI without a progress thread moves non-blocking collectives only inside MPI calls), so
 * that a wait for the device does not stall the panels in flight. */
static duet_status wait_progressing(duet_event *event, bcasts *prev, bcasts *cur)
{
    if ((!prev || prev->n <= 0) && (!cur || cur->n <= 0)) return duet_event_synchronize(event);
    for (;;) {
        /* At least once, also where the device is done already (the cpu backend): the
         * bookkeeping of broadcasts completed here runs on every backend. */
        progress(prev);
        progress(cur);
        const duet_status st = duet_event_query(event);
        if (st != DUET_ERROR_NOT_READY) return st;
    }
}

/* On the panel's owner, copies its local part of A's panel (lrows x kw, packed column-major)
 * or B's (kw x lcols, packed row-major) to host[operand][parity] at byte dst_off. A panel already packed in
 * the local matrix is read directly; any other goes through a device transpose into the
 * staging buffer (a transpose that changes the layout is a strided copy). */
static duet_status pack_panel(duet_dist_grid *g, const operand *op, int operand_id, const panel *p,
                              int parity, size_t dst_off, bcasts *prev, bcasts *cur, const char *fn)
{
    const duet_dist_desc *d = &op->d;
    const size_t es = duet_dtype_size(d->dtype);
    const int is_a = operand_id == DD_A;
    const int64_t rows = is_a ? op->lrows : p->kw, cols = is_a ? p->kw : op->lcols;
    if (rows == 0 || cols == 0) return DUET_SUCCESS;
    const size_t bytes = (size_t)(rows * cols) * es;
    const size_t first = is_a ? local_index(d, 0, p->ka) : local_index(d, p->kb, 0);
    /* A's panel is packed when A is column-major with lld == rows (or one column wide);
     * B's when B is row-major with lld == cols (or one row high). */
    const int packed = is_a ? (d->layout == DUET_LAYOUT_COL_MAJOR && (d->lld == rows || cols == 1))
                            : (d->layout == DUET_LAYOUT_ROW_MAJOR && (d->lld == cols || rows == 1));
    duet_status st;
    if (packed) {
        st = duet_buffer_read_async(g->pack_stream, op->buf, first * es,
                                    (unsigned char *)g->host[operand_id][parity] + dst_off, bytes);
    } else {
        duet_matrix in;
        memset(&in, 0, sizeof in);
        in.buffer = op->buf;
        in.offset = first;
        in.rows = rows;
        in.cols = cols;
        in.ld = d->lld;
        in.dtype = d->dtype;
        in.layout = d->layout;
        in.batch_count = 1;
        /* out = in^T stored in the other layout holds in packed in the panel's layout. */
        duet_matrix out =
            duet_matrix_make(g->stage[operand_id], d->dtype,
                             is_a ? DUET_LAYOUT_ROW_MAJOR : DUET_LAYOUT_COL_MAJOR, cols, rows);
        st = duet_transpose(g->pack_stream, &in, &out, NULL);
        if (st == DUET_SUCCESS)
            st = duet_buffer_read_async(g->pack_stream, g->stage[operand_id], 0,
                                        (unsigned char *)g->host[operand_id][parity] + dst_off,
                                        bytes);
    }
    if (st == DUET_SUCCESS) st = duet_event_record(g->ev_pack, g->pack_stream);
    if (st == DUET_SUCCESS) st = wait_progressing(g->ev_pack, prev, cur);
    if (st != DUET_SUCCESS) return dd_fail_duet(st, fn, "packing a panel");
    return DUET_SUCCESS;
}

/* The owner's panel straight into a device panel buffer at element dst_off, queued on stream s
 * (the device transports, and the host-staged one for an operand that stays on its rank). */
static duet_status pack_panel_device_on(duet_dist_grid *g, duet_stream *s, const operand *op,
                                        int operand_id, const panel *p, duet_buffer *dst,
                                        size_t dst_off, const char *fn)
{
    const duet_dist_desc *d = &op->d;
    const size_t es = duet_dtype_size(d->dtype);
    const int is_a = operand_id == DD_A;
    const int64_t rows = is_a ? op->lrows : p->kw, cols = is_a ? p->kw : op->lcols;
    if (rows == 0 || cols == 0) return DUET_SUCCESS;
    const size_t first = is_a ? local_index(d, 0, p->ka) : local_index(d, p->kb, 0);
    const int packed = is_a ? (d->layout == DUET_LAYOUT_COL_MAJOR && (d->lld == rows || cols == 1))
                            : (d->layout == DUET_LAYOUT_ROW_MAJOR && (d->lld == cols || rows == 1));
    duet_status st;
    if (packed) {
        st = duet_buffer_copy(s, dst, dst_off * es, op->buf, first * es,
                              (size_t)(rows * cols) * es);
    } else {
        duet_matrix in;
        memset(&in, 0, sizeof in);
        in.buffer = op->buf;
        in.offset = first;
        in.rows = rows;
        in.cols = cols;
        in.ld = d->lld;
        in.dtype = d->dtype;
        in.layout = d->layout;
        in.batch_count = 1;
        duet_matrix out = duet_matrix_make(
            dst, d->dtype, is_a ? DUET_LAYOUT_ROW_MAJOR : DUET_LAYOUT_COL_MAJOR, cols, rows);
        out.offset = dst_off;
        st = duet_transpose(s, &in, &out, NULL);
    }
    return st == DUET_SUCCESS ? st : dd_fail_duet(st, fn, "packing a panel");
}

/* The same on the second stream (the device transports). */
static duet_status pack_panel_device(duet_dist_grid *g, const operand *op, int operand_id,
                                     const panel *p, duet_buffer *dst, size_t dst_off,
                                     const char *fn)
{
    return pack_panel_device_on(g, g->pack_stream, op, operand_id, p, dst, dst_off, fn);
}

/* A group of consecutive panels that one local GEMM takes: their A parts side by side
 * (lrows x kw, column-major) and their B parts one under the other (kw x lcols, row-major) in
 * one panel buffer, so the local update is one GEMM of depth kw instead of one per block (at
 * most DD_GROUP_MAX panels). */
typedef struct panel_group {
    int n;
    int64_t k0, kw;
    panel p[DD_GROUP_MAX];
} panel_group;

/* Owners pack the group's panels into host[.][parity] (after the upload that last read it),
 * then every rank posts the broadcasts, two per panel, each into its slice. An operand whose
 * broadcast would reach only its owner (A on a grid of one column, B on one of one row) is not
 * staged: summa packs it on the device instead (no copy to the host and back). The requests go
 * to out; prev (NULL for the first group) holds the previous group's broadcasts, kept moving
 * while the host waits, as are this group's broadcasts already posted. */
static void post_group(duet_dist_grid *g, const operand *a, const operand *b,
                       const panel_group *grp, int parity, MPI_Datatype elem, bcasts *out,
                       bcasts *prev, duet_status *st, const char *fn)
{
    for (int i = 0; i < 2 * DD_GROUP_MAX; i++) {
        out->req[i] = MPI_REQUEST_NULL;
        out->landed[i] = 0;
    }
    out->n = 0;
    MPI_Request *req = out->req;
    if (g->ev_up_recorded[parity]) {
        duet_status s2 = wait_progressing(g->ev_up[parity], prev, NULL);
        if (s2 != DUET_SUCCESS && *st == DUET_SUCCESS)
            *st = dd_fail_duet(s2, fn, "waiting for a panel upload");
        g->ev_up_recorded[parity] = 0;
    }
    const size_t es = duet_dtype_size(a->d.dtype);
    const int stage_a = g->pcol > 1, stage_b = g->prow > 1;
    for (int i = 0; i < grp->n; i++) {
        const panel *p = &grp->p[i];
        const int64_t off = p->k0 - grp->k0; /* the panel's first k within the group */
        if (*st == DUET_SUCCESS && stage_a && g->mycol == p->acol)
            *st = pack_panel(g, a, DD_A, p, parity, (size_t)(a->lrows * off) * es, prev, out, fn);
        if (*st == DUET_SUCCESS && stage_b && g->myrow == p->brow)
            *st = pack_panel(g, b, DD_B, p, parity, (size_t)(b->lcols * off) * es, prev, out, fn);
        /* Counts are the same on every rank of a grid row (A) or column (B). */
        const int na = (int)(a->lrows * p->kw), nb = (int)(b->lcols * p->kw);
        int err = MPI_SUCCESS;
        if (stage_a)
            err = MPI_Ibcast((unsigned char *)g->host[DD_A][parity] + (size_t)(a->lrows * off) * es,
                             na, elem, p->acol, g->row_comm, &req[2 * i]);
        if (err == MPI_SUCCESS && stage_b)
            err = MPI_Ibcast((unsigned char *)g->host[DD_B][parity] + (size_t)(b->lcols * off) * es,
                             nb, elem, p->brow, g->col_comm, &req[2 * i + 1]);
        if (err != MPI_SUCCESS && *st == DUET_SUCCESS) *st = dd_mpi_fail(err, fn, "MPI_Ibcast");
        out->n = 2 * (i + 1);
    }
}

/* The panel starting at k0: up to the next block edge of A's columns or B's rows. */
static panel next_panel(const duet_dist_grid *g, const operand *a, const operand *b, int64_t k0,
                        int64_t K)
{
    const int64_t ea = (k0 / a->d.nb + 1) * a->d.nb, eb = (k0 / b->d.mb + 1) * b->d.mb;
    int64_t k1 = ea < eb ? ea : eb;
    if (k1 > K) k1 = K;
    panel p;
    p.k0 = k0;
    p.kw = k1 - k0;
    p.acol = (int)((k0 / a->d.nb + a->d.csrc) % g->pcol);
    p.ka = (k0 / a->d.nb / g->pcol) * a->d.nb + k0 % a->d.nb;
    p.brow = (int)((k0 / b->d.mb + b->d.rsrc) % g->prow);
    p.kb = (k0 / b->d.mb / g->prow) * b->d.mb + k0 % b->d.mb;
    return p;
}

/* The group starting at k0: whole panels, in order, while their width stays within kwcap
 * (at least one panel, at most DD_GROUP_MAX). Every rank builds the same groups. */
static panel_group next_group(const duet_dist_grid *g, const operand *a, const operand *b,
                              int64_t k0, int64_t K, int64_t kwcap)
{
    panel_group grp;
    grp.n = 0;
    grp.k0 = k0;
    grp.kw = 0;
    while (k0 < K && grp.n < DD_GROUP_MAX) {
        const panel p = next_panel(g, a, b, k0, K);
        if (grp.n > 0 && grp.kw + p.kw > kwcap) break;
        grp.p[grp.n++] = p;
        grp.kw += p.kw;
        k0 += p.kw;
    }
    return grp;
}

/* The width of a group of panels, the local GEMM's depth. Each group's GEMM reads and writes
 * the local C once (beta 1 after the first), which costs as much as about cs x R / bandwidth
 * columns of depth (R the device's rate for the dtype): on an H200 about 14 flops a byte for
 * f64 and 180 for 16-bit inputs. Fewer, wider groups also leave the GPU to the GEMMs: the
 * Hopper GEMM kernels are persistent (a CTA a SM, each with a fixed share of the tiles), so a
 * broadcast kernel that holds SMs when a GEMM starts delays the CTAs of those SMs by its whole
 * length. On 2 H200s (1 x 2 grid, n 32768, NCCL) f64 ran at 82% of two duet_gemms with
 * groups of 2,048 columns, 87% with 4,096, 90% with 8,192 and 91% with 16,384; bf16 at 62% with
 * 8,192, 66% with 16,384 and 82.5% with the whole depth in one group. So with device panel
 * buffers (NCCL, MPI on device memory) a group is 16,384 columns for 4- and 8-byte dtypes and
 * the whole depth for 1- and 2-byte ones, capped so that a panel buffer (the larger of rows
 * and cols by the width) stays within 4 GiB and 2^31 - 1 elements. The host-staged MPI transport is
 * bound by the host's bandwidth, not by the groups (f64 as above: 30% with 2,048 columns, 29% with
 * 8,192), and its buffers are pinned host memory: 2,048 and 8,192 columns within 512 MiB. Never
 * below one block (the caller takes whole panels). rows and cols are the largest local C of any
 * rank, so that every rank builds the same groups. DUET_DIST_PANEL_WIDTH (a positive number of
 * columns, the same on every rank: duet_dist_gemm checks) replaces the rule. */
static int64_t group_width(duet_dtype dt, int transport, int64_t K, int64_t rows, int64_t cols)
{
    const char *env = getenv("DUET_DIST_PANEL_WIDTH");
    if (env && *env) {
        char *end = NULL;
        const long long v = strtoll(env, &end, 10);
        if (end && *end == '\0' && v > 0) return v < K ? (int64_t)v : (K < 1 ? 1 : K);
    }
    const size_t es = duet_dtype_size(dt);
    const int host = transport == DUET_DIST_TRANSPORT_MPI_HOST;
    int64_t w = host ? (es >= 4 ? 2048 : 8192) : (es >= 4 ? 16384 : K);
    const int64_t limit = host ? (int64_t)512 << 20 : (int64_t)4 << 30;
    const int64_t wide = rows > cols ? rows : cols;
    const int64_t line = wide * (int64_t)es;
    int64_t cap = line > 0 ? limit / line : w;
    /* A panel buffer's elements are one MPI count (an int). */
    if (wide > 0 && cap > INT_MAX / wide) cap = INT_MAX / wide;
    if (w > cap) w = cap;
    if (w > K) w = K;
    return w < 1 ? 1 : w;
}

/* This rank's local block of a distributed matrix (lrows x lcols at dc's offset, lld and
 * layout in buffer c), for the local GEMMs. */
static duet_matrix local_matrix(const duet_dist_desc *dc, duet_buffer *c, int64_t lrows, int64_t lcols)
{
    duet_matrix mc;
    memset(&mc, 0, sizeof mc);
    mc.buffer = c;
    mc.offset = dc->offset;
    mc.rows = lrows;
    mc.cols = lcols;
    mc.ld = dc->lld;
    mc.dtype = dc->dtype;
    mc.layout = dc->layout;
    mc.batch_count = 1;
    return mc;
}

static duet_status summa(duet_dist_grid *g, const operand *a, const operand *b,
                         const duet_dist_desc *dc, duet_buffer *c, int64_t lrows, int64_t lcols,
                         int64_t K, int64_t kwcap, double alpha, double beta,
                         const duet_dist_gemm_options *opt, MPI_Datatype elem, duet_status st,
                         const char *fn)
{
    const size_t es = duet_dtype_size(a->d.dtype);
    int64_t ngroups = 0;
    for (int64_t k0 = 0; k0 < K; ngroups++) k0 += next_group(g, a, b, k0, K, kwcap).kw;

    duet_matrix mc = local_matrix(dc, c, lrows, lcols);
    duet_op_options lo;
    memset(&lo, 0, sizeof lo);
    lo.math = opt ? opt->math : DUET_MATH_DEFAULT;

    bcasts bc[2];
    bc[0].n = bc[1].n = 0;
    g->ev_up_recorded[0] = g->ev_up_recorded[1] = 0;
    /* Two groups live at once: the one computed and the one in flight. */
    panel_group grp[2];
    if (ngroups > 0) {
        grp[0] = next_group(g, a, b, 0, K, kwcap);
        post_group(g, a, b, &grp[0], 0, elem, &bc[0], NULL, &st, fn);
    }
    for (int64_t t = 0; t < ngroups; t++) {
        const int par = (int)(t & 1);
        const panel_group *cur = &grp[par];
        /* Group t + 1's broadcasts are in flight while group t's GEMM runs. */
        if (t + 1 < ngroups) {
            grp[par ^ 1] = next_group(g, a, b, cur->k0 + cur->kw, K, kwcap);
            post_group(g, a, b, &grp[par ^ 1], par ^ 1, elem, &bc[par ^ 1], &bc[par], &st, fn);
        }
        bcasts *bt = &bc[par];
        const int64_t kw = cur->kw;
        const int upload = st == DUET_SUCCESS && lrows > 0 && lcols > 0;
        /* The uploads run on their own stream, beside group t - 1's GEMM: after the GEMM that
         * last read these device buffers (group t - 2), and before group t's GEMM. Each
         * panel's slice goes up as soon as its broadcast is complete, while the group's other
         * broadcasts go on (MPI progresses them in MPI_Waitany). */
        duet_status s2 =
            upload ? duet_stream_wait_event(g->up_stream, g->ev_gemm[par]) : DUET_SUCCESS;
        /* First the slices whose broadcasts completed while the host waited for something else,
         * then each one as MPI_Waitany returns it. */
        int scan = 0;
        for (;;) {
            int idx = MPI_UNDEFINED;
            while (scan < bt->n && !bt->landed[scan]) scan++;
            if (scan < bt->n) {
                idx = scan++;
            } else {
                const int err = MPI_Waitany(bt->n, bt->req, &idx, MPI_STATUS_IGNORE);
                if (err != MPI_SUCCESS) {
                    if (st == DUET_SUCCESS) st = dd_mpi_fail(err, fn, "MPI_Waitany");
                    /* The others still complete before their buffers are reused. */
                    MPI_Waitall(bt->n, bt->req, MPI_STATUSES_IGNORE);
                    break;
                }
                if (idx == MPI_UNDEFINED) break; /* all complete */
            }
            if (!upload || s2 != DUET_SUCCESS) continue;
            const panel *p = &cur->p[idx / 2];
            const int64_t off = p->k0 - cur->k0;
            if (idx % 2 == 0)
                s2 = duet_buffer_write_async(
                    g->up_stream, g->dev[DD_A][par], (size_t)(lrows * off) * es,
                    (unsigned char *)g->host[DD_A][par] + (size_t)(lrows * off) * es,
                    (size_t)(lrows * p->kw) * es);
            else
                s2 = duet_buffer_write_async(
                    g->up_stream, g->dev[DD_B][par], (size_t)(lcols * off) * es,
                    (unsigned char *)g->host[DD_B][par] + (size_t)(lcols * off) * es,
                    (size_t)(lcols * p->kw) * es);
        }
        if (st != DUET_SUCCESS || !upload) continue;
        /* An operand that stays on its rank is packed there, on the same stream. */
        const int local_a = g->pcol == 1, local_b = g->prow == 1;
        for (int i = 0; i < cur->n && s2 == DUET_SUCCESS && (local_a || local_b); i++) {
            const panel *p = &cur->p[i];
            const int64_t off = p->k0 - cur->k0;
            if (local_a)
                s2 = pack_panel_device_on(g, g->up_stream, a, DD_A, p, g->dev[DD_A][par],
                                          (size_t)(lrows * off), fn);
            if (s2 == DUET_SUCCESS && local_b)
                s2 = pack_panel_device_on(g, g->up_stream, b, DD_B, p, g->dev[DD_B][par],
                                          (size_t)(lcols * off), fn);
        }
        if (s2 == DUET_SUCCESS) s2 = duet_event_record(g->ev_up[par], g->up_stream);
        if (s2 == DUET_SUCCESS) g->ev_up_recorded[par] = 1;
        if (s2 == DUET_SUCCESS) s2 = duet_stream_wait_event(g->stream, g->ev_up[par]);
        if (s2 == DUET_SUCCESS) {
            duet_matrix ma = duet_matrix_make(g->dev[DD_A][par], a->d.dtype, DUET_LAYOUT_COL_MAJOR,
                                              lrows, kw);
            duet_matrix mb = duet_matrix_make(g->dev[DD_B][par], b->d.dtype, DUET_LAYOUT_ROW_MAJOR,
                                              kw, lcols);
            s2 = duet_gemm(g->stream, DUET_OP_N, DUET_OP_N, alpha, &ma, &mb, t == 0 ? beta : 1.0,
                           &mc, &lo);
            if (s2 == DUET_SUCCESS) s2 = duet_event_record(g->ev_gemm[par], g->stream);
        }
        if (s2 != DUET_SUCCESS) st = dd_fail_duet(s2, fn, "the local duet_gemm of a panel");
    }
    duet_status s2 = duet_stream_synchronize(g->stream);
    if (s2 == DUET_SUCCESS) s2 = duet_stream_synchronize(g->up_stream);
    if (s2 != DUET_SUCCESS && st == DUET_SUCCESS) st = dd_fail_duet(s2, fn, "the local GEMMs");
    g->ev_up_recorded[0] = g->ev_up_recorded[1] = 0;
    /* A failure during the loop (a device or MPI error on some rank) becomes every rank's. */
    return dd_agree(g->comm, st, NULL, NULL, 0, fn);
}

/* The MPI transport on device buffers (MPI_DEVICE): group t's panels are packed by their owners
 * straight into their slices of dev[.][t % 2] and broadcast with MPI_Ibcast on the device
 * addresses; no host staging, no upload. Before group t + 1 is packed into the other buffers,
 * the host waits for the GEMM that last read them (group t - 1, an event); group t's GEMM is
 * queued first, so the device has work while the host waits. */
static void post_group_device(duet_dist_grid *g, const operand *a, const operand *b,
                              const panel_group *grp, int parity, MPI_Datatype elem,
                              MPI_Request req[2 * DD_GROUP_MAX], int64_t lrows, int64_t lcols,
                              duet_status *st, const char *fn)
{
    const size_t es = duet_dtype_size(a->d.dtype);
    for (int i = 0; i < 2 * DD_GROUP_MAX; i++) req[i] = MPI_REQUEST_NULL;
    if (g->ev_up_recorded[parity]) { /* here: the GEMM that read dev[.][parity] */
        duet_status s2 = duet_event_synchronize(g->ev_gemm[parity]);
        if (s2 != DUET_SUCCESS && *st == DUET_SUCCESS)
            *st = dd_fail_duet(s2, fn, "waiting for a panel GEMM");
        g->ev_up_recorded[parity] = 0;
    }
    for (int i = 0; i < grp->n && *st == DUET_SUCCESS; i++) {
        const panel *p = &grp->p[i];
        const int64_t off = p->k0 - grp->k0;
        if (g->mycol == p->acol)
            *st = pack_panel_device(g, a, DD_A, p, g->dev[DD_A][parity], (size_t)(lrows * off), fn);
        if (*st == DUET_SUCCESS && g->myrow == p->brow)
            *st = pack_panel_device(g, b, DD_B, p, g->dev[DD_B][parity], (size_t)(lcols * off), fn);
    }
    if (*st == DUET_SUCCESS) {
        const duet_status s2 = duet_stream_synchronize(g->pack_stream);
        if (s2 != DUET_SUCCESS) *st = dd_fail_duet(s2, fn, "packing a panel");
    }
    /* The broadcasts are posted whatever happened above: peers take part in them. */
    for (int i = 0; i < grp->n; i++) {
        const panel *p = &grp->p[i];
        const int64_t off = p->k0 - grp->k0;
        void *pa = NULL, *pb = NULL;
        if (duet_buffer_device_ptr(g->dev[DD_A][parity], (size_t)(lrows * off) * es, &pa) !=
                DUET_SUCCESS ||
            duet_buffer_device_ptr(g->dev[DD_B][parity], (size_t)(lcols * off) * es, &pb) !=
                DUET_SUCCESS) {
            /* Cannot happen for buffers of the grid's context; the peers still need a
             * matching call, so broadcast from the start of the buffers. */
            if (*st == DUET_SUCCESS)
                *st = dd_fail_duet(DUET_ERROR_BACKEND, fn, "duet_buffer_device_ptr");
            duet_buffer_device_ptr(g->dev[DD_A][parity], 0, &pa);
            duet_buffer_device_ptr(g->dev[DD_B][parity], 0, &pb);
        }
        int err = MPI_Ibcast(pa, (int)(lrows * p->kw), elem, p->acol, g->row_comm, &req[2 * i]);
        if (err == MPI_SUCCESS)
            err = MPI_Ibcast(pb, (int)(lcols * p->kw), elem, p->brow, g->col_comm, &req[2 * i + 1]);
        if (err != MPI_SUCCESS && *st == DUET_SUCCESS) *st = dd_mpi_fail(err, fn, "MPI_Ibcast");
    }
}

static duet_status summa_mpi_device(duet_dist_grid *g, const operand *a, const operand *b,
                                    const duet_dist_desc *dc, duet_buffer *c, int64_t lrows,
                                    int64_t lcols, int64_t K, int64_t kwcap, double alpha,
                                    double beta, const duet_dist_gemm_options *opt,
                                    MPI_Datatype elem, duet_status st, const char *fn)
{
    int64_t ngroups = 0;
    for (int64_t k0 = 0; k0 < K; ngroups++) k0 += next_group(g, a, b, k0, K, kwcap).kw;
    duet_matrix mc = local_matrix(dc, c, lrows, lcols);
    duet_op_options lo;
    memset(&lo, 0, sizeof lo);
    lo.math = opt ? opt->math : DUET_MATH_DEFAULT;
    MPI_Request req[2][2 * DD_GROUP_MAX];
    g->ev_up_recorded[0] = g->ev_up_recorded[1] = 0;
    panel_group grp[2];
    if (ngroups > 0) {
        grp[0] = next_group(g, a, b, 0, K, kwcap);
        post_group_device(g, a, b, &grp[0], 0, elem, req[0], lrows, lcols, &st, fn);
    }
    for (int64_t t = 0; t < ngroups; t++) {
        const int par = (int)(t & 1);
        const panel_group *cur = &grp[par];
        int err = MPI_Waitall(2 * cur->n, req[par], MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS && st == DUET_SUCCESS) st = dd_mpi_fail(err, fn, "MPI_Waitall");
        if (st == DUET_SUCCESS && lrows > 0 && lcols > 0) {
            duet_matrix ma = duet_matrix_make(g->dev[DD_A][par], a->d.dtype, DUET_LAYOUT_COL_MAJOR,
                                              lrows, cur->kw);
            duet_matrix mb = duet_matrix_make(g->dev[DD_B][par], b->d.dtype, DUET_LAYOUT_ROW_MAJOR,
                                              cur->kw, lcols);
            duet_status s2 = duet_gemm(g->stream, DUET_OP_N, DUET_OP_N, alpha, &ma, &mb,
                                       t == 0 ? beta : 1.0, &mc, &lo);
            if (s2 == DUET_SUCCESS) s2 = duet_event_record(g->ev_gemm[par], g->stream);
            if (s2 == DUET_SUCCESS) g->ev_up_recorded[par] = 1;
            if (s2 != DUET_SUCCESS) st = dd_fail_duet(s2, fn, "the local duet_gemm of a panel");
        }
        /* Group t + 1 into the other buffers, after group t - 1's GEMM; group t's is queued. */
        if (t + 1 < ngroups) {
            grp[par ^ 1] = next_group(g, a, b, cur->k0 + cur->kw, K, kwcap);
            post_group_device(g, a, b, &grp[par ^ 1], par ^ 1, elem, req[par ^ 1], lrows, lcols,
                              &st, fn);
        }
    }
    duet_status s2 = duet_stream_synchronize(g->stream);
    if (s2 != DUET_SUCCESS && st == DUET_SUCCESS) st = dd_fail_duet(s2, fn, "the local GEMMs");
    g->ev_up_recorded[0] = g->ev_up_recorded[1] = 0;
    return dd_agree(g->comm, st, NULL, NULL, 0, fn);
}

/* The NCCL transport: everything is queued, nothing waits on the host until the end. Group t's
 * panels are packed by their owners straight into their slices of dev[.][t % 2] and broadcast
 * in place on the second stream, after the GEMM that last read that buffer (group t - 2); the
 * GEMM stream waits for the broadcasts. The second stream thus runs up to two groups ahead of
 * the GEMMs. */
static duet_status summa_nccl(duet_dist_grid *g, const operand *a, const operand *b,
                              const duet_dist_desc *dc, duet_buffer *c, int64_t lrows,
                              int64_t lcols, int64_t K, int64_t kwcap, double alpha, double beta,
                              const duet_dist_gemm_options *opt, duet_status st, const char *fn)
{
    const size_t es = duet_dtype_size(a->d.dtype);
    duet_matrix mc = local_matrix(dc, c, lrows, lcols);
    duet_op_options lo;
    memset(&lo, 0, sizeof lo);
    lo.math = opt ? opt->math : DUET_MATH_DEFAULT;
    int64_t t = 0;
    for (int64_t k0 = 0; k0 < K; t++) {
        const panel_group grp = next_group(g, a, b, k0, K, kwcap);
        const int par = (int)(t & 1);
        duet_status s2 = DUET_SUCCESS;
        if (t >= 2) s2 = dd_stream_wait_event(g->pack_stream, g->ev_gemm[par], fn);
        if (s2 != DUET_SUCCESS && st == DUET_SUCCESS) st = s2;
        for (int i = 0; i < grp.n; i++) {
            const panel *p = &grp.p[i];
            const int64_t off = p->k0 - grp.k0;
            s2 = DUET_SUCCESS;
            if (st == DUET_SUCCESS && g->mycol == p->acol)
                s2 = pack_panel_device(g, a, DD_A, p, g->dev[DD_A][par], (size_t)(lrows * off), fn);
            if (s2 == DUET_SUCCESS && st == DUET_SUCCESS && g->myrow == p->brow)
                s2 = pack_panel_device(g, b, DD_B, p, g->dev[DD_B][par], (size_t)(lcols * off), fn);
            if (s2 != DUET_SUCCESS && st == DUET_SUCCESS) st = s2;
            /* Broadcasts are issued whatever happened above: peers wait for them on the device. */
            s2 = dd_nccl_bcast(g, g->dev[DD_A][par], (size_t)(lrows * off) * es,
                               (size_t)(lrows * p->kw) * es, p->acol, g->dev[DD_B][par],
                               (size_t)(lcols * off) * es, (size_t)(lcols * p->kw) * es, p->brow,
                               g->pack_stream, fn);
            if (s2 != DUET_SUCCESS && st == DUET_SUCCESS) st = s2;
        }
        s2 = duet_event_record(g->ev_up[par], g->pack_stream);
        if (s2 == DUET_SUCCESS) s2 = dd_stream_wait_event(g->stream, g->ev_up[par], fn);
        if (s2 == DUET_SUCCESS && st == DUET_SUCCESS && lrows > 0 && lcols > 0) {
            duet_matrix ma = duet_matrix_make(g->dev[DD_A][par], a->d.dtype, DUET_LAYOUT_COL_MAJOR,
                                              lrows, grp.kw);
            duet_matrix mb = duet_matrix_make(g->dev[DD_B][par], b->d.dtype, DUET_LAYOUT_ROW_MAJOR,
                                              grp.kw, lcols);
            s2 = duet_gemm(g->stream, DUET_OP_N, DUET_OP_N, alpha, &ma, &mb, t == 0 ? beta : 1.0,
                           &mc, &lo);
            if (s2 != DUET_SUCCESS) s2 = dd_fail_duet(s2, fn, "the local duet_gemm of a panel");
        }
        if (s2 == DUET_SUCCESS) s2 = duet_event_record(g->ev_gemm[par], g->stream);
        if (s2 != DUET_SUCCESS && st == DUET_SUCCESS) st = s2;
        k0 += grp.kw;
    }
    duet_status s2 = duet_stream_synchronize(g->stream);
    if (s2 == DUET_SUCCESS) s2 = duet_stream_synchronize(g->pack_stream);
    if (s2 != DUET_SUCCESS && st == DUET_SUCCESS) st = dd_fail_duet(s2, fn, "the local GEMMs");
    return dd_agree(g->comm, st, NULL, NULL, 0, fn);
}

static int64_t max64(int64_t x, int64_t y) { return x > y ? x : y; }

duet_status duet_dist_gemm(duet_dist_grid *g, duet_op op_a, duet_op op_b, double alpha,
                           const duet_dist_desc *desc_a, duet_buffer *a,
                           const duet_dist_desc *desc_b, duet_buffer *b, double beta,
                           const duet_dist_desc *desc_c, duet_buffer *c,
                           const duet_dist_gemm_options *options)
{
    static const char fn[] = "duet_dist_gemm";
    dd_clear_error();
    if (!g) return dd_fail(DUET_ERROR_INVALID_HANDLE, fn, "grid is NULL");

    /* ---- this rank's checks ---- */
    duet_status st = DUET_SUCCESS;
    if (op_a != DUET_OP_N && op_a != DUET_OP_T)
        st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "op_a (%d) is not a duet_op", (int)op_a);
    else if (op_b != DUET_OP_N && op_b != DUET_OP_T)
        st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "op_b (%d) is not a duet_op", (int)op_b);
    if (st == DUET_SUCCESS) st = dd_check_desc_global(g, desc_a, "desc_a", fn);
    if (st == DUET_SUCCESS) st = dd_check_desc_global(g, desc_b, "desc_b", fn);
    if (st == DUET_SUCCESS) st = dd_check_desc_global(g, desc_c, "desc_c", fn);
    int64_t M = 0, N = 0, K = 0;
    if (st == DUET_SUCCESS) {
        const int64_t am = op_a == DUET_OP_N ? desc_a->m : desc_a->n;
        const int64_t ak = op_a == DUET_OP_N ? desc_a->n : desc_a->m;
        const int64_t bk = op_b == DUET_OP_N ? desc_b->m : desc_b->n;
        const int64_t bn = op_b == DUET_OP_N ? desc_b->n : desc_b->m;
        M = desc_c->m;
        N = desc_c->n;
        K = ak;
        if (desc_a->dtype != desc_b->dtype)
            st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                         "A is %s but B is %s (they share one dtype)",
                         duet_dtype_name(desc_a->dtype), duet_dtype_name(desc_b->dtype));
        else if (!dtypes_supported(desc_a->dtype, desc_c->dtype))
            st = dd_fail(DUET_ERROR_UNSUPPORTED, fn,
                         "A and B %s with C %s is not supported (see duet_dist.h: C f16 and "
                         "bf16 are not; take an f32 C)",
                         duet_dtype_name(desc_a->dtype), duet_dtype_name(desc_c->dtype));
        else if (am != M || bn != N || bk != K)
            st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                         "op(A) is %lld x %lld and op(B) is %lld x %lld, which do not make the "
                         "%lld x %lld C",
                         (long long)am, (long long)ak, (long long)bk, (long long)bn, (long long)M,
                         (long long)N);
        else if (desc_c->dtype == DUET_DTYPE_I32 &&
                 (!integer_scalar_ok(alpha) || !integer_scalar_ok(beta)))
            st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                         "alpha (%g) and beta (%g) must be integers in i32 range for an i32 C",
                         alpha, beta);
        else if (options && options->math != DUET_MATH_DEFAULT &&
                 (options->math != DUET_MATH_TF32 && options->math != DUET_MATH_3XTF32))
            st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                         "options->math (%d) is not a duet_math_mode", (int)options->math);
        else if (options && options->math != DUET_MATH_DEFAULT && desc_a->dtype != DUET_DTYPE_F32)
            st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                         "options->math %s applies to f32 only, not %s",
                         duet_math_mode_name(options->math), duet_dtype_name(desc_a->dtype));
    }
    const int compute = st == DUET_SUCCESS && M > 0 && N > 0;
    const int reads_ab = compute && K > 0 && alpha != 0.0;
    if (st == DUET_SUCCESS) st = check_local(g, desc_c, c, "desc_c", "C", fn);
    if (st == DUET_SUCCESS && reads_ab) st = check_local(g, desc_a, a, "desc_a", "A", fn);
    if (st == DUET_SUCCESS && reads_ab) st = check_local(g, desc_b, b, "desc_b", "B", fn);
    if (st == DUET_SUCCESS && reads_ab && c == a)
        st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                     "C and A share a buffer (C may not overlap A)");
    if (st == DUET_SUCCESS && reads_ab && c == b)
        st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                     "C and B share a buffer (C may not overlap B)");

    int64_t lrows = 0, lcols = 0, kwcap = 1;
    if (st == DUET_SUCCESS) dd_local_shape(g, desc_c, &lrows, &lcols);
    /* A grid of one rank holds A, B and C whole: one local duet_gemm, no panels. */
    const int single = g->prow == 1 && g->pcol == 1;

    /* ---- plan: which operands move first, the panels' K blocking, the buffers ---- */
    operand oa, ob, ta, tb;
    memset(&oa, 0, sizeof oa);
    memset(&ob, 0, sizeof ob);
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    int move_a = 0, move_b = 0;
    redist_mem ma_mem, mb_mem;
    memset(&ma_mem, 0, sizeof ma_mem);
    memset(&mb_mem, 0, sizeof mb_mem);
    if (st == DUET_SUCCESS && reads_ab && !single) {
        oa.d = *desc_a;
        oa.buf = a;
        dd_local_shape(g, desc_a, &oa.lrows, &oa.lcols);
        ob.d = *desc_b;
        ob.buf = b;
        dd_local_shape(g, desc_b, &ob.lrows, &ob.lcols);
        move_a = !(op_a == DUET_OP_N && desc_a->mb == desc_c->mb && desc_a->rsrc == desc_c->rsrc);
        move_b = !(op_b == DUET_OP_N && desc_b->nb == desc_c->nb && desc_b->csrc == desc_c->csrc);
        /* K blocking of a moved operand: that of the operand that stays, so that the panels
         * are whole blocks of both; when both move, A's own K blocking. */
        const int64_t a_kb = op_a == DUET_OP_N ? desc_a->nb : desc_a->mb;
        const int a_ksrc = op_a == DUET_OP_N ? desc_a->csrc : desc_a->rsrc;
        int64_t kb = a_kb;
        int ksrc_row = 0, ksrc_col = 0;
        if (move_a && !move_b) {
            kb = desc_b->mb;
            ksrc_col = desc_b->rsrc % g->pcol;
        } else if (!move_a && move_b) {
            kb = desc_a->nb;
            ksrc_row = desc_a->csrc % g->prow;
        } else if (move_a && move_b) {
            ksrc_col = a_ksrc % g->pcol;
            ksrc_row = a_ksrc % g->prow;
        }
        const size_t es = duet_dtype_size(desc_a->dtype);
        if (move_a) {
            ta.d.m = M;
            ta.d.n = K;
            ta.d.mb = desc_c->mb;
            ta.d.rsrc = desc_c->rsrc;
            ta.d.nb = kb;
            ta.d.csrc = ksrc_col;
            ta.d.dtype = desc_a->dtype;
            ta.d.layout = DUET_LAYOUT_COL_MAJOR;
            dd_local_shape(g, &ta.d, &ta.lrows, &ta.lcols);
            ta.d.lld = max64(1, ta.lrows);
            st = duet_buffer_create(g->ctx, (size_t)max64(1, ta.lrows * ta.lcols) * es, &ta.buf);
            if (st != DUET_SUCCESS) st = dd_fail_duet(st, fn, "allocating the moved A");
            if (st == DUET_SUCCESS) st = redist_alloc(g, &oa, &ta, &ma_mem, fn);
        }
        if (st == DUET_SUCCESS && move_b) {
            tb.d.m = K;
            tb.d.n = N;
            tb.d.mb = kb;
            tb.d.rsrc = ksrc_row;
            tb.d.nb = desc_c->nb;
            tb.d.csrc = desc_c->csrc;
            tb.d.dtype = desc_b->dtype;
            tb.d.layout = DUET_LAYOUT_ROW_MAJOR;
            dd_local_shape(g, &tb.d, &tb.lrows, &tb.lcols);
            tb.d.lld = max64(1, tb.lcols);
            st = duet_buffer_create(g->ctx, (size_t)max64(1, tb.lrows * tb.lcols) * es, &tb.buf);
            if (st != DUET_SUCCESS) st = dd_fail_duet(st, fn, "allocating the moved B");
            if (st == DUET_SUCCESS) st = redist_alloc(g, &ob, &tb, &mb_mem, fn);
        }
        if (st == DUET_SUCCESS) {
            const operand *ea = move_a ? &ta : &oa, *eb = move_b ? &tb : &ob;
            /* The panel buffers hold a group of whole panels: at least the widest panel. */
            const int64_t kwmax = ea->d.nb < eb->d.mb ? ea->d.nb : eb->d.mb;
            const int64_t kw1 = kwmax < K ? kwmax : K;
            kwcap =
                group_width(desc_a->dtype, g->transport, K,
                            duet_dist_numroc(M, desc_c->mb, desc_c->rsrc, desc_c->rsrc, g->prow),
                            duet_dist_numroc(N, desc_c->nb, desc_c->csrc, desc_c->csrc, g->pcol));
            if (kwcap < kw1) kwcap = kw1;
            const int64_t kw = kwcap;
            if (lrows * kw > INT_MAX || lcols * kw > INT_MAX)
                st = dd_fail(DUET_ERROR_UNSUPPORTED, fn,
                             "a panel of %lld x %lld or %lld x %lld elements is more than one "
                             "MPI broadcast carries (2^31 - 1): take smaller blocks",
                             (long long)lrows, (long long)kw, (long long)kw, (long long)lcols);
            if (st == DUET_SUCCESS) st = dd_reserve(g, DD_A, (size_t)(lrows * kw) * es, fn);
            if (st == DUET_SUCCESS) st = dd_reserve(g, DD_B, (size_t)(lcols * kw) * es, fn);
        }
    }

    /* ---- agreement: before any data moves ---- */
    uint64_t abits, bbits;
    memcpy(&abits, &alpha, sizeof abits);
    memcpy(&bbits, &beta, sizeof bbits);
    int64_t params[27];
    const duet_dist_desc *ds[3] = {desc_a, desc_b, desc_c};
    int np = 0;
    params[np++] = op_a;
    params[np++] = op_b;
    params[np++] = (int64_t)abits;
    params[np++] = (int64_t)bbits;
    params[np++] = options ? (int64_t)options->math : 0;
    for (int i = 0; i < 3; i++) {
        const duet_dist_desc *d = ds[i];
        params[np++] = d ? d->m : -1;
        params[np++] = d ? d->n : -1;
        params[np++] = d ? d->mb : -1;
        params[np++] = d ? d->nb : -1;
        params[np++] = d ? d->rsrc : -1;
        params[np++] = d ? d->csrc : -1;
        params[np++] = d ? (int64_t)d->dtype : -1;
    }
    /* Last: a differing panel width is reported only when the descriptors agree. */
    params[np++] = kwcap;
    static const char *const names[27] = {
        "op_a",          "op_b",          "alpha",
        "beta",          "options->math", "desc_a->m",
        "desc_a->n",     "desc_a->mb",    "desc_a->nb",
        "desc_a->rsrc",  "desc_a->csrc",  "desc_a->dtype",
        "desc_b->m",     "desc_b->n",     "desc_b->mb",
        "desc_b->nb",    "desc_b->rsrc",  "desc_b->csrc",
        "desc_b->dtype", "desc_c->m",     "desc_c->n",
        "desc_c->mb",    "desc_c->nb",    "desc_c->rsrc",
        "desc_c->csrc",  "desc_c->dtype", "the panel width (DUET_DIST_PANEL_WIDTH)"};
    st = dd_agree(g->comm, st, params, names, np, fn);
    if (st != DUET_SUCCESS || !compute) goto done;

    if (!reads_ab) {
        /* C = beta * C (beta 0 writes zeros without reading C): a local GEMM with K = 0. */
        if (lrows > 0 && lcols > 0) {
            duet_matrix ma =
                duet_matrix_make(g->dummy, desc_a->dtype, DUET_LAYOUT_COL_MAJOR, lrows, 0);
            duet_matrix mb =
                duet_matrix_make(g->dummy, desc_b->dtype, DUET_LAYOUT_ROW_MAJOR, 0, lcols);
            ma.ld = max64(1, lrows);
            mb.ld = max64(1, lcols);
            duet_matrix mc = local_matrix(desc_c, c, lrows, lcols);
            st = duet_gemm(g->stream, DUET_OP_N, DUET_OP_N, 0.0, &ma, &mb, beta, &mc, NULL);
            if (st == DUET_SUCCESS) st = duet_stream_synchronize(g->stream);
            if (st != DUET_SUCCESS) st = dd_fail_duet(st, fn, "the local C = beta * C");
        }
        st = dd_agree(g->comm, st, NULL, NULL, 0, fn);
        goto done;
    }

    if (single) {
        duet_matrix ma = local_matrix(desc_a, a, desc_a->m, desc_a->n);
        duet_matrix mb = local_matrix(desc_b, b, desc_b->m, desc_b->n);
        duet_matrix mc = local_matrix(desc_c, c, lrows, lcols);
        duet_op_options lo;
        memset(&lo, 0, sizeof lo);
        lo.math = options ? options->math : DUET_MATH_DEFAULT;
        st = duet_gemm(g->stream, op_a, op_b, alpha, &ma, &mb, beta, &mc, &lo);
        if (st == DUET_SUCCESS) st = duet_stream_synchronize(g->stream);
        if (st != DUET_SUCCESS) st = dd_fail_duet(st, fn, "the local GEMM of a 1 x 1 grid");
        st = dd_agree(g->comm, st, NULL, NULL, 0, fn);
        goto done;
    }

    {
        MPI_Datatype elem = MPI_DATATYPE_NULL;
        int err = MPI_Type_contiguous((int)duet_dtype_size(desc_a->dtype), MPI_BYTE, &elem);
        if (err == MPI_SUCCESS) err = MPI_Type_commit(&elem);
        if (err != MPI_SUCCESS) {
            /* Local and deterministic: every rank fails alike. */
            st = dd_mpi_fail(err, fn, "MPI_Type_contiguous");
            goto done;
        }
        if (move_a) redistribute(g, &oa, op_a == DUET_OP_T, &ta, &ma_mem, elem, &st, fn);
        if (move_b) redistribute(g, &ob, op_b == DUET_OP_T, &tb, &mb_mem, elem, &st, fn);
        if (g->transport == DUET_DIST_TRANSPORT_MPI_DEVICE)
            st = summa_mpi_device(g, move_a ? &ta : &oa, move_b ? &tb : &ob, desc_c, c, lrows,
                                  lcols, K, kwcap, alpha, beta, options, elem, st, fn);
        else if (g->transport == DUET_DIST_TRANSPORT_NCCL)
            st = summa_nccl(g, move_a ? &ta : &oa, move_b ? &tb : &ob, desc_c, c, lrows, lcols, K,
                            kwcap, alpha, beta, options, st, fn);
        else
            st = summa(g, move_a ? &ta : &oa, move_b ? &tb : &ob, desc_c, c, lrows, lcols, K,
                       kwcap, alpha, beta, options, elem, st, fn);
        MPI_Type_free(&elem);
    }

done:
    redist_free(&ma_mem);
    redist_free(&mb_mem);
    if (ta.buf) duet_buffer_destroy(ta.buf);
    if (tb.buf) duet_buffer_destroy(tb.buf);
    if (st == DUET_SUCCESS) dd_clear_error();
    return st;
}
