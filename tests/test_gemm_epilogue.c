/* test_gemm_epilogue.c - duet_gemm_ex conformance: activations, dtypes, layouts, misuse. */
#include "harness.h"

#include <float.h>

/*
 * Each case is checked against a reference computed here in double (floats) or wrapping
 * uint32 (integers) from the very values the library reads, never against a backend:
 *   x = alpha * sum_k op(A) op(B) * row_scale * col_scale + beta * C + bias, aux = x,
 *   D = act(x) + residual.
 * Integer cases must match exactly (i8 outputs saturated). Float cases must lie within
 *   E = 2 (k + 8) eps * G,   G = |alpha row_scale col_scale| sum |a||b| + |beta C| + |bias|
 * (the GEMM's accumulation and the epilogue's roundings in the math type, eps = 2^-24 for f32
 * math, 2^-53 for f64), carried through the activation with a Lipschitz factor of 1.2 (no
 * duet activation has a larger slope), plus 16 eps (|x| + 1) for the activation's own
 * evaluation (erf, tanh and exp of the math library, a few ulps each) and 2 eps (|y| + |r|)
 * for the residual's sum; the one rounding to D's dtype adds half an ulp of it (2^-24 f32,
 * 2^-11 f16, 2^-8 bf16, 2^-53 f64) and, for f16, half its smallest subnormal. NaN must give
 * NaN where the reference has it. Elements of D's and aux's buffers outside the outputs (ld
 * padding, offsets) must keep their guard values.
 */

static duet_context *ctx;
static int quick;
/* The Hopper GEMM takes every problem it covers (cuda backend, capability 9.0,
 * DUET_GEMM_HOPPER_ALL set, DUET_GEMM_PORTABLE not): then every GEMM on 16-bit or TF32 inputs
 * that the planner puts on the Hopper kernel with D row-major has its epilogue fused into the
 * kernel's store (the problems other rules send elsewhere - k within one SIMT step, a narrow
 * TF32 C run as exact f32 - run the pass). fused_seen counts the fused calls. */
static int hopper_all;
static int fused_seen;
/* Fused calls into a split GEMM's reduction (any GPU). */
static int split_fused_seen;

enum { BIAS_NONE = 0, BIAS_ROW = 1, BIAS_COL = 2 };

typedef struct ecase {
    duet_dtype ab, c, d, v; /* v: the vectors', residual's and aux's dtype */
    int c_null;             /* C is NULL (beta 0) */
    duet_op op_a, op_b;
    duet_layout la, lb, lc, ld;
    int64_t m, n, k, batch;
    double alpha, beta;
    duet_activation act;
    double lo, hi;
    int bias, row_scale, col_scale, residual, aux;
    int vec_batch; /* vectors and residual: one per batch (else one for all) */
    int in_place;  /* D is C */
    int nan_bias;  /* bias element 0 is NaN */
    int a_bcast;   /* A: batch_count 1 */
    int c_nan;     /* C wholly NaN (with beta 0: never read) */
    int repeat;    /* run twice: the same bits */
    int tf32;      /* f32 inputs with options.math TF32 */
    int aligned;   /* A and B: lines and batches on 16-byte boundaries, no offset */
} ecase;

static const char *lay(duet_layout l) { return l == DUET_LAYOUT_ROW_MAJOR ? "row" : "col"; }

static void describe(const ecase *t, char *buf, size_t size)
{
    snprintf(buf, size,
             "A,B %s C %s D %s v %s %s%s A:%s,%s B:%s,%s C:%s D:%s m=%lld n=%lld k=%lld "
             "batch=%lld alpha=%g beta=%g act=%s bias=%d scales=%d,%d res=%d aux=%d vb=%d "
             "inplace=%d%s%s",
             duet_dtype_name(t->ab), t->c_null ? "NULL" : duet_dtype_name(t->c),
             duet_dtype_name(t->d), duet_dtype_name(t->v), t->nan_bias ? "nanbias " : "",
             t->a_bcast ? "A-bcast" : "", lay(t->la), t->op_a == DUET_OP_N ? "N" : "T", lay(t->lb),
             t->op_b == DUET_OP_N ? "N" : "T", lay(t->lc), lay(t->ld), (long long)t->m,
             (long long)t->n, (long long)t->k, (long long)t->batch, t->alpha, t->beta,
             duet_activation_name(t->act), t->bias, t->row_scale, t->col_scale, t->residual, t->aux,
             t->vec_batch, t->in_place, t->tf32 ? " tf32" : "", t->aligned ? " aligned" : "");
}

static int is_int(duet_dtype d) { return d == DUET_DTYPE_I32 || d == DUET_DTYPE_I8; }

/* A descriptor with ld padded by 2, offset 3 and batches 5 elements apart; aligned: lines and
 * batches padded to 16-byte multiples (plus 16 bytes), the first element at the buffer's start. */
static duet_matrix make_desc_al(duet_dtype dtype, duet_layout layout, int64_t rows, int64_t cols,
                                int64_t batch, int aligned)
{
    duet_matrix m;
    memset(&m, 0, sizeof m);
    m.dtype = dtype;
    m.layout = layout;
    m.rows = rows;
    m.cols = cols;
    const int64_t min_ld = layout == DUET_LAYOUT_ROW_MAJOR ? cols : rows;
    const int64_t per = 16 / (int64_t)duet_dtype_size(dtype); /* elements of 16 bytes */
    m.ld = aligned ? ((min_ld > 0 ? min_ld : 1) + per - 1) / per * per + per
                   : (min_ld > 0 ? min_ld : 1) + 2;
    m.offset = aligned ? 0 : 3;
    m.batch_count = 1;
    const int64_t one = (int64_t)dt_matrix_span_elems(&m) - (int64_t)m.offset;
    m.batch_count = batch;
    m.batch_stride = batch > 1 ? (aligned ? (one + per - 1) / per * per + per : one + 5) : 0;
    return m;
}

static duet_matrix make_desc(duet_dtype dtype, duet_layout layout, int64_t rows, int64_t cols,
                             int64_t batch)
{
    return make_desc_al(dtype, layout, rows, cols, batch, 0);
}

/* A host image of a matrix: its descriptor, data over its whole span, a buffer. */
typedef struct hmat {
    duet_matrix m;
    void *h;
    size_t bytes;
    duet_buffer *buf;
} hmat;

static double gen(duet_dtype dt, double lo, double hi)
{
    if (is_int(dt)) return (double)dt_rand_int((int64_t)lo, (int64_t)hi);
    return dt_rand_uniform(lo, hi);
}

/* Allocates m's span (at least 1 element), fills the guard pattern, then the elements. */
static void hmat_init(hmat *x, duet_matrix m, double lo, double hi)
{
    memset(x, 0, sizeof *x);
    x->m = m;
    size_t span = dt_matrix_span_elems(&m);
    if (span < 1) span = 1;
    x->bytes = span * duet_dtype_size(m.dtype);
    x->h = malloc(x->bytes);
    dt_fill_sentinel(x->h, m.dtype, span);
    const int64_t nb = dt_matrix_batches(&m);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < m.rows; i++)
            for (int64_t j = 0; j < m.cols; j++)
                dt_set(x->h, m.dtype, dt_matrix_index(&m, b, i, j), gen(m.dtype, lo, hi));
}

static void hmat_upload(hmat *x)
{
    DT_OK(duet_buffer_create(ctx, x->bytes, &x->buf));
    DT_OK(duet_buffer_write(NULL, x->buf, 0, x->h, x->bytes));
    x->m.buffer = x->buf;
}

static void hmat_free(hmat *x)
{
    if (x->buf) duet_buffer_destroy(x->buf);
    free(x->h);
    memset(x, 0, sizeof *x);
}

/* Element (b, i, j) of x, b taken modulo a batch_count of 1. */
static double val(const hmat *x, int64_t b, int64_t i, int64_t j)
{
    if (dt_matrix_batches(&x->m) == 1) b = 0;
    return dt_get(x->h, x->m.dtype, dt_matrix_index(&x->m, b, i, j));
}

static uint32_t ival(const hmat *x, int64_t b, int64_t i, int64_t j)
{
    return (uint32_t)(int64_t)val(x, b, i, j);
}

/* ---- the reference ---- */

static double ref_act(duet_activation act, double x, double lo, double hi)
{
    switch (act) {
    case DUET_ACT_RELU: return x > 0 || x != x ? x : 0.0;
    case DUET_ACT_GELU_TANH:
        return 0.5 * x *
               (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case DUET_ACT_GELU_ERF: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case DUET_ACT_SILU: return x / (1.0 + exp(-x));
    case DUET_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case DUET_ACT_CLAMP: return x != x ? x : x < lo ? lo : x > hi ? hi : x;
    default: return x;
    }
}

static uint32_t ref_act_i(duet_activation act, uint32_t x, double lo, double hi)
{
    const int32_t s = (int32_t)x;
    if (act == DUET_ACT_RELU) return s > 0 ? x : 0u;
    if (act == DUET_ACT_CLAMP)
        return (uint32_t)(int32_t)(s < (int32_t)lo   ? (int32_t)lo
                                   : s > (int32_t)hi ? (int32_t)hi
                                                     : s);
    return x;
}

static double unit(duet_dtype d)
{
    switch (d) {
    case DUET_DTYPE_F16: return 0x1p-11;
    case DUET_DTYPE_BF16: return 0x1p-8;
    case DUET_DTYPE_F64: return 0x1p-53;
    default: return 0x1p-24;
    }
}

static double i8_sat(uint32_t v)
{
    const int32_t s = (int32_t)v;
    return s < -128 ? -128.0 : s > 127 ? 127.0 : (double)s;
}

/* Compares one output element; returns 0 on a mismatch (reported once per matrix by caller). */
static int close_enough(duet_dtype out, double got, double ref, double err)
{
    if (ref != ref) return got != got;
    if (isinf(ref)) return got == ref;
    const double u = unit(out);
    const double tol = err * (1.0 + u) + u * fabs(ref) + (out == DUET_DTYPE_F16 ? 0x1p-25 : 0.0);
    return fabs(got - ref) <= tol;
}

static duet_dtype math_of(duet_dtype ab)
{
    return ab == DUET_DTYPE_F64 ? DUET_DTYPE_F64 : is_int(ab) ? DUET_DTYPE_I32 : DUET_DTYPE_F32;
}

/* Checks that every element of the buffer's image outside x's outputs is as before. */
static int guards_kept(const hmat *x, const void *before, const void *after)
{
    const size_t e = duet_dtype_size(x->m.dtype), n = x->bytes / e;
    unsigned char *mask = calloc(n ? n : 1, 1);
    const int64_t nb = dt_matrix_batches(&x->m);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < x->m.rows; i++)
            for (int64_t j = 0; j < x->m.cols; j++) mask[dt_matrix_index(&x->m, b, i, j)] = 1;
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        if (!mask[i] && memcmp((const char *)before + i * e, (const char *)after + i * e, e))
            ok = 0;
    free(mask);
    return ok;
}

static void run_case(const ecase *t)
{
    char what[512];
    describe(t, what, sizeof what);
    const int before = dt_failures;
    const duet_dtype math = math_of(t->ab);
    const int integer = math == DUET_DTYPE_I32;
    const double lo_in = integer ? -8 : -1, hi_in = integer ? 8 : 1;
    const int64_t m = t->m, n = t->n, k = t->k, nb = t->batch;
    const int64_t vb = t->vec_batch ? nb : 1;

    hmat A, B, C, D, bias, rs, cs, res, aux;
    memset(&C, 0, sizeof C);
    memset(&bias, 0, sizeof bias);
    memset(&rs, 0, sizeof rs);
    memset(&cs, 0, sizeof cs);
    memset(&res, 0, sizeof res);
    memset(&aux, 0, sizeof aux);
    const int64_t ar = t->op_a == DUET_OP_N ? m : k, ac = t->op_a == DUET_OP_N ? k : m;
    const int64_t br = t->op_b == DUET_OP_N ? k : n, bc = t->op_b == DUET_OP_N ? n : k;
    hmat_init(&A, make_desc_al(t->ab, t->la, ar, ac, t->a_bcast ? 1 : nb, t->aligned), lo_in,
              hi_in);
    hmat_init(&B, make_desc_al(t->ab, t->lb, br, bc, nb, t->aligned), lo_in, hi_in);
    if (!t->c_null)
        hmat_init(&C, make_desc(t->c, t->lc, m, n, nb), integer ? -50 : -1, integer ? 50 : 1);
    if (t->c_nan) {
        const int64_t cb = dt_matrix_batches(&C.m);
        for (int64_t b = 0; b < cb; b++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++)
                    dt_set(C.h, t->c, dt_matrix_index(&C.m, b, i, j), NAN);
    }
    if (t->in_place) {
        D = C; /* the same image, buffer and descriptor: compared with a copy below */
        D.h = malloc(C.bytes);
        memcpy(D.h, C.h, C.bytes);
    } else {
        hmat_init(&D, make_desc(t->d, t->ld, m, n, nb), 0, 0);
        /* Outputs start as guards too: every element is overwritten. */
        dt_fill_sentinel(D.h, t->d, D.bytes / duet_dtype_size(t->d));
    }
    if (t->bias)
        hmat_init(&bias,
                  make_desc(t->v,
                            t->bias == BIAS_ROW ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR,
                            t->bias == BIAS_ROW ? m : 1, t->bias == BIAS_ROW ? 1 : n, vb),
                  integer ? -20 : -1, integer ? 20 : 1);
    if (t->nan_bias) dt_set(bias.h, t->v, dt_matrix_index(&bias.m, 0, 0, 0), NAN);
    if (t->row_scale)
        hmat_init(&rs, make_desc(t->v, DUET_LAYOUT_ROW_MAJOR, m, 1, vb), integer ? -3 : 0.5,
                  integer ? 3 : 2);
    if (t->col_scale)
        hmat_init(&cs, make_desc(t->v, DUET_LAYOUT_COL_MAJOR, 1, n, vb), integer ? -3 : -2,
                  integer ? 3 : 2);
    if (t->residual)
        hmat_init(&res, make_desc(t->v, t->ld, m, n, vb), integer ? -100 : -1, integer ? 100 : 1);
    if (t->aux) {
        hmat_init(&aux, make_desc(t->v, t->lc, m, n, nb), 0, 0);
        dt_fill_sentinel(aux.h, t->v, aux.bytes / duet_dtype_size(t->v));
    }
    hmat *all[9] = {&A, &B, &C, &D, &bias, &rs, &cs, &res, &aux};
    for (int i = 0; i < 9; i++) {
        if (!all[i]->h || (i == 3 && t->in_place)) continue;
        hmat_upload(all[i]);
    }
    if (t->in_place) {
        D.buf = C.buf;
        D.m = C.m;
    }

    duet_gemm_epilogue epi;
    memset(&epi, 0, sizeof epi);
    epi.act = t->act;
    if (t->act == DUET_ACT_CLAMP) epi.act_lo = t->lo, epi.act_hi = t->hi;
    epi.bias = t->bias ? &bias.m : NULL;
    epi.row_scale = t->row_scale ? &rs.m : NULL;
    epi.col_scale = t->col_scale ? &cs.m : NULL;
    epi.residual = t->residual ? &res.m : NULL;
    epi.aux = t->aux ? &aux.m : NULL;
    duet_launch_info info;
    memset(&info, 'X', sizeof info);
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.info = &info;
    opt.math = t->tf32 ? DUET_MATH_TF32 : DUET_MATH_DEFAULT;
    DT_OK(duet_gemm_ex(NULL, t->op_a, t->op_b, t->alpha, &A.m, &B.m, t->beta,
                       t->c_null ? NULL : &C.m, &epi, &D.m, &opt));
    void *dout = malloc(D.bytes), *aout = t->aux ? malloc(aux.bytes) : NULL;
    DT_OK(duet_buffer_read(NULL, D.buf, 0, dout, D.bytes));
    if (t->aux) DT_OK(duet_buffer_read(NULL, aux.buf, 0, aout, aux.bytes));
    if (dt_failures != before) {
        fprintf(stderr, "  case: %s\n", what);
        goto done;
    }

    /* launch info: the epilogue pass is named and counted, after the GEMM's launches, unless
     * the call was the plain GEMM (no epilogue, a D the GEMM writes itself). */
    {
        const int gemm_writes_d =
            (t->d == t->ab && t->ab != DUET_DTYPE_I8) ||
            (t->d == DUET_DTYPE_F32 && (t->ab == DUET_DTYPE_F16 || t->ab == DUET_DTYPE_BF16)) ||
            (t->d == DUET_DTYPE_I32 && t->ab == DUET_DTYPE_I8);
        const int plain = t->act == DUET_ACT_NONE && !t->bias && !t->row_scale && !t->col_scale &&
                          !t->residual && !t->aux && gemm_writes_d &&
                          (t->in_place || t->beta == 0.0 || t->c_null);
        const int product = k > 0 && t->alpha != 0.0;
        DT_CHECK(memchr(info.epilogue, '\0', sizeof info.epilogue) != NULL,
                 "%s: info.epilogue is not NUL-terminated", what);
        /* Fused: the GEMM kernel applied the epilogue in its store (one launch, no pass). */
        const int fused = strncmp(info.epilogue, "fused_", 6) == 0;
        if (plain)
            DT_CHECK(info.epilogue[0] == '\0', "%s: info.epilogue \"%.48s\" for a plain GEMM", what,
                     info.epilogue);
        else
            DT_CHECK(strstr(info.epilogue, "gemm_epilogue_") != NULL &&
                         info.launches >= (product && !fused ? 2 : 1),
                     "%s: info.epilogue \"%.48s\", launches %d", what, info.epilogue,
                     info.launches);
        /* A split GEMM whose reduction can apply the epilogue (the memory-bound family, the
         * swizzled tensor-core kernel): fused on every GPU, with any operands. */
        const int split_reduce = strstr(info.kernel, "_splitk") != NULL &&
                                 (strncmp(info.kernel, "gemm_skinny_", 12) == 0 ||
                                  strncmp(info.kernel, "gemm_tcs_", 9) == 0);
        if (fused)
            DT_CHECK(product && ((strncmp(info.kernel, "gemm_wgmma_", 11) == 0 &&
                                  strstr(info.kernel, "_epi") != NULL) ||
                                 split_reduce),
                     "%s: fused epilogue \"%.48s\" after kernel %.64s", what, info.epilogue,
                     info.kernel);
        if (!plain && product && split_reduce)
            DT_CHECK(fused, "%s: info.epilogue \"%.48s\" after split kernel %.64s, want fused",
                     what, info.epilogue, info.kernel);
        split_fused_seen += fused && split_reduce;
        /* Where the planner puts the GEMM on the Hopper kernel, the epilogue is fused: always
         * with D row-major, and with D column-major where the plan turns the problem (D^T is
         * then row-major); never on another kernel. */
        const int lowp_in = t->ab == DUET_DTYPE_F16 || t->ab == DUET_DTYPE_BF16;
        const int may_fuse = hopper_all && !plain && product && (lowp_in || t->tf32) &&
                             strncmp(info.kernel, "gemm_wgmma_", 11) == 0;
        const int must_fuse = may_fuse && t->ld == DUET_LAYOUT_ROW_MAJOR;
        const char *want = must_fuse ? "fused" : may_fuse ? "either" : "a pass";
        if (hopper_all && !plain)
            DT_CHECK(must_fuse ? fused : may_fuse || !fused,
                     "%s: info.epilogue \"%.48s\" (kernel %.64s), want %s", what, info.epilogue,
                     info.kernel, want);
        fused_seen += fused;
    }
    /* The same call again gives the same bits (no atomics, no order left to chance). */
    if (t->repeat && !t->in_place) {
        void *again = malloc(D.bytes);
        DT_OK(duet_gemm_ex(NULL, t->op_a, t->op_b, t->alpha, &A.m, &B.m, t->beta,
                           t->c_null ? NULL : &C.m, &epi, &D.m, &opt));
        DT_OK(duet_buffer_read(NULL, D.buf, 0, again, D.bytes));
        DT_CHECK(memcmp(again, dout, D.bytes) == 0, "%s: a second run gave other bits", what);
        free(again);
    }

    int bad_d = 0, bad_aux = 0;
    for (int64_t b = 0; b < nb; b++) {
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
                double acc = 0, gauge = 0;
                uint32_t iacc = 0;
                for (int64_t p = 0; p < k; p++) {
                    const double av = t->op_a == DUET_OP_N ? val(&A, b, i, p) : val(&A, b, p, i);
                    const double bv = t->op_b == DUET_OP_N ? val(&B, b, p, j) : val(&B, b, j, p);
                    acc += av * bv;
                    gauge += fabs(av * bv);
                    iacc += (uint32_t)(int64_t)av * (uint32_t)(int64_t)bv;
                }
                const int product = k > 0 && t->alpha != 0;
                const size_t di = dt_matrix_index(&D.m, b, i, j);
                double got = dt_get(dout, t->d, di);
                if (integer) {
                    uint32_t x = 0;
                    if (product) {
                        x = (uint32_t)(int64_t)t->alpha * iacc;
                        if (t->row_scale) x *= ival(&rs, b, i, 0);
                        if (t->col_scale) x *= ival(&cs, b, 0, j);
                    }
                    if (!t->c_null && t->beta != 0)
                        x += (uint32_t)(int64_t)t->beta * ival(&C, b, i, j);
                    if (t->bias)
                        x += t->bias == BIAS_ROW ? ival(&bias, b, i, 0) : ival(&bias, b, 0, j);
                    if (t->aux && !bad_aux) {
                        const double a = dt_get(aout, t->v, dt_matrix_index(&aux.m, b, i, j));
                        const double r = t->v == DUET_DTYPE_I8 ? i8_sat(x) : (double)(int32_t)x;
                        if (a != r) {
                            bad_aux = 1;
                            DT_CHECK(a == r, "%s: aux(%lld,%lld,%lld) = %.17g, want %.17g", what,
                                     (long long)b, (long long)i, (long long)j, a, r);
                        }
                    }
                    uint32_t y = ref_act_i(t->act, x, t->lo, t->hi);
                    if (t->residual) y += ival(&res, b, i, j);
                    const double want = t->d == DUET_DTYPE_I8 ? i8_sat(y) : (double)(int32_t)y;
                    if (got != want && !bad_d) {
                        bad_d = 1;
                        DT_CHECK(got == want, "%s: D(%lld,%lld,%lld) = %.17g, want %.17g", what,
                                 (long long)b, (long long)i, (long long)j, got, want);
                    }
                    continue;
                }
                double x = 0, g = 0, gp = 0;
                if (product) {
                    double s = t->alpha;
                    if (t->row_scale) s *= val(&rs, b, i, 0);
                    if (t->col_scale) s *= val(&cs, b, 0, j);
                    x = s * acc;
                    g = gp = fabs(s) * gauge;
                }
                if (!t->c_null && t->beta != 0) {
                    const double cv = t->beta * val(&C, b, i, j);
                    x += cv;
                    g += fabs(cv);
                }
                if (t->bias) {
                    const double bv =
                        t->bias == BIAS_ROW ? val(&bias, b, i, 0) : val(&bias, b, 0, j);
                    x += bv;
                    g += fabs(bv);
                }
                const double eps = math == DUET_DTYPE_F64 ? 0x1p-53 : 0x1p-24;
                /* TF32 keeps 10 bits of each input's mantissa (truncated, at worst): 2^-9 of
                 * each product. */
                const double ex = 2.0 * (double)(k + 8) * eps * g + (t->tf32 ? 0x1p-9 * gp : 0.0);
                if (t->aux && !bad_aux) {
                    const double a = dt_get(aout, t->v, dt_matrix_index(&aux.m, b, i, j));
                    if (!close_enough(t->v, a, x, ex)) {
                        bad_aux = 1;
                        DT_CHECK(0, "%s: aux(%lld,%lld,%lld) = %.17g, want %.17g (bound %g)", what,
                                 (long long)b, (long long)i, (long long)j, a, x, ex);
                    }
                }
                double y = ref_act(t->act, x, t->lo, t->hi);
                double r = t->residual ? val(&res, b, i, j) : 0.0;
                double ey = 1.2 * ex + 16.0 * eps * (fabs(x) + 1.0);
                y += r;
                ey += 2.0 * eps * (fabs(y) + fabs(r));
                if (!close_enough(t->d, got, y, ey) && !bad_d) {
                    bad_d = 1;
                    DT_CHECK(0, "%s: D(%lld,%lld,%lld) = %.17g, want %.17g (bound %g)", what,
                             (long long)b, (long long)i, (long long)j, got, y, ey);
                }
            }
        }
    }
    DT_CHECK(guards_kept(&D, D.h, dout), "%s: D's buffer changed outside D", what);
    if (t->aux)
        DT_CHECK(guards_kept(&aux, aux.h, aout), "%s: aux's buffer changed outside aux", what);
done:
    free(dout);
    free(aout);
    if (t->in_place) {
        free(D.h);
        D.h = NULL;
        D.buf = NULL;
    }
    for (int i = 0; i < 9; i++)
        if (all[i]->h) hmat_free(all[i]);
}

/* ---- the sweep ---- */

typedef struct family {
    duet_dtype ab, c;
} family;

static const family FAMILIES[] = {
    {DUET_DTYPE_F32, DUET_DTYPE_F32},   {DUET_DTYPE_F64, DUET_DTYPE_F64},
    {DUET_DTYPE_F16, DUET_DTYPE_F16},   {DUET_DTYPE_F16, DUET_DTYPE_F32},
    {DUET_DTYPE_BF16, DUET_DTYPE_BF16}, {DUET_DTYPE_BF16, DUET_DTYPE_F32},
    {DUET_DTYPE_I32, DUET_DTYPE_I32},   {DUET_DTYPE_I8, DUET_DTYPE_I32},
};

/* D's (and the vectors') dtypes for a math type. */
static int out_dtypes(duet_dtype math, duet_dtype out[3])
{
    if (math == DUET_DTYPE_F32) {
        out[0] = DUET_DTYPE_F32, out[1] = DUET_DTYPE_F16, out[2] = DUET_DTYPE_BF16;
        return 3;
    }
    if (math == DUET_DTYPE_F64) {
        out[0] = DUET_DTYPE_F64, out[1] = DUET_DTYPE_F32;
        return 2;
    }
    out[0] = DUET_DTYPE_I32, out[1] = DUET_DTYPE_I8;
    return 2;
}

static void sweep(void)
{
    static const duet_activation ACTS[] = {DUET_ACT_NONE,     DUET_ACT_RELU, DUET_ACT_GELU_TANH,
                                           DUET_ACT_GELU_ERF, DUET_ACT_SILU, DUET_ACT_SIGMOID,
                                           DUET_ACT_CLAMP};
    unsigned counter = 0;
    int cases = 0;
    for (size_t f = 0; f < sizeof FAMILIES / sizeof FAMILIES[0]; f++) {
        const duet_dtype math = math_of(FAMILIES[f].ab);
        duet_dtype outs[3];
        const int nout = out_dtypes(math, outs);
        for (int od = 0; od < nout; od++) {
            for (int ai = 0; ai < 7; ai++) {
                const duet_activation act = ACTS[ai];
                if (math == DUET_DTYPE_I32 && act != DUET_ACT_NONE && act != DUET_ACT_RELU &&
                    act != DUET_ACT_CLAMP)
                    continue;
                for (int bk = 0; bk < 3; bk++) {
                    /* Full: all eight layouts (op_a, op_b, D's layout); quick: one, rotating. */
                    const int nl = quick ? 1 : 8;
                    for (int l = 0; l < nl; l++) {
                        const unsigned r = counter++;
                        const int lsel = quick ? (int)(r % 8) : l;
                        ecase t;
                        memset(&t, 0, sizeof t);
                        t.ab = FAMILIES[f].ab;
                        t.c = FAMILIES[f].c;
                        t.d = outs[od];
                        t.v = outs[(od + r / 3) % nout];
                        t.op_a = (lsel & 1) ? DUET_OP_T : DUET_OP_N;
                        t.op_b = (lsel & 2) ? DUET_OP_T : DUET_OP_N;
                        t.ld = (lsel & 4) ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                        t.la = (r / 2) % 2 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                        t.lb = (r / 4) % 2 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                        t.lc = (r / 3) % 2 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                        t.m = 7 + (int64_t)(r % 5);
                        t.n = 9 + (int64_t)(r % 7);
                        t.k = 5 + (int64_t)(r % 6);
                        t.batch = r % 4 == 0 ? 3 : 1;
                        t.alpha = math == DUET_DTYPE_I32 ? 2 : 0.75;
                        t.beta = r % 5 == 0 ? 0.0 : math == DUET_DTYPE_I32 ? -1 : 0.5;
                        t.c_null = t.beta == 0.0 && r % 10 == 0;
                        t.act = act;
                        t.lo = math == DUET_DTYPE_I32 ? -20 : -0.5;
                        t.hi = math == DUET_DTYPE_I32 ? 30 : 0.75;
                        t.bias = bk;
                        t.row_scale = r % 3 == 1;
                        t.col_scale = r % 4 == 2;
                        t.residual = r % 2 == 1;
                        t.aux = r % 3 != 0;
                        t.vec_batch = (r / 5) % 2;
                        t.a_bcast = t.batch > 1 && r % 8 == 4;
                        /* D is C where both have one dtype, on every sixth case. */
                        t.in_place = !t.c_null && t.d == t.c && r % 6 == 5;
                        if (t.in_place) t.ld = t.lc;
                        run_case(&t);
                        cases++;
                    }
                }
            }
        }
    }
    printf("sweep: %d cases\n", cases);
}

/* Shapes and flows the sweep does not reach: larger sizes (several GPU blocks), no product
 * (alpha 0, K 0), D == C with and without scales, NaN propagation, broadcast vectors over
 * many batches. */
static void special(void)
{
    ecase t;
    memset(&t, 0, sizeof t);
    t.ab = DUET_DTYPE_BF16, t.c = DUET_DTYPE_F32, t.d = DUET_DTYPE_BF16, t.v = DUET_DTYPE_BF16;
    t.la = t.lb = t.lc = t.ld = DUET_LAYOUT_ROW_MAJOR;
    t.m = quick ? 67 : 130, t.n = quick ? 300 : 517, t.k = 40, t.batch = 2;
    t.alpha = 1.0, t.beta = 1.0, t.act = DUET_ACT_GELU_TANH, t.bias = BIAS_COL, t.aux = 1;
    t.residual = 1, t.repeat = 1;
    run_case(&t);
    t.ld = DUET_LAYOUT_COL_MAJOR, t.act = DUET_ACT_SILU, t.bias = BIAS_ROW, t.row_scale = 1;
    t.col_scale = 1;
    run_case(&t);
    /* f32 math straight into D (D in the math dtype, C separate), and in place. */
    t.ab = DUET_DTYPE_F32, t.c = DUET_DTYPE_F32, t.d = DUET_DTYPE_F32, t.v = DUET_DTYPE_F32;
    run_case(&t);
    t.in_place = 1, t.ld = t.lc, t.row_scale = t.col_scale = 0;
    run_case(&t); /* the GEMM adds beta * C itself */
    t.row_scale = 1;
    run_case(&t); /* scaled: through the scratch */
    t.in_place = 0;
    /* No product: alpha 0 and K 0 (A and B never read; scales ignored). */
    t.alpha = 0.0;
    run_case(&t);
    t.alpha = 1.0, t.k = 0;
    run_case(&t);
    t.k = 9;
    /* beta 0 never reads C (here NaN), in every flow: into D, through the scratch, D == C. */
    t.beta = 0.0, t.c_nan = 1;
    run_case(&t);
    t.d = DUET_DTYPE_F16;
    run_case(&t);
    t.d = DUET_DTYPE_F32, t.in_place = 1;
    run_case(&t);
    t.row_scale = 0;
    run_case(&t);
    t.beta = 1.0, t.c_nan = 0, t.in_place = 0;
    /* NaN in the bias reaches D and aux of its column for every activation. */
    t.m = 5, t.n = 6, t.batch = 1, t.bias = BIAS_COL, t.nan_bias = 1;
    for (int a = DUET_ACT_NONE; a <= DUET_ACT_CLAMP; a++) {
        t.act = (duet_activation)a;
        t.lo = -0.5, t.hi = 0.5;
        run_case(&t);
    }
    t.nan_bias = 0;
    /* Many batches, vectors broadcast; i8 with saturating i8 D; f64. */
    t.batch = 9, t.vec_batch = 0, t.act = DUET_ACT_RELU;
    run_case(&t);
    t.ab = DUET_DTYPE_I8, t.c = DUET_DTYPE_I32, t.d = DUET_DTYPE_I8, t.v = DUET_DTYPE_I32;
    t.alpha = 3, t.beta = 2, t.act = DUET_ACT_CLAMP, t.lo = -100, t.hi = 90;
    run_case(&t);
    t.ab = DUET_DTYPE_F64, t.c = DUET_DTYPE_F64, t.d = DUET_DTYPE_F32, t.v = DUET_DTYPE_F64;
    t.alpha = 0.5, t.beta = -1.5, t.act = DUET_ACT_GELU_ERF;
    run_case(&t);
    /* The empty epilogue into a D of another dtype (one cast), and into a C-like D. */
    memset(&t, 0, sizeof t);
    t.ab = DUET_DTYPE_F32, t.c = DUET_DTYPE_F32, t.d = DUET_DTYPE_BF16, t.v = DUET_DTYPE_F32;
    t.m = 33, t.n = 65, t.k = 17, t.batch = 1, t.alpha = 1.0, t.beta = 1.0;
    run_case(&t);
    t.d = DUET_DTYPE_F32, t.beta = 0.0, t.c_null = 1;
    run_case(&t);
}

/* The f32 activations over their whole range, against the reference: D = act(x) for a column
 * of x values (x * 1, k = 1: the product is x exactly) from a fine grid over [-40, 40], where
 * the exp2 and reciprocal forms meet their cancellations and tails, and far values up to 1e30
 * (x^3 overflows). duet.h promises 4 ulps of max(|act(x)|, 1) in f32; checked at 8. */
static void act_range(void)
{
    const int64_t grid = quick ? 4001 : 16001, far = 12, m = grid + 2 * far;
    static const double FAR[12] = {45, 60, 87, 88.8, 100, 150, 1e3, 1e6, 1e12, 1e20, 1e25, 1e30};
    float *x = malloc((size_t)m * 4), *d = malloc((size_t)m * 4);
    for (int64_t i = 0; i < grid; i++)
        x[i] = (float)(-40.0 + 80.0 * (double)i / (double)(grid - 1));
    for (int i = 0; i < far; i++)
        x[grid + 2 * i] = (float)FAR[i], x[grid + 2 * i + 1] = -(float)FAR[i];
    const float one = 1.0f;
    duet_buffer *bx, *bo, *bd;
    DT_OK(duet_buffer_create(ctx, (size_t)m * 4, &bx));
    DT_OK(duet_buffer_create(ctx, 4, &bo));
    DT_OK(duet_buffer_create(ctx, (size_t)m * 4, &bd));
    DT_OK(duet_buffer_write(NULL, bx, 0, x, (size_t)m * 4));
    DT_OK(duet_buffer_write(NULL, bo, 0, &one, 4));
    duet_matrix A = duet_matrix_make(bx, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, m, 1);
    duet_matrix B = duet_matrix_make(bo, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 1, 1);
    duet_matrix D = duet_matrix_make(bd, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, m, 1);
    static const duet_activation ACTS[] = {DUET_ACT_GELU_TANH, DUET_ACT_GELU_ERF, DUET_ACT_SILU,
                                           DUET_ACT_SIGMOID};
    for (size_t a = 0; a < sizeof ACTS / sizeof ACTS[0]; a++) {
        duet_gemm_epilogue e;
        memset(&e, 0, sizeof e);
        e.act = ACTS[a];
        DT_OK(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, &A, &B, 0.0, NULL, &e, &D, NULL));
        DT_OK(duet_buffer_read(NULL, bd, 0, d, (size_t)m * 4));
        double worst = 0;
        int64_t at = 0;
        for (int64_t i = 0; i < m; i++) {
            const double ref = ref_act(ACTS[a], (double)x[i], 0, 0);
            const double err = fabs((double)d[i] - ref) / (fabs(ref) > 1 ? fabs(ref) : 1.0);
            if (!(err <= worst)) worst = err, at = i; /* NaN is the worst */
        }
        DT_CHECK(worst <= 8 * 0x1p-24, "act_range %s: %.2f ulps of max(|y|, 1) at x = %.9g",
                 duet_activation_name(ACTS[a]), worst / 0x1p-24, (double)x[at]);
        printf("act_range %-9s: %.2f ulps at most\n", duet_activation_name(ACTS[a]),
               worst / 0x1p-24);
    }
    duet_buffer_destroy(bx);
    duet_buffer_destroy(bo);
    duet_buffer_destroy(bd);
    free(x);
    free(d);
}

/* The inputs whose GEMM the Hopper kernel can run with the epilogue in its store: every
 * activation, bias per row and per column, aux, residual, scales, beta with C apart from D and
 * as D, D of f32, f16 and bf16, edges of M and N inside a tile (m, n not multiples of 128 and
 * 256, and n > 256: two tile columns), batches. On the cpu backend and elsewhere the same
 * cases run the two passes. */
static void fused(void)
{
    static const duet_activation ACTS[] = {DUET_ACT_NONE,     DUET_ACT_RELU, DUET_ACT_GELU_TANH,
                                           DUET_ACT_GELU_ERF, DUET_ACT_SILU, DUET_ACT_SIGMOID,
                                           DUET_ACT_CLAMP};
    static const family INPUTS[] = {{DUET_DTYPE_BF16, DUET_DTYPE_BF16},
                                    {DUET_DTYPE_F16, DUET_DTYPE_F32},
                                    {DUET_DTYPE_F32, DUET_DTYPE_F32}};
    static const duet_dtype OUTS[] = {DUET_DTYPE_F32, DUET_DTYPE_F16, DUET_DTYPE_BF16};
    unsigned r = 0;
    int cases = 0;
    const int seen_before = fused_seen;
    for (int f = 0; f < 3; f++) {
        for (int od = 0; od < 3; od++) {
            for (int ai = 0; ai < 7; ai++) {
                const int nb = quick ? 1 : 3;
                for (int bk = 0; bk < nb; bk++, r++) {
                    ecase t;
                    memset(&t, 0, sizeof t);
                    t.ab = INPUTS[f].ab;
                    t.tf32 = t.ab == DUET_DTYPE_F32;
                    t.c = (r / 2) % 2 ? DUET_DTYPE_F32 : INPUTS[f].c;
                    t.d = OUTS[od];
                    t.v = OUTS[(od + r) % 3];
                    t.op_a = r % 2 ? DUET_OP_T : DUET_OP_N;
                    t.op_b = (r / 3) % 2 ? DUET_OP_T : DUET_OP_N;
                    t.la = (r / 5) % 2 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                    t.lb = (r / 7) % 2 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                    t.lc = (r / 4) % 2 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                    t.ld = (r / 6) % 3 == 2 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                    t.m = 17 + (int64_t)(r * 37 % 150);
                    t.n = 17 + (int64_t)(r * 53 % 300);
                    t.k = 8 + (int64_t)(r * 7 % 41);
                    t.batch = r % 4 == 1 ? 2 : 1;
                    t.alpha = 0.75;
                    t.beta = r % 3 == 0 ? 0.0 : 0.5;
                    t.c_null = t.beta == 0.0 && r % 2 == 0;
                    t.act = ACTS[ai];
                    t.lo = -0.5, t.hi = 0.75;
                    t.bias = quick ? (int)(r % 3) : bk;
                    t.row_scale = r % 3 == 1;
                    t.col_scale = r % 4 == 2;
                    t.residual = r % 2 == 1;
                    t.aux = r % 3 != 2;
                    t.vec_batch = (r / 3) % 2;
                    t.a_bcast = t.batch > 1 && r % 8 == 5;
                    t.in_place = !t.c_null && t.beta != 0.0 && t.d == t.c && r % 5 == 2;
                    if (t.in_place) t.ld = t.lc;
                    run_case(&t);
                    cases++;
                }
            }
        }
    }
    printf("fused: %d cases, %d fused\n", cases, fused_seen - seen_before);
    /* Under DUET_GEMM_HOPPER_ALL most of these run on the Hopper kernel with D row-major. */
    if (hopper_all)
        DT_CHECK(3 * (fused_seen - seen_before) >= cases, "fused: %d of %d cases fused",
                 fused_seen - seen_before, cases);
}

/* Problems that split k on a GPU (a narrow C with long k on the memory-bound family, either
 * way round; a 64-wide one on the swizzled tensor-core kernel): the epilogue runs in the split's
 * reduction, for every input family, every activation, the operands in their dtypes and
 * layouts, scales, aux, residual, beta with C, batches. On the cpu backend the same cases run
 * the two passes. */
static void split_fused(void)
{
    static const duet_activation ACTS[] = {DUET_ACT_NONE,     DUET_ACT_RELU, DUET_ACT_GELU_TANH,
                                           DUET_ACT_GELU_ERF, DUET_ACT_SILU, DUET_ACT_SIGMOID,
                                           DUET_ACT_CLAMP};
    static const int64_t SHAPES[][3] = {
        {700, 16, 1536}, {9, 500, 2048}, {520, 5, 3000}, {256, 64, 2048}};
    const int gpu = strcmp(duet_backend_name(), "cpu") != 0;
    unsigned r = 0;
    int cases = 0;
    const int seen_before = split_fused_seen;
    for (size_t f = 0; f < sizeof FAMILIES / sizeof FAMILIES[0]; f++) {
        const duet_dtype math = math_of(FAMILIES[f].ab);
        duet_dtype outs[3];
        const int nout = out_dtypes(math, outs);
        for (int sh = 0; sh < 4; sh++) {
            if (quick && (sh + (int)f) % 2) continue;
            for (int ai = 0; ai < 7; ai++, r++) {
                const duet_activation act = ACTS[ai];
                if (math == DUET_DTYPE_I32 && act != DUET_ACT_NONE && act != DUET_ACT_RELU &&
                    act != DUET_ACT_CLAMP)
                    continue;
                if (quick && ai % 3 != (int)(r % 3)) continue;
                ecase t;
                memset(&t, 0, sizeof t);
                t.ab = FAMILIES[f].ab;
                t.c = FAMILIES[f].c;
                t.d = outs[r % nout];
                t.v = outs[(r / 2) % nout];
                /* The wide operand K-major (the memory-bound family's MMA form takes only that
                 * one; the rest of the layouts come round on the SIMT forms). */
                t.op_a = r % 3 == 1 ? DUET_OP_T : DUET_OP_N;
                t.op_b = r % 4 == 2 ? DUET_OP_N : DUET_OP_T;
                t.la = t.op_a == DUET_OP_T ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                t.lb = r % 5 == 3 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                t.lc = (r / 3) % 2 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                t.ld = (r / 2) % 3 == 2 ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR;
                t.m = SHAPES[sh][0];
                t.n = SHAPES[sh][1];
                t.k = SHAPES[sh][2];
                if (!gpu) t.k = t.k / 16 + 5; /* only the reference's check there */
                t.batch = r % 5 == 1 ? 2 : 1;
                t.alpha = math == DUET_DTYPE_I32 ? 2 : 0.75;
                t.beta = r % 3 == 0 ? 0.0 : math == DUET_DTYPE_I32 ? -1 : 0.5;
                t.c_null = t.beta == 0.0 && r % 2 == 0;
                t.act = act;
                t.lo = math == DUET_DTYPE_I32 ? -20 : -0.5;
                t.hi = math == DUET_DTYPE_I32 ? 30 : 0.75;
                t.bias = (int)(r % 3);
                t.row_scale = r % 3 == 1;
                t.col_scale = r % 4 == 2;
                t.residual = r % 2 == 1;
                t.aux = r % 3 != 2;
                t.vec_batch = (r / 3) % 2;
                t.in_place = !t.c_null && t.beta != 0.0 && t.d == t.c && r % 5 == 2;
                if (t.in_place) t.ld = t.lc;
                t.repeat = r % 4 == 0;
                t.aligned = r % 2 == 0; /* the MMA forms where A and B are on 16 bytes */
                run_case(&t);
                cases++;
            }
        }
    }
    printf("split fused: %d cases, %d fused\n", cases, split_fused_seen - seen_before);
    /* On NVIDIA GPUs most of these split (the plan's split fills one wave of its blocks). */
    if (strcmp(duet_backend_name(), "cuda") == 0)
        DT_CHECK(2 * (split_fused_seen - seen_before) >= cases, "split fused: %d of %d cases fused",
                 split_fused_seen - seen_before, cases);
}

/* ---- misuse: a clear status naming the argument, and nothing written ---- */

static void misuse(void)
{
    const int64_t m = 4, n = 5, k = 3;
    duet_buffer *ba, *bb, *bc, *bd, *bv, *bx;
    const size_t big = 4096;
    DT_OK(duet_buffer_create(ctx, big, &ba));
    DT_OK(duet_buffer_create(ctx, big, &bb));
    DT_OK(duet_buffer_create(ctx, big, &bc));
    DT_OK(duet_buffer_create(ctx, big, &bd));
    DT_OK(duet_buffer_create(ctx, big, &bv));
    DT_OK(duet_buffer_create(ctx, big, &bx));
    unsigned char pattern[4096];
    memset(pattern, 0xA5, sizeof pattern);
    /* Every buffer holds values (the calls that succeed read them; initcheck is clean). */
    duet_buffer *all[] = {ba, bb, bc, bd, bv, bx};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        DT_OK(duet_buffer_write(NULL, all[i], 0, pattern, big));
    duet_buffer *bvec;
    DT_OK(duet_buffer_create(ctx, 8, &bvec)); /* too small for 5 f32 */

    const duet_dtype F = DUET_DTYPE_F32;
    duet_matrix A = duet_matrix_make(ba, F, DUET_LAYOUT_ROW_MAJOR, m, k);
    duet_matrix B = duet_matrix_make(bb, F, DUET_LAYOUT_ROW_MAJOR, k, n);
    duet_matrix C = duet_matrix_make(bc, F, DUET_LAYOUT_ROW_MAJOR, m, n);
    duet_matrix D = duet_matrix_make(bd, F, DUET_LAYOUT_ROW_MAJOR, m, n);
    duet_matrix Db = duet_matrix_make(bd, DUET_DTYPE_BF16, DUET_LAYOUT_ROW_MAJOR, m, n);
    duet_matrix bias = duet_matrix_make(bv, F, DUET_LAYOUT_ROW_MAJOR, 1, n);
    duet_matrix aux = duet_matrix_make(bx, F, DUET_LAYOUT_ROW_MAJOR, m, n);
    duet_gemm_epilogue e;
    const duet_status ARG = DUET_ERROR_INVALID_ARGUMENT, UNS = DUET_ERROR_UNSUPPORTED;
#define EX(...) duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 1.0, __VA_ARGS__, NULL)
#define RESET() memset(&e, 0, sizeof e)

    RESET();
    DT_FAILS(EX(&A, &B, 1.0, &C, &e, NULL), ARG, "D is NULL");
    DT_FAILS(duet_gemm_ex(NULL, (duet_op)7, DUET_OP_N, 1.0, &A, &B, 1.0, &C, &e, &D, NULL), ARG,
             "op_a");
    {
        duet_matrix Ah = A;
        Ah.dtype = DUET_DTYPE_F16;
        DT_FAILS(EX(&Ah, &B, 1.0, &C, &e, &D), ARG, "dtypes of A and B differ");
    }
    {
        duet_matrix Di = D;
        Di.dtype = DUET_DTYPE_I32;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &Di), UNS, "D is i32");
        duet_matrix Dd = D;
        Dd.dtype = DUET_DTYPE_F64;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &Dd), UNS, "f32, f16, bf16, f8e4m3 or f8e5m2");
    }
    {
        duet_matrix Cb = C;
        Cb.dtype = DUET_DTYPE_BF16;
        DT_FAILS(EX(&A, &B, 1.0, &Cb, &e, &D), UNS, "not a supported dtype combination");
    }
    {
        duet_matrix bd64 = bias;
        bd64.dtype = DUET_DTYPE_F64;
        RESET();
        e.bias = &bd64;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), UNS, "epi.bias is f64");
    }
    {
        duet_matrix bl = duet_matrix_make(bv, F, DUET_LAYOUT_ROW_MAJOR, 1, n + 1);
        RESET();
        e.bias = &bl;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.bias is 1 x 6");
        duet_matrix bm = duet_matrix_make(bv, F, DUET_LAYOUT_ROW_MAJOR, m, 2);
        e.bias = &bm;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.bias is 4 x 2");
        duet_matrix bb2 = bias;
        bb2.batch_count = 2;
        bb2.batch_stride = n;
        e.bias = &bb2;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.bias.batch_count (2)");
        duet_matrix small = duet_matrix_make(bvec, F, DUET_LAYOUT_ROW_MAJOR, 1, n);
        e.bias = &small;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.bias needs bytes");
        duet_matrix forged = bias;
        forged.buffer = (duet_buffer *)(uintptr_t)0x1234;
        e.bias = &forged;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), DUET_ERROR_INVALID_HANDLE, "epi.bias.buffer");
    }
    {
        duet_matrix rsx = duet_matrix_make(bv, F, DUET_LAYOUT_ROW_MAJOR, 1, n);
        RESET();
        e.row_scale = &rsx;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.row_scale is 1 x 5");
        duet_matrix csx = duet_matrix_make(bv, F, DUET_LAYOUT_ROW_MAJOR, m, 1);
        RESET();
        e.col_scale = &csx;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.col_scale is 4 x 1");
        duet_matrix r = duet_matrix_make(bv, F, DUET_LAYOUT_ROW_MAJOR, m, n - 1);
        RESET();
        e.residual = &r;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.residual is 4 x 4");
        duet_matrix ax = duet_matrix_make(bx, F, DUET_LAYOUT_ROW_MAJOR, m + 1, n);
        RESET();
        e.aux = &ax;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.aux is 5 x 5");
        duet_matrix ab2 = aux;
        ab2.batch_count = 2;
        ab2.batch_stride = m * n;
        e.aux = &ab2;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.aux.batch_count (2) differs");
    }
    /* Overlaps. */
    {
        duet_matrix Dov = duet_matrix_make(ba, F, DUET_LAYOUT_ROW_MAJOR, m, n);
        RESET();
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &Dov), ARG, "D overlaps A");
        duet_matrix Dc = C;
        Dc.offset = 2;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &Dc), ARG, "D overlaps C without being exactly C");
        duet_matrix Dcd = C;
        Dcd.dtype = DUET_DTYPE_BF16;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &Dcd), ARG, "D overlaps C without being exactly C");
        duet_matrix bov = duet_matrix_make(bd, F, DUET_LAYOUT_ROW_MAJOR, 1, n);
        e.bias = &bov;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "D overlaps epi.bias");
        RESET();
        duet_matrix aov = duet_matrix_make(bd, F, DUET_LAYOUT_ROW_MAJOR, m, n);
        aov.offset = (size_t)(m * n); /* after D: no overlap with D */
        e.aux = &aov;
        e.residual = &aov;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.aux overlaps epi.residual");
        duet_matrix aovd = D;
        e.residual = NULL;
        e.aux = &aovd;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.aux overlaps D");
        duet_matrix aovc = C;
        e.aux = &aovc;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.aux overlaps C");
    }
    /* An operand in another context (a second context on the same device). */
    {
        duet_context *ctx2 = NULL;
        duet_buffer *b2 = NULL;
        DT_OK(duet_context_create(0, &ctx2));
        DT_OK(duet_buffer_create(ctx2, big, &b2));
        duet_matrix other = duet_matrix_make(b2, F, DUET_LAYOUT_ROW_MAJOR, 1, n);
        RESET();
        e.col_scale = &other;
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG,
                 "epi.col_scale.buffer belongs to another context than D.buffer");
        DT_OK(duet_buffer_destroy(b2));
        DT_OK(duet_context_destroy(ctx2));
    }
    /* Activations and their bounds. */
    RESET();
    e.act = (duet_activation)42;
    DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.act (42)");
    e.act = DUET_ACT_CLAMP;
    e.act_lo = 1.0, e.act_hi = -1.0;
    DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.act_lo (1) is greater than epi.act_hi (-1)");
    e.act_lo = NAN, e.act_hi = 1.0;
    DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "epi.act_lo is NaN");
    e.act = DUET_ACT_RELU;
    e.act_lo = -1.0, e.act_hi = 1.0;
    DT_FAILS(EX(&A, &B, 1.0, &C, &e, &D), ARG, "apply to clamp only");
    {
        duet_matrix Ai = duet_matrix_make(ba, DUET_DTYPE_I8, DUET_LAYOUT_ROW_MAJOR, m, k);
        duet_matrix Bi = duet_matrix_make(bb, DUET_DTYPE_I8, DUET_LAYOUT_ROW_MAJOR, k, n);
        duet_matrix Ci = duet_matrix_make(bc, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, m, n);
        duet_matrix Di = duet_matrix_make(bd, DUET_DTYPE_I8, DUET_LAYOUT_ROW_MAJOR, m, n);
        RESET();
        e.act = DUET_ACT_GELU_ERF;
        DT_FAILS(EX(&Ai, &Bi, 1.0, &Ci, &e, &Di), UNS, "epi.act gelu_erf");
        e.act = DUET_ACT_CLAMP;
        e.act_lo = -0.5, e.act_hi = 3.0;
        DT_FAILS(EX(&Ai, &Bi, 1.0, &Ci, &e, &Di), ARG, "epi.act_lo (-0.5) is not an integer");
        RESET();
        DT_FAILS(duet_gemm_ex(NULL, DUET_OP_N, DUET_OP_N, 0.5, &Ai, &Bi, 1.0, &Ci, &e, &Di, NULL),
                 ARG, "alpha (0.5)");
        duet_matrix vf = duet_matrix_make(bv, F, DUET_LAYOUT_ROW_MAJOR, 1, n);
        e.bias = &vf;
        DT_FAILS(EX(&Ai, &Bi, 1.0, &Ci, &e, &Di), UNS, "epi.bias is f32");
    }
    /* Shapes and C. */
    RESET();
    DT_FAILS(EX(&A, &B, 1.0, NULL, &e, &D), ARG, "C is NULL but beta (1)");
    {
        duet_matrix Dw = duet_matrix_make(bd, F, DUET_LAYOUT_ROW_MAJOR, m, n + 1);
        DT_FAILS(EX(&A, &B, 1.0, &C, &e, &Dw), ARG, "D is 4 x 6");
        duet_matrix Cw = duet_matrix_make(bc, F, DUET_LAYOUT_ROW_MAJOR, m + 1, n);
        DT_FAILS(EX(&A, &B, 1.0, &Cw, &e, &D), ARG, "C is 5 x 5");
        duet_matrix C2 = C;
        C2.batch_count = 2;
        C2.batch_stride = m * n;
        DT_FAILS(EX(&A, &B, 1.0, &C2, &e, &D), ARG, "C.batch_count (2)");
        duet_matrix Bk = duet_matrix_make(bb, F, DUET_LAYOUT_ROW_MAJOR, k + 1, n);
        DT_FAILS(EX(&A, &Bk, 1.0, &C, &e, &D), ARG, "inner dimensions differ");
    }
    /* A bf16 D from an f32 GEMM is fine (the check above it is not about D's dtype). */
    RESET();
    DT_OK(EX(&A, &B, 0.0, NULL, &e, &Db));
    /* Nothing written by any failing call: D's and aux's buffers (reset by the one success
     * above only in D's first m n bf16 elements) keep the pattern elsewhere. */
    unsigned char back[4096];
    DT_OK(duet_buffer_read(NULL, bx, 0, back, big));
    DT_CHECK(memcmp(back, pattern, big) == 0, "aux's buffer was written by a failing call");
    DT_OK(duet_buffer_read(NULL, bd, 0, back, big));
    const size_t written = (size_t)(m * n) * 2;
    DT_CHECK(memcmp(back + written, pattern + written, big - written) == 0,
             "D's buffer was written by a failing call");
    DT_CHECK(strcmp(duet_activation_name(DUET_ACT_GELU_TANH), "gelu_tanh") == 0 &&
                 strcmp(duet_activation_name((duet_activation)99), "?") == 0,
             "duet_activation_name");
#undef EX
#undef RESET
    duet_buffer *bufs[7] = {ba, bb, bc, bd, bv, bx, bvec};
    for (int i = 0; i < 7; i++) DT_OK(duet_buffer_destroy(bufs[i]));
}

int main(int argc, char **argv)
{
    quick = dt_quick_mode(argc, argv);
    ctx = dt_open_or_skip();
    {
        duet_device_props props;
        DT_OK(duet_context_get_props(ctx, &props));
        hopper_all = strcmp(duet_backend_name(), "cuda") == 0 && props.capability_major == 9 &&
                     props.capability_minor == 0 && getenv("DUET_GEMM_HOPPER_ALL") != NULL &&
                     getenv("DUET_GEMM_PORTABLE") == NULL;
    }
    dt_seed(29);
    misuse();
    act_range();
    special();
    fused();
    split_fused();
    sweep();
    DT_OK(duet_context_destroy(ctx));
    return dt_finish("test_gemm_epilogue");
}
