/* dist_internal.h - the grid's state and helpers shared by duet_dist's sources. */
#ifndef DUET_DIST_INTERNAL_H
#define DUET_DIST_INTERNAL_H

#include <duet/duet_dist.h>

#include <stddef.h>
#include <stdint.h>

enum { DD_A = 0, DD_B = 1 };

struct duet_dist_grid {
    MPI_Comm comm;     /* a duplicate of the caller's communicator                       */
    MPI_Comm row_comm; /* this rank's grid row; rank there = grid column                */
    MPI_Comm col_comm; /* this rank's grid column; rank there = grid row                */
    int rank, size, prow, pcol, myrow, mycol;
    duet_context *ctx;
    duet_stream *stream;      /* panel uploads and the local GEMMs, in order          */
    duet_stream *pack_stream; /* an owner's packing and download of its next panel    */
    duet_stream *up_stream;   /* MPI_HOST: uploads of received panels, beside the GEMMs */
    duet_event *ev_up[2];     /* MPI: after the upload from host[.][parity]; NCCL: after
                                 the broadcast into dev[.][parity]                     */
    duet_event *ev_gemm[2];   /* after the GEMM that read dev[.][parity]                */
    duet_event *ev_pack;      /* MPI_HOST: after an owner's download of a panel          */
    int ev_up_recorded[2];
    duet_buffer *dummy;       /* operands of the K == 0 local GEMM (never read)        */
    /* Panel buffers, kept between calls and grown on demand: [operand][parity]. */
    void *host[2][2];
    duet_buffer *dev[2][2];
    duet_buffer *stage[2];
    size_t host_bytes[2], dev_bytes[2], stage_bytes[2];
    int transport;            /* DUET_DIST_TRANSPORT_MPI_HOST or _NCCL                  */
    void *nccl_row, *nccl_col; /* ncclComm_t of the grid row and column (NCCL only)    */
};

void dd_clear_error(void);
duet_status dd_fail(duet_status st, const char *func, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Fails with the message of the duet call that just failed. */
duet_status dd_fail_duet(duet_status st, const char *func, const char *what);
duet_status dd_mpi_fail(int err, const char *func, const char *what);

/* The collective agreement: every rank passes its own status (its message already set) and the
 * values that must be the same on all ranks; every rank gets the status of the lowest failing
 * rank with its message ("func: rank R: ..."), or INVALID_ARGUMENT naming a value that differs
 * between ranks, or DUET_SUCCESS. At most 48 values. */
duet_status dd_agree(MPI_Comm comm, duet_status st, const int64_t *params,
                     const char *const *names, int nparams, const char *func);

duet_status dd_check_desc_global(const duet_dist_grid *g, const duet_dist_desc *d,
                                 const char *name, const char *fn);
void dd_local_shape(const duet_dist_grid *g, const duet_dist_desc *d, int64_t *rows,
                    int64_t *cols);
/* Makes the grid's panel buffers of operand hold at least bytes (both parities): the device
 * buffers, and with the MPI_HOST transport the pinned host buffers and the staging buffer. */
duet_status dd_reserve(duet_dist_grid *g, int operand, size_t bytes, const char *fn);

/* NCCL transport (dist_nccl.c; stubs returning UNSUPPORTED where duet_dist has no NCCL). */
extern const int dd_have_nccl;
/* Creates the row and column NCCL communicators of g (collective over g->comm); a local
 * failure is recorded in the returned status after every rank has taken its part. */
duet_status dd_nccl_init(duet_dist_grid *g, const char *fn);
void dd_nccl_destroy(duet_dist_grid *g);
/* Broadcasts bytes_a of dev_a from grid column root_a along the grid row and bytes_b of dev_b
 * from grid row root_b along the grid column, in place, queued on stream. */
duet_status dd_nccl_bcast(duet_dist_grid *g, duet_buffer *dev_a, size_t off_a, size_t bytes_a,
                          int root_a, duet_buffer *dev_b, size_t off_b, size_t bytes_b,
                          int root_b, duet_stream *stream, const char *fn);
/* Makes stream wait for the last record of event (no host wait). */
duet_status dd_stream_wait_event(duet_stream *stream, duet_event *event, const char *fn);

#endif /* DUET_DIST_INTERNAL_H */
