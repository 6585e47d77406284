/* gemm_blas.c - the cpu backend's AUTO f32/f64 gemm on the CBLAS found at configure time. */
#include "cpu_internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DUET_CBLAS_HEADER_MKL
#include <mkl_cblas.h>
#ifdef DUET_CBLAS_MKL_THREADS
#include <mkl_service.h>
#endif /* DUET_CBLAS_MKL_THREADS */
#else
#include <cblas.h>
#endif /* DUET_CBLAS_HEADER_MKL */
#ifdef DUET_CBLAS_BLIS_THREADS
#include <blis.h>
#endif /* DUET_CBLAS_BLIS_THREADS */

#ifdef DUET_HAVE_OPENMP
#include <omp.h>
#endif /* DUET_HAVE_OPENMP */

#ifndef DUET_CBLAS_VENDOR
#define DUET_CBLAS_VENDOR "cblas"
#endif /* DUET_CBLAS_VENDOR */

/* The BLAS's own thread count, set to duet's for one call and put back after it, so that an
 * application's own BLAS calls keep the count it chose. A CBLAS with no setter known here
 * runs on the threads it chose itself. OpenBLAS's and BLIS's counts are process-wide and
 * their results differ with the count, so duet's calls take turns (blas_lock): a call never
 * runs on the count another host thread set meanwhile, and results repeat bit for bit.
 * MKL's count is per thread: no turns. */
#if defined(DUET_CBLAS_OPENBLAS_THREADS) || defined(DUET_CBLAS_BLIS_THREADS)
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
#define BLAS_LOCK()   pthread_mutex_lock(&blas_lock)
#define BLAS_UNLOCK() pthread_mutex_unlock(&blas_lock)
#else
#define BLAS_LOCK()   ((void)0)
#define BLAS_UNLOCK() ((void)0)
#endif /* a process-wide thread count */

typedef struct blas_threads {
    int prev;
#ifdef DUET_HAVE_OPENMP
    int omp_prev;
#endif /* DUET_HAVE_OPENMP */
} blas_threads;

static void blas_threads_set(blas_threads *s, int nt)
{
#ifdef DUET_HAVE_OPENMP
    /* OpenBLAS built for OpenMP sets the calling thread's OpenMP team size with its count;
     * duet's own ops read that size, so it is restored whatever the library. */
    s->omp_prev = omp_get_max_threads();
#endif /* DUET_HAVE_OPENMP */
#if defined(DUET_CBLAS_OPENBLAS_THREADS)
    s->prev = openblas_get_num_threads();
    if (s->prev != nt) openblas_set_num_threads(nt);
#elif defined(DUET_CBLAS_BLIS_THREADS)
    s->prev = (int)bli_thread_get_num_threads();
    if (s->prev != nt) bli_thread_set_num_threads((dim_t)nt);
#elif defined(DUET_CBLAS_MKL_THREADS)
    /* Thread-local in MKL: concurrent host threads do not see each other's count. */
    s->prev = mkl_set_num_threads_local(nt);
#else
    s->prev = nt;
#endif /* the library's thread setter */
}

static void blas_threads_restore(const blas_threads *s, int nt)
{
#if defined(DUET_CBLAS_OPENBLAS_THREADS)
    if (s->prev != nt) openblas_set_num_threads(s->prev);
#elif defined(DUET_CBLAS_BLIS_THREADS)
    /* BLIS answers -1 until a count was set: the count then stays duet's. */
    if (s->prev != nt && s->prev >= 1) bli_thread_set_num_threads((dim_t)s->prev);
#elif defined(DUET_CBLAS_MKL_THREADS)
    (void)nt;
    mkl_set_num_threads_local(s->prev);
#else
    (void)s;
    (void)nt;
#endif /* the library's thread setter */
#ifdef DUET_HAVE_OPENMP
    if (omp_get_max_threads() != s->omp_prev) omp_set_num_threads(s->omp_prev);
#endif /* DUET_HAVE_OPENMP */
}

/* Whether the BLAS takes the gemms it can express, decided once per process so that a given
 * problem always takes one path. DUET_CPU_BLAS=1 says always, 0 never. Otherwise OpenBLAS
 * decides by the kernel set its DYNAMIC_ARCH build picked for this CPU at load time: a CPU
 * newer than the library gets an older set (Debian 12's 0.3.21 runs its SSE3 "Prescott"
 * kernels on Intel's Emerald Rapids and Haswell's AVX2 ones on AMD Zen 4 and 5), which
 * duet's AVX-512 kernel outruns (docs/cpu.md); so the BLAS takes the gemm unless duet's
 * kernel is AVX-512 and OpenBLAS's is not. Other libraries always take it. */
static int blas_preferred = 1;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_decide(void)
{
    const char *env = getenv("DUET_CPU_BLAS");
    if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0)) {
        blas_preferred = env[0] == '1';
        return;
    }
#ifdef DUET_CBLAS_OPENBLAS_CORENAME
    static const char *const avx512_cores[] = {"skylakex", "cooperlake", "sapphirerapids"};
    const char *core = openblas_get_corename();
    char low[32] = {0};
    for (size_t x = 0; core && core[x] && x + 1 < sizeof low; ++x)
        low[x] = (char)(core[x] >= 'A' && core[x] <= 'Z' ? core[x] - 'A' + 'a' : core[x]);
    int blas512 = 0;
    for (size_t x = 0; x < sizeof avx512_cores / sizeof avx512_cores[0]; ++x)
        blas512 |= strstr(low, avx512_cores[x]) != NULL;
    blas_preferred = blas512 || !cpu_gemm_avx512();
#endif /* DUET_CBLAS_OPENBLAS_CORENAME */
}

int cpu_gemm_blas(const dt_gemm *g, int threads, char *name, size_t name_size)
{
    const int f64 = g->dtype == DUET_DTYPE_F64;
    if ((g->dtype != DUET_DTYPE_F32 && !f64) || g->c_dtype != g->dtype) return 0;
#ifdef DUET_HAVE_OPENMP
    /* Inside an application's OpenMP team duet's own kernel runs, on the caller's thread as
     * there: the team's members would otherwise take turns on the BLAS (blas_lock), and a
     * pthread-built OpenBLAS warns that starting its threads from inside a team can hang. */
    if (omp_in_parallel()) return 0;
#endif /* DUET_HAVE_OPENMP */
    pthread_once(&blas_once, blas_decide);
    if (!blas_preferred) return 0;
    cpu_blas_gemm c;
    if (!cpu_blas_map(g, f64 ? sizeof(double) : sizeof(float), INT_MAX, &c)) return 0;
    const enum CBLAS_TRANSPOSE ta = c.trans_a ? CblasTrans : CblasNoTrans;
    const enum CBLAS_TRANSPOSE tb = c.trans_b ? CblasTrans : CblasNoTrans;
    const int m = (int)c.m, n = (int)c.n, k = (int)c.k;
    const int lda = (int)c.lda, ldb = (int)c.ldb, ldc = (int)c.ldc;
    const int nt = threads < 1 ? 1 : threads;

    blas_threads saved;
    BLAS_LOCK();
    blas_threads_set(&saved, nt);
    /* One call per matrix of the batch, in order: every matrix gets the library's whole
     * thread team, as a single gemm does. */
    if (f64) {
        const double *a = c.a.base, *b = c.b.base;
        double *cm = c.c.base;
        for (int64_t x = 0; x < g->batch; ++x)
            cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, g->alpha, a + x * c.a.bs, lda,
                        b + x * c.b.bs, ldb, g->beta, cm + x * c.c.bs, ldc);
    } else {
        const float *a = c.a.base, *b = c.b.base;
        float *cm = c.c.base;
        const float alpha = (float)g->alpha, beta = (float)g->beta;
        for (int64_t x = 0; x < g->batch; ++x)
            cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a + x * c.a.bs, lda, b + x * c.b.bs,
                        ldb, beta, cm + x * c.c.bs, ldc);
    }
    blas_threads_restore(&saved, nt);
    BLAS_UNLOCK();
    snprintf(name, name_size, "cpu_gemm_auto_%s cblas_%cgemm (%s)", f64 ? "f64" : "f32",
             f64 ? 'd' : 's', DUET_CBLAS_VENDOR);
    return 1;
}
