/* test_fp8.c - conformance of the 8-bit float dtypes: duet_convert and FP8 GEMM against references here. */
/*
 * The reference knows the formats only by definition: an element's value comes from
 * dt_get (the harness decodes every dtype by its fields), and a value is encoded to an
 * 8-bit float by dt_f8_encode, a search over every code for the nearest (ties to the even
 * code), or to f16/bf16 by dt_set. Results are compared bit for bit, NaN included (duet.h
 * promises its dtype's canonical quiet NaN with the sign of the source).
 */
#include "harness.h"

#include <float.h>

static duet_context *ctx;
static int quick;

static const duet_dtype g_types[] = {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16,
                                     DUET_DTYPE_F8E4M3, DUET_DTYPE_F8E5M2};
enum { NTYPES = 5 };

static int is_f8(duet_dtype d) { return d == DUET_DTYPE_F8E4M3 || d == DUET_DTYPE_F8E5M2; }

/* The raw bits of element i of host data of dtype d. */
static uint32_t raw_bits(const void *data, duet_dtype d, size_t i)
{
    const unsigned char *p = (const unsigned char *)data;
    uint32_t u = 0;
    uint16_t h;
    switch (duet_dtype_size(d)) {
    case 1: return p[i];
    case 2: memcpy(&h, p + 2 * i, 2); return h;
    default: memcpy(&u, p + 4 * i, 4); return u;
    }
}

static int sign_of(uint32_t bits, duet_dtype d) { return (int)(bits >> (8 * duet_dtype_size(d) - 1) & 1u); }

/* The canonical quiet NaN of d with the given sign (duet.h). */
static uint32_t nan_bits(duet_dtype d, int neg)
{
    switch (d) {
    case DUET_DTYPE_F16: return (neg ? 0x8000u : 0u) | 0x7E00u;
    case DUET_DTYPE_BF16: return (neg ? 0x8000u : 0u) | 0x7FC0u;
    case DUET_DTYPE_F8E4M3: return (neg ? 0x80u : 0u) | 0x7Fu;
    case DUET_DTYPE_F8E5M2: return (neg ? 0x80u : 0u) | 0x7Eu;
    default: return (neg ? 0x80000000u : 0u) | 0x7FC00000u;
    }
}

/* v (an f32 value, or NaN) encoded in d. */
static uint32_t encode_ref(double v, duet_dtype d, int saturate, int neg_nan)
{
    if (isnan(v)) return nan_bits(d, neg_nan);
    if (is_f8(d)) return dt_f8_encode(v, d, saturate);
    unsigned char tmp[4];
    dt_set(tmp, d, 0, v);
    return raw_bits(tmp, d, 0);
}

/* The expected bits of dst element for src element i; *any_sign_nan is set when the result
 * is NaN of either sign (NaN times a scale: IEEE leaves the sign of that NaN open). */
static uint32_t expect_one(const void *src, duet_dtype sd, size_t i, duet_dtype dd, int saturate,
                           const float *scale, int *any_sign_nan)
{
    const uint32_t sb = raw_bits(src, sd, i);
    double v = dt_get(src, sd, i);
    *any_sign_nan = 0;
    if (scale) {
        /* One f32 rounding of the exact product (both factors have 24-bit significands, so the
         * double product is exact); the cases here stay inside f32's range. */
        const double p = v * (double)*scale;
        if (isnan(p)) {
            *any_sign_nan = 1;
            return nan_bits(dd, 0);
        }
        v = (double)(float)p;
    }
    return encode_ref(v, dd, saturate, sign_of(sb, sd));
}

static int same_result(uint32_t got, uint32_t want, duet_dtype dd, int any_sign_nan)
{
    if (any_sign_nan) return got == nan_bits(dd, 0) || got == nan_bits(dd, 1);
    return got == want;
}

/* Runs src (n packed elements of sd, as a 1 x n row) through duet_convert into dd and checks
 * every element, and amax when asked. */
static void check_convert(const char *what, duet_dtype sd, const void *src, size_t n, duet_dtype dd,
                          duet_convert_overflow ovf, const float *scale, int want_amax)
{
    const size_t es = duet_dtype_size(sd), ed = duet_dtype_size(dd);
    duet_buffer *bs = NULL, *bd = NULL, *bx = NULL;
    DT_OK(duet_buffer_create(ctx, n * es, &bs));
    DT_OK(duet_buffer_create(ctx, n * ed, &bd));
    DT_OK(duet_buffer_create(ctx, 2 * sizeof(float), &bx)); /* [0] scale, [1] amax */
    DT_OK(duet_buffer_write(NULL, bs, 0, src, n * es));
    const float sentinel = -12345.0f;
    const float sv[2] = {scale ? *scale : 1.0f, sentinel};
    DT_OK(duet_buffer_write(NULL, bx, 0, sv, sizeof sv));
    duet_matrix ms = duet_matrix_make(bs, sd, DUET_LAYOUT_ROW_MAJOR, 1, (int64_t)n);
    duet_matrix md = duet_matrix_make(bd, dd, DUET_LAYOUT_ROW_MAJOR, 1, (int64_t)n);
    duet_matrix mscale = duet_matrix_make(bx, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
    duet_matrix mamax = mscale;
    mamax.offset = 1;
    duet_launch_info info;
    duet_convert_options opt;
    memset(&opt, 0, sizeof opt);
    opt.overflow = ovf;
    opt.scale = scale ? &mscale : NULL;
    opt.amax = want_amax ? &mamax : NULL;
    opt.info = &info;
    DT_OK(duet_convert(NULL, &ms, &md, &opt));
    DT_CHECK(info.launches >= 1 && info.kernel[0] != '\0', "%s: info says %d launches, \"%s\"", what,
             info.launches, info.kernel);
    unsigned char *got = (unsigned char *)malloc(n * ed);
    DT_OK(duet_buffer_read(NULL, bd, 0, got, n * ed));
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        int any;
        const uint32_t want = expect_one(src, sd, i, dd, ovf == DUET_CONVERT_SATURATE, scale, &any);
        const uint32_t g = raw_bits(got, dd, i);
        if (!same_result(g, want, dd, any)) {
            if (bad++ < 8)
                fprintf(stderr, "%s: %s -> %s%s%s: src bits 0x%x (%.9g) gave 0x%x, want 0x%x\n", what,
                        duet_dtype_name(sd), duet_dtype_name(dd),
                        ovf == DUET_CONVERT_SATURATE ? "" : " (overflow)", scale ? " (scaled)" : "",
                        (unsigned)raw_bits(src, sd, i), dt_get(src, sd, i), (unsigned)g, (unsigned)want);
        }
    }
    DT_CHECK(bad == 0, "%s: %d of %zu elements differ", what, bad, n);
    if (want_amax) {
        float back[2];
        DT_OK(duet_buffer_read(NULL, bx, 0, back, sizeof back));
        double m = 0.0;
        int nan = 0;
        for (size_t i = 0; i < n; i++) {
            const double v = dt_get(src, sd, i);
            if (isnan(v)) nan = 1;
            else if (fabs(v) > m) m = fabs(v);
        }
        uint32_t gb;
        memcpy(&gb, &back[1], 4);
        if (nan)
            DT_CHECK(gb == 0x7FC00000u, "%s: amax bits 0x%x, want the quiet NaN", what, (unsigned)gb);
        else
            DT_CHECK((double)back[1] == m && !signbit(back[1]), "%s: amax %.9g, want %.9g", what,
                     back[1], m);
        DT_CHECK(back[0] == sv[0], "%s: the scale was written", what);
    }
    free(got);
    DT_OK(duet_buffer_destroy(bs));
    DT_OK(duet_buffer_destroy(bd));
    DT_OK(duet_buffer_destroy(bx));
}

/* ---- source sets ------------------------------------------------------------------------- */

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

typedef struct fvec {
    float *v;
    size_t n, cap;
} fvec;

static void push(fvec *s, float x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = (float *)realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = x;
}

/* x and its f32 neighbours, both signs. */
static void push_around(fvec *s, float x)
{
    const float c[3] = {nextafterf(x, 0.0f), x, nextafterf(x, INFINITY)};
    for (int k = 0; k < 3; k++) {
        push(s, c[k]);
        push(s, -c[k]);
    }
}

/* f32 values dense where 8-bit floats decide: every value of both formats, every midpoint (the
 * ties) and their neighbours, the overflow thresholds, subnormals, half the smallest
 * subnormal, zeros, infinities, NaNs of both signs and several payloads, f32 subnormals; then
 * random bit patterns. */
static void f32_set(fvec *s)
{
    const duet_dtype f8[2] = {DUET_DTYPE_F8E4M3, DUET_DTYPE_F8E5M2};
    for (int t = 0; t < 2; t++) {
        const unsigned maxcode = f8[t] == DUET_DTYPE_F8E4M3 ? 0x7Eu : 0x7Bu;
        for (unsigned c = 0; c <= maxcode; c++) {
            const double a = dt_f8_decode(c, f8[t]);
            const double b = c < maxcode ? dt_f8_decode(c + 1, f8[t])
                                         : a + (a - dt_f8_decode(c - 1, f8[t]));
            push_around(s, (float)a);
            push_around(s, (float)((a + b) / 2)); /* exact in f32: a 5-bit significand */
            push_around(s, (float)(a + (b - a) / 4));
        }
        const double minsub = dt_f8_decode(1, f8[t]);
        push_around(s, (float)(minsub / 2));
        push_around(s, (float)(minsub / 4));
        push_around(s, (float)(minsub * 0.75));
    }
    push_around(s, 65504.0f); /* f16's largest finite and its overflow tie 65520 */
    push_around(s, 65520.0f);
    push_around(s, FLT_MAX);
    push_around(s, 1e30f);
    push_around(s, FLT_MIN);
    push_around(s, f32_of(1u)); /* the smallest f32 subnormal */
    push_around(s, f32_of(0x00400000u));
    push(s, 0.0f), push(s, -0.0f), push(s, INFINITY), push(s, -INFINITY);
    const uint32_t nans[4] = {0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0x7FA5A5A5u};
    for (int k = 0; k < 4; k++) push(s, f32_of(nans[k])), push(s, f32_of(nans[k] | 0x80000000u));
    const int nrand = quick ? 20000 : 400000;
    for (int k = 0; k < nrand; k++) push(s, f32_of((uint32_t)dt_rand_u64()));
    /* Random values in the 8-bit floats' own range, where most random bit patterns are not. */
    for (int k = 0; k < nrand; k++) {
        const uint32_t u = (uint32_t)dt_rand_u64();
        push(s, f32_of((u & 0x807FFFFFu) | (uint32_t)(100 + (u >> 23) % 50) << 23));
    }
}

static void convert_exhaustive_decode(void)
{
    /* Every code of each 8-bit float into every dtype, both overflow modes. */
    const duet_dtype f8[2] = {DUET_DTYPE_F8E4M3, DUET_DTYPE_F8E5M2};
    unsigned char codes[256];
    for (int c = 0; c < 256; c++) codes[c] = (unsigned char)c;
    for (int t = 0; t < 2; t++)
        for (int d = 0; d < NTYPES; d++)
            for (int o = 0; o < 2; o++)
                check_convert("all codes", f8[t], codes, 256, g_types[d], (duet_convert_overflow)o,
                              NULL, 1);
}

static void convert_from_wide(void)
{
    fvec s = {0};
    f32_set(&s);
    for (int d = 0; d < NTYPES; d++)
        for (int o = 0; o < 2; o++)
            check_convert("dense f32", DUET_DTYPE_F32, s.v, s.n, g_types[d], (duet_convert_overflow)o,
                          NULL, o == 0);
    /* Every f16 and bf16 pattern into the 8-bit floats (and f16 <-> bf16). */
    uint16_t *all = (uint16_t *)malloc(65536 * 2);
    const int step = quick ? 7 : 1;
    size_t n = 0;
    for (uint32_t u = 0; u < 65536; u += (uint32_t)step) all[n++] = (uint16_t)u;
    const duet_dtype half[2] = {DUET_DTYPE_F16, DUET_DTYPE_BF16};
    for (int h = 0; h < 2; h++)
        for (int d = 0; d < NTYPES; d++)
            for (int o = 0; o < 2; o++)
                if (is_f8(g_types[d]) || o == 0)
                    check_convert("16-bit patterns", half[h], all, n, g_types[d],
                                  (duet_convert_overflow)o, NULL, o == 0);
    free(all);
    free(s.v);
}

static void convert_scaled(void)
{
    /* Scales that round (1/3, 3) and that do not (0.5, 2^-10), on values whose products stay in
     * f32's range; NaN and inf included (inf * 0 is NaN). */
    fvec s = {0};
    const duet_dtype f8[2] = {DUET_DTYPE_F8E4M3, DUET_DTYPE_F8E5M2};
    for (int t = 0; t < 2; t++)
        for (unsigned c = 0; c < 256; c++) push(&s, (float)dt_f8_decode(c, f8[t]));
    const int nrand = quick ? 5000 : 100000;
    for (int k = 0; k < nrand; k++) push(&s, (float)(dt_rand_normal() * 300.0));
    push(&s, 1e30f), push(&s, -1e-30f), push(&s, 0.0f), push(&s, -0.0f);
    const float scales[5] = {1.0f / 3.0f, 3.0f, 0.5f, 0x1p-10f, 0.0f};
    for (int k = 0; k < 5; k++)
        for (int d = 0; d < NTYPES; d++)
            check_convert("scaled", DUET_DTYPE_F32, s.v, s.n, g_types[d], DUET_CONVERT_SATURATE,
                          &scales[k], 1);
    /* A scaled 8-bit source. */
    unsigned char codes[256];
    for (int c = 0; c < 256; c++) codes[c] = (unsigned char)c;
    check_convert("scaled codes", DUET_DTYPE_F8E4M3, codes, 256, DUET_DTYPE_F8E5M2,
                  DUET_CONVERT_OVERFLOW, &scales[1], 1);
    check_convert("scaled codes", DUET_DTYPE_F8E5M2, codes, 256, DUET_DTYPE_F8E4M3,
                  DUET_CONVERT_SATURATE, &scales[0], 1);
    free(s.v);
}

/* Layouts, lds, offsets, batches (a broadcast src) and guards: dst's padding and the memory
 * around it stay as they were. */
static void convert_strided(void)
{
    const duet_layout lay[2] = {DUET_LAYOUT_ROW_MAJOR, DUET_LAYOUT_COL_MAJOR};
    const int64_t shapes[][2] = {{1, 1}, {3, 5}, {17, 33}, {64, 7}};
    for (int sh = 0; sh < 4; sh++)
        for (int ls = 0; ls < 2; ls++)
            for (int ld = 0; ld < 2; ld++)
                for (int bc = 0; bc < 2; bc++) {
                    const duet_dtype sd = sh % 2 ? DUET_DTYPE_F32 : DUET_DTYPE_BF16;
                    const duet_dtype dd = bc ? DUET_DTYPE_F8E5M2 : DUET_DTYPE_F8E4M3;
                    const int64_t rows = shapes[sh][0], cols = shapes[sh][1], batch = 3;
                    duet_matrix ms = duet_matrix_make(NULL, sd, lay[ls], rows, cols);
                    duet_matrix md = duet_matrix_make(NULL, dd, lay[ld], rows, cols);
                    ms.ld += 2, md.ld += 3;
                    ms.offset = 5, md.offset = 7;
                    md.batch_count = batch;
                    md.batch_stride = dt_matrix_extent(&md) + 4;
                    if (!bc) {
                        ms.batch_count = batch;
                        ms.batch_stride = dt_matrix_extent(&ms) + 1;
                    }
                    const size_t ns = dt_matrix_span_elems(&ms) + 9, nd = dt_matrix_span_elems(&md) + 9;
                    unsigned char *hs = (unsigned char *)malloc(ns * 4), *hd = (unsigned char *)malloc(nd);
                    for (size_t i = 0; i < ns; i++) dt_set(hs, sd, i, dt_rand_normal() * 100.0);
                    dt_fill_sentinel(hd, dd, nd);
                    duet_buffer *bs = NULL, *bd = NULL;
                    DT_OK(duet_buffer_create(ctx, ns * duet_dtype_size(sd), &bs));
                    DT_OK(duet_buffer_create(ctx, nd, &bd));
                    DT_OK(duet_buffer_write(NULL, bs, 0, hs, ns * duet_dtype_size(sd)));
                    DT_OK(duet_buffer_write(NULL, bd, 0, hd, nd));
                    ms.buffer = bs, md.buffer = bd;
                    DT_OK(duet_convert(NULL, &ms, &md, NULL));
                    unsigned char *got = (unsigned char *)malloc(nd);
                    DT_OK(duet_buffer_read(NULL, bd, 0, got, nd));
                    unsigned char *touched = (unsigned char *)calloc(nd, 1);
                    int bad = 0;
                    for (int64_t b = 0; b < batch; b++)
                        for (int64_t i = 0; i < rows; i++)
                            for (int64_t j = 0; j < cols; j++) {
                                const size_t si = dt_matrix_index(&ms, bc ? 0 : b, i, j);
                                const size_t di = dt_matrix_index(&md, b, i, j);
                                touched[di] = 1;
                                int any;
                                const uint32_t want = expect_one(hs, sd, si, dd, 1, NULL, &any);
                                if (got[di] != want && bad++ < 4)
                                    fprintf(stderr, "strided %lldx%lld (%lld,%lld,%lld): 0x%x, want 0x%x\n",
                                            (long long)rows, (long long)cols, (long long)b, (long long)i,
                                            (long long)j, got[di], (unsigned)want);
                            }
                    for (size_t i = 0; i < nd; i++)
                        if (!touched[i] && !dt_is_sentinel(got, dd, i) && bad++ < 4)
                            fprintf(stderr, "strided: element %zu outside dst was written\n", i);
                    DT_CHECK(bad == 0, "strided %lld x %lld layouts %d/%d broadcast %d: %d bad",
                             (long long)rows, (long long)cols, ls, ld, bc, bad);
                    free(hs), free(hd), free(got), free(touched);
                    DT_OK(duet_buffer_destroy(bs));
                    DT_OK(duet_buffer_destroy(bd));
                }
}

/* ---- misuse ------------------------------------------------------------------------------ */

static void convert_misuse(void)
{
    duet_buffer *b = NULL, *ro_free = NULL;
    DT_OK(duet_buffer_create(ctx, 4096, &b));
    duet_matrix s = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 4, 8);
    duet_matrix d = duet_matrix_make(b, DUET_DTYPE_F8E4M3, DUET_LAYOUT_ROW_MAJOR, 4, 8);
    d.offset = 1024;
    duet_matrix sc = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
    sc.offset = 512;
    duet_matrix am = sc;
    am.offset = 513;
    /* The sentinel bytes of dst: nothing may be written on an error. */
    unsigned char before[32], after[32];
    memset(before, 0xA5, sizeof before);
    DT_OK(duet_buffer_write(NULL, b, 1024, before, sizeof before));
    const float amax0 = -7.0f;
    DT_OK(duet_buffer_write(NULL, b, 513 * 4, &amax0, 4));
    duet_convert_options o;
    memset(&o, 0, sizeof o);
    o.amax = &am;

    DT_FAILS(duet_convert(NULL, NULL, &d, NULL), DUET_ERROR_INVALID_ARGUMENT, "src");
    DT_FAILS(duet_convert(NULL, &s, NULL, NULL), DUET_ERROR_INVALID_ARGUMENT, "dst");
    duet_matrix x = s;
    x.dtype = DUET_DTYPE_F64;
    DT_FAILS(duet_convert(NULL, &x, &d, &o), DUET_ERROR_UNSUPPORTED, "f64");
    x = d;
    x.dtype = DUET_DTYPE_I8;
    DT_FAILS(duet_convert(NULL, &s, &x, &o), DUET_ERROR_UNSUPPORTED, "i8");
    x = d;
    x.dtype = (duet_dtype)99;
    DT_FAILS(duet_convert(NULL, &s, &x, &o), DUET_ERROR_INVALID_ARGUMENT, "dst.dtype");
    x = d;
    x.cols = 7;
    DT_FAILS(duet_convert(NULL, &s, &x, &o), DUET_ERROR_INVALID_ARGUMENT, "dst is 4 x 7");
    x = d;
    x.batch_count = 2;
    x.batch_stride = 32;
    duet_matrix y = s;
    y.batch_count = 3;
    y.batch_stride = 32;
    DT_FAILS(duet_convert(NULL, &y, &x, &o), DUET_ERROR_INVALID_ARGUMENT, "src.batch_count");
    x = d;
    x.offset = 16; /* bytes [16, 48) of an f8 dst within src's [0, 128) */
    DT_FAILS(duet_convert(NULL, &s, &x, &o), DUET_ERROR_INVALID_ARGUMENT, "overlaps src");
    duet_convert_options bad = o;
    bad.overflow = (duet_convert_overflow)2;
    DT_FAILS(duet_convert(NULL, &s, &d, &bad), DUET_ERROR_INVALID_ARGUMENT, "options.overflow");
    bad = o;
    duet_matrix sc2 = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 2);
    sc2.offset = 512;
    bad.scale = &sc2;
    DT_FAILS(duet_convert(NULL, &s, &d, &bad), DUET_ERROR_INVALID_ARGUMENT, "options.scale");
    sc2 = sc;
    sc2.dtype = DUET_DTYPE_F16;
    bad.scale = &sc2;
    DT_FAILS(duet_convert(NULL, &s, &d, &bad), DUET_ERROR_INVALID_ARGUMENT, "options.scale");
    bad = o;
    sc2 = am;
    sc2.dtype = DUET_DTYPE_F64;
    bad.amax = &sc2;
    DT_FAILS(duet_convert(NULL, &s, &d, &bad), DUET_ERROR_INVALID_ARGUMENT, "options.amax");
    bad = o;
    sc2 = am;
    sc2.offset = 1; /* inside src */
    bad.amax = &sc2;
    DT_FAILS(duet_convert(NULL, &s, &d, &bad), DUET_ERROR_INVALID_ARGUMENT, "options.amax overlaps src");
    bad = o;
    bad.scale = &sc;
    sc2 = sc;
    bad.amax = &sc2;
    DT_FAILS(duet_convert(NULL, &s, &d, &bad), DUET_ERROR_INVALID_ARGUMENT,
             "options.amax overlaps options.scale");
    sc2 = sc;
    sc2.offset = 256; /* f32 index 256 = byte 1024: dst's first element */
    bad = o;
    bad.scale = &sc2;
    DT_FAILS(duet_convert(NULL, &s, &d, &bad), DUET_ERROR_INVALID_ARGUMENT, "dst overlaps options.scale");
    sc2 = sc;
    sc2.buffer = NULL;
    bad = o;
    bad.scale = &sc2;
    DT_FAILS(duet_convert(NULL, &s, &d, &bad), DUET_ERROR_INVALID_HANDLE, "options.scale.buffer");
    /* A dst in another context. */
    duet_context *other = NULL;
    if (duet_context_create(0, &other) == DUET_SUCCESS) {
        DT_OK(duet_buffer_create(other, 64, &ro_free));
        x = d;
        x.buffer = ro_free;
        x.offset = 0;
        DT_FAILS(duet_convert(NULL, &s, &x, &o), DUET_ERROR_INVALID_ARGUMENT, "contexts");
        DT_OK(duet_buffer_destroy(ro_free));
        DT_OK(duet_context_destroy(other));
    }
    DT_OK(duet_buffer_read(NULL, b, 1024, after, sizeof after));
    DT_CHECK(memcmp(before, after, sizeof before) == 0, "a refused duet_convert wrote dst");
    float amax1;
    DT_OK(duet_buffer_read(NULL, b, 513 * 4, &amax1, 4));
    DT_CHECK(amax1 == amax0, "a refused duet_convert wrote amax (%g)", amax1);

    /* An empty convert writes nothing to dst but sets amax to 0. */
    x = d;
    x.rows = 0;
    y = s;
    y.rows = 0;
    DT_OK(duet_convert(NULL, &y, &x, &o));
    DT_OK(duet_buffer_read(NULL, b, 513 * 4, &amax1, 4));
    DT_CHECK(amax1 == 0.0f, "amax of nothing is %g, want 0", amax1);
    /* The other ops refuse 8-bit floats by name. */
    DT_FAILS(duet_fill(NULL, 1.0, &d, NULL), DUET_ERROR_UNSUPPORTED, "f8e4m3");
    DT_FAILS(duet_scale(NULL, 2.0, &d, NULL), DUET_ERROR_UNSUPPORTED, "f8e4m3");
    DT_CHECK(duet_dtype_size(DUET_DTYPE_F8E4M3) == 1 && duet_dtype_size(DUET_DTYPE_F8E5M2) == 1,
             "8-bit float sizes");
    DT_CHECK(strcmp(duet_dtype_name(DUET_DTYPE_F8E4M3), "f8e4m3") == 0 &&
                 strcmp(duet_dtype_name(DUET_DTYPE_F8E5M2), "f8e5m2") == 0,
             "8-bit float names");
    DT_OK(duet_buffer_destroy(b));
}

/* The harness's own reference against fixed points of the OCP specification. */
static void reference_selfcheck(void)
{
    DT_CHECK(dt_f8_decode(0x7E, DUET_DTYPE_F8E4M3) == 448.0, "e4m3 max");
    DT_CHECK(isnan(dt_f8_decode(0x7F, DUET_DTYPE_F8E4M3)), "e4m3 NaN");
    DT_CHECK(dt_f8_decode(0x01, DUET_DTYPE_F8E4M3) == 0x1p-9, "e4m3 min subnormal");
    DT_CHECK(dt_f8_decode(0x08, DUET_DTYPE_F8E4M3) == 0x1p-6, "e4m3 min normal");
    DT_CHECK(dt_f8_decode(0x7B, DUET_DTYPE_F8E5M2) == 57344.0, "e5m2 max");
    DT_CHECK(isinf(dt_f8_decode(0xFC, DUET_DTYPE_F8E5M2)) && dt_f8_decode(0xFC, DUET_DTYPE_F8E5M2) < 0,
             "e5m2 -inf");
    DT_CHECK(dt_f8_decode(0x01, DUET_DTYPE_F8E5M2) == 0x1p-16, "e5m2 min subnormal");
    DT_CHECK(dt_f8_encode(464.0, DUET_DTYPE_F8E4M3, 0) == 0x7E, "e4m3 464 ties to 448");
    DT_CHECK(dt_f8_encode(465.0, DUET_DTYPE_F8E4M3, 0) == 0x7F, "e4m3 465 overflows to NaN");
    DT_CHECK(dt_f8_encode(61440.0, DUET_DTYPE_F8E5M2, 0) == 0x7C, "e5m2 61440 ties to inf");
    DT_CHECK(dt_f8_encode(61439.0, DUET_DTYPE_F8E5M2, 0) == 0x7B, "e5m2 61439 to max");
    DT_CHECK(dt_f8_encode(0x1p-10, DUET_DTYPE_F8E4M3, 1) == 0x00, "e4m3 half min subnormal ties to 0");
    DT_CHECK(dt_f8_encode(-1e9, DUET_DTYPE_F8E5M2, 1) == 0xFB, "e5m2 saturates");
}


/* ---- gemm -------------------------------------------------------------------------------- */

/* stored() lays matrices on 16-byte boundaries (else off them). */
static int g_aligned;
/* gemm_case's options.math (DEFAULT or FAST_ACCUM). */
static duet_math_mode g_math = DUET_MATH_DEFAULT;
/* When set, the kernel gemm_case's GEMM must run (a prefix of duet_launch_info.kernel). */
static const char *g_expect_kernel;

/* A stored matrix of rows x cols, row- or column-major with one element of padding per line,
 * batch matrices apart by its extent plus 3 (one matrix when batch is 1); with g_aligned, lines
 * and batches padded to 32 bytes instead and the first element at the buffer's start. */
static duet_matrix stored(duet_dtype dt, int col_major, int64_t rows, int64_t cols, int64_t batch)
{
    duet_matrix x = duet_matrix_make(NULL, dt, col_major ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR,
                                     rows, cols);
    const int64_t per = 32 / (int64_t)duet_dtype_size(dt);
    x.ld = g_aligned ? (x.ld / per + 1) * per : x.ld + 1;
    x.offset = g_aligned ? 0 : 2;
    if (batch > 1) {
        x.batch_count = batch;
        x.batch_stride =
            g_aligned ? (dt_matrix_extent(&x) / per + 1) * per : dt_matrix_extent(&x) + 3;
    }
    return x;
}

static void *host_random(const duet_matrix *x, size_t *n, double spread)
{
    *n = dt_matrix_span_elems(x) + 4;
    void *h = malloc(*n * duet_dtype_size(x->dtype));
    for (size_t i = 0; i < *n; i++) dt_set(h, x->dtype, i, dt_rand_normal() * spread);
    return h;
}

static duet_buffer *upload(duet_matrix *x, const void *h, size_t n)
{
    duet_buffer *b = NULL;
    DT_OK(duet_buffer_create(ctx, n * duet_dtype_size(x->dtype), &b));
    DT_OK(duet_buffer_write(NULL, b, 0, h, n * duet_dtype_size(x->dtype)));
    x->buffer = b;
    return b;
}

/* The unit roundoff of an output dtype, and the size of its smallest subnormal's half. */
static double unit_roundoff(duet_dtype d)
{
    return d == DUET_DTYPE_F16 ? 0x1p-11 : d == DUET_DTYPE_BF16 ? 0x1p-8 : 0x1p-24;
}

/* Batch q of op(X) (rows x k; X of host data h) decoded exactly into out, row-major: a
 * batch's rows of op(A), or with op turned, its columns of op(B). */
static void op_rows(double *out, const void *h, const duet_matrix *x, int64_t q, duet_op op,
                    int64_t rows, int64_t k)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t p = 0; p < k; p++)
            out[i * k + p] =
                dt_get(h, x->dtype,
                       dt_matrix_index(x, q, op == DUET_OP_N ? i : p, op == DUET_OP_N ? p : i));
}

/* One FP8 GEMM through duet_gemm (scales NULL: C updated in place) or duet_gemm_ex (D apart
 * from C, C NULL when beta is 0, per-tensor scales), against a reference in long double:
 *   |D - r| <= (k + 4) 2^-24 (|alpha sa sb| sum |a||b| + |beta c|) + u_D |r| + u_D 2^-14,
 * f32 accumulation of exact products (k roundings at most), the scales' and alpha's f32
 * products, and one rounding to D's dtype (the last term: f16's subnormal spacing). Where FP8
 * instructions multiply (info names an e4m3/e5m2 kernel: Hopper's wgmma, or the memory-bound
 * family's mma.sync), plus 2^-8 |alpha sa sb| sum |a||b|: the tensor core adds each
 * instruction's 32 products with about 13 fraction bits of the largest magnitude (duet.h).
 * Padding and the gaps between batches must come back as they were. */
static void gemm_case(duet_op oa, duet_op ob, int a_col, int b_col, duet_dtype ad, duet_dtype bd,
                      duet_dtype cd, int64_t m, int64_t n, int64_t k, int64_t batch, int bcast_b,
                      double alpha, double beta, int ex, float sa, float sb)
{
    duet_matrix A = stored(ad, a_col, oa == DUET_OP_N ? m : k, oa == DUET_OP_N ? k : m, batch);
    duet_matrix B = stored(bd, b_col, ob == DUET_OP_N ? k : n, ob == DUET_OP_N ? n : k,
                           bcast_b ? 1 : batch);
    duet_matrix C = stored(cd, (a_col + b_col) & 1, m, n, batch);
    size_t na, nb, nc;
    void *ha = host_random(&A, &na, 2.0), *hb = host_random(&B, &nb, 2.0), *hc = host_random(&C, &nc, 4.0);
    duet_buffer *ba = upload(&A, ha, na), *bb = upload(&B, hb, nb), *bc = upload(&C, hc, nc);
    duet_matrix D = C;
    duet_buffer *bd_ = NULL, *bs = NULL;
    void *hd = hc;
    size_t nd = nc;
    duet_launch_info info;
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.info = &info;
    o.math = g_math;
    if (!ex) {
        DT_OK(duet_gemm(NULL, oa, ob, alpha, &A, &B, beta, &C, &o));
    } else {
        hd = host_random(&D, &nd, 1.0);
        bd_ = upload(&D, hd, nd);
        const float sv[2] = {sa, sb};
        DT_OK(duet_buffer_create(ctx, sizeof sv, &bs));
        DT_OK(duet_buffer_write(NULL, bs, 0, sv, sizeof sv));
        duet_matrix msa = duet_matrix_make(bs, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
        duet_matrix msb = msa;
        msb.offset = 1;
        duet_gemm_epilogue epi;
        memset(&epi, 0, sizeof epi);
        epi.scale_a = &msa;
        epi.scale_b = &msb;
        DT_OK(duet_gemm_ex(NULL, oa, ob, alpha, &A, &B, beta, beta != 0.0 ? &C : NULL, &epi, &D, &o));
    }
    unsigned char *got = (unsigned char *)malloc(nd * duet_dtype_size(cd));
    DT_OK(duet_buffer_read(NULL, ex ? bd_ : bc, 0, got, nd * duet_dtype_size(cd)));
    unsigned char *touched = (unsigned char *)calloc(nd, 1);
    const double s = ex ? (double)sa * (double)sb : 1.0;
    /* Multiplied by FP8 instructions (a kernel named for the pair) or decoded to 16 bits first. */
    const int native = strstr(info.kernel, "e4m3") != NULL || strstr(info.kernel, "e5m2") != NULL;
    /* FAST_ACCUM where the Hopper kernel ran: k summed in the tensor core, about 13 fraction
     * bits of the running sum at each of its ceil(k / 32) steps. (The memory-bound family's
     * sums are the same in both modes: 64 products a piece, added in f32.) */
    const double fast =
        native && strstr(info.kernel, "wgmma") != NULL && g_math == DUET_MATH_FAST_ACCUM
            ? (double)((k + 31) / 32 + 1) * 0x1p-11
            : 0.0;
    if (g_expect_kernel)
        DT_CHECK(strncmp(info.kernel, g_expect_kernel, strlen(g_expect_kernel)) == 0,
                 "kernel \"%s\", expected %s... (%lld x %lld x %lld)", info.kernel, g_expect_kernel,
                 (long long)m, (long long)n, (long long)k);
    DT_CHECK(info.math == (fast > 0 ? DUET_MATH_FAST_ACCUM : DUET_MATH_DEFAULT),
             "info.math %s with options.math %s (kernel %s)", duet_math_mode_name(info.math),
             duet_math_mode_name(g_math), info.kernel);
    int bad = 0;
    double worst = 0.0;
    double *ra = (double *)malloc((size_t)(m * k + 1) * sizeof(double));
    double *rb = (double *)malloc((size_t)(n * k + 1) * sizeof(double));
    for (int64_t q = 0; q < batch; q++) {
        op_rows(ra, ha, &A, q, oa, m, k);
        op_rows(rb, hb, &B, bcast_b ? 0 : q, ob == DUET_OP_N ? DUET_OP_T : DUET_OP_N, n, k);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                long double acc = 0.0L;
                double gauge = 0.0;
                const double *x = ra + i * k, *y = rb + j * k;
                for (int64_t p = 0; p < k; p++) {
                    acc += (long double)x[p] * y[p];
                    gauge += fabs(x[p] * y[p]);
                }
                const size_t ci = dt_matrix_index(&C, q, i, j);
                const double c0 = beta != 0.0 ? dt_get(hc, cd, ci) : 0.0;
                const double r = (double)((long double)alpha * s * acc) + beta * c0;
                const double bound =
                    (double)(k + 4) * 0x1p-24 * (fabs(alpha * s) * gauge + fabs(beta * c0)) +
                    (native ? (0x1p-8 + fast) * fabs(alpha * s) * gauge : 0.0) +
                    unit_roundoff(cd) * (fabs(r) + 0x1p-14);
                const size_t di = dt_matrix_index(&D, q, i, j);
                touched[di] = 1;
                const double g = dt_get(got, cd, di);
                const double err = fabs(g - r);
                if (!(err <= bound)) {
                    if (bad++ < 4)
                        fprintf(stderr, "gemm %s x %s -> %s (%d,%lld,%lld): got %.9g want %.9g (bound %.3g)\n",
                                duet_dtype_name(ad), duet_dtype_name(bd), duet_dtype_name(cd), (int)q,
                                (long long)i, (long long)j, g, r, bound);
                } else if (bound > 0 && err / bound > worst) {
                    worst = err / bound;
                }
            }
    }
    free(ra), free(rb);
    const size_t es = duet_dtype_size(cd);
    for (size_t i = 0; i < nd; i++)
        if (!touched[i] && memcmp(got + i * es, (unsigned char *)hd + i * es, es) != 0 && bad++ < 4)
            fprintf(stderr, "gemm: element %zu outside D was written\n", i);
    DT_CHECK(bad == 0,
             "%s %c%c A %s %s B %s %s C %s %lldx%lldx%lld batch %lld%s alpha %g beta %g scales %g %g: "
             "%d bad",
             ex ? "duet_gemm_ex" : "duet_gemm", oa == DUET_OP_N ? 'N' : 'T', ob == DUET_OP_N ? 'N' : 'T',
             duet_dtype_name(ad), a_col ? "col" : "row", duet_dtype_name(bd), b_col ? "col" : "row",
             duet_dtype_name(cd), (long long)m, (long long)n, (long long)k, (long long)batch,
             bcast_b ? " (B broadcast)" : "", alpha, beta, ex ? sa : 1.0, ex ? sb : 1.0, bad);
    DT_CHECK(k == 0 || alpha == 0.0 || native ||
                 (info.launches >= 3 && strstr(info.prologue, "convert_") != NULL),
             "info: %d launches, kernel \"%s\", prologue \"%s\"", info.launches, info.kernel,
             info.prologue);
    (void)worst;
    free(ha), free(hb), free(hc), free(got), free(touched);
    if (ex) free(hd);
    DT_OK(duet_buffer_destroy(ba));
    DT_OK(duet_buffer_destroy(bb));
    DT_OK(duet_buffer_destroy(bc));
    if (bd_) DT_OK(duet_buffer_destroy(bd_));
    if (bs) DT_OK(duet_buffer_destroy(bs));
}

static void gemm_sweep(void)
{
    const duet_dtype f8[2] = {DUET_DTYPE_F8E4M3, DUET_DTYPE_F8E5M2};
    const duet_dtype cs[3] = {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16};
    const int64_t shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {64, 70, 129}, {130, 9, 300}};
    const int nshapes = quick ? 3 : 5;
    int flip = 0;
    for (int op = 0; op < 4; op++)
        for (int x = 0; x < 2; x++)
            for (int y = 0; y < 2; y++)
                for (int c = 0; c < 3; c++)
                    for (int sh = 0; sh < nshapes; sh++) {
                        const duet_op oa = op & 1 ? DUET_OP_T : DUET_OP_N;
                        const duet_op ob = op & 2 ? DUET_OP_T : DUET_OP_N;
                        flip++;
                        const int64_t batch = sh == 1 ? 3 : 1;
                        gemm_case(oa, ob, flip & 1, (flip >> 1) & 1, f8[x], f8[y], cs[c], shapes[sh][0],
                                  shapes[sh][1], shapes[sh][2], batch, sh == 1 && (flip & 4), 1.0,
                                  flip % 3 ? 0.0 : 0.5, 0, 1.0f, 1.0f);
                        if (sh >= 1)
                            gemm_case(oa, ob, (flip >> 2) & 1, flip & 1, f8[x], f8[y], cs[c],
                                      shapes[sh][0], shapes[sh][1], shapes[sh][2], batch, 0, 0.75,
                                      flip % 2 ? 0.0 : -1.5, 1, 0.37f, 3.0f);
                    }
    /* k == 0 and alpha == 0: A and B unread, C = beta C. */
    for (int c = 0; c < 3; c++) {
        gemm_case(DUET_OP_N, DUET_OP_N, 0, 0, f8[0], f8[1], cs[c], 5, 4, 0, 1, 0, 1.0, 0.5, 0, 1.0f, 1.0f);
        gemm_case(DUET_OP_N, DUET_OP_T, 0, 1, f8[1], f8[0], cs[c], 5, 4, 6, 1, 0, 0.0, 2.0, 0, 1.0f, 1.0f);
    }
}

/* Problems of more than one tile each way with more K stages than a kernel's ring holds, in
 * batches, with A e4m3 and B e5m2 in every op: operands on 16-byte boundaries (where both are
 * K-major an FP8 kernel reads them as they lie) and off them (K-major copies), through
 * duet_gemm and duet_gemm_ex with scales (the scales in the kernel's store). */
static void gemm_larger(void)
{
    const duet_dtype e4 = DUET_DTYPE_F8E4M3, e5 = DUET_DTYPE_F8E5M2;
    for (int al = 0; al < 2; al++) {
        g_aligned = al;
        for (int op = 0; op < 4; op++) {
            const duet_op oa = op & 1 ? DUET_OP_T : DUET_OP_N, ob = op & 2 ? DUET_OP_N : DUET_OP_T;
            gemm_case(oa, ob, 0, 0, e4, e5, op < 2 ? DUET_DTYPE_BF16 : DUET_DTYPE_F32, 200, 300,
                      520, 2, 0, 1.0, 0.0, op & 1, 0.5f, 2.0f);
        }
    }
    /* DUET_MATH_FAST_ACCUM: the tensor core's sums (exact ones where none runs). */
    g_math = DUET_MATH_FAST_ACCUM;
    for (int op = 0; op < 2; op++)
        gemm_case(DUET_OP_N, op ? DUET_OP_N : DUET_OP_T, 0, 0, e5, e4, DUET_DTYPE_F16, 200, 300,
                  520, 2, 0, 1.0, op ? 0.5 : 0.0, op, 0.5f, 2.0f);
    g_math = DUET_MATH_DEFAULT;
    g_aligned = 0;
}

/* A narrow C (at most 16 columns, or rows: the transposed problem): on NVIDIA sm_89 and newer
 * the memory-bound family's mma.sync FP8 form where the wide operand is K-major on 16-byte
 * boundaries, whatever B's layout (k-contiguous, n-contiguous on 16 bytes or off them). Long k
 * (slices of several windows of B), k ending inside a 16-byte vector, partial atoms (5 and 12
 * columns), batches, every pairing and C dtype, duet_gemm (beta in place) and duet_gemm_ex with
 * scales, and FAST_ACCUM. */
static void gemm_narrow(void)
{
    const duet_dtype e4 = DUET_DTYPE_F8E4M3, e5 = DUET_DTYPE_F8E5M2;
    const duet_dtype f32 = DUET_DTYPE_F32, f16 = DUET_DTYPE_F16, bf16 = DUET_DTYPE_BF16;
    const duet_op N = DUET_OP_N, T = DUET_OP_T;
    duet_device_props props;
    DT_OK(duet_context_get_props(ctx, &props));
    const int f8_mma = strcmp(duet_backend_name(), "cuda") == 0 &&
                       (props.capability_major > 8 ||
                        (props.capability_major == 8 && props.capability_minor >= 9));
    struct {
        duet_op oa, ob;
        int a_col, b_col;
        duet_dtype ad, bd, cd;
        int64_t m, n, k, batch;
        int ex;
        double beta;
    } cs[] = {
        /* A K-major (op N row-major, op T column-major); B k-contiguous, then n-contiguous. */
        {N, N, 0, 1, e4, e4, bf16, 2048, 16, 2304, 1, 1, 0.0},
        {T, N, 1, 0, e4, e5, f32, 1500, 8, 1001, 1, 0, 0.5},
        {N, T, 0, 0, e5, e4, f16, 1000, 12, 4500, 1, 1, -1.0},
        {N, N, 0, 0, e5, e5, bf16, 700, 16, 640, 3, 0, 0.0},
        /* Blocks enough for one slice each: k in two windows of B (2048 k for 16 columns). */
        {N, N, 0, 1, e4, e4, f16, 3200, 16, 2600, 4, 0, 0.25},
        {T, T, 1, 1, e4, e4, f32, 4100, 5, 1536, 1, 1, 0.0},
        /* m narrow: B is the wide operand, K-major (op T row-major, op N column-major). */
        {N, T, 0, 0, e4, e5, bf16, 16, 2000, 2048, 1, 1, 0.0},
        {T, N, 1, 1, e5, e4, f32, 3, 1100, 3000, 2, 0, 1.5},
    };
    const int ncs = (int)(sizeof cs / sizeof cs[0]);
    /* The family is a GPU one: elsewhere these are only GEMMs against the reference, their
     * long sides a sixteenth. */
    const int gpu = strcmp(duet_backend_name(), "cpu") != 0;
    g_aligned = 1;
    for (int i = 0; i < ncs; i++) {
        if (quick && i % 2) continue;
        int64_t m = cs[i].m, n = cs[i].n, k = cs[i].k;
        if (!gpu) {
            m = m > 64 ? m / 16 : m;
            n = n > 64 ? n / 16 : n;
            k = k > 64 ? k / 16 + 3 : k;
        }
        g_expect_kernel = f8_mma ? "gemm_skinny_kmajor_mma_" : NULL;
        gemm_case(cs[i].oa, cs[i].ob, cs[i].a_col, cs[i].b_col, cs[i].ad, cs[i].bd, cs[i].cd, m, n,
                  k, cs[i].batch, 0, 1.0, cs[i].beta, cs[i].ex, 0.5f, 2.0f);
    }
    g_math = DUET_MATH_FAST_ACCUM;
    gemm_case(N, N, 0, 1, e4, e5, bf16, gpu ? 1800 : 112, 16, gpu ? 2050 : 131, 1, 0, 0.75, 0.0, 1,
              0.25f, 4.0f);
    g_math = DUET_MATH_DEFAULT;
    /* A's rows off 16 bytes: not the family (the Hopper kernel on copies, or the decode). */
    g_aligned = 0;
    g_expect_kernel = NULL;
    gemm_case(N, N, 0, 1, e4, e4, f32, gpu ? 900 : 56, 16, gpu ? 777 : 51, 1, 0, 1.0, 0.0, 0, 1.0f,
              1.0f);
}

/* Every small shape in the manner of the reference BLAS testers: m, n and k each from
 * {1, 2, 3, 5, 9, 17} ({1, 3, 9} quick), for every pair of 8-bit A and B dtypes and every op;
 * C's dtype, the layouts, alpha, beta and the call (duet_gemm, or duet_gemm_ex with scales)
 * turn with the case number, each with its own period (3, 10, 14, 33, 52, 5), so that their
 * combinations recur across the shapes. Checked against the exact reference like
 * gemm_sweep's cases. */
static void gemm_small_shapes(void)
{
    const duet_dtype f8[2] = {DUET_DTYPE_F8E4M3, DUET_DTYPE_F8E5M2};
    const duet_dtype cs[3] = {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16};
    static const int64_t full[] = {1, 2, 3, 5, 9, 17}, few[] = {1, 3, 9};
    const int64_t *dims = quick ? few : full;
    const int nd = quick ? 3 : 6;
    static const double alphas[3] = {1.0, 0.7, -2.0}, betas[4] = {0.0, 1.0, 1.3, 0.0};
    long cases = 0;
    for (int im = 0; im < nd; im++)
        for (int in = 0; in < nd; in++)
            for (int ik = 0; ik < nd; ik++)
                for (int op = 0; op < 4; op++)
                    for (int pair = 0; pair < 4; pair++) {
                        const long c = cases++;
                        const int ex = (int)(c % 5 == 1);
                        gemm_case(op & 1 ? DUET_OP_T : DUET_OP_N, op & 2 ? DUET_OP_T : DUET_OP_N,
                                  (int)(c / 5 % 2), (int)(c / 7 % 2), f8[pair & 1], f8[pair >> 1],
                                  cs[c % 3], dims[im], dims[in], dims[ik], 1, 0, alphas[c / 11 % 3],
                                  betas[c / 13 % 4], ex, ex ? 0.5f : 1.0f, ex ? 3.0f : 1.0f);
                    }
    printf("small shapes: %ld GEMMs\n", cases);
}

/* duet_gemm_ex with an 8-bit float D: D = sat(result * scale_d), amax_d = max |result|, the
 * result being the f32 epilogue's (here bias and an activation, beta * C). Reference in double;
 * each element within the f32 GEMM and epilogue bound (times the activation's slope, <= 1.2,
 * and scale_d), plus the 8-bit rounding (2^-4 of |D| for e4m3, 2^-3 for e5m2) and half the
 * smallest subnormal; beyond the largest finite value D must be saturated to it. amax within
 * the same bound of the reference's maximum. Guard elements outside D keep their values. */
static void f8_d_case(duet_dtype ab, duet_dtype bd, duet_dtype dd, int d_col, int64_t m, int64_t n,
                      int64_t k, int64_t batch, double alpha, double beta, duet_activation act,
                      int with_bias, float scale, int with_amax)
{
    duet_matrix A = stored(ab, 0, m, k, batch), B = stored(bd, 1, k, n, batch);
    duet_matrix C = stored(DUET_DTYPE_F32, !d_col, m, n, batch), D = stored(dd, d_col, m, n, batch);
    duet_matrix bias = stored(DUET_DTYPE_BF16, 0, 1, n, 1);
    size_t na, nb, nc, nd, nbias;
    void *ha = host_random(&A, &na, 1.5), *hb = host_random(&B, &nb, 1.5);
    void *hc = host_random(&C, &nc, 2.0), *hd = host_random(&D, &nd, 1.0);
    void *hbias = host_random(&bias, &nbias, 1.0);
    duet_buffer *ba = upload(&A, ha, na), *bb = upload(&B, hb, nb), *bc = upload(&C, hc, nc);
    duet_buffer *bdb = upload(&D, hd, nd), *bbias = upload(&bias, hbias, nbias);
    const float sc[2] = {scale, -7.0f}; /* scale_d, then amax_d's old value */
    duet_buffer *bs = NULL;
    DT_OK(duet_buffer_create(ctx, sizeof sc, &bs));
    DT_OK(duet_buffer_write(NULL, bs, 0, sc, sizeof sc));
    duet_matrix msd = duet_matrix_make(bs, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
    duet_matrix mam = msd;
    mam.offset = 1;
    duet_gemm_epilogue epi;
    memset(&epi, 0, sizeof epi);
    epi.act = act;
    epi.bias = with_bias ? &bias : NULL;
    epi.scale_d = scale != 1.0f ? &msd : NULL;
    epi.amax_d = with_amax ? &mam : NULL;
    duet_launch_info info;
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.info = &info;
    DT_OK(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, alpha, &A, &B, beta, beta != 0.0 ? &C : NULL,
                       &epi, &D, &o));
    unsigned char *got = (unsigned char *)malloc(nd);
    float back[2];
    DT_OK(duet_buffer_read(NULL, bdb, 0, got, nd));
    DT_OK(duet_buffer_read(NULL, bs, 0, back, sizeof back));
    const double big = dd == DUET_DTYPE_F8E4M3 ? 448.0 : 57344.0;
    const double u8 = dd == DUET_DTYPE_F8E4M3 ? 0x1p-4 : 0x1p-3;
    const double sub = dd == DUET_DTYPE_F8E4M3 ? 0x1p-10 : 0x1p-17;
    unsigned char *touched = (unsigned char *)calloc(nd, 1);
    /* FP8 instructions multiplied (gemm_case's bound). */
    const int native = strstr(info.kernel, "wgmma") != NULL &&
                       (strstr(info.kernel, "e4m3") != NULL || strstr(info.kernel, "e5m2") != NULL);
    double ref_amax = 0.0, amax_err = 0.0;
    int bad = 0;
    for (int64_t q = 0; q < batch; q++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                long double acc = 0.0L;
                double gauge = 0.0;
                for (int64_t p = 0; p < k; p++) {
                    const double x = dt_get(ha, ab, dt_matrix_index(&A, q, i, p));
                    const double y = dt_get(hb, bd, dt_matrix_index(&B, q, p, j));
                    acc += (long double)x * y;
                    gauge += fabs(x * y);
                }
                const double c0 =
                    beta != 0.0 ? dt_get(hc, DUET_DTYPE_F32, dt_matrix_index(&C, q, i, j)) : 0.0;
                const double b0 =
                    with_bias ? dt_get(hbias, DUET_DTYPE_BF16, dt_matrix_index(&bias, 0, 0, j))
                              : 0.0;
                const double x = (double)((long double)alpha * acc) + beta * c0 + b0;
                double r = x;
                if (act == DUET_ACT_GELU_TANH)
                    r = 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
                else if (act == DUET_ACT_RELU)
                    r = x > 0 ? x : 0.0;
                const double e = 1.2 * (double)(k + 8) * 0x1p-24 *
                                     (fabs(alpha) * gauge + fabs(beta * c0) + fabs(b0)) +
                                 (native ? 1.2 * 0x1p-8 * fabs(alpha) * gauge : 0.0) +
                                 16 * 0x1p-24 * (fabs(r) + 1.0);
                if (fabs(r) > ref_amax) ref_amax = fabs(r);
                if (e > amax_err) amax_err = e;
                double want = r * scale;
                want = want > big ? big : want < -big ? -big : want;
                const size_t di = dt_matrix_index(&D, q, i, j);
                touched[di] = 1;
                const double g = dt_get(got, dd, di);
                const double tol = scale * e + u8 * fabs(want) + sub;
                if (!(fabs(g - want) <= tol) && bad++ < 4)
                    fprintf(stderr, "f8 D (%d,%lld,%lld): got %.9g want %.9g (tol %.3g)\n", (int)q,
                            (long long)i, (long long)j, g, want, tol);
            }
    for (size_t i = 0; i < nd; i++)
        if (!touched[i] && got[i] != ((unsigned char *)hd)[i] && bad++ < 4)
            fprintf(stderr, "f8 D: element %zu outside D was written\n", i);
    char what[160];
    snprintf(what, sizeof what, "A %s B %s D %s %s %lldx%lldx%lld batch %lld act %s%s scale %g%s",
             duet_dtype_name(ab), duet_dtype_name(bd), duet_dtype_name(dd), d_col ? "col" : "row",
             (long long)m, (long long)n, (long long)k, (long long)batch, duet_activation_name(act),
             with_bias ? " bias" : "", scale, with_amax ? " amax" : "");
    DT_CHECK(bad == 0, "gemm_ex 8-bit D %s: %d bad", what, bad);
    if (with_amax)
        DT_CHECK(fabs((double)back[1] - ref_amax) <= amax_err,
                 "gemm_ex 8-bit D %s: amax %.9g, want %.9g", what, (double)back[1], ref_amax);
    else
        DT_CHECK(back[1] == -7.0f, "gemm_ex 8-bit D %s: amax_d's neighbour was written", what);
    DT_CHECK(back[0] == scale, "gemm_ex 8-bit D %s: scale_d was written", what);
    DT_CHECK(strstr(info.epilogue, "+") != NULL && strstr(info.epilogue, "convert") != NULL &&
                 info.launches >= (k > 0 ? 3 : 2),
             "gemm_ex 8-bit D %s: info.epilogue \"%s\", %d launches", what, info.epilogue,
             info.launches);
    free(ha), free(hb), free(hc), free(hd), free(hbias), free(got), free(touched);
    DT_OK(duet_buffer_destroy(ba));
    DT_OK(duet_buffer_destroy(bb));
    DT_OK(duet_buffer_destroy(bc));
    DT_OK(duet_buffer_destroy(bdb));
    DT_OK(duet_buffer_destroy(bbias));
    DT_OK(duet_buffer_destroy(bs));
}

static void gemm_f8_d(void)
{
    const duet_dtype e4 = DUET_DTYPE_F8E4M3, e5 = DUET_DTYPE_F8E5M2, bf = DUET_DTYPE_BF16;
    f8_d_case(bf, bf, e4, 0, 37, 70, 33, 1, 1.0, 0.0, DUET_ACT_GELU_TANH, 1, 1.0f, 1);
    f8_d_case(bf, bf, e5, 1, 37, 70, 33, 2, 1.0, 0.5, DUET_ACT_RELU, 1, 0.25f, 1);
    f8_d_case(e4, e5, e4, 0, 19, 9, 64, 2, 0.75, 0.0, DUET_ACT_NONE, 0, 16.0f, 0);
    f8_d_case(DUET_DTYPE_F32, DUET_DTYPE_F32, e5, 0, 5, 130, 17, 1, 2.0, -1.0, DUET_ACT_NONE, 1,
              1.0f, 1);
    /* Saturation: results far beyond e4m3's 448 after the scale. */
    f8_d_case(bf, bf, e4, 1, 8, 8, 40, 1, 1.0, 0.0, DUET_ACT_NONE, 0, 200.0f, 1);
    /* No product (k == 0): D = sat((beta C + bias) scale). */
    f8_d_case(bf, bf, e4, 0, 6, 5, 0, 1, 1.0, 1.0, DUET_ACT_NONE, 1, 2.0f, 1);
    if (!quick) {
        f8_d_case(bf, bf, e4, 0, 300, 260, 129, 3, 1.0, 0.0, DUET_ACT_GELU_TANH, 1, 0.5f, 1);
        f8_d_case(e5, e5, e5, 1, 129, 257, 100, 1, 1.0, 0.0, DUET_ACT_RELU, 1, 1.0f, 1);
    }

    /* Misuse: nothing written, the argument named. */
    duet_buffer *b = NULL;
    DT_OK(duet_buffer_create(ctx, 4096, &b));
    duet_matrix A = duet_matrix_make(b, bf, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    duet_matrix B = A;
    B.offset = 16;
    duet_matrix D8 = duet_matrix_make(b, e4, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    D8.offset = 256;
    duet_matrix Dh = duet_matrix_make(b, bf, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    Dh.offset = 512;
    duet_matrix sd = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
    sd.offset = 600;
    duet_matrix am = sd;
    am.offset = 601;
    duet_gemm_epilogue epi;
    memset(&epi, 0, sizeof epi);
    epi.scale_d = &sd;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, NULL, &epi, &Dh, NULL),
             DUET_ERROR_UNSUPPORTED, "epi.scale_d");
    epi.scale_d = NULL, epi.amax_d = &am;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, NULL, &epi, &Dh, NULL),
             DUET_ERROR_UNSUPPORTED, "epi.amax_d");
    duet_matrix am_bad = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 2);
    am_bad.offset = 601;
    epi.amax_d = &am_bad;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, NULL, &epi, &D8, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "epi.amax_d");
    duet_matrix am_in_d = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
    am_in_d.offset = 64; /* bytes 256..259: D's first element */
    epi.amax_d = &am_in_d;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, NULL, &epi, &D8, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "epi.amax_d overlaps D");
    epi.amax_d = NULL;
    duet_matrix Ad = duet_matrix_make(b, DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    duet_matrix Bd = Ad;
    Bd.offset = 16;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &Ad, &Bd, 0.0, NULL, &epi, &D8, NULL),
             DUET_ERROR_UNSUPPORTED, "D is f8e4m3");
    DT_OK(duet_buffer_destroy(b));
}

/* ---- block-scaled gemm ------------------------------------------------------------------- */

/* D = alpha * sum over k blocks q (128 values) of sa(i, q) sb(q, j / 128) * sum_q a b + beta * C
 * through duet_gemm_ex with block scales: scale_a m x ceil(k / 128) (row- or column-major:
 * sa_col) or per tensor (sa_tensor), scale_b ceil(k / 128) x ceil(n / 128) or per tensor,
 * each of batch_count 1 or D's (sc_batched). Against long double:
 *   |D - r| <= (k + 6) 2^-24 (|alpha| G + |beta c|) + [FP8 instructions] 2^-8 |alpha| G
 *              + u_D (|r| + 2^-14),  G = sum_q |sa sb| sum_q |a||b|,
 * the roundings of the decoded and scaled operands (or of the scales' product), f32 sums, and
 * the FP8 tensor core's 13 fraction bits within each 128 values; D's rounding. The Hopper
 * kernel must take the TN problems with a row-major D (info names it "..._blockscaled"). */
static int g_block_cases;

static void block_case(duet_op oa, duet_op ob, duet_dtype ad, duet_dtype bd, duet_dtype dd,
                       int d_col, int64_t m, int64_t n, int64_t k, int64_t batch, int sc_batched,
                       int sa_tensor, int sb_tensor, int sa_col, double alpha, double beta)
{
    const int64_t kq = (k + 127) / 128, nq = (n + 127) / 128;
    duet_matrix A = stored(ad, 0, oa == DUET_OP_N ? m : k, oa == DUET_OP_N ? k : m, batch);
    duet_matrix B = stored(bd, 0, ob == DUET_OP_N ? k : n, ob == DUET_OP_N ? n : k, batch);
    duet_matrix C = stored(DUET_DTYPE_F32, !d_col, m, n, batch);
    duet_matrix D = stored(dd, d_col, m, n, batch);
    const int64_t sb_n = sc_batched ? batch : 1;
    duet_matrix SA = sa_tensor ? stored(DUET_DTYPE_F32, 0, 1, 1, 1)
                               : stored(DUET_DTYPE_F32, sa_col, m, kq, sb_n);
    duet_matrix SB =
        sb_tensor ? stored(DUET_DTYPE_F32, 0, 1, 1, 1) : stored(DUET_DTYPE_F32, 0, kq, nq, sb_n);
    size_t na, nb, nc, nd, nsa, nsb;
    void *ha = host_random(&A, &na, 2.0), *hb = host_random(&B, &nb, 2.0);
    void *hc = host_random(&C, &nc, 4.0), *hd = host_random(&D, &nd, 1.0);
    float *hsa = (float *)host_random(&SA, &nsa, 1.0), *hsb = (float *)host_random(&SB, &nsb, 1.0);
    /* Scales of both signs, magnitudes 2^-3 .. 2^3. */
    for (size_t i = 0; i < nsa; i++)
        hsa[i] =
            (float)(dt_rand_uniform(-3, 3) < 0 ? -1 : 1) * exp2f((float)dt_rand_uniform(-3, 3));
    for (size_t i = 0; i < nsb; i++)
        hsb[i] =
            (float)(dt_rand_uniform(-3, 3) < 0 ? -1 : 1) * exp2f((float)dt_rand_uniform(-3, 3));
    duet_buffer *ba = upload(&A, ha, na), *bb = upload(&B, hb, nb), *bc = upload(&C, hc, nc);
    duet_buffer *bd_ = upload(&D, hd, nd), *bsa = upload(&SA, hsa, nsa),
                *bsb = upload(&SB, hsb, nsb);
    duet_launch_info info;
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.info = &info;
    o.math = g_math;
    duet_gemm_epilogue epi;
    memset(&epi, 0, sizeof epi);
    epi.scale_a = &SA;
    epi.scale_b = &SB;
    DT_OK(duet_gemm_ex(NULL, oa, ob, alpha, &A, &B, beta, beta != 0.0 ? &C : NULL, &epi, &D, &o));
    unsigned char *got = (unsigned char *)malloc(nd * duet_dtype_size(dd));
    DT_OK(duet_buffer_read(NULL, bd_, 0, got, nd * duet_dtype_size(dd)));
    unsigned char *touched = (unsigned char *)calloc(nd, 1);
    const int native = strstr(info.kernel, "e4m3") != NULL || strstr(info.kernel, "e5m2") != NULL;
    /* Scales that are all 1 x 1 are per-tensor ones, whatever was meant. */
    const int blocked = (!sa_tensor && (m > 1 || kq > 1)) || (!sb_tensor && (kq > 1 || nq > 1));
    DT_CHECK(!native || !blocked || strstr(info.kernel, "_blockscaled") != NULL,
             "kernel \"%s\" multiplied 8-bit floats but does not name the block scales",
             info.kernel);
    DT_CHECK(!blocked || info.math == DUET_MATH_DEFAULT,
             "info.math %s with block scales (kernel %s)", duet_math_mode_name(info.math),
             info.kernel);
    if (g_expect_kernel && blocked && oa == DUET_OP_N && ob == DUET_OP_T && !d_col)
        DT_CHECK(strncmp(info.kernel, g_expect_kernel, strlen(g_expect_kernel)) == 0 && native,
                 "kernel \"%s\", expected %s... (%lld x %lld x %lld)", info.kernel, g_expect_kernel,
                 (long long)m, (long long)n, (long long)k);
    int bad = 0;
    double *ra = (double *)malloc((size_t)(m * k + 1) * sizeof(double));
    double *rb = (double *)malloc((size_t)(n * k + 1) * sizeof(double));
    for (int64_t q = 0; q < batch; q++) {
        op_rows(ra, ha, &A, q, oa, m, k);
        op_rows(rb, hb, &B, q, ob == DUET_OP_N ? DUET_OP_T : DUET_OP_N, n, k);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                long double acc = 0.0L;
                double gauge = 0.0;
                for (int64_t b0 = 0; b0 < k; b0 += 128) {
                    const int64_t qb = sc_batched ? q : 0;
                    const double s =
                        (double)hsa[sa_tensor ? 0 : dt_matrix_index(&SA, qb, i, b0 / 128)] *
                        (double)hsb[sb_tensor ? 0 : dt_matrix_index(&SB, qb, b0 / 128, j / 128)];
                    long double part = 0.0L;
                    double g = 0.0;
                    for (int64_t p = b0; p < k && p < b0 + 128; p++) {
                        const double x = ra[i * k + p], y = rb[j * k + p];
                        part += (long double)x * y;
                        g += fabs(x * y);
                    }
                    acc += part * s;
                    gauge += g * fabs(s);
                }
                const double c0 =
                    beta != 0.0 ? dt_get(hc, DUET_DTYPE_F32, dt_matrix_index(&C, q, i, j)) : 0.0;
                const double r = (double)((long double)alpha * acc) + beta * c0;
                const double bound =
                    (double)(k + 6) * 0x1p-24 * (fabs(alpha) * gauge + fabs(beta * c0)) +
                    (native ? 0x1p-8 * fabs(alpha) * gauge : 0.0) +
                    unit_roundoff(dd) * (fabs(r) + 0x1p-14);
                const size_t di = dt_matrix_index(&D, q, i, j);
                touched[di] = 1;
                const double gv = dt_get(got, dd, di);
                if (!(fabs(gv - r) <= bound) && bad++ < 4)
                    fprintf(stderr,
                            "block-scaled gemm (%d,%lld,%lld): got %.9g want %.9g (bound %.3g)\n",
                            (int)q, (long long)i, (long long)j, gv, r, bound);
            }
    }
    free(ra), free(rb);
    g_block_cases++;
    const size_t es = duet_dtype_size(dd);
    for (size_t i = 0; i < nd; i++)
        if (!touched[i] && memcmp(got + i * es, (unsigned char *)hd + i * es, es) != 0 && bad++ < 4)
            fprintf(stderr, "block-scaled gemm: element %zu outside D was written\n", i);
    DT_CHECK(bad == 0,
             "block-scaled %c%c A %s B %s D %s%s %lldx%lldx%lld batch %lld%s scale_a %s scale_b %s "
             "alpha %g beta %g (kernel %s): %d bad",
             oa == DUET_OP_N ? 'N' : 'T', ob == DUET_OP_N ? 'N' : 'T', duet_dtype_name(ad),
             duet_dtype_name(bd), duet_dtype_name(dd), d_col ? " col" : "", (long long)m,
             (long long)n, (long long)k, (long long)batch, sc_batched ? " (scales batched)" : "",
             sa_tensor ? "tensor"
             : sa_col  ? "block col-major"
                       : "block",
             sb_tensor ? "tensor" : "block", alpha, beta, info.kernel, bad);
    free(ha), free(hb), free(hc), free(hd), free(hsa), free(hsb), free(got), free(touched);
    DT_OK(duet_buffer_destroy(ba));
    DT_OK(duet_buffer_destroy(bb));
    DT_OK(duet_buffer_destroy(bc));
    DT_OK(duet_buffer_destroy(bd_));
    DT_OK(duet_buffer_destroy(bsa));
    DT_OK(duet_buffer_destroy(bsb));
}

static void gemm_block_scaled(void)
{
    const duet_dtype e4 = DUET_DTYPE_F8E4M3, e5 = DUET_DTYPE_F8E5M2;
    const duet_op N = DUET_OP_N, T = DUET_OP_T;
    const int64_t shapes[][3] = {{1, 1, 1},       {33, 17, 65},     {64, 200, 300},
                                 {130, 260, 520}, {257, 300, 1000}, {300, 520, 2048}};
    const int nshapes = quick ? 4 : 6;
    duet_device_props props;
    DT_OK(duet_context_get_props(ctx, &props));
    const int hopper = strcmp(duet_backend_name(), "cuda") == 0 && props.capability_major == 9 &&
                       props.capability_minor == 0;
    g_aligned = 1;
    g_expect_kernel = hopper ? "gemm_wgmma_" : NULL;
    for (int s = 0; s < nshapes; s++) {
        const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        block_case(N, T, e4, e4, DUET_DTYPE_BF16, 0, m, n, k, 1, 0, 0, 0, s & 1, 1.0, 0.0);
        block_case(N, T, e4, e5, DUET_DTYPE_F32, 0, m, n, k, 1, 0, 0, 0, 0, -0.5, 0.0);
        if (quick && s > 1) continue;
        block_case(T, N, e5, e4, DUET_DTYPE_F16, 0, m, n, k, 1, 0, 0, 0, 1, 1.0, 0.0);
        block_case(N, T, e4, e4, DUET_DTYPE_BF16, 1, m, n, k, 1, 0, 0, 0, 0, 1.0, 0.0);
        block_case(N, N, e4, e4, DUET_DTYPE_F32, 0, m, n, k, 1, 0, 1, 0, 0, 2.0, 0.5);
        block_case(N, T, e5, e5, DUET_DTYPE_F32, 0, m, n, k, 1, 0, 0, 1, 0, 1.0, 0.0);
    }
    /* Batches: scales per batch and shared; B per tensor beside A's blocks. */
    block_case(N, T, e4, e4, DUET_DTYPE_BF16, 0, 70, 140, 384, 3, 1, 0, 0, 1, 1.0, 0.0);
    block_case(N, T, e4, e4, DUET_DTYPE_F32, 0, 70, 140, 384, 2, 0, 0, 0, 0, 1.0, 0.25);
    /* FAST_ACCUM asked: block scales take the default math. */
    g_math = DUET_MATH_FAST_ACCUM;
    block_case(N, T, e4, e4, DUET_DTYPE_BF16, 0, 130, 260, 1000, 1, 0, 0, 0, 0, 1.0, 0.0);
    g_math = DUET_MATH_DEFAULT;
    /* A narrow C (16 rows or 8 columns and fewer): the memory-bound kernel's mma.sync form on
     * sm_89+, k ending inside a chunk (its last block clamped), every grid; transposed. */
    const int f8_mma = strcmp(duet_backend_name(), "cuda") == 0 &&
                       (props.capability_major > 8 ||
                        (props.capability_major == 8 && props.capability_minor >= 9));
    g_expect_kernel = f8_mma ? "gemm_skinny_kmajor_mma_" : NULL;
    block_case(N, T, e4, e4, DUET_DTYPE_BF16, 0, 16, 300, 1000, 1, 0, 0, 0, 0, 1.0, 0.0);
    block_case(N, T, e4, e5, DUET_DTYPE_F32, 0, 300, 8, 520, 1, 0, 0, 0, 1, -2.0, 0.0);
    block_case(N, T, e5, e4, DUET_DTYPE_F16, 0, 5, 200, 2048, 1, 0, 0, 0, 1, 1.0, 0.0);
    block_case(N, T, e4, e4, DUET_DTYPE_BF16, 0, 12, 140, 384, 3, 1, 0, 0, 0, 1.0, 0.0);
    block_case(N, T, e4, e4, DUET_DTYPE_F32, 0, 16, 260, 520, 1, 0, 0, 1, 0, 1.0, 0.5);
    block_case(N, T, e4, e4, DUET_DTYPE_BF16, 0, 16, 260, 4096, 1, 0, 1, 0, 0, 1.0, 0.0);
    block_case(N, T, e4, e4, DUET_DTYPE_BF16, 1, 16, 300, 1000, 1, 0, 0, 0, 0, 1.0, 0.0);
    /* Off TMA's boundaries: the operands are packed first, the scales unchanged. */
    g_aligned = 0;
    g_expect_kernel = NULL;
    block_case(N, T, e4, e4, DUET_DTYPE_BF16, 0, 65, 129, 257, 1, 0, 0, 0, 0, 1.0, 0.0);
    fprintf(stderr, "block scales: %d GEMMs\n", g_block_cases);
}

static void gemm_misuse(void)
{
    duet_buffer *b = NULL;
    DT_OK(duet_buffer_create(ctx, 4096, &b));
    duet_matrix A = duet_matrix_make(b, DUET_DTYPE_F8E4M3, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    duet_matrix B = A;
    B.offset = 64;
    B.dtype = DUET_DTYPE_F8E5M2;
    duet_matrix C = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    C.offset = 256;
    duet_matrix x = C;
    x.dtype = DUET_DTYPE_F64;
    DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, &x, NULL), DUET_ERROR_UNSUPPORTED,
             "f64");
    x = C;
    x.dtype = DUET_DTYPE_F8E4M3;
    x.offset = 1024;
    DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, &x, NULL), DUET_ERROR_UNSUPPORTED,
             "dtype combination");
    x = B;
    x.dtype = DUET_DTYPE_F16;
    DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &x, 0.0, &C, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "differ");
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.algorithm = DUET_ALGO_TILED;
    DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, &C, &o), DUET_ERROR_UNSUPPORTED,
             "auto");
    /* The math modes: FAST_ACCUM for 8-bit floats only, TF32 and 3XTF32 for f32 only. */
    o.algorithm = DUET_ALGO_AUTO;
    o.math = DUET_MATH_TF32;
    DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, &C, &o),
             DUET_ERROR_INVALID_ARGUMENT, "options.math (tf32)");
    o.math = DUET_MATH_FAST_ACCUM;
    duet_matrix h16 = duet_matrix_make(b, DUET_DTYPE_BF16, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &h16, &h16, 0.0, &C, &o),
             DUET_ERROR_INVALID_ARGUMENT, "options.math (fast_accum)");
    duet_matrix f32m = C;
    f32m.offset = 512;
    DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &f32m, &f32m, 0.0, &C, &o),
             DUET_ERROR_INVALID_ARGUMENT, "8-bit float gemm only");
    o.math = (duet_math_mode)4;
    DT_FAILS(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, &C, &o),
             DUET_ERROR_INVALID_ARGUMENT, "options.math (4)");
    duet_matrix sc = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
    sc.offset = 900;
    duet_gemm_epilogue epi;
    memset(&epi, 0, sizeof epi);
    duet_matrix bad = sc;
    bad.cols = 2;
    epi.scale_a = &bad;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, NULL, &epi, &C, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "epi.scale_a");
    epi.scale_a = NULL;
    bad = sc;
    bad.dtype = DUET_DTYPE_F16;
    epi.scale_b = &bad;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, NULL, &epi, &C, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "epi.scale_b");
    bad = sc;
    bad.offset = 256; /* C's (D's) first element */
    epi.scale_b = &bad;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, NULL, &epi, &C, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "D overlaps epi.scale_b");
    epi.scale_b = &sc;
    epi.col_scale = &sc;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, NULL, &epi, &C, NULL),
             DUET_ERROR_UNSUPPORTED, "epi.scale_b");
    epi.col_scale = NULL;
    duet_matrix Af = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    duet_matrix Bf = Af;
    Bf.offset = 16;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &Af, &Bf, 0.0, NULL, &epi, &C, NULL),
             DUET_ERROR_UNSUPPORTED, "8-bit float");
    /* Block scales: 4 x 256 x 4 (two k blocks): scale_a 4 x 2, scale_b 2 x 1. */
    memset(&epi, 0, sizeof epi);
    duet_matrix Ak = duet_matrix_make(b, DUET_DTYPE_F8E4M3, DUET_LAYOUT_ROW_MAJOR, 4, 256);
    duet_matrix Bk = duet_matrix_make(b, DUET_DTYPE_F8E4M3, DUET_LAYOUT_ROW_MAJOR, 4, 256);
    Bk.offset = 1024;
    duet_matrix Dk = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    Dk.offset = 512;
    duet_matrix sa = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 4, 2);
    sa.offset = 800;
    duet_matrix sb = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 1);
    sb.offset = 840;
    epi.scale_a = &sa;
    epi.scale_b = &sb;
    unsigned char before[64];
    DT_OK(duet_buffer_read(NULL, b, 2048, before, sizeof before));
    duet_matrix x2 = sa;
    x2.cols = 3;
    x2.ld = 3;
    epi.scale_a = &x2;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_T, 1.0, &Ak, &Bk, 0.0, NULL, &epi, &Dk, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "epi.scale_a is 4 x 3");
    x2 = sb;
    x2.rows = 1;
    x2.cols = 2;
    x2.ld = 2;
    epi.scale_a = &sa;
    epi.scale_b = &x2;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_T, 1.0, &Ak, &Bk, 0.0, NULL, &epi, &Dk, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "epi.scale_b is 1 x 2");
    x2 = sa;
    x2.dtype = DUET_DTYPE_BF16;
    epi.scale_a = &x2;
    epi.scale_b = &sb;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_T, 1.0, &Ak, &Bk, 0.0, NULL, &epi, &Dk, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "scales are f32");
    x2 = sa;
    x2.batch_count = 2;
    x2.batch_stride = 8;
    epi.scale_a = &x2;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_T, 1.0, &Ak, &Bk, 0.0, NULL, &epi, &Dk, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "epi.scale_a.batch_count");
    x2 = sb;
    x2.offset = 516; /* inside D */
    epi.scale_a = &sa;
    epi.scale_b = &x2;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_T, 1.0, &Ak, &Bk, 0.0, NULL, &epi, &Dk, NULL),
             DUET_ERROR_INVALID_ARGUMENT, "D overlaps epi.scale_b");
    epi.scale_b = &sb;
    epi.row_scale = &sc;
    sc.rows = 4;
    DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_T, 1.0, &Ak, &Bk, 0.0, NULL, &epi, &Dk, NULL),
             DUET_ERROR_UNSUPPORTED, "epi.scale_a");
    unsigned char after[64];
    DT_OK(duet_buffer_read(NULL, b, 2048, after, sizeof after));
    DT_CHECK(memcmp(before, after, sizeof before) == 0, "a refused block-scaled GEMM wrote");
    DT_OK(duet_buffer_destroy(b));
}

int main(int argc, char **argv)
{
    quick = dt_quick_mode(argc, argv);
    ctx = dt_open_or_skip();
    dt_seed(8);
    reference_selfcheck();
    convert_misuse();
    convert_exhaustive_decode();
    convert_from_wide();
    convert_scaled();
    convert_strided();
    gemm_misuse();
    gemm_sweep();
    gemm_larger();
    gemm_narrow();
    gemm_small_shapes();
    gemm_f8_d();
    gemm_block_scaled();
    DT_OK(duet_context_destroy(ctx));
    return dt_finish("test_fp8");
}
