/* test_gemm.c - duet_gemm conformance: dtypes, shapes, layouts, ops, algorithms, guards, edges. */
#include "harness.h"

#include <float.h>

static duet_context *ctx;
static duet_stream *side_stream; /* a created stream, to run some cases off the default one */
static duet_device_props props;
static int quick;
/* The quick set on the cpu backend: most cases sized for a GPU's planner (132 SMs, the sm_90
 * kernels) are left out there, where each is only a large GEMM taking seconds against its
 * reference on two cores; the full set runs them all on every backend. */
static int host_quick;

/* ---- algorithms and launch configurations -------------------------------------------------- */

typedef struct algo_cfg {
    const char *label;
    duet_algorithm algo;
    int tile;
    duet_launch_config launch;
} algo_cfg;

/* Every algorithm gemm has, with the tiles the seeds use (1..32, 3 as in the numba docs) and
 * odd grids that do not divide any shape (the DLI's grid 3x7 of 4x3 blocks). */
static const algo_cfg ALGOS[] = {
    {"auto", DUET_ALGO_AUTO, 0, {{0, 0, 0}, {0, 0, 0}, 0}},
    {"naive", DUET_ALGO_NAIVE, 0, {{0, 0, 0}, {0, 0, 0}, 0}},
    {"naive block 7x3", DUET_ALGO_NAIVE, 0, {{0, 0, 0}, {7, 3, 1}, 0}},
    {"tiled 1", DUET_ALGO_TILED, 1, {{0, 0, 0}, {0, 0, 0}, 0}},
    {"tiled 3", DUET_ALGO_TILED, 3, {{0, 0, 0}, {0, 0, 0}, 0}},
    {"tiled 8", DUET_ALGO_TILED, 8, {{0, 0, 0}, {0, 0, 0}, 0}},
    {"tiled 16", DUET_ALGO_TILED, 16, {{0, 0, 0}, {0, 0, 0}, 0}},
    {"tiled 32", DUET_ALGO_TILED, 32, {{0, 0, 0}, {0, 0, 0}, 0}},
    {"tiled default", DUET_ALGO_TILED, 0, {{0, 0, 0}, {0, 0, 0}, 0}},
    {"grid-stride grid 3x7 block 4x3", DUET_ALGO_GRID_STRIDE, 0, {{3, 7, 1}, {4, 3, 1}, 0}},
    {"grid-stride default", DUET_ALGO_GRID_STRIDE, 0, {{0, 0, 0}, {0, 0, 0}, 0}},
    {"grid-stride grid 1x1 block 1x1", DUET_ALGO_GRID_STRIDE, 0, {{1, 1, 1}, {1, 1, 1}, 0}},
    {"grid-stride grid 2x3x2 block 4x2x2", DUET_ALGO_GRID_STRIDE, 0, {{2, 3, 2}, {4, 2, 2}, 0}},
};
#define N_ALGOS ((int)(sizeof ALGOS / sizeof ALGOS[0]))

static const algo_cfg *algo_by_tile(int tile)
{
    for (int i = 0; i < N_ALGOS; i++)
        if (ALGOS[i].algo == DUET_ALGO_TILED && ALGOS[i].tile == tile) return &ALGOS[i];
    return NULL;
}

static const duet_dtype DTYPES[] = {DUET_DTYPE_F32, DUET_DTYPE_F64, DUET_DTYPE_I32};
#define N_DTYPES 3

/* ---- one case ------------------------------------------------------------------------------- */

enum { BC_NONE, BC_A_STRIDE0, BC_B_STRIDE0, BC_A_COUNT1, BC_B_COUNT1 };
static const char *const BC_NAMES[] = {"none", "A stride 0", "B stride 0", "A count 1",
                                       "B count 1"};

enum {
    DATA_INT,    /* small integers: every dtype is exact                           */
    DATA_RANDOM, /* uniform [-1, 1): floats checked against the gauge bound          */
    DATA_NORMAL, /* randn, as the PyCUDA notebook                                     */
    DATA_WRAP    /* i32 within 64 of INT32_MAX or INT32_MIN: every product overflows */
};
static const char *const DATA_NAMES[] = {"int", "random", "normal", "wrap"};

typedef struct gemm_case {
    duet_dtype dtype;
    int64_t m, n, k;
    duet_op op_a, op_b;
    duet_layout la, lb, lc;
    int64_t pad; /* added to every leading dimension */
    size_t off_a, off_b, off_c;
    int64_t batch;     /* C's batch_count (0 is read as 1) */
    int64_t batch_pad; /* gap between consecutive matrices of a batch */
    int bcast;
    double alpha, beta;
    int data;
    int nan_ab;       /* A and B buffers wholly NaN: only valid with alpha == 0 */
    int repeat;       /* run twice, results must be bitwise identical */
    int use_stream;   /* run on side_stream instead of the default stream */
    double decimal;   /* > 0: also |C - Cref| < decimal (numpy's assert_almost_equal) */
    int expect_split; /* AUTO on a GPU must split K (the kernel name says "_splitk") */
    int expect;       /* EXPECT_*: the parts AUTO with the built-in sm_90 row on 132 SMs (H100,
                         H200) must run (src/gpu/gemm_fast_gpu.inc, gemm_fast_run_row) */
    const char *expect_kernel; /* GPU AUTO: the kernel name must begin with this */
    const algo_cfg *algo;
} gemm_case;

/* gemm_case.expect: the tail split off ("+" and "_splitk" in the name, 3 launches or more), the
 * partial last column of tiles split off ("|"), operands copied into aligned rows first
 * (workspace reported). */
#define EXPECT_TAIL  1
#define EXPECT_STRIP 2
#define EXPECT_PACK  4
#define EXPECT_TMA   8 /* f64 on the sm_90a kernel fed by TMA ("dmma_tma" in the name) */

/* Elements of guard before and after C. */
#define GUARD 13

static void describe(const gemm_case *t, char *buf, size_t size)
{
    snprintf(buf, size,
             "%s M=%lld N=%lld K=%lld A:%s,%s B:%s,%s C:%s pad=%lld off=(%zu,%zu,%zu) "
             "batch=%lld bcast=%s alpha=%g beta=%g data=%s algo=%s",
             duet_dtype_name(t->dtype), (long long)t->m, (long long)t->n, (long long)t->k,
             t->la == DUET_LAYOUT_ROW_MAJOR ? "row" : "col", t->op_a == DUET_OP_N ? "N" : "T",
             t->lb == DUET_LAYOUT_ROW_MAJOR ? "row" : "col", t->op_b == DUET_OP_N ? "N" : "T",
             t->lc == DUET_LAYOUT_ROW_MAJOR ? "row" : "col", (long long)t->pad, t->off_a, t->off_b,
             t->off_c, (long long)t->batch, BC_NAMES[t->bcast], t->alpha, t->beta,
             DATA_NAMES[t->data], t->algo->label);
}

/* mode: 0 a batch like C's, 1 broadcast by stride 0, 2 broadcast by batch_count 1. */
static duet_matrix describe_matrix(duet_dtype dtype, duet_layout layout, int64_t rows, int64_t cols,
                                   int64_t pad, size_t offset, int64_t batch, int64_t batch_pad,
                                   int mode)
{
    duet_matrix m;
    memset(&m, 0, sizeof m);
    m.dtype = dtype;
    m.layout = layout;
    m.rows = rows;
    m.cols = cols;
    int64_t min_ld = layout == DUET_LAYOUT_ROW_MAJOR ? cols : rows;
    m.ld = (min_ld > 0 ? min_ld : 1) + pad;
    m.offset = offset;
    m.batch_count = 1;
    int64_t one = (int64_t)dt_matrix_span_elems(&m) - (int64_t)offset;
    m.batch_count = batch;
    if (mode == 1) {
        m.batch_stride = 0;
    } else if (mode == 2) {
        m.batch_count = 1;
        m.batch_stride = one + 5; /* must be ignored for a single matrix */
    } else {
        m.batch_stride = batch > 1 ? one + batch_pad : 0;
    }
    return m;
}

static double gen_value(const gemm_case *t)
{
    switch (t->data) {
    case DATA_INT:
        return t->dtype == DUET_DTYPE_I32 ? (double)dt_rand_int(-1000, 1000)
                                          : (double)dt_rand_int(-3, 3);
    case DATA_RANDOM: return dt_rand_uniform(-1.0, 1.0);
    case DATA_NORMAL: return dt_rand_normal();
    case DATA_WRAP:
        return dt_rand_int(0, 1) ? (double)(INT32_MAX - dt_rand_int(0, 64))
                                 : (double)(INT32_MIN + dt_rand_int(0, 64));
    }
    return 0.0;
}

static void fill_elements(const gemm_case *t, const duet_matrix *m, void *data)
{
    int64_t nb = m->batch_count > 1 ? m->batch_count : 1;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++)
                dt_set(data, m->dtype, dt_matrix_index(m, b, i, j), gen_value(t));
}

static duet_buffer *upload(const void *host, size_t bytes, const char *what)
{
    duet_buffer *buf = NULL;
    int before = dt_failures;
    DT_OK(duet_buffer_create(ctx, bytes, &buf));
    if (dt_failures != before) {
        fprintf(stderr, "  (%s: a buffer of %zu bytes)\n", what, bytes);
        return NULL;
    }
    if (bytes > 0) DT_OK(duet_buffer_write(NULL, buf, 0, host, bytes));
    return buf;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* What options.info must say for a gemm that reached a kernel (m, n, k >= 1, alpha != 0), per
 * docs/internals.md: x runs along C's unit-stride axis, y along the other, z over batches. */
static void check_info(const gemm_case *t, const duet_launch_info *info, const char *what)
{
    int64_t nb = t->batch > 1 ? t->batch : 1;
    int empty = t->m == 0 || t->n == 0;
    int scale_only = !empty && (t->k == 0 || t->alpha == 0.0);
    DT_CHECK(memchr(info->kernel, '\0', sizeof info->kernel) != NULL,
             "%s: info.kernel is not "
             "NUL-terminated",
             what);
    if (empty) {
        DT_CHECK(info->launches == 0, "%s: info.launches %d for an empty gemm", what,
                 info->launches);
        return;
    }
    if (memchr(info->kernel, '\0', sizeof info->kernel) == NULL) return;
    /* C = 1 * C: nothing to launch, so nothing need be reported. */
    if (scale_only && t->beta == 1.0) return;
    DT_CHECK(info->kernel[0] != '\0', "%s: info.kernel is empty", what);
    DT_CHECK(info->launches >= 1, "%s: info.launches %d", what, info->launches);
    if (strcmp(duet_backend_name(), "cpu") == 0)
        DT_CHECK(strncmp(info->kernel, "cpu_", 4) == 0, "%s: cpu kernel name \"%s\"", what,
                 info->kernel);
    if (scale_only) return; /* a scale of C by beta: an elementwise kernel */

    const char *dname = duet_dtype_name(t->dtype);
    DT_CHECK(strstr(info->kernel, dname) != NULL, "%s: kernel name \"%s\" does not name %s", what,
             info->kernel, dname);
    const algo_cfg *ac = t->algo;
    if (t->expect_kernel && strcmp(duet_backend_name(), "cpu") != 0)
        DT_CHECK(strncmp(info->kernel, t->expect_kernel, strlen(t->expect_kernel)) == 0,
                 "%s: AUTO ran \"%s\", not %s...", what, info->kernel, t->expect_kernel);
    if (ac->algo == DUET_ALGO_AUTO && t->expect_split && strcmp(duet_backend_name(), "cpu") != 0)
        DT_CHECK(strstr(info->kernel, "_splitk") != NULL && info->launches == 2,
                 "%s: AUTO ran \"%s\" (%d launches), not a split-K", what, info->kernel,
                 info->launches);
    if (ac->algo == DUET_ALGO_AUTO && t->expect && props.compute_units == 132 &&
        strcmp(info->tuning, "builtin:sm_90") == 0) {
        const int tail = strchr(info->kernel, '+') != NULL &&
                         strstr(info->kernel, "_splitk") != NULL && info->launches >= 3;
        const int strip = strchr(info->kernel, '|') != NULL && info->launches >= 2;
        const int pack = info->workspace_bytes > 0 && info->launches >= 3;
        const int tma = strstr(info->kernel, "dmma_tma") != NULL;
        DT_CHECK((!(t->expect & EXPECT_TAIL) || tail) && (!(t->expect & EXPECT_STRIP) || strip) &&
                     (!(t->expect & EXPECT_PACK) || pack) && (!(t->expect & EXPECT_TMA) || tma),
                 "%s: AUTO ran \"%s\" (%d launches, %zu bytes of workspace), not the plan%s%s%s%s",
                 what, info->kernel, info->launches, info->workspace_bytes,
                 t->expect & EXPECT_TAIL ? " tail" : "", t->expect & EXPECT_STRIP ? " strip" : "",
                 t->expect & EXPECT_PACK ? " pack" : "", t->expect & EXPECT_TMA ? " tma" : "");
    }
    if (ac->algo == DUET_ALGO_AUTO) {
        /* AUTO reports itself when duet's tuned kernels ran, or the seed algorithm it chose. */
        DT_CHECK(info->algorithm >= DUET_ALGO_AUTO && info->algorithm <= DUET_ALGO_GRID_STRIDE &&
                     info->algorithm != DUET_ALGO_TILED_PADDED,
                 "%s: AUTO reported algorithm %d", what, (int)info->algorithm);
        return;
    }
    DT_CHECK(info->algorithm == ac->algo, "%s: info.algorithm %d, asked %d", what,
             (int)info->algorithm, (int)ac->algo);
    const duet_launch_config *cfg = &info->config;
    if (ac->algo == DUET_ALGO_GRID_STRIDE) {
        if (ac->launch.block.x != 0) {
            DT_CHECK(cfg->grid.x == ac->launch.grid.x && cfg->grid.y == ac->launch.grid.y &&
                         cfg->grid.z == ac->launch.grid.z && cfg->block.x == ac->launch.block.x &&
                         cfg->block.y == ac->launch.block.y && cfg->block.z == ac->launch.block.z,
                     "%s: grid-stride launched grid %ux%ux%u block %ux%ux%u", what, cfg->grid.x,
                     cfg->grid.y, cfg->grid.z, cfg->block.x, cfg->block.y, cfg->block.z);
        } else {
            DT_CHECK(cfg->grid.x == 8 && cfg->grid.y == 8 && cfg->block.x == 16 &&
                         cfg->block.y == 16,
                     "%s: default grid-stride launched grid %ux%u block %ux%u (want 8x8, 16x16)",
                     what, cfg->grid.x, cfg->grid.y, cfg->block.x, cfg->block.y);
        }
        return;
    }
    uint32_t bx, by;
    if (ac->algo == DUET_ALGO_TILED) {
        int tile = ac->tile ? ac->tile : 16;
        DT_CHECK(info->tile == tile, "%s: info.tile %d, want %d", what, info->tile, tile);
        bx = by = (uint32_t)tile;
        size_t want_shared = 2u * (size_t)tile * (size_t)tile * duet_dtype_size(t->dtype);
        DT_CHECK(cfg->shared_bytes == want_shared, "%s: shared bytes %zu, want %zu", what,
                 cfg->shared_bytes, want_shared);
    } else {
        bx = ac->launch.block.x ? ac->launch.block.x : 16;
        by = ac->launch.block.x ? ac->launch.block.y : 16;
    }
    DT_CHECK(cfg->block.x == bx && cfg->block.y == by, "%s: block %ux%u, want %ux%u", what,
             cfg->block.x, cfg->block.y, bx, by);
    int64_t nx = t->lc == DUET_LAYOUT_ROW_MAJOR ? t->n : t->m;
    int64_t ny = t->lc == DUET_LAYOUT_ROW_MAJOR ? t->m : t->n;
    /* Grids are folded into the device's limits; kernels loop over the rest. */
    int64_t want_z = nb < props.max_grid_dims[2] ? nb : props.max_grid_dims[2];
    int grid_ok =
        cfg->grid.x == (uint64_t)ceil_div(nx, bx) && cfg->grid.y == (uint64_t)ceil_div(ny, by);
    /* A one-row or one-column C has a unit stride both ways: either orientation is right. */
    if (!grid_ok && (t->m == 1 || t->n == 1))
        grid_ok =
            cfg->grid.x == (uint64_t)ceil_div(ny, bx) && cfg->grid.y == (uint64_t)ceil_div(nx, by);
    DT_CHECK(grid_ok && cfg->grid.z == (uint64_t)want_z,
             "%s: grid %ux%ux%u for a %lldx%lld C (x along the unit stride) of %lld batches", what,
             cfg->grid.x, cfg->grid.y, cfg->grid.z, (long long)ny, (long long)nx, (long long)nb);
}

static duet_status run_gemm(const gemm_case *t, duet_buffer *ab, duet_buffer *bb, duet_buffer *cb,
                            const duet_matrix *a, const duet_matrix *b, duet_matrix *c,
                            duet_launch_info *info)
{
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.algorithm = t->algo->algo;
    opt.tile = t->algo->tile;
    opt.launch = t->algo->launch;
    opt.info = info;
    memset(info, 'X', sizeof *info); /* fields the library forgets to fill show up */
    duet_matrix am = *a, bm = *b;
    am.buffer = ab;
    bm.buffer = bb;
    c->buffer = cb;
    duet_stream *s = t->use_stream ? side_stream : NULL;
    duet_status st = duet_gemm(s, t->op_a, t->op_b, t->alpha, &am, &bm, t->beta, c, &opt);
    if (st == DUET_SUCCESS && s != NULL) st = duet_stream_synchronize(s);
    return st;
}

/* Runs one case end to end; returns 1 when every check of it passed. */
static int run_case(const gemm_case *t)
{
    int failures_before = dt_failures;
    char what[512];
    describe(t, what, sizeof what);
    duet_dtype dt = t->dtype;
    size_t es = duet_dtype_size(dt);
    int64_t nb = t->batch > 1 ? t->batch : 1;

    duet_matrix a = describe_matrix(dt, t->la, t->op_a == DUET_OP_N ? t->m : t->k,
                                    t->op_a == DUET_OP_N ? t->k : t->m, t->pad, t->off_a, t->batch,
                                    t->batch_pad,
                                    t->bcast == BC_A_STRIDE0  ? 1
                                    : t->bcast == BC_A_COUNT1 ? 2
                                                              : 0);
    duet_matrix b = describe_matrix(dt, t->lb, t->op_b == DUET_OP_N ? t->k : t->n,
                                    t->op_b == DUET_OP_N ? t->n : t->k, t->pad, t->off_b, t->batch,
                                    t->batch_pad,
                                    t->bcast == BC_B_STRIDE0  ? 1
                                    : t->bcast == BC_B_COUNT1 ? 2
                                                              : 0);
    duet_matrix c =
        describe_matrix(dt, t->lc, t->m, t->n, t->pad, GUARD + t->off_c, t->batch, t->batch_pad, 0);
    /* Inputs get exactly their footprint, so an off-by-one in the library's range check shows. */
    size_t a_elems = dt_matrix_span_elems(&a), b_elems = dt_matrix_span_elems(&b);
    size_t c_elems = dt_matrix_span_elems(&c) + GUARD;

    unsigned char *a_h = malloc(a_elems * es + 1), *b_h = malloc(b_elems * es + 1);
    unsigned char *c_h = malloc(c_elems * es), *c_ref = malloc(c_elems * es);
    unsigned char *c_out = malloc(c_elems * es), *c_out2 = malloc(c_elems * es);
    unsigned char *is_c = calloc(c_elems, 1);
    size_t n_out = (size_t)(nb * t->m * t->n) + 1;
    double *ref = malloc(n_out * sizeof *ref), *gauge = malloc(n_out * sizeof *gauge);
    if (!a_h || !b_h || !c_h || !c_ref || !c_out || !c_out2 || !is_c || !ref || !gauge) {
        fprintf(stderr, "%s: out of host memory\n", what);
        exit(1);
    }

    /* Padding of A and B holds NaN (or the integer sentinel): reading it poisons the result. */
    dt_fill_sentinel(a_h, dt, a_elems);
    dt_fill_sentinel(b_h, dt, b_elems);
    if (!t->nan_ab) {
        fill_elements(t, &a, a_h);
        fill_elements(t, &b, b_h);
    }
    dt_fill_sentinel(c_h, dt, c_elems);
    for (int64_t bi = 0; bi < nb; bi++)
        for (int64_t i = 0; i < t->m; i++)
            for (int64_t j = 0; j < t->n; j++) {
                size_t ci = dt_matrix_index(&c, bi, i, j);
                is_c[ci] = 1;
                double v;
                if (t->beta != 0.0)
                    v = gen_value(t);
                else if (dt == DUET_DTYPE_I32)
                    v = (double)dt_rand_int(INT32_MIN, INT32_MAX);
                else
                    v = NAN; /* beta == 0 must not read C: NaN * 0 would stay NaN */
                dt_set(c_h, dt, ci, v);
            }
    memcpy(c_ref, c_h, c_elems * es);

    duet_buffer *ab = upload(a_h, a_elems * es, what);
    duet_buffer *bb = upload(b_h, b_elems * es, what);
    duet_buffer *cb = upload(c_h, c_elems * es, what);
    if (ab && bb && cb) {
        duet_launch_info info;
        duet_status st = run_gemm(t, ab, bb, cb, &a, &b, &c, &info);
        char msg[256];
        snprintf(msg, sizeof msg, "%s", duet_last_error());
        DT_CHECK(st == DUET_SUCCESS, "%s: duet_gemm -> %s: %s", what, duet_status_string(st), msg);
        if (st == DUET_SUCCESS) {
            DT_OK(duet_buffer_read(NULL, cb, 0, c_out, c_elems * es));
            check_info(t, &info, what);

            dt_ref_gemm_ex(t->op_a, t->op_b, t->alpha, &a, a_h, &b, b_h, t->beta, &c, c_ref, ref,
                           gauge);
            int exact = dt == DUET_DTYPE_I32 || t->data == DATA_INT;
            double eps = dt == DUET_DTYPE_F32 ? FLT_EPSILON : DBL_EPSILON;
            double bound_c = 2.0 * (double)t->k + 4.0;
            long bad = 0;
            for (int64_t bi = 0; bi < nb; bi++)
                for (int64_t i = 0; i < t->m; i++)
                    for (int64_t j = 0; j < t->n; j++) {
                        size_t ci = dt_matrix_index(&c, bi, i, j);
                        size_t pk = (size_t)((bi * t->m + i) * t->n + j);
                        double got = dt_get(c_out, dt, ci);
                        double want = exact ? dt_get(c_ref, dt, ci) : ref[pk];
                        double err = fabs(got - want);
                        int ok = exact ? got == want : err <= bound_c * eps * gauge[pk];
                        if (ok && t->decimal > 0) ok = err < t->decimal;
                        if (!ok && bad++ < 3)
                            fprintf(stderr,
                                    "  %s: C[b=%lld, %lld, %lld] = %.17g, want %.17g "
                                    "(|diff| %.3g, bound %.3g)\n",
                                    what, (long long)bi, (long long)i, (long long)j, got, want, err,
                                    exact ? 0.0 : bound_c * eps * gauge[pk]);
                    }
            DT_CHECK(bad == 0, "%s: %ld of %lld elements of C wrong", what, bad,
                     (long long)(nb * t->m * t->n));

            long hit = 0;
            size_t first_hit = 0;
            for (size_t x = 0; x < c_elems; x++)
                if (!is_c[x] && !dt_is_sentinel(c_out, dt, x) && hit++ == 0) first_hit = x;
            DT_CHECK(hit == 0,
                     "%s: %ld guard elements overwritten, first at element %zu "
                     "(C starts at %zu)",
                     what, hit, first_hit, c.offset);

            if (t->repeat) {
                DT_OK(duet_buffer_write(NULL, cb, 0, c_h, c_elems * es));
                duet_launch_info info2;
                st = run_gemm(t, ab, bb, cb, &a, &b, &c, &info2);
                DT_CHECK(st == DUET_SUCCESS, "%s: second duet_gemm -> %s", what,
                         duet_status_string(st));
                DT_OK(duet_buffer_read(NULL, cb, 0, c_out2, c_elems * es));
                DT_CHECK(memcmp(c_out, c_out2, c_elems * es) == 0,
                         "%s: two identical calls gave different bits", what);
            }
        }
    }
    if (ab) DT_OK(duet_buffer_destroy(ab));
    if (bb) DT_OK(duet_buffer_destroy(bb));
    if (cb) DT_OK(duet_buffer_destroy(cb));
    free(a_h);
    free(b_h);
    free(c_h);
    free(c_ref);
    free(c_out);
    free(c_out2);
    free(is_c);
    free(ref);
    free(gauge);
    return dt_failures == failures_before;
}

/* ---- case builders -------------------------------------------------------------------------- */

static gemm_case base_case(duet_dtype dt, int64_t m, int64_t n, int64_t k, const algo_cfg *ac)
{
    gemm_case t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.m = m;
    t.n = n;
    t.k = k;
    t.op_a = t.op_b = DUET_OP_N;
    t.la = t.lb = t.lc = DUET_LAYOUT_ROW_MAJOR;
    t.batch = 1;
    t.bcast = BC_NONE;
    t.alpha = 1.0;
    t.beta = 0.0;
    t.data = dt == DUET_DTYPE_I32 ? DATA_INT : DATA_RANDOM;
    t.algo = ac;
    return t;
}

/* combo in 0..31: op_a, op_b, layout of A, B, C. */
static void set_combo(gemm_case *t, int combo)
{
    t->op_a = combo & 1 ? DUET_OP_T : DUET_OP_N;
    t->op_b = combo & 2 ? DUET_OP_T : DUET_OP_N;
    t->la = combo & 4 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
    t->lb = combo & 8 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
    t->lc = combo & 16 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
}

/* alpha/beta pairs; i32 needs integers. Exact for DATA_INT in every dtype. */
static void set_scalars(gemm_case *t, int which)
{
    static const double f[4][2] = {{1, 0}, {1, 1}, {1.5, -0.75}, {-0.5, 2}};
    static const double i[4][2] = {{1, 0}, {1, 1}, {2, -1}, {-3, 2}};
    const double(*p)[2] = t->dtype == DUET_DTYPE_I32 ? i : f;
    t->alpha = p[which & 3][0];
    t->beta = p[which & 3][1];
}

typedef struct group {
    const char *name;
    int cases, failed;
} group;

/* Starts a group: its name goes out at once, so a long run shows what it is doing (CTest's
 * --verbose, or the program run by hand); group_done prints the counts. */
static group group_begin(const char *name)
{
    printf("  %s ...\n", name);
    fflush(stdout);
    group g = {name, 0, 0};
    return g;
}

static void run_in(group *g, const gemm_case *t)
{
    g->cases++;
    if (!run_case(t)) g->failed++;
}

static void group_done(const group *g)
{
    printf("  %-32s %5d cases, %d failed\n", g->name, g->cases, g->failed);
    fflush(stdout);
}

/* ---- groups ------------------------------------------------------------------------------- */

/* The checker itself: exact conversions and a reference with known answers. */
static void test_harness(void)
{
    struct {
        double v;
        uint16_t f16, bf16;
    } conv[] = {
        {1.0, 0x3C00, 0x3F80},
        {-2.0, 0xC000, 0xC000},
        {65504.0, 0x7BFF, 0x4780},           /* bf16 rounds up to 2^16                    */
        {65520.0, 0x7C00, 0x4780},           /* f16: a tie above the largest, rounds to inf */
        {0x1p-24, 0x0001, 0x3380},           /* smallest f16 subnormal                    */
        {0x1p-25, 0x0000, 0x3300},           /* f16 tie to even: 0                        */
        {0x3p-25, 0x0002, 0x33C0},           /* f16 tie to even: 2                        */
        {0x1p-14 - 0x1p-25, 0x0400, 0x3880}, /* f16 subnormal carries into the normals    */
        {1.0 + 0x1p-11, 0x3C00, 0x3F80},     /* f16 tie to even                           */
        {1.0 + 0x3p-11, 0x3C02, 0x3F80},     /* f16 tie to even, upwards                  */
        {1.0 + 0x3p-8, 0x3C0C, 0x3F82},      /* bf16 tie to even, upwards                 */
        {3.14159265358979, 0x4248, 0x4049},
    };
    unsigned char buf[8];
    for (size_t i = 0; i < sizeof conv / sizeof conv[0]; i++) {
        uint16_t h;
        dt_set(buf, DUET_DTYPE_F16, 0, conv[i].v);
        memcpy(&h, buf, 2);
        DT_CHECK(h == conv[i].f16, "f16(%a) = 0x%04X, want 0x%04X", conv[i].v, h, conv[i].f16);
        dt_set(buf, DUET_DTYPE_BF16, 0, conv[i].v);
        memcpy(&h, buf, 2);
        DT_CHECK(h == conv[i].bf16, "bf16(%a) = 0x%04X, want 0x%04X", conv[i].v, h, conv[i].bf16);
    }
    uint16_t bits = 0x3555; /* 1/3 in f16: 0.333251953125 */
    memcpy(buf, &bits, 2);
    DT_CHECK(dt_get(buf, DUET_DTYPE_F16, 0) == 0.333251953125, "f16 0x3555 read as %.17g",
             dt_get(buf, DUET_DTYPE_F16, 0));
    bits = 0x0001;
    memcpy(buf, &bits, 2);
    DT_CHECK(dt_get(buf, DUET_DTYPE_F16, 0) == 0x1p-24, "f16 0x0001 read wrongly");
    bits = 0x7F7F; /* largest finite bf16 */
    memcpy(buf, &bits, 2);
    DT_CHECK(dt_get(buf, DUET_DTYPE_BF16, 0) == 0x1.FEp127, "bf16 0x7F7F read as %g",
             dt_get(buf, DUET_DTYPE_BF16, 0));
    dt_set(buf, DUET_DTYPE_I32, 0, -1.0);
    DT_CHECK(dt_get(buf, DUET_DTYPE_I32, 0) == -1.0, "i32 -1 round trip");
    dt_fill_sentinel(buf, DUET_DTYPE_F32, 2);
    DT_CHECK(dt_is_sentinel(buf, DUET_DTYPE_F32, 1), "fresh sentinel not recognised");
    dt_set(buf, DUET_DTYPE_F32, 1, NAN);
    DT_CHECK(!dt_is_sentinel(buf, DUET_DTYPE_F32, 1), "a computed NaN taken for the sentinel");

    /* [[1 2] [3 4]] x [[5 6] [7 8]] = [[19 22] [43 50]]; 2 * that + 1 * ones. */
    double a_h[4] = {1, 2, 3, 4}, b_h[4] = {5, 6, 7, 8}, c_h[4] = {1, 1, 1, 1};
    duet_matrix a = duet_matrix_make(NULL, DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, 2, 2);
    duet_matrix b = a, c = a;
    dt_ref_gemm(DUET_OP_N, DUET_OP_N, 2.0, &a, a_h, &b, b_h, 1.0, &c, c_h);
    DT_CHECK(c_h[0] == 39 && c_h[1] == 45 && c_h[2] == 87 && c_h[3] == 101,
             "reference 2x2: %g %g %g %g", c_h[0], c_h[1], c_h[2], c_h[3]);
    /* A read column-major and transposed is A again: [[1 3] [2 4]]^T... as stored = A. */
    a.layout = DUET_LAYOUT_COL_MAJOR;
    dt_ref_gemm(DUET_OP_T, DUET_OP_N, 1.0, &a, a_h, &b, b_h, 0.0, &c, c_h);
    DT_CHECK(c_h[0] == 19 && c_h[1] == 22 && c_h[2] == 43 && c_h[3] == 50,
             "reference col-major A^T: %g %g %g %g", c_h[0], c_h[1], c_h[2], c_h[3]);
    int32_t ia[1] = {65536}, ib[1] = {65536}, ic[1] = {7};
    duet_matrix s = duet_matrix_make(NULL, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
    dt_ref_gemm(DUET_OP_N, DUET_OP_N, 1.0, &s, ia, &s, ib, -1.0, &s, ic);
    DT_CHECK(ic[0] == -7, "i32 reference 65536^2 - 7 = %d, want -7 (mod 2^32)", (int)ic[0]);
    ia[0] = INT32_MAX;
    ib[0] = 2;
    dt_ref_gemm(DUET_OP_N, DUET_OP_N, 1.0, &s, ia, &s, ib, 0.0, &s, ic);
    DT_CHECK(ic[0] == -2, "i32 reference INT32_MAX * 2 = %d, want -2", (int)ic[0]);
}

static void test_sizes(void)
{
    group g = group_begin("sizes 1..20");
    for (int64_t s = 1; s <= 20; s++)
        for (int d = 0; d < N_DTYPES; d++)
            for (int al = 0; al < N_ALGOS; al++)
                for (int shape = 0; shape < 2; shape++) {
                    int idx = (int)s + al + d + shape;
                    if (quick && (shape == 1 || idx % 4 != 0)) continue;
                    gemm_case t =
                        shape == 0 ? base_case(DTYPES[d], s, s, s, &ALGOS[al])
                                   : base_case(DTYPES[d], s, 21 - s, (s * 7) % 20 + 1, &ALGOS[al]);
                    set_combo(&t, (int)(s * 13 + al + d * 5 + shape * 7) % 32);
                    set_scalars(&t, idx);
                    if (DTYPES[d] != DUET_DTYPE_I32 && idx % 2) t.data = DATA_INT;
                    run_in(&g, &t);
                }
    group_done(&g);
}

static void test_layouts(void)
{
    group g = group_begin("layouts x ops");
    for (int combo = 0; combo < 32; combo++)
        for (int d = 0; d < N_DTYPES; d++)
            for (int al = 0; al < N_ALGOS; al++)
                for (int padded = 0; padded < 2; padded++) {
                    if (quick && al != (combo + d + padded * 5) % N_ALGOS) continue;
                    gemm_case t = padded ? base_case(DTYPES[d], 17, 15, 33, &ALGOS[al])
                                         : base_case(DTYPES[d], 5, 7, 3, &ALGOS[al]);
                    set_combo(&t, combo);
                    if (padded) {
                        t.pad = 3;
                        t.off_a = 7;
                        t.off_b = 5;
                        t.off_c = 11;
                    }
                    set_scalars(&t, combo + al);
                    run_in(&g, &t);
                }
    group_done(&g);
}

/* Shapes one below, at and one above each tile edge: the partial-tile paths. */
static void test_tile_edges(void)
{
    group g = group_begin("tile edges");
    static const int tiles[] = {1, 3, 8, 16, 32};
    int idx = 0;
    for (int ti = 0; ti < 5; ti++)
        for (int delta = -1; delta <= 1; delta++) {
            int64_t s = tiles[ti] + delta;
            if (s < 1) continue;
            for (int d = 0; d < N_DTYPES; d++)
                for (int shape = 0; shape < 2; shape++) {
                    const algo_cfg *algos[4] = {algo_by_tile(tiles[ti]), &ALGOS[1], &ALGOS[9],
                                                &ALGOS[0]};
                    for (int al = 0; al < 4; al++, idx++) {
                        if (quick && (al != 0 || shape != 0)) continue;
                        gemm_case t = shape == 0
                                          ? base_case(DTYPES[d], s, s, s, algos[al])
                                          : base_case(DTYPES[d], s, s + 1, 2 * s + 1, algos[al]);
                        set_combo(&t, idx % 32);
                        set_scalars(&t, idx);
                        run_in(&g, &t);
                    }
                }
        }
    /* Edges of the larger tiles a tuned AUTO kernel is likely to use (64, 128). */
    static const int64_t big[][3] = {{63, 65, 64},   {64, 64, 64},   {65, 63, 66},
                                     {127, 129, 33}, {128, 128, 17}, {129, 127, 31}};
    for (int si = 0; si < 6; si++)
        for (int d = 0; d < N_DTYPES; d++, idx++) {
            if (quick && (si + d) % 3 != 0) continue;
            gemm_case t = base_case(DTYPES[d], big[si][0], big[si][1], big[si][2], &ALGOS[0]);
            set_combo(&t, idx % 32);
            set_scalars(&t, idx);
            run_in(&g, &t);
        }
    group_done(&g);
}

static void test_odd_shapes(void)
{
    group g = group_begin("primes, tall-skinny, short-wide");
    static const int64_t shapes[][3] = {{37, 61, 127}, {61, 37, 11}, {127, 127, 127}, {513, 3, 7},
                                        {3, 7, 513},   {1, 1000, 1}, {1000, 1, 1},    {1, 1, 1000},
                                        {2, 999, 3},   {2, 3, 4099}};
    int idx = 0;
    for (int si = 0; si < 10; si++)
        for (int d = 0; d < N_DTYPES; d++)
            for (int al = 0; al < N_ALGOS; al++, idx++) {
                if (quick && idx % 5 != 0) continue;
                gemm_case t =
                    base_case(DTYPES[d], shapes[si][0], shapes[si][1], shapes[si][2], &ALGOS[al]);
                set_combo(&t, idx % 32);
                set_scalars(&t, idx);
                if (idx % 3 == 0) {
                    t.pad = 3;
                    t.off_a = 1;
                    t.off_b = 2;
                    t.off_c = 3;
                }
                run_in(&g, &t);
            }
    group_done(&g);
}

static void test_batches(void)
{
    group g = group_begin("batches and broadcasts");
    static const int64_t shapes[][3] = {{5, 7, 3}, {17, 9, 20}};
    int idx = 0;
    for (int si = 0; si < 2; si++)
        for (int bc = 0; bc < 5; bc++)
            for (int d = 0; d < N_DTYPES; d++)
                for (int al = 0; al < N_ALGOS; al++, idx++) {
                    if (quick && al != (bc + d + si) % N_ALGOS) continue;
                    gemm_case t = base_case(DTYPES[d], shapes[si][0], shapes[si][1], shapes[si][2],
                                            &ALGOS[al]);
                    set_combo(&t, idx % 32);
                    set_scalars(&t, idx);
                    t.batch = 3;
                    t.batch_pad = 4;
                    t.bcast = bc;
                    t.pad = si;
                    t.use_stream = idx % 2;
                    run_in(&g, &t);
                }
    /* More batches than a grid has z blocks (65535 on GPUs): the grid is folded and the
     * kernels stride over the rest. */
    static const int fold_algos[] = {0, 1, 4, 12};
    for (int d = 0; d < N_DTYPES; d++)
        for (int al = 0; al < 4; al++) {
            if (quick && al != 2) continue;
            gemm_case t = base_case(DTYPES[d], 2, 3, 2, &ALGOS[fold_algos[al]]);
            set_combo(&t, al * 9 + d);
            t.batch = 70001;
            t.batch_pad = 1;
            t.beta = 1;
            t.bcast = al == 3 ? BC_B_STRIDE0 : BC_NONE;
            run_in(&g, &t);
        }
    /* batch_count 0 is read as 1. */
    for (int d = 0; d < N_DTYPES; d++) {
        gemm_case t = base_case(DTYPES[d], 6, 5, 4, &ALGOS[d + 1]);
        t.batch = 0;
        run_in(&g, &t);
    }
    group_done(&g);
}

/* BLAS semantics: beta == 0 never reads C, alpha == 0 never reads A or B, K == 0 gives beta*C,
 * M == 0 or N == 0 writes nothing. */
static void test_blas_edges(void)
{
    group g = group_begin("beta 0, alpha 0, K 0, M/N 0");
    int idx = 0;
    for (int d = 0; d < N_DTYPES; d++)
        for (int al = 0; al < N_ALGOS; al++) {
            int isint = DTYPES[d] == DUET_DTYPE_I32;
            /* beta == 0 over a C full of NaN (floats) or noise (i32). */
            if (!quick || al % 3 == d) {
                gemm_case t = base_case(DTYPES[d], 9, 11, 5, &ALGOS[al]);
                set_combo(&t, idx++ % 32);
                t.alpha = isint ? 3 : 0.5;
                t.beta = 0;
                run_in(&g, &t);
            }
            /* beta == -0.0 is zero too: C is still not read. */
            if (!quick || al % 3 == d) {
                gemm_case t = base_case(DTYPES[d], 4, 3, 5, &ALGOS[al]);
                set_combo(&t, idx++ % 32);
                t.beta = -0.0;
                run_in(&g, &t);
            }
            /* K == 0: C = beta * C. */
            static const double betas[] = {0.0, 2.0, -1.5};
            for (int bi = 0; bi < 3; bi++) {
                if (isint && bi == 2) continue;
                if (quick && (al + bi) % 4 != d) continue;
                gemm_case t = base_case(DTYPES[d], 6, 5, 0, &ALGOS[al]);
                set_combo(&t, idx++ % 32);
                t.beta = betas[bi];
                t.pad = bi;
                run_in(&g, &t);
            }
            /* alpha == 0: A and B are all NaN and must not be read. */
            static const double alpha0_betas[] = {0.0, 1.0, 3.0};
            for (int bi = 0; bi < 3; bi++) {
                if (quick && (al + bi) % 4 != d) continue;
                gemm_case t = base_case(DTYPES[d], 7, 4, 6, &ALGOS[al]);
                set_combo(&t, idx++ % 32);
                t.alpha = 0;
                t.beta = alpha0_betas[bi];
                t.nan_ab = !isint;
                run_in(&g, &t);
            }
            /* Empty results. */
            static const int64_t empty[][3] = {{0, 5, 3}, {5, 0, 3}, {0, 0, 0}, {0, 4, 0}};
            for (int ei = 0; ei < 4; ei++) {
                if (quick && (al + ei) % 4 != d) continue;
                gemm_case t =
                    base_case(DTYPES[d], empty[ei][0], empty[ei][1], empty[ei][2], &ALGOS[al]);
                set_combo(&t, idx++ % 32);
                t.beta = 1;
                t.pad = 1;
                run_in(&g, &t);
            }
        }
    group_done(&g);
}

static void test_i32_wrap(void)
{
    group g = group_begin("i32 wrap-around");
    static const double scalars[][2] = {{1, 1}, {-1, 1}, {3, -7}, {2147483647.0, -2147483648.0}};
    static const int64_t shapes[][3] = {{7, 5, 9}, {33, 17, 40}};
    int idx = 0;
    for (int si = 0; si < 2; si++)
        for (int sc = 0; sc < 4; sc++)
            for (int al = 0; al < N_ALGOS; al++, idx++) {
                if (quick && al != (sc * 3 + si) % N_ALGOS) continue;
                gemm_case t = base_case(DUET_DTYPE_I32, shapes[si][0], shapes[si][1], shapes[si][2],
                                        &ALGOS[al]);
                set_combo(&t, idx % 32);
                t.alpha = scalars[sc][0];
                t.beta = scalars[sc][1];
                t.data = DATA_WRAP;
                run_in(&g, &t);
            }
    group_done(&g);
}

static void test_determinism(void)
{
    group g = group_begin("determinism (bitwise repeat)");
    for (int d = 0; d < 2; d++)
        for (int al = 0; al < N_ALGOS; al++) {
            if (quick && d == 1) continue;
            gemm_case t = base_case(DTYPES[d], 37, 61, 127, &ALGOS[al]);
            set_combo(&t, al % 32);
            t.alpha = 1.5;
            t.beta = 0.5;
            t.repeat = 1;
            run_in(&g, &t);
        }
    group_done(&g);
}

/* Split-K (AUTO on GPUs, kernels/gemm_splitk.cuh): small outputs over long K. Every GPU tuning
 * row splits a 64 x 64 output once K holds two slices of its minimum (256), so those cases
 * check that the split ran; the others pass with or without one (the cpu backend never
 * splits). Each runs twice and must give the same bits: the split and the order of the
 * reduction are fixed. beta == 0 puts NaN in C (it must not be read), and K is rarely a
 * multiple of the slice. */
static void test_split_k(void)
{
    group g = group_begin("split-K (long K, small C)");
    /* m, n, k, batch, scalars (set_scalars), combo (set_combo), expect a split */
    static const int64_t cases[][7] = {
        {64, 64, 4096, 1, 0, 0, 1},   {64, 64, 4099, 1, 2, 0, 1}, {37, 61, 2053, 1, 3, 0, 1},
        {64, 64, 2048, 3, 1, 0, 1},   {33, 70, 1500, 4, 2, 5, 1}, {64, 64, 1000, 1, 0, 27, 1},
        {130, 70, 777, 2, 3, 18, 0},  {1, 1, 5000, 1, 2, 0, 1},   {64, 64, 300, 1, 0, 0, 0},
        {200, 136, 3001, 1, 0, 3, 0}, {96, 80, 520, 2, 1, 12, 1}, {5, 300, 2500, 1, 2, 9, 1},
    };
    const int n_cases = (int)(sizeof cases / sizeof cases[0]);
    for (int d = 0; d < N_DTYPES; d++)
        for (int i = 0; i < n_cases; i++) {
            if (quick && (i + d) % 3 != 0) continue;
            gemm_case t = base_case(DTYPES[d], cases[i][0], cases[i][1], cases[i][2], &ALGOS[0]);
            t.batch = cases[i][3];
            t.batch_pad = t.batch > 1 ? 3 : 0;
            set_scalars(&t, (int)cases[i][4]);
            set_combo(&t, (int)cases[i][5]);
            t.expect_split = (int)cases[i][6];
            t.repeat = 1;
            t.use_stream = i % 2;
            run_in(&g, &t);
        }
    /* f32 outputs of at most 64 rows (one row of 128-row tiles, at most half of it inside m)
     * run a kernel without the dead rows' products on GPUs with a cp.async ring: every operand
     * layout, split and not. */
    for (int combo = 0; combo < 32; combo++) {
        if (quick && combo % 3 != 0) continue;
        gemm_case t = base_case(DUET_DTYPE_F32, combo & 1 ? 17 : 64, 48, combo & 2 ? 300 : 2056,
                                &ALGOS[0]);
        set_scalars(&t, combo % 4);
        set_combo(&t, combo);
        t.repeat = 1;
        t.use_stream = combo % 2;
        run_in(&g, &t);
    }
    /* alpha == 0 reads neither A nor B (NaN there), even where K would split. */
    for (int d = 0; d < N_DTYPES; d++) {
        gemm_case t = base_case(DTYPES[d], 64, 64, 4096, &ALGOS[0]);
        t.alpha = 0;
        t.beta = d == 2 ? 3 : 0.5;
        t.nan_ab = 1;
        run_in(&g, &t);
    }
    /* Broadcast operands within a split batch. */
    for (int bc = 1; bc < 5; bc++) {
        gemm_case t = base_case(DTYPES[bc % 2], 48, 40, 1200, &ALGOS[0]);
        t.batch = 3;
        t.bcast = bc;
        t.beta = 1;
        t.expect_split = 1;
        t.repeat = 1;
        run_in(&g, &t);
    }
    /* A skinny case of the size that motivated the split (cuBLAS splits it too). */
    if (!quick)
        for (int d = 0; d < 2; d++) {
            gemm_case t = base_case(DTYPES[d], 64, 64, 65536, &ALGOS[0]);
            t.expect_split = 1;
            t.repeat = 1;
            run_in(&g, &t);
            t = base_case(DTYPES[d], 1024, 64, 4096, &ALGOS[0]);
            t.beta = 1;
            t.repeat = 1;
            run_in(&g, &t);
        }
    group_done(&g);
}

/* A narrow C (n or m <= 16): the memory-bound family (kernels/gemm_skinny.cuh) on a GPU, A
 * contiguous along k or along m, B either way, C either way (the transposed problem when m is
 * the narrow side), every column count of its kernels (4, 8, 16) and a partial last one, K from
 * one chunk to many slices (split and not), batches with a broadcast operand, padded and
 * misaligned operands (read element by element), run twice for the same bits. */
static void test_narrow(void)
{
    group g = {"narrow C, memory-bound family", 0, 0};
    static const int64_t shapes[][4] = {
        /* m, n, k, batch */
        {4096, 1, 4096, 1}, {4096, 4, 4096, 1}, {3000, 7, 2000, 1}, {4100, 16, 4097, 1},
        {16, 4096, 4096, 1}, {1, 2048, 3000, 1}, {13, 777, 1500, 1}, {300, 9, 64, 1},
        {257, 13, 5, 1},     {64, 2, 65536, 1},  {200, 16, 1000, 5}, {5, 333, 77, 7},
        {1, 1, 20000, 1},    {70, 3, 129, 300},  {2, 2, 2, 1},       {1000, 11, 1, 1}};
    const int n_shapes = (int)(sizeof shapes / sizeof shapes[0]);
    int idx = 0;
    for (int d = 0; d < N_DTYPES; d++)
        for (int s = 0; s < n_shapes; s++)
            for (int x = 0; x < 4; x++, idx++) {
                if (quick && (x + s + d) % 4 != 0) continue;
                gemm_case t = base_case(DTYPES[d], shapes[s][0], shapes[s][1], shapes[s][2],
                                        &ALGOS[0]);
                /* The family is a GPU one, so on the cpu backend (both size sets) these are
                 * only GEMMs against the reference; a sixteenth of the long sides keeps them
                 * short. */
                if (strcmp(duet_backend_name(), "cpu") == 0) {
                    if (t.m > 64) t.m /= 16;
                    if (t.n > 64) t.n /= 16;
                    if (t.k > 64) t.k = t.k / 16 + 3;
                }
                set_combo(&t, (idx * 5 + x) % 32);
                set_scalars(&t, idx);
                t.batch = shapes[s][3];
                t.batch_pad = t.batch > 1 ? idx % 3 : 0;
                t.bcast = t.batch > 1 ? x % 3 : BC_NONE;
                t.pad = x == 3 ? 1 : 0;
                t.off_a = (size_t)(x == 2);
                t.repeat = 1;
                t.use_stream = idx % 2;
                /* A small problem runs on the compact small-problem kernel (gemm_plan.h,
                 * DT_TINY_STEPS); k within one SIMT step (16) on the tile kernels on NVIDIA
                 * (DT_TINY_K). */
                if (dt_tiny_rule_takes(t.dtype, t.m, t.n, t.k, t.batch, props.compute_units))
                    t.expect_kernel = "gemm_tiny_";
                else if (t.k > 16)
                    t.expect_kernel = "gemm_skinny_";
                run_in(&g, &t);
            }
    group_done(&g);
}

/* Large problems whose A or B rows are not 16-byte aligned (odd leading dimensions), so the
 * GPU AUTO kernels read them element by element over many tiles, interior and edge, and tall
 * ones (below): A stored
 * k-contiguous and m-contiguous, B n-contiguous and k-contiguous, C column-major (the
 * transposed problem), padded (odd) leading dimensions, a batch with a broadcast B, i32. */
static void test_packed_operands(void)
{
    group g = group_begin("large and tall, unaligned operands");
    static const int combos[] = {0, 1, 2, 3, 17, 30};
    for (int c = 0; c < 6; c++) {
        if (quick && c != 0) continue;
        gemm_case t = base_case(DUET_DTYPE_F32, 811, 1031, 645, &ALGOS[0]);
        set_combo(&t, combos[c]);
        set_scalars(&t, c % 4);
        t.pad = c == 5 ? 3 : 0;
        run_in(&g, &t);
    }
    /* More than 8 rows of tiles (a last group of tile rows that is partial, walked first by the
     * GPU AUTO kernels), a partial last row and column of tiles. */
    static const int64_t tall[][3] = {{1100, 300, 200}, {2200, 130, 64}, {1153, 1031, 96}};
    for (int c = 0; c < 3; c++) {
        gemm_case t = base_case(c == 1 ? DUET_DTYPE_I32 : DUET_DTYPE_F32, tall[c][0], tall[c][1],
                                tall[c][2], &ALGOS[0]);
        set_combo(&t, c * 5);
        run_in(&g, &t);
    }
    /* Leading dimensions padded to a multiple of 4 (every f32 row 16-byte aligned: the
     * vectorized loaders) while m, n and k are not: the last tile row and column
     * end inside a 16-byte vector, and k has a partial last step. Both f32 tile families (the
     * 128 x 64 ring below 132 large tiles, the 128 x 128 register-staged tile above). */
    static const int64_t cut[][4] = {
        {1021, 1025, 261, 0}, {1021, 1025, 261, 15}, {1021, 1025, 261, 30}, {2045, 1029, 133, 5}};
    for (int c = 0; c < 4; c++) {
        if (quick && c % 2) continue;
        gemm_case t = base_case(DUET_DTYPE_F32, cut[c][0], cut[c][1], cut[c][2], &ALGOS[0]);
        set_combo(&t, (int)cut[c][3]);
        set_scalars(&t, c);
        t.pad = 3;
        run_in(&g, &t);
    }
    /* The parts of a large-shape problem (src/gpu/gemm_fast_gpu.inc, gemm_fast_run_row) on 132 SMs:
     * {m, n, k, batch, combo, pad, expect, i32}. The tail (dt_gemm_tail_plan): 2200 x 2048 runs
     * 16 rows of 16 tiles unsplit, then its last 152 rows split. The partial last column of
     * tiles (dt_gemm_edge_cols): 2048 x 2052 runs 2048 columns, then 4 as a GEMM of their own;
     * 2200 x 2180 splits both ways. The copies (dt_gemm_pack_pays): 2047 x 2049 x 300 copies B
     * (row-major, 2049 a row), 2049 x 2047 copies A's columns (A^T stored row-major), 2500 x
     * 2501 x 301 both operands' rows, 2501 x 2500 x 301 (both column-major) their columns, and
     * with both transposed B's columns alone; each then splits off the last column. C
     * column-major (combo 17) is the transposed problem: 2049 x 2047 with neither copied (1024
     * multiply-adds per element), whose 1920 columns fill one round where the whole takes two,
     * so its last column still goes; combo 30 with padded rows (no expectations: correctness in
     * every layout). 1536^3 (144 tiles) splits whole on the small shape; 3 x 1024 x 1500 (batch
     * strides not 16-byte multiples) cuts each matrix of the batch at 1408 columns: one round
     * of 264 tiles instead of two. Problems on the split plan (dt_gemm_edge_cols_split): 1023 x
     * 1025 x 600, 1024 x 1028 x 512 and a batch of 2 x 640 x 1030 x 1000 split off their last
     * column; 1025^3 does not; 1536 x 1537 x 600 (156 large tiles, less than a round: the whole
     * problem goes to the split plan) does, by the split plan's rule. */
    static const int64_t parts[][8] = {{2047, 2049, 300, 1, 0, 0, EXPECT_PACK | EXPECT_STRIP, 0},
                                       {2047, 2049, 300, 1, 17, 0, EXPECT_STRIP, 0},
                                       {2047, 2049, 300, 1, 30, 3, 0, 0},
                                       {2049, 2047, 300, 1, 9, 0, EXPECT_PACK | EXPECT_STRIP, 1},
                                       {1536, 1536, 300, 1, 0, 0, 0, 0},
                                       {1024, 1500, 300, 3, 5, 0, EXPECT_STRIP, 0},
                                       {2200, 2048, 300, 1, 0, 0, EXPECT_TAIL, 0},
                                       {2048, 2052, 300, 1, 0, 0, EXPECT_STRIP, 0},
                                       {2200, 2180, 300, 1, 2, 0, EXPECT_STRIP, 1},
                                       {2500, 2501, 301, 1, 0, 0, EXPECT_PACK | EXPECT_STRIP, 0},
                                       {2501, 2500, 301, 1, 12, 0, EXPECT_PACK | EXPECT_STRIP, 0},
                                       {2500, 2501, 301, 1, 3, 0, EXPECT_PACK | EXPECT_STRIP, 1},
                                       {1023, 1025, 600, 1, 0, 0, EXPECT_STRIP, 0},
                                       {1024, 1028, 512, 1, 5, 0, EXPECT_STRIP, 1},
                                       {640, 1030, 1000, 2, 6, 0, EXPECT_STRIP, 0},
                                       {1025, 1025, 1025, 1, 0, 0, 0, 0},
                                       {1536, 1537, 600, 1, 0, 0, EXPECT_STRIP, 0}};
    for (int c = 0; c < (int)(sizeof parts / sizeof parts[0]); c++) {
        if (quick && (c % 3 || (c >= 6 && c != 12))) continue;
        if (host_quick && c != 12) continue;
        gemm_case t = base_case(parts[c][7] ? DUET_DTYPE_I32 : DUET_DTYPE_F32, parts[c][0],
                                parts[c][1], parts[c][2], &ALGOS[0]);
        t.batch = parts[c][3];
        t.batch_pad = t.batch > 1 ? 3 : 0;
        set_combo(&t, (int)parts[c][4]);
        set_scalars(&t, c % 4);
        t.pad = parts[c][5];
        t.expect = (int)parts[c][6];
        t.repeat = 1;
        run_in(&g, &t);
    }
    if (!quick) {
        gemm_case t = base_case(DUET_DTYPE_F32, 513, 701, 1501, &ALGOS[0]);
        t.batch = 2;
        t.batch_pad = 3;
        t.bcast = BC_B_STRIDE0;
        t.beta = 1;
        run_in(&g, &t);
        t = base_case(DUET_DTYPE_I32, 811, 1031, 645, &ALGOS[0]);
        set_scalars(&t, 2);
        run_in(&g, &t);
    }
    group_done(&g);
}

/* f64 GEMMs that sm_90 runs on the DMMA kernel fed by TMA (src/cuda/gemm_dmma_tma.cu: here
 * 240-255 of its 128 x 128 tiles, two rounds at least 90% full on 132 SMs) when A and B
 * have a unit stride and 16-byte aligned bases, leading and batch strides: {m, n, k, batch,
 * combo, pad, off_a, bcast, expect}. The four operand
 * layouts that kernel has (A K- or M-major, B K- or N-major), C column-major (the transposed
 * problem), padded rows (even leading dimensions stay aligned; an odd one goes to the cp.async
 * kernel), batches (a gap of 2 elements keeps the batch stride aligned, 3 does not), a shared B,
 * A one element off its alignment (the cp.async kernel), a k of 5 (one partial slice) and 100
 * (a partial last one), K split in 32 slices of 256 (128 tiles), and a problem of the small
 * tile that the TMA kernel takes with a split of its own (32 tiles, 4 slices). */
static void test_dmma_tma(void)
{
    group g = group_begin("f64 on the DMMA kernel fed by TMA (sm_90)");
    static const int64_t cases[][9] = {{2048, 1920, 100, 1, 0, 0, 0, BC_NONE, EXPECT_TMA},
                                       {2048, 1920, 100, 1, 2, 0, 0, BC_NONE, EXPECT_TMA},
                                       {2000, 1900, 100, 1, 1, 0, 0, BC_NONE, EXPECT_TMA},
                                       {2000, 1900, 100, 1, 3, 0, 0, BC_NONE, EXPECT_TMA},
                                       {2049, 1901, 99, 1, 12, 1, 0, BC_NONE, EXPECT_TMA},
                                       {2047, 1901, 101, 1, 16, 0, 0, BC_NONE, 0},
                                       {2048, 1920, 100, 1, 0, 1, 0, BC_NONE, 0},
                                       {2048, 1921, 5, 1, 0, 1, 0, BC_NONE, EXPECT_TMA},
                                       {1030, 1100, 100, 3, 0, 0, 0, BC_NONE, EXPECT_TMA},
                                       {1030, 1100, 100, 3, 2, 0, 0, BC_NONE, 0},
                                       {1000, 1920, 100, 2, 0, 0, 0, BC_B_STRIDE0, EXPECT_TMA},
                                       {2048, 1920, 100, 1, 0, 0, 1, BC_NONE, 0},
                                       {256, 256, 8192, 1, 0, 0, 0, BC_NONE, EXPECT_TMA},
                                       {512, 1000, 1024, 1, 0, 0, 0, BC_NONE, EXPECT_TMA}};
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        if (quick && c % 3) continue;
        if (host_quick && c != 12) continue; /* the long-K case (k = 8192) */
        gemm_case t = base_case(DUET_DTYPE_F64, cases[c][0], cases[c][1], cases[c][2], &ALGOS[0]);
        t.batch = cases[c][3];
        t.batch_pad = t.batch > 1 ? (c == 9 ? 3 : 2) : 0;
        set_combo(&t, (int)cases[c][4]);
        set_scalars(&t, c % 4);
        t.pad = cases[c][5];
        t.off_a = (size_t)cases[c][6];
        t.bcast = (int)cases[c][7];
        t.expect = (int)cases[c][8];
        t.expect_split = t.k >= 1024; /* the last two: 32 and 4 slices */
        t.repeat = 1;
        run_in(&g, &t);
    }
    group_done(&g);
}

/* The PyCUDA notebook: 1024^3 randn f32 against a double reference, numpy decimal=3. */
static void test_big(void)
{
    group g = group_begin("large f32 (PyCUDA 1024^3)");
    int64_t n = quick ? 256 : 1024;
    gemm_case t = base_case(DUET_DTYPE_F32, n, n, n, &ALGOS[0]);
    t.data = DATA_NORMAL;
    t.decimal = 1.5e-3;
    run_in(&g, &t);
    group_done(&g);
}

static void make_small_operands(duet_dtype dt, duet_buffer *buf, duet_matrix *a, duet_matrix *b,
                                duet_matrix *c)
{
    *a = duet_matrix_make(buf, dt, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    *b = *a;
    b->offset = 16;
    *c = *a;
    c->offset = 32;
}

/* Dtype combinations outside duet.h's table (the supported low-precision ones are in
 * test_gemm_lowp): gemm refuses them by name, whatever the algorithm, and writes nothing
 * (DUET_ERROR_INVALID_ARGUMENT where A and B differ, DUET_ERROR_UNSUPPORTED otherwise). */
static void test_unsupported(void)
{
    group g = group_begin("unsupported dtypes");
    static const duet_dtype combos[][3] = {
        {DUET_DTYPE_F16, DUET_DTYPE_F16, DUET_DTYPE_BF16},
        {DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_DTYPE_F16},
        {DUET_DTYPE_F16, DUET_DTYPE_BF16, DUET_DTYPE_F32},
        {DUET_DTYPE_I8, DUET_DTYPE_I8, DUET_DTYPE_I8},
        {DUET_DTYPE_I8, DUET_DTYPE_I8, DUET_DTYPE_F32},
        {DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_DTYPE_F16},
        {DUET_DTYPE_F64, DUET_DTYPE_F64, DUET_DTYPE_F32},
        {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_F32},
        {DUET_DTYPE_I32, DUET_DTYPE_I32, DUET_DTYPE_F32},
        {DUET_DTYPE_F16, DUET_DTYPE_F16, DUET_DTYPE_F64},
    };
    static const int algos[] = {0, 1, 6, 9};
    for (size_t d = 0; d < sizeof combos / sizeof combos[0]; d++)
        for (int al = 0; al < 4; al++) {
            char name[64];
            snprintf(name, sizeof name, "A %s, B %s, C %s", duet_dtype_name(combos[d][0]),
                     duet_dtype_name(combos[d][1]), duet_dtype_name(combos[d][2]));
            unsigned char host[3][16 * 8], back[16 * 8];
            duet_buffer *buf[3] = {NULL, NULL, NULL};
            duet_matrix m[3];
            for (int x = 0; x < 3; x++) {
                duet_dtype dt = combos[d][x];
                dt_fill_sentinel(host[x], dt, 16);
                if (x < 2)
                    for (int e = 0; e < 16; e++) dt_set(host[x], dt, (size_t)e, (double)(e % 5));
                buf[x] = upload(host[x], 16 * duet_dtype_size(dt), name);
                m[x] = duet_matrix_make(buf[x], dt, DUET_LAYOUT_ROW_MAJOR, 4, 4);
            }
            if (buf[0] && buf[1] && buf[2]) {
                duet_op_options opt;
                memset(&opt, 0, sizeof opt);
                opt.algorithm = ALGOS[algos[al]].algo;
                opt.tile = ALGOS[algos[al]].tile;
                opt.launch = ALGOS[algos[al]].launch;
                g.cases++;
                int before = dt_failures;
                /* A and B that differ are a bad argument; the rest is outside the table. */
                DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &m[0], &m[1], 0.0, &m[2], &opt),
                         combos[d][0] != combos[d][1] ? DUET_ERROR_INVALID_ARGUMENT
                                                      : DUET_ERROR_UNSUPPORTED,
                         name);
                for (int x = 0; x < 3; x++) {
                    size_t bytes = 16 * duet_dtype_size(combos[d][x]);
                    DT_OK(duet_buffer_read(NULL, buf[x], 0, back, bytes));
                    DT_CHECK(memcmp(host[x], back, bytes) == 0, "%s gemm (%s) wrote to a buffer",
                             name, ALGOS[algos[al]].label);
                }
                if (dt_failures != before) g.failed++;
            }
            for (int x = 0; x < 3; x++)
                if (buf[x]) DT_OK(duet_buffer_destroy(buf[x]));
        }
    group_done(&g);
}

/* gemm-specific argument errors: each is refused before anything is written. */
static void test_bad_arguments(void)
{
    group g = group_begin("gemm argument errors");
    float host[64];
    for (int i = 0; i < 64; i++) host[i] = (float)i;
    duet_buffer *buf = upload(host, sizeof host, "bad arguments");
    duet_buffer *ibuf = upload(host, sizeof host, "bad arguments i32");
    if (!buf || !ibuf) return;
    int before = dt_failures;
    duet_matrix a, b, c, x;
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
#define RESET() make_small_operands(DUET_DTYPE_F32, buf, &a, &b, &c)
#define REFUSED(call, want, word)                                                                  \
    do {                                                                                           \
        g.cases++;                                                                                 \
        DT_FAILS(call, want, word);                                                                \
    } while (0)

    RESET(); /* inner dimensions disagree */
    b.rows = 3;
    b.cols = 4;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "duet_gemm");
    RESET(); /* C is not op(A) op(B)'s shape */
    c.cols = 3;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "duet_gemm");
    RESET(); /* A and B disagree (B's f64 bytes stay clear of C): a bad argument */
    b.dtype = DUET_DTYPE_F64;
    b.offset = 0;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "A f32, B f64, C f32");
    RESET(); /* the header's own example: lda (3) is smaller than the row length of A (4) */
    a.ld = 3;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "lda");
    RESET(); /* A runs one element past its buffer */
    a.offset = 49;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "duet_gemm");
    RESET(); /* C overlaps A */
    c.offset = 8;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "duet_gemm");
    RESET(); /* a broadcast output makes no sense */
    a.rows = b.rows = b.cols = c.rows = c.cols = 2;
    a.cols = 2;
    a.ld = b.ld = c.ld = 2;
    a.batch_count = b.batch_count = c.batch_count = 3;
    a.batch_stride = b.batch_stride = 4;
    c.batch_stride = 0;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "duet_gemm");
    c.batch_stride = 4;
    a.batch_count = 2; /* neither C's batch nor 1 */
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "duet_gemm");
    RESET(); /* i32 scalars must be integers in the int32 range */
    make_small_operands(DUET_DTYPE_I32, ibuf, &a, &b, &c);
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 0.5, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "alpha");
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 3e9, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "beta");
    RESET(); /* tiles are 1..32 */
    opt.algorithm = DUET_ALGO_TILED;
    opt.tile = 33;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, &opt),
            DUET_ERROR_INVALID_ARGUMENT, "tile");
    opt.tile = -1;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, &opt),
            DUET_ERROR_INVALID_ARGUMENT, "tile");
    opt.tile = 0; /* the padded transpose tile has no meaning for gemm */
    opt.algorithm = DUET_ALGO_TILED_PADDED;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, &opt), DUET_ERROR_UNSUPPORTED,
            "duet_gemm");
    opt.algorithm = DUET_ALGO_GRID_STRIDE; /* more threads per block than the device has */
    opt.launch.grid = (duet_dim3){1, 1, 1};
    opt.launch.block = (duet_dim3){(uint32_t)props.max_threads_per_block, 2, 1};
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, &opt),
            DUET_ERROR_INVALID_ARGUMENT, "duet_gemm");
    memset(&opt, 0, sizeof opt);
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, NULL, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "duet_gemm");
    x = a;
    x.buffer = NULL;
    REFUSED(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &x, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_HANDLE, "duet_gemm");
    REFUSED(duet_gemm(NULL, (duet_op)7, DUET_OP_N, 1, &a, &b, 0, &c, NULL),
            DUET_ERROR_INVALID_ARGUMENT, "duet_gemm");
#undef RESET
#undef REFUSED
    float back[64];
    DT_OK(duet_buffer_read(NULL, buf, 0, back, sizeof back));
    DT_CHECK(memcmp(host, back, sizeof host) == 0, "a refused gemm wrote to its buffer");
    DT_OK(duet_buffer_read(NULL, ibuf, 0, back, sizeof back));
    DT_CHECK(memcmp(host, back, sizeof host) == 0, "a refused i32 gemm wrote to its buffer");
    DT_OK(duet_buffer_destroy(buf));
    DT_OK(duet_buffer_destroy(ibuf));
    if (dt_failures != before) g.failed = 1;
    group_done(&g);
}

int main(int argc, char **argv)
{
    quick = dt_quick_mode(argc, argv);
    host_quick = quick && strcmp(duet_backend_name(), "cpu") == 0;
    ctx = dt_open_or_skip();
    dt_seed(20240611);
    DT_OK(duet_stream_create(ctx, &side_stream));
    DT_OK(duet_context_get_props(ctx, &props));
    printf("test_gemm on %s (%s size set)\n", duet_backend_name(), quick ? "quick" : "full");
    test_harness();
    test_sizes();
    test_layouts();
    test_tile_edges();
    test_odd_shapes();
    test_batches();
    test_blas_edges();
    test_i32_wrap();
    test_determinism();
    test_split_k();
    test_narrow();
    test_packed_operands();
    test_dmma_tma();
    test_big();
    test_unsupported();
    test_bad_arguments();
    if (side_stream) DT_OK(duet_stream_destroy(side_stream));
    DT_OK(duet_context_destroy(ctx));
    return dt_finish("test_gemm");
}
