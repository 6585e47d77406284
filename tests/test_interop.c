/* test_interop.c - wrapped memory, streams and events: every op on them, lifetimes, bad input. */
#include "harness.h"

#include <stdint.h>

/*
 * "Foreign" memory, portably: the device memory of a buffer that a second context (the
 * application, as far as the first context knows) allocated, reached through
 * duet_buffer_device_ptr; on the cpu backend also plain malloc'd host memory. Every expected
 * value is computed here on the host from small integers, so results compare exactly.
 */

static duet_context *g_ctx;   /* the context under test */
static duet_context *g_owner; /* plays the application: owns the foreign memory */
static int g_cpu;

enum { R = 6, C = 5, K = 4 };

/* Foreign memory of bytes bytes: from g_owner's buffer *keep (on cpu: malloc, *keep NULL). */
static void *foreign_alloc(size_t bytes, duet_buffer **keep, int use_malloc)
{
    *keep = NULL;
    if (use_malloc) {
        void *p = malloc(bytes);
        DT_CHECK(p != NULL, "malloc(%zu)", bytes);
        return p;
    }
    void *p = NULL;
    DT_OK(duet_buffer_create(g_owner, bytes, keep));
    DT_OK(duet_buffer_device_ptr(*keep, 0, &p));
    return p;
}

static void foreign_free(void *p, duet_buffer *keep)
{
    if (keep)
        DT_OK(duet_buffer_destroy(keep));
    else
        free(p);
}

/* ---- argument checks --------------------------------------------------------------------- */

static void test_wrap_arguments(void)
{
    duet_buffer *b = NULL;
    char host[64];
    DT_FAILS(duet_buffer_wrap(NULL, host, 8, &b), DUET_ERROR_INVALID_HANDLE, "ctx");
    DT_FAILS(duet_buffer_wrap(g_ctx, host, 8, NULL), DUET_ERROR_INVALID_ARGUMENT, "buf");
    DT_FAILS(duet_buffer_wrap(g_ctx, NULL, 8, &b), DUET_ERROR_INVALID_ARGUMENT, "ptr");
    DT_CHECK(b == NULL, "nothing written on failure");
    DT_FAILS(duet_buffer_wrap(g_ctx, (void *)(uintptr_t)(UINTPTR_MAX - 15), 64, &b),
             DUET_ERROR_INVALID_ARGUMENT, "wraps around");

    /* bytes 0: an empty buffer, with or without a pointer. */
    DT_OK(duet_buffer_wrap(g_ctx, NULL, 0, &b));
    size_t sz = 1;
    void *p = (void *)1;
    int wrapped = 0;
    DT_OK(duet_buffer_size(b, &sz));
    DT_CHECK(sz == 0, "empty wrapped buffer has size %zu", sz);
    DT_OK(duet_buffer_device_ptr(b, 0, &p));
    DT_CHECK(p == NULL, "empty buffer's address is %p", p);
    DT_OK(duet_buffer_is_wrapped(b, &wrapped));
    DT_CHECK(wrapped == 1, "is_wrapped %d", wrapped);
    DT_FAILS(duet_buffer_device_ptr(b, 1, &p), DUET_ERROR_INVALID_ARGUMENT, "offset");
    DT_OK(duet_buffer_destroy(b));

    /* device_ptr on a buffer duet owns. */
    duet_buffer *own = NULL;
    DT_OK(duet_buffer_create(g_ctx, 256, &own));
    void *base = NULL, *mid = NULL, *end = NULL;
    DT_OK(duet_buffer_device_ptr(own, 0, &base));
    DT_OK(duet_buffer_device_ptr(own, 100, &mid));
    DT_OK(duet_buffer_device_ptr(own, 256, &end));
    DT_CHECK(base != NULL && (char *)mid == (char *)base + 100 && (char *)end == (char *)base + 256,
             "addresses %p %p %p", base, mid, end);
    DT_OK(duet_buffer_is_wrapped(own, &wrapped));
    DT_CHECK(wrapped == 0, "is_wrapped of an owned buffer %d", wrapped);
    void *untouched = (void *)0x1234;
    DT_FAILS(duet_buffer_device_ptr(own, 257, &untouched), DUET_ERROR_INVALID_ARGUMENT, "offset");
    DT_CHECK(untouched == (void *)0x1234, "nothing written on failure");
    DT_FAILS(duet_buffer_device_ptr(own, 0, NULL), DUET_ERROR_INVALID_ARGUMENT, "ptr");
    DT_FAILS(duet_buffer_device_ptr(NULL, 0, &p), DUET_ERROR_INVALID_HANDLE, "buf");
    DT_FAILS(duet_buffer_is_wrapped(own, NULL), DUET_ERROR_INVALID_ARGUMENT, "wrapped");

    if (!g_cpu) {
        /* Host memory is not device memory; a size past the allocation is caught at its end. */
        DT_FAILS(duet_buffer_wrap(g_ctx, host, sizeof host, &b), DUET_ERROR_INVALID_ARGUMENT,
                 "ptr");
        DT_FAILS(duet_buffer_wrap(g_ctx, base, (size_t)1 << 44, &b), DUET_ERROR_INVALID_ARGUMENT,
                 "bytes");
        DT_CHECK(b == NULL, "nothing written on failure");
    }
    /* A stale handle. */
    DT_OK(duet_buffer_wrap(g_ctx, base, 256, &b));
    DT_OK(duet_buffer_destroy(b));
    DT_FAILS(duet_buffer_device_ptr(b, 0, &p), DUET_ERROR_INVALID_HANDLE, "buf");
    DT_FAILS(duet_buffer_destroy(b), DUET_ERROR_INVALID_HANDLE, "buf");
    /* The owned buffer survived the wrapped one's destruction. */
    unsigned char probe[4] = {1, 2, 3, 4}, back[4] = {0};
    DT_OK(duet_buffer_write(NULL, own, 252, probe, 4));
    DT_OK(duet_buffer_read(NULL, own, 252, back, 4));
    DT_CHECK(memcmp(probe, back, 4) == 0, "owned buffer after its wrapper was destroyed");
    DT_OK(duet_buffer_destroy(own));
}

/* ---- every op on wrapped memory ---------------------------------------------------------- */

static float at(const float *m, int64_t ld, int64_t i, int64_t j) { return m[i * ld + j]; }

/* a: R x K, b: K x C, c: R x C, t: C x R, all f32 row-major, packed, at byte offsets inside
 * one foreign allocation wrapped once (with a leading gap that must stay untouched). */
static void test_ops_on_wrapped(int use_malloc)
{
    const size_t gap = 64; /* bytes before the wrapped range */
    const size_t na = R * K, nb = K * C, nc = R * C, nt = C * R;
    const size_t total = (na + nb + nc + nt) * sizeof(float);
    duet_buffer *keep = NULL;
    char *mem = (char *)foreign_alloc(gap + total, &keep, use_malloc);
    if (!mem) return;
    duet_buffer *w = NULL;
    DT_OK(duet_buffer_wrap(g_ctx, mem + gap, total, &w));
    if (!w) {
        foreign_free(mem, keep);
        return;
    }
    /* The gap, written through the owner, must survive everything below. */
    unsigned char guard[64];
    memset(guard, 0xA5, sizeof guard);
    if (keep)
        DT_OK(duet_buffer_write(NULL, keep, 0, guard, gap));
    else
        memcpy(mem, guard, gap);

    float ha[R * K], hb[K * C], hc[R * C], ht[C * R], want[R * C];
    for (size_t i = 0; i < na; i++) ha[i] = (float)((int)(i % 7) - 3);
    for (size_t i = 0; i < nb; i++) hb[i] = (float)((int)(i % 5) - 2);
    duet_matrix A = duet_matrix_make(w, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, R, K);
    duet_matrix B = duet_matrix_make(w, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, K, C);
    duet_matrix Cm = duet_matrix_make(w, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, R, C);
    duet_matrix T = duet_matrix_make(w, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, C, R);
    B.offset = na;
    Cm.offset = na + nb;
    T.offset = na + nb + nc;
    DT_OK(duet_buffer_write(NULL, w, 0, ha, sizeof ha));
    DT_OK(duet_buffer_write_async(NULL, w, na * sizeof(float), hb, sizeof hb));

    /* fill, scale, add, gemm, transpose, copy, memset */
    DT_OK(duet_fill(NULL, 2.0, &Cm, NULL));
    DT_OK(duet_scale(NULL, 3.0, &Cm, NULL));                  /* C = 6                 */
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 1.0, &Cm, NULL)); /* C = AB + 6 */
    DT_OK(duet_add(NULL, 2.0, &Cm, -1.0, &Cm, &Cm, NULL));    /* C = C                 */
    DT_OK(duet_transpose(NULL, &Cm, &T, NULL));
    DT_OK(duet_buffer_read(NULL, w, Cm.offset * sizeof(float), hc, sizeof hc));
    DT_OK(duet_buffer_read(NULL, w, T.offset * sizeof(float), ht, sizeof ht));
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            float s = 6.0f;
            for (int k = 0; k < K; k++) s += at(ha, K, i, k) * at(hb, C, k, j);
            want[i * C + j] = s;
        }
    int bad = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            bad += hc[i * C + j] != want[i * C + j];
            bad += ht[j * R + i] != want[i * C + j];
        }
    DT_CHECK(bad == 0, "%d wrong elements after fill/scale/gemm/add/transpose on wrapped memory "
                       "(%s)", bad, use_malloc ? "malloc" : "another context's buffer");

    /* copy C over A's first elements (wrapped to owned and back), memset B. */
    duet_buffer *own = NULL;
    DT_OK(duet_buffer_create(g_ctx, sizeof hc, &own));
    DT_OK(duet_buffer_copy(NULL, own, 0, w, Cm.offset * sizeof(float), sizeof hc));
    DT_OK(duet_buffer_copy(NULL, w, 0, own, 0, 4 * sizeof(float)));
    DT_OK(duet_buffer_memset(NULL, w, na * sizeof(float), 0, nb * sizeof(float)));
    float ra[R * K], rb[K * C];
    DT_OK(duet_buffer_read(NULL, w, 0, ra, sizeof ra));
    DT_OK(duet_buffer_read(NULL, w, na * sizeof(float), rb, sizeof rb));
    bad = 0;
    for (size_t i = 0; i < na; i++) bad += ra[i] != (i < 4 ? want[i] : ha[i]);
    for (size_t i = 0; i < nb; i++) bad += rb[i] != 0.0f;
    DT_CHECK(bad == 0, "%d wrong elements after copy/memset on wrapped memory", bad);
    DT_OK(duet_buffer_destroy(own));

    /* Out of range for the wrapped size, although the allocation is larger. */
    DT_FAILS(duet_buffer_memset(NULL, w, total - 4, 0, 8), DUET_ERROR_INVALID_ARGUMENT, "offset");
    duet_matrix big = duet_matrix_make(w, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1000, 1000);
    DT_FAILS(duet_fill(NULL, 1.0, &big, NULL), DUET_ERROR_INVALID_ARGUMENT, "too small");

    /* The address round trip, and the gap untouched. */
    void *addr = NULL;
    DT_OK(duet_buffer_device_ptr(w, 12, &addr));
    DT_CHECK(addr == mem + gap + 12, "device_ptr %p, wrapped %p + 12", addr, (void *)(mem + gap));
    unsigned char got[64];
    if (keep)
        DT_OK(duet_buffer_read(NULL, keep, 0, got, gap));
    else
        memcpy(got, mem, gap);
    DT_CHECK(memcmp(got, guard, gap) == 0, "the bytes before the wrapped range changed");

    /* Destroying the wrapper leaves the memory to its owner. */
    DT_OK(duet_buffer_destroy(w));
    float again[R * C];
    if (keep)
        DT_OK(duet_buffer_read(NULL, keep, gap + Cm.offset * sizeof(float), again, sizeof again));
    else
        memcpy(again, mem + gap + Cm.offset * sizeof(float), sizeof again);
    DT_CHECK(memcmp(again, want, sizeof again) == 0, "foreign memory after its wrapper's end");
    foreign_free(mem, keep);
}

/* ---- a runtime-compiled kernel on wrapped memory (GPU backends) --------------------------- */

static void test_launch_on_wrapped(void)
{
    static const char *src = "__global__ void add_index(int *x, int n) {\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    if (i < n) x[i] += i;\n"
                             "}\n";
    duet_module *m = NULL;
    duet_status s = duet_module_create(g_ctx, src, NULL, &m);
    if (s == DUET_ERROR_UNSUPPORTED) return; /* cpu: no runtime compilation */
    DT_CHECK(s == DUET_SUCCESS, "duet_module_create: %s", duet_last_error());
    if (!m) return;
    duet_function *f = NULL;
    DT_OK(duet_module_get_function(m, "add_index", &f));
    enum { n = 300 };
    duet_buffer *keep = NULL;
    char *mem = (char *)foreign_alloc(n * sizeof(int32_t) + 64, &keep, 0);
    duet_buffer *w = NULL;
    DT_OK(duet_buffer_wrap(g_ctx, mem + 64, n * sizeof(int32_t), &w));
    duet_matrix x = duet_matrix_make(w, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, 1, n);
    DT_OK(duet_fill(NULL, 5.0, &x, NULL));
    duet_launch_config cfg;
    DT_OK(duet_launch_config_1d(n - 100, 128, &cfg));
    /* The kernel works on elements 100.. of the wrapped range: an offset argument. */
    duet_arg args[2] = {duet_arg_buffer(w, 100 * sizeof(int32_t)), duet_arg_i32(n - 100)};
    DT_OK(duet_launch(NULL, f, &cfg, args, 2));
    int32_t got[n];
    DT_OK(duet_buffer_read(NULL, w, 0, got, sizeof got));
    int bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != 5 + (i >= 100 ? i - 100 : 0);
    DT_CHECK(bad == 0, "%d wrong elements after a launch on wrapped memory", bad);
    DT_OK(duet_buffer_destroy(w));
    DT_OK(duet_module_destroy(m));
    foreign_free(mem, keep);
}

/* ---- lifetimes: foreign memory outlives the context; two contexts ------------------------ */

static void test_lifetimes_and_contexts(int use_malloc)
{
    duet_context *ctx = NULL;
    DT_OK(duet_context_create(0, &ctx));
    if (!ctx) return;
    const size_t n = 64;
    duet_buffer *keep = NULL;
    float *mem = (float *)foreign_alloc(n * sizeof(float), &keep, use_malloc);
    if (!mem) return;
    duet_buffer *w = NULL, *w_other = NULL;
    DT_OK(duet_buffer_wrap(ctx, mem, n * sizeof(float), &w));
    DT_OK(duet_buffer_wrap(g_ctx, mem, n * sizeof(float), &w_other));
    duet_matrix x = duet_matrix_make(w, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 8, 8);
    duet_matrix y = duet_matrix_make(w_other, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 8, 8);
    DT_OK(duet_fill(NULL, 7.0, &x, NULL));
    DT_OK(duet_context_synchronize(ctx));

    /* Handles of two contexts never mix, wrapped or not. */
    duet_stream *s_other = NULL;
    DT_OK(duet_context_default_stream(g_ctx, &s_other));
    DT_FAILS(duet_fill(s_other, 1.0, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "another context");
    DT_FAILS(duet_add(NULL, 1.0, &x, 1.0, &y, &y, NULL), DUET_ERROR_INVALID_ARGUMENT,
             "another context");
    DT_FAILS(duet_buffer_copy(NULL, w, 0, w_other, 0, 4), DUET_ERROR_INVALID_ARGUMENT,
             "different contexts");
    duet_stream *wrapped_default = NULL;
    DT_OK(duet_stream_wrap(g_ctx, NULL, &wrapped_default));
    DT_FAILS(duet_scale(wrapped_default, 2.0, &x, NULL), DUET_ERROR_INVALID_ARGUMENT,
             "another context");

    /* The context goes, with its wrapper; the memory stays, with what was written. */
    DT_OK(duet_context_destroy(ctx));
    DT_FAILS(duet_buffer_size(w, &(size_t){0}), DUET_ERROR_INVALID_HANDLE, "buf");
    float back[64];
    DT_OK(duet_buffer_read(wrapped_default, w_other, 0, back, sizeof back));
    int bad = 0;
    for (size_t i = 0; i < n; i++) bad += back[i] != 7.0f;
    DT_CHECK(bad == 0, "%d elements of foreign memory wrong after its context was destroyed", bad);
    DT_OK(duet_scale(wrapped_default, 2.0, &y, NULL));
    DT_OK(duet_buffer_read(wrapped_default, w_other, 0, back, sizeof back));
    DT_CHECK(back[0] == 14.0f && back[63] == 14.0f, "after the destroy: %g %g", back[0], back[63]);
    DT_OK(duet_stream_destroy(wrapped_default));
    DT_OK(duet_buffer_destroy(w_other));
    foreign_free(mem, keep);
}

/* ---- streams ----------------------------------------------------------------------------- */

static void test_streams(void)
{
    duet_stream *def = NULL, *mine = NULL, *w = NULL;
    void *nat = (void *)0x1, *nat_def = NULL;
    DT_OK(duet_context_default_stream(g_ctx, &def));
    DT_OK(duet_stream_create(g_ctx, &mine));
    DT_OK(duet_stream_native(mine, &nat));
    DT_OK(duet_stream_native(def, &nat_def));
    DT_CHECK(nat != NULL && nat != nat_def, "native streams %p %p", nat, nat_def);
    DT_FAILS(duet_stream_native(mine, NULL), DUET_ERROR_INVALID_ARGUMENT, "native");
    DT_FAILS(duet_stream_native(NULL, &nat), DUET_ERROR_INVALID_HANDLE, "stream");
    DT_FAILS(duet_stream_wrap(NULL, NULL, &w), DUET_ERROR_INVALID_HANDLE, "ctx");
    DT_FAILS(duet_stream_wrap(g_ctx, NULL, NULL), DUET_ERROR_INVALID_ARGUMENT, "stream");

    /* NULL: the host thread on cpu, the legacy default stream on GPUs. */
    DT_OK(duet_stream_wrap(g_ctx, NULL, &w));
    void *wn = (void *)0x1;
    DT_OK(duet_stream_native(w, &wn));
    DT_CHECK(wn == NULL, "native of a wrapped NULL stream is %p", wn);
    DT_OK(duet_stream_destroy(w));
    DT_FAILS(duet_stream_native(w, &wn), DUET_ERROR_INVALID_HANDLE, "stream");

    duet_buffer *b = NULL;
    DT_OK(duet_buffer_create(g_ctx, 16 * sizeof(int32_t), &b));
    duet_matrix m = duet_matrix_make(b, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    if (g_cpu) {
        DT_FAILS(duet_stream_wrap(g_ctx, nat, &w), DUET_ERROR_UNSUPPORTED, "native");
        DT_CHECK(w == NULL, "nothing written on failure");
    } else {
        /* Another duet stream's native stream plays the application's stream. */
        DT_OK(duet_stream_wrap(g_ctx, nat, &w));
        void *back = NULL;
        DT_OK(duet_stream_native(w, &back));
        DT_CHECK(back == nat, "native %p, wrapped %p", back, nat);
        DT_OK(duet_fill(w, 3.0, &m, NULL));
        DT_OK(duet_scale(w, -2.0, &m, NULL));
        DT_OK(duet_stream_destroy(w));
        /* The native stream lives on. */
        DT_OK(duet_stream_synchronize(mine));
        DT_OK(duet_scale(mine, 2.0, &m, NULL));
        int32_t got[16];
        DT_OK(duet_buffer_read(mine, b, 0, got, sizeof got));
        DT_CHECK(got[0] == -12 && got[15] == -12, "ops on a wrapped stream: %d %d", got[0],
                 got[15]);
    }
    /* Synchronising and blocking calls work on streams that are not capturing. */
    DT_OK(duet_stream_synchronize(mine));
    DT_OK(duet_context_synchronize(g_ctx));
    DT_OK(duet_buffer_destroy(b));
    DT_OK(duet_stream_destroy(mine));
}

/* ---- events ------------------------------------------------------------------------------ */

static void test_events(void)
{
    duet_event *e = NULL, *w = NULL;
    void *nat = NULL;
    DT_OK(duet_event_create(g_ctx, &e));
    DT_OK(duet_event_native(e, &nat));
    DT_CHECK(nat != NULL, "native event is NULL");
    DT_FAILS(duet_event_native(e, NULL), DUET_ERROR_INVALID_ARGUMENT, "native");
    DT_FAILS(duet_event_native(NULL, &nat), DUET_ERROR_INVALID_HANDLE, "event");
    DT_FAILS(duet_event_wrap(NULL, nat, &w), DUET_ERROR_INVALID_HANDLE, "ctx");
    DT_FAILS(duet_event_wrap(g_ctx, nat, NULL), DUET_ERROR_INVALID_ARGUMENT, "event");
    if (g_cpu) {
        DT_FAILS(duet_event_wrap(g_ctx, nat, &w), DUET_ERROR_UNSUPPORTED, "cpu");
        DT_FAILS(duet_event_wrap(g_ctx, NULL, &w), DUET_ERROR_UNSUPPORTED, "cpu");
    } else {
        DT_FAILS(duet_event_wrap(g_ctx, NULL, &w), DUET_ERROR_INVALID_ARGUMENT, "native");
        DT_OK(duet_event_wrap(g_ctx, nat, &w));
        void *back = NULL;
        DT_OK(duet_event_native(w, &back));
        DT_CHECK(back == nat, "native %p, wrapped %p", back, nat);
        DT_OK(duet_event_record(w, NULL));
        DT_OK(duet_event_synchronize(w));
        DT_OK(duet_event_destroy(w));
        /* The native event lives on under its own handle. */
        DT_OK(duet_event_record(e, NULL));
        DT_OK(duet_event_synchronize(e));
    }
    DT_OK(duet_event_destroy(e));
}

int main(void)
{
    g_ctx = dt_open_or_skip();
    g_cpu = strcmp(duet_backend_name(), "cpu") == 0;
    DT_OK(duet_context_create(0, &g_owner));
    if (!g_owner) return dt_finish("test_interop");

    test_wrap_arguments();
    test_ops_on_wrapped(0);
    test_lifetimes_and_contexts(0);
    if (g_cpu) {
        test_ops_on_wrapped(1);
        test_lifetimes_and_contexts(1);
    }
    test_launch_on_wrapped();
    test_streams();
    test_events();

    DT_OK(duet_context_destroy(g_owner));
    DT_OK(duet_context_destroy(g_ctx));
    return dt_finish("test_interop");
}
