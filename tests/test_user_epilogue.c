/* test_user_epilogue.c - duet_epilogue_fn: duet_gemm_ex with an epilogue compiled at run time.
 *
 * The function under test, f(acc, c, row, col, params) = max(x, x / 4) + (row % 3) / 2 -
 * (col % 2) / 4 with x = acc + c + bias[col] (bias in params), reads every argument; its slope
 * is at most 1, so D's error is the GEMM's plus D's rounding. Each case checks D against a
 * reference from the exact product in double, over dtypes, layouts (D column-major: the pass
 * runs turned), batches (rows counted down the batches), C absent, beta 0, D in place of C,
 * k = 0 and alpha = 0; then misuse (nothing written), compile errors, the cache, and
 * destruction. On the cpu backend duet_epilogue_fn_create is DUET_ERROR_UNSUPPORTED (as
 * duet_module_create is), which is checked, and nothing else runs.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static duet_context *ctx;

static const char k_source[] =
    "/* a user's epilogue */\n"
    "__device__ float bias_leaky(float acc, float c, long long row, long long col,\n"
    "                            const void *params)\n"
    "{\n"
    "    const float *bias = (const float *)params;\n"
    "    const float x = acc + c + bias[col];\n"
    "    return fmaxf(x, 0.25f * x) + 0.5f * (float)(row % 3) - 0.25f * (float)(col % 2);\n"
    "}\n";

static double ref_fn(double x, int64_t row, int64_t col)
{
    return fmax(x, 0.25 * x) + 0.5 * (double)(row % 3) - 0.25 * (double)(col % 2);
}

static double unit_roundoff(duet_dtype d)
{
    return d == DUET_DTYPE_F16 ? 0x1p-11 : d == DUET_DTYPE_BF16 ? 0x1p-8 : 0x1p-24;
}

typedef struct hm {
    duet_matrix m;
    void *h;
    size_t n;
    duet_buffer *b;
} hm;

static void hm_make(hm *x, duet_dtype dt, int col_major, int64_t rows, int64_t cols, int64_t batch,
                    double spread)
{
    x->m = duet_matrix_make(NULL, dt, col_major ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR,
                            rows, cols);
    x->m.ld += 1;
    x->m.offset = 1;
    if (batch > 1) {
        x->m.batch_count = batch;
        x->m.batch_stride = dt_matrix_extent(&x->m) + 2;
    }
    x->n = dt_matrix_span_elems(&x->m) + 2;
    x->h = malloc(x->n * duet_dtype_size(dt));
    for (size_t i = 0; i < x->n; i++) dt_set(x->h, dt, i, dt_rand_uniform(-spread, spread));
    DT_OK(duet_buffer_create(ctx, x->n * duet_dtype_size(dt), &x->b));
    DT_OK(duet_buffer_write(NULL, x->b, 0, x->h, x->n * duet_dtype_size(dt)));
    x->m.buffer = x->b;
}

static void hm_free(hm *x)
{
    free(x->h);
    DT_OK(duet_buffer_destroy(x->b));
}

typedef struct ucase {
    duet_dtype ab, bd, c, d; /* A's, B's, C's (or -1: no C) and D's dtypes */
    duet_op oa, ob;
    int d_col;
    int64_t m, n, k, batch;
    double alpha, beta;
    int in_place; /* D is C */
} ucase;

static void run(const duet_epilogue_fn *fn, duet_buffer *params, const float *bias, const ucase *t)
{
    const int64_t m = t->m, n = t->n, k = t->k, nb = t->batch;
    hm A, B, C, D;
    hm_make(&A, t->ab, 0, t->oa == DUET_OP_N ? m : k, t->oa == DUET_OP_N ? k : m, nb, 1.0);
    hm_make(&B, t->bd, 1, t->ob == DUET_OP_N ? k : n, t->ob == DUET_OP_N ? n : k, nb, 1.0);
    const int has_c = (int)t->c >= 0;
    if (has_c) hm_make(&C, t->c, t->d_col, m, n, nb, 1.0);
    if (t->in_place)
        D = C;
    else
        hm_make(&D, t->d, t->d_col, m, n, nb, 1.0);
    duet_gemm_epilogue e;
    memset(&e, 0, sizeof e);
    e.fn = fn;
    e.fn_params = params;
    e.fn_params_offset = 64; /* the bias's first element */
    duet_launch_info info;
    memset(&info, 0, sizeof info);
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.info = &info;
    DT_OK(duet_gemm_ex(NULL, t->oa, t->ob, t->alpha, &A.m, &B.m, t->beta, has_c ? &C.m : NULL, &e,
                       &D.m, &o));
    const size_t es = duet_dtype_size(t->d);
    unsigned char *got = (unsigned char *)malloc(D.n * es);
    DT_OK(duet_buffer_read(NULL, D.b, 0, got, D.n * es));
    DT_CHECK(strcmp(info.epilogue, "user_epilogue_bias_leaky") == 0, "info.epilogue \"%s\"",
             info.epilogue);
    int bad = 0;
    for (int64_t q = 0; q < nb; q++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0.0, gauge = 0.0;
                for (int64_t p = 0; p < k; p++) {
                    const double x = dt_get(A.h, t->ab,
                                            dt_matrix_index(&A.m, q, t->oa == DUET_OP_N ? i : p,
                                                            t->oa == DUET_OP_N ? p : i));
                    const double y = dt_get(B.h, t->bd,
                                            dt_matrix_index(&B.m, q, t->ob == DUET_OP_N ? p : j,
                                                            t->ob == DUET_OP_N ? j : p));
                    acc += x * y;
                    gauge += fabs(x * y);
                }
                const double c0 =
                    has_c && t->beta != 0.0 ? dt_get(C.h, t->c, dt_matrix_index(&C.m, q, i, j)) : 0;
                const double x = t->alpha * acc + t->beta * c0 + (double)bias[j];
                const double r = ref_fn(x, q * m + i, j);
                /* 8-bit float inputs: the FP8 tensor cores' own sums (duet.h), 2^-8 of the
                 * gauge at most, as tests/test_fp8.c bounds them. */
                const int f8 = t->ab == DUET_DTYPE_F8E4M3 || t->ab == DUET_DTYPE_F8E5M2;
                const double bound = (double)(k + 8) * 0x1p-24 *
                                         (fabs(t->alpha) * gauge + fabs(t->beta * c0) +
                                          fabs((double)bias[j]) + 2.0) +
                                     (f8 ? 0x1p-8 * fabs(t->alpha) * gauge : 0.0) +
                                     unit_roundoff(t->d) * fabs(r) + 0x1p-24;
                const double g = dt_get(got, t->d, dt_matrix_index(&D.m, q, i, j));
                if (!(fabs(g - r) <= bound) && bad++ < 4)
                    fprintf(stderr, "(%lld,%lld,%lld): got %.9g want %.9g (bound %.3g)\n",
                            (long long)q, (long long)i, (long long)j, g, r, bound);
            }
    DT_CHECK(bad == 0,
             "%s x %s -> C %s D %s %c%c D %s %lldx%lldx%lld batch %lld alpha %g beta %g%s: %d "
             "bad",
             duet_dtype_name(t->ab), duet_dtype_name(t->bd), has_c ? duet_dtype_name(t->c) : "-",
             duet_dtype_name(t->d), t->oa == DUET_OP_N ? 'N' : 'T', t->ob == DUET_OP_N ? 'N' : 'T',
             t->d_col ? "col" : "row", (long long)m, (long long)n, (long long)k, (long long)nb,
             t->alpha, t->beta, t->in_place ? " in place" : "", bad);
    free(got);
    hm_free(&A);
    hm_free(&B);
    if (has_c) hm_free(&C);
    if (!t->in_place) hm_free(&D);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void)
{
    ctx = dt_open_or_skip();
    dt_seed(41);
    duet_epilogue_fn *fn = NULL;

    /* ---- creation: arguments ---- */
    DT_FAILS(duet_epilogue_fn_create(NULL, k_source, "bias_leaky", &fn), DUET_ERROR_INVALID_HANDLE,
             "ctx");
    DT_FAILS(duet_epilogue_fn_create(ctx, NULL, "bias_leaky", &fn), DUET_ERROR_INVALID_ARGUMENT,
             "source");
    DT_FAILS(duet_epilogue_fn_create(ctx, "", "bias_leaky", &fn), DUET_ERROR_INVALID_ARGUMENT,
             "source");
    DT_FAILS(duet_epilogue_fn_create(ctx, k_source, NULL, &fn), DUET_ERROR_INVALID_ARGUMENT,
             "name");
    DT_FAILS(duet_epilogue_fn_create(ctx, k_source, "bias-leaky", &fn), DUET_ERROR_INVALID_ARGUMENT,
             "identifier");
    DT_FAILS(duet_epilogue_fn_create(ctx, k_source, "bias_leaky", NULL),
             DUET_ERROR_INVALID_ARGUMENT, "fn");
    char longname[80];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    DT_FAILS(duet_epilogue_fn_create(ctx, k_source, longname, &fn), DUET_ERROR_INVALID_ARGUMENT,
             "name");
    DT_FAILS(duet_epilogue_fn_destroy(NULL), DUET_ERROR_INVALID_HANDLE, "fn");

    const double t0 = seconds();
    const duet_status st = duet_epilogue_fn_create(ctx, k_source, "bias_leaky", &fn);
    const double t_first = seconds() - t0;
    if (strcmp(duet_backend_name(), "cpu") == 0) {
        DT_CHECK(st == DUET_ERROR_UNSUPPORTED && fn == NULL, "cpu: %s", duet_status_string(st));
        DT_OK(duet_context_destroy(ctx));
        return dt_finish("test_user_epilogue");
    }
    DT_OK(st);
    if (st != DUET_SUCCESS) {
        DT_OK(duet_context_destroy(ctx));
        return dt_finish("test_user_epilogue");
    }

    /* A second creation from the same source: the module cache's, no compile. */
    duet_epilogue_fn *again = NULL;
    const double t1 = seconds();
    DT_OK(duet_epilogue_fn_create(ctx, k_source, "bias_leaky", &again));
    const double t_second = seconds() - t1;
    printf("create: %.1f ms, again %.2f ms\n", 1e3 * t_first, 1e3 * t_second);
    DT_CHECK(t_first < 0.02 || t_second < 0.5 * t_first,
             "the second creation took %.2f ms, the first %.2f ms", 1e3 * t_second, 1e3 * t_first);
    DT_OK(duet_epilogue_fn_destroy(again));
    DT_FAILS(duet_epilogue_fn_destroy(again), DUET_ERROR_INVALID_HANDLE, "fn");

    /* Compile errors: the log names the user's line. */
    duet_epilogue_fn *broken = NULL;
    DT_FAILS(
        duet_epilogue_fn_create(ctx, "__device__ float f(float a) { return a +; }\n", "f", &broken),
        DUET_ERROR_COMPILE, "");
    DT_CHECK(broken == NULL && strstr(duet_last_compile_log(), "duet_epilogue_fn.cu") != NULL,
             "compile log: %.200s", duet_last_compile_log());
    DT_FAILS(duet_epilogue_fn_create(ctx, k_source, "not_there", &broken), DUET_ERROR_COMPILE, "");

    /* The bias the function reads through params, past a 64-byte offset. */
    enum { NMAX = 400 };
    float bias[NMAX];
    for (int j = 0; j < NMAX; j++) bias[j] = (float)dt_rand_uniform(-1.0, 1.0);
    duet_buffer *params = NULL;
    DT_OK(duet_buffer_create(ctx, 64 + sizeof bias, &params));
    DT_OK(duet_buffer_write(NULL, params, 64, bias, sizeof bias));

    /* ---- results ---- */
    const duet_dtype F32 = DUET_DTYPE_F32, F16 = DUET_DTYPE_F16, BF16 = DUET_DTYPE_BF16,
                     E4 = DUET_DTYPE_F8E4M3, E5 = DUET_DTYPE_F8E5M2, NONE = (duet_dtype)-1;
    const duet_op N = DUET_OP_N, T = DUET_OP_T;
    const ucase cases[] = {
        {F32, F32, F32, F32, N, N, 0, 33, 47, 65, 1, 1.0, 0.5, 0},
        {F32, F32, F32, F16, T, N, 1, 130, 70, 200, 2, 0.75, -1.0, 0},
        {BF16, BF16, BF16, BF16, N, T, 0, 300, 257, 129, 1, 1.0, 0.0, 0},
        {F16, F16, F32, F32, T, T, 1, 17, 390, 512, 3, -0.5, 1.0, 0},
        {BF16, BF16, F32, BF16, N, N, 0, 4000, 8, 700, 1, 1.0, 1.0, 0}, /* narrow, split */
        {E4, E5, BF16, F32, T, N, 0, 64, 96, 160, 2, 2.0, 0.25, 0},
        {F16, F16, NONE, F16, N, N, 1, 5, 3, 9, 1, 1.0, 0.0, 0},
        {F32, F32, F32, F32, N, T, 0, 90, 60, 40, 2, 1.0, 0.5, 1}, /* D is C */
        {F32, F32, F32, F32, N, N, 0, 20, 30, 0, 1, 1.0, 2.0, 0},  /* k = 0: acc 0 */
        {BF16, BF16, F32, F32, N, N, 1, 20, 30, 11, 1, 0.0, 1.0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run(fn, params, bias, &cases[i]);

    /* ---- misuse: a clear status, nothing written ---- */
    {
        hm A, B, D, V, X;
        hm_make(&A, F32, 0, 8, 8, 1, 1.0);
        hm_make(&B, F32, 0, 8, 8, 1, 1.0);
        hm_make(&D, F32, 0, 8, 8, 1, 1.0);
        hm_make(&V, F32, 0, 1, 8, 1, 1.0);
        duet_gemm_epilogue e;
        memset(&e, 0, sizeof e);
        e.fn = fn;
        e.fn_params = params;
        e.fn_params_offset = 64;
        e.bias = &V.m;
        DT_FAILS(duet_gemm_ex(NULL, N, N, 1.0, &A.m, &B.m, 0.0, NULL, &e, &D.m, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "epi.bias");
        e.bias = NULL;
        e.act = DUET_ACT_RELU;
        DT_FAILS(duet_gemm_ex(NULL, N, N, 1.0, &A.m, &B.m, 0.0, NULL, &e, &D.m, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "epi.act");
        e.act = DUET_ACT_NONE;
        e.fn_params_offset = 64 + sizeof bias + 1;
        DT_FAILS(duet_gemm_ex(NULL, N, N, 1.0, &A.m, &B.m, 0.0, NULL, &e, &D.m, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "epi.fn_params_offset");
        e.fn_params_offset = 64;
        e.fn = NULL;
        DT_FAILS(duet_gemm_ex(NULL, N, N, 1.0, &A.m, &B.m, 0.0, NULL, &e, &D.m, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "epi.fn_params");
        e.fn = fn;
        hm_make(&X, DUET_DTYPE_F64, 0, 8, 8, 1, 1.0);
        hm F64A, F64B;
        hm_make(&F64A, DUET_DTYPE_F64, 0, 8, 8, 1, 1.0);
        hm_make(&F64B, DUET_DTYPE_F64, 0, 8, 8, 1, 1.0);
        DT_FAILS(duet_gemm_ex(NULL, N, N, 1.0, &F64A.m, &F64B.m, 0.0, NULL, &e, &X.m, NULL),
                 DUET_ERROR_UNSUPPORTED, "epi.fn");
        /* Nothing was written to D. */
        float *now = (float *)malloc(D.n * sizeof(float));
        DT_OK(duet_buffer_read(NULL, D.b, 0, now, D.n * sizeof(float)));
        DT_CHECK(memcmp(now, D.h, D.n * sizeof(float)) == 0, "a refused call wrote D");
        free(now);
        duet_epilogue_fn *gone = NULL;
        DT_OK(duet_epilogue_fn_create(ctx, k_source, "bias_leaky", &gone));
        DT_OK(duet_epilogue_fn_destroy(gone));
        e.fn = gone;
        DT_FAILS(duet_gemm_ex(NULL, N, N, 1.0, &A.m, &B.m, 0.0, NULL, &e, &D.m, NULL),
                 DUET_ERROR_INVALID_HANDLE, "epi.fn");
        hm_free(&A), hm_free(&B), hm_free(&D), hm_free(&V), hm_free(&X), hm_free(&F64A),
            hm_free(&F64B);
    }
    DT_OK(duet_buffer_destroy(params));
    /* fn is still live: the context's destruction frees it. */
    DT_OK(duet_context_destroy(ctx));
    return dt_finish("test_user_epilogue");
}
