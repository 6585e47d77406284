/* test_gemm_lowp.c - duet_gemm conformance: f16, bf16 and i8 inputs, f32 TF32 and 3xTF32 modes. */
#include "harness.h"

#include <float.h>

/* Every backend is checked against the reference of harness.c (f64 sums for floats, wrapping
 * i32 for ints; f16/bf16 read and rounded by the harness's own conversions) with a gauge
 * bound, never against another backend: GPUs sum in another order on their matrix cores.
 * Only two runs of one backend are compared bit for bit. */

static duet_context *ctx;
static duet_device_props props;
/* DUET_GEMM_TC_SMALL=all: the small tensor-core kernel runs ahead of every planner rule, so
 * the kernel names the narrow-C cases expect do not apply. */
static int tc_small_all;
static int quick;
/* The quick set on the cpu backend: one operand layout per dtype combination (not four) of the
 * long-k aligned shape, which on the host is only a large GEMM against its reference; the full
 * set runs every layout on every backend. */
static int host_quick;

/* ---- the combinations --------------------------------------------------------------------- */

typedef struct combo {
    duet_dtype in, out;
    duet_math_mode math;
    const char *label;
} combo;

static const combo COMBOS[] = {
    {DUET_DTYPE_F16, DUET_DTYPE_F16, DUET_MATH_DEFAULT, "f16->f16"},
    {DUET_DTYPE_F16, DUET_DTYPE_F32, DUET_MATH_DEFAULT, "f16->f32"},
    {DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, "bf16->bf16"},
    {DUET_DTYPE_BF16, DUET_DTYPE_F32, DUET_MATH_DEFAULT, "bf16->f32"},
    {DUET_DTYPE_I8, DUET_DTYPE_I32, DUET_MATH_DEFAULT, "i8->i32"},
    {DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_TF32, "f32 tf32"},
    {DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_3XTF32, "f32 3xtf32"},
};
#define N_COMBOS ((int)(sizeof COMBOS / sizeof COMBOS[0]))

static int is_int(const combo *cb) { return cb->out == DUET_DTYPE_I32; }

/* ---- one case ------------------------------------------------------------------------------ */

enum { BC_NONE, BC_A_STRIDE0, BC_B_STRIDE0, BC_A_COUNT1, BC_B_COUNT1 };
static const char *const BC_NAMES[] = {"none", "A stride 0", "B stride 0", "A count 1",
                                       "B count 1"};

enum {
    DATA_RANDOM, /* uniform [-1, 1) (i8: -128..127), rounded to the input dtype         */
    DATA_INT,    /* small integers (-3..3): exact products and sums                       */
    DATA_BIG,    /* entries 256 (f16) or 2^63 (bf16): sums of 8 products overflow C           */
    DATA_I8_MAX  /* i8 -128 and 127 only: sums of k > 131072 wrap modulo 2^32              */
};

typedef struct gemm_case {
    const combo *cb;
    int64_t m, n, k;
    duet_op op_a, op_b;
    duet_layout la, lb, lc;
    int64_t pad;
    size_t off_a, off_b, off_c;
    int64_t batch, batch_pad;
    int bcast;
    double alpha, beta;
    int data;
    int nan_ab;  /* A and B wholly NaN: only with alpha == 0 */
    int poison;  /* one NaN in A (row 0) and one inf in B (column n - 1) */
    int repeat;  /* a second call must give the same bits */
    double *err; /* if not NULL: receives the Frobenius norm of C - Cref */
    const char *expect_kernel; /* GPU: the kernel name must begin with this */
} gemm_case;

#define GUARD 11

static void describe(const gemm_case *t, char *buf, size_t size)
{
    snprintf(buf, size,
             "%s M=%lld N=%lld K=%lld A:%s,%s B:%s,%s C:%s pad=%lld off=(%zu,%zu,%zu) "
             "batch=%lld bcast=%s alpha=%g beta=%g data=%d",
             t->cb->label, (long long)t->m, (long long)t->n, (long long)t->k,
             t->la == DUET_LAYOUT_ROW_MAJOR ? "row" : "col", t->op_a == DUET_OP_N ? "N" : "T",
             t->lb == DUET_LAYOUT_ROW_MAJOR ? "row" : "col", t->op_b == DUET_OP_N ? "N" : "T",
             t->lc == DUET_LAYOUT_ROW_MAJOR ? "row" : "col", (long long)t->pad, t->off_a, t->off_b,
             t->off_c, (long long)t->batch, BC_NAMES[t->bcast], t->alpha, t->beta, t->data);
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
        m.batch_stride = one + 5; /* ignored for a single matrix */
    } else {
        m.batch_stride = batch > 1 ? one + batch_pad : 0;
    }
    return m;
}

static double gen_value(const gemm_case *t, duet_dtype dt)
{
    switch (t->data) {
    case DATA_INT: return (double)dt_rand_int(-3, 3);
    case DATA_BIG: /* all positive: the f32 partial sums only grow, in any order */
        return dt == DUET_DTYPE_F16 ? 256.0 : dt == DUET_DTYPE_BF16 ? 0x1p63 : 0x1p60;
    case DATA_I8_MAX: return dt_rand_int(0, 1) ? 127.0 : -128.0;
    default:
        if (dt == DUET_DTYPE_I8) return (double)dt_rand_int(-128, 127);
        if (dt == DUET_DTYPE_I32) return (double)dt_rand_int(-100000, 100000);
        return dt_rand_uniform(-1.0, 1.0);
    }
}

static void fill_elements(const gemm_case *t, const duet_matrix *m, void *data)
{
    int64_t nb = m->batch_count > 1 ? m->batch_count : 1;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++)
                dt_set(data, m->dtype, dt_matrix_index(m, b, i, j), gen_value(t, m->dtype));
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

/* The unit roundoff of C's dtype (half an ulp, relative) and half its smallest subnormal. */
static void out_rounding(duet_dtype dt, double *u, double *tiny)
{
    switch (dt) {
    case DUET_DTYPE_F16: *u = 0x1p-11, *tiny = 0x1p-25; return;
    case DUET_DTYPE_BF16: *u = 0x1p-8, *tiny = 0x1p-134; return;
    default: *u = 0x1p-24, *tiny = 0x1p-150; return;
    }
}

/* The bound on |C - Cref| for one output. Products of f16 and bf16 inputs are exact in f32, so
 * an f32 accumulation of k of them and the f32 epilogue err by at most (2k + 4) eps32 times
 * the gauge (|alpha| sum |a||b| + |beta||c|), the constant test_gemm uses for exact f32; the
 * one rounding to C adds half an ulp of C's dtype. TF32 (when the backend reports it ran)
 * rounds each input to a 10-bit mantissa: up to 2^-10 relative per input (truncating hardware
 * included), so about 2^-9 per product. */
static double bound_for(const gemm_case *t, double ref, double gauge, int tf32_ran)
{
    double acc = (2.0 * (double)t->k + 4.0) * FLT_EPSILON * gauge;
    if (tf32_ran) acc += 0x1p-9 * gauge * 1.5;
    double u, tiny;
    out_rounding(t->cb->out, &u, &tiny);
    return acc + u * (fabs(ref) + acc) + tiny;
}

static duet_status run_gemm(const gemm_case *t, duet_buffer *ab, duet_buffer *bb, duet_buffer *cb,
                            const duet_matrix *a, const duet_matrix *b, duet_matrix *c,
                            duet_math_mode math, duet_launch_info *info)
{
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.math = math;
    opt.info = info;
    memset(info, 'X', sizeof *info);
    duet_matrix am = *a, bm = *b;
    am.buffer = ab;
    bm.buffer = bb;
    c->buffer = cb;
    return duet_gemm(NULL, t->op_a, t->op_b, t->alpha, &am, &bm, t->beta, c, &opt);
}

/* What options.info must say: the kernel names A's dtype (cpu: "cpu_"), and the math mode that
 * ran is DEFAULT or the one asked for (always DEFAULT on the cpu backend). */
static void check_info(const gemm_case *t, const duet_launch_info *info, const char *what)
{
    int empty = t->m == 0 || t->n == 0;
    DT_CHECK(memchr(info->kernel, '\0', sizeof info->kernel) != NULL,
             "%s: info.kernel is not NUL-terminated", what);
    if (memchr(info->kernel, '\0', sizeof info->kernel) == NULL) return;
    if (empty) {
        DT_CHECK(info->launches == 0, "%s: info.launches %d for an empty gemm", what,
                 info->launches);
        return;
    }
    DT_CHECK(info->math == DUET_MATH_DEFAULT || info->math == t->cb->math,
             "%s: info.math %d, asked %d", what, (int)info->math, (int)t->cb->math);
    int is_cpu = strcmp(duet_backend_name(), "cpu") == 0;
    if (is_cpu)
        DT_CHECK(info->math == DUET_MATH_DEFAULT, "%s: the cpu backend reported math %s", what,
                 duet_math_mode_name(info->math));
    int scale_only = t->k == 0 || t->alpha == 0.0;
    if (scale_only && t->beta == 1.0) return; /* C = C: nothing need be launched */
    DT_CHECK(info->launches >= 1, "%s: info.launches %d", what, info->launches);
    if (is_cpu)
        DT_CHECK(strncmp(info->kernel, "cpu_", 4) == 0, "%s: cpu kernel name \"%s\"", what,
                 info->kernel);
    if (scale_only) return; /* a scale of C by beta may be an elementwise kernel */
    const char *dname = duet_dtype_name(t->cb->in);
    DT_CHECK(strstr(info->kernel, dname) != NULL, "%s: kernel name \"%s\" does not name %s", what,
             info->kernel, dname);
    if (t->expect_kernel && !is_cpu)
        DT_CHECK(strncmp(info->kernel, t->expect_kernel, strlen(t->expect_kernel)) == 0,
                 "%s: ran \"%s\", not %s...", what, info->kernel, t->expect_kernel);
}

/* Runs one case end to end; returns 1 when every check of it passed. */
static int run_case(const gemm_case *t)
{
    int failures_before = dt_failures;
    char what[512];
    describe(t, what, sizeof what);
    const duet_dtype it = t->cb->in, ot = t->cb->out;
    const size_t ie = duet_dtype_size(it), oe = duet_dtype_size(ot);
    const int64_t nb = t->batch > 1 ? t->batch : 1;

    duet_matrix a = describe_matrix(it, t->la, t->op_a == DUET_OP_N ? t->m : t->k,
                                    t->op_a == DUET_OP_N ? t->k : t->m, t->pad, t->off_a, t->batch,
                                    t->batch_pad,
                                    t->bcast == BC_A_STRIDE0  ? 1
                                    : t->bcast == BC_A_COUNT1 ? 2
                                                              : 0);
    duet_matrix b = describe_matrix(it, t->lb, t->op_b == DUET_OP_N ? t->k : t->n,
                                    t->op_b == DUET_OP_N ? t->n : t->k, t->pad, t->off_b, t->batch,
                                    t->batch_pad,
                                    t->bcast == BC_B_STRIDE0  ? 1
                                    : t->bcast == BC_B_COUNT1 ? 2
                                                              : 0);
    duet_matrix c =
        describe_matrix(ot, t->lc, t->m, t->n, t->pad, GUARD + t->off_c, t->batch, t->batch_pad, 0);
    size_t a_elems = dt_matrix_span_elems(&a), b_elems = dt_matrix_span_elems(&b);
    size_t c_elems = dt_matrix_span_elems(&c) + GUARD;

    unsigned char *a_h = malloc(a_elems * ie + 1), *b_h = malloc(b_elems * ie + 1);
    unsigned char *c_h = malloc(c_elems * oe), *c_ref = malloc(c_elems * oe);
    unsigned char *c_out = malloc(c_elems * oe), *c_out2 = malloc(c_elems * oe);
    unsigned char *is_c = calloc(c_elems, 1);
    size_t n_out = (size_t)(nb * t->m * t->n) + 1;
    double *ref = malloc(n_out * sizeof *ref), *gauge = malloc(n_out * sizeof *gauge);
    if (!a_h || !b_h || !c_h || !c_ref || !c_out || !c_out2 || !is_c || !ref || !gauge) {
        fprintf(stderr, "%s: out of host memory\n", what);
        exit(1);
    }

    /* Padding of A and B holds the NaN sentinel (i8: 0x5A): reading it shows in C. */
    dt_fill_sentinel(a_h, it, a_elems);
    dt_fill_sentinel(b_h, it, b_elems);
    if (t->nan_ab) {
        if (it != DUET_DTYPE_I8)
            for (size_t x = 0; x < a_elems; x++) dt_set(a_h, it, x, NAN);
        if (it != DUET_DTYPE_I8)
            for (size_t x = 0; x < b_elems; x++) dt_set(b_h, it, x, NAN);
    } else {
        fill_elements(t, &a, a_h);
        fill_elements(t, &b, b_h);
    }
    if (t->poison && t->m > 0 && t->n > 0 && t->k > 0) {
        dt_set(a_h, it, dt_matrix_index(&a, 0, 0, 0), NAN); /* op(A)(0, 0) whatever the op */
        int64_t bj = t->op_b == DUET_OP_N ? t->n - 1 : 0, bi = t->op_b == DUET_OP_N ? 0 : t->n - 1;
        dt_set(b_h, it, dt_matrix_index(&b, 0, bi, bj), INFINITY); /* op(B)(0, n - 1) */
    }
    dt_fill_sentinel(c_h, ot, c_elems);
    for (int64_t bi = 0; bi < nb; bi++)
        for (int64_t i = 0; i < t->m; i++)
            for (int64_t j = 0; j < t->n; j++) {
                size_t ci = dt_matrix_index(&c, bi, i, j);
                is_c[ci] = 1;
                double v;
                if (t->beta != 0.0)
                    v = t->data == DATA_BIG ? gen_value(t, ot) / 4 : gen_value(t, ot);
                else if (ot == DUET_DTYPE_I32)
                    v = (double)dt_rand_int(INT32_MIN, INT32_MAX);
                else
                    v = NAN; /* beta == 0 must not read C */
                dt_set(c_h, ot, ci, v);
            }
    memcpy(c_ref, c_h, c_elems * oe);

    duet_buffer *ab = upload(a_h, a_elems * ie, what);
    duet_buffer *bb = upload(b_h, b_elems * ie, what);
    duet_buffer *cb = upload(c_h, c_elems * oe, what);
    if (ab && bb && cb) {
        duet_launch_info info;
        duet_status st = run_gemm(t, ab, bb, cb, &a, &b, &c, t->cb->math, &info);
        char msg[256];
        snprintf(msg, sizeof msg, "%s", duet_last_error());
        DT_CHECK(st == DUET_SUCCESS, "%s: duet_gemm -> %s: %s", what, duet_status_string(st), msg);
        if (st == DUET_SUCCESS) {
            DT_OK(duet_buffer_read(NULL, cb, 0, c_out, c_elems * oe));
            check_info(t, &info, what);
            int tf32_ran = info.math == DUET_MATH_TF32;
            dt_ref_gemm_ex(t->op_a, t->op_b, t->alpha, &a, a_h, &b, b_h, t->beta, &c, c_ref, ref,
                           gauge);
            long bad = 0;
            double err2 = 0.0;
            for (int64_t bi = 0; bi < nb; bi++)
                for (int64_t i = 0; i < t->m; i++)
                    for (int64_t j = 0; j < t->n; j++) {
                        size_t ci = dt_matrix_index(&c, bi, i, j);
                        size_t pk = (size_t)((bi * t->m + i) * t->n + j);
                        double got = dt_get(c_out, ot, ci);
                        /* c_ref holds the reference rounded once to C's dtype. */
                        double want = dt_get(c_ref, ot, ci);
                        double bound = 0.0, err = 0.0;
                        int ok;
                        if (is_int(t->cb)) {
                            ok = got == want;
                        } else if (isnan(ref[pk])) {
                            ok = isnan(got);
                        } else if (isinf(want)) {
                            /* Overflow (or an inf input): the sign of inf must be right. */
                            ok = got == want;
                        } else {
                            err = fabs(got - ref[pk]);
                            bound = bound_for(t, ref[pk], gauge[pk], tf32_ran);
                            ok = err <= bound;
                            err2 += err * err;
                        }
                        if (!ok && bad++ < 3)
                            fprintf(stderr,
                                    "  %s: C[b=%lld, %lld, %lld] = %.17g, want %.17g (exact "
                                    "%.17g, |diff| %.3g, bound %.3g)\n",
                                    what, (long long)bi, (long long)i, (long long)j, got, want,
                                    ref[pk], err, bound);
                    }
            DT_CHECK(bad == 0, "%s: %ld of %lld elements of C wrong", what, bad,
                     (long long)(nb * t->m * t->n));
            if (t->err) *t->err = sqrt(err2);

            long hit = 0;
            size_t first_hit = 0;
            for (size_t x = 0; x < c_elems; x++)
                if (!is_c[x] && !dt_is_sentinel(c_out, ot, x) && hit++ == 0) first_hit = x;
            DT_CHECK(hit == 0, "%s: %ld guard elements overwritten, first at %zu (C at %zu)", what,
                     hit, first_hit, c.offset);

            if (t->repeat) {
                DT_OK(duet_buffer_write(NULL, cb, 0, c_h, c_elems * oe));
                duet_launch_info info2;
                st = run_gemm(t, ab, bb, cb, &a, &b, &c, t->cb->math, &info2);
                DT_CHECK(st == DUET_SUCCESS, "%s: second duet_gemm -> %s", what,
                         duet_status_string(st));
                DT_OK(duet_buffer_read(NULL, cb, 0, c_out2, c_elems * oe));
                DT_CHECK(memcmp(c_out, c_out2, c_elems * oe) == 0,
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

/* ---- case builders ------------------------------------------------------------------------- */

static gemm_case base_case(const combo *cb, int64_t m, int64_t n, int64_t k)
{
    gemm_case t;
    memset(&t, 0, sizeof t);
    t.cb = cb;
    t.m = m;
    t.n = n;
    t.k = k;
    t.op_a = t.op_b = DUET_OP_N;
    t.la = t.lb = t.lc = DUET_LAYOUT_ROW_MAJOR;
    t.batch = 1;
    t.alpha = 1.0;
    t.data = DATA_RANDOM;
    return t;
}

/* combo in 0..31: op_a, op_b, then the layouts of A, B and C. */
static void set_layouts(gemm_case *t, int x)
{
    t->op_a = x & 1 ? DUET_OP_T : DUET_OP_N;
    t->op_b = x & 2 ? DUET_OP_T : DUET_OP_N;
    t->la = x & 4 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
    t->lb = x & 8 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
    t->lc = x & 16 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
}

/* alpha/beta pairs; integer C needs integers. */
static void set_scalars(gemm_case *t, int which)
{
    static const double f[4][2] = {{1, 0}, {1, 1}, {1.5, -0.75}, {-0.5, 2}};
    static const double i[4][2] = {{1, 0}, {1, 1}, {2, -1}, {-3, 2}};
    const double(*p)[2] = is_int(t->cb) ? i : f;
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

/* ---- groups -------------------------------------------------------------------------------- */

/* Shapes 0 and 1..20 in every op pair and layout pair (C's layout alternating), with padded
 * leading dimensions and odd offsets (2- and 1-byte elements off every vector alignment). */
static void test_small(void)
{
    group g = group_begin("shapes 0..20 x ops x layouts");
    for (int d = 0; d < N_COMBOS; d++)
        for (int x = 0; x < 16; x++)
            for (int s = 0; s <= 20; s++) {
                if (quick && (s + x + d) % 4 != 0) continue;
                int64_t m = s, n = (s * 7 + x) % 21, k = (s * 5 + 3 * x + d) % 21;
                gemm_case t = base_case(&COMBOS[d], m, n, k);
                set_layouts(&t, x | ((s + d) & 1) << 4);
                set_scalars(&t, s + x);
                t.pad = (s + x) % 3 == 0 ? 3 : 0;
                t.off_a = (size_t)(s % 3);
                t.off_b = (size_t)(x % 3);
                t.off_c = (size_t)((s + x) % 2);
                run_in(&g, &t);
            }
    group_done(&g);
}

/* The edges of 16-, 32-, 64- and 128-wide tiles along each of m, n and k, and primes. */
static void test_tile_edges(void)
{
    group g = group_begin("tile edges and primes");
    static const int64_t edges[] = {15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129};
    static const int64_t primes[][3] = {
        {37, 41, 43}, {97, 101, 103}, {131, 7, 257}, {2, 251, 131}, {211, 199, 3}};
    int idx = 0;
    for (int d = 0; d < N_COMBOS; d++) {
        for (int e = 0; e < 12; e++)
            for (int axis = 0; axis < 3; axis++, idx++) {
                if (quick && idx % 4 != 0) continue;
                int64_t v = edges[e], other = 24 + e;
                gemm_case t = base_case(&COMBOS[d], axis == 0 ? v : other, axis == 1 ? v : other,
                                        axis == 2 ? v : other);
                set_layouts(&t, idx % 32);
                set_scalars(&t, idx);
                t.pad = idx % 2;
                run_in(&g, &t);
            }
        for (int p = 0; p < 5; p++, idx++) {
            if (quick && p > 1) continue;
            gemm_case t = base_case(&COMBOS[d], primes[p][0], primes[p][1], primes[p][2]);
            set_layouts(&t, idx * 7 % 32);
            set_scalars(&t, idx);
            t.off_a = 1;
            t.off_b = 3;
            t.off_c = 1;
            run_in(&g, &t);
        }
    }
    group_done(&g);
}

/* Operands on 16-byte boundaries, with leading dimensions and batch strides of whole 16 bytes:
 * the kernels that copy A and B as they lie (on NVIDIA the swizzled mma.sync kernel, with both
 * operands contiguous along k, or 16-bit ones along m or n) take these. m, n and k share their
 * residue modulo 16, so one pad aligns every leading dimension; the shapes cross 128-wide
 * tiles along m and n and leave partial k-tiles (k = 65: one element past a 64-wide tile), in
 * every op and layout pair, batched or not, with C aligned for vector stores (off_c 5: GUARD +
 * 5 = 16 elements) or not. */
static void test_aligned(void)
{
    group g = group_begin("aligned operands, tile edges");
    static const int64_t shapes[][4] = {{256, 128, 64, 0},  {200, 136, 152, 8}, {129, 257, 65, 15},
                                        {300, 300, 1004, 4}, {17, 1, 33, 15},    {130, 2, 258, 14}};
    int idx = 0;
    for (int d = 0; d < N_COMBOS; d++)
        for (int s = 0; s < 6; s++)
            for (int x = 0; x < 16; x++, idx++) {
                if (quick && (x + s + d) % 4 != 0) continue;
                if (host_quick && s == 3 && (x + s + d) % 16 != 0) continue;
                gemm_case t = base_case(&COMBOS[d], shapes[s][0], shapes[s][1], shapes[s][2]);
                set_layouts(&t, x | (idx & 1) << 4);
                set_scalars(&t, idx);
                t.pad = shapes[s][3];
                t.off_c = idx % 3 == 0 ? 0 : 5;
                if (s == 1 || s == 2) {
                    t.batch = 2;
                    t.batch_pad = 16 + shapes[s][3]; /* a stride of whole 16 elements */
                }
                run_in(&g, &t);
            }
    group_done(&g);
}

/* Tall-skinny, short-wide and long-k shapes, which split work along a single axis. */
static void test_skinny(void)
{
    group g = group_begin("tall-skinny, short-wide, long k");
    static const int64_t shapes[][3] = {{1000, 3, 50}, {3, 1000, 50}, {700, 1, 300}, {1, 700, 300},
                                        {2, 3, 3000},  {600, 600, 1}, {513, 5, 600}, {5, 513, 600}};
    for (int d = 0; d < N_COMBOS; d++)
        for (int s = 0; s < 8; s++) {
            if (quick && (s + d) % 3 != 0) continue;
            gemm_case t = base_case(&COMBOS[d], shapes[s][0], shapes[s][1], shapes[s][2]);
            set_layouts(&t, (s * 5 + d) % 32);
            set_scalars(&t, s + d);
            run_in(&g, &t);
        }
    group_done(&g);
}

/* A narrow C (n or m <= 64): A contiguous along k on 16-byte boundaries with at most 16
 * columns takes the memory-bound family's mma.sync form on NVIDIA (kernels/gemm_skinny.cuh;
 * 8 and 16 columns and partial ones), 16-bit A with rows off 16 bytes its SIMT K-major form,
 * the rest the tile families; C either way (the
 * transposed problem when m is narrow), K from a few elements to many slices, slices of
 * several windows of B (9000 x 16 x 3000), k ending inside a 16-byte vector of rows that start
 * on 16 bytes (2000 x 8 x 1001, pad 7), batches with broadcast operands, misaligned operands,
 * run twice for the same bits. */
static void test_narrow(void)
{
    group g = {"narrow C, memory-bound family", 0, 0};
    static const int64_t shapes[][5] = {
        /* m, n, k, batch, pad (16-bit: 8 keeps rows of a multiple of 8 on 16 bytes) */
        {4096, 1, 4096, 1, 0},  {4096, 16, 4096, 1, 0}, {16, 4096, 4096, 1, 0},
        {2048, 8, 2048, 1, 0},  {1000, 24, 1024, 1, 0}, {40, 1024, 2048, 1, 0},
        {3000, 64, 512, 1, 0},  {64, 3000, 512, 1, 0},  {4100, 33, 4104, 1, 0},
        {300, 5, 1000, 1, 3},   {129, 3, 77, 1, 1},     {256, 16, 256, 9, 0},
        {1, 1, 16384, 1, 0},    {2, 700, 64, 1, 0},     {96, 12, 128, 300, 0},
        {9000, 16, 3000, 1, 0}, {2000, 8, 1001, 1, 7}};
    const int n_shapes = (int)(sizeof shapes / sizeof shapes[0]);
    int idx = 0;
    for (int d = 0; d < N_COMBOS; d++) {
        if (COMBOS[d].math == DUET_MATH_3XTF32) continue;
        for (int s = 0; s < n_shapes; s++)
            for (int x = 0; x < 4; x++, idx++) {
                if (quick && (x + s + d) % 4 != 0) continue;
                gemm_case t = base_case(&COMBOS[d], shapes[s][0], shapes[s][1], shapes[s][2]);
                /* The family is a GPU one, so on the cpu backend (both size sets) these are
                 * only GEMMs against the reference; a sixteenth of the long sides keeps them
                 * short. */
                if (strcmp(duet_backend_name(), "cpu") == 0) {
                    if (t.m > 64) t.m /= 16;
                    if (t.n > 64) t.n /= 16;
                    if (t.k > 64) t.k = t.k / 16 + 3;
                }
                /* x 0, 1: A k-contiguous (op N row-major, op T column-major); 2, 3: m-contiguous. */
                const int a_bits = x < 2 ? (x == 0 ? 0 : 5) : (x == 2 ? 4 : 1);
                const int b_bits = ((idx % 4) << 1) & 10;
                set_layouts(&t, a_bits | b_bits | (idx & 1) << 4);
                set_scalars(&t, idx);
                t.batch = shapes[s][3];
                t.batch_pad = t.batch > 1 ? 16 : 0;
                t.bcast = t.batch > 1 ? idx % 3 : BC_NONE;
                t.pad = shapes[s][4];
                t.off_a = (size_t)(x == 1 && s % 2 ? 1 : 0);
                t.repeat = 1;
                /* The family's mma.sync form (NVIDIA sm_80+) must take f16, bf16 and i8 with
                 * at most 16 columns and A's rows on 16-byte boundaries (unless
                 * DUET_GEMM_TC_SMALL=all puts the small tensor-core kernel first). */
                const int64_t row_bytes = (t.k + t.pad) * (int64_t)duet_dtype_size(COMBOS[d].in);
                if (strcmp(duet_backend_name(), "cuda") == 0 && !tc_small_all &&
                    props.capability_major >= 8 && COMBOS[d].math == DUET_MATH_DEFAULT &&
                    COMBOS[d].in != DUET_DTYPE_F32 && t.n <= 16 && t.m >= t.n && x < 2 &&
                    t.off_a == 0 && t.batch == 1 && row_bytes % 16 == 0)
                    t.expect_kernel = "gemm_skinny_kmajor_mma_";
                /* A's rows off 16 bytes, 16-bit inputs: the family's SIMT K-major form. */
                if (strcmp(duet_backend_name(), "cuda") == 0 && !tc_small_all &&
                    COMBOS[d].math == DUET_MATH_DEFAULT &&
                    (COMBOS[d].in == DUET_DTYPE_F16 || COMBOS[d].in == DUET_DTYPE_BF16) &&
                    t.n <= 16 && t.m >= t.n && x < 2 && t.batch == 1 && t.k > 1 &&
                    (row_bytes % 16 != 0 || t.off_a != 0) && t.k > 48)
                    t.expect_kernel = "gemm_skinny_kmajor_n";
                /* A small one runs on the compact small-problem kernel, ahead of the family
                 * (gemm_plan.h, DT_TINY_STEPS). */
                if (!tc_small_all &&
                    dt_tiny_rule_takes(COMBOS[d].in, t.m, t.n, t.k, t.batch, props.compute_units))
                    t.expect_kernel = "gemm_tiny_";
                run_in(&g, &t);
            }
    }
    group_done(&g);
}

/* Strided batches with gaps between matrices, and A or B broadcast (stride 0, count 1). */
static void test_batches(void)
{
    group g = group_begin("batches and broadcast");
    for (int d = 0; d < N_COMBOS; d++)
        for (int bc = 0; bc < 5; bc++)
            for (int s = 0; s < 2; s++) {
                if (quick && (bc + s + d) % 3 != 0) continue;
                gemm_case t =
                    s ? base_case(&COMBOS[d], 33, 17, 40) : base_case(&COMBOS[d], 5, 7, 9);
                t.batch = 3 + s;
                t.batch_pad = 5 + bc;
                t.bcast = bc;
                set_layouts(&t, (bc * 3 + s + d) % 32);
                set_scalars(&t, bc + s);
                t.off_a = (size_t)bc;
                t.off_c = 1;
                run_in(&g, &t);
            }
    group_done(&g);
}

/* BLAS rules: beta == 0 never reads C (NaN there), beta == -0 is zero too, alpha == 0 never
 * reads A or B (NaN there), K == 0 gives C = beta C, M or N == 0 writes nothing. */
static void test_blas_edges(void)
{
    group g = group_begin("BLAS corner cases");
    static const double betas[] = {0.0, -0.0, 1.0, 2.0, -0.5};
    for (int d = 0; d < N_COMBOS; d++) {
        const int ints = is_int(&COMBOS[d]);
        for (int bi = 0; bi < 5; bi++) {
            if (ints && bi == 4) continue;
            gemm_case t = base_case(&COMBOS[d], 9, 13, 11); /* alpha 0: A and B NaN */
            t.alpha = 0.0;
            t.beta = betas[bi];
            t.nan_ab = 1;
            set_layouts(&t, bi * 9 % 32);
            run_in(&g, &t);
            t = base_case(&COMBOS[d], 9, 13, 0); /* K == 0 */
            t.beta = betas[bi];
            t.alpha = ints ? 3.0 : 1.5;
            set_layouts(&t, bi * 5 % 32);
            run_in(&g, &t);
            t = base_case(&COMBOS[d], 19, 7, 21); /* beta 0 or -0 with NaN C; others read C */
            t.beta = betas[bi];
            t.alpha = ints ? -2.0 : 0.75;
            set_layouts(&t, bi * 3 % 32);
            t.batch = 2;
            t.batch_pad = 1;
            run_in(&g, &t);
        }
        for (int z = 0; z < 3; z++) { /* M, N or both 0 */
            gemm_case t = base_case(&COMBOS[d], z == 1 ? 5 : 0, z == 0 ? 5 : 0, 4);
            t.beta = 1.0;
            set_layouts(&t, z * 11 % 32);
            run_in(&g, &t);
        }
    }
    group_done(&g);
}

/* f16 and bf16 outputs: a product past the largest finite value is inf (of the right sign),
 * a NaN input gives NaN, an inf input gives inf or NaN as IEEE says; C of f32 from the same
 * inputs stays finite where f32 holds the value. */
static void test_ieee(void)
{
    group g = group_begin("overflow, inf and NaN");
    for (int d = 0; d < 4; d++) {
        for (int x = 0; x < 4; x++) {
            gemm_case t = base_case(&COMBOS[d], 6, 5, 8);
            t.data = DATA_BIG; /* C = alpha 2^19 (f16) or alpha 2^129 (bf16), + beta C */
            set_layouts(&t, x * 5);
            set_scalars(&t, x);
            run_in(&g, &t);
            t = base_case(&COMBOS[d], 7, 6, 9);
            t.data = DATA_INT;
            t.poison = 1;
            set_layouts(&t, x * 3 + 16);
            set_scalars(&t, x);
            run_in(&g, &t);
        }
        gemm_case t = base_case(&COMBOS[d], 4, 4, 3); /* alpha alone overflows */
        t.data = DATA_INT;
        t.alpha = COMBOS[d].out == DUET_DTYPE_F16 ? 30000.0 : 1e38;
        run_in(&g, &t);
    }
    group_done(&g);
}

/* i8 x i8 -> i32 wraps modulo 2^32: in the sums (k past 2^31 / 128^2) and through alpha and
 * beta (int32 scalars: their ends, and values past int8's); the extremes -128 and 127
 * everywhere. */
static void test_i8_wrap(void)
{
    group g = group_begin("i8 wrap-around in i32");
    const combo *cb = &COMBOS[4];
    for (int x = 0; x < 4; x++) {
        gemm_case t = base_case(cb, 2, 3, quick ? 140000 : 300000);
        t.data = DATA_I8_MAX;
        set_layouts(&t, x * 6);
        run_in(&g, &t);
        t = base_case(cb, 23, 19, 37);
        t.data = DATA_I8_MAX;
        t.alpha = x & 1 ? 2147483647.0 : -2147483647.0;
        t.beta = x & 2 ? -2147483648.0 : 123456789.0;
        set_layouts(&t, x * 7 + 3);
        run_in(&g, &t);
        /* alpha and beta are int32 scalars, not int8 ones: just past int8's ends work too. */
        t = base_case(cb, 7, 5, 9);
        t.data = DATA_I8_MAX;
        t.alpha = x & 1 ? 128.0 : -129.0;
        t.beta = x & 2 ? -129.0 : 128.0;
        set_layouts(&t, x * 5 + 1);
        run_in(&g, &t);
    }
    group_done(&g);
}

/* The same call twice gives the same bits, on shapes large enough for every thread. */
static void test_determinism(void)
{
    group g = group_begin("determinism");
    for (int d = 0; d < N_COMBOS; d++) {
        gemm_case t =
            quick ? base_case(&COMBOS[d], 70, 90, 300) : base_case(&COMBOS[d], 200, 300, 700);
        t.repeat = 1;
        set_layouts(&t, d * 9 % 32);
        set_scalars(&t, d + 2);
        t.batch = 2;
        run_in(&g, &t);
    }
    group_done(&g);
}

/* Random data at a size where f32 accumulation error matters, and 3xTF32 against exact f32:
 * its error against the f64 reference stays within 2x of the DEFAULT run's on the same data
 * (seeded identically). */
static void test_big(void)
{
    group g = group_begin("large random");
    int64_t n = quick ? 192 : 1024;
    for (int d = 0; d < N_COMBOS; d++) {
        /* The full size once (bf16 -> f32, the common training case), half of it elsewhere. */
        int64_t s = d == 3 ? n : n / 2;
        if (!quick && d != 3) s = 384;
        gemm_case t = base_case(&COMBOS[d], s, s + 1, s - 1);
        set_scalars(&t, 2);
        set_layouts(&t, d * 5 % 32);
        run_in(&g, &t);
    }
    static const combo exact = {DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_DEFAULT, "f32 default"};
    int64_t s = quick ? 160 : 512;
    double err[3] = {0, 0, 0};
    const combo *cbs[3] = {&exact, &COMBOS[6], &COMBOS[5]};
    for (int x = 0; x < 3; x++) {
        dt_seed(777); /* the same data for each run */
        gemm_case t = base_case(cbs[x], s, s, s);
        t.err = &err[x];
        run_in(&g, &t);
    }
    printf("    %lld^3 random: |C - Cref|_F f32 %.3g, 3xtf32 %.3g, tf32 %.3g\n", (long long)s,
           err[0], err[1], err[2]);
    DT_CHECK(err[1] <= 2.0 * err[0] + 1e-30, "3xtf32 error %.3g is over 2x exact f32's (%.3g)",
             err[1], err[0]);
    group_done(&g);
}

/* ---- refusals ------------------------------------------------------------------------------ */

static duet_buffer *refusal_buf[6];
static const duet_dtype REFUSAL_DTYPES[] = {DUET_DTYPE_F32, DUET_DTYPE_F64,  DUET_DTYPE_I32,
                                            DUET_DTYPE_F16, DUET_DTYPE_BF16, DUET_DTYPE_I8};

/* A rows x cols row-major matrix of REFUSAL_DTYPES[x] at element off of its buffer. */
static duet_matrix refusal_mat(int x, size_t off, int64_t rows, int64_t cols)
{
    duet_matrix m =
        duet_matrix_make(refusal_buf[x], REFUSAL_DTYPES[x], DUET_LAYOUT_ROW_MAJOR, rows, cols);
    m.offset = off;
    return m;
}

static void test_refusals(void)
{
    group g = group_begin("refusals write nothing");
    int before = dt_failures;
    /* One buffer per dtype, 16 elements of operands and a sentinel tail that must survive. */
    const duet_dtype *dts = REFUSAL_DTYPES;
    duet_buffer **buf = refusal_buf;
    unsigned char host[6][64 * 8];
    for (int x = 0; x < 6; x++) {
        dt_fill_sentinel(host[x], dts[x], 64);
        for (int e = 0; e < 32; e++) dt_set(host[x], dts[x], (size_t)e, (double)(e % 5));
        buf[x] = upload(host[x], 64 * duet_dtype_size(dts[x]), duet_dtype_name(dts[x]));
        if (!buf[x]) return;
    }
    duet_op_options opt;
    /* Math modes belong to f32 gemm: f64, i32, f16, bf16 and i8 inputs refuse them. */
    for (int x = 1; x < 6; x++)
        for (int mm = 1; mm <= 2; mm++) {
            memset(&opt, 0, sizeof opt);
            opt.math = (duet_math_mode)mm;
            duet_matrix a = refusal_mat(x, 0, 4, 4), b = refusal_mat(x, 16, 4, 4);
            int cx = dts[x] == DUET_DTYPE_I8 ? 2 : x;
            duet_matrix c = refusal_mat(cx, 40, 4, 4);
            g.cases++;
            DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.0, &c, &opt),
                     DUET_ERROR_INVALID_ARGUMENT, "math");
        }
    /* ... and so do the other ops. */
    for (int mm = 1; mm <= 2; mm++) {
        memset(&opt, 0, sizeof opt);
        opt.math = (duet_math_mode)mm;
        duet_matrix in = refusal_mat(0, 0, 4, 4), out = refusal_mat(0, 40, 4, 4);
        g.cases += 2;
        DT_FAILS(duet_transpose(NULL, &in, &out, &opt), DUET_ERROR_INVALID_ARGUMENT, "math");
        DT_FAILS(duet_fill(NULL, 1.0, &out, &opt), DUET_ERROR_INVALID_ARGUMENT, "math");
    }
    memset(&opt, 0, sizeof opt);
    opt.math = (duet_math_mode)3;
    {
        duet_matrix a = refusal_mat(0, 0, 4, 4), b = refusal_mat(0, 16, 4, 4),
                    c = refusal_mat(0, 40, 4, 4);
        g.cases++;
        DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.0, &c, &opt),
                 DUET_ERROR_INVALID_ARGUMENT, "math");
    }
    /* The seeds' algorithms run f32, f64 and i32 only. */
    static const duet_algorithm algos[] = {DUET_ALGO_NAIVE, DUET_ALGO_TILED, DUET_ALGO_GRID_STRIDE};
    for (int x = 3; x < 6; x++)
        for (int al = 0; al < 3; al++) {
            memset(&opt, 0, sizeof opt);
            opt.algorithm = algos[al];
            duet_matrix a = refusal_mat(x, 0, 4, 4), b = refusal_mat(x, 16, 4, 4);
            duet_matrix c = refusal_mat(dts[x] == DUET_DTYPE_I8 ? 2 : 0, 40, 4, 4);
            g.cases++;
            DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.0, &c, &opt),
                     DUET_ERROR_UNSUPPORTED, duet_dtype_name(dts[x]));
        }
    /* Combinations outside the table name the dtypes: A and B that differ are a bad argument,
     * the others unsupported. */
    static const int bad[][3] = {{3, 3, 4}, {4, 4, 3}, {3, 4, 0}, {5, 5, 5}, {5, 5, 0},
                                 {0, 0, 3}, {1, 1, 0}, {0, 3, 0}, {2, 2, 0}, {3, 3, 1}};
    for (size_t x = 0; x < sizeof bad / sizeof bad[0]; x++) {
        duet_matrix a = refusal_mat(bad[x][0], 0, 4, 4), b = refusal_mat(bad[x][1], 16, 4, 4);
        duet_matrix c = refusal_mat(bad[x][2], 40, 4, 4);
        char name[64];
        snprintf(name, sizeof name, "A %s, B %s, C %s", duet_dtype_name(dts[bad[x][0]]),
                 duet_dtype_name(dts[bad[x][1]]), duet_dtype_name(dts[bad[x][2]]));
        g.cases++;
        DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.0, &c, NULL),
                 bad[x][0] != bad[x][1] ? DUET_ERROR_INVALID_ARGUMENT : DUET_ERROR_UNSUPPORTED,
                 name);
    }
    /* i8 gemm takes integral alpha and beta. */
    {
        duet_matrix a = refusal_mat(5, 0, 4, 4), b = refusal_mat(5, 16, 4, 4),
                    c = refusal_mat(2, 40, 4, 4);
        g.cases += 2;
        DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.5, &a, &b, 0.0, &c, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "alpha");
        DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.25, &c, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "beta");
        /* They scale the i32 accumulator and C, so their range is int32's (test_i8_wrap runs
         * its ends and values past int8's): one past either end is refused. */
        const double past[2] = {2147483648.0, -2147483649.0};
        for (int i = 0; i < 2; i++) {
            g.cases += 2;
            DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, past[i], &a, &b, 0.0, &c, NULL),
                     DUET_ERROR_INVALID_ARGUMENT, "alpha");
            DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, past[i], &c, NULL),
                     DUET_ERROR_INVALID_ARGUMENT, "beta");
        }
    }
    for (int x = 0; x < 6; x++) {
        unsigned char back[64 * 8];
        size_t bytes = 64 * duet_dtype_size(dts[x]);
        DT_OK(duet_buffer_read(NULL, buf[x], 0, back, bytes));
        DT_CHECK(memcmp(host[x], back, bytes) == 0, "a refused gemm wrote to the %s buffer",
                 duet_dtype_name(dts[x]));
        DT_OK(duet_buffer_destroy(buf[x]));
    }
    if (dt_failures != before) g.failed = 1;
    group_done(&g);
}

/* The seeds' algorithms are exact f32 whatever options.math says: TF32 and 3XTF32 give the
 * bits of DEFAULT with the same algorithm (one backend, one kernel) and report DEFAULT. */
static void test_math_on_seed_algorithms(void)
{
    group g = group_begin("math modes on seed algorithms");
    const int64_t m = 33, n = 17, k = 29;
    float host[3][33 * 29];
    for (int x = 0; x < 3; x++)
        for (int e = 0; e < 33 * 29; e++) host[x][e] = (float)dt_rand_uniform(-1.0, 1.0);
    duet_buffer *buf[3];
    for (int x = 0; x < 3; x++) {
        buf[x] = upload(host[x], sizeof host[x], "seed algorithms");
        if (!buf[x]) return;
    }
    duet_matrix a = duet_matrix_make(buf[0], DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, m, k);
    duet_matrix b = duet_matrix_make(buf[1], DUET_DTYPE_F32, DUET_LAYOUT_COL_MAJOR, k, n);
    duet_matrix c = duet_matrix_make(buf[2], DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, m, n);
    static const duet_algorithm algos[] = {DUET_ALGO_NAIVE, DUET_ALGO_TILED, DUET_ALGO_GRID_STRIDE};
    for (int al = 0; al < 3; al++) {
        float want[33 * 17], got[33 * 17];
        for (int mm = 0; mm <= 2; mm++) {
            int before = dt_failures;
            duet_launch_info info;
            duet_op_options opt;
            memset(&opt, 0, sizeof opt);
            opt.algorithm = algos[al];
            opt.math = (duet_math_mode)mm;
            opt.info = &info;
            DT_OK(duet_buffer_write(NULL, buf[2], 0, host[2], sizeof host[2]));
            DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.5, &a, &b, -0.5, &c, &opt));
            DT_OK(duet_buffer_read(NULL, buf[2], 0, mm ? got : want, sizeof got));
            DT_CHECK(info.math == DUET_MATH_DEFAULT, "%s with math %s reported math %s",
                     duet_algorithm_name(algos[al]), duet_math_mode_name(opt.math),
                     duet_math_mode_name(info.math));
            if (mm)
                DT_CHECK(memcmp(got, want, sizeof got) == 0,
                         "%s with math %s differs from the same algorithm's default",
                         duet_algorithm_name(algos[al]), duet_math_mode_name(opt.math));
            g.cases++;
            if (dt_failures != before) g.failed++;
        }
    }
    for (int x = 0; x < 3; x++) DT_OK(duet_buffer_destroy(buf[x]));
    group_done(&g);
}

int main(int argc, char **argv)
{
    quick = dt_quick_mode(argc, argv);
    host_quick = quick && strcmp(duet_backend_name(), "cpu") == 0;
    ctx = dt_open_or_skip();
    DT_OK(duet_context_get_props(ctx, &props));
    tc_small_all = getenv("DUET_GEMM_TC_SMALL") && strcmp(getenv("DUET_GEMM_TC_SMALL"), "all") == 0;
    dt_seed(20261124);
    printf("test_gemm_lowp on %s (%s size set)\n", duet_backend_name(), quick ? "quick" : "full");
    test_refusals();
    test_math_on_seed_algorithms();
    test_small();
    test_tile_edges();
    test_aligned();
    test_skinny();
    test_narrow();
    test_batches();
    test_blas_edges();
    test_ieee();
    test_i8_wrap();
    test_determinism();
    test_big();
    DT_OK(duet_context_destroy(ctx));
    return dt_finish("test_gemm_lowp");
}
