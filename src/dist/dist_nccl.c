/* dist_nccl.c - duet_dist's NCCL transport: row and column communicators, device panel broadcasts.
 */
#include "dist_internal.h"

#ifdef DUET_DIST_HAVE_NCCL

#include <cuda_runtime.h>
#include <nccl.h>

#include <string.h>

const int dd_have_nccl = 1;

static duet_status nccl_fail(ncclResult_t r, const char *fn, const char *what)
{
    return dd_fail(DUET_ERROR_BACKEND, fn, "%s failed: %s", what, ncclGetErrorString(r));
}

/* One communicator over sub (the grid row or column), its NCCL rank = its rank in sub. */
static duet_status init_one(MPI_Comm sub, ncclComm_t *comm, duet_status st, const char *fn)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(sub, &rank);
    MPI_Comm_size(sub, &size);
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess && st == DUET_SUCCESS) st = nccl_fail(r, fn, "ncclGetUniqueId");
    }
    int err = MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, sub);
    if (err != MPI_SUCCESS && st == DUET_SUCCESS)
        st = dd_mpi_fail(err, fn, "MPI_Bcast of the NCCL id");
    ncclResult_t r = ncclCommInitRank(comm, size, id, rank);
    if (r != ncclSuccess) {
        *comm = NULL;
        if (st == DUET_SUCCESS) st = nccl_fail(r, fn, "ncclCommInitRank");
    }
    return st;
}

duet_status dd_nccl_init(duet_dist_grid *g, const char *fn)
{
    /* NCCL takes the current device: make it the context's (found from one of its buffers). */
    duet_status st = DUET_SUCCESS;
    void *p = NULL;
    struct cudaPointerAttributes attr;
    memset(&attr, 0, sizeof attr);
    if (duet_buffer_device_ptr(g->dummy, 0, &p) != DUET_SUCCESS)
        st = dd_fail_duet(DUET_ERROR_BACKEND, fn, "duet_buffer_device_ptr");
    else if (cudaPointerGetAttributes(&attr, p) != cudaSuccess ||
             cudaSetDevice(attr.device) != cudaSuccess)
        st = dd_fail(DUET_ERROR_BACKEND, fn, "finding the context's CUDA device failed");
    /* Agree before the NCCL initialisations, which wait for every member. */
    st = dd_agree(g->comm, st, NULL, NULL, 0, fn);
    if (st != DUET_SUCCESS) return st;
    ncclComm_t row = NULL, col = NULL;
    /* Every rank initialises its row's communicator, then its column's: the same order
     * everywhere, so no two groups wait on each other. */
    st = init_one(g->row_comm, &row, st, fn);
    st = init_one(g->col_comm, &col, st, fn);
    g->nccl_row = row;
    g->nccl_col = col;
    return dd_agree(g->comm, st, NULL, NULL, 0, fn);
}

void dd_nccl_destroy(duet_dist_grid *g)
{
    if (g->nccl_row) ncclCommDestroy((ncclComm_t)g->nccl_row);
    if (g->nccl_col) ncclCommDestroy((ncclComm_t)g->nccl_col);
    g->nccl_row = g->nccl_col = NULL;
}

static duet_status device_ptr(duet_buffer *buf, void **p, const char *fn)
{
    duet_status st = duet_buffer_device_ptr(buf, 0, p);
    return st == DUET_SUCCESS ? st : dd_fail_duet(st, fn, "duet_buffer_device_ptr");
}

duet_status dd_nccl_bcast(duet_dist_grid *g, duet_buffer *dev_a, size_t off_a, size_t bytes_a,
                          int root_a, duet_buffer *dev_b, size_t off_b, size_t bytes_b,
                          int root_b, duet_stream *stream, const char *fn)
{
    void *native = NULL, *pa = NULL, *pb = NULL;
    duet_status st = duet_stream_native(stream, &native);
    if (st != DUET_SUCCESS) return dd_fail_duet(st, fn, "duet_stream_native");
    st = device_ptr(dev_a, &pa, fn);
    if (st == DUET_SUCCESS) st = device_ptr(dev_b, &pb, fn);
    if (st != DUET_SUCCESS) return st;
    pa = (unsigned char *)pa + off_a;
    pb = (unsigned char *)pb + off_b;
    /* One group: both broadcasts are issued together, in the same order on every rank. */
    ncclResult_t r = ncclGroupStart();
    if (r == ncclSuccess)
        r = ncclBroadcast(pa, pa, bytes_a, ncclChar, root_a, (ncclComm_t)g->nccl_row,
                          (cudaStream_t)native);
    if (r == ncclSuccess)
        r = ncclBroadcast(pb, pb, bytes_b, ncclChar, root_b, (ncclComm_t)g->nccl_col,
                          (cudaStream_t)native);
    ncclResult_t r2 = ncclGroupEnd();
    if (r == ncclSuccess) r = r2;
    return r == ncclSuccess ? DUET_SUCCESS : nccl_fail(r, fn, "ncclBroadcast");
}

duet_status dd_stream_wait_event(duet_stream *stream, duet_event *event, const char *fn)
{
    void *s = NULL, *e = NULL;
    duet_status st = duet_stream_native(stream, &s);
    if (st == DUET_SUCCESS) st = duet_event_native(event, &e);
    if (st != DUET_SUCCESS) return dd_fail_duet(st, fn, "duet_stream_native/duet_event_native");
    cudaError_t ce = cudaStreamWaitEvent((cudaStream_t)s, (cudaEvent_t)e, 0);
    if (ce != cudaSuccess)
        return dd_fail(DUET_ERROR_BACKEND, fn, "cudaStreamWaitEvent failed: %s",
                       cudaGetErrorString(ce));
    return DUET_SUCCESS;
}

#else /* !DUET_DIST_HAVE_NCCL */

const int dd_have_nccl = 0;

duet_status dd_nccl_init(duet_dist_grid *g, const char *fn)
{
    (void)g;
    return dd_fail(DUET_ERROR_UNSUPPORTED, fn, "this duet_dist was built without NCCL");
}

void dd_nccl_destroy(duet_dist_grid *g) { (void)g; }

duet_status dd_nccl_bcast(duet_dist_grid *g, duet_buffer *dev_a, size_t off_a, size_t bytes_a,
                          int root_a, duet_buffer *dev_b, size_t off_b, size_t bytes_b,
                          int root_b, duet_stream *stream, const char *fn)
{
    (void)g, (void)dev_a, (void)off_a, (void)bytes_a, (void)root_a, (void)dev_b, (void)off_b;
    (void)bytes_b, (void)root_b;
    (void)stream;
    return dd_fail(DUET_ERROR_UNSUPPORTED, fn, "this duet_dist was built without NCCL");
}

duet_status dd_stream_wait_event(duet_stream *stream, duet_event *event, const char *fn)
{
    (void)stream, (void)event;
    return dd_fail(DUET_ERROR_UNSUPPORTED, fn, "this duet_dist was built without NCCL");
}

#endif /* DUET_DIST_HAVE_NCCL */
