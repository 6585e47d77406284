/* dist_bench.c - times duet_dist_gemm on all ranks of MPI_COMM_WORLD (one rank per device). */
#define _POSIX_C_SOURCE 200809L /* isatty */
#include <duet/duet_dist.h>

#include "bench_pattern.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if !defined(_WIN32)
#include <unistd.h>
#endif

/* Usage: mpiexec -np P dist-bench [--dtype f64|f32|bf16] [--n N] [--block B] [--iters I]
 *                                 [--warmup W] [--grid PxQ] [--nccl] [--transport T]
 *                                 [--no-baseline] [--progress]
 * C (N x N, f64 or f32; f32 for bf16) = A (N x N) * B (N x N), all column-major, B x B blocks.
 * Rank r takes device r % count. Prints one line on rank 0:
 *   dist-bench: ranks P grid PxQ dtype D transport mpi-host|mpi-device|nccl n N block B
 *               time_s T tflops F
 *               gemm_time_s G gemm_tflops_x_p R efficiency E check ok
 * where T is the median over the iterations of the slowest rank's time; G is the same for one
 * duet_gemm per rank of the rank's share of the work as one problem (its rows of C by its
 * columns of C by N), run in the same process after the distributed one, so R is what P
 * devices give at one device's duet_gemm speed and E = G / T is the efficiency the scaling
 * is judged by. A and B hold values in [-0.5, 0.5) from a hash of each element's global
 * position (never zero; exact in the dtype), generated on each rank for its local elements and
 * uploaded in pieces (the baseline's operands likewise, from their local positions); after the
 * timed runs 16 elements of C, spread over the ranks, are checked against a long-double sum of
 * the same values: the line ends "check ok", or the bench fails (exit 1). */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec -np P dist-bench [--dtype f64|f32|bf16] [--n N] [--block B]\n"
            "                                [--iters I] [--warmup W] [--grid PxQ] [--nccl]\n"
            "                                [--transport T] [--no-baseline] [--progress]\n"
            "\n"
            "Times duet_dist_gemm, C = A B of N x N column-major matrices in B x B blocks over a\n"
            "P x Q grid of the ranks (one rank per device, rank r on device r %% count), and\n"
            "prints one line on rank 0: the median over I iterations (after W untimed ones) of\n"
            "the slowest rank's time, the rate, and the same for one duet_gemm per rank of\n"
            "its share of the work, with the efficiency of the distributed run against it.\n"
            "\n"
            "  --dtype D   f64 (default), f32, bf16 (f32 C)\n"
            "  --n N       matrix order (default 8192)\n"
            "  --block B   block edge (default 512)\n"
            "  --iters I   timed iterations (default 5); --warmup W untimed first (default 1)\n"
            "  --grid PxQ  the process grid, P * Q = ranks (default: the squarest)\n"
            "  --nccl      the NCCL transport (the same as --transport nccl)\n"
            "  --transport T  auto (default: MPI on device buffers where every rank's MPI takes\n"
            "              them, else host-staged), mpi-host, mpi-device or nccl; the line\n"
            "              names the transport the grid took\n"
            "  --no-baseline  no baseline: by default one duet_gemm per rank of its share of\n"
            "              the work (its rows x its columns of C x N) is timed the same way,\n"
            "              giving gemm_tflops_x_p (P devices at one device's duet_gemm speed)\n"
            "              and efficiency = that time / the distributed time\n"
            "  --progress  a line on rank 0's stderr per iteration (default: when its stderr is a\n"
            "              terminal)\n"
            "\n"
            "A and B hold a hashed pattern of their elements' positions; after the timed runs\n"
            "16 elements of C are checked against a long-double sum (the line ends \"check ok\").\n"
            "\n"
            "exit status: 0 done, 1 a call failed or a checked element of C is wrong, 2 bad\n"
            "usage.\n");
}

/* An option's integer value in [lo, hi]; else one line on rank 0's stderr and 0. */
static int int_value(int rank, const char *opt, const char *v, long long lo, long long hi,
                     long long *out)
{
    char *end = NULL;
    errno = 0;
    const long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || x < lo || x > hi) {
        if (rank == 0) {
            if (!v) fprintf(stderr, "dist-bench: %s needs a value (dist-bench --help)\n", opt);
            else
                fprintf(stderr, "dist-bench: %s %s: want an integer in %lld..%lld\n", opt, v,
                        lo, hi);
        }
        return 0;
    }
    *out = x;
    return 1;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static duet_status fill(duet_buffer *buf, duet_dtype dt, int64_t elems, double v)
{
    if (elems == 0) return DUET_SUCCESS;
    duet_matrix m = duet_matrix_make(buf, dt, DUET_LAYOUT_COL_MAJOR, elems, 1);
    return duet_fill(NULL, v, &m, NULL);
}

/* The value of element (i, j) of operand `which` (0: A, 1: B): a hash of the position, 24 bits
 * in [-0.5, 0.5) and never 0, rounded to bf16 (to nearest even) for a bf16 operand so that the
 * host's reference uses the stored value. */
static double pattern(int which, int64_t i, int64_t j, duet_dtype dt)
{
    const double v = bench_pattern_24(bench_pattern_hash(which, i, j));
    return dt == DUET_DTYPE_BF16 ? bench_round_bf16(v) : v;
}

/* Global index of local index l along a dimension of nb-blocks over nprocs processes. */
static int64_t local_to_global(int64_t l, int64_t nb, int iproc, int isrc, int nprocs)
{
    const int dist = (nprocs + iproc - isrc) % nprocs;
    return ((l / nb) * nprocs + dist) * nb + l % nb;
}

/* Writes operand `which`'s pattern into buf, a column-major rows x cols local matrix (ld rows)
 * whose local (li, lj) is global (row_of(li), col_of(lj)): with desc the block-cyclic map of
 * this rank (myrow, mycol), without it the identity (the baseline's operands). */
static duet_status fill_pattern(duet_buffer *buf, duet_dtype dt, int which, int64_t rows,
                                int64_t cols, const duet_dist_desc *desc, int myrow, int mycol,
                                int prow, int pcol)
{
    enum { PIECE = 1 << 22 };
    const size_t es = duet_dtype_size(dt);
    if (rows == 0 || cols == 0) return DUET_SUCCESS;
    unsigned char *h = malloc((size_t)PIECE * es);
    if (!h) return DUET_ERROR_OUT_OF_MEMORY;
    duet_status st = DUET_SUCCESS;
    const int64_t total = rows * cols;
    for (int64_t first = 0; first < total && st == DUET_SUCCESS; first += PIECE) {
        const int64_t cnt = total - first < PIECE ? total - first : PIECE;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
        for (int64_t e = 0; e < cnt; e++) {
            const int64_t li = (first + e) % rows, lj = (first + e) / rows;
            const int64_t gi = desc ? local_to_global(li, desc->mb, myrow, desc->rsrc, prow) : li;
            const int64_t gj = desc ? local_to_global(lj, desc->nb, mycol, desc->csrc, pcol) : lj;
            const double v = pattern(which, gi, gj, dt);
            if (dt == DUET_DTYPE_F64) {
                memcpy(h + e * es, &v, 8);
            } else {
                const float f = (float)v;
                uint32_t u;
                memcpy(&u, &f, 4);
                if (dt == DUET_DTYPE_F32) {
                    memcpy(h + e * es, &u, 4);
                } else {
                    const uint16_t hi = (uint16_t)(u >> 16); /* exact: pattern rounded it */
                    memcpy(h + e * es, &hi, 2);
                }
            }
        }
        st = duet_buffer_write(NULL, buf, (size_t)first * es, h, (size_t)cnt * es);
    }
    free(h);
    return st;
}

/* Checks 16 elements of C = A B (n x n, beta 0) spread over the matrix: each owner reads its
 * element and compares it with a long-double sum of the pattern's products, within the
 * accumulation's bound (2 n + 4) u sum |a b| (u: 2^-53 for f64, 2^-24 for f32 accumulation).
 * Returns the number of bad elements over all ranks (the same on every rank). */
static int check_c(const duet_dist_grid *grid, const duet_dist_desc *dc, duet_buffer *c,
                   duet_dtype ab, int64_t n, int rank)
{
    int bad = 0;
    const double u = ab == DUET_DTYPE_F64 ? 0x1p-53 : 0x1p-24;
    for (int q = 0; q < 16; q++) {
        int64_t i, j;
        bench_sample(q, n, &i, &j);
        int owner = -1;
        int64_t li = 0, lj = 0;
        if (duet_dist_locate(grid, dc, i, j, NULL, NULL, &owner, &li, &lj) != DUET_SUCCESS ||
            owner != rank)
            continue;
        const size_t cs = duet_dtype_size(dc->dtype);
        unsigned char raw[8];
        if (duet_buffer_read(NULL, c, (size_t)(lj * dc->lld + li) * cs, raw, cs) != DUET_SUCCESS) {
            bad++;
            continue;
        }
        double got;
        if (dc->dtype == DUET_DTYPE_F64) {
            memcpy(&got, raw, 8);
        } else {
            float f;
            memcpy(&f, raw, 4);
            got = f;
        }
        long double ref = 0.0L, mag = 0.0L;
        for (int64_t k = 0; k < n; k++) {
            const long double p = (long double)pattern(0, i, k, ab) * pattern(1, k, j, ab);
            ref += p;
            mag += p < 0 ? -p : p;
        }
        const double bound = (double)((2.0L * n + 4) * u * mag) + 1e-300;
        if (!(fabs(got - (double)ref) <= bound)) {
            if (bad < 4)
                fprintf(stderr,
                        "dist-bench: rank %d: C(%lld, %lld) = %.17g, want %.17g (bound %.3g)\n",
                        rank, (long long)i, (long long)j, got, (double)ref, bound);
            bad++;
        }
    }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* line-buffered: the result line shows when it is printed, also through a pipe */
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t n = 8192, block = 512;
    int iters = 5, warmup = 1, prow = 0, pcol = 0, progress = 0, bad = 0, baseline = 1;
    const char *dtname = "f64";
    duet_dist_grid_options go;
    memset(&go, 0, sizeof go);
#if !defined(_WIN32)
    progress = isatty(2);
#endif
    /* One branch per option; a bad option or value is one line on rank 0's stderr, exit 2. */
    for (int i = 1; i < argc && !bad; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0) usage(stdout);
            MPI_Finalize();
            return 0;
        } else if (!strcmp(a, "--version")) {
            if (rank == 0) printf("dist-bench %s\n", duet_version_string());
            MPI_Finalize();
            return 0;
        } else if (!strcmp(a, "--dtype")) {
            if (!v || (strcmp(v, "f64") && strcmp(v, "f32") && strcmp(v, "bf16"))) {
                if (rank == 0)
                    fprintf(stderr, "dist-bench: unknown dtype '%s' for --dtype (f64, f32, bf16)\n",
                            v ? v : "");
                bad = 1;
            }
            dtname = v;
            i++;
        } else if (!strcmp(a, "--n")) {
            bad = !int_value(rank, a, v, 1, INT32_MAX, &x);
            n = x;
            i++;
        } else if (!strcmp(a, "--block")) {
            bad = !int_value(rank, a, v, 1, INT32_MAX, &x);
            block = x;
            i++;
        } else if (!strcmp(a, "--iters")) {
            bad = !int_value(rank, a, v, 1, 1000000, &x);
            iters = (int)x;
            i++;
        } else if (!strcmp(a, "--warmup")) {
            bad = !int_value(rank, a, v, 0, 1000000, &x);
            warmup = (int)x;
            i++;
        } else if (!strcmp(a, "--nccl")) {
            go.transport = DUET_DIST_TRANSPORT_NCCL;
        } else if (!strcmp(a, "--transport")) {
            static const struct {
                const char *name;
                duet_dist_transport t;
            } names[] = {{"auto", DUET_DIST_TRANSPORT_AUTO},
                         {"mpi-host", DUET_DIST_TRANSPORT_MPI_HOST},
                         {"mpi-device", DUET_DIST_TRANSPORT_MPI_DEVICE},
                         {"nccl", DUET_DIST_TRANSPORT_NCCL}};
            int found = 0;
            for (size_t t = 0; t < sizeof names / sizeof names[0] && v; t++)
                if (!strcmp(v, names[t].name)) {
                    go.transport = names[t].t;
                    found = 1;
                }
            if (!found) {
                if (rank == 0)
                    fprintf(stderr, "dist-bench: unknown transport '%s' for --transport (auto, "
                                    "mpi-host, mpi-device, nccl)\n",
                            v ? v : "");
                bad = 1;
            }
            i++;
        } else if (!strcmp(a, "--grid")) {
            char tail = 0;
            if (!v || sscanf(v, "%dx%d%c", &prow, &pcol, &tail) != 2 || prow < 1 || pcol < 1 ||
                prow * pcol != size) {
                if (rank == 0)
                    fprintf(stderr, "dist-bench: --grid %s: want PxQ with P * Q = %d, the ranks of "
                                    "this run\n",
                            v ? v : "", size);
                bad = 1;
            }
            i++;
        } else if (!strcmp(a, "--no-baseline")) {
            baseline = 0;
        } else if (!strcmp(a, "--progress")) {
            progress = 1;
        } else {
            if (rank == 0)
                fprintf(stderr, "dist-bench: unknown option '%s' (dist-bench --help lists them)\n",
                        a);
            bad = 1;
        }
    }
    if (bad) {
        MPI_Finalize();
        return 2;
    }
    duet_dtype ab = DUET_DTYPE_F64, cdt = DUET_DTYPE_F64;
    if (!strcmp(dtname, "f32")) {
        ab = cdt = DUET_DTYPE_F32;
    } else if (!strcmp(dtname, "bf16")) {
        ab = DUET_DTYPE_BF16;
        cdt = DUET_DTYPE_F32;
    }
    if (prow * pcol != size) {
        /* The squarest grid: prow the largest divisor of size not above its square root. */
        prow = 1;
        for (int p = 1; p * p <= size; p++)
            if (size % p == 0) prow = p;
        pcol = size / prow;
    }
    iters = iters < 1 ? 1 : iters;

    int count = 0;
    duet_context *ctx = NULL;
    duet_dist_grid *grid = NULL;
    duet_status st = duet_device_count(&count);
    if (st == DUET_SUCCESS) st = duet_context_create(rank % count, &ctx);
    if (st != DUET_SUCCESS) {
        fprintf(stderr, "dist-bench: rank %d: %s\n", rank, duet_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    st = duet_dist_grid_create(MPI_COMM_WORLD, prow, pcol, ctx, &go, &grid);
    if (st != DUET_SUCCESS) {
        fprintf(stderr, "dist-bench: %s\n", duet_dist_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    duet_dist_transport used = DUET_DIST_TRANSPORT_AUTO;
    duet_dist_grid_transport(grid, &used);
    int myrow = 0, mycol = 0;
    duet_dist_grid_info(grid, NULL, NULL, &myrow, &mycol);
    if (progress && rank == 0) fprintf(stderr, "dist-bench progress: filling A and B\n");
    duet_dist_desc d[3];
    duet_buffer *buf[3] = {NULL, NULL, NULL};
    for (int x = 0; x < 3; x++) {
        memset(&d[x], 0, sizeof d[x]);
        d[x].m = d[x].n = n;
        d[x].mb = d[x].nb = block;
        d[x].dtype = x == 2 ? cdt : ab;
        d[x].layout = DUET_LAYOUT_COL_MAJOR;
        int64_t lr = 0, lc = 0;
        duet_dist_local_shape(grid, &d[x], &lr, &lc);
        d[x].lld = lr > 1 ? lr : 1;
        size_t bytes = (size_t)(lr * lc) * duet_dtype_size(d[x].dtype);
        st = duet_buffer_create(ctx, bytes ? bytes : 64, &buf[x]);
        if (st == DUET_SUCCESS)
            st = x == 2
                     ? fill(buf[x], d[x].dtype, lr * lc, 0.0)
                     : fill_pattern(buf[x], d[x].dtype, x, lr, lc, &d[x], myrow, mycol, prow, pcol);
        if (st != DUET_SUCCESS) {
            fprintf(stderr, "dist-bench: rank %d: %s\n", rank, duet_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    duet_context_synchronize(ctx);
    double *times = malloc((size_t)iters * sizeof *times);
    for (int it = -warmup; it < iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        st = duet_dist_gemm(grid, DUET_OP_N, DUET_OP_N, 1.0, &d[0], buf[0], &d[1], buf[1], 0.0,
                            &d[2], buf[2], NULL);
        double dt = MPI_Wtime() - t0, slowest = 0.0;
        if (st != DUET_SUCCESS) {
            if (rank == 0) fprintf(stderr, "dist-bench: %s\n", duet_dist_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (it >= 0) times[it] = slowest;
        if (progress && rank == 0)
            fprintf(stderr, "dist-bench progress: %s %d of %d: %.4f s (slowest rank)\n",
                    it < 0 ? "warm-up" : "iteration", it < 0 ? it + warmup + 1 : it + 1,
                    it < 0 ? warmup : iters, slowest);
    }
    qsort(times, (size_t)iters, sizeof *times, cmp_double);
    const double t = times[iters / 2];
    if (progress && rank == 0) fprintf(stderr, "dist-bench progress: checking C\n");
    const int bad_c = check_c(grid, &d[2], buf[2], ab, n, rank);
    if (bad_c) {
        if (rank == 0)
            fprintf(stderr, "dist-bench: %d of 16 checked elements of C are wrong\n", bad_c);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const double flops = 2.0 * (double)n * (double)n * (double)n;
    /* The baseline: this rank's share of the work as one duet_gemm on its own device. */
    double tg = 0.0;
    if (baseline) {
        int64_t lr = 0, lc = 0;
        duet_dist_local_shape(grid, &d[2], &lr, &lc);
        duet_buffer *la = NULL, *lb = NULL, *lcb = NULL;
        const size_t es = duet_dtype_size(ab), cs = duet_dtype_size(cdt);
        st = duet_buffer_create(ctx, (size_t)(lr > 0 ? lr : 1) * (size_t)n * es, &la);
        if (st == DUET_SUCCESS)
            st = duet_buffer_create(ctx, (size_t)n * (size_t)(lc > 0 ? lc : 1) * es, &lb);
        if (st == DUET_SUCCESS)
            st = duet_buffer_create(ctx, (size_t)(lr > 0 ? lr : 1) * (size_t)(lc > 0 ? lc : 1) * cs,
                                    &lcb);
        if (st == DUET_SUCCESS) st = fill_pattern(la, ab, 0, lr, n, NULL, 0, 0, 1, 1);
        if (st == DUET_SUCCESS) st = fill_pattern(lb, ab, 1, n, lc, NULL, 0, 0, 1, 1);
        if (st != DUET_SUCCESS) {
            fprintf(stderr, "dist-bench: rank %d: %s\n", rank, duet_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        duet_matrix ma = duet_matrix_make(la, ab, DUET_LAYOUT_COL_MAJOR, lr, n);
        duet_matrix mb = duet_matrix_make(lb, ab, DUET_LAYOUT_COL_MAJOR, n, lc);
        duet_matrix mc = duet_matrix_make(lcb, cdt, DUET_LAYOUT_COL_MAJOR, lr, lc);
        ma.ld = lr > 1 ? lr : 1;
        mc.ld = lr > 1 ? lr : 1;
        duet_context_synchronize(ctx);
        for (int it = -warmup; it < iters; it++) {
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            st = lr > 0 && lc > 0
                     ? duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, 0.0, &mc, NULL)
                     : DUET_SUCCESS;
            if (st == DUET_SUCCESS) st = duet_context_synchronize(ctx);
            double dt = MPI_Wtime() - t0, slowest = 0.0;
            if (st != DUET_SUCCESS) {
                fprintf(stderr, "dist-bench: rank %d: baseline duet_gemm: %s\n", rank,
                        duet_last_error());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (it >= 0) times[it] = slowest;
            if (progress && rank == 0)
                fprintf(stderr, "dist-bench progress: baseline %s %d of %d: %.4f s (slowest rank)\n",
                        it < 0 ? "warm-up" : "iteration", it < 0 ? it + warmup + 1 : it + 1,
                        it < 0 ? warmup : iters, slowest);
        }
        qsort(times, (size_t)iters, sizeof *times, cmp_double);
        tg = times[iters / 2];
        duet_buffer_destroy(la);
        duet_buffer_destroy(lb);
        duet_buffer_destroy(lcb);
    }
    if (rank == 0) {
        printf("dist-bench: ranks %d grid %dx%d dtype %s transport %s n %lld block %lld time_s %.4f "
               "tflops %.2f",
               size, prow, pcol, dtname, duet_dist_transport_name(used),
               (long long)n, (long long)block, t, flops / t * 1e-12);
        if (baseline)
            printf(" gemm_time_s %.4f gemm_tflops_x_p %.2f efficiency %.3f", tg,
                   tg > 0 ? flops / tg * 1e-12 : 0.0, tg > 0 ? tg / t : 0.0);
        printf(" check ok\n");
    }
    free(times);
    for (int x = 0; x < 3; x++) duet_buffer_destroy(buf[x]);
    duet_dist_grid_destroy(grid);
    duet_context_destroy(ctx);
    MPI_Finalize();
    return 0;
}
