/* dist_grid.c - duet_dist's process grid, block-cyclic index math and collective error agreement.
 */
#include "dist_internal.h"

/* Open MPI's extensions declare MPIX_Query_cuda_support (and define MPIX_CUDA_AWARE_SUPPORT,
 * the build's answer; the run-time query is the one that counts). */
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char g_msg[1024];

const char *duet_dist_last_error(void) { return g_msg; }

void dd_clear_error(void) { g_msg[0] = '\0'; }

duet_status dd_fail(duet_status st, const char *func, const char *fmt, ...)
{
    char body[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(g_msg, sizeof g_msg, "%s: %s", func, body);
    return st;
}

duet_status dd_fail_duet(duet_status st, const char *func, const char *what)
{
    return dd_fail(st, func, "%s failed: %s", what, duet_last_error());
}

duet_status dd_mpi_fail(int err, const char *func, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "code %d", err);
    return dd_fail(DUET_ERROR_BACKEND, func, "%s failed: %s", what, text);
}

/* The message travels with the status from the first failing rank to all others. */
typedef struct agreed_error {
    int status;
    char msg[sizeof g_msg];
} agreed_error;

duet_status dd_agree(MPI_Comm comm, duet_status st, const int64_t *params, const char *const *names,
                     int nparams, const char *func)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* One MPI_Allreduce (max) of: the first failing rank (as size - rank, so that 0 means none),
     * each parameter and each parameter negated (their max gives the min). */
    int64_t stackbuf[2 * 48 + 1], outbuf[2 * 48 + 1];
    if (nparams > 48) nparams = 48;
    const int n = 2 * nparams + 1;
    stackbuf[0] = st != DUET_SUCCESS ? (int64_t)(size - rank) : 0;
    for (int i = 0; i < nparams; i++) {
        stackbuf[1 + i] = params[i];
        stackbuf[1 + nparams + i] = params[i] == INT64_MIN ? INT64_MAX : -params[i];
    }
    int err = MPI_Allreduce(stackbuf, outbuf, n, MPI_INT64_T, MPI_MAX, comm);
    if (err != MPI_SUCCESS) return dd_mpi_fail(err, func, "MPI_Allreduce of the argument check");
    if (outbuf[0] > 0) {
        const int root = (int)(size - outbuf[0]);
        agreed_error e;
        memset(&e, 0, sizeof e);
        if (rank == root) {
            e.status = (int)st;
            /* Strip "func: " so the rank can be put after the function's name. */
            const char *body = g_msg;
            size_t fl = strlen(func);
            if (strncmp(body, func, fl) == 0 && body[fl] == ':' && body[fl + 1] == ' ')
                body += fl + 2;
            snprintf(e.msg, sizeof e.msg, "%s", body);
        }
        err = MPI_Bcast(&e, (int)sizeof e, MPI_BYTE, root, comm);
        if (err != MPI_SUCCESS)
            return dd_mpi_fail(err, func, "MPI_Bcast of the failing rank's error");
        e.msg[sizeof e.msg - 1] = '\0';
        return dd_fail((duet_status)e.status, func, "rank %d: %s", root, e.msg);
    }
    for (int i = 0; i < nparams; i++) {
        const int64_t hi = outbuf[1 + i], lo = -outbuf[1 + nparams + i];
        if (hi != lo)
            return dd_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                           "%s differs between ranks (it must be the same on all ranks)", names[i]);
    }
    return DUET_SUCCESS;
}

int64_t duet_dist_numroc(int64_t n, int64_t nb, int iproc, int isrc, int nprocs)
{
    if (n <= 0 || nb <= 0 || nprocs <= 0 || iproc < 0 || iproc >= nprocs || isrc < 0 ||
        isrc >= nprocs)
        return 0;
    const int mydist = (nprocs + iproc - isrc) % nprocs;
    const int64_t nblocks = n / nb;
    int64_t num = (nblocks / nprocs) * nb;
    const int64_t extra = nblocks % nprocs;
    if (mydist < extra)
        num += nb;
    else if (mydist == extra)
        num += n % nb;
    return num;
}

/* Whether this rank's MPI takes device memory of the backend: the cuda backend and an MPI
 * that says so at run time (Open MPI's extension; other MPIs: no). */
static int mpi_takes_device_memory(void)
{
    if (strcmp(duet_backend_name(), "cuda") != 0) return 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

duet_status duet_dist_grid_create(MPI_Comm comm, int prow, int pcol, duet_context *ctx,
                                  const duet_dist_grid_options *options, duet_dist_grid **grid)
{
    static const char fn[] = "duet_dist_grid_create";
    dd_clear_error();
    if (!grid) return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "grid is NULL");
    *grid = NULL;
    if (comm == MPI_COMM_NULL)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "comm is MPI_COMM_NULL");
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "MPI is not initialised (call MPI_Init first)");
    int rank = 0, size = 0;
    int err = MPI_Comm_rank(comm, &rank);
    if (err == MPI_SUCCESS) err = MPI_Comm_size(comm, &size);
    if (err != MPI_SUCCESS) return dd_mpi_fail(err, fn, "MPI_Comm_rank/size");

    duet_status st = DUET_SUCCESS;
    const int transport = options ? (int)options->transport : 0;
    duet_stream *defstream = NULL;
    if (prow < 1 || pcol < 1)
        st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "prow (%d) and pcol (%d) must be >= 1", prow,
                     pcol);
    else if ((int64_t)prow * pcol != size)
        st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                     "prow * pcol (%d * %d) differs from the size of comm (%d)", prow, pcol, size);
    else if (transport != DUET_DIST_TRANSPORT_AUTO && transport != DUET_DIST_TRANSPORT_MPI_HOST &&
             transport != DUET_DIST_TRANSPORT_NCCL && transport != DUET_DIST_TRANSPORT_MPI_DEVICE)
        st = dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                     "options->transport (%d) is not a duet_dist_transport", transport);
    else if (transport == DUET_DIST_TRANSPORT_NCCL && !dd_have_nccl)
        st = dd_fail(DUET_ERROR_UNSUPPORTED, fn,
                     "options->transport is NCCL but this duet_dist was built without NCCL");
    else if (transport == DUET_DIST_TRANSPORT_NCCL && strcmp(duet_backend_name(), "cuda") != 0)
        st = dd_fail(DUET_ERROR_UNSUPPORTED, fn,
                     "options->transport is NCCL, which needs the cuda backend (this is %s)",
                     duet_backend_name());
    else if (!ctx)
        st = dd_fail(DUET_ERROR_INVALID_HANDLE, fn, "ctx is NULL");
    else if (duet_context_default_stream(ctx, &defstream) != DUET_SUCCESS)
        st = dd_fail(DUET_ERROR_INVALID_HANDLE, fn, "ctx is not a live context: %s",
                     duet_last_error());

    duet_dist_grid *g = NULL;
    if (st == DUET_SUCCESS) {
        g = calloc(1, sizeof *g);
        if (!g) st = dd_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "out of host memory");
    }
    if (g) {
        g->ctx = ctx;
        duet_status s2 = duet_stream_create(ctx, &g->stream);
        if (s2 == DUET_SUCCESS) s2 = duet_stream_create(ctx, &g->pack_stream);
        if (s2 == DUET_SUCCESS) s2 = duet_stream_create(ctx, &g->up_stream);
        for (int p = 0; p < 2 && s2 == DUET_SUCCESS; p++) {
            s2 = duet_event_create(ctx, &g->ev_up[p]);
            if (s2 == DUET_SUCCESS) s2 = duet_event_create(ctx, &g->ev_gemm[p]);
        }
        if (s2 == DUET_SUCCESS) s2 = duet_event_create(ctx, &g->ev_pack);
        if (s2 == DUET_SUCCESS) s2 = duet_buffer_create(ctx, 64, &g->dummy);
        if (s2 != DUET_SUCCESS) st = dd_fail_duet(s2, fn, "creating the grid's streams and events");
    }
    const int64_t params[3] = {prow, pcol, transport};
    static const char *const names[3] = {"prow", "pcol", "options->transport"};
    st = dd_agree(comm, st, params, names, 3, fn);
    if (st == DUET_SUCCESS) {
        g->rank = rank;
        g->size = size;
        g->prow = prow;
        g->pcol = pcol;
        g->myrow = rank / pcol;
        g->mycol = rank % pcol;
        g->comm = g->row_comm = g->col_comm = MPI_COMM_NULL;
        /* Row-major placement; the rank within a row communicator is the grid column (and
         * within a column communicator the grid row), so panel owners are named directly. */
        err = MPI_Comm_dup(comm, &g->comm);
        if (err == MPI_SUCCESS) err = MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
        if (err == MPI_SUCCESS) err = MPI_Comm_split(g->comm, g->myrow, g->mycol, &g->row_comm);
        if (err == MPI_SUCCESS) err = MPI_Comm_split(g->comm, g->mycol, g->myrow, &g->col_comm);
        if (err == MPI_SUCCESS) err = MPI_Comm_set_errhandler(g->row_comm, MPI_ERRORS_RETURN);
        if (err == MPI_SUCCESS) err = MPI_Comm_set_errhandler(g->col_comm, MPI_ERRORS_RETURN);
        if (err != MPI_SUCCESS) st = dd_mpi_fail(err, fn, "MPI_Comm_dup/MPI_Comm_split");
        /* Device buffers to MPI only where every rank's MPI takes them (agreed: the smallest
         * answer); asked for and not available on some rank: UNSUPPORTED on every rank. */
        int device_ok = 0;
        if (st == DUET_SUCCESS && (transport == DUET_DIST_TRANSPORT_AUTO ||
                                   transport == DUET_DIST_TRANSPORT_MPI_DEVICE)) {
            int mine = mpi_takes_device_memory();
            err = MPI_Allreduce(&mine, &device_ok, 1, MPI_INT, MPI_MIN, g->comm);
            if (err != MPI_SUCCESS) st = dd_mpi_fail(err, fn, "MPI_Allreduce");
            else if (transport == DUET_DIST_TRANSPORT_MPI_DEVICE && !device_ok)
                st = dd_fail(DUET_ERROR_UNSUPPORTED, fn,
                             "options->transport is MPI_DEVICE, but %s",
                             mine ? "the MPI of another rank does not take device memory"
                                  : strcmp(duet_backend_name(), "cuda") != 0
                                      ? "it needs the cuda backend"
                                      : "this rank's MPI does not report that it takes CUDA "
                                        "memory (MPIX_Query_cuda_support)");
        }
        g->transport = transport == DUET_DIST_TRANSPORT_NCCL ? DUET_DIST_TRANSPORT_NCCL
                       : device_ok                           ? DUET_DIST_TRANSPORT_MPI_DEVICE
                                                             : DUET_DIST_TRANSPORT_MPI_HOST;
        /* Collective (every rank has the same transport, agreed above). */
        if (st == DUET_SUCCESS && g->transport == DUET_DIST_TRANSPORT_NCCL)
            st = dd_nccl_init(g, fn);
    }
    if (st != DUET_SUCCESS) {
        if (g) {
            char keep[sizeof g_msg];
            snprintf(keep, sizeof keep, "%s", g_msg);
            duet_dist_grid_destroy(g);
            snprintf(g_msg, sizeof g_msg, "%s", keep);
        }
        return st;
    }
    *grid = g;
    return DUET_SUCCESS;
}

static void free_scratch(duet_dist_grid *g)
{
    for (int o = 0; o < 2; o++) {
        for (int p = 0; p < 2; p++) {
            if (g->host[o][p]) duet_host_free(g->ctx, g->host[o][p]);
            if (g->dev[o][p]) duet_buffer_destroy(g->dev[o][p]);
            g->host[o][p] = NULL;
            g->dev[o][p] = NULL;
        }
        if (g->stage[o]) duet_buffer_destroy(g->stage[o]);
        g->stage[o] = NULL;
        g->host_bytes[o] = g->dev_bytes[o] = g->stage_bytes[o] = 0;
    }
}

duet_status dd_reserve(duet_dist_grid *g, int operand, size_t bytes, const char *fn)
{
    if (bytes < 64) bytes = 64;
    duet_status st = DUET_SUCCESS;
    /* Pinned host panels only where panels travel through the host. */
    if (g->transport == DUET_DIST_TRANSPORT_MPI_HOST && g->host_bytes[operand] < bytes) {
        for (int p = 0; p < 2; p++) {
            if (g->host[operand][p]) duet_host_free(g->ctx, g->host[operand][p]);
            g->host[operand][p] = NULL;
        }
        g->host_bytes[operand] = 0;
        for (int p = 0; p < 2 && st == DUET_SUCCESS; p++)
            st = duet_host_alloc(g->ctx, bytes, &g->host[operand][p]);
        if (st != DUET_SUCCESS) return dd_fail_duet(st, fn, "allocating pinned panel buffers");
        g->host_bytes[operand] = bytes;
    }
    if (g->dev_bytes[operand] < bytes) {
        for (int p = 0; p < 2; p++) {
            if (g->dev[operand][p]) duet_buffer_destroy(g->dev[operand][p]);
            g->dev[operand][p] = NULL;
        }
        if (g->stage[operand]) duet_buffer_destroy(g->stage[operand]);
        g->stage[operand] = NULL;
        g->dev_bytes[operand] = 0;
        for (int p = 0; p < 2 && st == DUET_SUCCESS; p++)
            st = duet_buffer_create(g->ctx, bytes, &g->dev[operand][p]);
        /* The staging buffer of a transposing pack on the way to the host (MPI_HOST only). */
        if (st == DUET_SUCCESS && g->transport == DUET_DIST_TRANSPORT_MPI_HOST)
            st = duet_buffer_create(g->ctx, bytes, &g->stage[operand]);
        if (st != DUET_SUCCESS) return dd_fail_duet(st, fn, "allocating device panel buffers");
        g->dev_bytes[operand] = bytes;
    }
    return DUET_SUCCESS;
}

duet_status duet_dist_grid_destroy(duet_dist_grid *g)
{
    dd_clear_error();
    if (!g) return dd_fail(DUET_ERROR_INVALID_HANDLE, "duet_dist_grid_destroy", "grid is NULL");
    if (g->stream) duet_stream_synchronize(g->stream);
    if (g->up_stream) duet_stream_synchronize(g->up_stream);
    if (g->pack_stream) duet_stream_synchronize(g->pack_stream);
    free_scratch(g);
    dd_nccl_destroy(g);
    for (int p = 0; p < 2; p++) {
        if (g->ev_up[p]) duet_event_destroy(g->ev_up[p]);
        if (g->ev_gemm[p]) duet_event_destroy(g->ev_gemm[p]);
    }
    if (g->ev_pack) duet_event_destroy(g->ev_pack);
    if (g->dummy) duet_buffer_destroy(g->dummy);
    if (g->pack_stream) duet_stream_destroy(g->pack_stream);
    if (g->up_stream) duet_stream_destroy(g->up_stream);
    if (g->stream) duet_stream_destroy(g->stream);
    if (g->row_comm != MPI_COMM_NULL && g->size > 0) MPI_Comm_free(&g->row_comm);
    if (g->col_comm != MPI_COMM_NULL && g->size > 0) MPI_Comm_free(&g->col_comm);
    if (g->comm != MPI_COMM_NULL && g->size > 0) MPI_Comm_free(&g->comm);
    free(g);
    return DUET_SUCCESS;
}

duet_status duet_dist_grid_info(const duet_dist_grid *g, int *prow, int *pcol, int *myrow,
                                int *mycol)
{
    dd_clear_error();
    if (!g) return dd_fail(DUET_ERROR_INVALID_HANDLE, "duet_dist_grid_info", "grid is NULL");
    if (prow) *prow = g->prow;
    if (pcol) *pcol = g->pcol;
    if (myrow) *myrow = g->myrow;
    if (mycol) *mycol = g->mycol;
    return DUET_SUCCESS;
}

/* Checks the parts of a descriptor that do not depend on the rank. */
duet_status dd_check_desc_global(const duet_dist_grid *g, const duet_dist_desc *d, const char *name,
                                 const char *fn)
{
    if (!d) return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s is NULL", name);
    if (d->m < 0 || d->n < 0)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s.m (%lld) and %s.n (%lld) must be >= 0",
                       name, (long long)d->m, name, (long long)d->n);
    if (d->mb < 1 || d->nb < 1)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "%s.mb (%lld) and %s.nb (%lld) must be >= 1", name, (long long)d->mb, name,
                       (long long)d->nb);
    if (d->rsrc < 0 || d->rsrc >= g->prow)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s.rsrc (%d) is not a grid row (0..%d)",
                       name, d->rsrc, g->prow - 1);
    if (d->csrc < 0 || d->csrc >= g->pcol)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s.csrc (%d) is not a grid column (0..%d)",
                       name, d->csrc, g->pcol - 1);
    if (duet_dtype_size(d->dtype) == 0)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s.dtype (%d) is not a duet_dtype", name,
                       (int)d->dtype);
    if (d->layout != DUET_LAYOUT_ROW_MAJOR && d->layout != DUET_LAYOUT_COL_MAJOR)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s.layout (%d) is not a duet_layout", name,
                       (int)d->layout);
    return DUET_SUCCESS;
}

void dd_local_shape(const duet_dist_grid *g, const duet_dist_desc *d, int64_t *rows, int64_t *cols)
{
    *rows = duet_dist_numroc(d->m, d->mb, g->myrow, d->rsrc, g->prow);
    *cols = duet_dist_numroc(d->n, d->nb, g->mycol, d->csrc, g->pcol);
}

duet_status duet_dist_local_shape(const duet_dist_grid *g, const duet_dist_desc *d, int64_t *rows,
                                  int64_t *cols)
{
    static const char fn[] = "duet_dist_local_shape";
    dd_clear_error();
    if (!g) return dd_fail(DUET_ERROR_INVALID_HANDLE, fn, "grid is NULL");
    duet_status st = dd_check_desc_global(g, d, "desc", fn);
    if (st != DUET_SUCCESS) return st;
    if (!rows || !cols) return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "rows or cols is NULL");
    dd_local_shape(g, d, rows, cols);
    return DUET_SUCCESS;
}

duet_status duet_dist_locate(const duet_dist_grid *g, const duet_dist_desc *d, int64_t i, int64_t j,
                             int *owner_row, int *owner_col, int *owner_rank, int64_t *li,
                             int64_t *lj)
{
    static const char fn[] = "duet_dist_locate";
    dd_clear_error();
    if (!g) return dd_fail(DUET_ERROR_INVALID_HANDLE, fn, "grid is NULL");
    duet_status st = dd_check_desc_global(g, d, "desc", fn);
    if (st != DUET_SUCCESS) return st;
    if (i < 0 || i >= d->m || j < 0 || j >= d->n)
        return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "(%lld, %lld) is outside the %lld x %lld matrix", (long long)i, (long long)j,
                       (long long)d->m, (long long)d->n);
    const int r = (int)((i / d->mb + d->rsrc) % g->prow);
    const int c = (int)((j / d->nb + d->csrc) % g->pcol);
    if (owner_row) *owner_row = r;
    if (owner_col) *owner_col = c;
    if (owner_rank) *owner_rank = r * g->pcol + c;
    if (li) *li = (i / d->mb / g->prow) * d->mb + i % d->mb;
    if (lj) *lj = (j / d->nb / g->pcol) * d->nb + j % d->nb;
    return DUET_SUCCESS;
}

duet_status duet_dist_grid_transport(const duet_dist_grid *grid, duet_dist_transport *transport)
{
    static const char fn[] = "duet_dist_grid_transport";
    dd_clear_error();
    if (!grid) return dd_fail(DUET_ERROR_INVALID_HANDLE, fn, "grid is NULL");
    if (!transport) return dd_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "transport is NULL");
    *transport = (duet_dist_transport)grid->transport;
    return DUET_SUCCESS;
}

const char *duet_dist_transport_name(duet_dist_transport transport)
{
    switch (transport) {
    case DUET_DIST_TRANSPORT_MPI_HOST: return "mpi-host";
    case DUET_DIST_TRANSPORT_MPI_DEVICE: return "mpi-device";
    case DUET_DIST_TRANSPORT_NCCL: return "nccl";
    default: return "unknown";
    }
}
