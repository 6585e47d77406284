/* test_seeds.c - every numeric example of the seed notebooks and docs, run through duet's ops. */
#include "harness.h"

#include <float.h>
#include <time.h>

static duet_context *ctx;
static int quick;

/* ---- small helpers over packed row-major matrices (numpy's layout) ------------------------ */

typedef struct dmat {
    duet_matrix m;
    duet_buffer *buf;
} dmat;

/* A device matrix; values (row-major, rows * cols) may be NULL to leave it unwritten. */
static dmat dev_matrix(duet_dtype dt, int64_t rows, int64_t cols, const double *values)
{
    dmat d;
    memset(&d, 0, sizeof d);
    size_t n = (size_t)(rows * cols), es = duet_dtype_size(dt);
    DT_OK(duet_buffer_create(ctx, n * es, &d.buf));
    d.m = duet_matrix_make(d.buf, dt, DUET_LAYOUT_ROW_MAJOR, rows, cols);
    if (values != NULL && d.buf != NULL) {
        unsigned char *h = malloc(n * es + 1);
        if (!h) exit(1);
        for (size_t i = 0; i < n; i++) dt_set(h, dt, i, values[i]);
        DT_OK(duet_buffer_write(NULL, d.buf, 0, h, n * es));
        free(h);
    }
    return d;
}

/* The matrix's elements as doubles, row-major (caller frees). */
static double *dev_read(const dmat *d)
{
    size_t n = (size_t)(d->m.rows * d->m.cols), es = duet_dtype_size(d->m.dtype);
    unsigned char *h = malloc(n * es + 1);
    double *out = malloc(n * sizeof *out + 1);
    if (!h || !out) exit(1);
    for (size_t i = 0; i < n; i++) out[i] = NAN;
    if (d->buf) DT_OK(duet_buffer_read(NULL, d->buf, 0, h, n * es));
    for (size_t i = 0; d->buf && i < n; i++) out[i] = dt_get(h, d->m.dtype, i);
    free(h);
    return out;
}

static void dev_free(dmat *d)
{
    if (d->buf) DT_OK(duet_buffer_destroy(d->buf));
    d->buf = NULL;
}

static duet_op_options options(duet_algorithm algo, int tile, duet_dim3 grid, duet_dim3 block,
                               duet_launch_info *info)
{
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.algorithm = algo;
    o.tile = tile;
    o.launch.grid = grid;
    o.launch.block = block;
    o.info = info;
    memset(info, 0, sizeof *info);
    return o;
}

static const duet_dim3 NO_DIM = {0, 0, 0};
static duet_dim3 dim(uint32_t x, uint32_t y)
{
    duet_dim3 d = {x, y, 1};
    return d;
}

/* The launch a seed made is the launch duet must report. */
static void check_launch(const char *what, const duet_launch_info *info, duet_algorithm algo,
                         duet_dim3 grid, duet_dim3 block)
{
    DT_CHECK(info->launches >= 1 && info->kernel[0] != '\0', "%s: no launch reported", what);
    DT_CHECK(info->algorithm == algo, "%s: algorithm %s, want %s", what,
             duet_algorithm_name(info->algorithm), duet_algorithm_name(algo));
    DT_CHECK(info->config.grid.x == grid.x && info->config.grid.y == grid.y &&
                 info->config.block.x == block.x && info->config.block.y == block.y,
             "%s: launched grid %ux%u block %ux%u, the seed's is grid %ux%u block %ux%u", what,
             info->config.grid.x, info->config.grid.y, info->config.block.x, info->config.block.y,
             grid.x, grid.y, block.x, block.y);
}

/* Compares every element exactly; prints the seed's summary line (the first column). */
static void check_exact(const char *what, const duet_launch_info *info, const double *got,
                        const double *want, int64_t rows, int64_t cols)
{
    long bad = 0;
    for (int64_t i = 0; i < rows * cols; i++)
        if (got[i] != want[i] && bad++ < 3)
            fprintf(stderr, "  %s: [%lld, %lld] = %.17g, want %.17g\n", what, (long long)(i / cols),
                    (long long)(i % cols), got[i], want[i]);
    DT_CHECK(bad == 0, "%s: %ld of %lld elements wrong", what, bad, (long long)(rows * cols));
    printf("%s [%s]: first column [", what, info->kernel);
    for (int64_t i = 0; i < rows && i < 8; i++) printf(i ? " %.17g" : "%.17g", got[i * cols]);
    printf(rows > 8 ? " ...]\n" : "]\n");
}

static double *arange(int64_t n)
{
    double *v = malloc((size_t)n * sizeof *v + 1);
    if (!v) exit(1);
    for (int64_t i = 0; i < n; i++) v[i] = (double)i;
    return v;
}

/* x @ y by plain loops: the "print(x_h @ y_h)" of the seeds, in exact integer arithmetic. */
static double *matmul_loops(const double *x, const double *y, int64_t m, int64_t k, int64_t n)
{
    double *z = malloc((size_t)(m * n) * sizeof *z + 1);
    if (!z) exit(1);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t sum = 0;
            for (int64_t p = 0; p < k; p++) sum += (int64_t)x[i * k + p] * (int64_t)y[p * n + j];
            z[i * n + j] = (double)sum;
        }
    return z;
}

static duet_status fill(dmat *d, double value)
{
    duet_launch_info info;
    duet_op_options o = options(DUET_ALGO_AUTO, 0, NO_DIM, NO_DIM, &info);
    return duet_fill(NULL, value, &d->m, &o);
}

/* C = x @ y with x, y given (NULL: filled on the device with fill_x / fill_y, the seeds'
 * np.ones / np.full), C zeroed first like np.zeros; returns C's elements. */
static double *seed_gemm_to(duet_dtype dt, duet_dtype c_dt, int64_t m, int64_t k, int64_t n,
                            const double *x, double fill_x, const double *y, double fill_y,
                            duet_op_options *o)
{
    dmat a = dev_matrix(dt, m, k, x), b = dev_matrix(dt, k, n, y);
    dmat c = dev_matrix(c_dt, m, n, NULL);
    if (!x) DT_OK(fill(&a, fill_x));
    if (!y) DT_OK(fill(&b, fill_y));
    DT_OK(fill(&c, 0.0));
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a.m, &b.m, 0.0, &c.m, o));
    double *out = dev_read(&c);
    dev_free(&a);
    dev_free(&b);
    dev_free(&c);
    return out;
}

static double *seed_gemm(duet_dtype dt, int64_t m, int64_t k, int64_t n, const double *x,
                         double fill_x, const double *y, double fill_y, duet_op_options *o)
{
    return seed_gemm_to(dt, dt, m, k, n, x, fill_x, y, fill_y, o);
}

/* v in dtype dt (rounded to nearest even by the harness's own conversion). */
static double round_to(duet_dtype dt, double v)
{
    unsigned char b[8];
    dt_set(b, dt, 0, v);
    return dt_get(b, dt, 0);
}

/* The seed's gemm x @ y (x, y NULL: every element fill_x, fill_y) again with f16 and bf16
 * inputs, C of the same dtype and of f32, on AUTO (the only algorithm of these dtypes). It runs
 * where the inputs are exact in the dtype and every sum of |products| stays below 2^24, so the
 * f32 sums are exact in any order: C must then be want rounded once to C's dtype, bit for bit,
 * on every backend. */
static void seed_lowp(const char *what, int64_t m, int64_t k, int64_t n, const double *x,
                      double fill_x, const double *y, double fill_y, const double *want)
{
    static const duet_dtype ins[2] = {DUET_DTYPE_F16, DUET_DTYPE_BF16};
    double largest = 0.0; /* the largest sum of |x||y| over the outputs */
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0;
            for (int64_t p = 0; p < k; p++)
                s += fabs(x ? x[i * k + p] : fill_x) * fabs(y ? y[p * n + j] : fill_y);
            largest = s > largest ? s : largest;
        }
    for (int d = 0; d < 2; d++) {
        const duet_dtype dt = ins[d];
        int exact = largest < 0x1p24;
        for (int64_t i = 0; exact && i < m * k; i++)
            exact = round_to(dt, x ? x[i] : fill_x) == (x ? x[i] : fill_x);
        for (int64_t i = 0; exact && i < k * n; i++)
            exact = round_to(dt, y ? y[i] : fill_y) == (y ? y[i] : fill_y);
        if (!exact) {
            printf("%s %s: not run, the values are not exact in %s\n", what,
                   duet_dtype_name(dt), duet_dtype_name(dt));
            continue;
        }
        const duet_dtype outs[2] = {dt, DUET_DTYPE_F32};
        for (int c = 0; c < 2; c++) {
            char name[160];
            snprintf(name, sizeof name, "%s %s -> %s", what, duet_dtype_name(dt),
                     duet_dtype_name(outs[c]));
            duet_launch_info info;
            duet_op_options o = options(DUET_ALGO_AUTO, 0, NO_DIM, NO_DIM, &info);
            double *got = seed_gemm_to(dt, outs[c], m, k, n, x, fill_x, y, fill_y, &o);
            double *w = malloc((size_t)(m * n) * sizeof *w + 1);
            if (!w) exit(1);
            for (int64_t i = 0; i < m * n; i++) w[i] = round_to(outs[c], want[i]);
            check_exact(name, &info, got, w, m, n);
            free(w);
            free(got);
        }
    }
}

/* ---- 000: numba.cuda documentation ---------------------------------------------------------- */

static void seed_numba_cuda_docs(void)
{
    /* fast_matmul with TPB = 3 on arange(16).reshape(4, 4) @ ones(4, 4): the kernel computes in
     * float32 shared memory over float64 arrays, so both dtypes run. */
    static const double rows_4x4[4] = {6, 22, 38, 54};
    static const double rows_5x7[5] = {253, 782, 1311, 1840, 2369};
    static const duet_dtype dts[2] = {DUET_DTYPE_F32, DUET_DTYPE_F64};
    for (int d = 0; d < 2; d++) {
        char what[128];
        duet_launch_info info;
        double *x = arange(16), ones[16];
        for (int i = 0; i < 16; i++) ones[i] = 1.0;
        double *want = matmul_loops(x, ones, 4, 4, 4);
        for (int i = 0; i < 16; i++)
            DT_CHECK(want[i] == rows_4x4[i / 4], "x_h @ y_h by loops disagrees with the seed");
        duet_op_options o = options(DUET_ALGO_TILED, 3, NO_DIM, NO_DIM, &info);
        double *z = seed_gemm(dts[d], 4, 4, 4, x, 0, NULL, 1.0, &o);
        snprintf(what, sizeof what, "000 fast_matmul 4x4 @ 4x4 %s TPB=3", duet_dtype_name(dts[d]));
        check_exact(what, &info, z, want, 4, 4);
        check_launch(what, &info, DUET_ALGO_TILED, dim(2, 2), dim(3, 3));
        DT_CHECK(info.tile == 3, "%s: tile %d", what, info.tile);
        if (d == 0) seed_lowp("000 fast_matmul 4x4 @ 4x4", 4, 4, 4, x, 0, NULL, 1.0, want);
        free(x);
        free(want);
        free(z);

        /* Non-square: arange(115).reshape(5, 23) @ ones(23, 7) with TPB = 32. */
        x = arange(115);
        double ones23[161];
        for (int i = 0; i < 161; i++) ones23[i] = 1.0;
        want = matmul_loops(x, ones23, 5, 23, 7);
        for (int i = 0; i < 35; i++)
            DT_CHECK(want[i] == rows_5x7[i / 7], "x_h @ y_h by loops disagrees with the seed");
        o = options(DUET_ALGO_TILED, 32, NO_DIM, NO_DIM, &info);
        z = seed_gemm(dts[d], 5, 23, 7, x, 0, NULL, 1.0, &o);
        snprintf(what, sizeof what, "000 fast_matmul 5x23 @ 23x7 %s TPB=32",
                 duet_dtype_name(dts[d]));
        check_exact(what, &info, z, want, 5, 7);
        check_launch(what, &info, DUET_ALGO_TILED, dim(1, 1), dim(32, 32));
        if (d == 0) seed_lowp("000 fast_matmul 5x23 @ 23x7", 5, 23, 7, x, 0, NULL, 1.0, want);
        free(x);
        free(want);
        free(z);
    }
}

/* ---- 001: numba.roc documentation ------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* matmulfast: blocksize 16, gridsize 16, N = 256, float32 random [0, 1), registered host memory,
 * run twice, then np.testing.assert_allclose(ans, C, rtol=1e-5). */
static void seed_numba_roc(void)
{
    const int64_t n = 256;
    const size_t bytes = (size_t)(n * n) * sizeof(float);
    float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
    double *ref = malloc((size_t)(n * n) * sizeof *ref),
           *gauge = malloc((size_t)(n * n) * sizeof *gauge);
    if (!A || !B || !C || !ref || !gauge) exit(1);
    for (int64_t i = 0; i < n * n; i++) {
        A[i] = (float)dt_rand_uniform(0.0, 1.0);
        B[i] = (float)dt_rand_uniform(0.0, 1.0);
        C[i] = 0.0f;
    }
    DT_OK(duet_host_register(ctx, A, bytes));
    DT_OK(duet_host_register(ctx, B, bytes));
    DT_OK(duet_host_register(ctx, C, bytes));
    dmat a = dev_matrix(DUET_DTYPE_F32, n, n, NULL), b = dev_matrix(DUET_DTYPE_F32, n, n, NULL);
    dmat c = dev_matrix(DUET_DTYPE_F32, n, n, NULL);
    duet_launch_info info;
    for (int run = 1; run <= 2; run++) {
        double ts = now_s();
        DT_OK(duet_buffer_write(NULL, a.buf, 0, A, bytes));
        DT_OK(duet_buffer_write(NULL, b.buf, 0, B, bytes));
        duet_op_options o = options(DUET_ALGO_TILED, 16, NO_DIM, NO_DIM, &info);
        DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a.m, &b.m, 0.0, &c.m, &o));
        DT_OK(duet_buffer_read(NULL, c.buf, 0, C, bytes));
        printf("001 matmulfast %s time: %.6f s\n", run == 1 ? "1st" : "2nd", now_s() - ts);
    }
    DT_OK(duet_host_unregister(ctx, A));
    DT_OK(duet_host_unregister(ctx, B));
    DT_OK(duet_host_unregister(ctx, C));

    double ts = now_s();
    duet_matrix hm = duet_matrix_make(NULL, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
    float *ans = malloc(bytes); /* np.dot(A, B); beta == 0 never reads it */
    if (!ans) exit(1);
    dt_ref_gemm_ex(DUET_OP_N, DUET_OP_N, 1.0, &hm, A, &hm, B, 0.0, &hm, ans, ref, gauge);
    printf("001 CPU time: %.6f s\n", now_s() - ts);
    long bad = 0;
    for (int64_t i = 0; i < n * n; i++) {
        double got = C[i], err = fabs(got - ref[i]);
        int ok = err <= 1e-5 * fabs(ref[i]) && err <= (2.0 * n + 4) * FLT_EPSILON * gauge[i];
        if (!ok && bad++ < 3)
            fprintf(stderr, "  001 matmulfast: C[%lld] = %.9g, want %.9g\n", (long long)i, got,
                    ref[i]);
    }
    DT_CHECK(bad == 0, "001 matmulfast 256x256: %ld elements outside rtol 1e-5", bad);
    check_launch("001 matmulfast 256x256 f32", &info, DUET_ALGO_TILED, dim(16, 16), dim(16, 16));
    printf("001 matmulfast 256x256 f32 [%s]: allclose(rtol=1e-5) %s, C[0][0] = %.6g\n", info.kernel,
           bad ? "fails" : "holds", (double)C[0]);
    dev_free(&a);
    dev_free(&b);
    dev_free(&c);
    free(A);
    free(B);
    free(C);
    free(ans);
    free(ref);
    free(gauge);
}

/* ---- 002: PyCUDA notebook -------------------------------------------------------------------- */

/* N = 1024 randn float32, the naive kernel with block (8, 8) and the 8x8 shared-memory ("SLM")
 * kernel, each checked with assert_almost_equal(C, A @ B, decimal=3). */
static void seed_pycuda(void)
{
    const int64_t n = quick ? 256 : 1024;
    size_t nn = (size_t)(n * n);
    double *av = malloc(nn * sizeof *av), *bv = malloc(nn * sizeof *bv);
    double *ref = malloc(nn * sizeof *ref), *gauge = malloc(nn * sizeof *gauge);
    float *ah = malloc(nn * sizeof *ah), *bh = malloc(nn * sizeof *bh),
          *ch = malloc(nn * sizeof *ch);
    if (!av || !bv || !ref || !gauge || !ah || !bh || !ch) exit(1);
    for (size_t i = 0; i < nn; i++) {
        ah[i] = (float)dt_rand_normal();
        bh[i] = (float)dt_rand_normal();
        av[i] = ah[i];
        bv[i] = bh[i];
        ch[i] = 0.0f;
    }
    duet_matrix hm = duet_matrix_make(NULL, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
    dt_ref_gemm_ex(DUET_OP_N, DUET_OP_N, 1.0, &hm, ah, &hm, bh, 0.0, &hm, ch, ref, gauge);

    for (int v = 0; v < 2; v++) {
        duet_launch_info info;
        duet_op_options o = v == 0 ? options(DUET_ALGO_NAIVE, 0, NO_DIM, dim(8, 8), &info)
                                   : options(DUET_ALGO_TILED, 8, NO_DIM, NO_DIM, &info);
        double *c = seed_gemm(DUET_DTYPE_F32, n, n, n, av, 0, bv, 0, &o);
        char what[96];
        snprintf(what, sizeof what, "002 PyCUDA %s %lldx%lld f32",
                 v == 0 ? "matmul (global memory, block 8x8)" : "matmul (SLM 8x8)", (long long)n,
                 (long long)n);
        long bad = 0;
        for (size_t i = 0; i < nn; i++) {
            double err = fabs(c[i] - ref[i]);
            int ok = err < 1.5e-3 && err <= (2.0 * (double)n + 4) * FLT_EPSILON * gauge[i];
            if (!ok && bad++ < 3)
                fprintf(stderr, "  %s: C[%zu] = %.9g, want %.9g\n", what, i, c[i], ref[i]);
        }
        DT_CHECK(bad == 0, "%s: %ld elements fail assert_almost_equal(decimal=3)", what, bad);
        check_launch(what, &info, v == 0 ? DUET_ALGO_NAIVE : DUET_ALGO_TILED,
                     dim((uint32_t)n / 8, (uint32_t)n / 8), dim(8, 8));
        printf("%s [%s]: C[0][:3] = [%.6g %.6g %.6g], decimal=3 %s\n", what, info.kernel, c[0],
               c[1], c[2], bad ? "fails" : "holds");
        free(c);
    }
    free(av);
    free(bv);
    free(ref);
    free(gauge);
    free(ah);
    free(bh);
    free(ch);
}

/* ---- 003: numba CUDA notebook ---------------------------------------------------------------- */

static void seed_numba_notebook(void)
{
    char what[128];
    duet_launch_info info;

    /* Doubling numpy.ones(256) (float64) with 256 threads per block. */
    dmat v = dev_matrix(DUET_DTYPE_F64, 1, 256, NULL);
    DT_OK(fill(&v, 1.0));
    duet_op_options o = options(DUET_ALGO_NAIVE, 0, NO_DIM, dim(256, 1), &info);
    DT_OK(duet_scale(NULL, 2.0, &v.m, &o));
    double *got = dev_read(&v);
    long bad = 0;
    for (int i = 0; i < 256; i++) bad += got[i] != 2.0;
    DT_CHECK(bad == 0, "003 my_kernel: %ld of 256 elements are not 2", bad);
    check_launch("003 my_kernel doubling", &info, DUET_ALGO_NAIVE, dim(1, 1), dim(256, 1));
    printf("003 my_kernel doubling ones(256) f64 [%s]: [%g %g %g ... %g]\n", info.kernel, got[0],
           got[1], got[2], got[255]);
    free(got);
    dev_free(&v);

    /* matmul on full((24, 12), 3) @ full((12, 22), 4) (float64), threadsperblock (16, 16). */
    o = options(DUET_ALGO_NAIVE, 0, NO_DIM, dim(16, 16), &info);
    double *c = seed_gemm(DUET_DTYPE_F64, 24, 12, 22, NULL, 3.0, NULL, 4.0, &o);
    double *want = malloc(24 * 22 * sizeof *want);
    if (!want) exit(1);
    for (int i = 0; i < 24 * 22; i++) want[i] = 144.0;
    check_exact("003 matmul 24x12 @ 12x22 f64 block 16x16", &info, c, want, 24, 22);
    check_launch("003 matmul 24x12 @ 12x22", &info, DUET_ALGO_NAIVE, dim(2, 2), dim(16, 16));
    seed_lowp("003 matmul 24x12 @ 12x22", 24, 12, 22, NULL, 3.0, NULL, 4.0, want);
    free(c);
    free(want);

    /* fast_matmul with TPB = 16 on full((32, 48), 3) @ full((48, 16), 4): float64 arrays,
     * float32 shared memory; both dtypes. */
    static const duet_dtype dts[2] = {DUET_DTYPE_F32, DUET_DTYPE_F64};
    for (int d = 0; d < 2; d++) {
        o = options(DUET_ALGO_TILED, 16, NO_DIM, NO_DIM, &info);
        c = seed_gemm(dts[d], 32, 48, 16, NULL, 3.0, NULL, 4.0, &o);
        want = malloc(32 * 16 * sizeof *want);
        if (!want) exit(1);
        for (int i = 0; i < 32 * 16; i++) want[i] = 576.0;
        snprintf(what, sizeof what, "003 fast_matmul 32x48 @ 48x16 %s TPB=16",
                 duet_dtype_name(dts[d]));
        check_exact(what, &info, c, want, 32, 16);
        check_launch(what, &info, DUET_ALGO_TILED, dim(1, 2), dim(16, 16));
        if (d == 0) seed_lowp("003 fast_matmul 32x48 @ 48x16", 32, 48, 16, NULL, 3.0, NULL, 4.0, want);
        free(c);
        free(want);
    }
}

/* ---- 004: NVIDIA DLI notebook ---------------------------------------------------------------- */

static void dli_add(int64_t n, duet_algorithm algo, duet_dim3 grid, duet_dim3 block,
                    const char *what)
{
    duet_launch_info info;
    double *a = arange(n * n), *b = arange(n * n), *want = arange(n * n);
    for (int64_t i = 0; i < n * n; i++) {
        b[i] = 2 * a[i];
        want[i] = a[i] + b[i];
    }
    dmat da = dev_matrix(DUET_DTYPE_I32, n, n, a), db = dev_matrix(DUET_DTYPE_I32, n, n, b);
    dmat dc = dev_matrix(DUET_DTYPE_I32, n, n, NULL);
    DT_OK(fill(&dc, 0.0));
    duet_op_options o = options(algo, 0, grid, block, &info);
    DT_OK(duet_add(NULL, 1.0, &da.m, 1.0, &db.m, &dc.m, &o));
    double *got = dev_read(&dc);
    check_exact(what, &info, got, want, n, n);
    check_launch(what, &info, algo, algo == DUET_ALGO_NAIVE ? dim(6, 6) : grid, block);
    free(a);
    free(b);
    free(want);
    free(got);
    dev_free(&da);
    dev_free(&db);
    dev_free(&dc);
}

static void dli_mm(int64_t m, int64_t k, int64_t n, duet_algorithm algo, int tile, duet_dim3 grid,
                   duet_dim3 block, duet_dim3 want_grid, duet_dim3 want_block, const char *what)
{
    duet_launch_info info;
    double *a = arange(m * k), *b = arange(k * n);
    double *want = matmul_loops(a, b, m, k, n);
    double largest = 0;
    for (int64_t i = 0; i < m * n; i++) largest = want[i] > largest ? want[i] : largest;
    DT_CHECK(largest <= INT32_MAX, "%s: the seed's values exceed int32 (%g)", what, largest);
    duet_op_options o = options(algo, tile, grid, block, &info);
    double *got = seed_gemm(DUET_DTYPE_I32, m, k, n, a, 0, b, 0, &o);
    check_exact(what, &info, got, want, m, n);
    check_launch(what, &info, algo, want_grid, want_block);
    seed_lowp(what, m, k, n, a, 0, b, 0, want);
    free(a);
    free(b);
    free(want);
    free(got);
}

/* The transposes on arange(size * size) int32: naive (32x32 threads), tile_transpose (32x32
 * shared tile), the bank-conflict-free 32x33 tile with 32x8 threads, a grid-stride loop and
 * duet's own pick. The notebook's 16384^2 needs 4 GiB of host and device memory: 4096^2 here. */
static void dli_transpose(void)
{
    const int64_t size = quick ? 1024 : 4096;
    const size_t nn = (size_t)(size * size);
    int32_t *in = malloc(nn * sizeof *in), *out = malloc(nn * sizeof *out);
    if (!in || !out) exit(1);
    for (size_t i = 0; i < nn; i++) in[i] = (int32_t)i;
    duet_buffer *bin = NULL, *bout = NULL;
    DT_OK(duet_buffer_create(ctx, nn * 4, &bin));
    DT_OK(duet_buffer_create(ctx, nn * 4, &bout));
    if (!bin || !bout) exit(1);
    DT_OK(duet_buffer_write(NULL, bin, 0, in, nn * 4));
    duet_matrix min = duet_matrix_make(bin, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, size, size);
    duet_matrix mout = duet_matrix_make(bout, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, size, size);
    printf("004 a_in = [[%d %d %d ... %d] ... [%d ... %d]]\n", in[0], in[1], in[2], in[size - 1],
           in[nn - (size_t)size], in[nn - 1]);
    uint32_t g32 = (uint32_t)(size / 32);
    struct {
        const char *name;
        duet_algorithm algo;
        int tile;
        duet_dim3 block, want_grid, want_block;
    } runs[] = {
        {"transpose (naive, 32x32 threads)", DUET_ALGO_NAIVE, 0, dim(32, 32), dim(g32, g32),
         dim(32, 32)},
        {"tile_transpose (32x32 tile)", DUET_ALGO_TILED, 32, NO_DIM, dim(g32, g32), dim(32, 32)},
        {"tile_transpose_no_bank_conflict", DUET_ALGO_TILED_PADDED, 0, NO_DIM, dim(g32, g32),
         dim(32, 8)},
        {"grid-stride transpose", DUET_ALGO_GRID_STRIDE, 0, NO_DIM, dim(64, 64), dim(32, 8)},
        {"auto transpose", DUET_ALGO_AUTO, 0, NO_DIM, NO_DIM, NO_DIM},
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        duet_launch_info info;
        char what[128];
        snprintf(what, sizeof what, "004 %s %lldx%lld i32", runs[r].name, (long long)size,
                 (long long)size);
        DT_OK(duet_buffer_memset(NULL, bout, 0, 0xA5, nn * 4));
        duet_op_options o = options(runs[r].algo, runs[r].tile, NO_DIM, runs[r].block, &info);
        double ts = now_s();
        DT_OK(duet_transpose(NULL, &min, &mout, &o));
        DT_OK(duet_context_synchronize(ctx));
        double dt = now_s() - ts;
        DT_OK(duet_buffer_read(NULL, bout, 0, out, nn * 4));
        long bad = 0;
        for (int64_t i = 0; i < size; i++)
            for (int64_t j = 0; j < size; j++) {
                int32_t want = (int32_t)(j * size + i);
                if (out[i * size + j] != want && bad++ < 3)
                    fprintf(stderr, "  %s: out[%lld, %lld] = %d, want %d\n", what, (long long)i,
                            (long long)j, out[i * size + j], want);
            }
        DT_CHECK(bad == 0, "%s: %ld elements wrong", what, bad);
        if (runs[r].algo != DUET_ALGO_AUTO)
            check_launch(what, &info, runs[r].algo, runs[r].want_grid, runs[r].want_block);
        else
            DT_CHECK(info.launches >= 1 && info.kernel[0] != '\0',
                     "%s: AUTO reported algorithm %d, %d launches", what, (int)info.algorithm,
                     info.launches);
        printf("%s [%s] %.1f ms: a_out = [[%d %d %d ... %d] ... [%d ... %d]]\n", what, info.kernel,
               dt * 1e3, out[0], out[1], out[2], out[size - 1], out[nn - (size_t)size],
               out[nn - 1]);
    }
    DT_OK(duet_buffer_destroy(bin));
    DT_OK(duet_buffer_destroy(bout));
    free(in);
    free(out);
}

static void seed_dli(void)
{
    /* add_matrix: 36x36 arange + 2 * arange with blocks (6, 6) of (6, 6) threads. */
    dli_add(36, DUET_ALGO_NAIVE, NO_DIM, dim(6, 6), "004 add_matrix 36x36 i32 block 6x6");
    /* add_matrix_stride: 64x64 with the same 6x6 grid of 6x6 blocks, larger than the grid. */
    dli_add(64, DUET_ALGO_GRID_STRIDE, dim(6, 6), dim(6, 6),
            "004 add_matrix_stride 64x64 i32 grid 6x6 block 6x6");
    /* mm: arange(16).reshape(4, 4) @ itself, grid (2, 2) of (2, 2) threads. */
    dli_mm(4, 4, 4, DUET_ALGO_NAIVE, 0, NO_DIM, dim(2, 2), dim(2, 2), dim(2, 2),
           "004 mm 4x4 @ 4x4 i32 block 2x2");
    /* mm_stride: arange(12).reshape(3, 4) @ arange(24).reshape(4, 6), blocks (3, 7) of (4, 3)
     * threads: a grid that fits neither dimension. */
    dli_mm(3, 4, 6, DUET_ALGO_GRID_STRIDE, 0, dim(3, 7), dim(4, 3), dim(3, 7), dim(4, 3),
           "004 mm_stride 3x4 @ 4x6 i32 grid 3x7 block 4x3");
    /* The assessment: (M x N) @ (N x M) with N x N threads per block, M / N blocks a side. */
    static const int64_t ns[2] = {32, 8};
    for (int i = 0; i < 2; i++) {
        const int64_t M = 128, N = ns[i];
        char what[96];
        snprintf(what, sizeof what, "004 mm_shared M=%lld N=%lld i32", (long long)M, (long long)N);
        dli_mm(M, N, M, DUET_ALGO_TILED, (int)N, NO_DIM, NO_DIM,
               dim((uint32_t)(M / N), (uint32_t)(M / N)), dim((uint32_t)N, (uint32_t)N), what);
    }
    dli_transpose();
}

int main(int argc, char **argv)
{
    quick = dt_quick_mode(argc, argv);
    ctx = dt_open_or_skip();
    dt_seed(1234);
    printf("test_seeds on %s (%s size set)\n", duet_backend_name(), quick ? "quick" : "full");
    seed_numba_cuda_docs();
    seed_numba_roc();
    seed_pycuda();
    seed_numba_notebook();
    seed_dli();
    DT_OK(duet_context_destroy(ctx));
    return dt_finish("test_seeds");
}
