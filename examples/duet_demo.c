/* duet_demo.c - duet-demo: device info, then GEMM, transpose and add, each timed and checked. */
#include <duet/duet.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_SKIP 77 /* what CTest reads as "skipped": no device for the built backend */

typedef struct demo_args {
    int64_t gemm_n;      /* M = N = K */
    int64_t transpose_n; /* rows = cols */
    int64_t add_n;       /* rows = cols */
    int warmup;
    int iters;
    int samples; /* GEMM outputs checked against the host when the full check is too costly */
} demo_args;

static void usage(FILE *f)
{
    fprintf(f, "usage: duet-demo [options]\n"
               "\n"
               "Prints the device of duet's backend, then runs and checks three ops on it:\n"
               "  gemm       C = A * B, f32, N x N x N (checked in double on the host, sampled\n"
               "             for large N)\n"
               "  transpose  out = in^T, i32, N x N (checked completely)\n"
               "  add        c = 2 a - b, f32, N x N (checked completely)\n"
               "Each op is timed with duet_profile (median over the iterations) and reported\n"
               "with the algorithm and launch configuration duet chose (duet_launch_info).\n"
               "\n"
               "options:\n"
               "  --gemm N        GEMM size (default 4096 on a GPU, 512 on the cpu backend)\n"
               "  --transpose N   transpose size (default 4096)\n"
               "  --add N         add size (default 4096)\n"
               "  --warmup N      untimed runs before timing (default 2)\n"
               "  --iters N       timed runs (default 10 on a GPU, 5 on the cpu backend)\n"
               "  --samples N     GEMM outputs to check when N^3 is large (default 2048)\n"
               "  -h, --help      this text\n"
               "  --version       duet's version and backend\n"
               "\n"
               "exit status: 0 every check passed, 1 a check or call failed, 2 bad usage,\n"
               "77 no device for the backend this duet was built with.\n");
}

static int parse_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end = NULL;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "duet-demo: %s needs an integer in [%lld, %lld], got '%s'\n", opt,
                (long long)lo, (long long)hi, s ? s : "");
        return 0;
    }
    *out = v;
    return 1;
}

/* Returns 0 on success, 2 on bad usage, -1 after --help or --version. */
static int parse_args(int argc, char **argv, int on_gpu, demo_args *a)
{
    a->gemm_n = on_gpu ? 4096 : 512;
    a->transpose_n = 4096;
    a->add_n = 4096;
    a->warmup = 2;
    a->iters = on_gpu ? 10 : 5;
    a->samples = 2048;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t x;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(o, "--version")) {
            printf("duet-demo %s\n", duet_version_string());
            return -1;
        } else if (!strcmp(o, "--gemm")) {
            if (!parse_int(o, v, 1, 65536, &a->gemm_n)) return 2;
        } else if (!strcmp(o, "--transpose")) {
            if (!parse_int(o, v, 1, 65536, &a->transpose_n)) return 2;
        } else if (!strcmp(o, "--add")) {
            if (!parse_int(o, v, 1, 65536, &a->add_n)) return 2;
        } else if (!strcmp(o, "--warmup")) {
            if (!parse_int(o, v, 0, 1000, &x)) return 2;
            a->warmup = (int)x;
        } else if (!strcmp(o, "--iters")) {
            if (!parse_int(o, v, 1, 100000, &x)) return 2;
            a->iters = (int)x;
        } else if (!strcmp(o, "--samples")) {
            if (!parse_int(o, v, 1, 1 << 24, &x)) return 2;
            a->samples = (int)x;
        } else {
            fprintf(stderr, "duet-demo: unknown option '%s' (try --help)\n", o);
            return 2;
        }
        i++; /* every option but --help and --version takes a value */
    }
    return 0;
}

/* ---- small helpers ----------------------------------------------------------------------- */

/* Reports a failed duet call with its status and message; returns 0 so callers can chain. */
static int failed(const char *what, duet_status s)
{
    fprintf(stderr, "duet-demo: %s failed: %s: %s\n", what, duet_status_string(s),
            duet_last_error());
    return 0;
}
#define TRY(call) ((st = (call)) == DUET_SUCCESS || failed(#call, st))

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void)
{
    /* xorshift64*: fast and reproducible, so a failing element is the same on every run. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static float rng_float(void) { return (float)((rng_next() >> 40) * (2.0 / 16777216.0) - 1.0); }

static void print_info(const duet_launch_info *info)
{
    const duet_launch_config *c = &info->config;
    printf("  algorithm %s, kernel %s, %d launch%s\n", duet_algorithm_name(info->algorithm),
           info->kernel[0] ? info->kernel : "(none)", info->launches,
           info->launches == 1 ? "" : "es");
    if (c->block.x == 0) {
        printf("  no launch configuration reported (host loops)\n");
        return;
    }
    printf("  grid %u x %u x %u, block %u x %u x %u, dynamic shared %zu B", c->grid.x, c->grid.y,
           c->grid.z, c->block.x, c->block.y, c->block.z, c->shared_bytes);
    if (info->tile) printf(", tile %d", info->tile);
    printf("\n");
}

static void print_time(const duet_profile_result *r, const char *unit, double per_second)
{
    printf("  time: median %.3f ms (min %.3f, max %.3f, %d iters) -> %.1f %s\n", r->median_ms,
           r->min_ms, r->max_ms, r->iters, per_second / (r->median_ms * 1e-3), unit);
}

/* ---- GEMM -------------------------------------------------------------------------------- */

typedef struct gemm_job {
    duet_stream *stream;
    duet_matrix a, b, c;
    duet_op_options opt;
} gemm_job;

static duet_status run_gemm(void *user)
{
    gemm_job *j = (gemm_job *)user;
    return duet_gemm(j->stream, DUET_OP_N, DUET_OP_N, 1.0, &j->a, &j->b, 0.0, &j->c, &j->opt);
}

static int demo_gemm(duet_context *ctx, duet_stream *stream, const demo_args *args)
{
    const int64_t n = args->gemm_n;
    const size_t count = (size_t)n * (size_t)n, bytes = count * sizeof(float);
    printf("\ngemm: C = A * B, f32, row-major, M = N = K = %lld\n", (long long)n);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    duet_buffer *da = NULL, *db = NULL, *dc = NULL;
    duet_launch_info info;
    duet_profile_result prof;
    duet_status st;
    int ok = a && b && c;
    if (!ok) fprintf(stderr, "duet-demo: cannot allocate %zu bytes of host memory\n", 3 * bytes);
    for (size_t i = 0; ok && i < count; i++) {
        a[i] = rng_float();
        b[i] = rng_float();
    }
    ok = ok && TRY(duet_buffer_create(ctx, bytes, &da)) &&
         TRY(duet_buffer_create(ctx, bytes, &db)) && TRY(duet_buffer_create(ctx, bytes, &dc)) &&
         TRY(duet_buffer_write(stream, da, 0, a, bytes)) &&
         TRY(duet_buffer_write(stream, db, 0, b, bytes));
    gemm_job job;
    memset(&job, 0, sizeof job);
    job.stream = stream;
    job.a = duet_matrix_make(da, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
    job.b = duet_matrix_make(db, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
    job.c = duet_matrix_make(dc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
    job.opt.info = &info;
    ok = ok && TRY(duet_profile(ctx, stream, run_gemm, &job, args->warmup, args->iters, &prof)) &&
         TRY(duet_buffer_read(stream, dc, 0, c, bytes));
    if (ok) {
        print_info(&info);
        print_time(&prof, "GFLOP/s", 2.0 * (double)n * (double)n * (double)n / 1e9);

        /* Every element when N^3 is small, else a reproducible sample, against a dot product in
         * double. Bound: |C - Cref| <= K * eps * sum |a||b|, what any order of f32 sums meets. */
        const int64_t total = n * n;
        const int full = (double)n * (double)n * (double)n <= 1.5e8;
        const int64_t checks = full ? total : (args->samples < total ? args->samples : total);
        int64_t bad = 0;
        double worst = 0.0;
        for (int64_t s = 0; s < checks; s++) {
            int64_t idx = full ? s : (int64_t)(rng_next() % (uint64_t)total);
            int64_t i = idx / n, j = idx % n;
            double ref = 0.0, mag = 0.0;
            for (int64_t k = 0; k < n; k++) {
                double p = (double)a[i * n + k] * (double)b[k * n + j];
                ref += p;
                mag += fabs(p);
            }
            double err = fabs((double)c[idx] - ref);
            double tol = (double)n * FLT_EPSILON * mag + FLT_MIN;
            if (err / tol > worst) worst = err / tol;
            if (!(err <= tol)) {
                if (bad < 5)
                    fprintf(stderr, "  C(%lld, %lld) = %.8g, expected %.8g (tolerance %.3g)\n",
                            (long long)i, (long long)j, (double)c[idx], ref, tol);
                bad++;
            }
        }
        printf("  check: %s%lld of %lld elements vs a double-precision host dot product, "
               "worst error %.2g of the bound: %s\n",
               full ? "all " : "", (long long)checks, (long long)total, worst,
               bad ? "FAILED" : "ok");
        ok = bad == 0;
    }
    if (da) duet_buffer_destroy(da);
    if (db) duet_buffer_destroy(db);
    if (dc) duet_buffer_destroy(dc);
    free(a);
    free(b);
    free(c);
    return ok;
}

/* ---- transpose --------------------------------------------------------------------------- */

typedef struct transpose_job {
    duet_stream *stream;
    duet_matrix in, out;
    duet_op_options opt;
} transpose_job;

static duet_status run_transpose(void *user)
{
    transpose_job *j = (transpose_job *)user;
    return duet_transpose(j->stream, &j->in, &j->out, &j->opt);
}

static int demo_transpose(duet_context *ctx, duet_stream *stream, const demo_args *args)
{
    const int64_t n = args->transpose_n;
    const size_t count = (size_t)n * (size_t)n, bytes = count * sizeof(int32_t);
    printf("\ntranspose: out = in^T, i32, row-major, %lld x %lld\n", (long long)n, (long long)n);
    int32_t *in = malloc(bytes), *out = malloc(bytes);
    duet_buffer *din = NULL, *dout = NULL;
    duet_launch_info info;
    duet_profile_result prof;
    duet_status st;
    int ok = in && out;
    if (!ok) fprintf(stderr, "duet-demo: cannot allocate %zu bytes of host memory\n", 2 * bytes);
    for (size_t i = 0; ok && i < count; i++) in[i] = (int32_t)(i * 2654435761u); /* distinct */
    ok = ok && TRY(duet_buffer_create(ctx, bytes, &din)) &&
         TRY(duet_buffer_create(ctx, bytes, &dout)) &&
         TRY(duet_buffer_write(stream, din, 0, in, bytes));
    transpose_job job;
    memset(&job, 0, sizeof job);
    job.stream = stream;
    job.in = duet_matrix_make(din, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, n, n);
    job.out = duet_matrix_make(dout, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, n, n);
    job.opt.info = &info;
    ok = ok &&
         TRY(duet_profile(ctx, stream, run_transpose, &job, args->warmup, args->iters, &prof)) &&
         TRY(duet_buffer_read(stream, dout, 0, out, bytes));
    if (ok) {
        print_info(&info);
        print_time(&prof, "GB/s (read + write)", 2.0 * (double)bytes / 1e9);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            for (int64_t j = 0; j < n; j++) {
                if (out[j * n + i] != in[i * n + j]) {
                    if (bad < 5)
                        fprintf(stderr, "  out(%lld, %lld) = %d, expected %d\n", (long long)j,
                                (long long)i, out[j * n + i], in[i * n + j]);
                    bad++;
                }
            }
        }
        printf("  check: all %zu elements exact: %s\n", count, bad ? "FAILED" : "ok");
        ok = bad == 0;
    }
    if (din) duet_buffer_destroy(din);
    if (dout) duet_buffer_destroy(dout);
    free(in);
    free(out);
    return ok;
}

/* ---- add --------------------------------------------------------------------------------- */

typedef struct add_job {
    duet_stream *stream;
    duet_matrix a, b, c;
    duet_op_options opt;
} add_job;

static duet_status run_add(void *user)
{
    add_job *j = (add_job *)user;
    return duet_add(j->stream, 2.0, &j->a, -1.0, &j->b, &j->c, &j->opt);
}

static int demo_add(duet_context *ctx, duet_stream *stream, const demo_args *args)
{
    const int64_t n = args->add_n;
    const size_t count = (size_t)n * (size_t)n, bytes = count * sizeof(float);
    printf("\nadd: c = 2 a - b, f32, row-major, %lld x %lld\n", (long long)n, (long long)n);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    duet_buffer *da = NULL, *db = NULL, *dc = NULL;
    duet_launch_info info;
    duet_profile_result prof;
    duet_status st;
    int ok = a && b && c;
    if (!ok) fprintf(stderr, "duet-demo: cannot allocate %zu bytes of host memory\n", 3 * bytes);
    /* Small integers: 2 a - b is exact in f32, so the check is equality. */
    for (size_t i = 0; ok && i < count; i++) {
        a[i] = (float)(int)(i % 1021) - 510.0f;
        b[i] = (float)(int)((i * 7) % 509) - 254.0f;
    }
    ok = ok && TRY(duet_buffer_create(ctx, bytes, &da)) &&
         TRY(duet_buffer_create(ctx, bytes, &db)) && TRY(duet_buffer_create(ctx, bytes, &dc)) &&
         TRY(duet_buffer_write(stream, da, 0, a, bytes)) &&
         TRY(duet_buffer_write(stream, db, 0, b, bytes));
    add_job job;
    memset(&job, 0, sizeof job);
    job.stream = stream;
    job.a = duet_matrix_make(da, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
    job.b = duet_matrix_make(db, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
    job.c = duet_matrix_make(dc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
    job.opt.info = &info;
    ok = ok && TRY(duet_profile(ctx, stream, run_add, &job, args->warmup, args->iters, &prof)) &&
         TRY(duet_buffer_read(stream, dc, 0, c, bytes));
    if (ok) {
        print_info(&info);
        print_time(&prof, "GB/s (2 reads + 1 write)", 3.0 * (double)bytes / 1e9);
        int64_t bad = 0;
        for (size_t i = 0; i < count; i++) {
            float want = 2.0f * a[i] - b[i];
            if (c[i] != want) {
                if (bad < 5)
                    fprintf(stderr, "  c[%zu] = %g, expected %g\n", i, (double)c[i], (double)want);
                bad++;
            }
        }
        printf("  check: all %zu elements exact: %s\n", count, bad ? "FAILED" : "ok");
        ok = bad == 0;
    }
    if (da) duet_buffer_destroy(da);
    if (db) duet_buffer_destroy(db);
    if (dc) duet_buffer_destroy(dc);
    free(a);
    free(b);
    free(c);
    return ok;
}

/* ---- main -------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *backend = duet_backend_name();
    const int on_gpu = strcmp(backend, "cpu") != 0;
    demo_args args;
    int rc = parse_args(argc, argv, on_gpu, &args);
    if (rc != 0) return rc < 0 ? 0 : rc;

    int v = duet_version();
    printf("duet %d.%d.%d, %s backend\n", v / 10000, v / 100 % 100, v % 100, backend);

    int count = 0;
    duet_status st = duet_device_count(&count);
    if (st == DUET_ERROR_NO_DEVICE || (st == DUET_SUCCESS && count == 0)) {
        printf("duet-demo: no %s device here (%s); skipped\n", backend,
               duet_last_error()[0] ? duet_last_error() : "no device found");
        return EXIT_SKIP;
    }
    duet_context *ctx = NULL;
    if (st == DUET_SUCCESS) st = duet_context_create(0, &ctx);
    if (st == DUET_ERROR_NO_DEVICE) {
        printf("duet-demo: no usable %s device (%s); skipped\n", backend, duet_last_error());
        return EXIT_SKIP;
    }
    if (st != DUET_SUCCESS) {
        failed("opening device 0", st);
        return 1;
    }

    duet_device_props p;
    duet_stream *stream = NULL;
    if (!TRY(duet_context_get_props(ctx, &p)) || !TRY(duet_context_default_stream(ctx, &stream))) {
        duet_context_destroy(ctx);
        return 1;
    }
    printf("device 0 of %d: %s\n", count, p.name);
    printf("  arch %s, %d compute units, warp size %d, %.1f GiB, max %d threads per block, "
           "%zu B shared per block (%zu opt-in)\n",
           p.arch, p.compute_units, p.warp_size, (double)p.global_mem_bytes / (1u << 30),
           p.max_threads_per_block, p.shared_mem_per_block, p.shared_mem_per_block_optin);
    printf("  timing: %d warm-up + %d timed runs per op, median reported\n", args.warmup,
           args.iters);

    const int total = 3;
    int passed = demo_gemm(ctx, stream, &args);
    passed += demo_transpose(ctx, stream, &args);
    passed += demo_add(ctx, stream, &args);

    int clean = TRY(duet_context_destroy(ctx));
    printf("\n%d of %d ops passed their checks%s\n", passed, total,
           clean ? "" : "; duet_context_destroy failed");
    return passed == total && clean ? 0 : 1;
}
