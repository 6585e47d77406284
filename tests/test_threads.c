/* test_threads.c - several host threads on one context, each with its own stream and buffers. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <pthread.h>

#define NTHREADS 4

static duet_context *g_ctx;
static int g_iters;

/* DT_CHECK's counters are shared; each thread counts on its own and main adds them up. */
typedef struct worker {
    int id;
    int checks, failures;
    pthread_barrier_t *barrier;
} worker;

#define W_CHECK(w, cond, ...)                                                                      \
    do {                                                                                           \
        (w)->checks++;                                                                             \
        if (!(cond)) {                                                                             \
            (w)->failures++;                                                                       \
            fprintf(stderr, "%s:%d: thread %d: check failed: %s: ", __FILE__, __LINE__, (w)->id,   \
                    #cond);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

#define W_OK(w, call)                                                                              \
    do {                                                                                           \
        duet_status w_s_ = (call);                                                                 \
        W_CHECK(w, w_s_ == DUET_SUCCESS, "%s -> %s: %s", #call, duet_status_string(w_s_),          \
                duet_last_error());                                                                \
    } while (0)

static void merge(const worker *w)
{
    dt_checks += w->checks;
    dt_failures += w->failures;
}

/* ---- gemm + transpose + add on a thread's own stream ------------------------------------- */

/* The seeds' shapes, one per thread: M x K times K x N. */
static const int g_shapes[NTHREADS][3] = {{24, 12, 22}, {32, 48, 16}, {5, 23, 7}, {17, 9, 33}};

static void *ops_worker(void *arg)
{
    worker *w = (worker *)arg;
    const int M = g_shapes[w->id][0], K = g_shapes[w->id][1], N = g_shapes[w->id][2];
    duet_stream *s = NULL;
    W_OK(w, duet_stream_create(g_ctx, &s));
    duet_buffer *ba = NULL, *bb = NULL, *bc = NULL, *bt = NULL, *bx = NULL, *bd = NULL;
    W_OK(w, duet_buffer_create(g_ctx, (size_t)(M * K) * 4, &ba));
    W_OK(w, duet_buffer_create(g_ctx, (size_t)(K * N) * 4, &bb));
    W_OK(w, duet_buffer_create(g_ctx, (size_t)(M * N) * 4, &bc));
    W_OK(w, duet_buffer_create(g_ctx, (size_t)(M * N) * 4, &bt));
    W_OK(w, duet_buffer_create(g_ctx, (size_t)(M * N) * 4, &bx));
    W_OK(w, duet_buffer_create(g_ctx, (size_t)(M * N) * 4, &bd));
    duet_event *e0 = NULL, *e1 = NULL;
    W_OK(w, duet_event_create(g_ctx, &e0));
    W_OK(w, duet_event_create(g_ctx, &e1));
    float *ha = (float *)malloc((size_t)(M * K) * 4), *hb = (float *)malloc((size_t)(K * N) * 4);
    float *hx = (float *)malloc((size_t)(M * N) * 4), *hd = (float *)malloc((size_t)(M * N) * 4);
    double *ref = (double *)malloc((size_t)(M * N) * sizeof *ref);
    if (!ha || !hb || !hx || !hd || !ref || !s || !ba || !bb || !bc || !bt || !bx || !bd) {
        W_CHECK(w, 0, "setup failed");
        goto done;
    }
    duet_matrix a = duet_matrix_make(ba, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, K);
    duet_matrix b = duet_matrix_make(bb, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, K, N);
    duet_matrix c = duet_matrix_make(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, N);
    duet_matrix t = duet_matrix_make(bt, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, N, M);
    duet_matrix x = duet_matrix_make(bx, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, N, M);
    duet_matrix d = duet_matrix_make(bd, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, N, M);
    static const duet_algorithm algos[4] = {DUET_ALGO_AUTO, DUET_ALGO_NAIVE, DUET_ALGO_TILED,
                                            DUET_ALGO_GRID_STRIDE};
    for (int it = 0; it < g_iters; it++) {
        /* Small integers: every sum is exact, so results compare with ==. */
        for (int e = 0; e < M * K; e++) ha[e] = (float)((e * 7 + it * 3 + w->id * 11) % 9 - 4);
        for (int e = 0; e < K * N; e++) hb[e] = (float)((e * 5 + it + w->id * 13) % 7 - 3);
        for (int e = 0; e < M * N; e++) hx[e] = (float)((e + it * w->id) % 11 - 5);
        W_OK(w, duet_buffer_write(s, ba, 0, ha, (size_t)(M * K) * 4));
        W_OK(w, duet_buffer_write(s, bb, 0, hb, (size_t)(K * N) * 4));
        W_OK(w, duet_buffer_write(s, bx, 0, hx, (size_t)(M * N) * 4));
        duet_op_options o;
        memset(&o, 0, sizeof o);
        o.algorithm = algos[(it + w->id) % 4];
        o.tile = o.algorithm == DUET_ALGO_TILED ? 3 + it % 14 : 0;
        W_OK(w, duet_event_record(e0, s));
        W_OK(w, duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &c, &o));
        o.tile = o.algorithm == DUET_ALGO_TILED ? 32 : 0;
        W_OK(w, duet_transpose(s, &c, &t, o.algorithm == DUET_ALGO_TILED ? &o : NULL));
        W_OK(w, duet_add(s, 2, &t, -1, &x, &d, NULL));
        W_OK(w, duet_event_record(e1, s));
        W_OK(w, duet_buffer_read(s, bd, 0, hd, (size_t)(M * N) * 4));
        W_OK(w, duet_event_synchronize(e1));
        float ms = -1;
        W_OK(w, duet_event_elapsed_ms(e0, e1, &ms));
        W_CHECK(w, ms >= 0, "elapsed %g", (double)ms);

        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = 0;
                for (int k = 0; k < K; k++) acc += (double)ha[i * K + k] * hb[k * N + j];
                ref[i * N + j] = acc;
            }
        int bad = 0, first = -1;
        for (int j = 0; j < N; j++)
            for (int i = 0; i < M; i++) {
                double want = 2 * ref[i * N + j] - hx[j * M + i];
                if (hd[j * M + i] != (float)want) {
                    if (first < 0) first = j * M + i;
                    bad++;
                }
            }
        W_CHECK(w, bad == 0, "iteration %d (%s): %d of %d wrong, first at %d", it,
                duet_algorithm_name(o.algorithm), bad, M * N, first);
    }
done:
    if (e0) W_OK(w, duet_event_destroy(e0));
    if (e1) W_OK(w, duet_event_destroy(e1));
    duet_buffer *bufs[6] = {ba, bb, bc, bt, bx, bd};
    for (int k = 0; k < 6; k++)
        if (bufs[k]) W_OK(w, duet_buffer_destroy(bufs[k]));
    if (s) W_OK(w, duet_stream_destroy(s));
    free(ha);
    free(hb);
    free(hx);
    free(hd);
    free(ref);
    return NULL;
}

/* ---- handles created and destroyed from every thread at once ----------------------------- */

static void *churn_worker(void *arg)
{
    worker *w = (worker *)arg;
    unsigned char out[1024], back[1024];
    for (int it = 0; it < g_iters * 10; it++) {
        size_t bytes = (size_t)(1 + (it * 37 + w->id * 101) % 1024);
        duet_buffer *b = NULL;
        duet_stream *s = NULL;
        duet_event *e = NULL;
        W_OK(w, duet_buffer_create(g_ctx, bytes, &b));
        W_OK(w, duet_stream_create(g_ctx, &s));
        W_OK(w, duet_event_create(g_ctx, &e));
        for (size_t k = 0; k < bytes; k++) out[k] = (unsigned char)(k + (size_t)it + (size_t)w->id);
        W_OK(w, duet_buffer_write(s, b, 0, out, bytes));
        W_OK(w, duet_buffer_memset(s, b, 0, w->id, 1));
        out[0] = (unsigned char)w->id;
        memset(back, 0, bytes);
        W_OK(w, duet_buffer_read(s, b, 0, back, bytes));
        W_CHECK(w, memcmp(out, back, bytes) == 0, "iteration %d: buffer of %zu bytes differs", it,
                bytes);
        size_t got = 0;
        W_OK(w, duet_buffer_size(b, &got));
        W_CHECK(w, got == bytes, "size %zu, wanted %zu", got, bytes);
        W_OK(w, duet_event_record(e, s));
        W_OK(w, duet_event_synchronize(e));
        W_OK(w, duet_stream_synchronize(s));
        W_OK(w, duet_event_destroy(e));
        W_OK(w, duet_stream_destroy(s));
        W_OK(w, duet_buffer_destroy(b));
        /* A handle this thread just destroyed stays dead, whatever the others create. */
        W_CHECK(w, duet_buffer_size(b, &got) == DUET_ERROR_INVALID_HANDLE, "dead buffer alive");
        W_CHECK(w, duet_stream_synchronize(s) == DUET_ERROR_INVALID_HANDLE, "dead stream alive");
    }
    return NULL;
}

/* ---- the handle table grows while the others look handles up ----------------------------- */

#define GROW_HANDLES 700

/* Handle lookups take no lock (src/common/handles.c): every thread holds hundreds of live
 * buffers at once, so that the table allocates new segments while the others read it, and
 * checks its own live handles, and its own dead ones, in between. */
static void *grow_worker(void *arg)
{
    worker *w = (worker *)arg;
    static duet_buffer *held[NTHREADS][GROW_HANDLES];
    duet_buffer **mine = held[w->id];
    duet_buffer *dead = NULL;
    for (int round = 0; round < (g_iters >= 40 ? 3 : 1); round++) {
        int n = 0;
        for (; n < GROW_HANDLES; n++) {
            const size_t bytes = (size_t)(1 + (n + w->id) % 61);
            if (duet_buffer_create(g_ctx, bytes, &mine[n]) != DUET_SUCCESS) {
                W_CHECK(w, 0, "create %d: %s", n, duet_last_error());
                break;
            }
            const int probe = (n * 7 + round) % (n + 1);
            size_t got = 0;
            W_OK(w, duet_buffer_size(mine[probe], &got));
            W_CHECK(w, got == (size_t)(1 + (probe + w->id) % 61), "buffer %d: size %zu", probe,
                    got);
            if (dead)
                W_CHECK(w, duet_buffer_size(dead, &got) == DUET_ERROR_INVALID_HANDLE,
                        "dead buffer alive after %d creates", n);
        }
        for (int i = 0; i < n; i++) {
            if (i % 2 == 0 || i == n - 1) {
                W_OK(w, duet_buffer_destroy(mine[i]));
                dead = mine[i];
            }
        }
        for (int i = 1; i < n - 1; i += 2) {
            size_t got = 0;
            W_OK(w, duet_buffer_size(mine[i], &got));
            W_OK(w, duet_buffer_destroy(mine[i]));
        }
    }
    return NULL;
}

/* ---- the last error belongs to its thread ------------------------------------------------ */

static void *error_worker(void *arg)
{
    worker *w = (worker *)arg;
    char mine[256];
    /* Each thread fails with a message of its own, then waits for all the others to fail. */
    duet_buffer *b = NULL;
    duet_status st = duet_buffer_create(g_ctx, 64, &b);
    W_CHECK(w, st == DUET_SUCCESS, "create: %s", duet_last_error());
    size_t off = 1000 + (size_t)w->id;
    unsigned char byte = 0;
    W_CHECK(w, duet_buffer_read(NULL, b, off, &byte, 1) == DUET_ERROR_INVALID_ARGUMENT,
            "out-of-range read accepted");
    snprintf(mine, sizeof mine, "%s", duet_last_error());
    char num[32];
    snprintf(num, sizeof num, "%zu", off);
    W_CHECK(w, strstr(mine, num) != NULL, "message \"%s\" lacks its offset %s", mine, num);
    pthread_barrier_wait(w->barrier);
    /* The others' failures and successes (below) have not touched this thread's message. */
    W_CHECK(w, strcmp(duet_last_error(), mine) == 0, "message now \"%s\", was \"%s\"",
            duet_last_error(), mine);
    pthread_barrier_wait(w->barrier);
    if (w->id % 2 == 0) W_OK(w, duet_context_synchronize(g_ctx));
    pthread_barrier_wait(w->barrier);
    if (w->id % 2 == 0)
        W_CHECK(w, duet_last_error()[0] == '\0', "message after success \"%s\"", duet_last_error());
    else
        W_CHECK(w, strcmp(duet_last_error(), mine) == 0, "message now \"%s\", was \"%s\"",
                duet_last_error(), mine);
    if (b) W_OK(w, duet_buffer_destroy(b));
    return NULL;
}

static void run_workers(void *(*fn)(void *), const char *what)
{
    pthread_t th[NTHREADS];
    worker w[NTHREADS];
    pthread_barrier_t barrier;
    int have_barrier = pthread_barrier_init(&barrier, NULL, NTHREADS) == 0;
    DT_CHECK(have_barrier, "%s: pthread_barrier_init failed", what);
    if (!have_barrier) return;
    int started = 0;
    for (int i = 0; i < NTHREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        w[i].barrier = &barrier;
    }
    for (int i = 0; i < NTHREADS; i++) {
        if (pthread_create(&th[i], NULL, fn, &w[i]) != 0) break;
        started++;
    }
    /* A missing thread would leave the others waiting at a barrier for ever. */
    if (started < NTHREADS) {
        fprintf(stderr, "%s: only %d of %d threads started\n", what, started, NTHREADS);
        exit(1);
    }
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    int checks = 0;
    for (int i = 0; i < NTHREADS; i++) {
        merge(&w[i]);
        checks += w[i].checks;
    }
    DT_CHECK(checks > 0, "%s: the threads checked nothing", what);
}

/* ---- calls from the members of an application's own OpenMP team ------------------------- */

#ifdef _OPENMP
#include <omp.h>

/* Each member multiplies on a stream of its own. Inside the team the cpu backend's nested
 * regions get one thread, so a member's number in the application's team must not choose
 * its share of a workspace sized for one (it did: ASan found the packed GEMM writing past
 * it). f32 and f16 (whose operands are widened into the workspace), exact small integers. */
static void omp_team_worker(worker *w)
{
    const int64_t n = 256 + 8 * w->id; /* packed blocks of B past a quarter of 1 MiB */
    duet_stream *s = NULL;
    duet_buffer *ba = NULL, *bb = NULL, *bc = NULL;
    float *h = (float *)malloc((size_t)(3 * n * n) * sizeof *h);
    W_OK(w, duet_stream_create(g_ctx, &s));
    W_OK(w, duet_buffer_create(g_ctx, (size_t)(n * n) * 4, &ba));
    W_OK(w, duet_buffer_create(g_ctx, (size_t)(n * n) * 4, &bb));
    W_OK(w, duet_buffer_create(g_ctx, (size_t)(n * n) * 4, &bc));
    if (!s || !ba || !bb || !bc || !h) {
        W_CHECK(w, 0, "setup failed");
    } else {
        float *a = h, *b = h + n * n, *c = h + 2 * n * n;
        uint16_t *a16 = (uint16_t *)c, *b16 = a16 + n * n;
        for (int64_t e = 0; e < n * n; e++) {
            a[e] = (float)((e * 7 + w->id) % 9 - 4);
            b[e] = (float)((e * 5 + 3 * w->id) % 7 - 3);
        }
        for (int dt = 0; dt < 2; dt++) {
            const duet_dtype type = dt ? DUET_DTYPE_F16 : DUET_DTYPE_F32;
            if (dt) {
                /* Small integers are exact in f16. */
                for (int64_t e = 0; e < n * n; e++) {
                    dt_set(a16, DUET_DTYPE_F16, (size_t)e, a[e]);
                    dt_set(b16, DUET_DTYPE_F16, (size_t)e, b[e]);
                }
                W_OK(w, duet_buffer_write(s, ba, 0, a16, (size_t)(n * n) * 2));
                W_OK(w, duet_buffer_write(s, bb, 0, b16, (size_t)(n * n) * 2));
            } else {
                W_OK(w, duet_buffer_write(s, ba, 0, a, (size_t)(n * n) * 4));
                W_OK(w, duet_buffer_write(s, bb, 0, b, (size_t)(n * n) * 4));
            }
            duet_matrix ma = duet_matrix_make(ba, type, DUET_LAYOUT_ROW_MAJOR, n, n);
            duet_matrix mb = duet_matrix_make(bb, type, DUET_LAYOUT_ROW_MAJOR, n, n);
            duet_matrix mc = duet_matrix_make(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
            float *got = (float *)malloc((size_t)(n * n) * sizeof *got);
            W_OK(w, duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &ma, &mb, 0, &mc, NULL));
            if (got) W_OK(w, duet_buffer_read(s, bc, 0, got, (size_t)(n * n) * 4));
            W_OK(w, duet_stream_synchronize(s));
            int bad = 0;
            for (int64_t i = 0; got && i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    double acc = 0;
                    for (int64_t k = 0; k < n; k++) acc += (double)a[i * n + k] * b[k * n + j];
                    bad += got[i * n + j] != (float)acc;
                }
            W_CHECK(w, got && bad == 0, "%s %lld^3 in member %d: %d wrong", duet_dtype_name(type),
                    (long long)n, w->id, bad);
            free(got);
        }
    }
    duet_buffer *bufs[3] = {ba, bb, bc};
    for (int k = 0; k < 3; k++)
        if (bufs[k]) W_OK(w, duet_buffer_destroy(bufs[k]));
    if (s) W_OK(w, duet_stream_destroy(s));
    free(h);
}

static void run_omp_team(void)
{
    worker w[NTHREADS];
    memset(w, 0, sizeof w);
#pragma omp parallel num_threads(NTHREADS)
    {
        const int id = omp_get_thread_num();
        w[id].id = id;
        omp_team_worker(&w[id]);
    }
    int checks = 0;
    for (int i = 0; i < NTHREADS; i++) {
        merge(&w[i]);
        checks += w[i].checks;
    }
    DT_CHECK(checks > 0, "OpenMP team: the members checked nothing");
}
#endif /* _OPENMP */

int main(int argc, char **argv)
{
    g_iters = dt_quick_mode(argc, argv) ? 6 : 40;
    g_ctx = dt_open_or_skip();
    run_workers(ops_worker, "gemm + transpose + add");
    run_workers(churn_worker, "create and destroy");
    run_workers(grow_worker, "table growth");
    run_workers(error_worker, "thread-local errors");
#ifdef _OPENMP
    run_omp_team();
#endif /* _OPENMP */
    /* And all of it again at once: ops next to churn on the same context. */
    pthread_t th[2 * NTHREADS];
    worker w[2 * NTHREADS];
    int started = 0;
    for (int i = 0; i < 2 * NTHREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i % NTHREADS;
        if (pthread_create(&th[i], NULL, i < NTHREADS ? ops_worker : churn_worker, &w[i]) == 0)
            started++;
        else
            break;
    }
    DT_CHECK(started == 2 * NTHREADS, "only %d threads started", started);
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        merge(&w[i]);
    }
    DT_OK(duet_context_synchronize(g_ctx));
    DT_OK(duet_context_destroy(g_ctx));
    return dt_finish("test_threads");
}
