/* test_group.c - cross-context copies and waits, groups of contexts and duet_group_gemm. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "harness.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 7 /* sentinel elements before and after every host C */

static duet_context *g_ctx[3]; /* three contexts: all on device 0, then on devices 0, 1, 2 */
static int g_one_device = 1;   /* all three on one device */

/* ---- cross-context copies ---------------------------------------------------------------- */

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed + 7 * i);
}

static void test_copy_peer(void)
{
    enum { N = 256 };
    unsigned char h0[N], h1[N], out[N];
    duet_buffer *b0 = NULL, *b1 = NULL;
    DT_OK(duet_buffer_create(g_ctx[0], N, &b0));
    DT_OK(duet_buffer_create(g_ctx[1], N, &b1));
    fill_pattern(h0, N, 1);
    fill_pattern(h1, N, 100);
    DT_OK(duet_buffer_write(NULL, b0, 0, h0, N));
    DT_OK(duet_buffer_write(NULL, b1, 0, h1, N));

    /* ctx0 -> ctx1 on ctx1's default stream, with offsets. */
    DT_OK(duet_buffer_copy_peer(NULL, b1, 16, b0, 32, 100));
    DT_OK(duet_context_synchronize(g_ctx[1]));
    DT_OK(duet_buffer_read(NULL, b1, 0, out, N));
    unsigned char want[N];
    memcpy(want, h1, N);
    memcpy(want + 16, h0 + 32, 100);
    DT_CHECK(memcmp(out, want, N) == 0, "ctx0 -> ctx1 copy with offsets");

    /* ctx1 -> ctx0 on a stream of ctx0, ordered after ctx1's write by an event of ctx1. */
    duet_stream *s0 = NULL, *s1 = NULL;
    duet_event *e1 = NULL;
    DT_OK(duet_stream_create(g_ctx[0], &s0));
    DT_OK(duet_stream_create(g_ctx[1], &s1));
    DT_OK(duet_event_create(g_ctx[1], &e1));
    unsigned char h2[N];
    fill_pattern(h2, N, 200);
    DT_OK(duet_buffer_write_async(s1, b1, 0, h2, N));
    DT_OK(duet_event_record(e1, s1));
    DT_OK(duet_stream_wait_event(s0, e1));
    DT_OK(duet_buffer_copy_peer(s0, b0, 0, b1, 8, 64));
    DT_OK(duet_stream_synchronize(s0));
    DT_OK(duet_buffer_read(NULL, b0, 0, out, N));
    memcpy(want, h0, N);
    memcpy(want, h2 + 8, 64);
    DT_CHECK(memcmp(out, want, N) == 0, "ctx1 -> ctx0 copy after a cross-context wait");
    memcpy(h0, want, N); /* b0 now holds this */

    /* bytes 0 and the whole buffer. */
    DT_OK(duet_buffer_copy_peer(NULL, b1, N, b0, N, 0));
    DT_OK(duet_buffer_copy_peer(NULL, b1, 0, b0, 0, N));
    DT_OK(duet_buffer_read(NULL, b1, 0, out, N));
    DT_CHECK(memcmp(out, h0, N) == 0, "whole-buffer copy");
    memcpy(h1, out, N); /* b1 now holds this */

    /* The same context: accepted, as duet_buffer_copy. */
    duet_buffer *b0b = NULL;
    DT_OK(duet_buffer_create(g_ctx[0], N, &b0b));
    DT_OK(duet_buffer_copy_peer(NULL, b0b, 0, b0, 0, N));
    DT_OK(duet_buffer_read(NULL, b0b, 0, out, N));
    DT_CHECK(memcmp(out, h0, N) == 0, "same-context copy");
    DT_OK(duet_buffer_copy_peer(NULL, b0, 0, b0, 128, 64)); /* one buffer, apart */
    DT_OK(duet_buffer_read(NULL, b0, 0, out, N));
    memcpy(h0, h0 + 128, 64);
    DT_CHECK(memcmp(out, h0, N) == 0, "copy within one buffer");

    /* Bad arguments write nothing. */
    DT_FAILS(duet_buffer_copy_peer(NULL, NULL, 0, b0, 0, 1), DUET_ERROR_INVALID_HANDLE, "dst");
    DT_FAILS(duet_buffer_copy_peer(NULL, b1, 0, NULL, 0, 1), DUET_ERROR_INVALID_HANDLE, "src");
    DT_FAILS(duet_buffer_copy_peer(NULL, b1, 200, b0, 0, 57), DUET_ERROR_INVALID_ARGUMENT,
             "dst_offset");
    DT_FAILS(duet_buffer_copy_peer(NULL, b1, 0, b0, 250, 7), DUET_ERROR_INVALID_ARGUMENT,
             "src_offset");
    DT_FAILS(duet_buffer_copy_peer(NULL, b1, SIZE_MAX, b0, 0, 2), DUET_ERROR_INVALID_ARGUMENT,
             "dst_offset");
    DT_FAILS(duet_buffer_copy_peer(NULL, b1, 8, b0, 0, SIZE_MAX - 4), DUET_ERROR_INVALID_ARGUMENT,
             "dst_offset");
    DT_FAILS(duet_buffer_copy_peer(NULL, b0, 0, b0, 10, 20), DUET_ERROR_INVALID_ARGUMENT,
             "overlaps");
    DT_FAILS(duet_buffer_copy_peer(s0, b1, 0, b0, 0, 8), DUET_ERROR_INVALID_ARGUMENT, "stream");
    /* Two contexts wrapping one memory: an overlap in memory, whatever the handles say. */
    void *p0 = NULL;
    duet_buffer *alias = NULL;
    DT_OK(duet_buffer_device_ptr(b0, 0, &p0));
    if (g_one_device) DT_OK(duet_buffer_wrap(g_ctx[1], p0, N, &alias));
    if (alias) {
        DT_FAILS(duet_buffer_copy_peer(NULL, alias, 0, b0, 4, 8), DUET_ERROR_INVALID_ARGUMENT,
                 "overlaps");
        DT_OK(duet_buffer_copy_peer(NULL, alias, 0, b0, 8, 8)); /* touching, not overlapping */
        DT_OK(duet_context_synchronize(g_ctx[1]));
        memcpy(h0, h0 + 8, 8);
        DT_OK(duet_buffer_destroy(alias));
    }
    DT_OK(duet_buffer_read(NULL, b0, 0, out, N));
    DT_CHECK(memcmp(out, h0, N) == 0, "b0 after the failed copies");
    DT_OK(duet_buffer_read(NULL, b1, 0, out, N));
    DT_CHECK(memcmp(out, h1, N) == 0, "b1 untouched by the failed copies");

    /* duet_stream_wait_event. */
    duet_event *never = NULL;
    DT_OK(duet_event_create(g_ctx[2], &never));
    DT_OK(duet_stream_wait_event(s0, never)); /* never recorded: complete */
    DT_FAILS(duet_stream_wait_event(NULL, e1), DUET_ERROR_INVALID_HANDLE, "stream");
    DT_FAILS(duet_stream_wait_event(s0, NULL), DUET_ERROR_INVALID_HANDLE, "event");
    DT_OK(duet_event_destroy(never));
    DT_FAILS(duet_stream_wait_event(s0, never), DUET_ERROR_INVALID_HANDLE, "event");
    DT_OK(duet_stream_synchronize(s0));

    DT_OK(duet_event_destroy(e1));
    DT_OK(duet_stream_destroy(s0));
    DT_OK(duet_stream_destroy(s1));
    DT_OK(duet_buffer_destroy(b0));
    DT_OK(duet_buffer_destroy(b0b));
    DT_OK(duet_buffer_destroy(b1));
}

/* ---- group gemm -------------------------------------------------------------------------- */

typedef struct dtypes {
    duet_dtype ab, c;
} dtypes;

static const dtypes k_dtypes[] = {
    {DUET_DTYPE_F32, DUET_DTYPE_F32},  {DUET_DTYPE_F64, DUET_DTYPE_F64},
    {DUET_DTYPE_I32, DUET_DTYPE_I32},  {DUET_DTYPE_BF16, DUET_DTYPE_F32},
    {DUET_DTYPE_F16, DUET_DTYPE_F16},  {DUET_DTYPE_BF16, DUET_DTYPE_BF16},
    {DUET_DTYPE_F16, DUET_DTYPE_F32},  {DUET_DTYPE_I8, DUET_DTYPE_I32},
    {DUET_DTYPE_F8E4M3, DUET_DTYPE_F32}, {DUET_DTYPE_F8E5M2, DUET_DTYPE_BF16},
};

typedef struct gcase {
    dtypes dt;
    duet_op op_a, op_b;
    duet_layout la, lb, lc;
    int64_t m, n, k, batch;
    int bcast; /* 1: A has batch_count 1; 2: B has batch_stride 0 */
    double alpha, beta;
    int members; /* 1..3 */
    int64_t tile;
    int nan_ab; /* A and B all NaN / sentinel (alpha == 0 must not read them) */
    int place;  /* bit q (A, B, C): operand q is a device matrix, on member (q + shift) % members */
    int shift;
} gcase;

/* A host matrix described as a duet_matrix too (buffer NULL; offset = the leading guard), so
 * the harness's reference reads it. ld pads each line by 2; batches are 3 elements apart. */
static duet_matrix describe(duet_dtype dt, duet_layout l, int64_t rows, int64_t cols,
                            int64_t batch, int64_t stride_mode, size_t offset)
{
    duet_matrix m;
    memset(&m, 0, sizeof m);
    m.dtype = dt;
    m.layout = l;
    m.rows = rows;
    m.cols = cols;
    m.ld = (l == DUET_LAYOUT_ROW_MAJOR ? cols : rows) + 2;
    m.offset = offset;
    m.batch_count = batch;
    m.batch_stride = stride_mode == 0 ? 0 : dt_matrix_extent(&m) + 3;
    return m;
}

static duet_host_matrix host_of(const duet_matrix *m, void *base)
{
    duet_host_matrix h;
    h.data = (char *)base + m->offset * duet_dtype_size(m->dtype);
    h.dtype = m->dtype;
    h.layout = m->layout;
    h.rows = m->rows;
    h.cols = m->cols;
    h.ld = m->ld;
    h.batch_count = m->batch_count;
    h.batch_stride = m->batch_stride;
    return h;
}

static double gen(duet_dtype dt)
{
    switch (dt) {
    case DUET_DTYPE_I32:
    case DUET_DTYPE_I8: return (double)dt_rand_int(-9, 9);
    default: return dt_rand_uniform(-1.0, 1.0);
    }
}

static void fill(const duet_matrix *m, void *data)
{
    for (int64_t b = 0; b < dt_matrix_batches(m); b++)
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++)
                dt_set(data, m->dtype, dt_matrix_index(m, b, i, j), gen(m->dtype));
}

static double out_u(duet_dtype c)
{
    return c == DUET_DTYPE_F16 ? 0x1p-11 : c == DUET_DTYPE_BF16 ? 0x1p-8 : 0.0;
}

/* test_gemm's and test_gemm_lowp's bound: (2k + 4) eps * gauge, plus half an ulp of a
 * narrower C; 8-bit floats on a GPU also 2^-8 gauge, the FP8 tensor core's accumulation
 * (test_fp8, duet.h). */
static double bound(const gcase *t, double ref, double gauge)
{
    const double eps = t->dt.ab == DUET_DTYPE_F64 ? DBL_EPSILON : FLT_EPSILON;
    const int f8_gpu = (t->dt.ab == DUET_DTYPE_F8E4M3 || t->dt.ab == DUET_DTYPE_F8E5M2) &&
                       strcmp(duet_backend_name(), "cpu") != 0;
    const double acc = (2.0 * (double)t->k + 4.0) * eps * gauge + (f8_gpu ? 0x1p-8 * gauge : 0.0);
    return acc + out_u(t->dt.c) * (fabs(ref) + acc) + (out_u(t->dt.c) > 0 ? 0x1p-100 : 0.0);
}

static duet_group *make_group(int members, int64_t tile)
{
    duet_group *g = NULL;
    DT_OK(duet_group_create(g_ctx, members, &g));
    if (g) DT_OK(duet_group_set_tile(g, tile));
    return g;
}

/* Operand q (0 A, 1 B, 2 C) of t: NULL for a host one, else a buffer on its member holding
 * the host array's bytes (guards included), at the same offsets. */
static duet_buffer *device_copy(const gcase *t, int q, const void *host, size_t bytes)
{
    if (!(t->place >> q & 1)) return NULL;
    duet_buffer *buf = NULL;
    DT_OK(duet_buffer_create(g_ctx[(q + t->shift) % t->members], bytes, &buf));
    if (buf) DT_OK(duet_buffer_write(NULL, buf, 0, host, bytes));
    return buf;
}

static duet_group_operand operand(const duet_matrix *m, duet_buffer *buf,
                                  const duet_host_matrix *h, duet_matrix *dev)
{
    if (!buf) return duet_group_host(h);
    *dev = *m;
    dev->buffer = buf;
    return duet_group_device(dev);
}

/* The group's gemm of t: duet_group_gemm when every operand is a host one, else
 * duet_group_gemm_ex; a device C is read back (whole buffer, guards included) into hc's
 * array. */
static duet_status group_run(duet_group *g, const gcase *t, const duet_matrix *a,
                             const duet_matrix *b, const duet_matrix *c, duet_buffer *const *dev,
                             const duet_host_matrix *ha, const duet_host_matrix *hb,
                             duet_host_matrix *hc, void *c_array, size_t c_bytes,
                             const duet_op_options *opt)
{
    if (!t->place) return duet_group_gemm(g, t->op_a, t->op_b, t->alpha, ha, hb, t->beta, hc, opt);
    if (dev[2]) DT_OK(duet_buffer_write(NULL, dev[2], 0, c_array, c_bytes));
    duet_matrix da, db, dc;
    const duet_status st = duet_group_gemm_ex(g, t->op_a, t->op_b, t->alpha,
                                              operand(a, dev[0], ha, &da),
                                              operand(b, dev[1], hb, &db), t->beta,
                                              operand(c, dev[2], hc, &dc), opt);
    if (dev[2]) DT_OK(duet_buffer_read(NULL, dev[2], 0, c_array, c_bytes));
    return st;
}

/* Runs one case on a group and on a single context, checks both against the reference, the
 * guards, a second run's bits, and returns 1 when all is well. */
static int run_case(const gcase *t)
{
    const int before = dt_failures;
    char what[256];
    snprintf(what, sizeof what,
             "%s->%s op %c%c layouts %c%c%c m %lld n %lld k %lld batch %lld bcast %d alpha %g "
             "beta %g members %d tile %lld%s place %c%c%c",
             duet_dtype_name(t->dt.ab), duet_dtype_name(t->dt.c), t->op_a ? 'T' : 'N',
             t->op_b ? 'T' : 'N', t->la ? 'C' : 'R', t->lb ? 'C' : 'R', t->lc ? 'C' : 'R',
             (long long)t->m, (long long)t->n, (long long)t->k, (long long)t->batch, t->bcast,
             t->alpha, t->beta, t->members, (long long)t->tile, t->nan_ab ? " nan A,B" : "",
             t->place & 1 ? '0' + (0 + t->shift) % t->members : 'h',
             t->place & 2 ? '0' + (1 + t->shift) % t->members : 'h',
             t->place & 4 ? '0' + (2 + t->shift) % t->members : 'h');
    const duet_dtype at = t->dt.ab, ct = t->dt.c;
    const size_t ea = duet_dtype_size(at), ec = duet_dtype_size(ct);
    duet_matrix a = describe(at, t->la, t->op_a == DUET_OP_N ? t->m : t->k,
                             t->op_a == DUET_OP_N ? t->k : t->m, t->bcast == 1 ? 1 : t->batch, 1, 0);
    duet_matrix b = describe(at, t->lb, t->op_b == DUET_OP_N ? t->k : t->n,
                             t->op_b == DUET_OP_N ? t->n : t->k, t->batch, t->bcast == 2 ? 0 : 1,
                             0);
    duet_matrix c = describe(ct, t->lc, t->m, t->n, t->batch, 1, GUARD);
    const size_t na = dt_matrix_span_elems(&a) + 1, nb = dt_matrix_span_elems(&b) + 1;
    const size_t nc = dt_matrix_span_elems(&c) + GUARD;
    const int64_t nbat = t->batch > 1 ? t->batch : 1;
    unsigned char *ah = malloc(na * ea), *bh = malloc(nb * ea), *c0 = malloc(nc * ec);
    unsigned char *cg = malloc(nc * ec), *cg2 = malloc(nc * ec), *cs = malloc(nc * ec);
    unsigned char *cref = malloc(nc * ec), *is_c = calloc(nc, 1);
    const size_t nout = (size_t)(nbat * t->m * t->n) + 1;
    double *ref = malloc(nout * sizeof *ref), *gauge = malloc(nout * sizeof *gauge);
    if (!ah || !bh || !c0 || !cg || !cg2 || !cs || !cref || !is_c || !ref || !gauge) {
        fprintf(stderr, "%s: out of host memory\n", what);
        exit(1);
    }
    /* Padding holds the sentinel (NaN for floats): reading it poisons the result. */
    dt_fill_sentinel(ah, at, na);
    dt_fill_sentinel(bh, at, nb);
    if (!t->nan_ab) {
        fill(&a, ah);
        fill(&b, bh);
    }
    dt_fill_sentinel(c0, ct, nc);
    for (int64_t bi = 0; bi < nbat; bi++)
        for (int64_t i = 0; i < t->m; i++)
            for (int64_t j = 0; j < t->n; j++) {
                const size_t ci = dt_matrix_index(&c, bi, i, j);
                is_c[ci] = 1;
                /* beta == 0 must not read C: NaN (or the integer sentinel) stays otherwise. */
                if (t->beta != 0.0) dt_set(c0, ct, ci, gen(ct == DUET_DTYPE_I32 ? ct : at));
            }
    memcpy(cg, c0, nc * ec);
    memcpy(cref, c0, nc * ec);

    /* The group. */
    duet_group *g = make_group(t->members, t->tile);
    duet_host_matrix ha = host_of(&a, ah), hb = host_of(&b, bh), hc = host_of(&c, cg);
    duet_launch_info info;
    memset(&info, 'X', sizeof info);
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.info = &info;
    duet_buffer *dev[3] = {device_copy(t, 0, ah, na * ea), device_copy(t, 1, bh, nb * ea),
                           device_copy(t, 2, c0, nc * ec)};
    duet_status st = group_run(g, t, &a, &b, &c, dev, &ha, &hb, &hc, cg, nc * ec, &opt);
    DT_CHECK(st == DUET_SUCCESS, "%s: duet_group_gemm -> %s: %s", what, duet_status_string(st),
             duet_last_error());
    /* Again, for the bits: the tiles' assignment is fixed. */
    memcpy(cg2, c0, nc * ec);
    hc = host_of(&c, cg2);
    st = group_run(g, t, &a, &b, &c, dev, &ha, &hb, &hc, cg2, nc * ec, NULL);
    DT_CHECK(st == DUET_SUCCESS, "%s: second duet_group_gemm -> %s: %s", what,
             duet_status_string(st), duet_last_error());
    for (int q = 0; q < 3; q++)
        if (dev[q]) DT_OK(duet_buffer_destroy(dev[q]));
    DT_CHECK(memcmp(cg, cg2, nc * ec) == 0, "%s: two runs gave different bits", what);
    if (g) DT_OK(duet_group_destroy(g));

    /* One context, the same problem through duet_gemm. */
    duet_buffer *ab = NULL, *bb = NULL, *cb = NULL;
    DT_OK(duet_buffer_create(g_ctx[0], na * ea, &ab));
    DT_OK(duet_buffer_create(g_ctx[0], nb * ea, &bb));
    DT_OK(duet_buffer_create(g_ctx[0], nc * ec, &cb));
    DT_OK(duet_buffer_write(NULL, ab, 0, ah, na * ea));
    DT_OK(duet_buffer_write(NULL, bb, 0, bh, nb * ea));
    DT_OK(duet_buffer_write(NULL, cb, 0, c0, nc * ec));
    duet_matrix da = a, db = b, dc = c;
    da.buffer = ab;
    db.buffer = bb;
    dc.buffer = cb;
    DT_OK(duet_gemm(NULL, t->op_a, t->op_b, t->alpha, &da, &db, t->beta, &dc, NULL));
    DT_OK(duet_buffer_read(NULL, cb, 0, cs, nc * ec));
    DT_OK(duet_buffer_destroy(ab));
    DT_OK(duet_buffer_destroy(bb));
    DT_OK(duet_buffer_destroy(cb));

    dt_ref_gemm_ex(t->op_a, t->op_b, t->alpha, &a, ah, &b, bh, t->beta, &c, cref, ref, gauge);
    const int exact = ct == DUET_DTYPE_I32 || t->alpha == 0.0 || t->k == 0;
    long bad = 0, bad_single = 0;
    for (int64_t bi = 0; bi < nbat; bi++)
        for (int64_t i = 0; i < t->m; i++)
            for (int64_t j = 0; j < t->n; j++) {
                const size_t ci = dt_matrix_index(&c, bi, i, j);
                const size_t pk = (size_t)((bi * t->m + i) * t->n + j);
                const double got = dt_get(cg, ct, ci), single = dt_get(cs, ct, ci);
                const double want = exact ? dt_get(cref, ct, ci) : ref[pk];
                const double lim = exact ? 0.0 : bound(t, want, gauge[pk]);
                const int ok = fabs(got - want) <= lim || (isnan(got) && isnan(want));
                if (!ok && bad++ < 3)
                    fprintf(stderr, "  %s: C[b=%lld, %lld, %lld] = %.17g, want %.17g (bound %.3g)\n",
                            what, (long long)bi, (long long)i, (long long)j, got, want, lim);
                /* Against one context: both within the bound of the reference, so within twice
                 * of each other. */
                const int ok1 = fabs(got - single) <= 2.0 * lim || (isnan(got) && isnan(single));
                if (!ok1 && bad_single++ < 3)
                    fprintf(stderr, "  %s: C[b=%lld, %lld, %lld] = %.17g, one context %.17g\n",
                            what, (long long)bi, (long long)i, (long long)j, got, single);
            }
    DT_CHECK(bad == 0, "%s: %ld elements of C wrong", what, bad);
    DT_CHECK(bad_single == 0, "%s: %ld elements differ from a single-context duet_gemm", what,
             bad_single);
    long hit = 0;
    for (size_t x = 0; x < nc; x++)
        if (!is_c[x] && !dt_is_sentinel(cg, ct, x)) hit++;
    DT_CHECK(hit == 0, "%s: %ld guard elements overwritten", what, hit);
    if (t->m > 0 && t->n > 0)
        DT_CHECK(info.launches != 0x58585858,
                 "%s: options.info not filled", what);

    free(ah);
    free(bh);
    free(c0);
    free(cg);
    free(cg2);
    free(cs);
    free(cref);
    free(is_c);
    free(ref);
    free(gauge);
    return dt_failures == before;
}

static void test_group_gemm(int quick)
{
    const int64_t shapes[][3] = {{23, 19, 13}, {16, 32, 5}, {1, 30, 9}, {17, 1, 40}};
    const int nshapes = quick ? 2 : 4;
    const int ndt = (int)(sizeof k_dtypes / sizeof k_dtypes[0]);
    long cases = 0;
    /* Every op and layout combination, for every dtype row, on groups of 1, 2 and 3. */
    for (int d = 0; d < ndt; d++)
        for (int combo = 0; combo < 32; combo++) {
            gcase t;
            memset(&t, 0, sizeof t);
            t.dt = k_dtypes[d];
            t.op_a = (duet_op)(combo & 1);
            t.op_b = (duet_op)((combo >> 1) & 1);
            t.la = (duet_layout)((combo >> 2) & 1);
            t.lb = (duet_layout)((combo >> 3) & 1);
            t.lc = (duet_layout)((combo >> 4) & 1);
            const int64_t *sh = shapes[combo % nshapes];
            t.m = sh[0];
            t.n = sh[1];
            t.k = sh[2];
            t.batch = 1;
            t.alpha = 1.5;
            t.beta = (combo % 3 == 0) ? 0.0 : -0.5;
            if (t.dt.c == DUET_DTYPE_I32) {
                t.alpha = 2;
                t.beta = t.beta == 0.0 ? 0.0 : -1;
            }
            t.members = 1 + combo % 3;
            t.tile = (combo & 4) ? 7 : 16;
            /* Every host/device placement of A, B, C for every dtype, on varying members. */
            t.place = (combo * 3 + d) % 8;
            t.shift = combo / 8;
            if (quick && d >= 4 && combo % 4 != 0) continue;
            if (!run_case(&t) && dt_failures > 20) return;
            cases++;
        }
    /* Batches (strided, A broadcast, B with stride 0), and the BLAS corner cases. */
    for (int d = 0; d < ndt; d++)
        for (int v = 0; v < 11; v++) {
            gcase t;
            memset(&t, 0, sizeof t);
            t.dt = k_dtypes[d];
            t.op_a = (duet_op)(v & 1);
            t.op_b = DUET_OP_T;
            t.la = DUET_LAYOUT_COL_MAJOR;
            t.lb = DUET_LAYOUT_ROW_MAJOR;
            t.lc = (duet_layout)(v & 1);
            t.m = 13;
            t.n = 11;
            t.k = 6;
            t.batch = 3;
            t.alpha = t.dt.c == DUET_DTYPE_I32 ? 3 : 0.75;
            t.beta = t.dt.c == DUET_DTYPE_I32 ? 2 : 1.25;
            t.members = 1 + v % 3;
            t.tile = 5;
            t.place = (v + d) % 8;
            t.shift = d;
            switch (v) {
            case 0: break;
            case 1: t.bcast = 1; break;
            case 2: t.bcast = 2; break;
            case 3: t.alpha = 0.0; t.nan_ab = 1; break;            /* A, B never read */
            case 4: t.beta = 0.0; break;                           /* C never read    */
            case 5: t.alpha = 0.0; t.beta = 0.0; t.nan_ab = 1; break;
            case 6: t.k = 0; break;                                /* C = beta * C    */
            case 7: t.m = 0; break;                                /* nothing written */
            case 8: t.n = 0; t.batch = 1; break;
            /* Two tile rows and columns: both panel caches would hit across a batch boundary
             * if they forgot the batch (and must, for a broadcast A). */
            case 9: t.m = 6; t.n = 8; break;
            case 10: t.m = 6; t.n = 8; t.bcast = 1; break;
            }
            if (!run_case(&t) && dt_failures > 20) return;
            cases++;
        }
    /* The default tile (no DUET_GROUP_TILE in the test's environment is assumed: a set one is
     * just another tile) on a shape larger than one tile of the default's smallest edge. */
    {
        gcase t;
        memset(&t, 0, sizeof t);
        t.dt = k_dtypes[0];
        t.m = quick ? 300 : 600;
        t.n = 260;
        t.k = 8;
        t.batch = 1;
        t.alpha = 1.0;
        t.beta = 1.0;
        t.members = 3;
        t.tile = 0;
        run_case(&t);
        cases++;
        /* DUET_GROUP_TILE picks the default tile: a small one gives many edge tiles. */
        const char *old = getenv("DUET_GROUP_TILE");
        char saved[64];
        snprintf(saved, sizeof saved, "%s", old ? old : "");
        setenv("DUET_GROUP_TILE", "37", 1);
        t.m = 100;
        t.n = 90;
        t.members = 2;
        run_case(&t);
        cases++;
        if (old)
            setenv("DUET_GROUP_TILE", saved, 1);
        else
            unsetenv("DUET_GROUP_TILE");
    }
    printf("group gemm: %ld cases\n", cases);
}

/* ---- bad arguments ----------------------------------------------------------------------- */

static void test_bad_args(void)
{
    duet_group *g = NULL;
    duet_context *ctxs[3] = {g_ctx[0], g_ctx[1], g_ctx[0]};
    DT_FAILS(duet_group_create(NULL, 1, &g), DUET_ERROR_INVALID_ARGUMENT, "contexts");
    DT_FAILS(duet_group_create(g_ctx, 0, &g), DUET_ERROR_INVALID_ARGUMENT, "count");
    DT_FAILS(duet_group_create(g_ctx, DUET_GROUP_MAX + 1, &g), DUET_ERROR_INVALID_ARGUMENT,
             "count");
    DT_FAILS(duet_group_create(g_ctx, 1, NULL), DUET_ERROR_INVALID_ARGUMENT, "group");
    DT_FAILS(duet_group_create(ctxs, 3, &g), DUET_ERROR_INVALID_ARGUMENT, "contexts[2]");
    ctxs[1] = NULL;
    DT_FAILS(duet_group_create(ctxs, 2, &g), DUET_ERROR_INVALID_HANDLE, "contexts[1]");
    DT_CHECK(g == NULL, "a failed duet_group_create leaves *group NULL");
    DT_FAILS(duet_group_destroy(NULL), DUET_ERROR_INVALID_HANDLE, "group");
    DT_FAILS(duet_group_set_tile(NULL, 4), DUET_ERROR_INVALID_HANDLE, "group");

    /* A 4 x 4 f32 problem whose C must stay untouched by every failing call. */
    float a[16], b[16], c[16 + 2 * GUARD], c_before[16 + 2 * GUARD];
    for (int i = 0; i < 16; i++) a[i] = b[i] = (float)i;
    for (int i = 0; i < 16 + 2 * GUARD; i++) c[i] = (float)(1000 + i);
    memcpy(c_before, c, sizeof c);
    duet_host_matrix ha = {a, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 4, 4, 4, 1, 0};
    duet_host_matrix hb = ha, hc = ha;
    hb.data = b;
    hc.data = c + GUARD;
    duet_context *extra = NULL;
    DT_OK(duet_context_create(0, &extra));
    duet_context *two[2] = {g_ctx[0], extra};
    DT_OK(duet_group_create(two, 2, &g));
    DT_FAILS(duet_group_set_tile(g, -1), DUET_ERROR_INVALID_ARGUMENT, "tile");
    DT_OK(duet_group_set_tile(g, 3));
    DT_FAILS(duet_group_gemm(NULL, DUET_OP_N, DUET_OP_N, 1, &ha, &hb, 0, &hc, NULL),
             DUET_ERROR_INVALID_HANDLE, "group");
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, NULL, &hb, 0, &hc, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "A");
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &ha, NULL, 0, &hc, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "B");
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &ha, &hb, 0, NULL, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "C");
    DT_FAILS(duet_group_gemm(g, (duet_op)7, DUET_OP_N, 1, &ha, &hb, 0, &hc, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "op_a");
    duet_host_matrix bad = ha;
    bad.ld = 3;
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &bad, &hb, 0, &hc, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "lda (3)");
    bad = hc;
    bad.ld = 2;
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &ha, &hb, 0, &bad, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "ldc (2)");
    bad = ha;
    bad.data = NULL;
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &bad, &hb, 0, &hc, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "A.data");
    double bd[16] = {0};
    bad = hb;
    bad.data = bd;
    bad.dtype = DUET_DTYPE_F64;
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &ha, &bad, 0, &hc, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "duet_group_gemm: A f32, B f64");
    bad = hb;
    bad.rows = 3;
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &ha, &bad, 0, &hc, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "inner dimensions");
    bad = hc;
    bad.batch_count = 2;
    bad.batch_stride = 8;
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &ha, &hb, 0, &bad, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "C.batch_stride");
    bad = ha;
    bad.data = c + GUARD + 2; /* A inside C */
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &bad, &hb, 0, &hc, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "overlaps A");
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.math = DUET_MATH_TF32;
    duet_host_matrix a64 = ha, b64 = hb, c64 = hc;
    a64.dtype = b64.dtype = c64.dtype = DUET_DTYPE_F64;
    a64.rows = a64.cols = b64.rows = b64.cols = c64.rows = c64.cols = 2;
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &a64, &b64, 0, &c64, &opt),
             DUET_ERROR_INVALID_ARGUMENT, "options.math");
    opt.math = DUET_MATH_DEFAULT;
    opt.algorithm = (duet_algorithm)99;
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &ha, &hb, 0, &hc, &opt),
             DUET_ERROR_INVALID_ARGUMENT, "options.algorithm");
    duet_host_matrix i32a = ha, i32b = hb, i32c = hc;
    i32a.dtype = i32b.dtype = i32c.dtype = DUET_DTYPE_I32;
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1.5, &i32a, &i32b, 0, &i32c, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "alpha");
    DT_CHECK(memcmp(c, c_before, sizeof c) == 0, "C written by a failing duet_group_gemm");

    /* Device operands (duet_group_gemm_ex): A and C in one buffer of a member, B of a context
     * outside the group; C's buffer must stay as it was after every failing call. */
    {
        duet_buffer *mine = NULL, *foreign = NULL;
        DT_OK(duet_buffer_create(extra, sizeof c + sizeof a, &mine));
        DT_OK(duet_buffer_create(g_ctx[1], sizeof b, &foreign));
        DT_OK(duet_buffer_write(NULL, mine, 0, c, sizeof c));
        DT_OK(duet_buffer_write(NULL, mine, sizeof c, a, sizeof a));
        DT_OK(duet_buffer_write(NULL, foreign, 0, b, sizeof b));
        duet_matrix dc = duet_matrix_make(mine, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 4, 4);
        dc.offset = GUARD;
        duet_matrix da = dc, db = dc;
        da.offset = 16 + 2 * GUARD;
        db.buffer = foreign;
        db.offset = 0;
        const duet_group_operand oa = duet_group_device(&da), ob = duet_group_host(&hb),
                                 oc = duet_group_device(&dc);
        DT_OK(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, oa, ob, 1, oc, NULL)); /* C += AB */
        float want[16 + 2 * GUARD], got[16 + 2 * GUARD];
        memcpy(want, c_before, sizeof want);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                for (int k = 0; k < 4; k++) want[GUARD + i * 4 + j] += a[i * 4 + k] * b[k * 4 + j];
        DT_OK(duet_buffer_read(NULL, mine, 0, got, sizeof got));
        DT_CHECK(memcmp(got, want, sizeof got) == 0, "device A and C in one buffer of a member");
        DT_FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, oa, duet_group_device(&db), 0, oc,
                                    NULL),
                 DUET_ERROR_INVALID_ARGUMENT,
                 "duet_group_gemm_ex: B.buffer belongs to a context that is not one of the "
                 "group's");
        duet_group_operand both = oa;
        both.host = &ha;
        DT_FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, both, ob, 0, oc, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "duet_group_gemm_ex: A has both host and device");
        DT_FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, oa, ob, 0,
                                    duet_group_device(NULL), NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "duet_group_gemm_ex: C is NULL");
        duet_matrix bad_d = da;
        bad_d.offset = 16 + 2 * GUARD + 1; /* one element past the buffer's end */
        DT_FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, duet_group_device(&bad_d), ob, 0,
                                    oc, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "the buffer is too small");
        bad_d = da;
        bad_d.offset = GUARD + 3; /* A inside C, in one buffer */
        DT_FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, duet_group_device(&bad_d), ob, 0,
                                    oc, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "duet_group_gemm_ex: C overlaps A in its buffer");
        bad_d = da;
        bad_d.ld = 3;
        DT_FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, duet_group_device(&bad_d), ob, 0,
                                    oc, NULL),
                 DUET_ERROR_INVALID_ARGUMENT, "lda (3)");
        bad_d = da;
        bad_d.buffer = NULL;
        DT_FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1, duet_group_device(&bad_d), ob, 0,
                                    oc, NULL),
                 DUET_ERROR_INVALID_HANDLE, "A.buffer is NULL");
        DT_FAILS(duet_group_gemm_ex(g, DUET_OP_N, DUET_OP_N, 1.5, oa, ob, 0, oc, &opt),
                 DUET_ERROR_INVALID_ARGUMENT, "duet_group_gemm_ex: options.algorithm");
        DT_OK(duet_buffer_read(NULL, mine, 0, got, sizeof got));
        DT_CHECK(memcmp(got, want, sizeof got) == 0, "device C written by a failing call");
        DT_OK(duet_buffer_destroy(mine));
        DT_OK(duet_buffer_destroy(foreign));
    }

    /* A member context destroyed under the group. */
    DT_OK(duet_context_destroy(extra));
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &ha, &hb, 0, &hc, NULL),
             DUET_ERROR_INVALID_HANDLE, "destroyed");
    DT_CHECK(memcmp(c, c_before, sizeof c) == 0, "C written after a member was destroyed");
    DT_OK(duet_group_destroy(g));
    DT_FAILS(duet_group_destroy(g), DUET_ERROR_INVALID_HANDLE, "group");
    DT_FAILS(duet_group_gemm(g, DUET_OP_N, DUET_OP_N, 1, &ha, &hb, 0, &hc, NULL),
             DUET_ERROR_INVALID_HANDLE, "group");
    two[1] = extra; /* destroyed */
    DT_FAILS(duet_group_create(two, 2, &g), DUET_ERROR_INVALID_HANDLE, "contexts[1]");
}

int main(int argc, char **argv)
{
    const int quick = dt_quick_mode(argc, argv);
    dt_seed(14);
    g_ctx[0] = dt_open_or_skip();
    DT_OK(duet_context_create(0, &g_ctx[1]));
    DT_OK(duet_context_create(0, &g_ctx[2]));
    if (!g_ctx[1] || !g_ctx[2]) return dt_finish("test_group");
    test_copy_peer();
    test_bad_args();
    test_group_gemm(quick);
    /* Several devices: the same copies (peer copies now) and gemms over devices 0, 1, 2. */
    int count = 0;
    DT_OK(duet_device_count(&count));
    if (count >= 2) {
        printf("again over devices 0, 1 and %d\n", 2 % count);
        DT_OK(duet_context_destroy(g_ctx[2]));
        DT_OK(duet_context_destroy(g_ctx[1]));
        g_ctx[1] = g_ctx[2] = NULL;
        DT_OK(duet_context_create(1, &g_ctx[1]));
        DT_OK(duet_context_create(2 % count, &g_ctx[2]));
        if (!g_ctx[1] || !g_ctx[2]) return dt_finish("test_group");
        g_one_device = 0;
        test_copy_peer();
        test_group_gemm(1);
    }
    DT_OK(duet_context_destroy(g_ctx[2]));
    DT_OK(duet_context_destroy(g_ctx[1]));
    DT_OK(duet_context_destroy(g_ctx[0]));
    return dt_finish("test_group");
}
