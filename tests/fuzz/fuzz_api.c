/* fuzz_api.c - libFuzzer target: input bytes decoded into a sequence of duet calls, with the contract checked after each. */
/*
 * Each input runs a small program against the backend that was built (cpu in CI): contexts,
 * buffers, streams, events and host memory in small pools whose slots keep their handles after
 * destruction (so destroyed handles are used too), and ops over arbitrary descriptors, offsets,
 * enums and options. After every call it checks:
 *   - the status is one that docs/api.md lists for the function, and the message opens with the
 *     function's name on failure and is empty on success;
 *   - a failing call changed no buffer (every live buffer is compared with a shadow copy);
 *   - a successful call wrote what a naive host reference says (copies, memset, fill, scale,
 *     add, transpose exactly; gemm of f32, f64 and i32 exactly where every input is a small
 *     integer, where it must be exact) and nothing outside its output.
 * A violated invariant aborts, which libFuzzer and the replay program report as a crash.
 * The same file builds into fuzz_replay (replay_main.c), which the normal test suite runs over
 * tests/fuzz/corpus and tests/fuzz/regressions.
 */
#include "duet/duet.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NCTX 2
#define NBUF 6
#define NSTREAM 3
#define NEVENT 3
#define NHOST 3
#define MAX_BYTES 512

/* ---- input decoding ---------------------------------------------------------------------- */

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static unsigned u8(input *in)
{
    if (in->n == 0) return 0;
    in->n--;
    return *in->p++;
}

static unsigned u16(input *in) { return u8(in) | u8(in) << 8; }

/* A size or count: mostly small, sometimes an edge value. */
static int64_t pick_i64(input *in)
{
    static const int64_t edge[] = {0,  1,  2,  3,  4,  5,  7,  8,  16, -1, INT64_MAX,
                                   INT64_MIN, INT32_MAX, (int64_t)1 << 32, (int64_t)1 << 62, 64};
    unsigned b = u8(in);
    if (b < 192) return (int64_t)(b % 9);
    return edge[b % (sizeof edge / sizeof edge[0])];
}

static size_t pick_size(input *in)
{
    static const size_t edge[] = {0, 1, 4, 8, 64, 256, 512, SIZE_MAX, SIZE_MAX / 2, (size_t)1 << 62,
                                  SIZE_MAX - 3, 100, 511, 3, 2, 16};
    unsigned b = u8(in);
    if (b < 160) return (size_t)(b % 65) * (b & 1 ? 1 : 4);
    return edge[b % (sizeof edge / sizeof edge[0])];
}

/* Scalars: small exact values (so results can be checked exactly) and a few hostile ones. */
static double pick_scalar(input *in)
{
    static const double v[] = {0, 1, -1, 2, 0.5, 3, -2, 1, 1e-12 + 1, NAN, INFINITY,
                               2147483648.0, -129, 127, 1e300, 4};
    return v[u8(in) % (sizeof v / sizeof v[0])];
}

/* An enum value: usually valid, sometimes just outside. */
static int pick_enum(input *in, int lo, int hi)
{
    unsigned b = u8(in);
    if (b < 224) return lo + (int)(b % (unsigned)(hi - lo + 1));
    return b & 1 ? hi + 1 + (int)(b % 3) : lo - 1 - (int)(b % 3);
}

/* ---- state ------------------------------------------------------------------------------- */

typedef struct buf_slot {
    duet_buffer *h;   /* kept after destroy: a stale handle */
    int live, ctx;
    size_t bytes;
    unsigned char *shadow;
} buf_slot;

static duet_context *g_ctx[NCTX];
static int g_ctx_live[NCTX];
static buf_slot g_buf[NBUF];
static duet_stream *g_stream[NSTREAM];
static int g_stream_ctx[NSTREAM];
static duet_event *g_event[NEVENT];
static void *g_host[NHOST];
static int g_host_ctx[NHOST], g_host_kind[NHOST]; /* kind 1: allocated, 2: registered */
static unsigned char g_host_mem[NHOST][64];

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_api: invariant violated: %s: %s (last error: \"%s\")\n", what, detail,
            duet_last_error());
    abort();
}

/* ---- status and message checks ----------------------------------------------------------- */

enum {
    S_OK = 1 << DUET_SUCCESS,
    S_ARG = 1 << DUET_ERROR_INVALID_ARGUMENT,
    S_HANDLE = 1 << DUET_ERROR_INVALID_HANDLE,
    S_OOM = 1 << DUET_ERROR_OUT_OF_MEMORY,
    S_UNSUP = 1 << DUET_ERROR_UNSUPPORTED,
    S_NOTREADY = 1 << DUET_ERROR_NOT_READY,
};

static void check_status(duet_status st, unsigned allowed, const char *func)
{
    char detail[256];
    if ((int)st < 0 || (int)st > 30 || !(allowed & (1u << st))) {
        snprintf(detail, sizeof detail, "%s returned %s (%d), which its documentation does not list",
                 func, duet_status_string(st), (int)st);
        die("status", detail);
    }
    const char *msg = duet_last_error();
    size_t n = strlen(func);
    if (st == DUET_SUCCESS && msg[0] != '\0') {
        snprintf(detail, sizeof detail, "%s succeeded but left a message", func);
        die("message", detail);
    }
    if (st != DUET_SUCCESS && (strncmp(msg, func, n) != 0 || msg[n] != ':')) {
        snprintf(detail, sizeof detail, "%s failed with a message that does not open with its name",
                 func);
        die("message", detail);
    }
}

/* Every live buffer equals its shadow. */
static void check_unchanged(const char *after)
{
    unsigned char now[MAX_BYTES];
    for (int i = 0; i < NBUF; i++) {
        buf_slot *b = &g_buf[i];
        if (!b->live || b->bytes == 0) continue;
        if (duet_buffer_read(NULL, b->h, 0, now, b->bytes) != DUET_SUCCESS)
            die("read back", after);
        if (memcmp(now, b->shadow, b->bytes) != 0) {
            char detail[256];
            snprintf(detail, sizeof detail, "buffer %d changed after %s", i, after);
            die("no writes on failure", detail);
        }
    }
}

/* ---- pools ------------------------------------------------------------------------------- */

static duet_context *ctx_at(input *in)
{
    unsigned b = u8(in);
    if (b >= 250) return b & 1 ? NULL : (duet_context *)(uintptr_t)0x1234;
    return g_ctx[b % NCTX]; /* may be destroyed */
}

static buf_slot *slot_at(input *in) { return &g_buf[u8(in) % NBUF]; }

static duet_buffer *buf_handle(input *in, buf_slot **slot)
{
    unsigned b = u8(in);
    *slot = NULL;
    if (b >= 250) return b & 1 ? NULL : (duet_buffer *)(uintptr_t)0x5674;
    *slot = &g_buf[b % NBUF];
    return (*slot)->h;
}

static duet_stream *stream_at(input *in)
{
    unsigned b = u8(in);
    if (b < 128) return NULL; /* the default stream */
    if (b >= 250) return (duet_stream *)(uintptr_t)0x9994;
    return g_stream[b % NSTREAM];
}

static buf_slot *slot_of(const duet_buffer *h)
{
    for (int i = 0; i < NBUF; i++)
        if (g_buf[i].live && g_buf[i].h == h) return &g_buf[i];
    return NULL;
}

static void buffer_gone(buf_slot *b)
{
    b->live = 0;
    free(b->shadow);
    b->shadow = NULL;
}

static void context_gone(int c)
{
    g_ctx_live[c] = 0;
    for (int i = 0; i < NBUF; i++)
        if (g_buf[i].live && g_buf[i].ctx == c) buffer_gone(&g_buf[i]);
    for (int i = 0; i < NHOST; i++)
        if (g_host[i] && g_host_ctx[i] == c) {
            g_host[i] = NULL; /* freed or unregistered by the destroy */
            g_host_kind[i] = 0;
        }
}

/* The harness's own arithmetic on fuzzed values wraps instead of overflowing: duet must
 * refuse the result, not the harness crash on it. */
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* ---- descriptors and the reference ------------------------------------------------------- */

static duet_matrix pick_matrix(input *in, buf_slot **slot)
{
    duet_matrix m;
    memset(&m, 0, sizeof m);
    m.buffer = buf_handle(in, slot);
    unsigned shape = u8(in);
    m.dtype = (duet_dtype)pick_enum(in, DUET_DTYPE_F32, DUET_DTYPE_F8E5M2);
    m.layout = (duet_layout)pick_enum(in, DUET_LAYOUT_ROW_MAJOR, DUET_LAYOUT_COL_MAJOR);
    if (shape < 200) {
        /* A plausible matrix: small, packed or padded, sometimes batched. */
        m.rows = shape % 5;
        m.cols = (shape / 5) % 5;
        int64_t len = m.layout == DUET_LAYOUT_COL_MAJOR ? m.rows : m.cols;
        m.ld = len + (int64_t)(u8(in) % 3);
        m.offset = u8(in) % 8;
        unsigned b = u8(in);
        m.batch_count = b % 4;
        int64_t lines = m.layout == DUET_LAYOUT_COL_MAJOR ? m.cols : m.rows;
        m.batch_stride = (b / 4) % 3 == 0 ? 0 : lines * m.ld + (int64_t)((b / 12) % 3);
    } else {
        m.rows = pick_i64(in);
        m.cols = pick_i64(in);
        m.ld = pick_i64(in);
        m.offset = pick_size(in);
        m.batch_count = pick_i64(in);
        m.batch_stride = pick_i64(in);
    }
    return m;
}

static duet_op_options pick_options(input *in, int *use)
{
    duet_op_options o;
    memset(&o, 0, sizeof o);
    unsigned b = u8(in);
    *use = b >= 64;
    if (b < 128) return o;
    o.algorithm = (duet_algorithm)pick_enum(in, DUET_ALGO_AUTO, DUET_ALGO_GRID_STRIDE);
    unsigned t = u8(in);
    o.tile = t < 200 ? (int)(t % 3 == 0 ? 0 : t % 40) : (int)(int8_t)t;
    if (u8(in) & 1) o.math = (duet_math_mode)pick_enum(in, DUET_MATH_DEFAULT, DUET_MATH_FAST_ACCUM);
    if (u8(in) & 1) {
        o.launch.block.x = u8(in) % 40;
        o.launch.block.y = u8(in) % 40;
        o.launch.block.z = u8(in) % 3;
        o.launch.grid.x = u8(in) % 5;
        o.launch.grid.y = u8(in) % 5;
        o.launch.grid.z = u8(in) % 3;
        if (u8(in) == 255) o.launch.grid.y = UINT32_MAX;
    }
    return o;
}

/* Element (b, i, j) of m as an index in elements (the caller knows the matrix is valid). */
static size_t at(const duet_matrix *m, int64_t b, int64_t i, int64_t j)
{
    int64_t bc = m->batch_count == 0 ? 1 : m->batch_count;
    int64_t bb = bc == 1 ? 0 : b;
    int64_t e = bb * m->batch_stride +
                (m->layout == DUET_LAYOUT_ROW_MAJOR ? i * m->ld + j : j * m->ld + i);
    return m->offset + (size_t)e;
}

static double get(const unsigned char *s, duet_dtype d, size_t idx)
{
    switch (d) {
    case DUET_DTYPE_F32: {
        float v;
        memcpy(&v, s + idx * 4, 4);
        return v;
    }
    case DUET_DTYPE_F64: {
        double v;
        memcpy(&v, s + idx * 8, 8);
        return v;
    }
    case DUET_DTYPE_I32: {
        int32_t v;
        memcpy(&v, s + idx * 4, 4);
        return v;
    }
    default: return NAN;
    }
}

static void put(unsigned char *s, duet_dtype d, size_t idx, double v)
{
    if (d == DUET_DTYPE_F32) {
        float f = (float)v;
        memcpy(s + idx * 4, &f, 4);
    } else if (d == DUET_DTYPE_F64) {
        memcpy(s + idx * 8, &v, 8);
    } else if (d == DUET_DTYPE_I32) {
        int32_t i = (int32_t)v;
        memcpy(s + idx * 4, &i, 4);
    }
}

/* Small integers: every sum and product below stays exact in every dtype. */
static int nice(double v) { return v == floor(v) && fabs(v) <= 64; }
static int nice_scalar(double v) { return v == 0 || v == 1 || v == -1 || v == 2 || v == 0.5 || v == 3 || v == -2 || v == 4; }

/* After a successful op: expected holds the shadow as it must be now, with written[] marking
 * the output bytes; known[] marks the bytes whose value the reference could compute exactly.
 * Bytes outside the output must equal the old shadow; known output bytes the reference; the
 * shadow then takes the buffer's actual contents. */
typedef struct expect {
    buf_slot *slot;
    unsigned char exp[MAX_BYTES];
    unsigned char written[MAX_BYTES], known[MAX_BYTES];
} expect;

static void expect_begin(expect *e, buf_slot *s)
{
    e->slot = s;
    memcpy(e->exp, s->shadow, s->bytes);
    memset(e->written, 0, sizeof e->written);
    memset(e->known, 0, sizeof e->known);
}

static void expect_set(expect *e, size_t idx, size_t elem, const void *bytes, int known)
{
    memcpy(e->exp + idx * elem, bytes, elem);
    memset(e->written + idx * elem, 1, elem);
    memset(e->known + idx * elem, known ? 1 : 0, elem);
}

static void expect_check(expect *e, const char *op)
{
    buf_slot *s = e->slot;
    unsigned char now[MAX_BYTES];
    if (duet_buffer_read(NULL, s->h, 0, now, s->bytes) != DUET_SUCCESS) die("read back", op);
    for (size_t i = 0; i < s->bytes; i++) {
        if (!e->written[i] && now[i] != s->shadow[i]) die("wrote outside its output", op);
        if (e->written[i] && e->known[i] && now[i] != e->exp[i]) {
            fprintf(stderr, "byte %zu: got 0x%02x, reference 0x%02x (was 0x%02x)\n", i, now[i],
                    e->exp[i], s->shadow[i]);
            die("differs from the reference", op);
        }
    }
    if (getenv("DUET_FUZZ_TRACE")) {
        size_t w = 0, k = 0;
        for (size_t i = 0; i < s->bytes; i++) {
            w += e->written[i];
            k += e->written[i] && e->known[i];
        }
        fprintf(stderr, "  %s: %zu bytes written, %zu checked against the reference\n", op, w, k);
    }
    memcpy(s->shadow, now, s->bytes);
}

/* Whole-footprint sanity for the reference: every touched index is inside the buffer (the
 * call succeeded, so duet says it is; a reference past the end is a duet bug). */
static void check_index(const buf_slot *s, size_t idx, size_t elem, const char *op)
{
    if (idx > s->bytes / elem || (idx + 1) * elem > s->bytes)
        die("an accepted descriptor reaches past its buffer", op);
}

/* ---- the ops ----------------------------------------------------------------------------- */

static int is_ew_dtype(duet_dtype d) { return d == DUET_DTYPE_F32 || d == DUET_DTYPE_F64 || d == DUET_DTYPE_I32; }

static void op_elementwise(input *in, int kind)
{
    static const char *const names[3] = {"duet_scale", "duet_fill", "duet_add"};
    buf_slot *sx = NULL, *sa = NULL, *sb = NULL;
    duet_matrix x = pick_matrix(in, &sx);
    duet_matrix a = x, b = x;
    if (kind == 2) {
        unsigned how = u8(in);
        if (how < 100) {
            a = pick_matrix(in, &sa);
            b = pick_matrix(in, &sb);
        } else {
            /* Same shape and dtype, other buffers or the same view (in place). */
            a.buffer = buf_handle(in, &sa);
            b.buffer = buf_handle(in, &sb);
            if (how & 1) { a = x; sa = sx; }
            a.offset = how & 2 ? x.offset : u8(in) % 8;
            b.offset = u8(in) % 8;
            if (how & 4) { b.batch_count = 1; }
        }
    }
    double alpha = pick_scalar(in), beta = pick_scalar(in);
    int use = 0;
    duet_op_options o = pick_options(in, &use);
    duet_stream *st = stream_at(in);
    duet_status s = kind == 0   ? duet_scale(st, alpha, &x, use ? &o : NULL)
                    : kind == 1 ? duet_fill(st, alpha, &x, use ? &o : NULL)
                                : duet_add(st, alpha, &a, beta, &b, &x, use ? &o : NULL);
    check_status(s, S_OK | S_ARG | S_HANDLE | S_UNSUP, names[kind]);
    if (s != DUET_SUCCESS) {
        check_unchanged(names[kind]);
        return;
    }
    buf_slot *out = slot_of(x.buffer);
    if (!out) die("success on a dead buffer", names[kind]);
    if (!is_ew_dtype(x.dtype)) {
        /* Only fill takes the other dtypes: checked for the footprint only. */
        if (kind != 1) die("success on a dtype scale/add do not support", names[kind]);
    }
    const size_t elem = duet_dtype_size(x.dtype);
    /* An empty matrix may carry any batch count: nothing to visit. */
    const int64_t bc = x.rows == 0 || x.cols == 0 ? 0 : x.batch_count == 0 ? 1 : x.batch_count;
    expect e;
    expect_begin(&e, out);
    const buf_slot *ia = kind == 2 ? slot_of(a.buffer) : NULL, *ib = kind == 2 ? slot_of(b.buffer) : NULL;
    for (int64_t q = 0; q < bc; q++)
        for (int64_t i = 0; i < x.rows; i++)
            for (int64_t j = 0; j < x.cols; j++) {
                size_t ix = at(&x, q, i, j);
                check_index(out, ix, elem, names[kind]);
                unsigned char val[8] = {0};
                int known = 0;
                if (!is_ew_dtype(x.dtype)) {
                    known = 0;
                } else if (kind == 1) {
                    double v = alpha;
                    known = nice(v);
                    if (known) put(val, x.dtype, 0, v);
                } else if (kind == 0) {
                    double v = get(out->shadow, x.dtype, ix);
                    known = nice(v) && nice_scalar(alpha);
                    if (known) put(val, x.dtype, 0, alpha * v);
                    /* A non-integer product is not representable in i32. */
                    if (known && x.dtype == DUET_DTYPE_I32 && alpha * v != floor(alpha * v)) known = 0;
                } else {
                    size_t ia_ix = at(&a, q, i, j), ib_ix = at(&b, q, i, j);
                    check_index(ia, ia_ix, elem, names[kind]);
                    check_index(ib, ib_ix, elem, names[kind]);
                    double va = get(ia->shadow, x.dtype, ia_ix), vb = get(ib->shadow, x.dtype, ib_ix);
                    double r = alpha * va + beta * vb;
                    known = nice(va) && nice(vb) && nice_scalar(alpha) && nice_scalar(beta) &&
                            r == floor(r) && (r != 0 || x.dtype == DUET_DTYPE_I32);
                    if (known) put(val, x.dtype, 0, r);
                }
                expect_set(&e, ix, elem, val, known);
            }
    expect_check(&e, names[kind]);
}

static void op_transpose(input *in)
{
    buf_slot *si = NULL, *so = NULL;
    duet_matrix mi = pick_matrix(in, &si), mo = pick_matrix(in, &so);
    if (u8(in) < 160) {
        /* Make the shapes agree more often than chance would. */
        mo.dtype = mi.dtype;
        mo.rows = mi.cols;
        mo.cols = mi.rows;
        mo.batch_count = mi.batch_count;
        int64_t len = mo.layout == DUET_LAYOUT_COL_MAJOR ? mo.rows : mo.cols;
        int64_t lines = mo.layout == DUET_LAYOUT_COL_MAJOR ? mo.cols : mo.rows;
        if (mo.ld < len) mo.ld = len;
        mo.batch_stride = wrap_mul(lines, mo.ld);
    }
    int use = 0;
    duet_op_options o = pick_options(in, &use);
    duet_status s = duet_transpose(stream_at(in), &mi, &mo, use ? &o : NULL);
    check_status(s, S_OK | S_ARG | S_HANDLE | S_UNSUP, "duet_transpose");
    if (s != DUET_SUCCESS) {
        check_unchanged("duet_transpose");
        return;
    }
    buf_slot *out = slot_of(mo.buffer), *src = slot_of(mi.buffer);
    if (!out || !src) die("success on a dead buffer", "duet_transpose");
    const size_t elem = duet_dtype_size(mo.dtype);
    const int64_t bc = mo.rows == 0 || mo.cols == 0 ? 0 : mo.batch_count == 0 ? 1 : mo.batch_count;
    expect e;
    expect_begin(&e, out);
    for (int64_t q = 0; q < bc; q++)
        for (int64_t i = 0; i < mo.rows; i++)
            for (int64_t j = 0; j < mo.cols; j++) {
                size_t io = at(&mo, q, i, j), ii = at(&mi, q, j, i);
                check_index(out, io, elem, "duet_transpose");
                check_index(src, ii, elem, "duet_transpose");
                expect_set(&e, io, elem, src->shadow + ii * elem, 1); /* raw bytes: exact */
            }
    expect_check(&e, "duet_transpose");
}

static void op_gemm(input *in)
{
    buf_slot *sa = NULL, *sb = NULL, *sc = NULL;
    duet_op opa = (duet_op)pick_enum(in, DUET_OP_N, DUET_OP_T);
    duet_op opb = (duet_op)pick_enum(in, DUET_OP_N, DUET_OP_T);
    duet_matrix a = pick_matrix(in, &sa), b = pick_matrix(in, &sb), c = pick_matrix(in, &sc);
    unsigned fix = u8(in);
    if (fix < 180) {
        /* Consistent shapes and a dtype row of the table above duet_gemm (or a near miss). */
        static const duet_dtype ab[] = {DUET_DTYPE_F32, DUET_DTYPE_F64, DUET_DTYPE_I32,
                                        DUET_DTYPE_F16, DUET_DTYPE_F16, DUET_DTYPE_BF16,
                                        DUET_DTYPE_BF16, DUET_DTYPE_I8};
        static const duet_dtype cd[] = {DUET_DTYPE_F32, DUET_DTYPE_F64, DUET_DTYPE_I32,
                                        DUET_DTYPE_F16, DUET_DTYPE_F32, DUET_DTYPE_BF16,
                                        DUET_DTYPE_F32, DUET_DTYPE_I32};
        unsigned r = fix % 8;
        a.dtype = b.dtype = ab[r];
        c.dtype = cd[r];
        int64_t m = 1 + u8(in) % 3, n = 1 + u8(in) % 3, k = u8(in) % 4;
        a.rows = opa == DUET_OP_N ? m : k;
        a.cols = opa == DUET_OP_N ? k : m;
        b.rows = opb == DUET_OP_N ? k : n;
        b.cols = opb == DUET_OP_N ? n : k;
        c.rows = m;
        c.cols = n;
        duet_matrix *ms[3] = {&a, &b, &c};
        for (int i = 0; i < 3; i++) {
            duet_matrix *x = ms[i];
            int64_t len = x->layout == DUET_LAYOUT_COL_MAJOR ? x->rows : x->cols;
            int64_t lines = x->layout == DUET_LAYOUT_COL_MAJOR ? x->cols : x->rows;
            if (x->ld < len) x->ld = len;
            if (x->batch_stride != 0) x->batch_stride = wrap_mul(lines, x->ld);
        }
    }
    double alpha = pick_scalar(in), beta = pick_scalar(in);
    int use = 0;
    duet_op_options o = pick_options(in, &use);
    duet_status s = duet_gemm(stream_at(in), opa, opb, alpha, &a, &b, beta, &c, use ? &o : NULL);
    if (getenv("DUET_FUZZ_TRACE")) {
        const duet_matrix *ms[3] = {&a, &b, &c};
        fprintf(stderr, "  gemm %d%d alpha %g beta %g algo %d tile %d math %d -> %s\n", (int)opa,
                (int)opb, alpha, beta, use ? (int)o.algorithm : -1, o.tile, (int)o.math,
                duet_status_string(s));
        for (int i = 0; i < 3; i++)
            fprintf(stderr, "    %c: %s %s %lld x %lld ld %lld off %zu batch %lld stride %lld\n",
                    "ABC"[i], duet_dtype_name(ms[i]->dtype), ms[i]->layout ? "col" : "row",
                    (long long)ms[i]->rows, (long long)ms[i]->cols, (long long)ms[i]->ld,
                    ms[i]->offset, (long long)ms[i]->batch_count, (long long)ms[i]->batch_stride);
    }
    check_status(s, S_OK | S_ARG | S_HANDLE | S_UNSUP, "duet_gemm");
    if (s != DUET_SUCCESS) {
        check_unchanged("duet_gemm");
        return;
    }
    buf_slot *oc = slot_of(c.buffer), *oa = slot_of(a.buffer), *ob = slot_of(b.buffer);
    if (!oc || !oa || !ob) die("success on a dead buffer", "duet_gemm");
    const size_t elem = duet_dtype_size(c.dtype);
    const int exact_dtype = is_ew_dtype(a.dtype) && a.dtype == c.dtype;
    const int64_t m = c.rows, n = c.cols, k = opa == DUET_OP_N ? a.cols : a.rows;
    const int64_t bc = m == 0 || n == 0 ? 0 : c.batch_count == 0 ? 1 : c.batch_count;
    expect e;
    expect_begin(&e, oc);
    for (int64_t q = 0; q < bc; q++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                size_t ic = at(&c, q, i, j);
                check_index(oc, ic, elem, "duet_gemm");
                unsigned char val[8] = {0};
                int known = exact_dtype && nice_scalar(alpha) && nice_scalar(beta);
                double acc = 0;
                for (int64_t p = 0; p < k && alpha != 0; p++) {
                    size_t ia = opa == DUET_OP_N ? at(&a, q, i, p) : at(&a, q, p, i);
                    size_t ib = opb == DUET_OP_N ? at(&b, q, p, j) : at(&b, q, j, p);
                    check_index(oa, ia, duet_dtype_size(a.dtype), "duet_gemm");
                    check_index(ob, ib, duet_dtype_size(b.dtype), "duet_gemm");
                    if (!exact_dtype) continue;
                    double va = get(oa->shadow, a.dtype, ia), vb = get(ob->shadow, b.dtype, ib);
                    if (!nice(va) || !nice(vb)) known = 0;
                    acc += va * vb;
                }
                if (known) {
                    double vc = beta == 0 ? 0 : get(oc->shadow, c.dtype, ic);
                    if (!nice(vc)) known = 0;
                    double r = alpha * acc + (beta == 0 ? 0 : beta * vc);
                    if (r != floor(r)) known = 0;
                    /* The sign of a zero result depends on the order of the terms
                     * (beta * C alone gives -0 for C = 0, beta < 0): not checked. */
                    if (r == 0 && c.dtype != DUET_DTYPE_I32) known = 0;
                    if (alpha == 0 || k == 0) r = beta == 0 ? 0 : beta * vc;
                    if (known) put(val, c.dtype, 0, r);
                }
                expect_set(&e, ic, elem, val, known);
            }
    expect_check(&e, "duet_gemm");
}

/* duet_gemm_ex: a gemm's operands, D, and an epilogue of picked matrices (each possibly NULL),
 * usually shaped and typed consistently. A failure must write nothing; a success must write
 * only D's and aux's elements (their values are tests/test_gemm_epilogue's to check). */
static void op_gemm_ex(input *in)
{
    buf_slot *sa = NULL, *sb = NULL, *sc = NULL, *sd = NULL, *sv[5] = {0};
    duet_op opa = (duet_op)pick_enum(in, DUET_OP_N, DUET_OP_T);
    duet_op opb = (duet_op)pick_enum(in, DUET_OP_N, DUET_OP_T);
    duet_matrix a = pick_matrix(in, &sa), b = pick_matrix(in, &sb), c = pick_matrix(in, &sc);
    duet_matrix d = pick_matrix(in, &sd), v[5];
    int on[5];
    for (int i = 0; i < 5; i++) {
        on[i] = u8(in) >= 128;
        v[i] = pick_matrix(in, &sv[i]);
    }
    const unsigned fix = u8(in);
    if (fix < 180) {
        static const duet_dtype ab[] = {DUET_DTYPE_F32, DUET_DTYPE_F64, DUET_DTYPE_I32,
                                        DUET_DTYPE_F16, DUET_DTYPE_F16, DUET_DTYPE_BF16,
                                        DUET_DTYPE_BF16, DUET_DTYPE_I8};
        static const duet_dtype cd[] = {DUET_DTYPE_F32, DUET_DTYPE_F64, DUET_DTYPE_I32,
                                        DUET_DTYPE_F16, DUET_DTYPE_F32, DUET_DTYPE_BF16,
                                        DUET_DTYPE_F32, DUET_DTYPE_I32};
        /* The epilogue's dtypes of each row's math type (duet.h), one picked per operand. */
        static const duet_dtype outs[8][3] = {
            {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16},
            {DUET_DTYPE_F64, DUET_DTYPE_F32, DUET_DTYPE_F64},
            {DUET_DTYPE_I32, DUET_DTYPE_I8, DUET_DTYPE_I32},
            {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16},
            {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16},
            {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16},
            {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16},
            {DUET_DTYPE_I32, DUET_DTYPE_I8, DUET_DTYPE_I32}};
        const unsigned r = fix % 8;
        a.dtype = b.dtype = ab[r];
        c.dtype = cd[r];
        d.dtype = outs[r][u8(in) % 3];
        const int64_t m = 1 + u8(in) % 3, n = 1 + u8(in) % 3, k = u8(in) % 4;
        a.rows = opa == DUET_OP_N ? m : k;
        a.cols = opa == DUET_OP_N ? k : m;
        b.rows = opb == DUET_OP_N ? k : n;
        b.cols = opb == DUET_OP_N ? n : k;
        c.rows = d.rows = m;
        c.cols = d.cols = n;
        /* bias 1 x n or m x 1, row scale m x 1, column scale 1 x n, residual and aux m x n */
        const int bias_rows = u8(in) & 1;
        const int64_t vr[5] = {bias_rows ? m : 1, m, 1, m, m};
        const int64_t vc[5] = {bias_rows ? 1 : n, 1, n, n, n};
        duet_matrix *ms[9] = {&a, &b, &c, &d, &v[0], &v[1], &v[2], &v[3], &v[4]};
        for (int i = 0; i < 5; i++) {
            v[i].rows = vr[i];
            v[i].cols = vc[i];
            v[i].dtype = outs[r][u8(in) % 3];
        }
        for (int i = 0; i < 9; i++) {
            duet_matrix *x = ms[i];
            int64_t len = x->layout == DUET_LAYOUT_COL_MAJOR ? x->rows : x->cols;
            int64_t lines = x->layout == DUET_LAYOUT_COL_MAJOR ? x->cols : x->rows;
            if (x->ld < len) x->ld = len;
            if (x->batch_stride != 0) x->batch_stride = wrap_mul(lines, x->ld);
        }
    }
    duet_gemm_epilogue epi;
    memset(&epi, 0, sizeof epi);
    epi.act = (duet_activation)pick_enum(in, DUET_ACT_NONE, DUET_ACT_CLAMP);
    if (u8(in) >= 160) {
        epi.act_lo = pick_scalar(in);
        epi.act_hi = pick_scalar(in);
    }
    epi.bias = on[0] ? &v[0] : NULL;
    epi.row_scale = on[1] ? &v[1] : NULL;
    epi.col_scale = on[2] ? &v[2] : NULL;
    epi.residual = on[3] ? &v[3] : NULL;
    epi.aux = on[4] ? &v[4] : NULL;
    const int c_null = u8(in) < 32, epi_null = u8(in) < 32;
    double alpha = pick_scalar(in), beta = pick_scalar(in);
    int use = 0;
    duet_op_options o = pick_options(in, &use);
    duet_status s = duet_gemm_ex(stream_at(in), opa, opb, alpha, &a, &b, beta, c_null ? NULL : &c,
                                 epi_null ? NULL : &epi, &d, use ? &o : NULL);
    if (getenv("DUET_FUZZ_TRACE"))
        fprintf(stderr, "  gemm_ex %d%d alpha %g beta %g act %d -> %s: %s\n", (int)opa, (int)opb,
                alpha, beta, (int)epi.act, duet_status_string(s), duet_last_error());
    check_status(s, S_OK | S_ARG | S_HANDLE | S_UNSUP, "duet_gemm_ex");
    if (s != DUET_SUCCESS) {
        check_unchanged("duet_gemm_ex");
        return;
    }
    buf_slot *od = slot_of(d.buffer);
    buf_slot *ox = !epi_null && epi.aux ? slot_of(epi.aux->buffer) : NULL;
    if (!od || (!epi_null && epi.aux && !ox)) die("success on a dead buffer", "duet_gemm_ex");
    /* Every element of D and aux written, with values not checked here; nothing else. */
    const duet_matrix *outs[2] = {&d, ox ? epi.aux : NULL};
    buf_slot *slots[2] = {od, ox};
    static expect e;
    for (int w = 0; w < 2; w++) {
        if (!outs[w] || (w == 1 && ox == od)) continue;
        expect_begin(&e, slots[w]);
        for (int u = w; u < 2; u++) {
            if (!outs[u] || slots[u] != slots[w]) continue;
            const duet_matrix *x = outs[u];
            const size_t elem = duet_dtype_size(x->dtype);
            const int64_t bc = x->rows == 0 || x->cols == 0 ? 0
                               : x->batch_count == 0    ? 1
                                                        : x->batch_count;
            unsigned char any[8] = {0};
            for (int64_t q = 0; q < bc; q++)
                for (int64_t i = 0; i < x->rows; i++)
                    for (int64_t j = 0; j < x->cols; j++) {
                        const size_t idx = at(x, q, i, j);
                        check_index(slots[w], idx, elem, "duet_gemm_ex");
                        expect_set(&e, idx, elem, any, 0);
                    }
        }
        expect_check(&e, "duet_gemm_ex");
    }
}

/* duet_convert: src, dst and an optional scale and amax of picked matrices, usually shaped and
 * typed consistently. A failure must write nothing; a success must write only dst's elements
 * and amax (values are tests/test_fp8's to check). */
static void op_convert(input *in)
{
    static const duet_dtype ok[5] = {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16,
                                     DUET_DTYPE_F8E4M3, DUET_DTYPE_F8E5M2};
    buf_slot *ss = NULL, *sd = NULL, *sx[2] = {0};
    duet_matrix src = pick_matrix(in, &ss), dst = pick_matrix(in, &sd), x[2];
    int on[2];
    for (int i = 0; i < 2; i++) {
        on[i] = u8(in) >= 128;
        x[i] = pick_matrix(in, &sx[i]);
    }
    if (u8(in) < 180) {
        src.dtype = ok[u8(in) % 5];
        dst.dtype = ok[u8(in) % 5];
        src.rows = dst.rows;
        src.cols = dst.cols;
        duet_matrix *ms[2] = {&src, &dst};
        for (int i = 0; i < 2; i++) {
            duet_matrix *m = ms[i];
            int64_t len = m->layout == DUET_LAYOUT_COL_MAJOR ? m->rows : m->cols;
            int64_t lines = m->layout == DUET_LAYOUT_COL_MAJOR ? m->cols : m->rows;
            if (m->ld < len) m->ld = len;
            if (m->batch_stride != 0) m->batch_stride = wrap_mul(lines, m->ld);
        }
        for (int i = 0; i < 2; i++) {
            x[i].dtype = DUET_DTYPE_F32;
            x[i].rows = x[i].cols = x[i].ld = 1;
            x[i].batch_count = 1;
        }
    }
    duet_convert_options o;
    memset(&o, 0, sizeof o);
    o.overflow = (duet_convert_overflow)pick_enum(in, DUET_CONVERT_SATURATE, DUET_CONVERT_OVERFLOW);
    o.scale = on[0] ? &x[0] : NULL;
    o.amax = on[1] ? &x[1] : NULL;
    duet_launch_info info;
    if (u8(in) & 1) o.info = &info;
    const int opt_null = u8(in) < 32;
    duet_status s = duet_convert(stream_at(in), &src, &dst, opt_null ? NULL : &o);
    if (getenv("DUET_FUZZ_TRACE"))
        fprintf(stderr, "  convert %s -> %s -> %s: %s\n", duet_dtype_name(src.dtype),
                duet_dtype_name(dst.dtype), duet_status_string(s), duet_last_error());
    check_status(s, S_OK | S_ARG | S_HANDLE | S_UNSUP, "duet_convert");
    if (s != DUET_SUCCESS) {
        check_unchanged("duet_convert");
        return;
    }
    buf_slot *od = slot_of(dst.buffer);
    buf_slot *oa = !opt_null && o.amax ? slot_of(o.amax->buffer) : NULL;
    if (!od || (!opt_null && o.amax && !oa)) die("success on a dead buffer", "duet_convert");
    /* Every element of dst and amax written, with values not checked here; nothing else. */
    const duet_matrix *outs[2] = {&dst, oa ? o.amax : NULL};
    buf_slot *slots[2] = {od, oa};
    static expect e;
    for (int w = 0; w < 2; w++) {
        if (!outs[w] || (w == 1 && oa == od)) continue;
        expect_begin(&e, slots[w]);
        for (int u = w; u < 2; u++) {
            if (!outs[u] || slots[u] != slots[w]) continue;
            const duet_matrix *m = outs[u];
            const size_t elem = duet_dtype_size(m->dtype);
            const int64_t bc = m->rows == 0 || m->cols == 0 ? 0
                               : m->batch_count == 0    ? 1
                                                        : m->batch_count;
            unsigned char any[8] = {0};
            for (int64_t q = 0; q < bc; q++)
                for (int64_t i = 0; i < m->rows; i++)
                    for (int64_t j = 0; j < m->cols; j++) {
                        const size_t idx = at(m, q, i, j);
                        check_index(slots[w], idx, elem, "duet_convert");
                        expect_set(&e, idx, elem, any, 0);
                    }
        }
        expect_check(&e, "duet_convert");
    }
}

/* ---- the program ------------------------------------------------------------------------- */

static void step(input *in)
{
    unsigned op = u8(in) % 25;
    if (getenv("DUET_FUZZ_TRACE")) fprintf(stderr, "step %u (%zu bytes left)\n", op, in->n);
    switch (op) {
    case 0: { /* buffer_create */
        buf_slot *b = slot_at(in);
        int c = (int)(u8(in) % NCTX);
        size_t bytes = pick_size(in);
        if (bytes > MAX_BYTES && bytes < ((size_t)1 << 40)) bytes %= MAX_BYTES + 1;
        if (b->live) {
            check_status(duet_buffer_destroy(b->h), S_OK, "duet_buffer_destroy");
            buffer_gone(b);
        }
        duet_buffer *h = NULL;
        duet_status s = duet_buffer_create(g_ctx[c], bytes, &h);
        check_status(s, S_OK | S_HANDLE | S_OOM | S_ARG, "duet_buffer_create");
        if (s != DUET_SUCCESS) {
            if (g_ctx_live[c] && bytes <= MAX_BYTES) die("a small buffer_create failed", "");
            break;
        }
        b->h = h;
        b->live = 1;
        b->ctx = c;
        b->bytes = bytes;
        b->shadow = (unsigned char *)calloc(1, bytes ? bytes : 1);
        /* Contents are unspecified until written: give them a known pattern. */
        for (size_t i = 0; i < bytes; i++) b->shadow[i] = (unsigned char)(i * 7 + 1);
        if (bytes) check_status(duet_buffer_write(NULL, h, 0, b->shadow, bytes), S_OK, "duet_buffer_write");
        break;
    }
    case 1: { /* buffer_destroy, live or stale */
        buf_slot *b = NULL;
        duet_buffer *h = buf_handle(in, &b);
        duet_status s = duet_buffer_destroy(h);
        check_status(s, S_OK | S_HANDLE, "duet_buffer_destroy");
        if (s == DUET_SUCCESS) {
            buf_slot *o = slot_of(h);
            if (!o) die("destroyed a buffer that was not live", "duet_buffer_destroy");
            buffer_gone(o);
        }
        (void)b;
        break;
    }
    case 2:
    case 3: { /* write: raw bytes or small integers of a dtype */
        buf_slot *b = NULL;
        duet_buffer *h = buf_handle(in, &b);
        size_t off = pick_size(in), n = pick_size(in);
        unsigned char src[MAX_BYTES];
        duet_dtype d = (duet_dtype)(u8(in) % 3);
        size_t el = duet_dtype_size(d);
        /* The data comes from a 16-bit seed, so inputs stay short and decode stably: raw bytes
         * (NaNs, huge values) or small integers of a dtype (exact results to check). */
        uint32_t x = u16(in) * 2654435761u + 1u;
        for (size_t i = 0; i + el <= MAX_BYTES; i += el) {
            x = x * 1664525u + 1013904223u;
            if (op == 2) {
                for (size_t k = 0; k < el; k++) src[i + k] = (unsigned char)(x >> (8 * (k % 4)));
            } else {
                put(src + i, d, 0, (double)((int)((x >> 16) % 17) - 8));
            }
        }
        /* A huge n must be refused before src is read: src holds MAX_BYTES. */
        const size_t nn = n;
        const int sync = u8(in) & 1;
        duet_status s = sync ? duet_buffer_write(stream_at(in), h, off, src, nn)
                             : duet_buffer_write_async(stream_at(in), h, off, src, nn);
        check_status(s, S_OK | S_ARG | S_HANDLE, sync ? "duet_buffer_write" : "duet_buffer_write_async");
        if (s == DUET_SUCCESS) {
            buf_slot *o = slot_of(h);
            if (!o || off + nn > o->bytes || nn > MAX_BYTES) die("write accepted out of range", "");
            memcpy(o->shadow + off, src, nn);
            check_status(duet_context_synchronize(g_ctx[o->ctx]), S_OK, "duet_context_synchronize");
        }
        check_unchanged("duet_buffer_write");
        break;
    }
    case 4: { /* read */
        buf_slot *b = NULL;
        duet_buffer *h = buf_handle(in, &b);
        size_t off = pick_size(in), n = pick_size(in);
        unsigned char dst[MAX_BYTES + 16];
        memset(dst, 0xA5, sizeof dst);
        duet_status s = duet_buffer_read(stream_at(in), h, off, dst, n);
        check_status(s, S_OK | S_ARG | S_HANDLE, "duet_buffer_read");
        if (s == DUET_SUCCESS) {
            buf_slot *o = slot_of(h);
            if (!o || off + n > o->bytes) die("read accepted out of range", "");
            if (memcmp(dst, o->shadow + off, n) != 0) die("read differs from the shadow", "");
            for (size_t i = n; i < sizeof dst; i++)
                if (dst[i] != 0xA5) die("read wrote past bytes", "");
        } else {
            for (size_t i = 0; i < sizeof dst; i++)
                if (dst[i] != 0xA5) die("a failed read wrote", "");
        }
        break;
    }
    case 5: { /* copy */
        buf_slot *d = NULL, *sr = NULL;
        duet_buffer *hd = buf_handle(in, &d), *hs = buf_handle(in, &sr);
        size_t doff = pick_size(in), soff = pick_size(in), n = pick_size(in);
        duet_status s = duet_buffer_copy(stream_at(in), hd, doff, hs, soff, n);
        check_status(s, S_OK | S_ARG | S_HANDLE, "duet_buffer_copy");
        if (s == DUET_SUCCESS) {
            buf_slot *od = slot_of(hd), *os = slot_of(hs);
            if (!od || !os || doff + n > od->bytes || soff + n > os->bytes) die("copy out of range", "");
            memmove(od->shadow + doff, os->shadow + soff, n);
            check_status(duet_context_synchronize(g_ctx[od->ctx]), S_OK, "duet_context_synchronize");
        }
        check_unchanged("duet_buffer_copy");
        break;
    }
    case 6: { /* memset */
        buf_slot *b = NULL;
        duet_buffer *h = buf_handle(in, &b);
        size_t off = pick_size(in), n = pick_size(in);
        int v = (int)(int8_t)u8(in) * (u8(in) == 7 ? 1000 : 1);
        duet_status s = duet_buffer_memset(stream_at(in), h, off, v, n);
        check_status(s, S_OK | S_ARG | S_HANDLE, "duet_buffer_memset");
        if (s == DUET_SUCCESS && (v < 0 || v > 255)) die("memset took a value outside a byte", "");
        if (s == DUET_SUCCESS) {
            buf_slot *o = slot_of(h);
            if (!o || off + n > o->bytes) die("memset out of range", "");
            memset(o->shadow + off, v, n);
            check_status(duet_context_synchronize(g_ctx[o->ctx]), S_OK, "duet_context_synchronize");
        }
        check_unchanged("duet_buffer_memset");
        break;
    }
    case 7: case 8: case 9: op_gemm(in); break;
    case 10: case 11: op_transpose(in); break;
    case 12: op_elementwise(in, 0); break;
    case 13: op_elementwise(in, 1); break;
    case 14: case 15: op_elementwise(in, 2); break;
    case 16: { /* streams */
        unsigned i = u8(in) % NSTREAM;
        unsigned what = u8(in) % 3;
        if (what == 0) {
            int c = (int)(u8(in) % NCTX);
            duet_stream *s = NULL;
            duet_status st = duet_stream_create(g_ctx[c], &s);
            check_status(st, S_OK | S_HANDLE, "duet_stream_create");
            if (st == DUET_SUCCESS) {
                g_stream[i] = s; /* an older one stays alive until its context goes */
                g_stream_ctx[i] = c;
            }
        } else if (what == 1) {
            check_status(duet_stream_destroy(g_stream[i]), S_OK | S_HANDLE | S_ARG, "duet_stream_destroy");
        } else {
            check_status(duet_stream_synchronize(stream_at(in)), S_OK | S_HANDLE, "duet_stream_synchronize");
        }
        break;
    }
    case 17: { /* events */
        unsigned i = u8(in) % NEVENT, what = u8(in) % 5;
        duet_status s;
        if (what == 0) {
            duet_event *e = NULL;
            s = duet_event_create(ctx_at(in), &e);
            check_status(s, S_OK | S_HANDLE | S_ARG, "duet_event_create");
            if (s == DUET_SUCCESS) g_event[i] = e;
        } else if (what == 1) {
            check_status(duet_event_record(g_event[i], stream_at(in)), S_OK | S_HANDLE | S_ARG, "duet_event_record");
        } else if (what == 2) {
            check_status(duet_event_synchronize(g_event[i]), S_OK | S_HANDLE, "duet_event_synchronize");
        } else if (what == 3) {
            float ms = 0;
            s = duet_event_elapsed_ms(g_event[i], g_event[u8(in) % NEVENT], &ms);
            check_status(s, S_OK | S_HANDLE | S_ARG | S_NOTREADY, "duet_event_elapsed_ms");
        } else {
            check_status(duet_event_destroy(g_event[i]), S_OK | S_HANDLE, "duet_event_destroy");
        }
        break;
    }
    case 18: { /* host memory */
        unsigned i = u8(in) % NHOST, what = u8(in) % 4;
        int c = (int)(u8(in) % NCTX);
        duet_status s;
        if (what == 0 && !g_host[i]) {
            void *p = NULL;
            s = duet_host_alloc(g_ctx[c], 1 + u8(in) % 64, &p);
            check_status(s, S_OK | S_HANDLE | S_ARG | S_OOM, "duet_host_alloc");
            if (s == DUET_SUCCESS) {
                g_host[i] = p;
                g_host_ctx[i] = c;
                g_host_kind[i] = 1;
            }
        } else if (what == 1 && !g_host[i]) {
            size_t off = u8(in) % 32, n = u8(in) % 40;
            s = duet_host_register(g_ctx[c], g_host_mem[i] + off, n > 64 - off ? 64 - off : n);
            check_status(s, S_OK | S_HANDLE | S_ARG, "duet_host_register");
            if (s == DUET_SUCCESS) {
                g_host[i] = g_host_mem[i] + off;
                g_host_ctx[i] = c;
                g_host_kind[i] = 2;
            }
        } else if (what == 2 && g_host[i]) {
            /* Freed through the right context or not: a refusal changes nothing. */
            s = g_host_kind[i] == 1 ? duet_host_free(g_ctx[c], g_host[i])
                                    : duet_host_unregister(g_ctx[c], g_host[i]);
            check_status(s, S_OK | S_HANDLE | S_ARG, g_host_kind[i] == 1 ? "duet_host_free" : "duet_host_unregister");
            if (s == DUET_SUCCESS) {
                if (c != g_host_ctx[i]) die("host memory released through another context", "");
                g_host[i] = NULL;
                g_host_kind[i] = 0;
            }
        } else {
            /* Unknown pointers are refused. */
            s = duet_host_free(g_ctx[c], g_host_mem[i] + 1);
            check_status(s, S_ARG | S_HANDLE, "duet_host_free");
        }
        break;
    }
    case 19: { /* destroy and recreate the second context */
        if (u8(in) & 1) {
            duet_status s = duet_context_destroy(g_ctx[1]);
            check_status(s, S_OK | S_HANDLE, "duet_context_destroy");
            if (s == DUET_SUCCESS) context_gone(1);
        } else if (!g_ctx_live[1]) {
            check_status(duet_context_create(0, &g_ctx[1]), S_OK, "duet_context_create");
            g_ctx_live[1] = 1;
        }
        break;
    }
    case 20: { /* launch configuration helpers */
        duet_launch_config cfg;
        int64_t n = pick_i64(in);
        check_status(duet_launch_config_1d(n, u16(in) % 2048, &cfg), S_OK | S_ARG, "duet_launch_config_1d");
        check_status(duet_launch_config_2d(pick_i64(in), pick_i64(in), u8(in) % 40, u8(in) % 40, &cfg),
                     S_OK | S_ARG, "duet_launch_config_2d");
        check_status(duet_launch_config_validate(ctx_at(in), &cfg), S_OK | S_ARG | S_HANDLE,
                     "duet_launch_config_validate");
        break;
    }
    case 21: { /* context-wide synchronisation and queries on any handle */
        check_status(duet_context_synchronize(ctx_at(in)), S_OK | S_HANDLE, "duet_context_synchronize");
        size_t bytes = 0;
        buf_slot *b = NULL;
        check_status(duet_buffer_size(buf_handle(in, &b), &bytes), S_OK | S_HANDLE, "duet_buffer_size");
        break;
    }
    case 23: op_gemm_ex(in); break;
    case 24: op_convert(in); break;
    default: { /* more gemm: the op with the most arguments */
        op_gemm(in);
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    memset(g_buf, 0, sizeof g_buf);
    memset(g_stream, 0, sizeof g_stream);
    memset(g_event, 0, sizeof g_event);
    memset(g_host, 0, sizeof g_host);
    for (int c = 0; c < NCTX; c++) {
        if (duet_context_create(0, &g_ctx[c]) != DUET_SUCCESS) die("context_create", "");
        g_ctx_live[c] = 1;
    }
    for (int steps = 0; in.n > 0 && steps < 64; steps++) step(&in);
    /* Destroying the contexts releases everything left, host memory included. */
    for (int c = 0; c < NCTX; c++)
        if (g_ctx_live[c]) check_status(duet_context_destroy(g_ctx[c]), S_OK, "duet_context_destroy");
    for (int i = 0; i < NBUF; i++) free(g_buf[i].shadow);
    memset(g_buf, 0, sizeof g_buf);
    return 0;
}
