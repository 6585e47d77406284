/* test_api.c - bad input for every public function: its status, a message naming it, no writes. */
#include "harness.h"

#include <ctype.h>
#include <stdint.h>
#include <time.h>

/* A huge allocation must come back as DUET_ERROR_OUT_OF_MEMORY, not as a sanitizer abort. */
#if defined(__SANITIZE_ADDRESS__)
#define API_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define API_ASAN 1
#endif
#endif
#ifdef API_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif /* API_ASAN */

static duet_context *g_ctx;
static duet_device_props g_props;
#ifdef DT_STATUS_TABLE
static const int g_status_table = 1;
#else
static const int g_status_table = 0;
#endif

/* ---- message checks ---------------------------------------------------------------------- */

static int is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Whole-word and case-insensitive so that "a" is not found inside "lda"; words of three or
 * more letters may carry a plural 's' ("dtypes", "overlaps"). */
static int has_word(const char *msg, const char *word, size_t n)
{
    for (const char *p = msg; *p; p++) {
        if (p > msg && is_ident(p[-1])) continue;
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)word[i]))
            i++;
        if (i < n) continue;
        const char *q = p + n;
        if (n >= 3 && *q == 's') q++;
        if (!is_ident(*q)) return 1;
    }
    return 0;
}

/* words: alternatives separated by '|'; any one of them is enough. */
static int names_any(const char *msg, const char *words)
{
    while (*words) {
        size_t n = strcspn(words, "|");
        if (n > 0 && has_word(msg, words, n)) return 1;
        words += n;
        if (*words == '|') words++;
    }
    return 0;
}

/* Buffers that a failing call must leave untouched: each holds a known pattern. */
#define MAX_WATCH 8
static struct {
    duet_buffer *buf;
    size_t bytes;
    unsigned char *pattern;
} g_watch[MAX_WATCH];
static int g_nwatch;

static void pattern_fill(unsigned char *p, size_t bytes, unsigned seed)
{
    for (size_t i = 0; i < bytes; i++) p[i] = (unsigned char)(i * 131u + seed * 29u + 7u);
}

static void watch(duet_buffer *buf)
{
    size_t bytes = 0;
    DT_OK(duet_buffer_size(buf, &bytes));
    if (g_nwatch == MAX_WATCH) return;
    unsigned char *p = (unsigned char *)malloc(bytes ? bytes : 1);
    if (!p) return;
    pattern_fill(p, bytes, (unsigned)g_nwatch + 1u);
    if (bytes) DT_OK(duet_buffer_write(NULL, buf, 0, p, bytes));
    g_watch[g_nwatch].buf = buf;
    g_watch[g_nwatch].bytes = bytes;
    g_watch[g_nwatch].pattern = p;
    g_nwatch++;
}

/* After a call that was allowed to write (a valid baseline), the patterns are put back. */
static void watch_restore(void)
{
    for (int i = 0; i < g_nwatch; i++)
        if (g_watch[i].bytes)
            DT_OK(duet_buffer_write(NULL, g_watch[i].buf, 0, g_watch[i].pattern, g_watch[i].bytes));
}

static void unwatch_all(void)
{
    for (int i = 0; i < g_nwatch; i++) free(g_watch[i].pattern);
    g_nwatch = 0;
}

static void watch_check(const char *text, const char *file, int line)
{
    for (int i = 0; i < g_nwatch; i++) {
        size_t bytes = g_watch[i].bytes;
        if (!bytes) continue;
        unsigned char *now = (unsigned char *)malloc(bytes);
        if (!now) continue;
        memset(now, 0, bytes);
        duet_status st = duet_buffer_read(NULL, g_watch[i].buf, 0, now, bytes);
        dt_checks++;
        if (st != DUET_SUCCESS || memcmp(now, g_watch[i].pattern, bytes) != 0) {
            dt_failures++;
            fprintf(stderr, "%s:%d: %s: failed, yet watched buffer %d changed (read: %s)\n", file,
                    line, text, i, duet_status_string(st));
            duet_buffer_write(NULL, g_watch[i].buf, 0, g_watch[i].pattern, bytes);
        }
        free(now);
    }
}

#ifdef DT_STATUS_TABLE
/* Built as test_status_table: every case below also records one line (test_status_table.c). */
static void status_table_add(const char *text, duet_status got, const char *msg);
#endif

/* Like DT_FAILS, with the argument found as a whole word (alternatives "a|b"), the message
 * opening with the called function's name, and every watched buffer unchanged. */
#define FAILS(call, want, words) check_fails((call), (want), (words), #call, __FILE__, __LINE__)

static void check_fails(duet_status got, duet_status want, const char *words, const char *text,
                        const char *file, int line)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", duet_last_error());
    dt_checks++;
    if (got != want) {
        dt_failures++;
        fprintf(stderr, "%s:%d: %s -> %s, wanted %s (\"%s\")\n", file, line, text,
                duet_status_string(got), duet_status_string(want), msg);
    } else if (words && !names_any(msg, words)) {
        dt_failures++;
        fprintf(stderr, "%s:%d: %s: message \"%s\" does not name \"%s\"\n", file, line, text, msg,
                words);
    } else if (strncmp(text, "duet_", 5) == 0) {
        size_t n = strcspn(text, "( ");
        if (strncmp(msg, text, n) != 0 || msg[n] != ':') {
            dt_failures++;
            fprintf(stderr, "%s:%d: %s: message \"%s\" does not open with \"%.*s: \"\n", file, line,
                    text, msg, (int)n, text);
        }
    }
    watch_check(text, file, line);
#ifdef DT_STATUS_TABLE
    status_table_add(text, got, msg);
#endif
}

/* A decimal number as text, for messages that must name a device limit by its value. */
static const char *num(long long v)
{
    static char bufs[4][32];
    static int k;
    k = (k + 1) % 4;
    snprintf(bufs[k], sizeof bufs[k], "%lld", v);
    return bufs[k];
}

static duet_buffer *new_buffer(duet_context *ctx, size_t bytes)
{
    duet_buffer *b = NULL;
    DT_OK(duet_buffer_create(ctx, bytes, &b));
    return b;
}

/* A packed single matrix, built here rather than with duet_matrix_make (tested on its own). */
static duet_matrix mat(duet_buffer *buf, duet_dtype dtype, duet_layout layout, int64_t rows,
                       int64_t cols)
{
    duet_matrix m;
    memset(&m, 0, sizeof m);
    m.buffer = buf;
    m.dtype = dtype;
    m.layout = layout;
    m.rows = rows;
    m.cols = cols;
    m.ld = layout == DUET_LAYOUT_ROW_MAJOR ? cols : rows;
    m.batch_count = 1;
    return m;
}

/* Writes small integers (exact in every dtype) into a whole buffer. */
static void write_ints(duet_buffer *buf, duet_dtype dtype, size_t count, int seed)
{
    size_t elem = duet_dtype_size(dtype);
    unsigned char *h = (unsigned char *)malloc(count * elem + 1);
    if (!h) return;
    for (size_t i = 0; i < count; i++) dt_set(h, dtype, i, (double)((int)(i * 7 + seed) % 9 - 4));
    DT_OK(duet_buffer_write(NULL, buf, 0, h, count * elem));
    free(h);
}

static const duet_buffer *forged_buffer(void)
{
    return (const duet_buffer *)(uintptr_t)0x1234;
}
static duet_stream *forged_stream(void)
{
    return (duet_stream *)(uintptr_t)0x1234;
}

/* ---- versions, names and the last error ------------------------------------------------ */

static void test_names(void)
{
    DT_CHECK(duet_version() == DUET_VERSION, "duet_version() %d, header %d", duet_version(),
             DUET_VERSION);
    const char *be = duet_backend_name();
    DT_CHECK(be && (!strcmp(be, "cpu") || !strcmp(be, "cuda") || !strcmp(be, "hip")),
             "backend name \"%s\"", be ? be : "(null)");
    /* The string macro spells the three number macros, and the library's text is that
     * version followed by its backend: "0.2.0 (cpu)". */
    char want[96];
    snprintf(want, sizeof want, "%d.%d.%d", DUET_VERSION_MAJOR, DUET_VERSION_MINOR,
             DUET_VERSION_PATCH);
    DT_CHECK(!strcmp(want, DUET_VERSION_STRING), "DUET_VERSION_STRING \"%s\", macros say %s",
             DUET_VERSION_STRING, want);
    DT_CHECK(DUET_VERSION == DUET_VERSION_MAJOR * 10000 + DUET_VERSION_MINOR * 100 +
                                DUET_VERSION_PATCH,
             "DUET_VERSION %d", DUET_VERSION);
    const char *vs = duet_version_string();
    DT_CHECK(vs && !strncmp(vs, want, strlen(want)), "duet_version_string() \"%s\" does not begin "
             "with %s", vs ? vs : "(null)", want);
    snprintf(want, sizeof want, "%s (%s)", DUET_VERSION_STRING, be ? be : "");
    DT_CHECK(vs && !strcmp(vs, want), "duet_version_string() \"%s\", wanted \"%s\"",
             vs ? vs : "(null)", want);
    DT_CHECK(vs == duet_version_string(), "duet_version_string() is not one constant string");

    const char *names[11];
    for (int s = 0; s <= 10; s++) {
        names[s] = duet_status_string((duet_status)s);
        DT_CHECK(names[s] && names[s][0], "status %d has no name", s);
        DT_CHECK(!names[s] || !names_any(names[s], "unknown"), "status %d is \"%s\"", s, names[s]);
        for (int t = 0; t < s; t++)
            DT_CHECK(!names[s] || !names[t] || strcmp(names[s], names[t]) != 0,
                     "statuses %d and %d share the name \"%s\"", t, s, names[s]);
    }
    DT_CHECK(!strcmp(duet_status_string(DUET_ERROR_INVALID_ARGUMENT), "invalid argument"), "\"%s\"",
             duet_status_string(DUET_ERROR_INVALID_ARGUMENT));
    const int bad_status[] = {-1, 11, 999};
    for (int i = 0; i < 3; i++) {
        const char *s = duet_status_string((duet_status)bad_status[i]);
        DT_CHECK(s && names_any(s, "unknown"), "status %d is \"%s\"", bad_status[i],
                 s ? s : "(null)");
    }

    static const size_t sizes[6] = {4, 8, 4, 2, 2, 1};
    for (int d = 0; d < 6; d++) {
        DT_CHECK(duet_dtype_size((duet_dtype)d) == sizes[d], "dtype %d size %zu", d,
                 duet_dtype_size((duet_dtype)d));
        const char *n = duet_dtype_name((duet_dtype)d);
        DT_CHECK(n && n[0], "dtype %d has no name", d);
        for (int e = 0; e < d; e++)
            DT_CHECK(n && strcmp(n, duet_dtype_name((duet_dtype)e)) != 0,
                     "dtypes %d and %d share a name", e, d);
    }
    const int bad_dtype[] = {-1, 8, 1000};
    for (int i = 0; i < 3; i++) {
        DT_CHECK(duet_dtype_size((duet_dtype)bad_dtype[i]) == 0, "dtype %d size %zu", bad_dtype[i],
                 duet_dtype_size((duet_dtype)bad_dtype[i]));
        DT_CHECK(duet_dtype_name((duet_dtype)bad_dtype[i]) != NULL, "dtype %d name NULL",
                 bad_dtype[i]);
    }
    for (int a = 0; a <= 4; a++) {
        const char *n = duet_algorithm_name((duet_algorithm)a);
        DT_CHECK(n && n[0], "algorithm %d has no name", a);
        for (int b = 0; b < a; b++)
            DT_CHECK(n && strcmp(n, duet_algorithm_name((duet_algorithm)b)) != 0,
                     "algorithms %d and %d share a name", b, a);
    }
    DT_CHECK(duet_algorithm_name((duet_algorithm)-1) != NULL, "algorithm -1 name NULL");
    DT_CHECK(duet_algorithm_name((duet_algorithm)5) != NULL, "algorithm 5 name NULL");
    DT_CHECK(duet_last_compile_log() != NULL, "duet_last_compile_log() is NULL");
}

static void test_last_error(void)
{
    duet_buffer *b = NULL;
    DT_CHECK(duet_buffer_create(NULL, 16, &b) == DUET_ERROR_INVALID_HANDLE, "NULL ctx");
    const char *msg = duet_last_error();
    DT_CHECK(msg && !strncmp(msg, "duet_buffer_create: ", 20), "message \"%s\"",
             msg ? msg : "(null)");
    DT_OK(duet_buffer_create(g_ctx, 16, &b));
    DT_CHECK(!strcmp(duet_last_error(), ""), "after success: \"%s\"", duet_last_error());

    /* A success of another function clears it too, and so does a pure query. */
    DT_CHECK(duet_buffer_size(NULL, NULL) != DUET_SUCCESS, "NULL buffer size");
    DT_CHECK(duet_last_error()[0] != '\0', "a failure left no message");
    size_t bytes = 0;
    DT_OK(duet_buffer_size(b, &bytes));
    DT_CHECK(!strcmp(duet_last_error(), ""), "after success: \"%s\"", duet_last_error());
    DT_CHECK(duet_stream_synchronize(NULL) != DUET_SUCCESS, "NULL stream");
    DT_OK(duet_context_synchronize(g_ctx));
    DT_CHECK(!strcmp(duet_last_error(), ""), "after success: \"%s\"", duet_last_error());
    DT_OK(duet_buffer_destroy(b));
}

/* ---- devices and contexts ---------------------------------------------------------------- */

static void test_devices_contexts(void)
{
    int count = -1;
    FAILS(duet_device_count(NULL), DUET_ERROR_INVALID_ARGUMENT, "count");
    DT_OK(duet_device_count(&count));
    DT_CHECK(count >= 1, "count %d", count);
    if (!strcmp(duet_backend_name(), "cpu")) DT_CHECK(count == 1, "cpu count %d", count);

    duet_device_props p;
    FAILS(duet_device_get_props(0, NULL), DUET_ERROR_INVALID_ARGUMENT, "props");
    FAILS(duet_device_get_props(-1, &p), DUET_ERROR_INVALID_ARGUMENT, "device");
    FAILS(duet_device_get_props(count, &p), DUET_ERROR_INVALID_ARGUMENT, "device");
    FAILS(duet_device_get_props(INT32_MIN, &p), DUET_ERROR_INVALID_ARGUMENT, "device");
    DT_OK(duet_device_get_props(0, &p));

    duet_context *c = (duet_context *)(uintptr_t)1;
    FAILS(duet_context_create(0, NULL), DUET_ERROR_INVALID_ARGUMENT, "ctx");
    FAILS(duet_context_create(-1, &c), DUET_ERROR_INVALID_ARGUMENT, "device");
    DT_CHECK(c == NULL, "a failed create left *ctx %p", (void *)c);
    FAILS(duet_context_create(count, &c), DUET_ERROR_INVALID_ARGUMENT, "device");

    duet_context *forged = (duet_context *)(uintptr_t)0x1234;
    FAILS(duet_context_destroy(NULL), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_context_destroy(forged), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_context_get_props(NULL, &p), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_context_get_props(forged, &p), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_context_get_props(g_ctx, NULL), DUET_ERROR_INVALID_ARGUMENT, "props");
    duet_stream *s = NULL;
    FAILS(duet_context_default_stream(NULL, &s), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_context_default_stream(g_ctx, NULL), DUET_ERROR_INVALID_ARGUMENT, "stream");
    FAILS(duet_context_synchronize(NULL), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_context_synchronize(forged), DUET_ERROR_INVALID_HANDLE, "ctx");

    /* A handle of another kind is not a context. */
    duet_buffer *b = new_buffer(g_ctx, 8);
    FAILS(duet_context_synchronize((duet_context *)b), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_buffer_size((const duet_buffer *)g_ctx, &(size_t){0}), DUET_ERROR_INVALID_HANDLE,
          "buf");
    DT_OK(duet_buffer_destroy(b));

    /* Everything a destroyed context owned is gone with it. */
    duet_context *c2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    duet_buffer *b2 = new_buffer(c2, 64);
    duet_stream *s2 = NULL, *d2 = NULL;
    duet_event *e2 = NULL;
    DT_OK(duet_stream_create(c2, &s2));
    DT_OK(duet_context_default_stream(c2, &d2));
    DT_OK(duet_event_create(c2, &e2));
    DT_OK(duet_context_destroy(c2));
    FAILS(duet_context_destroy(c2), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_context_synchronize(c2), DUET_ERROR_INVALID_HANDLE, "ctx");
    size_t bytes = 0;
    unsigned char host[64] = {0};
    FAILS(duet_buffer_size(b2, &bytes), DUET_ERROR_INVALID_HANDLE, "buf");
    FAILS(duet_buffer_write(NULL, b2, 0, host, 8), DUET_ERROR_INVALID_HANDLE, "dst");
    FAILS(duet_buffer_destroy(b2), DUET_ERROR_INVALID_HANDLE, "buf");
    FAILS(duet_stream_synchronize(s2), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_stream_destroy(s2), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_stream_synchronize(d2), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_event_record(e2, NULL), DUET_ERROR_INVALID_HANDLE, "event");
    FAILS(duet_event_destroy(e2), DUET_ERROR_INVALID_HANDLE, "event");

    /* A stale handle stays dead when its slot is reused. */
    duet_context *c3 = NULL;
    DT_OK(duet_context_create(0, &c3));
    duet_buffer *b3 = new_buffer(c3, 8);
    FAILS(duet_buffer_size(b2, &bytes), DUET_ERROR_INVALID_HANDLE, "buf");
    FAILS(duet_context_synchronize(c2), DUET_ERROR_INVALID_HANDLE, "ctx");
    DT_OK(duet_buffer_destroy(b3));
    DT_OK(duet_context_destroy(c3));
}

/* ---- buffers ----------------------------------------------------------------------------- */

static void test_buffers(void)
{
    enum { N = 64 };
    duet_buffer *b = NULL;
    FAILS(duet_buffer_create(NULL, 16, &b), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_buffer_create((duet_context *)(uintptr_t)0x1234, 16, &b), DUET_ERROR_INVALID_HANDLE,
          "ctx");
    FAILS(duet_buffer_create(g_ctx, 16, NULL), DUET_ERROR_INVALID_ARGUMENT, "buf");

    /* Empty buffers exist and take empty copies. */
    duet_buffer *e = new_buffer(g_ctx, 0);
    size_t bytes = 1;
    DT_OK(duet_buffer_size(e, &bytes));
    DT_CHECK(bytes == 0, "empty buffer size %zu", bytes);
    DT_OK(duet_buffer_write(NULL, e, 0, NULL, 0));
    DT_OK(duet_buffer_read(NULL, e, 0, NULL, 0));
    DT_OK(duet_buffer_memset(NULL, e, 0, 1, 0));
    FAILS(duet_buffer_write(NULL, e, 0, "x", 1), DUET_ERROR_INVALID_ARGUMENT, "bytes|dst_offset");
    DT_OK(duet_buffer_destroy(e));

    b = new_buffer(g_ctx, N);
    DT_OK(duet_buffer_size(b, &bytes));
    DT_CHECK(bytes == N, "size %zu", bytes);
    FAILS(duet_buffer_size(NULL, &bytes), DUET_ERROR_INVALID_HANDLE, "buf");
    FAILS(duet_buffer_size(forged_buffer(), &bytes), DUET_ERROR_INVALID_HANDLE, "buf");
    /* Forged values of every shape, whatever the table's layout (src/common/handles.c reads
     * it without a lock): all ones, the highest slot, slots far past any allocated so far, and
     * this buffer's own slot with another generation. */
    {
        const uintptr_t own = (uintptr_t)b;
        const uintptr_t forged[] = {UINTPTR_MAX,
                                    ~(uintptr_t)0xf | (own & 0xf),
                                    ((uintptr_t)0xffffff << 4) | (own & 0xf),
                                    ((uintptr_t)100000 << 4) | (own & 0xf),
                                    ((uintptr_t)1 << 20) | (own & 0xf),
                                    own ^ ((uintptr_t)1 << 28),
                                    own ^ ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))};
        for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++)
            FAILS(duet_buffer_size((const duet_buffer *)forged[i], &bytes),
                  DUET_ERROR_INVALID_HANDLE, "buf");
    }
    FAILS(duet_buffer_size(b, NULL), DUET_ERROR_INVALID_ARGUMENT, "bytes");

    unsigned char host[N + 8], orig[N + 8];
    pattern_fill(host, sizeof host, 99);
    memcpy(orig, host, sizeof host);
    watch(b);

    /* Writes: one byte out of range, overflowing ranges, NULL pointers, dead handles. */
    FAILS(duet_buffer_write(NULL, b, 1, host, N), DUET_ERROR_INVALID_ARGUMENT, "dst_offset|offset");
    FAILS(duet_buffer_write(NULL, b, 0, host, N + 1), DUET_ERROR_INVALID_ARGUMENT, "bytes");
    FAILS(duet_buffer_write(NULL, b, N + 1, host, 0), DUET_ERROR_INVALID_ARGUMENT,
          "dst_offset|offset");
    FAILS(duet_buffer_write(NULL, b, SIZE_MAX, host, 2), DUET_ERROR_INVALID_ARGUMENT,
          "dst_offset|offset|bytes");
    FAILS(duet_buffer_write(NULL, b, 8, host, SIZE_MAX - 4), DUET_ERROR_INVALID_ARGUMENT,
          "dst_offset|offset|bytes");
    FAILS(duet_buffer_write(NULL, b, 0, NULL, 4), DUET_ERROR_INVALID_ARGUMENT, "src");
    FAILS(duet_buffer_write(NULL, NULL, 0, host, 4), DUET_ERROR_INVALID_HANDLE, "dst");
    FAILS(duet_buffer_write(NULL, (duet_buffer *)forged_buffer(), 0, host, 4),
          DUET_ERROR_INVALID_HANDLE, "dst");
    FAILS(duet_buffer_write(forged_stream(), b, 0, host, 4), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_buffer_write_async(NULL, b, 1, host, N), DUET_ERROR_INVALID_ARGUMENT,
          "dst_offset|offset");
    FAILS(duet_buffer_write_async(NULL, b, 0, NULL, 4), DUET_ERROR_INVALID_ARGUMENT, "src");
    FAILS(duet_buffer_write_async(NULL, NULL, 0, host, 4), DUET_ERROR_INVALID_HANDLE, "dst");

    /* Reads must leave the host destination alone when they fail. */
    FAILS(duet_buffer_read(NULL, b, 1, host, N), DUET_ERROR_INVALID_ARGUMENT, "src_offset|offset");
    FAILS(duet_buffer_read(NULL, b, 0, host, N + 1), DUET_ERROR_INVALID_ARGUMENT, "bytes");
    FAILS(duet_buffer_read(NULL, b, SIZE_MAX, host, 2), DUET_ERROR_INVALID_ARGUMENT,
          "src_offset|offset|bytes");
    FAILS(duet_buffer_read(NULL, b, 8, host, SIZE_MAX - 4), DUET_ERROR_INVALID_ARGUMENT,
          "src_offset|offset|bytes");
    FAILS(duet_buffer_read(NULL, b, 0, NULL, 4), DUET_ERROR_INVALID_ARGUMENT, "dst");
    FAILS(duet_buffer_read(NULL, NULL, 0, host, 4), DUET_ERROR_INVALID_HANDLE, "src");
    FAILS(duet_buffer_read(NULL, forged_buffer(), 0, host, 4), DUET_ERROR_INVALID_HANDLE, "src");
    FAILS(duet_buffer_read(forged_stream(), b, 0, host, 4), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_buffer_read_async(NULL, b, 1, host, N), DUET_ERROR_INVALID_ARGUMENT,
          "src_offset|offset");
    FAILS(duet_buffer_read_async(NULL, b, 0, NULL, 4), DUET_ERROR_INVALID_ARGUMENT, "dst");
    FAILS(duet_buffer_read_async(NULL, NULL, 0, host, 4), DUET_ERROR_INVALID_HANDLE, "src");
    DT_CHECK(memcmp(host, orig, sizeof host) == 0, "a failed read wrote host memory");

    /* Copies and memsets. */
    duet_buffer *b2 = new_buffer(g_ctx, N);
    watch(b2);
    FAILS(duet_buffer_copy(NULL, b2, 1, b, 0, N), DUET_ERROR_INVALID_ARGUMENT, "dst_offset|offset");
    FAILS(duet_buffer_copy(NULL, b2, 0, b, 1, N), DUET_ERROR_INVALID_ARGUMENT, "src_offset|offset");
    FAILS(duet_buffer_copy(NULL, b2, 0, b, 0, N + 1), DUET_ERROR_INVALID_ARGUMENT, "bytes");
    FAILS(duet_buffer_copy(NULL, b2, SIZE_MAX, b, 0, 2), DUET_ERROR_INVALID_ARGUMENT,
          "dst_offset|offset|bytes");
    FAILS(duet_buffer_copy(NULL, b2, 0, b, SIZE_MAX, 2), DUET_ERROR_INVALID_ARGUMENT,
          "src_offset|offset|bytes");
    FAILS(duet_buffer_copy(NULL, b2, 8, b, 8, SIZE_MAX - 4), DUET_ERROR_INVALID_ARGUMENT,
          "dst_offset|src_offset|offset|bytes");
    FAILS(duet_buffer_copy(NULL, NULL, 0, b, 0, 4), DUET_ERROR_INVALID_HANDLE, "dst");
    FAILS(duet_buffer_copy(NULL, b2, 0, NULL, 0, 4), DUET_ERROR_INVALID_HANDLE, "src");
    FAILS(duet_buffer_copy(forged_stream(), b2, 0, b, 0, 4), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_buffer_copy(NULL, b, 0, b, 8, 16), DUET_ERROR_INVALID_ARGUMENT, "overlap");
    FAILS(duet_buffer_copy(NULL, b, 8, b, 0, 16), DUET_ERROR_INVALID_ARGUMENT, "overlap");
    FAILS(duet_buffer_copy(NULL, b, 4, b, 4, 1), DUET_ERROR_INVALID_ARGUMENT, "overlap");
    FAILS(duet_buffer_memset(NULL, b, 1, 0, N), DUET_ERROR_INVALID_ARGUMENT, "offset");
    FAILS(duet_buffer_memset(NULL, b, 0, 0, N + 1), DUET_ERROR_INVALID_ARGUMENT, "bytes");
    FAILS(duet_buffer_memset(NULL, b, SIZE_MAX, 0, 2), DUET_ERROR_INVALID_ARGUMENT, "offset|bytes");
    FAILS(duet_buffer_memset(NULL, b, 8, 0, SIZE_MAX - 4), DUET_ERROR_INVALID_ARGUMENT,
          "offset|bytes");
    FAILS(duet_buffer_memset(NULL, NULL, 0, 0, 4), DUET_ERROR_INVALID_HANDLE, "buf");
    FAILS(duet_buffer_memset(forged_stream(), b, 0, 0, 4), DUET_ERROR_INVALID_HANDLE, "stream");

    /* Zero bytes at the very end is inside the buffer and does nothing. */
    DT_OK(duet_buffer_write(NULL, b, N, host, 0));
    DT_OK(duet_buffer_write(NULL, b, N, NULL, 0));
    DT_OK(duet_buffer_read(NULL, b, N, host, 0));
    DT_OK(duet_buffer_copy(NULL, b2, N, b, 0, 0));
    DT_OK(duet_buffer_copy(NULL, b, 3, b, 3, 0));
    DT_OK(duet_buffer_memset(NULL, b, N, 7, 0));
    watch_check("zero-byte calls", __FILE__, __LINE__);
    DT_CHECK(memcmp(host, orig, sizeof host) == 0, "a zero-byte read wrote host memory");
    unwatch_all();

    /* Round trips with offsets: only the addressed bytes change. */
    unsigned char base[N], got[N], want[N];
    pattern_fill(base, N, 5);
    DT_OK(duet_buffer_write(NULL, b, 0, base, N));
    DT_OK(duet_buffer_write(NULL, b, 5, host, 10));
    memcpy(want, base, N);
    memcpy(want + 5, host, 10);
    memset(got, 0, N);
    DT_OK(duet_buffer_read(NULL, b, 0, got, N));
    DT_CHECK(memcmp(got, want, N) == 0, "write at offset 5");
    memset(got, 0, N);
    DT_OK(duet_buffer_read(NULL, b, 7, got, 3));
    DT_CHECK(memcmp(got, want + 7, 3) == 0, "read at offset 7");
    DT_CHECK(got[3] == 0, "read wrote past its bytes");

    /* Copies inside one buffer: adjacent ranges do not overlap. */
    DT_OK(duet_buffer_copy(NULL, b, 16, b, 0, 16));
    memcpy(want + 16, want, 16);
    DT_OK(duet_buffer_copy(NULL, b, 40, b, 50, 10));
    memmove(want + 40, want + 50, 10);
    DT_OK(duet_buffer_copy(NULL, b2, 3, b, 1, 60));
    DT_OK(duet_buffer_memset(NULL, b, 60, 0xAB, 3));
    want[60] = want[61] = want[62] = 0xAB;
    DT_OK(duet_buffer_memset(NULL, b, 0, 255, 2));
    want[0] = want[1] = 0xFF;
    /* value is a byte: anything else is refused, not cut to its low 8 bits (0x1AB would set
     * 0xAB, -1 0xFF, 256 0); the comparison below sees that nothing was written. */
    const int bad_value[] = {256, 300, 0x1AB, -1, -256, INT32_MAX, INT32_MIN};
    for (int i = 0; i < 7; i++)
        FAILS(duet_buffer_memset(NULL, b, 4, bad_value[i], 8), DUET_ERROR_INVALID_ARGUMENT,
              "value");
    memset(got, 0, N);
    DT_OK(duet_buffer_read(NULL, b, 0, got, N));
    DT_CHECK(memcmp(got, want, N) == 0, "copies and memsets in one buffer");
    unsigned char got2[N];
    DT_OK(duet_buffer_read(NULL, b2, 3, got2, 60));
    unsigned char want2[N];
    /* b2 got b's bytes 1..60 as they were before the memsets (the copy was queued first). */
    memcpy(want2, base, N);
    memcpy(want2 + 5, host, 10);
    memcpy(want2 + 16, want2, 16);
    memmove(want2 + 40, want2 + 50, 10);
    DT_CHECK(memcmp(got2, want2 + 1, 60) == 0, "copy into a second buffer");

    /* Async forms with a stream of the buffer's context. */
    duet_stream *s = NULL;
    DT_OK(duet_stream_create(g_ctx, &s));
    DT_OK(duet_buffer_write_async(s, b, 0, base, N));
    memset(got, 0, N);
    DT_OK(duet_buffer_read_async(s, b, 0, got, N));
    DT_OK(duet_stream_synchronize(s));
    DT_CHECK(memcmp(got, base, N) == 0, "async round trip");

    /* Buffers and streams of two contexts do not mix. */
    duet_context *c2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    duet_buffer *f = new_buffer(c2, N);
    duet_stream *s2 = NULL;
    DT_OK(duet_stream_create(c2, &s2));
    watch(b);
    watch(f);
    FAILS(duet_buffer_copy(NULL, b, 0, f, 0, 8), DUET_ERROR_INVALID_ARGUMENT, "context|src|dst");
    FAILS(duet_buffer_copy(NULL, f, 0, b, 0, 8), DUET_ERROR_INVALID_ARGUMENT, "context|src|dst");
    FAILS(duet_buffer_write(s2, b, 0, host, 8), DUET_ERROR_INVALID_ARGUMENT, "stream");
    FAILS(duet_buffer_read(s2, b, 0, host, 8), DUET_ERROR_INVALID_ARGUMENT, "stream");
    FAILS(duet_buffer_memset(s2, b, 0, 0, 8), DUET_ERROR_INVALID_ARGUMENT, "stream");
    FAILS(duet_buffer_copy(s, f, 0, f, 8, 8), DUET_ERROR_INVALID_ARGUMENT, "stream");
    unwatch_all();
    DT_OK(duet_stream_destroy(s));
    DT_OK(duet_context_destroy(c2));

    /* Destroyed buffers. */
    DT_OK(duet_buffer_destroy(b2));
    FAILS(duet_buffer_destroy(b2), DUET_ERROR_INVALID_HANDLE, "buf");
    FAILS(duet_buffer_write(NULL, b2, 0, host, 4), DUET_ERROR_INVALID_HANDLE, "dst");
    FAILS(duet_buffer_read(NULL, b2, 0, host, 4), DUET_ERROR_INVALID_HANDLE, "src");
    FAILS(duet_buffer_copy(NULL, b, 0, b2, 0, 4), DUET_ERROR_INVALID_HANDLE, "src");
    FAILS(duet_buffer_memset(NULL, b2, 0, 0, 4), DUET_ERROR_INVALID_HANDLE, "buf");
    FAILS(duet_buffer_destroy(NULL), DUET_ERROR_INVALID_HANDLE, "buf");
    DT_OK(duet_buffer_destroy(b));

    /* Impossible allocations fail cleanly and leave the context usable. */
    const size_t huge[] = {SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 2 + 1, (size_t)1 << 62};
    for (int i = 0; i < 4; i++) {
        duet_buffer *h = (duet_buffer *)(uintptr_t)1;
        FAILS(duet_buffer_create(g_ctx, huge[i], &h), DUET_ERROR_OUT_OF_MEMORY, NULL);
        DT_CHECK(h == NULL, "a failed create left *buf %p", (void *)h);
        duet_buffer *ok = NULL;
        DT_OK(duet_buffer_create(g_ctx, 256, &ok));
        if (ok) {
            DT_OK(duet_buffer_write(NULL, ok, 0, base, N));
            DT_OK(duet_buffer_destroy(ok));
        }
    }
}

/* ---- host memory ------------------------------------------------------------------------- */

static void test_host_memory(void)
{
    void *p = NULL;
    FAILS(duet_host_alloc(NULL, 64, &p), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_host_alloc(g_ctx, 64, NULL), DUET_ERROR_INVALID_ARGUMENT, "ptr");
    FAILS(duet_host_free(NULL, &p), DUET_ERROR_INVALID_HANDLE, "ctx");
    DT_OK(duet_host_alloc(g_ctx, 4096, &p));
    DT_CHECK(p != NULL, "host_alloc gave NULL");
    duet_buffer *b = new_buffer(g_ctx, 4096);
    if (p) {
        pattern_fill((unsigned char *)p, 4096, 3);
        DT_OK(duet_buffer_write_async(NULL, b, 0, p, 4096));
        unsigned char *q = (unsigned char *)malloc(4096);
        if (q) {
            memset(q, 0, 4096);
            DT_OK(duet_buffer_read(NULL, b, 0, q, 4096));
            DT_CHECK(memcmp(p, q, 4096) == 0, "pinned round trip");
            free(q);
        }
        DT_OK(duet_host_free(g_ctx, p));
    }

    unsigned char *r = (unsigned char *)malloc(8192);
    if (r) {
        FAILS(duet_host_register(NULL, r, 8192), DUET_ERROR_INVALID_HANDLE, "ctx");
        FAILS(duet_host_register(g_ctx, NULL, 8192), DUET_ERROR_INVALID_ARGUMENT, "ptr");
        FAILS(duet_host_unregister(g_ctx, r), DUET_ERROR_INVALID_ARGUMENT, "ptr");
        FAILS(duet_host_unregister(NULL, r), DUET_ERROR_INVALID_HANDLE, "ctx");
        FAILS(duet_host_unregister(g_ctx, NULL), DUET_ERROR_INVALID_ARGUMENT, "ptr");
        DT_OK(duet_host_register(g_ctx, r, 8192));
        pattern_fill(r, 4096, 11);
        DT_OK(duet_buffer_write_async(NULL, b, 0, r, 4096));
        DT_OK(duet_buffer_read_async(NULL, b, 0, r + 4096, 4096));
        DT_OK(duet_context_synchronize(g_ctx));
        DT_CHECK(memcmp(r, r + 4096, 4096) == 0, "registered round trip");
        DT_OK(duet_host_unregister(g_ctx, r));
        FAILS(duet_host_unregister(g_ctx, r), DUET_ERROR_INVALID_ARGUMENT, "ptr");
        /* Registered again after unregistering: the pair nests cleanly. */
        DT_OK(duet_host_register(g_ctx, r, 8192));
        DT_OK(duet_host_unregister(g_ctx, r));
        /* Memory duet never allocated is not duet's to free. */
        FAILS(duet_host_free(g_ctx, r), DUET_ERROR_INVALID_ARGUMENT, "ptr");
        free(r);
    }
    DT_OK(duet_buffer_destroy(b));
}

/* ---- streams and events ------------------------------------------------------------------ */

static void test_streams_events(void)
{
    duet_stream *s = NULL, *d = NULL;
    FAILS(duet_stream_create(NULL, &s), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_stream_create(g_ctx, NULL), DUET_ERROR_INVALID_ARGUMENT, "stream");
    DT_OK(duet_stream_create(g_ctx, &s));
    DT_OK(duet_stream_synchronize(s));
    FAILS(duet_stream_synchronize(NULL), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_stream_synchronize(forged_stream()), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_stream_destroy(NULL), DUET_ERROR_INVALID_HANDLE, "stream");
    DT_OK(duet_stream_destroy(s));
    FAILS(duet_stream_destroy(s), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_stream_synchronize(s), DUET_ERROR_INVALID_HANDLE, "stream");

    DT_OK(duet_context_default_stream(g_ctx, &d));
    DT_CHECK(d != NULL, "default stream NULL");
    FAILS(duet_stream_destroy(d), DUET_ERROR_INVALID_ARGUMENT, "stream|default");
    DT_OK(duet_stream_synchronize(d));

    duet_event *e0 = NULL, *e1 = NULL;
    float ms = -1.0f;
    FAILS(duet_event_create(NULL, &e0), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_event_create(g_ctx, NULL), DUET_ERROR_INVALID_ARGUMENT, "event");
    DT_OK(duet_event_create(g_ctx, &e0));
    DT_OK(duet_event_create(g_ctx, &e1));
    FAILS(duet_event_elapsed_ms(e0, e1, &ms), DUET_ERROR_NOT_READY, "start");
    DT_OK(duet_event_query(e0)); /* never recorded: nothing to wait for */
    FAILS(duet_event_query(NULL), DUET_ERROR_INVALID_HANDLE, "event");
    DT_OK(duet_event_record(e0, NULL));
    FAILS(duet_event_elapsed_ms(e0, e1, &ms), DUET_ERROR_NOT_READY, "stop");
    FAILS(duet_event_elapsed_ms(e1, e0, &ms), DUET_ERROR_NOT_READY, "start");
    DT_OK(duet_stream_create(g_ctx, &s));
    DT_OK(duet_event_record(e1, s));
    DT_OK(duet_event_synchronize(e1));
    DT_OK(duet_event_synchronize(e0));
    DT_OK(duet_event_query(e1)); /* complete after its synchronize */
    DT_OK(duet_event_query(e0));
    DT_OK(duet_event_elapsed_ms(e0, e1, &ms));
    DT_CHECK(ms >= 0.0f && ms < 60000.0f, "elapsed %g ms", (double)ms);
    FAILS(duet_event_elapsed_ms(e0, e1, NULL), DUET_ERROR_INVALID_ARGUMENT, "ms");
    FAILS(duet_event_elapsed_ms(NULL, e1, &ms), DUET_ERROR_INVALID_HANDLE, "start");
    FAILS(duet_event_elapsed_ms(e0, NULL, &ms), DUET_ERROR_INVALID_HANDLE, "stop");
    FAILS(duet_event_record(NULL, s), DUET_ERROR_INVALID_HANDLE, "event");
    FAILS(duet_event_record(e0, forged_stream()), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_event_synchronize(NULL), DUET_ERROR_INVALID_HANDLE, "event");
    FAILS(duet_event_synchronize((duet_event *)s), DUET_ERROR_INVALID_HANDLE, "event");

    /* Events and streams of two contexts. */
    duet_context *c2 = NULL;
    duet_event *f = NULL;
    duet_stream *s2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    DT_OK(duet_event_create(c2, &f));
    DT_OK(duet_stream_create(c2, &s2));
    DT_OK(duet_event_record(f, s2));
    DT_OK(duet_event_synchronize(f));
    FAILS(duet_event_elapsed_ms(e0, f, &ms), DUET_ERROR_INVALID_ARGUMENT, "context|start|stop");
    FAILS(duet_event_elapsed_ms(f, e1, &ms), DUET_ERROR_INVALID_ARGUMENT, "context|start|stop");
    FAILS(duet_event_record(e0, s2), DUET_ERROR_INVALID_ARGUMENT, "stream");
    FAILS(duet_event_record(f, s), DUET_ERROR_INVALID_ARGUMENT, "stream");
    DT_OK(duet_context_destroy(c2));
    FAILS(duet_event_elapsed_ms(e0, f, &ms), DUET_ERROR_INVALID_HANDLE, "stop");

    DT_OK(duet_event_destroy(e0));
    FAILS(duet_event_destroy(e0), DUET_ERROR_INVALID_HANDLE, "event");
    FAILS(duet_event_elapsed_ms(e0, e1, &ms), DUET_ERROR_INVALID_HANDLE, "start");
    FAILS(duet_event_destroy(NULL), DUET_ERROR_INVALID_HANDLE, "event");
    DT_OK(duet_event_destroy(e1));
    DT_OK(duet_stream_destroy(s));
}

/* ---- profiling --------------------------------------------------------------------------- */

typedef struct prof_user {
    duet_buffer *buf;
    duet_stream *stream;
    int calls;
    int fail_at; /* 0: never */
} prof_user;

static duet_status prof_fn(void *user)
{
    prof_user *u = (prof_user *)user;
    u->calls++;
    if (u->fail_at && u->calls == u->fail_at) return DUET_ERROR_LAUNCH_FAILED;
    return duet_buffer_memset(u->stream, u->buf, 0, u->calls, 4096);
}

static void test_profile(void)
{
    duet_stream *s = NULL;
    DT_OK(duet_stream_create(g_ctx, &s));
    prof_user u = {new_buffer(g_ctx, 4096), s, 0, 0};
    duet_profile_result r;
    memset(&r, 0, sizeof r);
    FAILS(duet_profile(NULL, s, prof_fn, &u, 1, 3, &r), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_profile(g_ctx, s, NULL, &u, 1, 3, &r), DUET_ERROR_INVALID_ARGUMENT, "fn");
    FAILS(duet_profile(g_ctx, s, prof_fn, &u, 1, 0, &r), DUET_ERROR_INVALID_ARGUMENT, "iters");
    FAILS(duet_profile(g_ctx, s, prof_fn, &u, 1, -3, &r), DUET_ERROR_INVALID_ARGUMENT, "iters");
    FAILS(duet_profile(g_ctx, s, prof_fn, &u, -1, 3, &r), DUET_ERROR_INVALID_ARGUMENT, "warmup");
    FAILS(duet_profile(g_ctx, s, prof_fn, &u, 1, 3, NULL), DUET_ERROR_INVALID_ARGUMENT, "result");
    FAILS(duet_profile(g_ctx, forged_stream(), prof_fn, &u, 1, 3, &r), DUET_ERROR_INVALID_HANDLE,
          "stream");
    DT_CHECK(u.calls == 0, "fn ran %d times on invalid arguments", u.calls);

    DT_OK(duet_profile(g_ctx, s, prof_fn, &u, 2, 5, &r));
    DT_CHECK(u.calls == 7, "fn ran %d times, wanted warmup + iters = 7", u.calls);
    DT_CHECK(r.iters == 5, "result iters %d", r.iters);
    DT_CHECK(r.min_ms >= 0 && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms,
             "min %g median %g max %g", r.min_ms, r.median_ms, r.max_ms);
    DT_CHECK(r.mean_ms >= r.min_ms && r.mean_ms <= r.max_ms, "mean %g outside [%g, %g]", r.mean_ms,
             r.min_ms, r.max_ms);
    unsigned char last[4096];
    DT_OK(duet_buffer_read(s, u.buf, 0, last, sizeof last));
    DT_CHECK(last[0] == 7 && last[4095] == 7, "the last call's memset is not there (%d)", last[0]);

    /* The default stream, no warm-up. */
    u.calls = 0;
    u.stream = NULL;
    DT_OK(duet_profile(g_ctx, NULL, prof_fn, &u, 0, 1, &r));
    DT_CHECK(u.calls == 1 && r.iters == 1, "calls %d iters %d", u.calls, r.iters);
    DT_CHECK(r.min_ms == r.max_ms && r.median_ms == r.min_ms, "one sample, min %g max %g", r.min_ms,
             r.max_ms);

    /* A failing fn stops the profile at once and its status comes back. */
    u.calls = 0;
    u.fail_at = 3;
    u.stream = s;
    DT_CHECK(duet_profile(g_ctx, s, prof_fn, &u, 1, 10, &r) == DUET_ERROR_LAUNCH_FAILED,
             "profile of a failing fn");
    DT_CHECK(u.calls == 3, "fn ran %d times after failing at call 3", u.calls);
    u.calls = 0;
    u.fail_at = 1;
    DT_CHECK(duet_profile(g_ctx, s, prof_fn, &u, 2, 10, &r) == DUET_ERROR_LAUNCH_FAILED,
             "profile failing in warm-up");
    DT_CHECK(u.calls == 1, "fn ran %d times after failing at call 1", u.calls);

    DT_OK(duet_buffer_destroy(u.buf));
    DT_OK(duet_stream_destroy(s));
}

/* ---- matrices and ops -------------------------------------------------------------------- */

static void test_matrix_make(void)
{
    duet_buffer *b = new_buffer(g_ctx, 64);
    duet_matrix m = duet_matrix_make(b, DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, 3, 5);
    DT_CHECK(m.buffer == b && m.dtype == DUET_DTYPE_F64 && m.layout == DUET_LAYOUT_ROW_MAJOR,
             "fields");
    DT_CHECK(m.rows == 3 && m.cols == 5 && m.ld == 5 && m.offset == 0,
             "rows %lld cols %lld "
             "ld %lld offset %zu",
             (long long)m.rows, (long long)m.cols, (long long)m.ld, m.offset);
    DT_CHECK(m.batch_count == 0 || m.batch_count == 1, "batch_count %lld",
             (long long)m.batch_count);
    m = duet_matrix_make(b, DUET_DTYPE_I8, DUET_LAYOUT_COL_MAJOR, 3, 5);
    DT_CHECK(m.ld == 3 && m.layout == DUET_LAYOUT_COL_MAJOR, "col-major ld %lld", (long long)m.ld);
    DT_OK(duet_buffer_destroy(b));
}

enum { GM = 3, GK = 4, GN = 5 };

/* Runs gemm with op_a = op_b = N on copies of a, b, c, one of which has been changed. */
#define GEMM3(m3, want, words)                                                                     \
    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &(m3)[0], &(m3)[1], 0.0, &(m3)[2], NULL),     \
          want, words)

static const char *const g_ld_name[3] = {"lda", "ldb", "ldc"};
static const char *const g_mat_name[3] = {"a", "b", "c"};

/* Stored shape of A (m x k) or B (k x n) under op, with a packed ld in layout. */
static duet_matrix gemm_operand(duet_buffer *buf, duet_op op, duet_layout layout, int64_t r,
                                int64_t c)
{
    return op == DUET_OP_N ? mat(buf, DUET_DTYPE_F32, layout, r, c)
                           : mat(buf, DUET_DTYPE_F32, layout, c, r);
}

static void test_gemm_bad(void)
{
    duet_buffer *ba = new_buffer(g_ctx, 8 * 64), *bb = new_buffer(g_ctx, 8 * 64),
                *bc = new_buffer(g_ctx, 8 * 64);
    write_ints(ba, DUET_DTYPE_F32, 64, 1);
    write_ints(bb, DUET_DTYPE_F32, 64, 2);
    const duet_matrix a = mat(ba, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, GM, GK);
    const duet_matrix b = mat(bb, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, GK, GN);
    const duet_matrix c = mat(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, GM, GN);
    const duet_matrix base[3] = {a, b, c};
    duet_matrix m[3];
    duet_matrix cc = c;
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.0, &cc, NULL));
    watch(ba);
    watch(bb);
    watch(bc);

    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, NULL, &b, 0, &cc, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "a");
    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, NULL, 0, &cc, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "b");
    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, NULL, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "c");
    FAILS(duet_gemm(forged_stream(), DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &cc, NULL),
          DUET_ERROR_INVALID_HANDLE, "stream");

    duet_buffer *dead = new_buffer(g_ctx, 8 * 64);
    DT_OK(duet_buffer_destroy(dead));
    for (int w = 0; w < 3; w++) {
        char words[32];
        memcpy(m, base, sizeof m);
        m[w].buffer = NULL;
        GEMM3(m, DUET_ERROR_INVALID_HANDLE, "buffer");
        m[w].buffer = dead;
        GEMM3(m, DUET_ERROR_INVALID_HANDLE, "buffer");
        m[w].buffer = (duet_buffer *)forged_buffer();
        GEMM3(m, DUET_ERROR_INVALID_HANDLE, "buffer");

        memcpy(m, base, sizeof m);
        m[w].rows = -1;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "rows");
        memcpy(m, base, sizeof m);
        m[w].cols = -1;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "cols");
        memcpy(m, base, sizeof m);
        m[w].ld = -1;
        snprintf(words, sizeof words, "%s|ld", g_ld_name[w]);
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, words);
        m[w].ld = INT64_MIN;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, words);
        memcpy(m, base, sizeof m);
        m[w].batch_count = -1;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "batch_count");
        memcpy(m, base, sizeof m);
        m[w].batch_stride = -1;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "batch_stride");

        /* Invalid enums. */
        const int bad_enum[2] = {-1, 1000};
        for (int i = 0; i < 2; i++) {
            memcpy(m, base, sizeof m);
            m[w].dtype = (duet_dtype)bad_enum[i];
            GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "dtype");
            memcpy(m, base, sizeof m);
            m[w].layout = (duet_layout)bad_enum[i];
            GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "layout");
        }
        memcpy(m, base, sizeof m);
        m[w].dtype = (duet_dtype)(DUET_DTYPE_F8E5M2 + 1);
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "dtype");
        /* A valid dtype that breaks duet.h's table of combinations: A and B that differ are a
         * bad argument, a C the table does not pair with them is unsupported. */
        m[w].dtype = w == 0 ? DUET_DTYPE_F64 : DUET_DTYPE_I32;
        if (w < 2)
            GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "dtypes");
        else
            GEMM3(m, DUET_ERROR_UNSUPPORTED, "dtype combination");
        memcpy(m, base, sizeof m);
        m[w].layout = DUET_LAYOUT_COL_MAJOR + 1;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "layout");

        /* The buffer one element too small, packed, with an offset and in a batch. */
        size_t span = (size_t)(base[w].rows * base[w].cols);
        duet_buffer *small = new_buffer(g_ctx, (span - 1) * 4);
        memcpy(m, base, sizeof m);
        m[w].buffer = small;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, g_mat_name[w]);
        DT_OK(duet_buffer_destroy(small));
        small = new_buffer(g_ctx, span * 4);
        m[w].buffer = small;
        m[w].offset = 1;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, g_mat_name[w]);
        DT_OK(duet_buffer_destroy(small));
        small = new_buffer(g_ctx, (2 * span + 2) * 4);
        memcpy(m, base, sizeof m);
        for (int k = 0; k < 3; k++) {
            m[k].batch_count = 2;
            m[k].batch_stride = m[k].rows * m[k].cols;
        }
        m[w].buffer = small;
        m[w].batch_stride = (int64_t)span + 3;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, g_mat_name[w]);
        m[w].batch_stride = (int64_t)span + 2;
        m[w].offset = 0;
        DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &m[0], &m[1], 0, &m[2], NULL));
        watch_restore();
        DT_OK(duet_buffer_destroy(small));

        /* An offset whose byte count wraps around. */
        memcpy(m, base, sizeof m);
        m[w].offset = SIZE_MAX / 4 + 1;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "offset");
        m[w].offset = SIZE_MAX;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "offset");
    }

    /* Leading dimensions one too small, for every layout and op of every operand. */
    for (int la = 0; la < 2; la++)
        for (int lb = 0; lb < 2; lb++)
            for (int lc = 0; lc < 2; lc++)
                for (int oa = 0; oa < 2; oa++)
                    for (int ob = 0; ob < 2; ob++) {
                        duet_matrix v[3];
                        v[0] = gemm_operand(ba, (duet_op)oa, (duet_layout)la, GM, GK);
                        v[1] = gemm_operand(bb, (duet_op)ob, (duet_layout)lb, GK, GN);
                        v[2] = mat(bc, DUET_DTYPE_F32, (duet_layout)lc, GM, GN);
                        DT_OK(duet_gemm(NULL, (duet_op)oa, (duet_op)ob, 1, &v[0], &v[1], 0, &v[2],
                                        NULL));
                        watch_restore();
                        for (int w = 0; w < 3; w++) {
                            memcpy(m, v, sizeof m);
                            m[w].ld--;
                            FAILS(duet_gemm(NULL, (duet_op)oa, (duet_op)ob, 1, &m[0], &m[1], 0,
                                            &m[2], NULL),
                                  DUET_ERROR_INVALID_ARGUMENT, g_ld_name[w]);
                        }
                    }

    /* Invalid ops. */
    FAILS(duet_gemm(NULL, (duet_op)-1, DUET_OP_N, 1, &a, &b, 0, &cc, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "op_a");
    FAILS(duet_gemm(NULL, (duet_op)2, DUET_OP_N, 1, &a, &b, 0, &cc, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "op_a");
    FAILS(duet_gemm(NULL, DUET_OP_N, (duet_op)-1, 1, &a, &b, 0, &cc, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "op_b");
    FAILS(duet_gemm(NULL, DUET_OP_N, (duet_op)2, 1, &a, &b, 0, &cc, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "op_b");

    /* Shapes that do not chain. */
    memcpy(m, base, sizeof m);
    m[0].cols = m[0].ld = GK + 1;
    GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "a|b|k");
    memcpy(m, base, sizeof m);
    m[1].rows = GK - 1;
    GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "a|b|k");
    memcpy(m, base, sizeof m);
    m[2].rows = GM + 1;
    GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "c|m");
    memcpy(m, base, sizeof m);
    m[2].cols = m[2].ld = GN - 1;
    GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "c|n");
    /* op_a = T with A stored as M x K no longer chains. */
    FAILS(duet_gemm(NULL, DUET_OP_T, DUET_OP_N, 1, &a, &b, 0, &cc, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "a|b|k|op_a");

    /* Batches: A and B match C's count or are single; an output never broadcasts. */
    memcpy(m, base, sizeof m);
    duet_buffer *big = new_buffer(g_ctx, 4 * 3 * 64);
    for (int k = 0; k < 3; k++) m[k].buffer = big;
    m[0].offset = 0;
    m[1].offset = 64;
    m[2].offset = 128;
    m[2].batch_count = 3;
    m[2].batch_stride = GM * GN;
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &m[0], &m[1], 0, &m[2], NULL));
    m[0].batch_count = 2;
    m[0].batch_stride = GM * GK;
    GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "batch_count|batch");
    m[0].batch_count = 1;
    m[2].batch_stride = 0;
    GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "batch_stride");
    DT_OK(duet_buffer_destroy(big));

    /* Sizes whose products overflow: consistent shapes, so only the size check can object. */
    {
        duet_matrix h[3];
        const int64_t half = INT64_MAX / 2;
        h[0] = mat(ba, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, half, half);
        h[1] = mat(bb, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, half, half);
        h[2] = mat(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, half, half);
        GEMM3(h, DUET_ERROR_INVALID_ARGUMENT, NULL);
        /* (2^62 + 1) rows of one f32: the byte count wraps to 4 and a 16-byte buffer would
         * seem to hold it. */
        const int64_t wrap = ((int64_t)1 << 62) + 1;
        h[0] = mat(ba, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, wrap, 1);
        h[1] = mat(bb, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
        h[2] = mat(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, wrap, 1);
        GEMM3(h, DUET_ERROR_INVALID_ARGUMENT, NULL);
        /* The same through ld and through the batch. */
        for (int k = 0; k < 3; k++)
            h[k] = mat(k == 0 ? ba : k == 1 ? bb : bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
        h[0].rows = h[2].rows = 3;
        h[2].ld = (int64_t)1 << 62;
        GEMM3(h, DUET_ERROR_INVALID_ARGUMENT, NULL);
        h[0].rows = h[2].rows = 1;
        h[2].ld = 1;
        for (int k = 0; k < 3; k++) {
            h[k].batch_count = wrap;
            h[k].batch_stride = 1;
        }
        GEMM3(h, DUET_ERROR_INVALID_ARGUMENT, NULL);
        h[2].batch_stride = INT64_MAX;
        h[2].batch_count = 3;
        h[0].batch_count = h[1].batch_count = 1;
        GEMM3(h, DUET_ERROR_INVALID_ARGUMENT, NULL);
    }

    /* C overlapping A or B in one buffer; disjoint ranges of one buffer are fine. */
    {
        duet_buffer *one = new_buffer(g_ctx, 4 * 64);
        write_ints(one, DUET_DTYPE_F32, 64, 3);
        duet_matrix v[3] = {a, b, c};
        for (int k = 0; k < 3; k++) v[k].buffer = one;
        v[0].offset = 0;
        v[1].offset = 12;
        v[2].offset = 32;
        DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &v[0], &v[1], 0, &v[2], NULL));
        watch(one);
        v[2].offset = 6;
        FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &v[0], &v[1], 0, &v[2], NULL),
              DUET_ERROR_INVALID_ARGUMENT, "overlap");
        v[2].offset = 31;
        FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &v[0], &v[1], 0, &v[2], NULL),
              DUET_ERROR_INVALID_ARGUMENT, "overlap");
        v[2].offset = 12;
        FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &v[0], &v[1], 0, &v[2], NULL),
              DUET_ERROR_INVALID_ARGUMENT, "overlap");
        /* alpha == 0 reads neither A nor B, yet C still may not overlap them. */
        FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 0, &v[0], &v[1], 0, &v[2], NULL),
              DUET_ERROR_INVALID_ARGUMENT, "overlap");
        unwatch_all();
        watch(ba);
        watch(bb);
        watch(bc);
        DT_OK(duet_buffer_destroy(one));
    }

    /* Empty products are valid with every algorithm and still check their stream. */
    {
        duet_matrix e[3] = {a, b, c};
        e[0].rows = e[2].rows = 0;
        const duet_algorithm algos[4] = {DUET_ALGO_AUTO, DUET_ALGO_NAIVE, DUET_ALGO_TILED,
                                         DUET_ALGO_GRID_STRIDE};
        for (int k = 0; k < 4; k++) {
            duet_op_options eo;
            memset(&eo, 0, sizeof eo);
            eo.algorithm = algos[k];
            DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &e[0], &e[1], 0, &e[2], &eo));
        }
        FAILS(duet_gemm(forged_stream(), DUET_OP_N, DUET_OP_N, 1, &e[0], &e[1], 0, &e[2], NULL),
              DUET_ERROR_INVALID_HANDLE, "stream");
        e[0].rows = e[2].rows = GM;
        e[0].cols = e[1].rows = 0;
        FAILS(duet_gemm(forged_stream(), DUET_OP_N, DUET_OP_N, 1, &e[0], &e[1], 1, &e[2], NULL),
              DUET_ERROR_INVALID_HANDLE, "stream");
        watch_check("empty gemm", __FILE__, __LINE__);
    }

    /* Unsupported dtype for gemm: i8. */
    memcpy(m, base, sizeof m);
    for (int k = 0; k < 3; k++) m[k].dtype = DUET_DTYPE_I8;
    GEMM3(m, DUET_ERROR_UNSUPPORTED, duet_dtype_name(DUET_DTYPE_I8));

    /* i32: alpha and beta are integers in the int32 range. */
    memcpy(m, base, sizeof m);
    for (int k = 0; k < 3; k++) m[k].dtype = DUET_DTYPE_I32;
    write_ints(ba, DUET_DTYPE_I32, 64, 1);
    write_ints(bb, DUET_DTYPE_I32, 64, 2);
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 3, &m[0], &m[1], -2, &m[2], NULL));
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, -2147483648.0, &m[0], &m[1], 2147483647.0, &m[2],
                    NULL));
    unwatch_all();
    watch(ba);
    watch(bb);
    watch(bc);
    const double bad_scalar[] = {1.5, 1099511627776.0, 2147483648.0, -2147483649.0,
                                 NAN, INFINITY,        0.5};
    for (int i = 0; i < 7; i++) {
        FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, bad_scalar[i], &m[0], &m[1], 1, &m[2], NULL),
              DUET_ERROR_INVALID_ARGUMENT, "alpha");
        FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &m[0], &m[1], bad_scalar[i], &m[2], NULL),
              DUET_ERROR_INVALID_ARGUMENT, "beta");
    }

    /* Options: tiles, unsupported algorithms, launch configs past the device's limits. */
    duet_op_options o;
    duet_launch_info info;
    memset(&o, 0, sizeof o);
    o.info = &info;
    o.algorithm = DUET_ALGO_TILED;
    memset(&info, 0, sizeof info);
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &cc, &o));
    DT_CHECK(info.tile == 16 && info.algorithm == DUET_ALGO_TILED, "tile 0: info.tile %d",
             info.tile);
    o.tile = 3;
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &cc, &o));
    o.tile = 32;
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &cc, &o));
    watch_restore();
    const int bad_tile[] = {33, -1, 64, INT32_MIN};
    for (int i = 0; i < 4; i++) {
        o.tile = bad_tile[i];
        FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &cc, &o),
              DUET_ERROR_INVALID_ARGUMENT, "tile");
    }
    o.tile = 0;
    o.algorithm = DUET_ALGO_TILED_PADDED;
    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &cc, &o), DUET_ERROR_UNSUPPORTED,
          duet_algorithm_name(DUET_ALGO_TILED_PADDED));
    o.algorithm = (duet_algorithm)-1;
    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &cc, &o), DUET_ERROR_INVALID_ARGUMENT,
          "algorithm");
    o.algorithm = (duet_algorithm)(DUET_ALGO_GRID_STRIDE + 1);
    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &cc, &o), DUET_ERROR_INVALID_ARGUMENT,
          "algorithm");

    /* Buffers of two contexts in one op. */
    duet_context *c2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    duet_buffer *foreign = new_buffer(c2, 8 * 64);
    duet_stream *s2 = NULL;
    DT_OK(duet_stream_create(c2, &s2));
    for (int w = 0; w < 3; w++) {
        memcpy(m, base, sizeof m);
        m[w].buffer = foreign;
        GEMM3(m, DUET_ERROR_INVALID_ARGUMENT, "context|contexts");
    }
    FAILS(duet_gemm(s2, DUET_OP_N, DUET_OP_N, 1, &a, &b, 0, &cc, NULL), DUET_ERROR_INVALID_ARGUMENT,
          "stream");
    DT_OK(duet_context_destroy(c2));

    unwatch_all();
    DT_OK(duet_buffer_destroy(ba));
    DT_OK(duet_buffer_destroy(bb));
    DT_OK(duet_buffer_destroy(bc));
}

/* Launch configurations past the device's limits, given through the options of any op. The
 * message names the limit by its value. */
typedef duet_status (*op_with_options)(const duet_op_options *o, void *user);

static void bad_launches(op_with_options run, void *user, int grid_stride_ok, const char *what)
{
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.algorithm = DUET_ALGO_NAIVE;
    o.launch.block.x = 33;
    o.launch.block.y = 33;
    o.launch.block.z = 1;
    if (33 * 33 > g_props.max_threads_per_block && 33 <= g_props.max_block_dims[1]) {
        duet_status st = run(&o, user);
        check_fails(st, DUET_ERROR_INVALID_ARGUMENT, num(g_props.max_threads_per_block), what,
                    __FILE__, __LINE__);
    }
    o.launch.block.x = 1;
    o.launch.block.y = 1;
    o.launch.block.z = (uint32_t)g_props.max_block_dims[2] + 1;
    check_fails(run(&o, user), DUET_ERROR_INVALID_ARGUMENT, num(g_props.max_block_dims[2]), what,
                __FILE__, __LINE__);
    o.launch.block.z = 1;
    o.launch.block.x = (uint32_t)g_props.max_block_dims[0] + 1;
    check_fails(run(&o, user), DUET_ERROR_INVALID_ARGUMENT, "block", what, __FILE__, __LINE__);
    if (!grid_stride_ok) return;
    o.algorithm = DUET_ALGO_GRID_STRIDE;
    o.launch.block.x = 16;
    o.launch.block.y = 16;
    o.launch.block.z = 1;
    o.launch.grid.x = 0;
    o.launch.grid.y = 2;
    o.launch.grid.z = 1;
    check_fails(run(&o, user), DUET_ERROR_INVALID_ARGUMENT, "grid|grid.x", what, __FILE__,
                __LINE__);
    o.launch.grid.x = 2;
    o.launch.block.x = 0;
    check_fails(run(&o, user), DUET_ERROR_INVALID_ARGUMENT, "block|block.x", what, __FILE__,
                __LINE__);
    o.launch.block.x = 16;
    if (g_props.max_grid_dims[1] < (int64_t)UINT32_MAX) {
        o.launch.grid.y = (uint32_t)g_props.max_grid_dims[1] + 1;
        check_fails(run(&o, user), DUET_ERROR_INVALID_ARGUMENT, num(g_props.max_grid_dims[1]), what,
                    __FILE__, __LINE__);
    }
    o.launch.grid.y = 2;
    o.launch.block.x = (uint32_t)g_props.max_threads_per_block;
    o.launch.block.y = 2;
    check_fails(run(&o, user), DUET_ERROR_INVALID_ARGUMENT, num(g_props.max_threads_per_block),
                what, __FILE__, __LINE__);
}

typedef struct op_args {
    duet_matrix a, b, c;
} op_args;

static duet_status run_gemm(const duet_op_options *o, void *user)
{
    op_args *u = (op_args *)user;
    return duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &u->a, &u->b, 0, &u->c, o);
}
static duet_status run_transpose(const duet_op_options *o, void *user)
{
    op_args *u = (op_args *)user;
    return duet_transpose(NULL, &u->a, &u->c, o);
}
static duet_status run_scale(const duet_op_options *o, void *user)
{
    return duet_scale(NULL, 2, &((op_args *)user)->c, o);
}
static duet_status run_add(const duet_op_options *o, void *user)
{
    op_args *u = (op_args *)user;
    return duet_add(NULL, 1, &u->a, 1, &u->b, &u->c, o);
}
static duet_status run_fill(const duet_op_options *o, void *user)
{
    return duet_fill(NULL, 1, &((op_args *)user)->c, o);
}

static void test_launch_options(void)
{
    duet_buffer *ba = new_buffer(g_ctx, 4 * 64), *bb = new_buffer(g_ctx, 4 * 64),
                *bc = new_buffer(g_ctx, 4 * 64);
    op_args u;
    u.a = mat(ba, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 5, 5);
    u.b = mat(bb, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 5, 5);
    u.c = mat(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 5, 5);
    watch(ba);
    watch(bb);
    watch(bc);
    bad_launches(run_gemm, &u, 1, "duet_gemm options");
    bad_launches(run_transpose, &u, 1, "duet_transpose options");
    bad_launches(run_scale, &u, 1, "duet_scale options");
    bad_launches(run_add, &u, 1, "duet_add options");
    bad_launches(run_fill, &u, 1, "duet_fill options");
    unwatch_all();
    DT_OK(duet_buffer_destroy(ba));
    DT_OK(duet_buffer_destroy(bb));
    DT_OK(duet_buffer_destroy(bc));
}

/* One-matrix checks shared by transpose, scale, add and fill: m points at the operand under
 * test inside args, run calls the op. */
static void bad_operand(op_with_options run, op_args *u, duet_matrix *m, const char *name,
                        const char *what)
{
    const duet_matrix keep = *m;
    duet_buffer *dead = new_buffer(g_ctx, 16);
    DT_OK(duet_buffer_destroy(dead));
#define ONE(field, value, want, words)                                                             \
    do {                                                                                           \
        *m = keep;                                                                                 \
        m->field = value;                                                                          \
        check_fails(run(NULL, u), want, words, what, __FILE__, __LINE__);                          \
    } while (0)
    ONE(buffer, NULL, DUET_ERROR_INVALID_HANDLE, "buffer");
    ONE(buffer, dead, DUET_ERROR_INVALID_HANDLE, "buffer");
    ONE(buffer, (duet_buffer *)forged_buffer(), DUET_ERROR_INVALID_HANDLE, "buffer");
    ONE(rows, -1, DUET_ERROR_INVALID_ARGUMENT, "rows");
    ONE(cols, -1, DUET_ERROR_INVALID_ARGUMENT, "cols");
    ONE(ld, -1, DUET_ERROR_INVALID_ARGUMENT, "ld|lda|ldb|ldc");
    ONE(ld, keep.ld - 1, DUET_ERROR_INVALID_ARGUMENT, "ld|lda|ldb|ldc");
    ONE(batch_count, -1, DUET_ERROR_INVALID_ARGUMENT, "batch_count");
    ONE(batch_stride, -1, DUET_ERROR_INVALID_ARGUMENT, "batch_stride");
    ONE(dtype, (duet_dtype)-1, DUET_ERROR_INVALID_ARGUMENT, "dtype");
    ONE(dtype, (duet_dtype)8, DUET_ERROR_INVALID_ARGUMENT, "dtype");
    ONE(layout, (duet_layout)-1, DUET_ERROR_INVALID_ARGUMENT, "layout");
    ONE(layout, (duet_layout)2, DUET_ERROR_INVALID_ARGUMENT, "layout");
    /* Buffers of exactly the footprint less one element, and exactly the footprint with an
     * offset of one. */
    size_t span =
        (size_t)(keep.layout == DUET_LAYOUT_ROW_MAJOR ? (keep.rows - 1) * keep.ld + keep.cols
                                                      : (keep.cols - 1) * keep.ld + keep.rows);
    size_t elem = duet_dtype_size(keep.dtype);
    duet_buffer *small = new_buffer(g_ctx, (span - 1) * elem);
    ONE(buffer, small, DUET_ERROR_INVALID_ARGUMENT, name);
    DT_OK(duet_buffer_destroy(small));
    small = new_buffer(g_ctx, span * elem);
    *m = keep;
    m->buffer = small;
    m->offset = 1;
    check_fails(run(NULL, u), DUET_ERROR_INVALID_ARGUMENT, name, what, __FILE__, __LINE__);
    DT_OK(duet_buffer_destroy(small));
    ONE(offset, SIZE_MAX / 4 + 1, DUET_ERROR_INVALID_ARGUMENT, "offset");
    ONE(offset, SIZE_MAX, DUET_ERROR_INVALID_ARGUMENT, "offset");
    /* The other layout's ld one too small. */
    *m = keep;
    m->layout =
        keep.layout == DUET_LAYOUT_ROW_MAJOR ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
    m->ld = (m->layout == DUET_LAYOUT_ROW_MAJOR ? m->cols : m->rows) - 1;
    check_fails(run(NULL, u), DUET_ERROR_INVALID_ARGUMENT, "ld|lda|ldb|ldc", what, __FILE__,
                __LINE__);
#undef ONE
    *m = keep;
}

/* Sizes whose products pass SIZE_MAX or wrap to something small, for a single operand whose
 * partners are changed along with it by set_shape. */
static void overflow_shapes(op_with_options run, op_args *u, duet_matrix *const *ms, int n,
                            int transposed_last, const char *what)
{
    const int64_t half = INT64_MAX / 2, wrap = ((int64_t)1 << 62) + 1;
    const int64_t shapes[4][5] = {
        /* rows, cols, ld, batch_count, batch_stride */
        {half, half, half, 1, 0},
        {wrap, 1, 1, 1, 0},
        {3, 1, (int64_t)1 << 62, 1, 0},
        {1, 1, 1, wrap, 1},
    };
    op_args keep = *u;
    for (int s = 0; s < 4; s++) {
        for (int k = 0; k < n; k++) {
            ms[k]->rows = shapes[s][0];
            ms[k]->cols = shapes[s][1];
            ms[k]->layout = DUET_LAYOUT_ROW_MAJOR;
            ms[k]->ld = shapes[s][2];
            ms[k]->batch_count = shapes[s][3];
            ms[k]->batch_stride = shapes[s][4];
        }
        if (transposed_last) {
            /* transpose's out: in's shape swapped, an ld that covers its rows. */
            duet_matrix *o = ms[n - 1];
            o->rows = shapes[s][1];
            o->cols = shapes[s][0];
            o->ld = shapes[s][2] > shapes[s][0] ? shapes[s][2] : shapes[s][0];
        }
        check_fails(run(NULL, u), DUET_ERROR_INVALID_ARGUMENT, NULL, what, __FILE__, __LINE__);
        *u = keep;
    }
}

static void test_transpose_bad(void)
{
    duet_buffer *bi = new_buffer(g_ctx, 8 * 64), *bo = new_buffer(g_ctx, 8 * 64);
    op_args u;
    u.a = mat(bi, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 3, 5);
    u.c = mat(bo, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 5, 3);
    u.b = u.a;
    DT_OK(duet_transpose(NULL, &u.a, &u.c, NULL));
    watch(bi);
    watch(bo);

    FAILS(duet_transpose(NULL, NULL, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "in");
    FAILS(duet_transpose(NULL, &u.a, NULL, NULL), DUET_ERROR_INVALID_ARGUMENT, "out");
    FAILS(duet_transpose(forged_stream(), &u.a, &u.c, NULL), DUET_ERROR_INVALID_HANDLE, "stream");
    bad_operand(run_transpose, &u, &u.a, "in", "duet_transpose in");
    bad_operand(run_transpose, &u, &u.c, "out", "duet_transpose out");
    duet_matrix *both[2] = {&u.a, &u.c};
    overflow_shapes(run_transpose, &u, both, 2, 1, "duet_transpose overflow");

    /* out must be in's shape transposed, of in's dtype and batch count. */
    duet_matrix o = u.c;
    o.rows = 3;
    o.cols = o.ld = 5;
    FAILS(duet_transpose(NULL, &u.a, &o, NULL), DUET_ERROR_INVALID_ARGUMENT, "out|rows|cols");
    o = u.c;
    o.rows = 4;
    FAILS(duet_transpose(NULL, &u.a, &o, NULL), DUET_ERROR_INVALID_ARGUMENT, "out|rows|cols");
    o = u.c;
    o.dtype = DUET_DTYPE_F64;
    FAILS(duet_transpose(NULL, &u.a, &o, NULL), DUET_ERROR_INVALID_ARGUMENT, "dtype");
    o.dtype = DUET_DTYPE_I32;
    FAILS(duet_transpose(NULL, &u.a, &o, NULL), DUET_ERROR_INVALID_ARGUMENT, "dtype");
    o = u.c;
    o.batch_count = 2;
    o.batch_stride = 15;
    FAILS(duet_transpose(NULL, &u.a, &o, NULL), DUET_ERROR_INVALID_ARGUMENT, "batch_count|batch");
    duet_matrix in2 = u.a;
    in2.batch_count = 2;
    in2.batch_stride = 15;
    o.batch_stride = 0;
    FAILS(duet_transpose(NULL, &in2, &o, NULL), DUET_ERROR_INVALID_ARGUMENT, "batch_stride");

    /* in and out overlapping in one buffer; apart they are fine. */
    duet_matrix i1 = u.a, o1 = u.c;
    o1.buffer = bi;
    o1.offset = 15;
    DT_OK(duet_transpose(NULL, &i1, &o1, NULL));
    watch_restore();
    o1.offset = 14;
    FAILS(duet_transpose(NULL, &i1, &o1, NULL), DUET_ERROR_INVALID_ARGUMENT, "overlap");
    /* The same offset is the in-place form (tests/test_transpose_inplace.c checks the
     * result); a padded ld there is not. */
    o1.offset = 0;
    DT_OK(duet_transpose(NULL, &i1, &o1, NULL));
    watch_restore();
    o1.ld = o1.cols + 1;
    FAILS(duet_transpose(NULL, &i1, &o1, NULL), DUET_ERROR_INVALID_ARGUMENT, "out.ld");

    /* Options. */
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.algorithm = DUET_ALGO_TILED;
    opt.tile = 33;
    FAILS(duet_transpose(NULL, &u.a, &u.c, &opt), DUET_ERROR_INVALID_ARGUMENT, "tile");
    opt.tile = -1;
    FAILS(duet_transpose(NULL, &u.a, &u.c, &opt), DUET_ERROR_INVALID_ARGUMENT, "tile");
    opt.algorithm = (duet_algorithm)-1;
    FAILS(duet_transpose(NULL, &u.a, &u.c, &opt), DUET_ERROR_INVALID_ARGUMENT, "algorithm");
    opt.algorithm = (duet_algorithm)5;
    FAILS(duet_transpose(NULL, &u.a, &u.c, &opt), DUET_ERROR_INVALID_ARGUMENT, "algorithm");

    /* Two contexts. */
    duet_context *c2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    duet_buffer *foreign = new_buffer(c2, 8 * 64);
    duet_stream *s2 = NULL;
    DT_OK(duet_stream_create(c2, &s2));
    o = u.c;
    o.buffer = foreign;
    FAILS(duet_transpose(NULL, &u.a, &o, NULL), DUET_ERROR_INVALID_ARGUMENT, "context");
    o = u.a;
    o.buffer = foreign;
    FAILS(duet_transpose(NULL, &o, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "context");
    FAILS(duet_transpose(s2, &u.a, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "stream");
    DT_OK(duet_context_destroy(c2));

    unwatch_all();
    DT_OK(duet_buffer_destroy(bi));
    DT_OK(duet_buffer_destroy(bo));
}

static void test_elementwise_bad(void)
{
    duet_buffer *ba = new_buffer(g_ctx, 8 * 64), *bb = new_buffer(g_ctx, 8 * 64),
                *bc = new_buffer(g_ctx, 8 * 64);
    op_args u;
    u.a = mat(ba, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 3, 5);
    u.b = mat(bb, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 3, 5);
    u.c = mat(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 3, 5);
    DT_OK(duet_add(NULL, 1, &u.a, 1, &u.b, &u.c, NULL));
    watch(ba);
    watch(bb);
    watch(bc);

    /* scale */
    FAILS(duet_scale(NULL, 2, NULL, NULL), DUET_ERROR_INVALID_ARGUMENT, "x");
    FAILS(duet_scale(forged_stream(), 2, &u.c, NULL), DUET_ERROR_INVALID_HANDLE, "stream");
    bad_operand(run_scale, &u, &u.c, "x", "duet_scale x");
    duet_matrix *cm[3] = {&u.c, &u.a, &u.b};
    overflow_shapes(run_scale, &u, cm, 1, 0, "duet_scale overflow");
    duet_matrix x = u.c;
    x.batch_count = 2;
    x.batch_stride = 0;
    FAILS(duet_scale(NULL, 2, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "batch_stride");
    const duet_dtype no_arith[3] = {DUET_DTYPE_F16, DUET_DTYPE_BF16, DUET_DTYPE_I8};
    for (int i = 0; i < 3; i++) {
        x = u.c;
        x.dtype = no_arith[i];
        FAILS(duet_scale(NULL, 2, &x, NULL), DUET_ERROR_UNSUPPORTED, duet_dtype_name(no_arith[i]));
    }
    x = u.c;
    x.dtype = DUET_DTYPE_I32;
    DT_OK(duet_scale(NULL, -3, &x, NULL));
    watch_restore();
    FAILS(duet_scale(NULL, 1.5, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "alpha");
    FAILS(duet_scale(NULL, 4294967296.0, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "alpha");
    FAILS(duet_scale(NULL, NAN, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "alpha");

    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.algorithm = DUET_ALGO_TILED;
    FAILS(duet_scale(NULL, 2, &u.c, &opt), DUET_ERROR_UNSUPPORTED,
          duet_algorithm_name(DUET_ALGO_TILED));
    FAILS(duet_add(NULL, 1, &u.a, 1, &u.b, &u.c, &opt), DUET_ERROR_UNSUPPORTED,
          duet_algorithm_name(DUET_ALGO_TILED));
    FAILS(duet_fill(NULL, 1, &u.c, &opt), DUET_ERROR_UNSUPPORTED,
          duet_algorithm_name(DUET_ALGO_TILED));
    opt.algorithm = DUET_ALGO_TILED_PADDED;
    FAILS(duet_scale(NULL, 2, &u.c, &opt), DUET_ERROR_UNSUPPORTED,
          duet_algorithm_name(DUET_ALGO_TILED_PADDED));
    FAILS(duet_add(NULL, 1, &u.a, 1, &u.b, &u.c, &opt), DUET_ERROR_UNSUPPORTED,
          duet_algorithm_name(DUET_ALGO_TILED_PADDED));
    FAILS(duet_fill(NULL, 1, &u.c, &opt), DUET_ERROR_UNSUPPORTED,
          duet_algorithm_name(DUET_ALGO_TILED_PADDED));
    opt.algorithm = (duet_algorithm)-1;
    FAILS(duet_scale(NULL, 2, &u.c, &opt), DUET_ERROR_INVALID_ARGUMENT, "algorithm");
    FAILS(duet_add(NULL, 1, &u.a, 1, &u.b, &u.c, &opt), DUET_ERROR_INVALID_ARGUMENT, "algorithm");
    FAILS(duet_fill(NULL, 1, &u.c, &opt), DUET_ERROR_INVALID_ARGUMENT, "algorithm");

    /* add */
    FAILS(duet_add(NULL, 1, NULL, 1, &u.b, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "a");
    FAILS(duet_add(NULL, 1, &u.a, 1, NULL, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "b");
    FAILS(duet_add(NULL, 1, &u.a, 1, &u.b, NULL, NULL), DUET_ERROR_INVALID_ARGUMENT, "c");
    FAILS(duet_add(forged_stream(), 1, &u.a, 1, &u.b, &u.c, NULL), DUET_ERROR_INVALID_HANDLE,
          "stream");
    bad_operand(run_add, &u, &u.a, "a", "duet_add a");
    bad_operand(run_add, &u, &u.b, "b", "duet_add b");
    bad_operand(run_add, &u, &u.c, "c", "duet_add c");
    overflow_shapes(run_add, &u, cm, 3, 0, "duet_add overflow");
    x = u.b;
    x.rows = 2;
    FAILS(duet_add(NULL, 1, &u.a, 1, &x, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "b|rows");
    x = u.a;
    x.cols = 4;
    FAILS(duet_add(NULL, 1, &x, 1, &u.b, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "a|cols");
    x = u.c;
    x.cols = x.ld = 6;
    FAILS(duet_add(NULL, 1, &u.a, 1, &u.b, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "c|cols");
    x = u.b;
    x.dtype = DUET_DTYPE_F64;
    FAILS(duet_add(NULL, 1, &u.a, 1, &x, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "dtype");
    x = u.c;
    x.dtype = DUET_DTYPE_I32;
    FAILS(duet_add(NULL, 1, &u.a, 1, &u.b, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "dtype");
    duet_matrix h[3] = {u.a, u.b, u.c};
    for (int k = 0; k < 3; k++) h[k].dtype = DUET_DTYPE_F16;
    FAILS(duet_add(NULL, 1, &h[0], 1, &h[1], &h[2], NULL), DUET_ERROR_UNSUPPORTED,
          duet_dtype_name(DUET_DTYPE_F16));
    for (int k = 0; k < 3; k++) h[k].dtype = DUET_DTYPE_I32;
    DT_OK(duet_add(NULL, 2, &h[0], -1, &h[1], &h[2], NULL));
    watch_restore();
    FAILS(duet_add(NULL, 0.5, &h[0], 1, &h[1], &h[2], NULL), DUET_ERROR_INVALID_ARGUMENT, "alpha");
    FAILS(duet_add(NULL, 1, &h[0], 2147483648.0, &h[1], &h[2], NULL), DUET_ERROR_INVALID_ARGUMENT,
          "beta");
    /* Batches: an output never broadcasts, counts agree. */
    memcpy(h, (duet_matrix[3]){u.a, u.b, u.c}, sizeof h);
    h[2].batch_count = 2;
    h[2].batch_stride = 0;
    FAILS(duet_add(NULL, 1, &h[0], 1, &h[1], &h[2], NULL), DUET_ERROR_INVALID_ARGUMENT,
          "batch_stride");
    h[2].batch_stride = 15;
    h[0].batch_count = 3;
    h[0].batch_stride = 15;
    FAILS(duet_add(NULL, 1, &h[0], 1, &h[1], &h[2], NULL), DUET_ERROR_INVALID_ARGUMENT,
          "batch_count|batch");

    /* c may be exactly a or b, never partly over either. */
    DT_OK(duet_add(NULL, 1, &u.a, 1, &u.b, &u.a, NULL));
    DT_OK(duet_add(NULL, 1, &u.a, 1, &u.b, &u.b, NULL));
    watch_restore();
    x = u.a;
    x.offset = 1;
    FAILS(duet_add(NULL, 1, &u.a, 1, &u.b, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "overlap");
    x = u.b;
    x.layout = DUET_LAYOUT_COL_MAJOR;
    x.ld = 3;
    FAILS(duet_add(NULL, 1, &u.a, 1, &u.b, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "overlap");
    /* Interleaved rows: a padded to ld 6, c five elements further on, sharing most of them. */
    duet_matrix a6 = u.a;
    a6.ld = 6;
    x = a6;
    x.offset = 5;
    FAILS(duet_add(NULL, 1, &a6, 1, &u.b, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "overlap");

    /* fill */
    FAILS(duet_fill(NULL, 1, NULL, NULL), DUET_ERROR_INVALID_ARGUMENT, "x");
    FAILS(duet_fill(forged_stream(), 1, &u.c, NULL), DUET_ERROR_INVALID_HANDLE, "stream");
    bad_operand(run_fill, &u, &u.c, "x", "duet_fill x");
    overflow_shapes(run_fill, &u, cm, 1, 0, "duet_fill overflow");
    x = u.c;
    x.batch_count = 2;
    x.batch_stride = 0;
    FAILS(duet_fill(NULL, 1, &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "batch_stride");
    x = u.c;
    x.dtype = DUET_DTYPE_I32;
    const double bad_i32[] = {1.5, 2147483648.0, -2147483649.0, NAN, INFINITY, 1e-300};
    for (int i = 0; i < 6; i++)
        FAILS(duet_fill(NULL, bad_i32[i], &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "value");
    x.dtype = DUET_DTYPE_I8;
    const double bad_i8[] = {128, -129, 0.5, 300, NAN};
    for (int i = 0; i < 5; i++)
        FAILS(duet_fill(NULL, bad_i8[i], &x, NULL), DUET_ERROR_INVALID_ARGUMENT, "value");

    /* Two contexts. */
    duet_context *c2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    duet_buffer *foreign = new_buffer(c2, 8 * 64);
    duet_stream *s2 = NULL;
    DT_OK(duet_stream_create(c2, &s2));
    for (int w = 0; w < 3; w++) {
        memcpy(h, (duet_matrix[3]){u.a, u.b, u.c}, sizeof h);
        h[w].buffer = foreign;
        FAILS(duet_add(NULL, 1, &h[0], 1, &h[1], &h[2], NULL), DUET_ERROR_INVALID_ARGUMENT,
              "context");
    }
    FAILS(duet_add(s2, 1, &u.a, 1, &u.b, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "stream");
    FAILS(duet_scale(s2, 1, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "stream");
    FAILS(duet_fill(s2, 1, &u.c, NULL), DUET_ERROR_INVALID_ARGUMENT, "stream");
    DT_OK(duet_context_destroy(c2));

    unwatch_all();
    DT_OK(duet_buffer_destroy(ba));
    DT_OK(duet_buffer_destroy(bb));
    DT_OK(duet_buffer_destroy(bc));
}

/* ---- runtime compilation ----------------------------------------------------------------- */

static int contains_nocase(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == tolower((unsigned char)w[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

static void test_module(void)
{
    static const char src[] = "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }";
    duet_module *m = NULL;
    duet_function *f = NULL;
    const char *log = NULL;
    FAILS(duet_module_create(NULL, src, NULL, &m), DUET_ERROR_INVALID_HANDLE, "ctx");
    FAILS(duet_module_create(g_ctx, NULL, NULL, &m), DUET_ERROR_INVALID_ARGUMENT, "source");
    FAILS(duet_module_create(g_ctx, src, NULL, NULL), DUET_ERROR_INVALID_ARGUMENT, "module");
    FAILS(duet_module_destroy(NULL), DUET_ERROR_INVALID_HANDLE, "module");
    FAILS(duet_module_destroy((duet_module *)(uintptr_t)0x1234), DUET_ERROR_INVALID_HANDLE,
          "module");
    FAILS(duet_module_log(NULL, &log), DUET_ERROR_INVALID_HANDLE, "module");
    FAILS(duet_module_get_function(NULL, "k", &f), DUET_ERROR_INVALID_HANDLE, "module");
    duet_launch_config cfg = {{1, 1, 1}, {1, 1, 1}, 0};
    FAILS(duet_launch(NULL, NULL, &cfg, NULL, 0), DUET_ERROR_INVALID_HANDLE, "function");
    FAILS(duet_launch(NULL, (duet_function *)(uintptr_t)0x1234, &cfg, NULL, 0),
          DUET_ERROR_INVALID_HANDLE, "function");
    DT_CHECK(duet_last_compile_log() != NULL, "compile log NULL");

    if (strcmp(duet_backend_name(), "cpu") == 0) {
        m = (duet_module *)(uintptr_t)1;
        duet_status st = duet_module_create(g_ctx, src, NULL, &m);
        DT_CHECK(st == DUET_ERROR_UNSUPPORTED, "cpu module_create -> %s", duet_status_string(st));
        const char *msg = duet_last_error();
        DT_CHECK(contains_nocase(msg, "cuda") && contains_nocase(msg, "hip"),
                 "message \"%s\" does not name the backends that compile", msg);
        DT_CHECK(!strncmp(msg, "duet_module_create: ", 20), "message \"%s\"", msg);
        DT_CHECK(m == NULL, "a failed create left *module %p", (void *)m);
    }
}


/* ---- the contract's corner cases (issue: one contract on every backend) ----------------- */

/* The last error is exactly want (when exact) or starts with it. */
static void check_msg(const char *want, int exact, const char *what)
{
    const char *msg = duet_last_error();
    int ok = exact ? strcmp(msg, want) == 0 : strncmp(msg, want, strlen(want)) == 0;
    dt_checks++;
    if (!ok) {
        dt_failures++;
        fprintf(stderr, "%s: message \"%s\", wanted %s\"%s\"\n", what, msg,
                exact ? "" : "one starting with ", want);
    }
}

/* Host memory belongs to the context that allocated or registered it, on every backend, and
 * a range is never registered twice, whatever the context (CUDA pins for the process). */
static void test_host_contexts(void)
{
    duet_context *c2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    void *p = NULL;
    DT_OK(duet_host_alloc(g_ctx, 256, &p));
    FAILS(duet_host_free(c2, p), DUET_ERROR_INVALID_ARGUMENT, "ptr");
    check_msg("duet_host_free: ptr was not allocated with duet_host_alloc on this context", 0,
              "host_free on another context");
    FAILS(duet_host_register(c2, p, 256), DUET_ERROR_INVALID_ARGUMENT, "ptr");
    check_msg("duet_host_register: ptr and bytes (256) overlap host memory already allocated "
              "with duet_host_alloc on another context", 1, "register of another's allocation");
    DT_OK(duet_host_free(g_ctx, p)); /* still g_ctx's, and freed once */
    FAILS(duet_host_free(g_ctx, p), DUET_ERROR_INVALID_ARGUMENT, "ptr");

    unsigned char *r = (unsigned char *)malloc(4096);
    if (r) {
        DT_OK(duet_host_register(g_ctx, r, 4096));
        FAILS(duet_host_register(c2, r, 4096), DUET_ERROR_INVALID_ARGUMENT, "ptr");
        check_msg("duet_host_register: ptr and bytes (4096) overlap host memory already "
                  "registered on another context", 1, "register twice across contexts");
        FAILS(duet_host_register(g_ctx, r + 100, 16), DUET_ERROR_INVALID_ARGUMENT, "ptr");
        check_msg("duet_host_register: ptr and bytes (16) overlap host memory already "
                  "registered on this context", 1, "register twice");
        FAILS(duet_host_unregister(c2, r), DUET_ERROR_INVALID_ARGUMENT, "ptr");
        check_msg("duet_host_unregister: ptr is not the start of a range registered on this "
                  "context", 0, "unregister on another context");
        DT_OK(duet_host_unregister(g_ctx, r));
        /* Destroying a context releases its ranges: the memory can be registered again. */
        DT_OK(duet_host_register(c2, r, 4096));
    }
    void *q = NULL;
    DT_OK(duet_host_alloc(c2, 64, &q));
    DT_OK(duet_context_destroy(c2)); /* frees q, unregisters r */
    FAILS(duet_host_free(g_ctx, q), DUET_ERROR_INVALID_ARGUMENT, "ptr");
    if (r) {
        DT_OK(duet_host_register(g_ctx, r, 4096));
        DT_OK(duet_host_unregister(g_ctx, r));
        free(r);
    }
}

/* Messages: rewritten without reading the buffer being written, naming the odd operand,
 * with exact scalars. */
static void test_contract_messages(void)
{
    duet_launch_config cfg;
    FAILS(duet_launch_config_1d(INT64_MIN, 32, &cfg), DUET_ERROR_INVALID_ARGUMENT, "n");
    check_msg("duet_launch_config_1d: n (-9223372036854775808) is negative", 1,
              "launch_config_1d(INT64_MIN)");

    duet_context *c2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    duet_buffer *a = new_buffer(g_ctx, 64), *b = new_buffer(g_ctx, 64), *c = new_buffer(c2, 64);
    duet_buffer *a2 = new_buffer(c2, 64);
    duet_matrix ma = mat(a, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 2);
    duet_matrix mb = mat(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 2);
    duet_matrix mc = mat(c, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 2);
    duet_matrix ma2 = mat(a2, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 2);
    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &ma, &mb, 0, &mc, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "C");
    check_msg("duet_gemm: C.buffer belongs to another context than A and B", 1, "gemm C odd");
    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &ma2, &mb, 0, &mc, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "B");
    check_msg("duet_gemm: B.buffer belongs to another context than A and C", 1, "gemm B odd");
    FAILS(duet_add(NULL, 1, &ma, 1, &mb, &mc, NULL), DUET_ERROR_INVALID_ARGUMENT, "c");
    check_msg("duet_add: c.buffer belongs to another context than a and b", 1, "add c odd");
    FAILS(duet_transpose(NULL, &ma, &mc, NULL), DUET_ERROR_INVALID_ARGUMENT, "in|out");
    check_msg("duet_transpose: in.buffer and out.buffer belong to different contexts", 1,
              "transpose contexts");

    duet_buffer *ib = new_buffer(g_ctx, 64);
    duet_matrix mi = mat(ib, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, 2, 2);
    FAILS(duet_scale(NULL, 1 + 1e-12, &mi, NULL), DUET_ERROR_INVALID_ARGUMENT, "alpha");
    check_msg("duet_scale: alpha (1.000000000001) is not an integer in the range of i32", 1,
              "scale alpha 1 + 1e-12");
    FAILS(duet_fill(NULL, 2147483648.0, &mi, NULL), DUET_ERROR_INVALID_ARGUMENT, "value");
    check_msg("duet_fill: value (2147483648) is not an integer in the range of i32", 1,
              "fill 2^31");

    /* An empty matrix's offset is still checked (it must lie within the buffer, end
     * included), before any pointer is formed from it. */
    duet_matrix e = mat(a, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 0, 3);
    e.offset = SIZE_MAX;
    FAILS(duet_fill(NULL, 0, &e, NULL), DUET_ERROR_INVALID_ARGUMENT, "offset");
    check_msg("duet_fill: x.offset (18446744073709551615) is past the end of its buffer", 0,
              "empty matrix offset SIZE_MAX");
    e.offset = 17; /* 68 bytes of a 64-byte buffer */
    FAILS(duet_fill(NULL, 0, &e, NULL), DUET_ERROR_INVALID_ARGUMENT, "offset");
    e.offset = 16; /* the end itself: valid for an empty matrix */
    DT_OK(duet_fill(NULL, 0, &e, NULL));
    duet_matrix et = mat(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 3, 0);
    e.offset = SIZE_MAX / 2;
    FAILS(duet_transpose(NULL, &e, &et, NULL), DUET_ERROR_INVALID_ARGUMENT, "offset");

    /* Documented rules (docs/api.md, options): tile applies to the tiled algorithms only. */
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.tile = 8;
    FAILS(duet_fill(NULL, 0, &ma, &o), DUET_ERROR_INVALID_ARGUMENT, "tile");
    FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &ma, &mb, 0, &ma2, &o),
          DUET_ERROR_INVALID_ARGUMENT, "C");
    duet_matrix mo = mat(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 2);
    FAILS(duet_transpose(NULL, &ma, &mo, &o), DUET_ERROR_INVALID_ARGUMENT, "tile");
    o.algorithm = DUET_ALGO_GRID_STRIDE;
    FAILS(duet_transpose(NULL, &ma, &mo, &o), DUET_ERROR_INVALID_ARGUMENT, "tile");
    o.tile = 0;
    o.launch.grid.x = 4; /* y zero: refused, as documented (only an all-zero grid defaults) */
    FAILS(duet_transpose(NULL, &ma, &mo, &o), DUET_ERROR_INVALID_ARGUMENT, "grid");
    o.algorithm = DUET_ALGO_TILED;
    o.tile = 8;
    DT_OK(duet_transpose(NULL, &ma, &mo, &o));
    /* A negative batch_stride is refused even where it would be unused (batch_count 1). */
    duet_matrix nb = ma;
    nb.batch_stride = -1;
    FAILS(duet_scale(NULL, 2, &nb, NULL), DUET_ERROR_INVALID_ARGUMENT, "batch_stride");
    /* An output's batch_stride with batch_count 1 is ignored, like an input's. */
    nb.batch_stride = 1;
    DT_OK(duet_scale(NULL, 2, &nb, NULL));
    /* transpose: an input batch_stride of 0 reads one matrix for every batch entry. */
    duet_buffer *tb = new_buffer(g_ctx, 2 * 4 * sizeof(float));
    float in4[4] = {1, 2, 3, 4}, got[8];
    DT_OK(duet_buffer_write(NULL, a, 0, in4, sizeof in4));
    duet_matrix bi = ma, bo = mat(tb, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 2);
    bi.batch_count = 2;
    bi.batch_stride = 0;
    bo.batch_count = 2;
    bo.batch_stride = 4;
    DT_OK(duet_transpose(NULL, &bi, &bo, NULL));
    DT_OK(duet_buffer_read(NULL, tb, 0, got, sizeof got));
    DT_CHECK(got[1] == 3 && got[5] == 3 && got[2] == 2 && got[6] == 2,
             "transpose broadcast: %g %g %g %g", (double)got[1], (double)got[5], (double)got[2],
             (double)got[6]);

    DT_OK(duet_buffer_destroy(tb));
    DT_OK(duet_buffer_destroy(ib));
    DT_OK(duet_buffer_destroy(a));
    DT_OK(duet_buffer_destroy(b));
    DT_OK(duet_context_destroy(c2));
}

/* Profiling: its messages name duet_profile; iters is bounded. */
static duet_status destroy_stream_fn(void *user)
{
    return duet_stream_destroy(*(duet_stream **)user);
}

static void test_profile_contract(void)
{
    duet_profile_result r;
    duet_stream *s = NULL;
    DT_OK(duet_stream_create(g_ctx, &s));
    FAILS(duet_profile(g_ctx, s, destroy_stream_fn, &s, 0, 3, &r), DUET_ERROR_INVALID_HANDLE,
          "stream");
    check_msg("duet_profile: the profiled function destroyed the stream it runs on", 1,
              "profile of a function destroying its stream");
    DT_OK(duet_stream_create(g_ctx, &s));
    FAILS(duet_profile(g_ctx, s, destroy_stream_fn, &s, 1, 3, &r), DUET_ERROR_INVALID_HANDLE,
          "stream");
    check_msg("duet_profile: the profiled function destroyed the stream it runs on", 1,
              "profile of a function destroying its stream in warm-up");
    FAILS(duet_profile(g_ctx, NULL, destroy_stream_fn, &s, 0, INT32_MAX, &r),
          DUET_ERROR_INVALID_ARGUMENT, "iters");
    FAILS(duet_profile(g_ctx, NULL, destroy_stream_fn, &s, 0, DUET_PROFILE_MAX_ITERS + 1, &r),
          DUET_ERROR_INVALID_ARGUMENT, "iters");
    check_msg("duet_profile: iters (1048577) is over DUET_PROFILE_MAX_ITERS (1048576)", 1,
              "profile iters cap");
}

/* Destroying a context is linear in its objects: four times the buffers may take about four
 * times as long, not sixteen (80,000 buffers once took seconds under the handle lock). */
static double destroy_seconds(int nbuf)
{
    duet_context *c = NULL;
    DT_OK(duet_context_create(0, &c));
    for (int i = 0; i < nbuf; i++) {
        duet_buffer *b = NULL;
        if (duet_buffer_create(c, 0, &b) != DUET_SUCCESS) break;
    }
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    DT_OK(duet_context_destroy(c));
    timespec_get(&t1, TIME_UTC);
    return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

static void test_destroy_scaling(void)
{
    double small = 1e9, large = 1e9;
    for (int rep = 0; rep < 3; rep++) { /* the best of three: the host may be busy */
        double s = destroy_seconds(20000), l = destroy_seconds(80000);
        if (s < small) small = s;
        if (l < large) large = l;
    }
    DT_CHECK(large < 10 * small + 0.05,
             "destroying 80,000 buffers took %.3f s, 20,000 took %.3f s: not linear", large,
             small);
}

/* Cross-context copies and waits, groups and duet_group_gemm (api_group.c): bad inputs. */
static void test_group_bad(void)
{
    enum { N = 64 };
    duet_context *c2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    duet_buffer *b = NULL, *b2 = NULL;
    duet_stream *s = NULL;
    duet_event *e = NULL;
    DT_OK(duet_buffer_create(g_ctx, N, &b));
    DT_OK(duet_buffer_create(c2, N, &b2));
    DT_OK(duet_stream_create(g_ctx, &s));
    DT_OK(duet_event_create(c2, &e));
    FAILS(duet_buffer_copy_peer(NULL, b2, 1, b, 0, N), DUET_ERROR_INVALID_ARGUMENT, "dst_offset");
    FAILS(duet_buffer_copy_peer(NULL, b2, 0, b, 1, N), DUET_ERROR_INVALID_ARGUMENT, "src_offset");
    FAILS(duet_buffer_copy_peer(NULL, b2, SIZE_MAX, b, 0, 2), DUET_ERROR_INVALID_ARGUMENT,
          "dst_offset");
    FAILS(duet_buffer_copy_peer(NULL, b2, 8, b, 8, SIZE_MAX - 4), DUET_ERROR_INVALID_ARGUMENT,
          "dst_offset");
    FAILS(duet_buffer_copy_peer(NULL, NULL, 0, b, 0, 4), DUET_ERROR_INVALID_HANDLE, "dst");
    FAILS(duet_buffer_copy_peer(NULL, b2, 0, NULL, 0, 4), DUET_ERROR_INVALID_HANDLE, "src");
    FAILS(duet_buffer_copy_peer(s, b2, 0, b, 0, 4), DUET_ERROR_INVALID_ARGUMENT, "stream");
    FAILS(duet_buffer_copy_peer(forged_stream(), b2, 0, b, 0, 4), DUET_ERROR_INVALID_HANDLE,
          "stream");
    FAILS(duet_buffer_copy_peer(NULL, b, 0, b, 8, 16), DUET_ERROR_INVALID_ARGUMENT, "overlap");
    FAILS(duet_stream_wait_event(NULL, e), DUET_ERROR_INVALID_HANDLE, "stream");
    FAILS(duet_stream_wait_event(s, NULL), DUET_ERROR_INVALID_HANDLE, "event");

    duet_group *g = NULL;
    duet_context *two[2] = {g_ctx, g_ctx};
    FAILS(duet_group_create(NULL, 1, &g), DUET_ERROR_INVALID_ARGUMENT, "contexts");
    FAILS(duet_group_create(two, 0, &g), DUET_ERROR_INVALID_ARGUMENT, "count");
    FAILS(duet_group_create(two, DUET_GROUP_MAX + 1, &g), DUET_ERROR_INVALID_ARGUMENT, "count");
    FAILS(duet_group_create(two, 1, NULL), DUET_ERROR_INVALID_ARGUMENT, "group");
    FAILS(duet_group_create(two, 2, &g), DUET_ERROR_INVALID_ARGUMENT, "contexts");
    two[1] = NULL;
    FAILS(duet_group_create(two, 2, &g), DUET_ERROR_INVALID_HANDLE, "contexts");
    FAILS(duet_group_destroy(NULL), DUET_ERROR_INVALID_HANDLE, "group");
    FAILS(duet_group_set_tile(NULL, 8), DUET_ERROR_INVALID_HANDLE, "group");
    two[1] = c2;
    DT_OK(duet_group_create(two, 2, &g));
    FAILS(duet_group_set_tile(g, -1), DUET_ERROR_INVALID_ARGUMENT, "tile");
    float ha[4] = {1, 2, 3, 4}, hb[4] = {1, 2, 3, 4}, hc[4] = {0, 0, 0, 0};
    double hd[4] = {0, 0, 0, 0};
    duet_host_matrix a = {ha, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 2, 2, 1, 0};
    duet_host_matrix bm = a, c = a, x = a;
    bm.data = hb;
    c.data = hc;
    FAILS(duet_group_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &a, &bm, 0, &c, NULL),
          DUET_ERROR_INVALID_HANDLE, "group");
    FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, NULL, &bm, 0, &c, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "A");
    FAILS(duet_group_gemm(g, DUET_OP_N, (duet_op)5, 1, &a, &bm, 0, &c, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "op_b");
    x.ld = 1;
    FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &x, &bm, 0, &c, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "lda");
    x = c;
    x.data = NULL;
    FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &a, &bm, 0, &x, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "C");
    x = bm;
    x.dtype = DUET_DTYPE_F64;
    x.data = hd;
    FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &a, &x, 0, &c, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "f64");
    x = bm;
    x.rows = 3;
    x.ld = 2;
    FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &a, &x, 0, &c, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "dimensions");
    x = a;
    x.data = hc;
    FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &x, &bm, 0, &c, NULL),
          DUET_ERROR_INVALID_ARGUMENT, "overlaps");
    /* Device operands: b2 is of member c2; bf of a context outside the group. */
    duet_context *c3 = NULL;
    duet_buffer *bf = NULL;
    DT_OK(duet_context_create(0, &c3));
    DT_OK(duet_buffer_create(c3, N, &bf));
    duet_matrix dm = duet_matrix_make(b2, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 2), dx = dm;
    dx.buffer = bf;
    FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, duet_group_device(&dx),
                             duet_group_host(&bm), 0, duet_group_host(&c), NULL),
          DUET_ERROR_INVALID_ARGUMENT, "A.buffer");
    duet_group_operand both = duet_group_device(&dm);
    both.host = &a;
    FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, both, duet_group_host(&bm), 0,
                             duet_group_host(&c), NULL),
          DUET_ERROR_INVALID_ARGUMENT, "A");
    dx = dm;
    dx.offset = 13; /* 16 floats in b2: 13 + 4 is past its end */
    FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, duet_group_host(&a), duet_group_device(&dx),
                             0, duet_group_host(&c), NULL),
          DUET_ERROR_INVALID_ARGUMENT, "B");
    dx = dm;
    dx.offset = 2; /* C at 2..5 overlaps A at 0..3 in b2 */
    FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, duet_group_device(&dm),
                             duet_group_host(&bm), 0, duet_group_device(&dx), NULL),
          DUET_ERROR_INVALID_ARGUMENT, "overlaps");
    DT_OK(duet_buffer_destroy(bf));
    DT_OK(duet_context_destroy(c3));
    DT_OK(duet_context_destroy(c2));
    FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &a, &bm, 0, &c, NULL),
          DUET_ERROR_INVALID_HANDLE, "destroyed");
    DT_CHECK(hc[0] == 0 && hc[1] == 0 && hc[2] == 0 && hc[3] == 0,
             "C written by a failing duet_group_gemm");
    DT_OK(duet_group_destroy(g));
    DT_OK(duet_stream_destroy(s));
    DT_OK(duet_buffer_destroy(b));
}

/* Every case; main (or test_status_table's main) reports. */
static int run_all(void)
{
    DT_CHECK(duet_last_error() != NULL && duet_last_error()[0] == '\0',
             "last error before any call");
    g_ctx = dt_open_or_skip();
    DT_OK(duet_context_get_props(g_ctx, &g_props));
    test_names();
    test_last_error();
    test_devices_contexts();
    test_buffers();
    test_host_memory();
    test_streams_events();
    test_profile();
    test_matrix_make();
    test_gemm_bad();
    test_transpose_bad();
    test_elementwise_bad();
    test_launch_options();
    test_module();
    test_host_contexts();
    test_contract_messages();
    test_profile_contract();
    test_group_bad();
    if (!g_status_table) test_destroy_scaling(); /* timing only: no status to tabulate */
    DT_OK(duet_context_destroy(g_ctx));
    return dt_finish("test_api");
}

#ifndef DT_STATUS_TABLE
int main(void) { return run_all(); }
#endif /* !DT_STATUS_TABLE */
