/* test_gemm_cpu.c - the cpu backend's AUTO gemm with and without a CBLAS: path, edges, threads. */
#include "harness.h"

#ifdef DUET_TEST_OPENMP
#include <omp.h>
#endif /* DUET_TEST_OPENMP */
#if defined(DUET_CBLAS_OPENBLAS_THREADS) || defined(DUET_CBLAS_OPENBLAS_CORENAME)
#include <cblas.h>
#endif /* OpenBLAS */

/*
 * Built with a CBLAS (DUET_TEST_CBLAS) and where the library's rule takes it, f32 and f64 AUTO
 * gemms must run on it and say so in info.kernel; otherwise, and for the seed algorithms and
 * the other dtypes, they must not. CTest runs it with DUET_CPU_BLAS=1 and 0 as well.
 * Either way the results are checked exactly (integer-valued data) against the harness's
 * reference over the layouts a CBLAS call expresses only after some mapping: transposes,
 * column-major C, vectors whose leading dimension is 1, A and B one matrix, a broadcast A,
 * padded batches of C guarded by sentinels; beta == 0 over NaN; repeatability bit for bit
 * at 1 and 2 threads; the thread counts of OpenMP and the BLAS left as they were.
 */

static duet_context *ctx;

typedef struct operand {
    duet_matrix m;
    void *host;
    size_t elems;
} operand;

/* A rows x cols matrix (batch of count, ld = len + pad, batch stride = extent + gap) in a
 * buffer of its own, filled with small integers (sentinels in C's padding). */
static operand make(duet_dtype t, duet_layout lay, int64_t rows, int64_t cols, int64_t pad,
                    int64_t count, int64_t gap, int is_c)
{
    operand o;
    memset(&o, 0, sizeof o);
    o.m.dtype = t;
    o.m.layout = lay;
    o.m.rows = rows;
    o.m.cols = cols;
    o.m.ld = (lay == DUET_LAYOUT_ROW_MAJOR ? cols : rows) + pad;
    if (o.m.ld < 1) o.m.ld = 1;
    o.m.batch_count = count;
    o.m.batch_stride = count > 1 ? dt_matrix_extent(&o.m) + gap : 0;
    o.m.offset = 3;
    o.elems = dt_matrix_span_elems(&o.m) + 5;
    const size_t es = duet_dtype_size(t);
    o.host = malloc(o.elems * es);
    if (is_c) dt_fill_sentinel(o.host, t, o.elems);
    for (int64_t b = 0; b < dt_matrix_batches(&o.m); ++b)
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
                dt_set(o.host, t, dt_matrix_index(&o.m, b, i, j), (double)dt_rand_int(-3, 3));
    DT_OK(duet_buffer_create(ctx, o.elems * es, &o.m.buffer));
    DT_OK(duet_buffer_write(NULL, o.m.buffer, 0, o.host, o.elems * es));
    return o;
}

static void drop(operand *o)
{
    DT_OK(duet_buffer_destroy(o->m.buffer));
    free(o->host);
}

static int names_blas(const duet_launch_info *info)
{
    return strstr(info->kernel, "cblas_") != NULL;
}

/* C on the device against alpha op(A) op(B) + beta C (C's host copy before the call) on the
 * host reference: exact equality and untouched sentinels. The device's C becomes the host's. */
static void verify(const char *what, duet_op oa, duet_op ob, double alpha, operand *a, operand *b,
                   double beta, operand *c)
{
    const size_t es = duet_dtype_size(c->m.dtype);
    void *got = malloc(c->elems * es);
    DT_OK(duet_buffer_read(NULL, c->m.buffer, 0, got, c->elems * es));
    dt_ref_gemm(oa, ob, alpha, &a->m, a->host, &b->m, b->host, beta, &c->m, c->host);
    size_t bad = 0, first = 0;
    for (size_t x = 0; x < c->elems; ++x) {
        const double u = dt_get(got, c->m.dtype, x), v = dt_get(c->host, c->m.dtype, x);
        const int same =
            dt_is_sentinel(c->host, c->m.dtype, x) ? dt_is_sentinel(got, c->m.dtype, x) : u == v;
        if (!same && bad++ == 0) first = x;
    }
    DT_CHECK(bad == 0, "%s: %zu elements differ, first at %zu: %g, want %g", what, bad, first,
             dt_get(got, c->m.dtype, first), dt_get(c->host, c->m.dtype, first));
    memcpy(c->host, got, c->elems * es);
    free(got);
}

/* Runs the gemm with algorithm algo and verifies it. want_blas: 1 must run on the CBLAS, 0
 * must not, -1 either. */
static void check_gemm(const char *what, duet_op oa, duet_op ob, double alpha, operand *a,
                       operand *b, double beta, operand *c, duet_algorithm algo, int want_blas)
{
    duet_launch_info info;
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    memset(&info, 0, sizeof info);
    opt.algorithm = algo;
    opt.info = &info;
    DT_OK(duet_gemm(NULL, oa, ob, alpha, &a->m, &b->m, beta, &c->m, &opt));
    verify(what, oa, ob, alpha, a, b, beta, c);
    if (want_blas >= 0)
        DT_CHECK(names_blas(&info) == want_blas, "%s: kernel \"%s\" (%s the CBLAS)", what,
                 info.kernel, want_blas ? "wanted" : "not");
    DT_CHECK(strncmp(info.kernel, "cpu_gemm_", 9) == 0, "%s: kernel \"%s\"", what, info.kernel);
}

/* Whether f32/f64 AUTO gemms must run on the CBLAS: built with one, and the library's rule
 * (src/cpu/gemm_blas.c) says so - DUET_CPU_BLAS=1 or 0 where set, else for OpenBLAS whether
 * its kernel set is an AVX-512 one or duet's kernel is not. */
static int have_blas;

static int blas_expected(void)
{
#ifndef DUET_TEST_CBLAS
    return 0;
#else
    const char *env = getenv("DUET_CPU_BLAS");
    if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0)) return env[0] == '1';
#if defined(DUET_CBLAS_OPENBLAS_CORENAME) && defined(__GNUC__) && defined(__x86_64__)
    const char *core = openblas_get_corename();
    const int blas512 = core && (strstr(core, "SkylakeX") || strstr(core, "Cooperlake") ||
                                 strstr(core, "SapphireRapids"));
    printf("OpenBLAS kernels: %s; host AVX-512: %s\n", core ? core : "?",
           __builtin_cpu_supports("avx512f") ? "yes" : "no");
    return blas512 || !__builtin_cpu_supports("avx512f");
#else
    return 1;
#endif /* OpenBLAS on x86-64 */
#endif /* DUET_TEST_CBLAS */
}

/* Every combination of op, layout, vector shapes and the leading dimensions of 1 they allow. */
static void test_layouts(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1},  {1, 9, 5},   {9, 1, 5},  {7, 6, 1},
                                        {1, 1, 17}, {33, 20, 9}, {5, 40, 64}};
    for (int d = 0; d < 2; ++d) {
        const duet_dtype t = d ? DUET_DTYPE_F64 : DUET_DTYPE_F32;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
            for (int combo = 0; combo < 32; ++combo) {
                const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                const duet_op oa = combo & 1 ? DUET_OP_T : DUET_OP_N;
                const duet_op ob = combo & 2 ? DUET_OP_T : DUET_OP_N;
                const duet_layout la = combo & 4 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                const duet_layout lb = combo & 8 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                const duet_layout lc = combo & 16 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                const int pad = (combo + (int)s) % 3 == 0 ? 2 : 0;
                operand a =
                    make(t, la, oa == DUET_OP_N ? m : k, oa == DUET_OP_N ? k : m, pad, 1, 0, 0);
                operand b =
                    make(t, lb, ob == DUET_OP_N ? k : n, ob == DUET_OP_N ? n : k, 0, 1, 0, 0);
                operand c = make(t, lc, m, n, pad, 1, 0, 1);
                char what[160];
                snprintf(what, sizeof what, "%s %lldx%lldx%lld op %c%c layouts %c%c%c pad %d",
                         duet_dtype_name(t), (long long)m, (long long)n, (long long)k,
                         oa == DUET_OP_T ? 'T' : 'N', ob == DUET_OP_T ? 'T' : 'N',
                         la == DUET_LAYOUT_ROW_MAJOR ? 'r' : 'c',
                         lb == DUET_LAYOUT_ROW_MAJOR ? 'r' : 'c',
                         lc == DUET_LAYOUT_ROW_MAJOR ? 'r' : 'c', pad);
                check_gemm(what, oa, ob, 2.0, &a, &b, combo % 3 == 0 ? 0.0 : -0.5, &c,
                           DUET_ALGO_AUTO, have_blas);
                drop(&a);
                drop(&b);
                drop(&c);
            }
    }
}

/* The paths that never take the BLAS: seed algorithms, i32, f16 and bf16 inputs. */
static void test_other_paths(void)
{
    operand a = make(DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 20, 30, 0, 1, 0, 0);
    operand b = make(DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 30, 10, 0, 1, 0, 0);
    operand c = make(DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 20, 10, 0, 1, 0, 1);
    check_gemm("f32 naive", DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, DUET_ALGO_NAIVE, 0);
    check_gemm("f32 tiled", DUET_OP_N, DUET_OP_N, 1, &a, &b, 1, &c, DUET_ALGO_TILED, 0);
    check_gemm("f32 grid-stride", DUET_OP_N, DUET_OP_N, 1, &a, &b, 1, &c, DUET_ALGO_GRID_STRIDE, 0);
    drop(&a);
    drop(&b);
    drop(&c);
    static const duet_dtype in[] = {DUET_DTYPE_I32, DUET_DTYPE_F16, DUET_DTYPE_BF16,
                                    DUET_DTYPE_F16};
    static const duet_dtype out[] = {DUET_DTYPE_I32, DUET_DTYPE_F16, DUET_DTYPE_F32,
                                     DUET_DTYPE_F32};
    for (int x = 0; x < 4; ++x) {
        a = make(in[x], DUET_LAYOUT_ROW_MAJOR, 20, 30, 0, 1, 0, 0);
        b = make(in[x], DUET_LAYOUT_COL_MAJOR, 30, 10, 0, 1, 0, 0);
        c = make(out[x], DUET_LAYOUT_ROW_MAJOR, 20, 10, 0, 1, 0, 1);
        char what[64];
        snprintf(what, sizeof what, "%s -> %s auto", duet_dtype_name(in[x]),
                 duet_dtype_name(out[x]));
        check_gemm(what, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, DUET_ALGO_AUTO, 0);
        drop(&a);
        drop(&b);
        drop(&c);
    }
}

/* Batches: A broadcast (one matrix), B strided, C padded with gaps between its matrices; A and
 * B one matrix of one buffer (C = A A^T); beta == 0 over a C full of NaN. */
static void test_batches_and_aliasing(void)
{
    for (int d = 0; d < 2; ++d) {
        const duet_dtype t = d ? DUET_DTYPE_F64 : DUET_DTYPE_F32;
        operand a = make(t, DUET_LAYOUT_COL_MAJOR, 24, 40, 1, 1, 0, 0);
        operand b = make(t, DUET_LAYOUT_ROW_MAJOR, 40, 18, 3, 5, 7, 0);
        operand c = make(t, DUET_LAYOUT_ROW_MAJOR, 24, 18, 2, 5, 4, 1);
        check_gemm(d ? "f64 batch of 5, A broadcast" : "f32 batch of 5, A broadcast", DUET_OP_N,
                   DUET_OP_N, 1, &a, &b, 0, &c, DUET_ALGO_AUTO, have_blas);
        check_gemm(d ? "f64 batch of 5, beta 3" : "f32 batch of 5, beta 3", DUET_OP_N, DUET_OP_N,
                   -1, &a, &b, 3, &c, DUET_ALGO_AUTO, have_blas);
        drop(&b);
        drop(&c);

        /* C = A A^T: one descriptor for both operands. */
        c = make(t, DUET_LAYOUT_COL_MAJOR, 24, 24, 0, 1, 0, 1);
        check_gemm(d ? "f64 C = A A^T" : "f32 C = A A^T", DUET_OP_N, DUET_OP_T, 1, &a, &a, 0.5, &c,
                   DUET_ALGO_AUTO, have_blas);
        drop(&c);

        /* beta == 0 never reads C: NaN there must not come back. */
        b = make(t, DUET_LAYOUT_ROW_MAJOR, 40, 31, 0, 1, 0, 0);
        c = make(t, DUET_LAYOUT_ROW_MAJOR, 24, 31, 1, 1, 0, 1);
        for (int64_t i = 0; i < 24; ++i)
            for (int64_t j = 0; j < 31; ++j) dt_set(c.host, t, dt_matrix_index(&c.m, 0, i, j), NAN);
        DT_OK(duet_buffer_write(NULL, c.m.buffer, 0, c.host, c.elems * duet_dtype_size(t)));
        check_gemm(d ? "f64 beta 0 over NaN" : "f32 beta 0 over NaN", DUET_OP_N, DUET_OP_N, 1, &a,
                   &b, 0, &c, DUET_ALGO_AUTO, have_blas);
        drop(&b);
        drop(&c);
        drop(&a);
    }
}

/* The same gemm twice gives the same bits; at 1 and 2 threads where OpenMP sets the count. */
static void test_repeat(void)
{
    static const int64_t shapes[][3] = {{300, 257, 513}, {64, 1000, 200}, {1, 700, 300}};
    for (int d = 0; d < 2; ++d) {
        const duet_dtype t = d ? DUET_DTYPE_F64 : DUET_DTYPE_F32;
        const size_t es = duet_dtype_size(t);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
            operand a = make(t, DUET_LAYOUT_ROW_MAJOR, shapes[s][0], shapes[s][2], 0, 1, 0, 0);
            operand b = make(t, DUET_LAYOUT_COL_MAJOR, shapes[s][2], shapes[s][1], 0, 1, 0, 0);
            operand c = make(t, DUET_LAYOUT_ROW_MAJOR, shapes[s][0], shapes[s][1], 0, 1, 0, 1);
            /* Inexact data: every rounding of the sum shows. */
            for (size_t x = 0; x < a.elems; ++x) dt_set(a.host, t, x, dt_rand_normal());
            for (size_t x = 0; x < b.elems; ++x) dt_set(b.host, t, x, dt_rand_normal());
            DT_OK(duet_buffer_write(NULL, a.m.buffer, 0, a.host, a.elems * es));
            DT_OK(duet_buffer_write(NULL, b.m.buffer, 0, b.host, b.elems * es));
            void *first = malloc(c.elems * es), *again = malloc(c.elems * es);
#ifdef DUET_TEST_OPENMP
            const int counts[] = {1, 2};
            const int saved = omp_get_max_threads();
#else
            const int counts[] = {0};
#endif /* DUET_TEST_OPENMP */
            for (size_t q = 0; q < sizeof counts / sizeof counts[0]; ++q) {
#ifdef DUET_TEST_OPENMP
                omp_set_num_threads(counts[q]);
#endif /* DUET_TEST_OPENMP */
                for (int r = 0; r < 2; ++r) {
                    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a.m, &b.m, 0.0, &c.m, NULL));
                    DT_OK(duet_buffer_read(NULL, c.m.buffer, 0, r ? again : first, c.elems * es));
                }
                DT_CHECK(memcmp(first, again, c.elems * es) == 0,
                         "%s %lldx%lldx%lld at %d threads: two runs differ", duet_dtype_name(t),
                         (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2],
                         counts[q]);
            }
#ifdef DUET_TEST_OPENMP
            omp_set_num_threads(saved);
#endif /* DUET_TEST_OPENMP */
            free(first);
            free(again);
            drop(&a);
            drop(&b);
            drop(&c);
        }
    }
}

#ifdef DUET_TEST_OPENMP
/* A gemm leaves the caller's OpenMP team size (and OpenBLAS's count) as they were, and gemms
 * from the members of the application's own team are right (and run on duet's kernel). */
static void test_threads(void)
{
    const int saved = omp_get_max_threads();
    operand a = make(DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 8, 8, 0, 1, 0, 0);
    operand b = make(DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 8, 8, 0, 1, 0, 0);
    operand c = make(DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 8, 8, 0, 1, 0, 1);
    omp_set_num_threads(2);
#ifdef DUET_CBLAS_OPENBLAS_THREADS
    openblas_set_num_threads(2);
#endif /* DUET_CBLAS_OPENBLAS_THREADS */
    /* 8^3 is work for one thread: duet sets the BLAS to 1 for the call. */
    check_gemm("f32 8x8x8 at 2 threads", DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, DUET_ALGO_AUTO,
               have_blas);
    DT_CHECK(omp_get_max_threads() == 2, "the OpenMP team size is %d after a gemm, was 2",
             omp_get_max_threads());
#ifdef DUET_CBLAS_OPENBLAS_THREADS
    DT_CHECK(openblas_get_num_threads() == 2, "OpenBLAS's thread count is %d after a gemm, was 2",
             openblas_get_num_threads());
#endif /* DUET_CBLAS_OPENBLAS_THREADS */
    drop(&a);
    drop(&b);
    drop(&c);

    /* A batch of matrices too small for two threads each: duet's kernel spreads them over
     * the two; on one thread the BLAS runs them. */
    a = make(DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 32, 32, 0, 200, 0, 0);
    b = make(DUET_DTYPE_F32, DUET_LAYOUT_COL_MAJOR, 32, 32, 0, 200, 0, 0);
    c = make(DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 32, 32, 0, 200, 0, 1);
    check_gemm("f32 200 x 32^3 at 2 threads", DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c,
               DUET_ALGO_AUTO, 0);
    omp_set_num_threads(1);
    check_gemm("f32 200 x 32^3 at 1 thread", DUET_OP_N, DUET_OP_N, 1, &a, &b, 1, &c, DUET_ALGO_AUTO,
               have_blas);
    omp_set_num_threads(2);
    drop(&a);
    drop(&b);
    drop(&c);

    enum { TEAM = 3 };
    operand as[TEAM], bs[TEAM], cs[TEAM];
    for (int x = 0; x < TEAM; ++x) {
        as[x] = make(DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, 70, 90, 0, 1, 0, 0);
        bs[x] = make(DUET_DTYPE_F64, DUET_LAYOUT_COL_MAJOR, 90, 80, 0, 1, 0, 0);
        cs[x] = make(DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, 70, 80, 0, 1, 0, 1);
    }
    duet_launch_info infos[TEAM];
    duet_status sts[TEAM];
#pragma omp parallel for num_threads(TEAM)
    for (int x = 0; x < TEAM; ++x) {
        duet_op_options opt;
        memset(&opt, 0, sizeof opt);
        opt.info = &infos[x];
        sts[x] =
            duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &as[x].m, &bs[x].m, 0.0, &cs[x].m, &opt);
    }
    for (int x = 0; x < TEAM; ++x) {
        DT_CHECK(sts[x] == DUET_SUCCESS, "gemm in team member %d: %s", x,
                 duet_status_string(sts[x]));
        DT_CHECK(!names_blas(&infos[x]), "gemm in team member %d ran \"%s\"", x, infos[x].kernel);
        verify("f64 70x80x90 in a team member", DUET_OP_N, DUET_OP_N, 1, &as[x], &bs[x], 0, &cs[x]);
        drop(&as[x]);
        drop(&bs[x]);
        drop(&cs[x]);
    }
    omp_set_num_threads(saved);
}
#endif /* DUET_TEST_OPENMP */

int main(void)
{
    if (strcmp(duet_backend_name(), "cpu") != 0) {
        printf("skipped: test_gemm_cpu tests the cpu backend; this build is %s\n",
               duet_backend_name());
        return DT_SKIP;
    }
    ctx = dt_open_or_skip();
    have_blas = blas_expected();
    printf("test_gemm_cpu (%s)\n", have_blas ? "f32/f64 on the CBLAS" : "duet's own kernels");
    dt_seed(11);
    test_layouts();
    test_other_paths();
    test_batches_and_aliasing();
    test_repeat();
#ifdef DUET_TEST_OPENMP
    test_threads();
#endif /* DUET_TEST_OPENMP */
    DT_OK(duet_context_destroy(ctx));
    return dt_finish("test_gemm_cpu");
}
