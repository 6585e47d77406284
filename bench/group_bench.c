/* group_bench.c - duet-group-bench: duet_group_gemm timed on 1..N devices, with the scaling. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, isatty */
/*
 *   duet-group-bench [--dtype f64|f32|bf16|f16|i8] [--n N] [--k K] [--devices LIST]
 *                    [--tile T] [--iters I] [--pageable] [--progress]
 *
 * LIST is a comma-separated list of devices, one context each ("0,1,2,3"; "0,0" puts two
 * contexts on device 0, which tests the logic, not the speed); default: every device once.
 * The program times an N x N x K gemm (C = A B, row-major, host matrices registered with
 * duet_host_register unless --pageable) on the first 1, 2, 4, ... members of the list and on
 * the whole list, and prints the time, the rate and the efficiency against linear scaling of
 * the one-member time. The first call of each group (which grows the panels) is not timed.
 * Beside it: the efficiency against p devices at one device's duet_gemm speed (the same
 * problem, operands already on the first device, timed first), and on CUDA builds for f32 and
 * f64 cuBLASXt (cublasXtSgemm/Dgemm) on the same host matrices and devices. A and B hold values
 * from a hash of each element's position (never zero, exact in the dtype); after each group
 * size's runs 16 elements of C are checked against a long-double sum (exit 1 when one is off).
 */
#include "duet/duet.h"
#if defined(DUET_BENCH_CUBLASXT)
#include <cublasXt.h>
#endif

#include "bench_pattern.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if !defined(_WIN32)
#include <unistd.h>
#endif

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CHECK(call)                                                                          \
    do {                                                                                     \
        duet_status s_ = (call);                                                             \
        if (s_ != DUET_SUCCESS) {                                                            \
            fprintf(stderr, "%s -> %s: %s\n", #call, duet_status_string(s_), duet_last_error()); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: duet-group-bench [--dtype f64|f32|bf16|f16|i8] [--n N] [--k K]\n"
            "                        [--devices LIST] [--tile T] [--iters I] [--pageable]\n"
            "                        [--progress]\n"
            "\n"
            "Times duet_group_gemm, C (N x N) = A (N x K) B (K x N) row-major in host memory\n"
            "(registered with duet_host_register unless --pageable), on the first 1, 2, 4, ...\n"
            "members of LIST and on all of it: the best of I timed calls (default 3) after one\n"
            "untimed call, the rate, and the efficiency against linear scaling of the\n"
            "one-member time; the efficiency against p devices at one device's duet_gemm\n"
            "speed (the same problem on device-resident operands, timed first: vs_gemm), and\n"
            "on CUDA builds for f32 and f64 cuBLASXt on the same host matrices and devices.\n"
            "\n"
            "  --dtype D     f64 (default), f32, bf16 and f16 (f32 C), i8 (i32 C)\n"
            "  --n N         rows and columns of C (default 8192)\n"
            "  --k K         the inner dimension (default N)\n"
            "  --devices L   comma-separated devices, one context each (default: every device;\n"
            "                \"0,0\" puts two contexts on device 0: the logic, not the speed)\n"
            "  --tile T      the C tile edge duet_group_set_tile deals out (default: duet's)\n"
            "  --iters I     timed calls per member count (default 3)\n"
            "  --pageable    leave the host matrices unregistered\n"
            "  --progress    a line on stderr as each member count starts (default: when\n"
            "                stderr is a terminal)\n"
            "\n"
            "A and B hold a hashed pattern of their elements' positions; after each group\n"
            "size's runs 16 elements of C are checked against a long-double sum.\n"
            "\n"
            "exit status: 0 done, 1 a call failed or a checked element of C is wrong, 2 bad\n"
            "usage, 77 no device.\n");
}

/* A value option without its value, or a value that is not an integer in [lo, hi]: one line
 * on stderr; returns 0. */
static int int_value(const char *opt, const char *v, long long lo, long long hi, long long *out)
{
    if (!v) {
        fprintf(stderr, "duet-group-bench: %s needs a value (duet-group-bench --help)\n", opt);
        return 0;
    }
    char *end = NULL;
    errno = 0;
    const long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "duet-group-bench: %s %s: want an integer in %lld..%lld\n", opt, v, lo,
                hi);
        return 0;
    }
    *out = x;
    return 1;
}

static int parse_dtype(const char *s, duet_dtype *ab, duet_dtype *c)
{
    static const struct {
        const char *name;
        duet_dtype ab, c;
    } t[] = {{"f64", DUET_DTYPE_F64, DUET_DTYPE_F64}, {"f32", DUET_DTYPE_F32, DUET_DTYPE_F32},
             {"bf16", DUET_DTYPE_BF16, DUET_DTYPE_F32}, {"f16", DUET_DTYPE_F16, DUET_DTYPE_F32},
             {"i8", DUET_DTYPE_I8, DUET_DTYPE_I32}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(s, t[i].name)) {
            *ab = t[i].ab;
            *c = t[i].c;
            return 1;
        }
    return 0;
}

/* The value of element (i, j) of operand `which` (0: A, 1: B), never 0 and exact in dt: 24
 * bits in [-0.5, 0.5) for f32 and f64, rounded to nearest even for bf16, multiples of 2^-11
 * for f16, integers in [-7, 7] for i8. */
static double pattern(int which, int64_t i, int64_t j, duet_dtype dt)
{
    const uint64_t h = bench_pattern_hash(which, i, j);
    if (dt == DUET_DTYPE_I8) {
        const int v = (int)(h >> 60) - 7; /* -7 .. 8 */
        return v == 0 || v == 8 ? 1.0 : (double)v;
    }
    if (dt == DUET_DTYPE_F16) {
        const double v = (double)(h >> 53) / 2048.0 - 0.5;
        return v == 0.0 ? 0.25 : v;
    }
    const double v = bench_pattern_24(h);
    return dt == DUET_DTYPE_BF16 ? bench_round_bf16(v) : v;
}

/* v (a pattern value, exact in dt) stored as dt at p. */
static void store_value(unsigned char *p, double v, duet_dtype dt)
{
    if (dt == DUET_DTYPE_F64) {
        memcpy(p, &v, 8);
    } else if (dt == DUET_DTYPE_I8) {
        const int8_t x = (int8_t)v;
        memcpy(p, &x, 1);
    } else {
        const float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        if (dt == DUET_DTYPE_F32) {
            memcpy(p, &u, 4);
        } else if (dt == DUET_DTYPE_BF16) {
            const uint16_t hi = (uint16_t)(u >> 16);
            memcpy(p, &hi, 2);
        } else {
            /* f16 of a multiple of 2^-11 in [-0.5, 0.5): exact, possibly subnormal. */
            const double a = v < 0 ? -v : v;
            uint16_t bits = v < 0 ? 0x8000u : 0u;
            int e = 0;
            double m = a;
            while (m < 1.0 && e > -14) m *= 2.0, e--;
            if (m < 1.0) /* subnormal: a = frac * 2^-14, frac = m in [0, 1) */
                bits |= (uint16_t)(m * 1024.0);
            else
                bits |= (uint16_t)(((e + 15) << 10) | (uint16_t)((m - 1.0) * 1024.0));
            memcpy(p, &bits, 2);
        }
    }
}

/* A row-major rows x cols matrix of operand `which`'s pattern. */
static void fill_pattern(unsigned char *p, int which, int64_t rows, int64_t cols, duet_dtype dt)
{
    const size_t es = duet_dtype_size(dt);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            store_value(p + (size_t)(i * cols + j) * es, pattern(which, i, j, dt), dt);
}

/* 16 elements of the row-major n x n C = A B (k deep) against a long-double sum of the
 * pattern, within (2k + 4) u sum |a b| (exact for i8); returns how many are off. */
static int check_c(const unsigned char *c, duet_dtype ab, duet_dtype ct, int64_t n, int64_t k)
{
    int bad = 0;
    const long double u = ab == DUET_DTYPE_F64 ? 0x1p-53L : ab == DUET_DTYPE_I8 ? 0.0L : 0x1p-24L;
    for (int q = 0; q < 16; q++) {
        int64_t i, j;
        bench_sample(q, n, &i, &j);
        long double ref = 0.0L, mag = 0.0L;
        for (int64_t l = 0; l < k; l++) {
            const long double pr = (long double)pattern(0, i, l, ab) * pattern(1, l, j, ab);
            ref += pr;
            mag += pr < 0 ? -pr : pr;
        }
        const unsigned char *e = c + (size_t)(i * n + j) * duet_dtype_size(ct);
        double got;
        if (ct == DUET_DTYPE_F64) {
            memcpy(&got, e, 8);
        } else if (ct == DUET_DTYPE_I32) {
            int32_t x;
            memcpy(&x, e, 4);
            got = x;
        } else {
            float f;
            memcpy(&f, e, 4);
            got = f;
        }
        const double bound = (double)((2.0L * k + 4) * u * mag);
        if (!(fabs(got - (double)ref) <= bound)) {
            if (bad < 4)
                fprintf(stderr,
                        "duet-group-bench: C(%lld, %lld) = %.17g, want %.17g (bound %.3g)\n",
                        (long long)i, (long long)j, got, (double)ref, bound);
            bad++;
        }
    }
    return bad;
}

/* One device's duet_gemm rate (flop/s) on the problem with every operand on the device: the
 * best of iters calls after one untimed. Where the problem does not fit, fewer rows of C (and
 * of A), halved until it does. 0 when even one row does not fit. */
static double gemm_rate(duet_context *ctx, duet_dtype ab, duet_dtype ct, int64_t n, int64_t k,
                        int iters, const unsigned char *ha, const unsigned char *hb)
{
    const size_t ea = duet_dtype_size(ab), ec = duet_dtype_size(ct);
    for (int64_t m = n; m >= 1; m /= 2) {
        duet_buffer *da = NULL, *db = NULL, *dc = NULL;
        duet_status st = duet_buffer_create(ctx, (size_t)m * (size_t)k * ea, &da);
        if (st == DUET_SUCCESS) st = duet_buffer_create(ctx, (size_t)k * (size_t)n * ea, &db);
        if (st == DUET_SUCCESS) st = duet_buffer_create(ctx, (size_t)m * (size_t)n * ec, &dc);
        if (st != DUET_SUCCESS) {
            if (da) duet_buffer_destroy(da);
            if (db) duet_buffer_destroy(db);
            if (st != DUET_ERROR_OUT_OF_MEMORY) break;
            continue;
        }
        duet_matrix ma = duet_matrix_make(da, ab, DUET_LAYOUT_ROW_MAJOR, m, k);
        duet_matrix mb = duet_matrix_make(db, ab, DUET_LAYOUT_ROW_MAJOR, k, n);
        duet_matrix mc = duet_matrix_make(dc, ct, DUET_LAYOUT_ROW_MAJOR, m, n);
        /* The host matrices' first m rows of A and all of B: the values the group runs on. */
        CHECK(duet_buffer_write(NULL, da, 0, ha, (size_t)m * (size_t)k * ea));
        CHECK(duet_buffer_write(NULL, db, 0, hb, (size_t)k * (size_t)n * ea));
        CHECK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, 0.0, &mc, NULL));
        CHECK(duet_context_synchronize(ctx));
        double best = 1e30;
        for (int it = 0; it < iters; it++) {
            const double t0 = now_s();
            CHECK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, 0.0, &mc, NULL));
            CHECK(duet_context_synchronize(ctx));
            const double dt = now_s() - t0;
            if (dt < best) best = dt;
        }
        CHECK(duet_buffer_destroy(da));
        CHECK(duet_buffer_destroy(db));
        CHECK(duet_buffer_destroy(dc));
        return 2.0 * (double)m * (double)n * (double)k / best;
    }
    return 0.0;
}

#if defined(DUET_BENCH_CUBLASXT)
/* cuBLASXt's time for C = A B (row-major host matrices: C^T = B^T A^T column-major) on the
 * first m devices of devs, the best of iters calls after one untimed; 0 if it failed. */
static double xt_time(const int *devs, int m, duet_dtype ab, const void *a, const void *b, void *c,
                      int64_t n, int64_t k, int iters)
{
    cublasXtHandle_t h;
    if (cublasXtCreate(&h) != CUBLAS_STATUS_SUCCESS) return 0.0;
    int ids[DUET_GROUP_MAX];
    for (int i = 0; i < m; i++) ids[i] = devs[i];
    double best = 0.0;
    if (cublasXtDeviceSelect(h, m, ids) == CUBLAS_STATUS_SUCCESS) {
        best = 1e30;
        for (int it = -1; it < iters && best > 0.0; it++) {
            const double t0 = now_s();
            cublasStatus_t r;
            if (ab == DUET_DTYPE_F64) {
                const double one = 1.0, zero = 0.0;
                r = cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (size_t)n, (size_t)n, (size_t)k, &one,
                                  (const double *)b, (size_t)n, (const double *)a, (size_t)k, &zero,
                                  (double *)c, (size_t)n);
            } else {
                const float one = 1.0f, zero = 0.0f;
                r = cublasXtSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (size_t)n, (size_t)n, (size_t)k, &one,
                                  (const float *)b, (size_t)n, (const float *)a, (size_t)k, &zero,
                                  (float *)c, (size_t)n);
            }
            const double dt = now_s() - t0;
            if (r != CUBLAS_STATUS_SUCCESS) best = 0.0;
            else if (it >= 0 && dt < best) best = dt;
        }
    }
    cublasXtDestroy(h);
    return best;
}
#endif /* DUET_BENCH_CUBLASXT */

int main(int argc, char **argv)
{
    /* line-buffered: each row shows as it is measured, also through a pipe */
    setvbuf(stdout, NULL, _IOLBF, 0);
    duet_dtype ab = DUET_DTYPE_F64, ct = DUET_DTYPE_F64;
    int64_t n = 8192, k = -1, tile = 0;
    int iters = 3, pageable = 0, progress = 0, devs[DUET_GROUP_MAX], ndev = 0;
    const char *list = NULL;
#if !defined(_WIN32)
    progress = isatty(2);
#endif
    /* One branch per option; a bad option or value is one line on stderr and exit status 2. */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--dtype")) {
            if (!v) {
                fprintf(stderr, "duet-group-bench: --dtype needs a value (duet-group-bench "
                                "--help)\n");
                return 2;
            }
            if (!parse_dtype(v, &ab, &ct)) {
                fprintf(stderr, "duet-group-bench: unknown dtype '%s' for --dtype (f64, f32, bf16, "
                                "f16, i8)\n",
                        v);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--n")) {
            if (!int_value(a, v, 1, INT32_MAX, &x)) return 2;
            n = x;
            i++;
        } else if (!strcmp(a, "--k")) {
            if (!int_value(a, v, 1, INT32_MAX, &x)) return 2;
            k = x;
            i++;
        } else if (!strcmp(a, "--tile")) {
            if (!int_value(a, v, 0, INT32_MAX, &x)) return 2;
            tile = x;
            i++;
        } else if (!strcmp(a, "--iters")) {
            if (!int_value(a, v, 1, 1000000, &x)) return 2;
            iters = (int)x;
            i++;
        } else if (!strcmp(a, "--devices")) {
            if (!v) {
                fprintf(stderr, "duet-group-bench: --devices needs a value (duet-group-bench "
                                "--help)\n");
                return 2;
            }
            list = v;
            i++;
        } else if (!strcmp(a, "--pageable")) {
            pageable = 1;
        } else if (!strcmp(a, "--progress")) {
            progress = 1;
        } else if (!strcmp(a, "--version")) {
            printf("duet-group-bench %s\n", duet_version_string());
            return 0;
        } else {
            fprintf(stderr, "duet-group-bench: unknown option '%s' (duet-group-bench --help lists "
                            "them)\n",
                    a);
            return 2;
        }
    }
    if (k < 0) k = n;
    if (list) {
        /* digits separated by single commas, at most DUET_GROUP_MAX of them */
        for (const char *p = list;;) {
            char *end = NULL;
            errno = 0;
            const long d = strtol(p, &end, 10);
            if (end == p || *p == '-' || *p == '+' || errno || d > INT32_MAX ||
                (*end && *end != ',') || ndev == DUET_GROUP_MAX) {
                fprintf(stderr, "duet-group-bench: --devices %s: want up to %d device numbers "
                                "separated by commas (\"0,1,2\")\n",
                        list, DUET_GROUP_MAX);
                return 2;
            }
            devs[ndev++] = (int)d;
            if (!*end) break;
            p = end + 1;
        }
    }
    int count = 0;
    if (duet_device_count(&count) != DUET_SUCCESS) {
        printf("skipped: no device (%s)\n", duet_last_error());
        return 77;
    }
    if (list) {
        for (int i = 0; i < ndev; i++)
            if (devs[i] >= count) {
                fprintf(stderr, "duet-group-bench: --devices %s: device %d, but the %s backend "
                                "sees %d\n",
                        list, devs[i], duet_backend_name(), count);
                return 2;
            }
    } else {
        for (int d = 0; d < count && d < DUET_GROUP_MAX; d++) devs[ndev++] = d;
    }

    duet_context *ctx[DUET_GROUP_MAX];
    for (int i = 0; i < ndev; i++) CHECK(duet_context_create(devs[i], &ctx[i]));
    const size_t ea = duet_dtype_size(ab), ec = duet_dtype_size(ct);
    const size_t a_bytes = (size_t)n * (size_t)k * ea, b_bytes = (size_t)k * (size_t)n * ea;
    const size_t c_bytes = (size_t)n * (size_t)n * ec;
    if (progress)
        fprintf(stderr, "duet-group-bench progress: filling %.2f GiB of host matrices%s\n",
                (double)(a_bytes + b_bytes + c_bytes) / 1073741824.0,
                pageable ? "" : " and registering them");
    unsigned char *a = malloc(a_bytes), *b = malloc(b_bytes), *c = malloc(c_bytes);
    if (!a || !b || !c) {
        fprintf(stderr, "cannot allocate %zu bytes of host memory\n", a_bytes + b_bytes + c_bytes);
        return 1;
    }
    /* The pattern (the first touch of every page happens here). */
    fill_pattern(a, 0, n, k, ab);
    fill_pattern(b, 1, k, n, ab);
    memset(c, 0, c_bytes);
    if (!pageable) {
        CHECK(duet_host_register(ctx[0], a, a_bytes));
        CHECK(duet_host_register(ctx[0], b, b_bytes));
        CHECK(duet_host_register(ctx[0], c, c_bytes));
    }
    duet_host_matrix ha = {a, ab, DUET_LAYOUT_ROW_MAJOR, n, k, k, 1, 0};
    duet_host_matrix hb = {b, ab, DUET_LAYOUT_ROW_MAJOR, k, n, n, 1, 0};
    duet_host_matrix hc = {c, ct, DUET_LAYOUT_ROW_MAJOR, n, n, n, 1, 0};

    printf("duet_group_gemm %s, %lld x %lld x %lld, %s host memory, backend %s\n",
           duet_dtype_name(ab), (long long)n, (long long)n, (long long)k,
           pageable ? "pageable" : "registered", duet_backend_name());
    /* GFLOP/s on the cpu backend, where a TFLOP/s column would read 0.0x */
    const int on_cpu = !strcmp(duet_backend_name(), "cpu");
    const double unit = on_cpu ? 1e-9 : 1e-12;
    if (progress) fprintf(stderr, "duet-group-bench progress: one device's duet_gemm (baseline)\n");
    const double r1 = gemm_rate(ctx[0], ab, ct, n, k, iters, a, b);
    printf("one device's duet_gemm, operands on the device: %.3f %s\n", r1 * unit,
           on_cpu ? "GFLOP/s" : "TFLOP/s");
#if defined(DUET_BENCH_CUBLASXT)
    const int with_xt = ab == DUET_DTYPE_F64 || ab == DUET_DTYPE_F32;
#else
    const int with_xt = 0;
#endif
    printf("%8s %12s %12s %10s %10s", "members", "ms", on_cpu ? "GFLOP/s" : "TFLOP/s", "efficiency",
           "vs_gemm");
    if (with_xt) printf(" %12s %10s", "cublasxt_ms", "xt/duet");
    printf("\n");
    double t1 = 0;
    for (int m = 1; m <= ndev; m = (m * 2 > ndev && m < ndev) ? ndev : m * 2) {
        if (progress)
            fprintf(stderr, "duet-group-bench progress: %d member%s: 1 untimed call, %d timed\n", m,
                    m > 1 ? "s" : "", iters);
        duet_group *g = NULL;
        CHECK(duet_group_create(ctx, m, &g));
        if (tile > 0) CHECK(duet_group_set_tile(g, tile));
        CHECK(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1.0, &ha, &hb, 0.0, &hc, NULL));
        double best = 1e30;
        for (int it = 0; it < iters; it++) {
            const double t0 = now_s();
            CHECK(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1.0, &ha, &hb, 0.0, &hc, NULL));
            const double dt = now_s() - t0;
            if (dt < best) best = dt;
        }
        CHECK(duet_group_destroy(g));
        const int bad = check_c(c, ab, ct, n, k);
        if (bad) {
            fprintf(stderr,
                    "duet-group-bench: %d member%s: %d of 16 checked elements of C are wrong\n", m,
                    m > 1 ? "s" : "", bad);
            return 1;
        }
        memset(c, 0, c_bytes);
        if (m == 1) t1 = best;
        const double flops = 2.0 * (double)n * (double)n * (double)k;
        printf("%8d %12.2f %12.3f %9.1f%% %9.1f%%", m, best * 1e3, flops / best * unit,
               100.0 * t1 / (best * m), r1 > 0 ? 100.0 * flops / best / (r1 * m) : 0.0);
#if defined(DUET_BENCH_CUBLASXT)
        if (with_xt) {
            if (progress)
                fprintf(stderr, "duet-group-bench progress: %d member%s: cuBLASXt\n", m,
                        m > 1 ? "s" : "");
            const double tx = xt_time(devs, m, ab, a, b, c, n, k, iters);
            if (tx > 0) printf(" %12.2f %10.3f", tx * 1e3, tx / best);
            else printf(" %12s %10s", "failed", "-");
        }
#endif
        printf("\n");
        if (m == ndev) break;
    }
    if (!pageable) {
        CHECK(duet_host_unregister(ctx[0], a));
        CHECK(duet_host_unregister(ctx[0], b));
        CHECK(duet_host_unregister(ctx[0], c));
    }
    for (int i = 0; i < ndev; i++) CHECK(duet_context_destroy(ctx[i]));
    free(a);
    free(b);
    free(c);
    return 0;
}
