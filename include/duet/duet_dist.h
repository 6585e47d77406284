/* duet_dist.h - distributed GEMM over MPI: a 2D process grid, 2D block-cyclic matrices, SUMMA. */
#ifndef DUET_DIST_H
#define DUET_DIST_H

/* The optional library part duet_dist (CMake target duet::dist), built when CMake finds MPI.
 * Each MPI rank holds its local pieces of the matrices in duet buffers of its own context, so
 * the local GEMMs run on the rank's backend (the host with the cpu backend, its GPU with cuda
 * or hip). docs/dist.md describes the layout, the algorithm and how to build and run it.
 *
 * Collective calls: duet_dist_grid_create, duet_dist_grid_destroy and duet_dist_gemm are
 * collective over the grid's communicator: every rank calls them, in the same order. Each
 * rank validates its own arguments, then the ranks agree on one status (an MPI_Allreduce
 * before any data moves), so a bad argument on one rank makes every rank return the same
 * status and the same message (naming the function, the argument and the failing rank)
 * instead of hanging in a broadcast. */

#include <duet/duet.h>
#include <mpi.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(DUET_DIST_SHARED)
#ifdef DUET_DIST_BUILDING
#define DUET_DIST_API __declspec(dllexport)
#else
#define DUET_DIST_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define DUET_DIST_API __attribute__((visibility("default")))
#else
#define DUET_DIST_API
#endif

/* ------------------------------------------------------------------------------------------ */
/* Process grid                                                                                */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet_dist_grid duet_dist_grid;

/* How panels travel between ranks. */
typedef enum duet_dist_transport {
    DUET_DIST_TRANSPORT_AUTO = 0,     /* MPI_DEVICE where every rank's MPI takes device
                                         memory, else MPI_HOST (NCCL only when asked for)     */
    DUET_DIST_TRANSPORT_MPI_HOST = 1, /* MPI_Ibcast on pinned host copies of the panels       */
    DUET_DIST_TRANSPORT_NCCL = 2,     /* ncclBroadcast on device buffers, stream-ordered: the
                                         cuda backend, a duet_dist built with NCCL            */
    DUET_DIST_TRANSPORT_MPI_DEVICE = 3 /* MPI_Ibcast on the device panel buffers, no host
                                         staging: the cuda backend and an MPI that reports at
                                         run time that it takes CUDA memory on every rank
                                         (Open MPI's MPIX_Query_cuda_support)                 */
} duet_dist_transport;

/* Zero-initialise ({0}) for the defaults; NULL means defaults. */
typedef struct duet_dist_grid_options {
    duet_dist_transport transport;
} duet_dist_grid_options;

/* A prow x pcol grid over the ranks of comm (prow * pcol must equal its size). Ranks are placed
 * in row-major order: rank r of comm is grid process (r / pcol, r % pcol). The grid duplicates
 * comm (and splits the copy into one communicator per grid row and per grid column), so the
 * caller's traffic on comm never mixes with duet's. ctx is this rank's context: every local
 * matrix given to the grid's calls lives in buffers of ctx, and the grid's local GEMMs run on
 * a stream of ctx that the grid creates. The grid keeps its panel buffers (pinned host and
 * device memory) between calls and grows them when a call needs more.
 * Must be identical on all ranks: prow, pcol, options->transport. ctx is each rank's own.
 * Statuses: INVALID_ARGUMENT (comm null, prow or pcol < 1, prow * pcol != size, values that
 * differ between ranks), INVALID_HANDLE (ctx), UNSUPPORTED (NCCL asked for where this build
 * or backend has none; MPI_DEVICE asked for where some rank's MPI does not take device memory
 * or the backend is not cuda), BACKEND (an MPI or NCCL call failed). Collective. */
DUET_DIST_API duet_status duet_dist_grid_create(MPI_Comm comm, int prow, int pcol,
                                                duet_context *ctx,
                                                const duet_dist_grid_options *options,
                                                duet_dist_grid **grid);
/* Releases the grid's communicators, stream and panel buffers. Collective (MPI_Comm_free). */
DUET_DIST_API duet_status duet_dist_grid_destroy(duet_dist_grid *grid);

/* The transport the grid's panels take (never AUTO: what AUTO chose), the same on every rank. */
DUET_DIST_API duet_status duet_dist_grid_transport(const duet_dist_grid *grid,
                                                   duet_dist_transport *transport);
/* "mpi-host", "mpi-device", "nccl" (or "unknown"). */
DUET_DIST_API const char *duet_dist_transport_name(duet_dist_transport transport);

/* This rank's place: grid row and column, and the grid's shape (any pointer may be NULL). */
DUET_DIST_API duet_status duet_dist_grid_info(const duet_dist_grid *grid, int *prow, int *pcol,
                                              int *myrow, int *mycol);

/* ------------------------------------------------------------------------------------------ */
/* 2D block-cyclic matrices (the ScaLAPACK layout)                                            */
/* ------------------------------------------------------------------------------------------ */

/* A global m x n matrix cut into mb x nb blocks; block (I, J) lives on grid process
 * ((rsrc + I) % prow, (csrc + J) % pcol). Each rank stores its blocks, in order, as one local
 * matrix of duet_dist_numroc(m, mb, myrow, rsrc, prow) rows and
 * duet_dist_numroc(n, nb, mycol, csrc, pcol) columns, in the layout given, with leading
 * dimension lld, starting at element offset of its buffer. Global element (i, j) (0-based) is
 * local element (li, lj) with li = (i / mb / prow) * mb + i % mb and lj = (j / nb / pcol) * nb +
 * j % nb on the process that owns its block (duet_dist_locate computes both).
 * Must be identical on all ranks: m, n, mb, nb, rsrc, csrc, dtype. Each rank's own: lld,
 * layout, offset (lld >= max(1, local rows) column-major, >= max(1, local cols) row-major). */
typedef struct duet_dist_desc {
    int64_t m, n;        /* global rows and columns                                      */
    int64_t mb, nb;      /* block rows and columns (>= 1; need not divide m, n)          */
    int rsrc, csrc;      /* grid row and column holding the first block                  */
    int64_t lld;         /* local leading dimension (elements)                           */
    duet_dtype dtype;
    duet_layout layout;  /* of the local matrix                                          */
    size_t offset;       /* elements from the start of the local buffer                  */
} duet_dist_desc;

/* ScaLAPACK's NUMROC: how many of n indices, dealt in blocks of nb starting at process isrc,
 * fall on process iproc of nprocs. 0 for invalid arguments. */
DUET_DIST_API int64_t duet_dist_numroc(int64_t n, int64_t nb, int iproc, int isrc, int nprocs);

/* The local shape of desc on this rank. */
DUET_DIST_API duet_status duet_dist_local_shape(const duet_dist_grid *grid,
                                                const duet_dist_desc *desc, int64_t *rows,
                                                int64_t *cols);

/* Where global (i, j) lives: the owner's grid row and column, its rank in the grid's
 * communicator (row-major), and the local indices there. Any output may be NULL. */
DUET_DIST_API duet_status duet_dist_locate(const duet_dist_grid *grid, const duet_dist_desc *desc,
                                           int64_t i, int64_t j, int *owner_row,
                                           int *owner_col, int *owner_rank, int64_t *li,
                                           int64_t *lj);

/* ------------------------------------------------------------------------------------------ */
/* GEMM                                                                                        */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet_dist_gemm_options {
    duet_math_mode math; /* passed to each local duet_gemm (f32 only)                     */
} duet_dist_gemm_options;

/* C = alpha * op(A) * op(B) + beta * C over the grid, with duet_gemm's BLAS semantics (beta 0
 * never reads C, alpha 0 never reads A or B, K 0 gives beta * C) and dtypes (its table), except
 * that C must not be f16 or bf16 (each k panel's product would be rounded into C:
 * DUET_ERROR_UNSUPPORTED; take an f32 C). op(A) is M x K, op(B) is K x N, C is M x N; the local
 * matrices are in buffers of the grid's context (a, b, c); C must not be in A's or B's buffer.
 * No batches. The grid reads and writes them on its own streams: work that writes them
 * must be complete (synchronized) before the call. Returns when C is complete on this rank.
 *
 * A 1 x 1 grid runs one local duet_gemm of the whole matrices. Otherwise SUMMA: when A's rows
 * are dealt like C's (op_a N, a->mb == c->mb, a->rsrc == c->rsrc) and
 * B's columns like C's (op_b N, b->nb == c->nb, b->csrc == c->csrc), the k panels go
 * straight from A and B; otherwise the operand is first moved (one MPI_Alltoallv through host
 * memory) into a temporary distributed matrix that is, transposed when its op is T. Then, for
 * each k panel in increasing order, its owners broadcast A's panel along grid rows and B's along
 * grid columns (MPI_Ibcast, host-staged, or ncclBroadcast with the NCCL transport) and each
 * rank adds the panel product to its local C with duet_gemm; the broadcast of panel k + 1 is in
 * flight during the GEMM of panel k.
 * Results are the same run to run (fixed panel order, no cross-rank floating-point sums).
 *
 * Must be identical on all ranks: op_a, op_b, alpha, beta, and each descriptor's m, n, mb, nb,
 * rsrc, csrc, dtype; options->math. Each rank's own: the buffers and each descriptor's lld,
 * layout and offset. Statuses: duet_gemm's, agreed between ranks before any data moves; BACKEND
 * when an MPI or NCCL call fails. Collective over the grid (a NULL grid is the one local
 * return: INVALID_HANDLE). */
DUET_DIST_API duet_status duet_dist_gemm(duet_dist_grid *grid, duet_op op_a, duet_op op_b,
                                         double alpha, const duet_dist_desc *desc_a,
                                         duet_buffer *a, const duet_dist_desc *desc_b,
                                         duet_buffer *b, double beta,
                                         const duet_dist_desc *desc_c, duet_buffer *c,
                                         const duet_dist_gemm_options *options);

/* The message of the last failing duet_dist call on this thread (the same on every rank for a
 * collective call), e.g. "duet_dist_gemm: rank 2: desc_a.lld (3) is smaller than the local
 * rows of A (5)". Empty when the last duet_dist call on this thread succeeded. */
DUET_DIST_API const char *duet_dist_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DUET_DIST_H */
