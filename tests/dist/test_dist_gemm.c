/* test_dist_gemm.c - duet_dist_gemm on every grid of the run's ranks against a one-process
 * reference. */
#include "harness.h"

#include <duet/duet_dist.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size;
static int g_quick;                     /* --quick: a reduced case set (sanitizer runs)           */
static duet_dist_transport g_transport; /* --nccl: the NCCL transport (cuda builds with NCCL) */
static long g_checks, g_failed;
static duet_context *g_ctx;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        g_checks++;                                                                                \
        if (!(cond)) {                                                                             \
            g_failed++;                                                                            \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", g_rank, __FILE__, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* The block-cyclic map, written here from ScaLAPACK's definition (not the library's code). */
static int64_t t_numroc(int64_t n, int64_t nb, int p, int src, int np)
{
    int64_t count = 0;
    for (int64_t blk = 0; blk * nb < n; blk++)
        if ((int)((blk + src) % np) == p) count += (blk + 1) * nb <= n ? nb : n - blk * nb;
    return count;
}
static int64_t t_l2g(int64_t l, int64_t nb, int p, int src, int np)
{
    const int64_t lb = l / nb; /* the lb-th block this process owns */
    const int64_t dist = (p - src + np) % np;
    return (lb * np + dist) * nb + l % nb;
}

typedef struct tcase {
    int64_t m, n, k;
    duet_op op_a, op_b;
    duet_layout la, lb, lc;
    duet_dtype ab, c;
    double alpha, beta;
    int64_t amb, anb, bmb, bnb, cmb, cnb;
    int arsrc, acsrc, brsrc, bcsrc, crsrc, ccsrc;
    int nan_ab; /* A and B hold NaN (alpha 0 must not read them) */
} tcase;

typedef struct local {
    duet_dist_desc d;
    duet_buffer *buf;
    unsigned char *host;
    size_t elems;
    int64_t rows, cols;
} local;

/* The local part of a global row-major host matrix g (rows x cols), padded and offset, in a
 * new buffer; padding holds the sentinel. */
static void make_local(const duet_dist_grid *grid, int myrow, int mycol, int prow, int pcol,
                       const unsigned char *g, int64_t rows, int64_t cols, duet_dtype dt,
                       duet_layout layout, int64_t mb, int64_t nb, int rsrc, int csrc, local *l)
{
    (void)grid;
    memset(l, 0, sizeof *l);
    l->rows = t_numroc(rows, mb, myrow, rsrc, prow);
    l->cols = t_numroc(cols, nb, mycol, csrc, pcol);
    const int64_t line = layout == DUET_LAYOUT_ROW_MAJOR ? l->cols : l->rows;
    const int64_t lines = layout == DUET_LAYOUT_ROW_MAJOR ? l->rows : l->cols;
    l->d.m = rows;
    l->d.n = cols;
    l->d.mb = mb;
    l->d.nb = nb;
    l->d.rsrc = rsrc;
    l->d.csrc = csrc;
    l->d.lld = line + 2; /* padding between lines: must stay untouched */
    l->d.dtype = dt;
    l->d.layout = layout;
    l->d.offset = 3;
    l->elems = 3 + (size_t)(lines * l->d.lld) + 5;
    const size_t es = duet_dtype_size(dt);
    l->host = malloc(l->elems * es);
    dt_fill_sentinel(l->host, dt, l->elems);
    for (int64_t li = 0; li < l->rows; li++)
        for (int64_t lj = 0; lj < l->cols; lj++) {
            const int64_t i = t_l2g(li, mb, myrow, rsrc, prow),
                          j = t_l2g(lj, nb, mycol, csrc, pcol);
            const size_t x = 3 + (size_t)(layout == DUET_LAYOUT_ROW_MAJOR ? li * l->d.lld + lj
                                                                          : lj * l->d.lld + li);
            memcpy(l->host + x * es, g + (size_t)(i * cols + j) * es, es);
        }
    DT_OK(duet_buffer_create(g_ctx, l->elems * es, &l->buf));
    DT_OK(duet_buffer_write(NULL, l->buf, 0, l->host, l->elems * es));
}

static void free_local(local *l)
{
    if (l->buf) duet_buffer_destroy(l->buf);
    free(l->host);
}

static double gen(duet_dtype dt)
{
    if (dt == DUET_DTYPE_I32 || dt == DUET_DTYPE_I8) return (double)dt_rand_int(-8, 8);
    return dt_rand_uniform(-1.0, 1.0);
}

static const char *opn(duet_op o) { return o == DUET_OP_N ? "N" : "T"; }
static const char *lyn(duet_layout l) { return l == DUET_LAYOUT_ROW_MAJOR ? "r" : "c"; }

/* Runs one case on grid and checks this rank's part of C. */
static void run_case(duet_dist_grid *grid, const tcase *t, const char *gridname)
{
    int prow, pcol, myrow, mycol;
    DT_OK(duet_dist_grid_info(grid, &prow, &pcol, &myrow, &mycol));
    char what[256];
    snprintf(what, sizeof what,
             "grid %s %s%s %s->%s m%lld n%lld k%lld layouts %s%s%s alpha %g beta %g blocks "
             "A%lldx%lld B%lldx%lld C%lldx%lld",
             gridname, opn(t->op_a), opn(t->op_b), duet_dtype_name(t->ab), duet_dtype_name(t->c),
             (long long)t->m, (long long)t->n, (long long)t->k, lyn(t->la), lyn(t->lb), lyn(t->lc),
             t->alpha, t->beta, (long long)t->amb, (long long)t->anb, (long long)t->bmb,
             (long long)t->bnb, (long long)t->cmb, (long long)t->cnb);

    /* The global matrices, the same on every rank (one seed per case). */
    const int64_t ar = t->op_a == DUET_OP_N ? t->m : t->k, ac = t->op_a == DUET_OP_N ? t->k : t->m;
    const int64_t br = t->op_b == DUET_OP_N ? t->k : t->n, bc = t->op_b == DUET_OP_N ? t->n : t->k;
    const size_t es = duet_dtype_size(t->ab), ces = duet_dtype_size(t->c);
    unsigned char *ga = malloc((size_t)(ar * ac + 1) * es),
                  *gb = malloc((size_t)(br * bc + 1) * es);
    unsigned char *gc = malloc((size_t)(t->m * t->n + 1) * ces);
    unsigned char *gref = malloc((size_t)(t->m * t->n + 1) * ces);
    double *ref = malloc((size_t)(t->m * t->n + 1) * sizeof *ref);
    double *gauge = malloc((size_t)(t->m * t->n + 1) * sizeof *gauge);
    for (int64_t x = 0; x < ar * ac; x++)
        dt_set(ga, t->ab, (size_t)x, t->nan_ab ? NAN : gen(t->ab));
    for (int64_t x = 0; x < br * bc; x++)
        dt_set(gb, t->ab, (size_t)x, t->nan_ab ? NAN : gen(t->ab));
    for (int64_t x = 0; x < t->m * t->n; x++)
        dt_set(gc, t->c, (size_t)x, t->beta == 0.0 && t->c != DUET_DTYPE_I32 ? NAN : gen(t->c));
    memcpy(gref, gc, (size_t)(t->m * t->n) * ces);
    duet_matrix ma = duet_matrix_make(NULL, t->ab, DUET_LAYOUT_ROW_MAJOR, ar, ac);
    duet_matrix mb = duet_matrix_make(NULL, t->ab, DUET_LAYOUT_ROW_MAJOR, br, bc);
    duet_matrix mc = duet_matrix_make(NULL, t->c, DUET_LAYOUT_ROW_MAJOR, t->m, t->n);
    dt_ref_gemm_ex(t->op_a, t->op_b, t->alpha, &ma, ga, &mb, gb, t->beta, &mc, gref, ref, gauge);

    local la, lb, lc;
    make_local(grid, myrow, mycol, prow, pcol, ga, ar, ac, t->ab, t->la, t->amb, t->anb, t->arsrc,
               t->acsrc, &la);
    make_local(grid, myrow, mycol, prow, pcol, gb, br, bc, t->ab, t->lb, t->bmb, t->bnb, t->brsrc,
               t->bcsrc, &lb);
    make_local(grid, myrow, mycol, prow, pcol, gc, t->m, t->n, t->c, t->lc, t->cmb, t->cnb,
               t->crsrc, t->ccsrc, &lc);

    duet_status st = duet_dist_gemm(grid, t->op_a, t->op_b, t->alpha, &la.d, la.buf, &lb.d, lb.buf,
                                    t->beta, &lc.d, lc.buf, NULL);
    CHECK(st == DUET_SUCCESS, "%s: duet_dist_gemm -> %s: %s", what, duet_status_string(st),
          duet_dist_last_error());
    if (st == DUET_SUCCESS) {
        unsigned char *out = malloc(lc.elems * ces);
        DT_OK(duet_buffer_read(NULL, lc.buf, 0, out, lc.elems * ces));
        const int exact = t->c == DUET_DTYPE_I32;
        const double eps = t->c == DUET_DTYPE_F64 ? DBL_EPSILON : FLT_EPSILON;
        const double bound_c = 2.0 * (double)t->k + 4.0;
        long bad = 0, touched = 0;
        unsigned char *is_c = calloc(lc.elems, 1);
        for (int64_t li = 0; li < lc.rows; li++)
            for (int64_t lj = 0; lj < lc.cols; lj++) {
                const int64_t i = t_l2g(li, t->cmb, myrow, t->crsrc, prow);
                const int64_t j = t_l2g(lj, t->cnb, mycol, t->ccsrc, pcol);
                const size_t x = 3 + (size_t)(t->lc == DUET_LAYOUT_ROW_MAJOR ? li * lc.d.lld + lj
                                                                             : lj * lc.d.lld + li);
                is_c[x] = 1;
                const size_t gi = (size_t)(i * t->n + j);
                const double got = dt_get(out, t->c, x);
                const double want = exact ? dt_get(gref, t->c, gi) : ref[gi];
                const double err = fabs(got - want);
                const int ok = exact ? got == want : err <= bound_c * eps * gauge[gi];
                if (!ok && bad++ < 3)
                    fprintf(stderr, "rank %d: %s: C(%lld, %lld) = %.17g, want %.17g\n", g_rank,
                            what, (long long)i, (long long)j, got, want);
            }
        for (size_t x = 0; x < lc.elems; x++)
            if (!is_c[x] && !dt_is_sentinel(out, t->c, x)) touched++;
        CHECK(bad == 0, "%s: %ld elements of C wrong", what, bad);
        CHECK(touched == 0, "%s: %ld elements outside C (padding) written", what, touched);
        free(is_c);
        free(out);
    }
    free_local(&la);
    free_local(&lb);
    free_local(&lc);
    free(ga);
    free(gb);
    free(gc);
    free(gref);
    free(ref);
    free(gauge);
}

static tcase base_case(void)
{
    tcase t;
    memset(&t, 0, sizeof t);
    t.m = 13;
    t.n = 11;
    t.k = 9;
    t.ab = t.c = DUET_DTYPE_F32;
    t.alpha = 1.5;
    t.beta = -0.5;
    /* Blocks that divide nothing, mb != nb; A's rows dealt like C's, B's columns like C's. */
    t.cmb = 3;
    t.cnb = 2;
    t.amb = 3;
    t.anb = 4;
    t.bmb = 4;
    t.bnb = 2;
    return t;
}

/* One rank passes a bad lld: every rank must get the same status and message. */
static void check_agreement(duet_dist_grid *grid)
{
    int prow, pcol, myrow, mycol;
    DT_OK(duet_dist_grid_info(grid, &prow, &pcol, &myrow, &mycol));
    const int bad_rank = g_size > 2 ? 2 : g_size - 1;
    tcase t = base_case();
    const size_t es = 4;
    unsigned char *ga = calloc((size_t)(t.m * t.k), es), *gb = calloc((size_t)(t.k * t.n), es);
    unsigned char *gc = calloc((size_t)(t.m * t.n), es);
    local la, lb, lc;
    make_local(grid, myrow, mycol, prow, pcol, ga, t.m, t.k, t.ab, DUET_LAYOUT_COL_MAJOR, t.amb,
               t.anb, 0, 0, &la);
    make_local(grid, myrow, mycol, prow, pcol, gb, t.k, t.n, t.ab, DUET_LAYOUT_ROW_MAJOR, t.bmb,
               t.bnb, 0, 0, &lb);
    make_local(grid, myrow, mycol, prow, pcol, gc, t.m, t.n, t.c, DUET_LAYOUT_ROW_MAJOR, t.cmb,
               t.cnb, 0, 0, &lc);

    for (int variant = 0; variant < 3; variant++) {
        duet_dist_desc da = la.d, dc = lc.d;
        duet_status want = DUET_ERROR_INVALID_ARGUMENT;
        if (g_rank == bad_rank) {
            if (variant == 0) da.lld = 0;     /* smaller than the local rows */
            if (variant == 1) dc.m = t.m + 1; /* differs from the other ranks */
        }
        if (variant == 2) { /* C f16: unsupported on every rank */
            dc.dtype = DUET_DTYPE_F16;
            want = DUET_ERROR_UNSUPPORTED;
        }
        duet_status st = duet_dist_gemm(grid, DUET_OP_N, DUET_OP_N, 1.0, &da, la.buf, &lb.d, lb.buf,
                                        0.0, &dc, lc.buf, NULL);
        char msg[1024], root_msg[1024];
        snprintf(msg, sizeof msg, "%s", duet_dist_last_error());
        memcpy(root_msg, msg, sizeof msg);
        MPI_Bcast(root_msg, (int)sizeof root_msg, MPI_CHAR, 0, MPI_COMM_WORLD);
        int s = (int)st, smin = 0, smax = 0;
        MPI_Allreduce(&s, &smin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&s, &smax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(st == want, "agreement variant %d: status %s, want %s (%s)", variant,
              duet_status_string(st), duet_status_string(want), msg);
        CHECK(smin == smax, "agreement variant %d: ranks returned different statuses", variant);
        CHECK(strcmp(msg, root_msg) == 0,
              "agreement variant %d: message '%s' differs from rank 0's '%s'", variant, msg,
              root_msg);
        if (variant == 0) {
            char expect[64];
            snprintf(expect, sizeof expect, "rank %d: desc_a.lld (0)", bad_rank);
            CHECK(strstr(msg, "duet_dist_gemm: ") == msg && strstr(msg, expect),
                  "agreement: message '%s' does not name the function, rank and argument", msg);
        }
        if (g_rank == 0 && variant < 2) printf("  agreed error: %s\n", msg);
    }
    free_local(&la);
    free_local(&lb);
    free_local(&lc);
    free(ga);
    free(gb);
    free(gc);
}

/* The same call twice gives the same bits. */
static void check_deterministic(duet_dist_grid *grid)
{
    int prow, pcol, myrow, mycol;
    DT_OK(duet_dist_grid_info(grid, &prow, &pcol, &myrow, &mycol));
    tcase t = base_case();
    t.m = 29;
    t.n = 23;
    t.k = 31;
    const size_t es = 4;
    unsigned char *ga = malloc((size_t)(t.m * t.k) * es), *gb = malloc((size_t)(t.k * t.n) * es);
    unsigned char *gc = calloc((size_t)(t.m * t.n), es);
    for (int64_t x = 0; x < t.m * t.k; x++) dt_set(ga, t.ab, (size_t)x, dt_rand_normal());
    for (int64_t x = 0; x < t.k * t.n; x++) dt_set(gb, t.ab, (size_t)x, dt_rand_normal());
    local la, lb, lc;
    make_local(grid, myrow, mycol, prow, pcol, ga, t.k, t.m, t.ab, DUET_LAYOUT_ROW_MAJOR, 4, 3, 0,
               0, &la);
    make_local(grid, myrow, mycol, prow, pcol, gb, t.k, t.n, t.ab, DUET_LAYOUT_COL_MAJOR, 5, 2, 0,
               0, &lb);
    make_local(grid, myrow, mycol, prow, pcol, gc, t.m, t.n, t.c, DUET_LAYOUT_COL_MAJOR, 3, 2, 0, 0,
               &lc);
    const size_t bytes = lc.elems * es;
    unsigned char *r1 = malloc(bytes), *r2 = malloc(bytes);
    for (int run = 0; run < 2; run++) {
        DT_OK(duet_buffer_write(NULL, lc.buf, 0, lc.host, bytes));
        duet_status st = duet_dist_gemm(grid, DUET_OP_T, DUET_OP_N, 1.0, &la.d, la.buf, &lb.d,
                                        lb.buf, 0.0, &lc.d, lc.buf, NULL);
        CHECK(st == DUET_SUCCESS, "determinism run %d: %s", run, duet_dist_last_error());
        DT_OK(duet_buffer_read(NULL, lc.buf, 0, run ? r2 : r1, bytes));
    }
    CHECK(memcmp(r1, r2, bytes) == 0, "two runs of one GEMM differ in their bits");
    free(r1);
    free(r2);
    free_local(&la);
    free_local(&lb);
    free_local(&lc);
    free(ga);
    free(gb);
    free(gc);
}

static void run_grid(int prow, int pcol)
{
    char gridname[32];
    snprintf(gridname, sizeof gridname, "%dx%d", prow, pcol);
    duet_dist_grid *grid = NULL;
    duet_dist_grid_options go;
    memset(&go, 0, sizeof go);
    go.transport = g_transport;
    duet_status st = duet_dist_grid_create(MPI_COMM_WORLD, prow, pcol, g_ctx, &go, &grid);
    CHECK(st == DUET_SUCCESS, "grid %s: %s", gridname, duet_dist_last_error());
    if (st != DUET_SUCCESS) return;

    static const duet_layout lay[2] = {DUET_LAYOUT_ROW_MAJOR, DUET_LAYOUT_COL_MAJOR};
    static const duet_op ops[2] = {DUET_OP_N, DUET_OP_T};
    uint64_t seed = 1000;
    /* Every op and layout combination, f32. */
    for (int oa = 0; oa < 2; oa++)
        for (int ob = 0; ob < 2; ob++)
            for (int l = 0; l < 8; l++) {
                /* Quick: all-row-major and all-column-major only. */
                if (g_quick && l != 0 && l != 7) continue;
                tcase t = base_case();
                t.op_a = ops[oa];
                t.op_b = ops[ob];
                t.la = lay[l & 1];
                t.lb = lay[(l >> 1) & 1];
                t.lc = lay[(l >> 2) & 1];
                if (t.op_a == DUET_OP_T) { /* A stored K x M: blocks over K then M */
                    t.amb = 4;
                    t.anb = 3;
                }
                if (t.op_b == DUET_OP_T) { /* B stored N x K */
                    t.bmb = 2;
                    t.bnb = 4;
                }
                /* Sources off the first process in some cases. */
                if (l & 1) {
                    t.crsrc = prow - 1;
                    t.ccsrc = pcol > 1 ? 1 : 0;
                    t.arsrc = t.op_a == DUET_OP_N ? t.crsrc : 0;
                    t.bcsrc = t.op_b == DUET_OP_N ? t.ccsrc : 0;
                }
                dt_seed(seed++);
                run_case(grid, &t, gridname);
            }
    /* Every dtype, a few op/layout combinations each. */
    static const duet_dtype dts[5][2] = {{DUET_DTYPE_F64, DUET_DTYPE_F64},
                                         {DUET_DTYPE_I32, DUET_DTYPE_I32},
                                         {DUET_DTYPE_BF16, DUET_DTYPE_F32},
                                         {DUET_DTYPE_F16, DUET_DTYPE_F32},
                                         {DUET_DTYPE_I8, DUET_DTYPE_I32}};
    for (int d = 0; d < 5; d++)
        for (int v = 0; v < (g_quick ? 1 : 3); v++) {
            tcase t = base_case();
            t.ab = dts[d][0];
            t.c = dts[d][1];
            t.alpha = t.c == DUET_DTYPE_I32 ? 3.0 : 1.25;
            t.beta = t.c == DUET_DTYPE_I32 ? -2.0 : 0.75;
            t.op_a = ops[v & 1];
            t.op_b = ops[v == 2];
            t.la = lay[v & 1];
            t.lb = lay[(v + 1) & 1];
            t.lc = lay[v == 1];
            if (t.op_a == DUET_OP_T) {
                t.amb = 4;
                t.anb = 3;
            }
            if (t.op_b == DUET_OP_T) {
                t.bmb = 2;
                t.bnb = 4;
            }
            dt_seed(seed++);
            run_case(grid, &t, gridname);
        }
    /* Blocks unlike C's (both operands move), one panel wider than K, larger shapes. */
    {
        tcase t = base_case();
        t.amb = 5;
        t.anb = 2;
        t.bmb = 3;
        t.bnb = 7;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
        t = base_case();
        t.m = 40;
        t.n = 37;
        t.k = 45;
        t.cmb = t.amb = 8;
        t.cnb = t.bnb = 6;
        t.anb = 16;
        t.bmb = 16;
        t.ab = t.c = DUET_DTYPE_F64;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
        /* Deep K: many groups of panels (64 panels of 16 at most a group), the double-buffered
         * groups in flight one after the other. */
        t = base_case();
        t.m = 9;
        t.n = 7;
        t.k = 4133;
        t.anb = t.bmb = 16;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
        /* Wide blocks: groups of two 1,000-wide panels (f64 groups up to 2,048), the last
         * group one panel. */
        t = base_case();
        t.m = 10;
        t.n = 6;
        t.k = 5000;
        t.anb = t.bmb = 1000;
        t.ab = t.c = DUET_DTYPE_F64;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
        t = base_case();
        t.cmb = t.amb = 64; /* one block holds everything: one process does the work */
        t.cnb = t.bnb = 64;
        t.anb = t.bmb = 64;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
    }
    /* BLAS special cases: beta 0 with NaN in C, alpha 0 with NaN in A and B, K 0, empty C. */
    {
        tcase t = base_case();
        t.beta = 0.0;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
        t = base_case();
        t.alpha = 0.0;
        t.nan_ab = 1;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
        t.beta = 0.0;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
        t = base_case();
        t.k = 0;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
        t = base_case();
        t.m = 0;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
        t = base_case();
        t.m = 2; /* fewer rows than grid rows: some ranks hold nothing of C */
        t.n = 1;
        dt_seed(seed++);
        run_case(grid, &t, gridname);
    }
    check_agreement(grid);
    dt_seed(seed++);
    check_deterministic(grid);
    DT_OK(duet_dist_grid_destroy(grid));
}

/* Grid-creation errors agree as well. */
static void check_grid_errors(void)
{
    duet_dist_grid *grid = NULL;
    duet_status st = duet_dist_grid_create(MPI_COMM_WORLD, g_size + 1, 1, g_ctx, NULL, &grid);
    CHECK(st == DUET_ERROR_INVALID_ARGUMENT && grid == NULL, "grid (size + 1) x 1: %s (%s)",
          duet_status_string(st), duet_dist_last_error());
    if (g_size > 1) {
        /* One rank asks for another shape: every rank fails. */
        const int p = g_rank == g_size - 1 ? 1 : g_size;
        const int q = g_rank == g_size - 1 ? g_size : 1;
        st = duet_dist_grid_create(MPI_COMM_WORLD, p, q, g_ctx, NULL, &grid);
        CHECK(st == DUET_ERROR_INVALID_ARGUMENT && grid == NULL,
              "grid shapes differing between ranks: %s (%s)", duet_status_string(st),
              duet_dist_last_error());
    }
    duet_dist_grid_options go;
    memset(&go, 0, sizeof go);
    go.transport = DUET_DIST_TRANSPORT_NCCL;
    if (strcmp(duet_backend_name(), "cuda") != 0) {
        st = duet_dist_grid_create(MPI_COMM_WORLD, g_size, 1, g_ctx, &go, &grid);
        CHECK(st == DUET_ERROR_UNSUPPORTED && grid == NULL, "NCCL transport on %s: %s (%s)",
              duet_backend_name(), duet_status_string(st), duet_dist_last_error());
        /* Device buffers to MPI need the cuda backend; AUTO then stages through the host. */
        go.transport = DUET_DIST_TRANSPORT_MPI_DEVICE;
        st = duet_dist_grid_create(MPI_COMM_WORLD, g_size, 1, g_ctx, &go, &grid);
        CHECK(st == DUET_ERROR_UNSUPPORTED && grid == NULL, "MPI_DEVICE transport on %s: %s (%s)",
              duet_backend_name(), duet_status_string(st), duet_dist_last_error());
        st = duet_dist_grid_create(MPI_COMM_WORLD, g_size, 1, g_ctx, NULL, &grid);
        duet_dist_transport tr = DUET_DIST_TRANSPORT_AUTO;
        if (st == DUET_SUCCESS) {
            CHECK(duet_dist_grid_transport(grid, &tr) == DUET_SUCCESS &&
                      tr == DUET_DIST_TRANSPORT_MPI_HOST,
                  "AUTO on %s chose %s", duet_backend_name(), duet_dist_transport_name(tr));
            duet_dist_grid_destroy(grid);
            grid = NULL;
        } else {
            CHECK(0, "default grid: %s", duet_dist_last_error());
        }
    }
    /* The transport query's arguments, and the names. */
    duet_dist_transport tr;
    st = duet_dist_grid_transport(NULL, &tr);
    CHECK(st == DUET_ERROR_INVALID_HANDLE && strstr(duet_dist_last_error(), "grid"),
          "duet_dist_grid_transport(NULL): %s (%s)", duet_status_string(st), duet_dist_last_error());
    CHECK(!strcmp(duet_dist_transport_name(DUET_DIST_TRANSPORT_MPI_HOST), "mpi-host") &&
              !strcmp(duet_dist_transport_name(DUET_DIST_TRANSPORT_MPI_DEVICE), "mpi-device") &&
              !strcmp(duet_dist_transport_name(DUET_DIST_TRANSPORT_NCCL), "nccl") &&
              !strcmp(duet_dist_transport_name((duet_dist_transport)99), "unknown"),
          "duet_dist_transport_name");
    CHECK(duet_dist_numroc(10, 3, 0, 0, 2) == 6 && duet_dist_numroc(10, 3, 1, 0, 2) == 4 &&
              duet_dist_numroc(10, 3, 1, 1, 2) == 6 && duet_dist_numroc(0, 3, 0, 0, 2) == 0,
          "duet_dist_numroc");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    setvbuf(stdout, NULL, _IONBF, 0);
    g_quick = dt_quick_mode(argc, argv);
    /* --nccl, --mpi-host, --mpi-device: that transport (skipped where it is not available);
     * default AUTO (device buffers where every rank's MPI takes them, else host-staged). */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nccl")) g_transport = DUET_DIST_TRANSPORT_NCCL;
        if (!strcmp(argv[i], "--mpi-host")) g_transport = DUET_DIST_TRANSPORT_MPI_HOST;
        if (!strcmp(argv[i], "--mpi-device")) g_transport = DUET_DIST_TRANSPORT_MPI_DEVICE;
    }

    /* One context per rank: rank r takes device r % count, so several ranks share a device
     * when there are fewer devices than ranks. */
    int count = 0;
    duet_status st = duet_device_count(&count);
    int skip = st != DUET_SUCCESS || count < 1, any_skip = 0;
    MPI_Allreduce(&skip, &any_skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_skip) {
        if (g_rank == 0) printf("skipped: no %s device on some rank\n", duet_backend_name());
        MPI_Finalize();
        return DT_SKIP;
    }
    DT_OK(duet_context_create(g_rank % count, &g_ctx));
    if (g_transport == DUET_DIST_TRANSPORT_NCCL || g_transport == DUET_DIST_TRANSPORT_MPI_DEVICE) {
        duet_dist_grid_options go;
        memset(&go, 0, sizeof go);
        go.transport = g_transport;
        duet_dist_grid *probe = NULL;
        st = duet_dist_grid_create(MPI_COMM_WORLD, 1, g_size, g_ctx, &go, &probe);
        if (st == DUET_ERROR_UNSUPPORTED) {
            if (g_rank == 0) printf("skipped: %s\n", duet_dist_last_error());
            duet_context_destroy(g_ctx);
            MPI_Finalize();
            return DT_SKIP;
        }
        CHECK(st == DUET_SUCCESS, "%s grid: %s", duet_dist_transport_name(g_transport),
              duet_dist_last_error());
        if (probe) duet_dist_grid_destroy(probe);
    }
    {
        /* The transport the grids of this run take (AUTO's choice). */
        duet_dist_grid_options go;
        memset(&go, 0, sizeof go);
        go.transport = g_transport;
        duet_dist_grid *probe = NULL;
        duet_dist_transport used = DUET_DIST_TRANSPORT_AUTO;
        if (duet_dist_grid_create(MPI_COMM_WORLD, 1, g_size, g_ctx, &go, &probe) == DUET_SUCCESS) {
            duet_dist_grid_transport(probe, &used);
            duet_dist_grid_destroy(probe);
        }
        if (g_rank == 0)
            printf("test_dist_gemm: %d ranks, %s backend, %d device(s), %s transport%s\n", g_size,
                   duet_backend_name(), count, duet_dist_transport_name(used),
                   g_quick ? ", quick" : "");
    }
    check_grid_errors();
    for (int p = 1; p <= g_size; p++)
        if (g_size % p == 0) {
            const double t0 = MPI_Wtime();
            run_grid(p, g_size / p);
            if (g_rank == 0) printf("  grid %dx%d: %.2f s\n", p, g_size / p, MPI_Wtime() - t0);
        }

    long totals[2] = {g_checks + dt_checks, g_failed + dt_failures}, sums[2] = {0, 0};
    MPI_Allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_dist_gemm: %ld checks, %ld failed (over %d ranks)\n", sums[0], sums[1],
               g_size);
    duet_context_destroy(g_ctx);
    MPI_Finalize();
    return sums[1] == 0 ? 0 : 1;
}
