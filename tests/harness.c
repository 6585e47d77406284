/* harness.c - conformance helpers: skips, random data, f16/bf16, guards, reference GEMM. */
#include "harness.h"

#include <float.h>
#include <math.h>

int dt_checks = 0;
int dt_failures = 0;

/* ---- opening the device ------------------------------------------------------------------ */

duet_context *dt_open_or_skip(void)
{
    char msg[512];
    int count = -1;
    duet_status s = duet_device_count(&count);
    snprintf(msg, sizeof msg, "%s", duet_last_error());
    if (s == DUET_ERROR_NO_DEVICE) {
        printf("skipped: no device for the %s backend: %s\n", duet_backend_name(), msg);
        exit(DT_SKIP);
    }
    if (s != DUET_SUCCESS) {
        fprintf(stderr, "duet_device_count -> %s: %s\n", duet_status_string(s), msg);
        exit(1);
    }
    if (count < 1) {
        /* The header promises DUET_ERROR_NO_DEVICE for a machine without devices, so a
         * success with no device is a broken contract, not a reason to skip. */
        fprintf(stderr, "duet_device_count succeeded with count %d\n", count);
        exit(1);
    }
    duet_context *ctx = NULL;
    s = duet_context_create(0, &ctx);
    snprintf(msg, sizeof msg, "%s", duet_last_error());
    if (s == DUET_ERROR_NO_DEVICE) {
        printf("skipped: device 0 of the %s backend cannot be opened: %s\n", duet_backend_name(),
               msg);
        exit(DT_SKIP);
    }
    if (s != DUET_SUCCESS || ctx == NULL) {
        fprintf(stderr, "duet_context_create(0) -> %s: %s\n", duet_status_string(s), msg);
        exit(1);
    }
    return ctx;
}

int dt_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, dt_checks, dt_failures);
    fflush(stdout);
    /* A program that checked nothing proved nothing. */
    if (dt_checks == 0) {
        fprintf(stderr, "%s: no checks ran\n", name);
        return 1;
    }
    return dt_failures != 0;
}

int dt_quick_mode(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0) return 1;
    const char *env = getenv("DUET_TEST_QUICK");
    return env != NULL && env[0] != '\0' && strcmp(env, "0") != 0;
}

/* ---- random numbers ---------------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

void dt_seed(uint64_t seed)
{
    /* splitmix64 of the seed, so that small consecutive seeds give unrelated streams and the
     * xorshift state is never zero. */
    uint64_t z = seed + 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    rng_state = z != 0 ? z : 0x9E3779B97F4A7C15u;
}

uint64_t dt_rand_u64(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

double dt_rand_uniform(double lo, double hi)
{
    double u = (double)(dt_rand_u64() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * u;
}

static int64_t u64_to_i64(uint64_t u)
{
    /* Two's complement reinterpretation without implementation-defined conversions. */
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

int64_t dt_rand_int(int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1u;
    uint64_t r = dt_rand_u64();
    if (span != 0) {
        /* Rejection keeps the distribution uniform for spans that do not divide 2^64. */
        uint64_t limit = UINT64_MAX - UINT64_MAX % span;
        while (r >= limit) r = dt_rand_u64();
        r %= span;
    }
    return u64_to_i64((uint64_t)lo + r);
}

double dt_rand_normal(void)
{
    double u1 = dt_rand_uniform(0.0, 1.0);
    double u2 = dt_rand_uniform(0.0, 1.0);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- matrix footprints ------------------------------------------------------------------- */

int64_t dt_matrix_extent(const duet_matrix *m)
{
    if (m->rows <= 0 || m->cols <= 0) return 0;
    if (m->layout == DUET_LAYOUT_ROW_MAJOR) return (m->rows - 1) * m->ld + m->cols;
    return (m->cols - 1) * m->ld + m->rows;
}

int64_t dt_matrix_batches(const duet_matrix *m)
{
    return m->batch_count > 1 ? m->batch_count : 1;
}

size_t dt_matrix_span_elems(const duet_matrix *m)
{
    int64_t one = dt_matrix_extent(m);
    if (one == 0) return m->offset;
    return m->offset + (size_t)((dt_matrix_batches(m) - 1) * m->batch_stride + one);
}

size_t dt_matrix_index(const duet_matrix *m, int64_t b, int64_t i, int64_t j)
{
    int64_t in = m->layout == DUET_LAYOUT_ROW_MAJOR ? i * m->ld + j : j * m->ld + i;
    return m->offset + (size_t)(b * m->batch_stride + in);
}

/* ---- element access ---------------------------------------------------------------------- */

/* IEEE binary formats narrower than float, described by their field widths. */
static double small_float_decode(uint32_t bits, int ebits, int mbits)
{
    int bias = (1 << (ebits - 1)) - 1;
    uint32_t emax = (1u << ebits) - 1u;
    uint32_t sign = bits >> (ebits + mbits) & 1u;
    uint32_t e = bits >> mbits & emax;
    uint32_t mant = bits & ((1u << mbits) - 1u);
    double v;
    if (e == 0)
        v = ldexp((double)mant, 1 - bias - mbits);
    else if (e == emax)
        v = mant != 0 ? NAN : INFINITY;
    else
        v = ldexp((double)(mant + (1u << mbits)), (int)e - bias - mbits);
    return sign ? -v : v;
}

/* Round to nearest, ties to even, straight from double: going through float first would
 * round twice and miss ties. */
static uint32_t small_float_encode(double v, int ebits, int mbits)
{
    int bias = (1 << (ebits - 1)) - 1;
    uint32_t emax = (1u << ebits) - 1u;
    uint32_t sign = signbit(v) ? 1u << (ebits + mbits) : 0u;
    uint32_t inf = emax << mbits;
    if (isnan(v)) return sign | inf | 1u << (mbits - 1);
    double a = fabs(v);
    if (isinf(a)) return sign | inf;
    if (a == 0.0) return sign;
    int e2;
    (void)frexp(a, &e2);
    int e = e2 - 1; /* a in [2^e, 2^(e+1)) */
    int emin = 1 - bias;
    if (e < emin) e = emin; /* subnormal: the quantum of the smallest exponent */
    double q = rint(ldexp(a, mbits - e));
    uint32_t qi = (uint32_t)q;
    uint32_t bits;
    if (e2 - 1 < emin)
        bits = qi; /* a carry into 2^mbits lands exactly on the smallest normal */
    else
        bits = ((uint32_t)(e + bias) << mbits) + (qi - (1u << mbits));
    if (bits >= inf) bits = inf;
    return sign | bits;
}

double dt_f8_decode(unsigned code, duet_dtype dtype)
{
    const int e4 = dtype == DUET_DTYPE_F8E4M3;
    const int mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15;
    const unsigned emask = e4 ? 15u : 31u;
    const double sign = code & 0x80u ? -1.0 : 1.0;
    const unsigned e = (code >> mbits) & emask, mant = code & ((1u << mbits) - 1u);
    if (e4 && e == 15 && mant == 7) return NAN;
    if (!e4 && e == 31) return mant ? NAN : sign * INFINITY;
    /* value = (e ? 1 + mant / 2^mbits : mant / 2^mbits) * 2^(max(e, 1) - bias) */
    const double frac = (e ? (double)(1u << mbits) : 0.0) + (double)mant;
    return sign * ldexp(frac, (e ? (int)e : 1) - bias - mbits);
}

unsigned dt_f8_encode(double v, duet_dtype dtype, int saturate)
{
    const int e4 = dtype == DUET_DTYPE_F8E4M3;
    const unsigned maxcode = e4 ? 0x7Eu : 0x7Bu;
    const unsigned sign = signbit(v) ? 0x80u : 0u;
    if (isnan(v)) return sign | (e4 ? 0x7Fu : 0x7Eu);
    const double a = fabs(v);
    unsigned best = 0;
    int over = isinf(v);
    if (!over && a >= dt_f8_decode(maxcode, dtype) * 2.0) {
        over = 1; /* far beyond: distances to the largest codes would round to equal */
    } else if (!over) {
        /* Candidates: every finite code and one past the largest (the value the exponent range
         * would give next: 480 for e4m3, 65536 for e5m2); codes alternate even and odd mantissas. */
        const double maxv = dt_f8_decode(maxcode, dtype);
        const double next = maxv + (maxv - dt_f8_decode(maxcode - 1, dtype));
        double bestd = INFINITY;
        for (unsigned c = 0; c <= maxcode + 1; c++) {
            const double x = c <= maxcode ? dt_f8_decode(c, dtype) : next;
            const double d = fabs(x - a);
            if (d < bestd || (d == bestd && (c & 1u) == 0)) bestd = d, best = c;
        }
        over = best > maxcode;
    }
    if (over) return sign | (saturate ? maxcode : e4 ? 0x7Fu : 0x7Cu);
    return sign | best;
}

double dt_get(const void *data, duet_dtype dtype, size_t index)
{
    const unsigned char *p = (const unsigned char *)data;
    switch (dtype) {
    case DUET_DTYPE_F32: {
        float f;
        memcpy(&f, p + index * 4, 4);
        return f;
    }
    case DUET_DTYPE_F64: {
        double d;
        memcpy(&d, p + index * 8, 8);
        return d;
    }
    case DUET_DTYPE_I32: {
        int32_t v;
        memcpy(&v, p + index * 4, 4);
        return v;
    }
    case DUET_DTYPE_F16: {
        uint16_t h;
        memcpy(&h, p + index * 2, 2);
        return small_float_decode(h, 5, 10);
    }
    case DUET_DTYPE_BF16: {
        uint16_t h;
        memcpy(&h, p + index * 2, 2);
        return small_float_decode(h, 8, 7);
    }
    case DUET_DTYPE_I8: {
        int8_t v;
        memcpy(&v, p + index, 1);
        return v;
    }
    case DUET_DTYPE_F8E4M3:
    case DUET_DTYPE_F8E5M2: return dt_f8_decode(p[index], dtype);
    }
    return NAN;
}

void dt_set(void *data, duet_dtype dtype, size_t index, double value)
{
    unsigned char *p = (unsigned char *)data;
    switch (dtype) {
    case DUET_DTYPE_F32: {
        float f = (float)value;
        memcpy(p + index * 4, &f, 4);
        return;
    }
    case DUET_DTYPE_F64: memcpy(p + index * 8, &value, 8); return;
    case DUET_DTYPE_I32: {
        /* Integers wrap modulo 2^32 like the library's i32 arithmetic. */
        uint32_t u = (uint32_t)(uint64_t)(int64_t)value;
        memcpy(p + index * 4, &u, 4);
        return;
    }
    case DUET_DTYPE_F16: {
        uint16_t h = (uint16_t)small_float_encode(value, 5, 10);
        memcpy(p + index * 2, &h, 2);
        return;
    }
    case DUET_DTYPE_BF16: {
        uint16_t h = (uint16_t)small_float_encode(value, 8, 7);
        memcpy(p + index * 2, &h, 2);
        return;
    }
    case DUET_DTYPE_I8: {
        uint8_t u = (uint8_t)(uint64_t)(int64_t)value;
        memcpy(p + index, &u, 1);
        return;
    }
    case DUET_DTYPE_F8E4M3:
    case DUET_DTYPE_F8E5M2: p[index] = (unsigned char)dt_f8_encode(value, dtype, 1); return;
    }
}

/* ---- sentinels --------------------------------------------------------------------------- */

/* Quiet NaNs with a payload no arithmetic produces, so a computed NaN written over a guard is
 * still told apart from the guard. */
static const uint64_t SENT_F64 = 0x7FF85A5A5A5A5A5Au;
static const uint32_t SENT_F32 = 0x7FC5A5A5u;
static const uint32_t SENT_I32 = 0x5A5A5A5Au;
static const uint16_t SENT_F16 = 0x7E5Au;
static const uint16_t SENT_BF16 = 0x7FDAu;
static const uint8_t SENT_I8 = 0x5Au;
/* e5m2: a NaN whose payload (S.11111.01) duet_convert never writes; e4m3 has a single NaN
 * pattern and no unused code, so it shares i8's (20.0). */
static const uint8_t SENT_F8E5M2 = 0x7Du;

static const void *sentinel_bytes(duet_dtype dtype, size_t *size)
{
    switch (dtype) {
    case DUET_DTYPE_F32: *size = 4; return &SENT_F32;
    case DUET_DTYPE_F64: *size = 8; return &SENT_F64;
    case DUET_DTYPE_I32: *size = 4; return &SENT_I32;
    case DUET_DTYPE_F16: *size = 2; return &SENT_F16;
    case DUET_DTYPE_BF16: *size = 2; return &SENT_BF16;
    case DUET_DTYPE_I8: *size = 1; return &SENT_I8;
    case DUET_DTYPE_F8E4M3: *size = 1; return &SENT_I8;
    case DUET_DTYPE_F8E5M2: *size = 1; return &SENT_F8E5M2;
    }
    *size = 1;
    return &SENT_I8;
}

void dt_fill_sentinel(void *data, duet_dtype dtype, size_t count)
{
    size_t size;
    const void *s = sentinel_bytes(dtype, &size);
    unsigned char *p = (unsigned char *)data;
    for (size_t i = 0; i < count; i++) memcpy(p + i * size, s, size);
}

int dt_is_sentinel(const void *data, duet_dtype dtype, size_t index)
{
    size_t size;
    const void *s = sentinel_bytes(dtype, &size);
    return memcmp((const unsigned char *)data + index * size, s, size) == 0;
}

/* ---- reference GEMM ---------------------------------------------------------------------- */

typedef struct ref_dims {
    int64_t m, n, k, batch;
} ref_dims;

static ref_dims gemm_dims(duet_op op_a, const duet_matrix *a, const duet_matrix *c)
{
    ref_dims d;
    d.m = c->rows;
    d.n = c->cols;
    d.k = op_a == DUET_OP_N ? a->cols : a->rows;
    d.batch = c->batch_count > 1 ? c->batch_count : 1;
    return d;
}

/* op(x)(i, j) of batch b; inputs with batch_count <= 1 broadcast. */
static size_t op_index(const duet_matrix *x, duet_op op, int64_t b, int64_t i, int64_t j)
{
    int64_t bx = x->batch_count > 1 ? b : 0;
    return op == DUET_OP_N ? dt_matrix_index(x, bx, i, j) : dt_matrix_index(x, bx, j, i);
}

/* Copies op(A) (m x k) and op(B) (k x n) of one batch into dense rows so the inner loop runs
 * over contiguous memory: the full suite pushes a billion multiply-adds through here. */
static void pack_operands(duet_op op_a, const duet_matrix *a, const void *a_data, duet_op op_b,
                          const duet_matrix *b, const void *b_data, ref_dims d, int64_t bi,
                          double *pa, double *pb, double *pb_abs)
{
    for (int64_t i = 0; i < d.m; i++)
        for (int64_t p = 0; p < d.k; p++)
            pa[i * d.k + p] = dt_get(a_data, a->dtype, op_index(a, op_a, bi, i, p));
    for (int64_t p = 0; p < d.k; p++)
        for (int64_t j = 0; j < d.n; j++) {
            double v = dt_get(b_data, b->dtype, op_index(b, op_b, bi, p, j));
            pb[p * d.n + j] = v;
            pb_abs[p * d.n + j] = fabs(v);
        }
}

/* One definition per accumulator type: f64 needs long double to keep the reference error
 * well below k * eps(f64), f32 is served exactly enough, and fast, by double. */
#define DT_REF_ROWS(NAME, ACC)                                                                     \
    static void NAME(const double *pa, const double *pb, const double *pb_abs, ref_dims d,         \
                     int64_t i, double *sum_out, double *abs_out, void *scratch)                   \
    {                                                                                              \
        ACC *acc = (ACC *)scratch;                                                                 \
        ACC *gau = acc + d.n;                                                                      \
        for (int64_t j = 0; j < d.n; j++) acc[j] = gau[j] = 0;                                     \
        for (int64_t p = 0; p < d.k; p++) {                                                        \
            ACC av = pa[i * d.k + p];                                                              \
            ACC aa = av < 0 ? -av : av;                                                            \
            const double *brow = pb + p * d.n;                                                     \
            const double *babs = pb_abs + p * d.n;                                                 \
            for (int64_t j = 0; j < d.n; j++) {                                                    \
                acc[j] += av * (ACC)brow[j];                                                       \
                gau[j] += aa * (ACC)babs[j];                                                       \
            }                                                                                      \
        }                                                                                          \
        for (int64_t j = 0; j < d.n; j++) {                                                        \
            sum_out[j] = (double)acc[j];                                                           \
            abs_out[j] = (double)gau[j];                                                           \
        }                                                                                          \
    }

DT_REF_ROWS(ref_rows_double, double)
DT_REF_ROWS(ref_rows_long_double, long double)

static void ref_gemm_float(duet_op op_a, duet_op op_b, double alpha, const duet_matrix *a,
                           const void *a_data, const duet_matrix *b, const void *b_data,
                           double beta, const duet_matrix *c, void *c_data, double *result,
                           double *gauge)
{
    ref_dims d = gemm_dims(op_a, a, c);
    size_t nk = (size_t)(d.m * d.k), kn = (size_t)(d.k * d.n);
    double *pa = malloc((nk + 1) * sizeof *pa);
    double *pb = malloc((kn + 1) * sizeof *pb);
    double *pb_abs = malloc((kn + 1) * sizeof *pb_abs);
    double *sum = malloc(((size_t)d.n + 1) * sizeof *sum);
    double *sabs = malloc(((size_t)d.n + 1) * sizeof *sabs);
    void *scratch = malloc(((size_t)d.n + 1) * 2 * sizeof(long double));
    if (!pa || !pb || !pb_abs || !sum || !sabs || !scratch) {
        fprintf(stderr, "dt_ref_gemm: out of host memory\n");
        exit(1);
    }
    /* alpha == 0 means A and B are not read at all (BLAS): NaN there must not leak. */
    int use_ab = alpha != 0.0 && d.k > 0;
    for (int64_t bi = 0; bi < d.batch; bi++) {
        if (use_ab) pack_operands(op_a, a, a_data, op_b, b, b_data, d, bi, pa, pb, pb_abs);
        for (int64_t i = 0; i < d.m; i++) {
            if (use_ab) {
                if (c->dtype == DUET_DTYPE_F64)
                    ref_rows_long_double(pa, pb, pb_abs, d, i, sum, sabs, scratch);
                else
                    ref_rows_double(pa, pb, pb_abs, d, i, sum, sabs, scratch);
            }
            for (int64_t j = 0; j < d.n; j++) {
                size_t ci = dt_matrix_index(c, bi, i, j);
                double r = 0.0, g = 0.0;
                if (use_ab) {
                    r = alpha * sum[j];
                    g = fabs(alpha) * sabs[j];
                }
                if (beta != 0.0) {
                    double old = dt_get(c_data, c->dtype, ci);
                    r += beta * old;
                    g += fabs(beta) * fabs(old);
                }
                size_t packed = (size_t)((bi * d.m + i) * d.n + j);
                if (result) result[packed] = r;
                if (gauge) gauge[packed] = g;
                dt_set(c_data, c->dtype, ci, r);
            }
        }
    }
    free(pa);
    free(pb);
    free(pb_abs);
    free(sum);
    free(sabs);
    free(scratch);
}

static uint32_t i32_bits(double v) { return (uint32_t)(int32_t)v; }

static double i32_value(uint32_t u)
{
    return u < 0x80000000u ? (double)u : (double)u - 4294967296.0;
}

/* i32 GEMM is defined modulo 2^32; unsigned arithmetic wraps without undefined behaviour. */
static void ref_gemm_i32(duet_op op_a, duet_op op_b, double alpha, const duet_matrix *a,
                         const void *a_data, const duet_matrix *b, const void *b_data, double beta,
                         const duet_matrix *c, void *c_data, double *result, double *gauge)
{
    ref_dims d = gemm_dims(op_a, a, c);
    uint32_t ua = i32_bits(alpha), ub = i32_bits(beta);
    for (int64_t bi = 0; bi < d.batch; bi++)
        for (int64_t i = 0; i < d.m; i++)
            for (int64_t j = 0; j < d.n; j++) {
                uint32_t acc = 0;
                if (alpha != 0.0)
                    for (int64_t p = 0; p < d.k; p++) {
                        uint32_t x =
                            i32_bits(dt_get(a_data, a->dtype, op_index(a, op_a, bi, i, p)));
                        uint32_t y =
                            i32_bits(dt_get(b_data, b->dtype, op_index(b, op_b, bi, p, j)));
                        acc += x * y;
                    }
                size_t ci = dt_matrix_index(c, bi, i, j);
                uint32_t r = ua * acc;
                if (beta != 0.0) r += ub * i32_bits(dt_get(c_data, c->dtype, ci));
                size_t packed = (size_t)((bi * d.m + i) * d.n + j);
                if (result) result[packed] = i32_value(r);
                if (gauge) gauge[packed] = 0.0;
                dt_set(c_data, c->dtype, ci, i32_value(r));
            }
}

void dt_ref_gemm_ex(duet_op op_a, duet_op op_b, double alpha, const duet_matrix *a,
                    const void *a_data, const duet_matrix *b, const void *b_data, double beta,
                    const duet_matrix *c, void *c_data, double *result, double *gauge)
{
    if (c->rows <= 0 || c->cols <= 0) return;
    if (c->dtype == DUET_DTYPE_I32 || c->dtype == DUET_DTYPE_I8)
        ref_gemm_i32(op_a, op_b, alpha, a, a_data, b, b_data, beta, c, c_data, result, gauge);
    else
        ref_gemm_float(op_a, op_b, alpha, a, a_data, b, b_data, beta, c, c_data, result, gauge);
}

void dt_ref_gemm(duet_op op_a, duet_op op_b, double alpha, const duet_matrix *a, const void *a_data,
                 const duet_matrix *b, const void *b_data, double beta, const duet_matrix *c,
                 void *c_data)
{
    dt_ref_gemm_ex(op_a, op_b, alpha, a, a_data, b, b_data, beta, c, c_data, NULL, NULL);
}

int dt_tiny_rule_fits(duet_dtype in, int64_t m, int64_t n, int64_t k, int64_t batch, int sms,
                      int all)
{
    if (m < 1 || n < 1 || k < 1 || batch < 1 || sms < 1) return 0;
    switch (in) {
    case DUET_DTYPE_F32:
    case DUET_DTYPE_F64:
    case DUET_DTYPE_F16:
    case DUET_DTYPE_BF16:
    case DUET_DTYPE_I8:
    case DUET_DTYPE_I32: break;
    default: return 0;
    }
    /* The micro-tile: the largest of 4, 2, 1 whose 16 tm tiles number at least the SMs (else
     * 1), or a smaller one whose tiles take fewer waves of resident blocks. */
    int64_t waves[5] = {0, 0, 0, 0, 0};
    int first = 1;
    for (int x = 4; x >= 1; x /= 2) {
        const int64_t tiles = ((m + 16 * x - 1) / (16 * x)) * ((n + 16 * x - 1) / (16 * x)) * batch;
        const int64_t slots = (int64_t)(x == 4 ? 2 : x == 2 ? 3 : 4) * sms;
        waves[x] = (tiles + slots - 1) / slots;
        if (first == 1 && x > 1 && tiles >= sms) first = x;
    }
    int tm = first;
    for (int x = first / 2; x >= 1; x /= 2)
        if (waves[x] < waves[tm]) tm = x;
    const int64_t cost = waves[tm] * ((k + 15) / 16);
    return cost <= (all ? 16 : 8) ? 16 * tm : 0;
}

int dt_tiny_rule_takes(duet_dtype in, int64_t m, int64_t n, int64_t k, int64_t batch, int sms)
{
    if (strcmp(duet_backend_name(), "cuda") != 0) return 0;
    const char *tiny = getenv("DUET_GEMM_TINY"), *no_small = getenv("DUET_GEMM_NO_SMALL");
    if ((tiny && strcmp(tiny, "0") == 0) || (no_small && strcmp(no_small, "1") == 0) ||
        getenv("DUET_GEMM_HOPPER_ALL") != NULL)
        return 0;
    return dt_tiny_rule_fits(in, m, n, k, batch, sms, tiny && strcmp(tiny, "all") == 0);
}
