/* cpu_blas_bench.c - duet_gemm on the cpu backend against cblas_?gemm called directly, interleaved.
 *
 * For f32 and f64, each thread count and each size n (n x n x n, row-major, alpha 1, beta 0):
 * samples of duet_gemm and of cblas_?gemm alternate (duet, BLAS, BLAS, duet, ...: both see the
 * same machine load, and neither always goes first), each sample enough calls for about 20 ms.
 * Printed: the median time per call of each, and the median over the pairs of
 * t(cblas) / t(duet) - 1.00 is parity, above 1 duet is faster.
 *
 * usage: cpu-blas-bench [--reps N] [--sizes 256,512,...] [--threads 1,2,...]
 * Threads: duet's through omp_set_num_threads (its team size), the BLAS's through its own
 * setter (OpenBLAS, BLIS or MKL, as the library was configured). The duet kernel column says
 * which path duet took (its own kernel or the CBLAS: docs/cpu.md, DUET_CPU_BLAS). */
#define _POSIX_C_SOURCE 200809L

#include <duet/duet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DUET_CBLAS_HEADER_MKL
#include <mkl.h>
#else
#include <cblas.h>
#endif /* DUET_CBLAS_HEADER_MKL */
#ifdef DUET_CBLAS_BLIS_THREADS
#include <blis.h>
#endif /* DUET_CBLAS_BLIS_THREADS */
#ifdef DUET_BENCH_OPENMP
#include <omp.h>
#endif /* DUET_BENCH_OPENMP */

#define MAX_LIST 16
#define MAX_REPS 201

static void check(duet_status st, const char *what)
{
    if (st == DUET_SUCCESS) return;
    fprintf(stderr, "cpu-blas-bench: %s: %s (%s)\n", what, duet_status_string(st),
            duet_last_error());
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int parse_list(const char *s, int *out)
{
    int n = 0;
    while (*s && n < MAX_LIST) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 1 << 16) return 0;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') return 0;
    }
    return n;
}

static void set_threads(int nt)
{
#ifdef DUET_BENCH_OPENMP
    omp_set_num_threads(nt);
#endif /* DUET_BENCH_OPENMP */
#if defined(DUET_CBLAS_OPENBLAS_THREADS)
    openblas_set_num_threads(nt);
#elif defined(DUET_CBLAS_BLIS_THREADS)
    bli_thread_set_num_threads(nt);
#elif defined(DUET_CBLAS_MKL_THREADS)
    mkl_set_num_threads(nt);
#endif /* the library's thread setter */
}

typedef struct problem {
    duet_context *ctx;
    duet_dtype t;
    int n;
    void *ha, *hb, *hc;
    duet_matrix a, b, c;
    duet_op_options opt;
    duet_launch_info info;
} problem;

static void run_duet(problem *p, int calls)
{
    for (int i = 0; i < calls; ++i)
        check(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &p->a, &p->b, 0.0, &p->c, &p->opt),
              "duet_gemm");
    check(duet_context_synchronize(p->ctx), "duet_context_synchronize");
}

static void run_blas(problem *p, int calls)
{
    const int n = p->n;
    for (int i = 0; i < calls; ++i) {
        if (p->t == DUET_DTYPE_F64)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, p->ha, n, p->hb, n,
                        0.0, p->hc, n);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, p->ha, n, p->hb,
                        n, 0.0f, p->hc, n);
    }
}

static double time_calls(void (*fn)(problem *, int), problem *p, int calls)
{
    const double t0 = now_s();
    fn(p, calls);
    return (now_s() - t0) / calls;
}

int main(int argc, char **argv)
{
    int reps = 15, sizes[MAX_LIST] = {256, 512, 1024, 2048}, threads[MAX_LIST] = {1, 2};
    int n_sizes = 4, n_threads = 2;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            n_sizes = parse_list(argv[++i], sizes);
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            n_threads = parse_list(argv[++i], threads);
        } else {
            fprintf(stderr, "usage: %s [--reps N] [--sizes 256,512,...] [--threads 1,2,...]\n",
                    argv[0]);
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS || n_sizes < 1 || n_threads < 1) {
        fprintf(stderr, "cpu-blas-bench: bad --reps (1..%d), --sizes or --threads\n", MAX_REPS);
        return 2;
    }
    if (strcmp(duet_backend_name(), "cpu") != 0) {
        fprintf(stderr, "cpu-blas-bench: duet was built for %s, not cpu\n", duet_backend_name());
        return 77;
    }
    duet_context *ctx;
    check(duet_context_create(0, &ctx), "duet_context_create");
    duet_device_props props;
    check(duet_device_get_props(0, &props), "duet_device_get_props");
    printf("cpu: %s, %d cores; %d interleaved samples of >= 20 ms each per row\n", props.name,
           props.compute_units, reps);
#ifndef DUET_BENCH_OPENMP
    printf("note: no OpenMP in this benchmark: duet's thread count is its default\n");
#endif /* DUET_BENCH_OPENMP */
#ifdef DUET_CBLAS_OPENBLAS_CORENAME
    printf("OpenBLAS: %s (kernels: %s)\n", openblas_get_config(), openblas_get_corename());
#endif /* DUET_CBLAS_OPENBLAS_CORENAME */
    printf("%-4s %3s %6s  %12s  %12s  %8s  %s\n", "type", "thr", "n", "duet ms", "cblas ms",
           "ratio", "duet kernel");

    for (int d = 0; d < 2; ++d) {
        const duet_dtype t = d == 0 ? DUET_DTYPE_F32 : DUET_DTYPE_F64;
        const size_t es = duet_dtype_size(t);
        for (int ti = 0; ti < n_threads; ++ti) {
            set_threads(threads[ti]);
            for (int si = 0; si < n_sizes; ++si) {
                problem p;
                memset(&p, 0, sizeof p);
                p.ctx = ctx;
                p.t = t;
                p.n = sizes[si];
                const size_t cnt = (size_t)p.n * (size_t)p.n, bytes = cnt * es;
                p.ha = malloc(bytes);
                p.hb = malloc(bytes);
                p.hc = malloc(bytes);
                if (!p.ha || !p.hb || !p.hc) {
                    fprintf(stderr, "cpu-blas-bench: out of memory\n");
                    return 1;
                }
                unsigned s = 12345u;
                for (size_t x = 0; x < cnt; ++x) {
                    s = s * 1664525u + 1013904223u;
                    const double va = (double)(s >> 8) / 16777216.0 - 0.5;
                    s = s * 1664525u + 1013904223u;
                    const double vb = (double)(s >> 8) / 16777216.0 - 0.5;
                    if (t == DUET_DTYPE_F64) {
                        ((double *)p.ha)[x] = va;
                        ((double *)p.hb)[x] = vb;
                    } else {
                        ((float *)p.ha)[x] = (float)va;
                        ((float *)p.hb)[x] = (float)vb;
                    }
                }
                memset(p.hc, 0, bytes);
                duet_buffer *ba, *bb, *bc;
                check(duet_buffer_create(ctx, bytes, &ba), "duet_buffer_create");
                check(duet_buffer_create(ctx, bytes, &bb), "duet_buffer_create");
                check(duet_buffer_create(ctx, bytes, &bc), "duet_buffer_create");
                check(duet_buffer_write(NULL, ba, 0, p.ha, bytes), "duet_buffer_write");
                check(duet_buffer_write(NULL, bb, 0, p.hb, bytes), "duet_buffer_write");
                check(duet_buffer_memset(NULL, bc, 0, 0, bytes), "duet_buffer_memset");
                p.a = duet_matrix_make(ba, t, DUET_LAYOUT_ROW_MAJOR, p.n, p.n);
                p.b = duet_matrix_make(bb, t, DUET_LAYOUT_ROW_MAJOR, p.n, p.n);
                p.c = duet_matrix_make(bc, t, DUET_LAYOUT_ROW_MAJOR, p.n, p.n);
                p.opt.info = &p.info;

                /* Warm-up (thread pools, page faults), then enough calls for ~20 ms. */
                run_duet(&p, 1);
                run_blas(&p, 1);
                const double one = time_calls(run_blas, &p, 1);
                int calls = (int)(0.02 / (one > 1e-7 ? one : 1e-7)) + 1;
                if (calls > 1000) calls = 1000;

                double td[MAX_REPS], tb[MAX_REPS], ratio[MAX_REPS];
                for (int r = 0; r < reps; ++r) {
                    if (r % 2 == 0) {
                        td[r] = time_calls(run_duet, &p, calls);
                        tb[r] = time_calls(run_blas, &p, calls);
                    } else {
                        tb[r] = time_calls(run_blas, &p, calls);
                        td[r] = time_calls(run_duet, &p, calls);
                    }
                    ratio[r] = tb[r] / td[r];
                }
                /* The two results agree (the same library underneath, or duet's own kernel
                 * within rounding): a gross difference would mean a wrong mapping. */
                void *back = malloc(bytes);
                check(duet_buffer_read(NULL, bc, 0, back, bytes), "duet_buffer_read");
                double worst = 0;
                for (size_t x = 0; x < cnt; ++x) {
                    const double u = t == DUET_DTYPE_F64 ? ((double *)back)[x] : ((float *)back)[x];
                    const double v = t == DUET_DTYPE_F64 ? ((double *)p.hc)[x] : ((float *)p.hc)[x];
                    const double e = u > v ? u - v : v - u;
                    if (!(e <= worst)) worst = e;
                }
                const double tol = (t == DUET_DTYPE_F64 ? 1e-12 : 1e-3) * p.n;
                printf("%-4s %3d %6d  %12.4f  %12.4f  %8.3f  %s%s\n", duet_dtype_name(t),
                       threads[ti], p.n, 1e3 * median(td, reps), 1e3 * median(tb, reps),
                       median(ratio, reps), p.info.kernel, worst <= tol ? "" : "  RESULTS DIFFER");
                fflush(stdout);
                free(back);
                check(duet_buffer_destroy(ba), "duet_buffer_destroy");
                check(duet_buffer_destroy(bb), "duet_buffer_destroy");
                check(duet_buffer_destroy(bc), "duet_buffer_destroy");
                free(p.ha);
                free(p.hb);
                free(p.hc);
            }
        }
    }
    check(duet_context_destroy(ctx), "duet_context_destroy");
    return 0;
}
