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
    duet_event *ev_up[2];     /* recorded after the upload from host[.][parity]        */
    int ev_up_recorded[2];
    duet_buffer *dummy;       /* operands of the K == 0 local GEMM (never read)        */
    /* Panel buffers, kept between calls and grown on demand: [operand][parity]. */
    void *host[2][2];
    duet_buffer *dev[2][2];
    duet_buffer *stage[2];
    size_t host_bytes[2], dev_bytes[2], stage_bytes[2];
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
/* Makes the grid's panel buffers of operand hold at least bytes (both parities). */
duet_status dd_reserve(duet_dist_grid *g, int operand, size_t bytes, const char *fn);

#endif /* DUET_DIST_INTERNAL_H */
