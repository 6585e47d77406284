/* api_ops.c - gemm, transpose and elementwise ops: validation, normalisation and plans. */
#include "backend.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

duet_status dt_resolve_stream(duet_stream *handle, dt_context *ctx, const char *func,
                              dt_stream **out);

duet_matrix duet_matrix_make(duet_buffer *buffer, duet_dtype dtype, duet_layout layout,
                             int64_t rows, int64_t cols)
{
    duet_matrix m;
    memset(&m, 0, sizeof m);
    m.buffer = buffer;
    m.dtype = dtype;
    m.layout = layout;
    m.rows = rows;
    m.cols = cols;
    m.ld = layout == DUET_LAYOUT_COL_MAJOR ? rows : cols;
    m.batch_count = 1;
    return m;
}

/* ---- matrix validation ------------------------------------------------------------------- */

/* A validated matrix: its buffer, geometry, byte extent and strided view. */
typedef struct mat {
    const duet_matrix *m;
    dt_buffer *buf;
    size_t elem;
    int64_t batch;
    int64_t bs;           /* 0 when batch == 1 */
    int empty;            /* rows == 0 or cols == 0 */
    size_t lo, hi;        /* touched byte range [lo, hi) in the buffer, when not empty */
    dt_view view;
} mat;

static int valid_dtype(int d) { return d >= DUET_DTYPE_F32 && d <= DUET_DTYPE_F8E5M2; }

/* The buffer behind m->buffer: taken from an operand of the same call already checked (seen0,
 * seen1, either NULL) when it names the same handle, so that each handle is resolved once per
 * call even when A, B and C share one buffer; else looked up in the handle table. */
static dt_buffer *resolve_buffer(const duet_matrix *m, const mat *seen0, const mat *seen1)
{
    if (seen0 && seen0->m->buffer == m->buffer) return seen0->buf;
    if (seen1 && seen1->m->buffer == m->buffer) return seen1->buf;
    return (dt_buffer *)dt_handle_get(m->buffer, DT_BUFFER);
}

duet_status dt_check_shape(const char *func, const char *name, const char *ldname,
                           duet_dtype dtype, duet_layout layout, int64_t rows, int64_t cols,
                           int64_t ld, int64_t batch_count, int64_t batch_stride, dt_shape *s)
{
    memset(s, 0, sizeof *s);
    if (!valid_dtype((int)dtype))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s.dtype (%d) is not a duet_dtype",
                       name, (int)dtype);
    if (layout != DUET_LAYOUT_ROW_MAJOR && layout != DUET_LAYOUT_COL_MAJOR)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s.layout (%d) is not a duet_layout",
                       name, (int)layout);
    if (rows < 0 || cols < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s.%s (%lld) is negative", name,
                       rows < 0 ? "rows" : "cols", (long long)(rows < 0 ? rows : cols));
    if (ld < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s (%lld) is negative", ldname,
                       (long long)ld);
    if (batch_count < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s.batch_count (%lld) is negative",
                       name, (long long)batch_count);
    if (batch_stride < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s.batch_stride (%lld) is negative",
                       name, (long long)batch_stride);
    s->elem = duet_dtype_size(dtype);
    s->batch = batch_count == 0 ? 1 : batch_count;
    s->bs = s->batch > 1 ? batch_stride : 0;
    s->row_major = layout == DUET_LAYOUT_ROW_MAJOR;
    s->len = s->row_major ? cols : rows;   /* contiguous run */
    s->lines = s->row_major ? rows : cols; /* runs */
    s->empty = rows == 0 || cols == 0;
    int64_t cells;
    if (!dt_mul_ok(rows, cols, &cells) || !dt_mul_ok(cells, (int64_t)s->elem, &cells))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s: rows (%lld) x cols (%lld) x %zu bytes overflows", name,
                       (long long)rows, (long long)cols, s->elem);
    if (!s->empty && ld < s->len)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s (%lld) is smaller than the %s length of %s (%lld)", ldname,
                       (long long)ld, s->row_major ? "row" : "column", name, (long long)s->len);
    return DUET_SUCCESS;
}

duet_status dt_check_span(const char *func, const char *name, const char *ldname, int is_output,
                          int64_t ld, int64_t batch_stride, const dt_shape *s, uint64_t *total)
{
    /* One matrix spans (lines - 1) * ld + len elements; the batch adds (batch - 1) strides. */
    int64_t span, bspan;
    if (!dt_mul_ok(s->lines - 1, ld, &span) || span > INT64_MAX - s->len)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s: %s (%lld) x %lld overflows",
                       name, ldname, (long long)ld, (long long)(s->lines - 1));
    span += s->len;
    if (is_output && s->batch > 1 && s->bs < span)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s.batch_stride (%lld) is smaller than one matrix's extent (%lld "
                       "elements): the batches of an output would overlap",
                       name, (long long)batch_stride, (long long)span);
    if (!dt_mul_ok(s->batch - 1, s->bs, &bspan) || bspan > INT64_MAX - span)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s: batch_stride (%lld) x batch_count (%lld) overflows", name,
                       (long long)batch_stride, (long long)s->batch);
    *total = (uint64_t)(bspan + span);
    return DUET_SUCCESS;
}

/* name: "A"; ldname: "lda"; is_output: the batches must not overlap each other and the buffer
 * must not be read-only (dt_refuse_read_only). seen0 and seen1: operands of this call checked
 * before (or NULL), see resolve_buffer. */
static duet_status check_matrix(const duet_matrix *m, const char *func, const char *name,
                                const char *ldname, int is_output, dt_context **ctx, mat *out,
                                const mat *seen0, const mat *seen1)
{
    memset(out, 0, sizeof *out);
    out->m = m;
    if (!m) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s is NULL", name);
    out->buf = resolve_buffer(m, seen0, seen1);
    if (!out->buf)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, func, "%s.buffer is %s", name,
                       m->buffer ? "not a live handle (destroyed or never created)" : "NULL");
    /* Whether the operands share one context is checked once all are resolved
     * (check_contexts), so that the message can name the odd one out. */
    if (!*ctx) *ctx = out->buf->ctx;
    if (is_output) {
        char arg[32];
        snprintf(arg, sizeof arg, "%s.buffer", name);
        const duet_status ro = dt_refuse_read_only(out->buf, func, arg);
        if (ro != DUET_SUCCESS) return ro;
    }
    dt_shape sh;
    const duet_status st = dt_check_shape(func, name, ldname, m->dtype, m->layout, m->rows, m->cols,
                                          m->ld, m->batch_count, m->batch_stride, &sh);
    if (st != DUET_SUCCESS) return st;
    out->elem = sh.elem;
    out->batch = sh.batch;
    out->bs = sh.bs;
    out->empty = sh.empty;
    const int row_major = sh.row_major;
    out->view.rs = row_major ? m->ld : 1;
    out->view.cs = row_major ? 1 : m->ld;
    out->view.bs = out->bs;
    if (out->empty) {
        /* An empty matrix touches no memory, but its offset must still lie within the buffer
         * (its end included), so that the descriptor's base pointer is a valid one. */
        if (m->offset > out->buf->bytes / out->elem)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                           "%s.offset (%zu) is past the end of its buffer (%zu bytes of %zu-byte "
                           "elements)",
                           name, m->offset, out->buf->bytes, out->elem);
        /* (No arithmetic on a NULL base: a 0-byte buffer has none.) */
        out->view.base = m->offset ? (char *)out->buf->ptr + m->offset * out->elem : out->buf->ptr;
        return DUET_SUCCESS;
    }
    uint64_t total;
    const duet_status sp = dt_check_span(func, name, ldname, is_output, m->ld, m->batch_stride, &sh,
                                         &total);
    if (sp != DUET_SUCCESS) return sp;
    if (m->offset > SIZE_MAX / out->elem || total > (SIZE_MAX / out->elem) - m->offset)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s: offset (%zu) + extent overflows",
                       name, m->offset);
    out->lo = m->offset * out->elem;
    out->hi = (m->offset + (size_t)total) * out->elem;
    if (out->hi > out->buf->bytes)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s needs bytes [%zu, %zu) of its buffer, which holds %zu bytes "
                       "(the buffer is too small)",
                       name, out->lo, out->hi, out->buf->bytes);
    /* Only now is offset known to be within the buffer. */
    out->view.base = (char *)out->buf->ptr + out->lo;
    return DUET_SUCCESS;
}

/* The operands' buffers (resolved by check_matrix) belong to one context; otherwise the
 * message names the operand that differs from the others, or all of them. ms[i] and
 * names[i] in the op's argument order ("A", "B", "C"); n is 2 or 3. */
static duet_status check_contexts(const char *func, int n, const mat *const ms[],
                                  const char *const names[])
{
    const dt_context *c0 = ms[0]->buf->ctx, *c1 = ms[1]->buf->ctx;
    if (n == 2) {
        if (c0 == c1) return DUET_SUCCESS;
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s.buffer and %s.buffer belong to different contexts", names[0],
                       names[1]);
    }
    const dt_context *c2 = ms[2]->buf->ctx;
    if (c0 == c1 && c1 == c2) return DUET_SUCCESS;
    if (c0 != c1 && c1 != c2 && c0 != c2)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s.buffer, %s.buffer and %s.buffer belong to three different contexts",
                       names[0], names[1], names[2]);
    /* Exactly one differs from the other two. */
    const int odd = c1 == c2 ? 0 : c0 == c2 ? 1 : 2;
    const int x = odd == 0 ? 1 : 0, y = odd == 2 ? 1 : 2;
    return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                   "%s.buffer belongs to another context than %s and %s", names[odd], names[x],
                   names[y]);
}

static int overlaps(const mat *x, const mat *y)
{
    return !x->empty && !y->empty && x->buf == y->buf && x->lo < y->hi && y->lo < x->hi;
}

static int same_view(const mat *x, const mat *y)
{
    return x->buf == y->buf && x->m->offset == y->m->offset && x->view.rs == y->view.rs &&
           x->view.cs == y->view.cs && x->view.bs == y->view.bs && x->m->rows == y->m->rows &&
           x->m->cols == y->m->cols && x->batch == y->batch;
}

/* v exactly, in as few digits as read back to v (1.000000000001, 2147483648, not %g's 1 or
 * 2.14748e+09): a message about a value must not show another. */
static void format_exact(char *out, size_t size, double v)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, size, "%.*g", digits, v);
        if (strtod(out, NULL) == v || v != v) return;
    }
}

/* Integer dtypes take only exact integers within range. */
static duet_status check_integral(double v, double lo, double hi, const char *func,
                                  const char *name, duet_dtype dtype)
{
    if (!(v >= lo && v <= hi) || v != floor(v)) {
        char text[40];
        format_exact(text, sizeof text, v);
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s (%s) is not an integer in the range of %s", name, text,
                       duet_dtype_name(dtype));
    }
    return DUET_SUCCESS;
}

static duet_status check_scalar(double v, duet_dtype dtype, const char *func, const char *name)
{
    if (dtype == DUET_DTYPE_I32) return check_integral(v, -2147483648.0, 2147483647.0, func, name, dtype);
    if (dtype == DUET_DTYPE_I8) return check_integral(v, -128.0, 127.0, func, name, dtype);
    return DUET_SUCCESS;
}

/* ---- options and plans ------------------------------------------------------------------- */

typedef enum op_family { OP_GEMM, OP_TRANSPOSE, OP_ELEMENTWISE } op_family;

static const char *family_name(op_family f)
{
    return f == OP_GEMM ? "gemm" : f == OP_TRANSPOSE ? "transpose" : "elementwise ops";
}

static int dim3_zero(duet_dim3 d) { return d.x == 0 && d.y == 0 && d.z == 0; }

/* A user block: all zero means the default; z == 0 reads as 1 so {16, 16} works in C. */
static duet_dim3 user_dim(duet_dim3 given, duet_dim3 dflt)
{
    if (dim3_zero(given)) return dflt;
    if (given.z == 0) given.z = 1;
    return given;
}

static duet_dim3 dim3(uint32_t x, uint32_t y, uint32_t z)
{
    duet_dim3 d = {x, y, z};
    return d;
}

/* A grid extent: at least 1 so that an empty op still has a valid (unlaunched) plan. */
static uint32_t clamp_u32(int64_t v)
{
    return v < 1 ? 1u : v > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Resolves options into a plan for an op over rows x cols x batch outputs of elem bytes, and
 * validates its launch configuration against the device (see docs/internals.md). */
static duet_status make_plan(const duet_op_options *opt, op_family fam, const dt_context *ctx,
                             int64_t rows, int64_t cols, int64_t batch, size_t elem,
                             const char *func, dt_plan *plan)
{
    static const duet_op_options defaults;
    if (!opt) opt = &defaults;
    memset(plan, 0, sizeof *plan);
    duet_algorithm a = opt->algorithm;
    if ((int)a < DUET_ALGO_AUTO || (int)a > DUET_ALGO_GRID_STRIDE)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "options.algorithm (%d) is not a duet_algorithm", (int)a);
    if ((a == DUET_ALGO_TILED && fam == OP_ELEMENTWISE) ||
        (a == DUET_ALGO_TILED_PADDED && fam != OP_TRANSPOSE))
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "algorithm %s does not apply to %s (use auto, naive or grid_stride%s)",
                       duet_algorithm_name(a), family_name(fam),
                       fam == OP_GEMM ? " or tiled" : "");
    if ((int)opt->math < DUET_MATH_DEFAULT || (int)opt->math > DUET_MATH_FAST_ACCUM)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "options.math (%d) is not a duet_math_mode", (int)opt->math);
    if (opt->math != DUET_MATH_DEFAULT && fam != OP_GEMM)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "options.math (%s) applies to gemm only; %s take 0 (default)",
                       duet_math_mode_name(opt->math), family_name(fam));
    if (opt->tile != 0 && a != DUET_ALGO_TILED && a != DUET_ALGO_TILED_PADDED)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "options.tile (%d) applies to tiled and tiled_padded only; %s takes 0",
                       opt->tile, duet_algorithm_name(a));
    plan->algo = a;
    const duet_device_props *p = &ctx->props;
    duet_launch_config *c = &plan->cfg;
    switch (a) {
    case DUET_ALGO_AUTO:
        return DUET_SUCCESS;
    case DUET_ALGO_NAIVE:
        c->block = user_dim(opt->launch.block, fam == OP_GEMM ? dim3(16, 16, 1) : dim3(32, 8, 1));
        if (c->block.x == 0 || c->block.y == 0)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "options.launch.block.%c is 0",
                           c->block.x == 0 ? 'x' : 'y');
        c->grid = dim3(clamp_u32(dt_ceil_div(cols, c->block.x)),
                       clamp_u32(dt_ceil_div(rows, c->block.y)),
                       clamp_u32(dt_ceil_div(batch, c->block.z)));
        break;
    case DUET_ALGO_TILED:
    case DUET_ALGO_TILED_PADDED: {
        int t = opt->tile;
        if (a == DUET_ALGO_TILED_PADDED) {
            if (t != 0 && t != 32)
                return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                               "options.tile (%d) must be 0 or 32 for tiled_padded", t);
            t = 32;
        } else if (t == 0) {
            t = fam == OP_GEMM ? 16 : 32;
        } else if (t < 1 || t > 32) {
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                           "options.tile (%d) is outside 1..32", t);
        }
        plan->tile = t;
        c->block = a == DUET_ALGO_TILED_PADDED ? dim3(32, 8, 1) : dim3((uint32_t)t, (uint32_t)t, 1);
        c->grid = dim3(clamp_u32(dt_ceil_div(cols, t)), clamp_u32(dt_ceil_div(rows, t)),
                       clamp_u32(batch));
        if (fam == OP_GEMM)
            c->shared_bytes = 2 * (size_t)t * (size_t)t * elem;
        else
            c->shared_bytes = (size_t)t * (size_t)(a == DUET_ALGO_TILED_PADDED ? t + 1 : t) * elem;
        break;
    }
    case DUET_ALGO_GRID_STRIDE: {
        duet_dim3 db = fam == OP_ELEMENTWISE ? dim3(256, 1, 1)
                       : fam == OP_GEMM    ? dim3(16, 16, 1)
                                           : dim3(32, 8, 1);
        duet_dim3 dg = fam == OP_ELEMENTWISE ? dim3((uint32_t)(4 * (p->compute_units > 0 ? p->compute_units : 1)), 1, 1)
                       : fam == OP_GEMM    ? dim3(8, 8, 1)
                                           : dim3(64, 64, 1);
        c->block = user_dim(opt->launch.block, db);
        c->grid = user_dim(opt->launch.grid, dg);
        /* A grid-stride launch is taken as given: no folding, the user's grid is the point. */
        return dt_validate_config(p, c, func);
    }
    }
    dt_fold_grid(p, &c->grid);
    return dt_validate_config(p, c, func);
}

static duet_status op_stream(duet_stream *stream, dt_context *ctx, const char *func,
                             dt_stream **s)
{
    return dt_resolve_stream(stream, ctx, func, s);
}

/* ---- elementwise ------------------------------------------------------------------------- */

static void swap64(int64_t *x, int64_t *y)
{
    int64_t t = *x;
    *x = *y;
    *y = t;
}

/* Runs e (c arranged with unit column stride when it has one) with opt. */
static duet_status run_elementwise(duet_stream *stream, dt_context *ctx, dt_elementwise *e,
                                   const duet_op_options *opt, const char *func)
{
    if (e->c.cs != 1 && e->c.rs == 1) {
        swap64(&e->rows, &e->cols);
        swap64(&e->a.rs, &e->a.cs);
        swap64(&e->b.rs, &e->b.cs);
        swap64(&e->c.rs, &e->c.cs);
    }
    dt_plan plan;
    duet_status st = make_plan(opt, OP_ELEMENTWISE, ctx, e->rows, e->cols, e->batch,
                               duet_dtype_size(e->dtype), func, &plan);
    if (st != DUET_SUCCESS) return st;
    dt_stream *s = NULL;
    st = op_stream(stream, ctx, func, &s);
    if (st != DUET_SUCCESS) return st;
    duet_launch_info *info = opt ? opt->info : NULL;
    if (e->rows == 0 || e->cols == 0) {
        dt_fill_info(info, "", &plan, 0);
        return DUET_SUCCESS;
    }
    return be_elementwise(ctx, s->be, e, &plan, info);
}

static duet_status check_ew_dtype(duet_dtype d, const char *func)
{
    if (d != DUET_DTYPE_F32 && d != DUET_DTYPE_F64 && d != DUET_DTYPE_I32)
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "dtype %s is not supported (f32, f64 and i32 are)", duet_dtype_name(d));
    return DUET_SUCCESS;
}

duet_status duet_scale(duet_stream *stream, double alpha, duet_matrix *x,
                       const duet_op_options *options)
{
    static const char *fn = "duet_scale";
    dt_clear_error();
    dt_context *ctx = NULL;
    mat mx;
    duet_status st = check_matrix(x, fn, "x", "x.ld", 1, &ctx, &mx, NULL, NULL);
    if (st == DUET_SUCCESS) st = check_ew_dtype(x->dtype, fn);
    if (st == DUET_SUCCESS) st = check_scalar(alpha, x->dtype, fn, "alpha");
    if (st != DUET_SUCCESS) return st;
    dt_elementwise e;
    memset(&e, 0, sizeof e);
    e.kind = DT_EW_SCALE;
    e.dtype = x->dtype;
    e.rows = x->rows;
    e.cols = x->cols;
    e.batch = mx.batch;
    e.alpha = alpha;
    e.c = mx.view;
    return run_elementwise(stream, ctx, &e, options, fn);
}

duet_status duet_fill(duet_stream *stream, double value, duet_matrix *x,
                      const duet_op_options *options)
{
    static const char *fn = "duet_fill";
    dt_clear_error();
    dt_context *ctx = NULL;
    mat mx;
    duet_status st = check_matrix(x, fn, "x", "x.ld", 1, &ctx, &mx, NULL, NULL);
    if (st == DUET_SUCCESS && (x->dtype == DUET_DTYPE_F8E4M3 || x->dtype == DUET_DTYPE_F8E5M2))
        st = dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                     "dtype %s is not supported (f32, f64, i32, f16, bf16 and i8 are; "
                     "duet_convert writes 8-bit floats)",
                     duet_dtype_name(x->dtype));
    if (st == DUET_SUCCESS) st = check_scalar(value, x->dtype, fn, "value");
    if (st != DUET_SUCCESS) return st;
    dt_elementwise e;
    memset(&e, 0, sizeof e);
    e.kind = DT_EW_FILL;
    e.dtype = x->dtype;
    e.rows = x->rows;
    e.cols = x->cols;
    e.batch = mx.batch;
    e.value = value;
    e.c = mx.view;
    return run_elementwise(stream, ctx, &e, options, fn);
}

duet_status duet_add(duet_stream *stream, double alpha, const duet_matrix *a, double beta,
                     const duet_matrix *b, duet_matrix *c, const duet_op_options *options)
{
    static const char *fn = "duet_add";
    dt_clear_error();
    dt_context *ctx = NULL;
    mat ma, mb, mc;
    duet_status st = check_matrix(c, fn, "c", "c.ld", 1, &ctx, &mc, NULL, NULL);
    if (st == DUET_SUCCESS) st = check_matrix(a, fn, "a", "a.ld", 0, &ctx, &ma, &mc, NULL);
    if (st == DUET_SUCCESS) st = check_matrix(b, fn, "b", "b.ld", 0, &ctx, &mb, &mc, &ma);
    if (st == DUET_SUCCESS) {
        const mat *const ms[3] = {&ma, &mb, &mc};
        const char *const names[3] = {"a", "b", "c"};
        st = check_contexts(fn, 3, ms, names);
    }
    if (st != DUET_SUCCESS) return st;
    if (a->dtype != c->dtype || b->dtype != c->dtype)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "dtypes differ: a is %s, b is %s, c is %s", duet_dtype_name(a->dtype),
                       duet_dtype_name(b->dtype), duet_dtype_name(c->dtype));
    st = check_ew_dtype(c->dtype, fn);
    if (st == DUET_SUCCESS) st = check_scalar(alpha, c->dtype, fn, "alpha");
    if (st == DUET_SUCCESS) st = check_scalar(beta, c->dtype, fn, "beta");
    if (st != DUET_SUCCESS) return st;
    const mat *in[2] = {&ma, &mb};
    for (int i = 0; i < 2; i++) {
        const duet_matrix *m = in[i]->m;
        const char *nm = i ? "b" : "a";
        if (m->rows != c->rows || m->cols != c->cols)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "%s is %lld x %lld but c is %lld x %lld", nm, (long long)m->rows,
                           (long long)m->cols, (long long)c->rows, (long long)c->cols);
        if (in[i]->batch != mc.batch && in[i]->batch != 1)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "%s.batch_count (%lld) is neither c's (%lld) nor 1", nm,
                           (long long)in[i]->batch, (long long)mc.batch);
        if (overlaps(in[i], &mc) && !same_view(in[i], &mc))
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "c overlaps %s without being exactly %s (in-place add needs the same "
                           "offset, ld, layout and batch)",
                           nm, nm);
    }
    dt_elementwise e;
    memset(&e, 0, sizeof e);
    e.kind = DT_EW_ADD;
    e.dtype = c->dtype;
    e.rows = c->rows;
    e.cols = c->cols;
    e.batch = mc.batch;
    e.alpha = alpha;
    e.beta = beta;
    e.a = ma.view;
    e.b = mb.view;
    e.c = mc.view;
    return run_elementwise(stream, ctx, &e, options, fn);
}

/* ---- transpose --------------------------------------------------------------------------- */

/* in and out overlap: accepted only as the in-place form of duet.h (same buffer and offset, the
 * ld and batch-stride rules there); *identity is set when the storage already holds in^T (a
 * change of layout, or a 1 x n / n x 1 matrix), so that nothing needs to move. */
static duet_status check_transpose_in_place(const mat *mi, const mat *mo, const char *fn,
                                            int *identity)
{
    const duet_matrix *in = mi->m, *out = mo->m;
    *identity = 0;
    if (in->offset != out->offset)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "in and out overlap in one buffer but start at different offsets (%zu "
                       "and %zu elements): an in-place transpose needs the same buffer and "
                       "offset for both",
                       in->offset, out->offset);
    if (mi->batch > 1 && in->batch_stride != out->batch_stride)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "in-place transpose needs out.batch_stride (%lld) equal to "
                       "in.batch_stride (%lld)",
                       (long long)out->batch_stride, (long long)in->batch_stride);
    if (in->layout != out->layout) {
        if (out->ld != in->ld)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "in-place transpose from a %s in to a %s out (the storage already "
                           "holds in^T) needs out.ld (%lld) equal to in.ld (%lld)",
                           in->layout == DUET_LAYOUT_ROW_MAJOR ? "row-major" : "column-major",
                           out->layout == DUET_LAYOUT_ROW_MAJOR ? "row-major" : "column-major",
                           (long long)out->ld, (long long)in->ld);
        *identity = 1;
        return DUET_SUCCESS;
    }
    const int row_major = in->layout == DUET_LAYOUT_ROW_MAJOR;
    const int64_t p = row_major ? in->rows : in->cols; /* stored lines */
    const int64_t q = row_major ? in->cols : in->rows; /* their length */
    const char *line = row_major ? "row" : "column";
    if (p == q) {
        if (out->ld != in->ld)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "in-place transpose of a square matrix keeps its ld: out.ld (%lld) "
                           "must equal in.ld (%lld)",
                           (long long)out->ld, (long long)in->ld);
    } else {
        if (in->ld != q)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "in-place transpose of a rectangular matrix needs packed storage: "
                           "in.ld (%lld) must be the %s length of in (%lld)",
                           (long long)in->ld, line, (long long)q);
        if (out->ld != p)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "in-place transpose of a rectangular matrix packs the result: "
                           "out.ld (%lld) must be the %s length of out (%lld)",
                           (long long)out->ld, line, (long long)p);
    }
    *identity = p == 1 || q == 1;
    return DUET_SUCCESS;
}

duet_status duet_transpose(duet_stream *stream, const duet_matrix *in, duet_matrix *out,
                           const duet_op_options *options)
{
    static const char *fn = "duet_transpose";
    dt_clear_error();
    dt_context *ctx = NULL;
    mat mi, mo;
    duet_status st = check_matrix(out, fn, "out", "out.ld", 1, &ctx, &mo, NULL, NULL);
    if (st == DUET_SUCCESS) st = check_matrix(in, fn, "in", "in.ld", 0, &ctx, &mi, &mo, NULL);
    if (st == DUET_SUCCESS) {
        const mat *const ms[2] = {&mi, &mo};
        const char *const names[2] = {"in", "out"};
        st = check_contexts(fn, 2, ms, names);
    }
    if (st != DUET_SUCCESS) return st;
    if (in->dtype != out->dtype)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "dtypes differ: in is %s, out is %s",
                       duet_dtype_name(in->dtype), duet_dtype_name(out->dtype));
    if (out->rows != in->cols || out->cols != in->rows)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "out is %lld x %lld but in^T is %lld x %lld", (long long)out->rows,
                       (long long)out->cols, (long long)in->cols, (long long)in->rows);
    if (mi.batch != mo.batch)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "in.batch_count (%lld) differs from out.batch_count (%lld)",
                       (long long)mi.batch, (long long)mo.batch);
    const int in_place = overlaps(&mi, &mo);
    int identity = 0;
    if (in_place) {
        st = check_transpose_in_place(&mi, &mo, fn, &identity);
        if (st != DUET_SUCCESS) return st;
    }
    dt_copy2d t;
    memset(&t, 0, sizeof t);
    t.elem = mo.elem;
    t.rows = out->rows;
    t.cols = out->cols;
    t.batch = mo.batch;
    t.out = mo.view;
    t.in = mi.view;
    swap64(&t.in.rs, &t.in.cs); /* out(i, j) = in(j, i) */
    if (in_place && out->layout == DUET_LAYOUT_COL_MAJOR) {
        /* out^T(i, j) = in^T(i, j): the backend sees out with unit column stride. */
        swap64(&t.rows, &t.cols);
        swap64(&t.in.rs, &t.in.cs);
        swap64(&t.out.rs, &t.out.cs);
    }
    t.in_place = in_place;
    dt_plan plan;
    st = make_plan(options, OP_TRANSPOSE, ctx, t.rows, t.cols, t.batch, t.elem, fn, &plan);
    if (st != DUET_SUCCESS) return st;
    if (in_place && plan.algo != DUET_ALGO_AUTO)
        return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "algorithm %s does not run in place (in and out are the same storage); "
                       "in-place transposes take auto",
                       duet_algorithm_name(plan.algo));
    dt_stream *s = NULL;
    st = op_stream(stream, ctx, fn, &s);
    if (st != DUET_SUCCESS) return st;
    duet_launch_info *info = options ? options->info : NULL;
    if (t.rows == 0 || t.cols == 0) {
        dt_fill_info(info, "", &plan, 0);
        return DUET_SUCCESS;
    }
    if (identity) {
        /* The storage already is in^T: nothing to launch. */
        dt_fill_info(info, "transpose_inplace_identity", &plan, 0);
        return DUET_SUCCESS;
    }
    t.ws = &s->ws;
    pthread_mutex_lock(&s->op_lock);
    st = be_copy2d(ctx, s->be, &t, &plan, info);
    pthread_mutex_unlock(&s->op_lock);
    return st;
}

/* ---- gemm -------------------------------------------------------------------------------- */

static duet_status check_scalar_matrix(const mat *x, const char *fn, const char *name);

/* One of duet_gemm_ex's device scales or scalars (epi.scale_a, scale_b, scale_d, amax_d):
 * checked as every matrix is, in D's context. */
static duet_status check_epi_matrix(const duet_matrix *x, const char *fn, const char *name,
                                    const char *ldname, int is_output, dt_context **ctx, mat *out,
                                    const mat *md, const mat *ma)
{
    duet_status st = check_matrix(x, fn, name, ldname, is_output, ctx, out, md, ma);
    if (st == DUET_SUCCESS && out->buf->ctx != md->buf->ctx)
        st = dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                     "%s.buffer belongs to another context than D.buffer", name);
    return st;
}

/* check_epi_matrix, and one f32. */
static duet_status check_epi_scalar(const duet_matrix *x, const char *fn, const char *name,
                                    const char *ldname, int is_output, dt_context **ctx, mat *out,
                                    const mat *md, const mat *ma)
{
    duet_status st = check_epi_matrix(x, fn, name, ldname, is_output, ctx, out, md, ma);
    if (st == DUET_SUCCESS) st = check_scalar_matrix(out, fn, name);
    return st;
}

/* A conversion whose dst is column-major walks dst's columns as rows, so that writes are
 * contiguous. */
static void convert_along_dst(dt_convert *c)
{
    if (c->dst.cs != 1 && c->dst.rs == 1) {
        swap64(&c->rows, &c->cols);
        swap64(&c->src.rs, &c->src.cs);
        swap64(&c->dst.rs, &c->dst.cs);
    }
}

static int is_f8(duet_dtype d) { return d == DUET_DTYPE_F8E4M3 || d == DUET_DTYPE_F8E5M2; }

/* A and B of duet_gemm's table: one dtype, or two 8-bit floats (e4m3 x e5m2 included). */
static int gemm_ab_ok(duet_dtype a, duet_dtype b) { return a == b || (is_f8(a) && is_f8(b)); }

/* The table of duet.h: A and B share a dtype (or are both 8-bit floats); C is that dtype, f32
 * for f16/bf16, i32 for i8, f32, f16 or bf16 for 8-bit floats. */
static int gemm_dtypes_supported(duet_dtype a, duet_dtype b, duet_dtype c)
{
    if (!gemm_ab_ok(a, b)) return 0;
    switch (a) {
    case DUET_DTYPE_F32:
    case DUET_DTYPE_F64:
    case DUET_DTYPE_I32: return c == a;
    case DUET_DTYPE_F16:
    case DUET_DTYPE_BF16: return c == a || c == DUET_DTYPE_F32;
    case DUET_DTYPE_I8: return c == DUET_DTYPE_I32;
    case DUET_DTYPE_F8E4M3:
    case DUET_DTYPE_F8E5M2:
        return c == DUET_DTYPE_F32 || c == DUET_DTYPE_F16 || c == DUET_DTYPE_BF16;
    }
    return 0;
}

/* Decodes one 8-bit float operand of a GEMM, as stored (rows x cols over nb batches at the
 * strides of v), exactly into a packed matrix of dt (f16 or bf16, which hold every 8-bit float
 * value) at dst, keeping the direction of v's unit stride; *out is the decoded view. */
static void f8_decoded_view(const dt_view *v, int64_t rows, int64_t cols, void *dst, dt_view *out)
{
    const int row_major = v->cs == 1 || v->rs != 1;
    out->base = dst;
    out->rs = row_major ? cols : 1;
    out->cs = row_major ? 1 : rows;
    out->bs = v->bs == 0 ? 0 : rows * cols;
}

/* g with its rows and columns exchanged. */
static dt_scale_grid grid_turned(dt_scale_grid g)
{
    swap64(&g.rs, &g.cs);
    const int t = g.rshift;
    g.rshift = g.cshift;
    g.cshift = t;
    return g;
}

/* bscale (p NULL: none): a scale grid over the operand as stored (rows x cols), multiplied
 * into each decoded value (dt is then f32). */
static duet_status f8_decode(dt_context *ctx, dt_stream *s, duet_dtype from, duet_dtype dt,
                             const dt_view *v, int64_t rows, int64_t cols, int64_t nb, void *dst,
                             dt_view *out, dt_scale_grid bscale)
{
    const int row_major = v->cs == 1 || v->rs != 1;
    f8_decoded_view(v, rows, cols, dst, out);
    dt_convert c;
    memset(&c, 0, sizeof c);
    c.src_dtype = from;
    c.dst_dtype = dt;
    c.rows = rows;
    c.cols = cols;
    c.batch = nb;
    c.saturate = 1; /* never used: every value fits */
    c.src = *v;
    c.dst = *out;
    c.bscale = bscale;
    if (!row_major) {
        swap64(&c.rows, &c.cols);
        swap64(&c.src.rs, &c.src.cs);
        swap64(&c.dst.rs, &c.dst.cs);
        c.bscale = grid_turned(c.bscale);
    }
    return be_convert(ctx, s->be, &c, NULL);
}

/* options.math and options.algorithm against the inputs' dtype dt, as duet_gemm and
 * duet_gemm_ex both take them: TF32 or 3XTF32 on anything but f32, FAST_ACCUM on anything but
 * 8-bit floats, or a seed algorithm on 16-bit or 8-bit inputs, is refused (an out-of-range
 * value is the common option check's). */
static duet_status gemm_check_modes(duet_dtype dt, const duet_op_options *options, const char *fn)
{
    const duet_math_mode math = options ? options->math : DUET_MATH_DEFAULT;
    if ((math == DUET_MATH_TF32 || math == DUET_MATH_3XTF32) && dt != DUET_DTYPE_F32)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "options.math (%s) applies to f32 gemm only; A and B are %s",
                       duet_math_mode_name(math), duet_dtype_name(dt));
    if (math == DUET_MATH_FAST_ACCUM && !is_f8(dt))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "options.math (%s) applies to 8-bit float gemm only; A and B are %s",
                       duet_math_mode_name(math), duet_dtype_name(dt));
    const duet_algorithm algo = options ? options->algorithm : DUET_ALGO_AUTO;
    const int lowp = dt == DUET_DTYPE_F16 || dt == DUET_DTYPE_BF16 || dt == DUET_DTYPE_I8 || is_f8(dt);
    if (lowp && (int)algo > DUET_ALGO_AUTO && (int)algo <= DUET_ALGO_GRID_STRIDE)
        return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "algorithm %s runs f32, f64 and i32 gemm only; %s inputs take auto",
                       duet_algorithm_name(algo), duet_dtype_name(dt));
    return DUET_SUCCESS;
}

/* g's A and B from the views a and b of op(A) and op(B)'s storage: the ops applied, and with
 * turn (a column-major C, solved as C^T = B^T A^T) exchanged and transposed. */
static void gemm_operands(dt_gemm *g, const dt_view *a, const dt_view *b, duet_op op_a,
                          duet_op op_b, int turn)
{
    g->a = *a;
    g->b = *b;
    if (op_a == DUET_OP_T) swap64(&g->a.rs, &g->a.cs);
    if (op_b == DUET_OP_T) swap64(&g->b.rs, &g->b.cs);
    if (turn) {
        const dt_view ta = g->a;
        g->a = g->b;
        g->b = ta;
        swap64(&g->a.rs, &g->a.cs);
        swap64(&g->b.rs, &g->b.cs);
    }
}

/* The GEMM of duet_gemm and duet_gemm_ex, on validated operands: the view cv (of dtype ct) =
 * alpha * op(A) * op(B) + beta * cv over m x n x batch, with duet_gemm's cases (an empty C,
 * no product, the column-major turn). locked: the caller holds the stream's op lock (else it is
 * taken around the backend's gemm). bsc: NULL, or the block scales of 8-bit float op(A) and
 * op(B) (dt_gemm.sa, sb before the turn; a NULL p is 1).
 * epi (duet_gemm_ex, with a product and the lock held): cv is D and epi the epilogue, in D's
 * orientation. The GEMM runs with the epilogue in its store where be_gemm_fuses_epilogue says
 * so (*fused = 1); else nothing is queued (*fused = 0) and the caller runs the two passes. */
static duet_status gemm_run(duet_stream *stream, dt_context *ctx, duet_op op_a, duet_op op_b,
                            double alpha, const dt_view *av, const dt_view *bv, double beta,
                            dt_view cv, duet_dtype dt, duet_dtype bt, duet_dtype ct, int64_t m,
                            int64_t n, int64_t k, int64_t batch, const duet_op_options *options,
                            int locked, const char *fn, const dt_epilogue *epi, int *fused,
                            const dt_scale_grid *bsc)
{
    if (fused) *fused = 0;
    duet_status st;
    const duet_math_mode math = options ? options->math : DUET_MATH_DEFAULT;
    const duet_algorithm algo = options ? options->algorithm : DUET_ALGO_AUTO;
    duet_launch_info *info = options ? options->info : NULL;
    if (m == 0 || n == 0) {
        dt_plan plan;
        dt_stream *s = NULL;
        st = make_plan(options, OP_GEMM, ctx, m, n, batch, duet_dtype_size(ct), fn, &plan);
        if (st == DUET_SUCCESS) st = op_stream(stream, ctx, fn, &s);
        if (st == DUET_SUCCESS) dt_fill_info(info, "", &plan, 0);
        return st;
    }
    /* A C of f16 or bf16 has no elementwise scale: its backend's gemm takes k == 0 itself. */
    const int half_c = ct == DUET_DTYPE_F16 || ct == DUET_DTYPE_BF16;
    if ((k == 0 || alpha == 0.0) && !half_c) {
        /* BLAS: C = beta * C, and beta == 0 writes zeros without reading C. The plan is still
         * checked so that a bad option is reported whatever the shape. */
        dt_plan plan;
        st = make_plan(options, OP_GEMM, ctx, m, n, batch, duet_dtype_size(ct), fn, &plan);
        if (st != DUET_SUCCESS) return st;
        if (beta == 1.0) {
            dt_fill_info(info, "", &plan, 0);
            dt_stream *s = NULL;
            return op_stream(stream, ctx, fn, &s);
        }
        dt_elementwise e;
        memset(&e, 0, sizeof e);
        e.kind = beta == 0.0 ? DT_EW_FILL : DT_EW_SCALE;
        e.dtype = ct;
        e.rows = m;
        e.cols = n;
        e.batch = batch;
        e.alpha = beta;
        e.value = 0.0;
        e.c = cv;
        duet_op_options eopt;
        memset(&eopt, 0, sizeof eopt);
        eopt.info = info; /* reports the scale or fill that ran */
        return run_elementwise(stream, ctx, &e, &eopt, fn);
    }

    /* g's A and B: the views as given (8-bit floats included), in C's orientation. */
    dt_gemm g;
    memset(&g, 0, sizeof g);
    g.dtype = dt;
    g.b_dtype = bt;
    g.c_dtype = ct;
    g.math = algo == DUET_ALGO_AUTO ? math : DUET_MATH_DEFAULT; /* the seeds' kernels: exact */
    g.m = m;
    g.n = n;
    g.k = alpha == 0.0 ? 0 : k; /* only a half C gets here with alpha == 0 */
    g.batch = batch;
    g.alpha = alpha;
    g.beta = beta;
    g.c = cv;
    if (bsc) {
        g.sa = bsc[0];
        g.sb = bsc[1];
    }
    const int scaled = g.sa.p || g.sb.p;
    /* Column-major C: solve C^T = B^T A^T so that kernels always write along rows. */
    const int turn = g.c.cs != 1 && g.c.rs == 1;
    gemm_operands(&g, av, bv, op_a, op_b, turn);
    dt_epilogue et;
    if (epi) et = *epi;
    if (turn) {
        swap64(&g.c.rs, &g.c.cs);
        swap64(&g.m, &g.n);
        if (is_f8(dt)) {
            g.dtype = bt;
            g.b_dtype = dt;
        }
        const dt_scale_grid t = g.sa;
        g.sa = g.sb;
        g.sb = t;
        if (epi) dt_epilogue_turn(&et);
    }
    dt_plan plan;
    dt_stream *s = NULL;
    st = make_plan(options, OP_GEMM, ctx, g.m, g.n, g.batch, duet_dtype_size(ct), fn, &plan);
    if (st == DUET_SUCCESS) st = op_stream(stream, ctx, fn, &s);
    if (st != DUET_SUCCESS) return st;
    g.ws = &s->ws;
    if (!locked) pthread_mutex_lock(&s->op_lock);

    /* 8-bit float A and B: multiplied as they are where the backend has FP8 instructions for
     * the problem (be_gemm_takes_f8). Otherwise they are decoded exactly to f16 (to bf16 for a
     * bf16 C, whose GEMM then needs no other output dtype) in the stream's f8 workspace, and
     * the 16-bit GEMM (products exact in f32, f32 accumulation) runs on them. Block scales are
     * multiplied into the decoded values, which are then f32 (one rounding each), for the f32
     * GEMM (duet_gemm's exact f32 math). Neither is read when the product is skipped. */
    const int f8 = is_f8(dt);
    const int f8_decode_run = f8 && !(g.k != 0 && be_gemm_takes_f8(ctx, s->be, &g));
    const duet_dtype run_dt = scaled                  ? DUET_DTYPE_F32
                              : ct == DUET_DTYPE_BF16 ? DUET_DTYPE_BF16
                                                      : DUET_DTYPE_F16;
    const size_t run_elem = duet_dtype_size(run_dt);
    const int64_t ar = op_a == DUET_OP_N ? m : k, ac = op_a == DUET_OP_N ? k : m;
    const int64_t br = op_b == DUET_OP_N ? k : n, bc = op_b == DUET_OP_N ? n : k;
    const int64_t anb = av->bs == 0 ? 1 : batch, bnb = bv->bs == 0 ? 1 : batch;
    size_t f8_bytes = 0, a_bytes = 0;
    void *f8_p = NULL;
    dt_view a_run, b_run;
    if (f8_decode_run) {
        g.dtype = g.b_dtype = run_dt;
        g.math = DUET_MATH_DEFAULT; /* exact sums: FAST_ACCUM permits, never requires */
        memset(&g.sa, 0, sizeof g.sa);
        memset(&g.sb, 0, sizeof g.sb);
        if (g.k != 0) {
            /* A and B themselves span as many (1-byte) elements: an overflow is the address
             * space's. */
            if ((size_t)(anb * ar * ac) > (SIZE_MAX - 256) / 2 / run_elem ||
                (size_t)(bnb * br * bc) > (SIZE_MAX - 256) / 2 / run_elem) {
                if (!locked) pthread_mutex_unlock(&s->op_lock);
                return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn,
                               "the decoded 8-bit float operands overflow the address space");
            }
            a_bytes = (((size_t)(anb * ar * ac) * run_elem) + 255) & ~(size_t)255;
            f8_bytes = a_bytes + (size_t)(bnb * br * bc) * run_elem;
            st = dt_workspace_reserve(ctx, s->be, &s->f8_ws, f8_bytes, fn, &f8_p);
            if (st != DUET_SUCCESS) {
                if (!locked) pthread_mutex_unlock(&s->op_lock);
                return st;
            }
            f8_decoded_view(av, ar, ac, f8_p, &a_run);
            f8_decoded_view(bv, br, bc, (char *)f8_p + a_bytes, &b_run);
            gemm_operands(&g, &a_run, &b_run, op_a, op_b, turn);
        }
    }
    if (epi) {
        /* The backend's plan decides; without the fused store the caller runs two passes. */
        g.epi = &et;
        if (plan.algo != DUET_ALGO_AUTO || !be_gemm_fuses_epilogue(ctx, s->be, &g)) {
            if (!locked) pthread_mutex_unlock(&s->op_lock);
            return st;
        }
        *fused = 1;
    }
    if (f8_bytes) {
        /* The grids over (row or column of C, k) as A and B are stored: A is (i, k) for op N,
         * B (k, j). */
        dt_scale_grid ga, gb;
        memset(&ga, 0, sizeof ga);
        memset(&gb, 0, sizeof gb);
        if (bsc) {
            ga = op_a == DUET_OP_N ? bsc[0] : grid_turned(bsc[0]);
            gb = op_b == DUET_OP_N ? grid_turned(bsc[1]) : bsc[1];
        }
        st = f8_decode(ctx, s, dt, run_dt, av, ar, ac, anb, f8_p, &a_run, ga);
        if (st == DUET_SUCCESS)
            st = f8_decode(ctx, s, bt, run_dt, bv, br, bc, bnb, (char *)f8_p + a_bytes, &b_run, gb);
    }
    if (st == DUET_SUCCESS) st = be_gemm(ctx, s->be, &g, &plan, info);
    if (!locked) pthread_mutex_unlock(&s->op_lock);
    if (st == DUET_SUCCESS && f8_bytes && info) {
        snprintf(info->prologue, sizeof info->prologue, "convert_%s_%s,convert_%s_%s",
                 duet_dtype_name(dt), duet_dtype_name(run_dt), duet_dtype_name(bt),
                 duet_dtype_name(run_dt));
        info->launches += 2;
        info->workspace_bytes += f8_bytes;
    }
    return st;
}

duet_status duet_gemm(duet_stream *stream, duet_op op_a, duet_op op_b, double alpha,
                      const duet_matrix *a, const duet_matrix *b, double beta, duet_matrix *c,
                      const duet_op_options *options)
{
    static const char *fn = "duet_gemm";
    dt_clear_error();
    if (op_a != DUET_OP_N && op_a != DUET_OP_T)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "op_a (%d) is not a duet_op", (int)op_a);
    if (op_b != DUET_OP_N && op_b != DUET_OP_T)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "op_b (%d) is not a duet_op", (int)op_b);
    dt_context *ctx = NULL;
    mat ma, mb, mc;
    duet_status st = check_matrix(c, fn, "C", "ldc", 1, &ctx, &mc, NULL, NULL);
    if (st == DUET_SUCCESS) st = check_matrix(a, fn, "A", "lda", 0, &ctx, &ma, &mc, NULL);
    if (st == DUET_SUCCESS) st = check_matrix(b, fn, "B", "ldb", 0, &ctx, &mb, &mc, &ma);
    if (st == DUET_SUCCESS) {
        const mat *const ms[3] = {&ma, &mb, &mc};
        const char *const names[3] = {"A", "B", "C"};
        st = check_contexts(fn, 3, ms, names);
    }
    if (st != DUET_SUCCESS) return st;
    const duet_dtype dt = a->dtype, ct = c->dtype;
    /* Operands that must share a dtype but do not are a bad argument; a combination the table
     * does not have is unsupported (docs/api.md, the dtype rule). */
    if (!gemm_ab_ok(dt, b->dtype))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "A %s, B %s, C %s: the dtypes of A and B differ (they must be one dtype, "
                       "or both 8-bit floats)",
                       duet_dtype_name(dt), duet_dtype_name(b->dtype), duet_dtype_name(ct));
    if (!gemm_dtypes_supported(dt, b->dtype, ct))
        return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "A %s, B %s, C %s is not a supported dtype combination (A and B share "
                       "one dtype; C is f32/f64/i32 like them, f16 or f32 for f16, bf16 or f32 "
                       "for bf16, i32 for i8, f32, f16 or bf16 for 8-bit floats)",
                       duet_dtype_name(dt), duet_dtype_name(b->dtype), duet_dtype_name(ct));
    st = gemm_check_modes(dt, options, fn);
    if (st != DUET_SUCCESS) return st;
    /* alpha and beta are integers for integer C (i32 and i8 inputs), else any value. */
    st = check_scalar(alpha, ct, fn, "alpha");
    if (st == DUET_SUCCESS) st = check_scalar(beta, ct, fn, "beta");
    if (st != DUET_SUCCESS) return st;

    int64_t m = op_a == DUET_OP_N ? a->rows : a->cols;
    int64_t k = op_a == DUET_OP_N ? a->cols : a->rows;
    int64_t kb = op_b == DUET_OP_N ? b->rows : b->cols;
    int64_t n = op_b == DUET_OP_N ? b->cols : b->rows;
    if (k != kb)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "op(A) is %lld x %lld but op(B) is %lld x %lld: inner dimensions differ",
                       (long long)m, (long long)k, (long long)kb, (long long)n);
    if (c->rows != m || c->cols != n)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "C is %lld x %lld but op(A) * op(B) is %lld x %lld", (long long)c->rows,
                       (long long)c->cols, (long long)m, (long long)n);
    if (ma.batch != mc.batch && ma.batch != 1)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "A.batch_count (%lld) is neither C's (%lld) nor 1", (long long)ma.batch,
                       (long long)mc.batch);
    if (mb.batch != mc.batch && mb.batch != 1)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "B.batch_count (%lld) is neither C's (%lld) nor 1", (long long)mb.batch,
                       (long long)mc.batch);
    /* Reading A or B is skipped when alpha == 0 or k == 0, but an overlap is still a misuse. */
    if (overlaps(&mc, &ma) || overlaps(&mc, &mb))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "C overlaps %s in one buffer",
                       overlaps(&mc, &ma) ? "A" : "B");

    return gemm_run(stream, ctx, op_a, op_b, alpha, &ma.view, &mb.view, beta, mc.view, dt, b->dtype,
                    ct, m, n, k, mc.batch, options, 0, fn, NULL, NULL, NULL);
}

/* ---- gemm with an epilogue --------------------------------------------------------------- */

const char *duet_activation_name(duet_activation act)
{
    switch (act) {
    case DUET_ACT_NONE: return "none";
    case DUET_ACT_RELU: return "relu";
    case DUET_ACT_GELU_TANH: return "gelu_tanh";
    case DUET_ACT_GELU_ERF: return "gelu_erf";
    case DUET_ACT_SILU: return "silu";
    case DUET_ACT_SIGMOID: return "sigmoid";
    case DUET_ACT_CLAMP: return "clamp";
    }
    return "?";
}

/* The epilogue's math type for A's dtype (duet.h's table): f32, f64 or i32. */
static duet_dtype epi_math_of(duet_dtype ab)
{
    switch (ab) {
    case DUET_DTYPE_F64: return DUET_DTYPE_F64;
    case DUET_DTYPE_I32:
    case DUET_DTYPE_I8: return DUET_DTYPE_I32;
    default: return DUET_DTYPE_F32;
    }
}

/* Whether an epilogue operand (D, aux, a vector, the residual) may have dtype x in math type
 * math: f32 math takes f32, f16 and bf16; f64 math f64 and f32; i32 math i32 and i8. */
static int epi_dtype_ok(duet_dtype math, duet_dtype x)
{
    switch (math) {
    case DUET_DTYPE_F32: return x == DUET_DTYPE_F32 || x == DUET_DTYPE_F16 || x == DUET_DTYPE_BF16;
    case DUET_DTYPE_F64: return x == DUET_DTYPE_F64 || x == DUET_DTYPE_F32;
    default: return x == DUET_DTYPE_I32 || x == DUET_DTYPE_I8;
    }
}

static const char *epi_dtype_set(duet_dtype math)
{
    return math == DUET_DTYPE_F32   ? "f32, f16 or bf16"
           : math == DUET_DTYPE_F64 ? "f64 or f32"
                                    : "i32 or i8";
}

/* An epilogue operand's role: what its shape must be. */
typedef enum epi_role { EPI_BIAS, EPI_ROW, EPI_COL, EPI_FULL, EPI_AUX } epi_role;

typedef struct epi_arg {
    const duet_matrix *m;
    const char *name;   /* "epi.bias" */
    const char *ldname; /* "epi.bias.ld" */
    epi_role role;
    mat chk;
    int per_row;        /* a bias of m x 1 (else 1 x n) */
} epi_arg;

/* The operand's shape and batch against D's m x n x batch (vectors and the residual may have
 * one batch for all). */
static duet_status epi_check_shape(epi_arg *e, int64_t m, int64_t n, int64_t batch,
                                   const char *fn)
{
    const duet_matrix *x = e->m;
    const long long r = (long long)x->rows, c = (long long)x->cols;
    switch (e->role) {
    case EPI_BIAS:
        if (x->rows == 1 && x->cols == n) {
            e->per_row = 0;
        } else if (x->rows == m && x->cols == 1) {
            e->per_row = 1;
        } else {
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "%s is %lld x %lld but must be 1 x %lld (one value per column of D) "
                           "or %lld x 1 (one per row)",
                           e->name, r, c, (long long)n, (long long)m);
        }
        break;
    case EPI_ROW:
        if (x->rows != m || x->cols != 1)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "%s is %lld x %lld but must be %lld x 1 (one factor per row of D)",
                           e->name, r, c, (long long)m);
        break;
    case EPI_COL:
        if (x->rows != 1 || x->cols != n)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "%s is %lld x %lld but must be 1 x %lld (one factor per column of D)",
                           e->name, r, c, (long long)n);
        break;
    case EPI_FULL:
    case EPI_AUX:
        if (x->rows != m || x->cols != n)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "%s is %lld x %lld but D is %lld x %lld", e->name, r, c,
                           (long long)m, (long long)n);
        break;
    }
    if (e->role == EPI_AUX ? e->chk.batch != batch : (e->chk.batch != batch && e->chk.batch != 1))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       e->role == EPI_AUX ? "%s.batch_count (%lld) differs from D's (%lld)"
                                          : "%s.batch_count (%lld) is neither D's (%lld) nor 1",
                       e->name, (long long)e->chk.batch, (long long)batch);
    return DUET_SUCCESS;
}

/* The operand as an m x n x batch view (strides 0 where it is broadcast). */
static dt_epi_operand epi_operand(const mat *x, epi_role role, int per_row)
{
    dt_epi_operand o;
    memset(&o, 0, sizeof o);
    o.on = 1;
    o.dtype = x->m->dtype;
    o.v = x->view;
    if (role == EPI_COL || (role == EPI_BIAS && !per_row)) o.v.rs = 0;
    if (role == EPI_ROW || (role == EPI_BIAS && per_row)) o.v.cs = 0;
    if (x->batch == 1) o.v.bs = 0;
    return o;
}

static dt_epi_operand epi_view(const dt_view *v, duet_dtype dtype)
{
    dt_epi_operand o;
    memset(&o, 0, sizeof o);
    o.on = 1;
    o.dtype = dtype;
    o.v = *v;
    return o;
}

void dt_epilogue_turn(dt_epilogue *e)
{
    swap64(&e->m, &e->n);
    dt_epi_operand *all[8] = {&e->t,         &e->c,        &e->bias, &e->row_scale,
                              &e->col_scale, &e->residual, &e->aux,  &e->d};
    for (int i = 0; i < 8; i++) swap64(&all[i]->v.rs, &all[i]->v.cs);
}

/* The act and its bounds: a duet_activation, integer math only with none, relu and clamp,
 * bounds only for clamp (ordered, not NaN, integers in i32 range for integer math). */
static duet_status epi_check_act(const duet_gemm_epilogue *epi, duet_dtype math, const char *fn)
{
    const duet_activation act = epi->act;
    if ((int)act < DUET_ACT_NONE || (int)act > DUET_ACT_CLAMP)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "epi.act (%d) is not a duet_activation",
                       (int)act);
    if (math == DUET_DTYPE_I32 && act != DUET_ACT_NONE && act != DUET_ACT_RELU &&
        act != DUET_ACT_CLAMP)
        return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "epi.act %s needs floating-point math; the epilogue of an integer GEMM "
                       "(i32 math) has none, relu and clamp",
                       duet_activation_name(act));
    char lo[40], hi[40];
    format_exact(lo, sizeof lo, epi->act_lo);
    format_exact(hi, sizeof hi, epi->act_hi);
    if (act != DUET_ACT_CLAMP) {
        if (epi->act_lo != 0.0 || epi->act_hi != 0.0)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "epi.act_lo (%s) and epi.act_hi (%s) apply to clamp only; %s takes 0",
                           lo, hi, duet_activation_name(act));
        return DUET_SUCCESS;
    }
    if (epi->act_lo != epi->act_lo || epi->act_hi != epi->act_hi)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "epi.act_%s is NaN",
                       epi->act_lo != epi->act_lo ? "lo" : "hi");
    if (epi->act_lo > epi->act_hi)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "epi.act_lo (%s) is greater than epi.act_hi (%s)", lo, hi);
    if (math == DUET_DTYPE_I32) {
        duet_status st = check_integral(epi->act_lo, -2147483648.0, 2147483647.0, fn,
                                        "epi.act_lo", DUET_DTYPE_I32);
        if (st == DUET_SUCCESS)
            st = check_integral(epi->act_hi, -2147483648.0, 2147483647.0, fn, "epi.act_hi",
                                DUET_DTYPE_I32);
        return st;
    }
    return DUET_SUCCESS;
}

static int epi_is_identity(const duet_gemm_epilogue *epi)
{
    return !epi || (epi->act == DUET_ACT_NONE && !epi->bias && !epi->row_scale && !epi->col_scale &&
                    !epi->residual && !epi->aux && !epi->scale_a && !epi->scale_b && !epi->fn);
}

/* epi.fn and its parameters (duet_epilogue_fn_create): a live epilogue of D's context that
 * replaces every built-in step, f32 math and a D of f32, f16 or bf16. */
static duet_status check_user_epilogue(const duet_gemm_epilogue *epi, const dt_context *ctx,
                                       duet_dtype math, duet_dtype d, const char *fn,
                                       dt_epilogue_fn **user, void **params)
{
    *user = NULL;
    *params = NULL;
    if (!epi->fn) {
        if (epi->fn_params || epi->fn_params_offset)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "epi.fn_params or epi.fn_params_offset is set without epi.fn");
        return DUET_SUCCESS;
    }
    dt_epilogue_fn *u = (dt_epilogue_fn *)dt_handle_get(epi->fn, DT_EPILOGUE_FN);
    if (!u)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, fn,
                       "epi.fn is not a live handle (destroyed or never created)");
    if (u->ctx != ctx)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "epi.fn belongs to another context than D.buffer");
    const char *builtin = epi->act != DUET_ACT_NONE ? "epi.act"
                          : epi->bias               ? "epi.bias"
                          : epi->row_scale          ? "epi.row_scale"
                          : epi->col_scale          ? "epi.col_scale"
                          : epi->residual           ? "epi.residual"
                          : epi->aux                ? "epi.aux"
                          : epi->scale_a            ? "epi.scale_a"
                          : epi->scale_b            ? "epi.scale_b"
                          : epi->scale_d            ? "epi.scale_d"
                          : epi->amax_d             ? "epi.amax_d"
                                                    : NULL;
    if (builtin)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "epi.fn replaces the built-in epilogue, but %s is set too (act must be "
                       "DUET_ACT_NONE and the other pointers NULL)",
                       builtin);
    if (math != DUET_DTYPE_F32 ||
        !(d == DUET_DTYPE_F32 || d == DUET_DTYPE_F16 || d == DUET_DTYPE_BF16))
        return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "epi.fn takes f32 epilogue math and a D of f32, f16 or bf16; this GEMM "
                       "has %s math and a D of %s",
                       duet_dtype_name(math), duet_dtype_name(d));
    if (epi->fn_params) {
        const dt_buffer *b = (const dt_buffer *)dt_handle_get(epi->fn_params, DT_BUFFER);
        if (!b)
            return dt_fail(DUET_ERROR_INVALID_HANDLE, fn,
                           "epi.fn_params is not a live handle (destroyed or never created)");
        if (b->ctx != ctx)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "epi.fn_params belongs to another context than D.buffer");
        if (epi->fn_params_offset > b->bytes)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "epi.fn_params_offset (%zu) is past the end of epi.fn_params (%zu "
                           "bytes)",
                           epi->fn_params_offset, b->bytes);
        *params = b->ptr ? (char *)b->ptr + epi->fn_params_offset : NULL;
    } else if (epi->fn_params_offset) {
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "epi.fn_params_offset (%zu) is set but epi.fn_params is NULL",
                       epi->fn_params_offset);
    }
    *user = u;
    return DUET_SUCCESS;
}

/* The epilogue's f32 (math-type) intermediate in the stream's scratch, laid out as D is (so that
 * the pass reads it along D's rows): the GEMM's product when D is narrower than the math type,
 * and the epilogue's result before the conversion to an 8-bit float D. */
static duet_status epi_scratch(dt_context *ctx, dt_stream *s, const duet_matrix *d, int64_t m,
                               int64_t n, int64_t batch, size_t msize, const char *fn, dt_view *tv,
                               size_t *bytes)
{
    void *p = NULL;
    const size_t cells = (size_t)batch * (size_t)m * (size_t)n; /* D's: fits */
    if (cells > SIZE_MAX / msize)
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn,
                       "the intermediate product (%zu elements of %zu bytes) overflows the "
                       "address space",
                       cells, msize);
    *bytes = cells * msize;
    const duet_status st = dt_workspace_reserve(ctx, s->be, &s->epi_ws, *bytes, fn, &p);
    if (st != DUET_SUCCESS) return st;
    const int row_major = d->layout == DUET_LAYOUT_ROW_MAJOR;
    tv->base = p;
    tv->rs = row_major ? n : 1;
    tv->cs = row_major ? 1 : m;
    tv->bs = m * n;
    return DUET_SUCCESS;
}

duet_status duet_gemm_ex(duet_stream *stream, duet_op op_a, duet_op op_b, double alpha,
                         const duet_matrix *a, const duet_matrix *b, double beta,
                         const duet_matrix *c, const duet_gemm_epilogue *epi, duet_matrix *d,
                         const duet_op_options *options)
{
    static const char *fn = "duet_gemm_ex";
    static const duet_gemm_epilogue none;
    dt_clear_error();
    if (!epi) epi = &none;
    if (op_a != DUET_OP_N && op_a != DUET_OP_T)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "op_a (%d) is not a duet_op", (int)op_a);
    if (op_b != DUET_OP_N && op_b != DUET_OP_T)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "op_b (%d) is not a duet_op", (int)op_b);

    /* ---- the operands, each checked as every op checks a matrix ---- */
    dt_context *ctx = NULL;
    mat md, ma, mb, mc;
    memset(&mc, 0, sizeof mc);
    duet_status st = check_matrix(d, fn, "D", "ldd", 1, &ctx, &md, NULL, NULL);
    if (st == DUET_SUCCESS) st = check_matrix(a, fn, "A", "lda", 0, &ctx, &ma, &md, NULL);
    if (st == DUET_SUCCESS) st = check_matrix(b, fn, "B", "ldb", 0, &ctx, &mb, &md, &ma);
    if (st == DUET_SUCCESS && c) st = check_matrix(c, fn, "C", "ldc", 0, &ctx, &mc, &md, &ma);
    if (st != DUET_SUCCESS) return st;
    epi_arg ea[5] = {
        {epi->bias, "epi.bias", "epi.bias.ld", EPI_BIAS, {0}, 0},
        {epi->row_scale, "epi.row_scale", "epi.row_scale.ld", EPI_ROW, {0}, 0},
        {epi->col_scale, "epi.col_scale", "epi.col_scale.ld", EPI_COL, {0}, 0},
        {epi->residual, "epi.residual", "epi.residual.ld", EPI_FULL, {0}, 0},
        {epi->aux, "epi.aux", "epi.aux.ld", EPI_AUX, {0}, 0},
    };
    for (int i = 0; i < 5; i++) {
        if (!ea[i].m) continue;
        st = check_matrix(ea[i].m, fn, ea[i].name, ea[i].ldname, ea[i].role == EPI_AUX, &ctx,
                          &ea[i].chk, &md, &ma);
        if (st != DUET_SUCCESS) return st;
    }
    /* One context for all: the message names the operand whose buffer is elsewhere than D's. */
    {
        const mat *all[8] = {&ma, &mb, c ? &mc : NULL};
        const char *names[8] = {"A", "B", "C"};
        for (int i = 0; i < 5; i++) {
            all[3 + i] = ea[i].m ? &ea[i].chk : NULL;
            names[3 + i] = ea[i].name;
        }
        for (int i = 0; i < 8; i++)
            if (all[i] && all[i]->buf->ctx != md.buf->ctx)
                return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                               "%s.buffer belongs to another context than D.buffer", names[i]);
    }

    /* Scales of 8-bit float A and B on the device: one f32 each (1 x 1, per tensor), or block
     * scales (shapes checked with the others below). */
    mat msc[2];
    memset(msc, 0, sizeof msc);
    const duet_matrix *const scl[2] = {epi->scale_a, epi->scale_b};
    const char *const sname[2] = {"epi.scale_a", "epi.scale_b"};
    const char *const sld[2] = {"epi.scale_a.ld", "epi.scale_b.ld"};
    int sblock[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        if (!scl[i]) continue;
        sblock[i] = !(scl[i]->rows == 1 && scl[i]->cols == 1 && scl[i]->batch_count <= 1);
        st = check_epi_matrix(scl[i], fn, sname[i], sld[i], 0, &ctx, &msc[i], &md, &ma);
        if (st == DUET_SUCCESS && !sblock[i]) st = check_scalar_matrix(&msc[i], fn, sname[i]);
        if (st == DUET_SUCCESS && sblock[i] && scl[i]->dtype != DUET_DTYPE_F32)
            st = dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s is %s but scales are f32", sname[i],
                         duet_dtype_name(scl[i]->dtype));
        if (st == DUET_SUCCESS && !is_f8(a->dtype))
            st = dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                         "%s applies to 8-bit float A and B only; A is %s", sname[i],
                         duet_dtype_name(a->dtype));
        if (st == DUET_SUCCESS && (epi->row_scale || epi->col_scale))
            st = dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                         "%s together with epi.row_scale or epi.col_scale is not supported yet",
                         sname[i]);
        if (st != DUET_SUCCESS) return st;
    }
    /* An 8-bit float D's scale (read) and amax (written): one f32 each, on the device. */
    const int d8 = is_f8(d->dtype);
    mat mdx[2];
    memset(mdx, 0, sizeof mdx);
    const duet_matrix *const dxm[2] = {epi->scale_d, epi->amax_d};
    const char *const dxname[2] = {"epi.scale_d", "epi.amax_d"};
    const char *const dxld[2] = {"epi.scale_d.ld", "epi.amax_d.ld"};
    for (int i = 0; i < 2; i++) {
        if (!dxm[i]) continue;
        st = check_epi_scalar(dxm[i], fn, dxname[i], dxld[i], i, &ctx, &mdx[i], &md, &ma);
        if (st == DUET_SUCCESS && !d8)
            st = dt_fail(DUET_ERROR_UNSUPPORTED, fn, "%s applies to an 8-bit float D only; D is %s",
                         dxname[i], duet_dtype_name(d->dtype));
        if (st != DUET_SUCCESS) return st;
    }

    /* ---- dtypes ---- */
    const duet_dtype dt = a->dtype;
    const duet_dtype math = epi_math_of(dt);
    if (!gemm_ab_ok(dt, b->dtype))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "A %s, B %s: the dtypes of A and B differ (they must be one dtype, or both "
                       "8-bit floats)",
                       duet_dtype_name(dt), duet_dtype_name(b->dtype));
    if (c && !gemm_dtypes_supported(dt, b->dtype, c->dtype))
        return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "A %s, B %s, C %s is not a supported dtype combination (duet_gemm's "
                       "table: C is f32/f64/i32 like A and B, f16 or f32 for f16, bf16 or f32 "
                       "for bf16, i32 for i8, f32, f16 or bf16 for 8-bit floats)",
                       duet_dtype_name(dt), duet_dtype_name(b->dtype), duet_dtype_name(c->dtype));
    if (!epi_dtype_ok(math, d->dtype) && !(math == DUET_DTYPE_F32 && d8))
        return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "D is %s, but a GEMM of %s inputs (%s epilogue math) writes D of %s",
                       duet_dtype_name(d->dtype), duet_dtype_name(dt), duet_dtype_name(math),
                       math == DUET_DTYPE_F32 ? "f32, f16, bf16, f8e4m3 or f8e5m2"
                                              : epi_dtype_set(math));
    for (int i = 0; i < 5; i++)
        if (ea[i].m && !epi_dtype_ok(math, ea[i].m->dtype))
            return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                           "%s is %s, but the epilogue of a GEMM of %s inputs (%s math) takes %s",
                           ea[i].name, duet_dtype_name(ea[i].m->dtype), duet_dtype_name(dt),
                           duet_dtype_name(math), epi_dtype_set(math));
    st = gemm_check_modes(dt, options, fn);
    if (st != DUET_SUCCESS) return st;
    st = check_scalar(alpha, math, fn, "alpha");
    if (st == DUET_SUCCESS) st = check_scalar(beta, math, fn, "beta");
    if (st == DUET_SUCCESS) st = epi_check_act(epi, math, fn);
    dt_epilogue_fn *user = NULL;
    void *user_params = NULL;
    if (st == DUET_SUCCESS)
        st = check_user_epilogue(epi, md.buf->ctx, math, d->dtype, fn, &user, &user_params);
    if (st != DUET_SUCCESS) return st;
    if (!c && beta != 0.0) {
        char text[40];
        format_exact(text, sizeof text, beta);
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "C is NULL but beta (%s) is not 0 (C may be NULL only when it is not read)",
                       text);
    }

    /* ---- shapes and batches ---- */
    const int64_t m = op_a == DUET_OP_N ? a->rows : a->cols;
    const int64_t k = op_a == DUET_OP_N ? a->cols : a->rows;
    const int64_t kb = op_b == DUET_OP_N ? b->rows : b->cols;
    const int64_t n = op_b == DUET_OP_N ? b->cols : b->rows;
    if (k != kb)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "op(A) is %lld x %lld but op(B) is %lld x %lld: inner dimensions differ",
                       (long long)m, (long long)k, (long long)kb, (long long)n);
    if (d->rows != m || d->cols != n)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "D is %lld x %lld but op(A) * op(B) is %lld x %lld", (long long)d->rows,
                       (long long)d->cols, (long long)m, (long long)n);
    const int64_t batch = md.batch;
    if (c && (c->rows != m || c->cols != n))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "C is %lld x %lld but D and op(A) * op(B) are %lld x %lld",
                       (long long)c->rows, (long long)c->cols, (long long)m, (long long)n);
    if (c && mc.batch != batch)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "C.batch_count (%lld) differs from D's (%lld)", (long long)mc.batch,
                       (long long)batch);
    if (ma.batch != batch && ma.batch != 1)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "A.batch_count (%lld) is neither D's (%lld) nor 1", (long long)ma.batch,
                       (long long)batch);
    if (mb.batch != batch && mb.batch != 1)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "B.batch_count (%lld) is neither D's (%lld) nor 1", (long long)mb.batch,
                       (long long)batch);
    for (int i = 0; i < 5; i++) {
        if (!ea[i].m) continue;
        st = epi_check_shape(&ea[i], m, n, batch, fn);
        if (st != DUET_SUCCESS) return st;
    }
    /* Block scales: A's m x ceil(k / 128) (a scale per row of op(A) and 128 values of k), B's
     * ceil(k / 128) x ceil(n / 128) (per 128 x 128 block of op(B)). */
    const int64_t kq = (k + 127) / 128, nq = (n + 127) / 128;
    for (int i = 0; i < 2; i++) {
        if (!sblock[i]) continue;
        const int64_t r = i ? kq : m, cc = i ? nq : kq;
        if (scl[i]->rows != r || scl[i]->cols != cc)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "%s is %lld x %lld, but is one f32 (1 x 1) or, as block scales, %s "
                           "(%lld x %lld here)",
                           sname[i], (long long)scl[i]->rows, (long long)scl[i]->cols,
                           i ? "ceil(k / 128) x ceil(n / 128), one per 128 x 128 block of op(B)"
                             : "m x ceil(k / 128), one per row of op(A) and 128 values of k",
                           (long long)r, (long long)cc);
        if (msc[i].batch != batch && msc[i].batch != 1)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                           "%s.batch_count (%lld) is neither D's (%lld) nor 1", sname[i],
                           (long long)msc[i].batch, (long long)batch);
    }

    /* ---- overlaps: D and aux are written; D may be C exactly ---- */
    if (overlaps(&md, &ma) || overlaps(&md, &mb))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "D overlaps %s in one buffer",
                       overlaps(&md, &ma) ? "A" : "B");
    const int d_is_c = c && overlaps(&md, &mc);
    if (d_is_c && (!same_view(&md, &mc) || d->dtype != c->dtype))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "D overlaps C without being exactly C (in place, D needs C's buffer, "
                       "offset, ld, layout, batch and dtype)");
    for (int i = 0; i < 4; i++)
        if (ea[i].m && overlaps(&md, &ea[i].chk))
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "D overlaps %s in one buffer",
                           ea[i].name);
    for (int i = 0; i < 2; i++)
        if (scl[i] && (overlaps(&md, &msc[i]) || (ea[4].m && overlaps(&ea[4].chk, &msc[i]))))
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s overlaps %s in one buffer",
                           overlaps(&md, &msc[i]) ? "D" : "epi.aux", sname[i]);
    if (epi->scale_d && (overlaps(&md, &mdx[0]) || (ea[4].m && overlaps(&ea[4].chk, &mdx[0]))))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s overlaps epi.scale_d in one buffer",
                       overlaps(&md, &mdx[0]) ? "D" : "epi.aux");
    if (epi->amax_d) {
        const mat *list[12] = {&md,
                               &ma,
                               &mb,
                               c ? &mc : NULL,
                               ea[0].m ? &ea[0].chk : NULL,
                               ea[1].m ? &ea[1].chk : NULL,
                               ea[2].m ? &ea[2].chk : NULL,
                               ea[3].m ? &ea[3].chk : NULL,
                               ea[4].m ? &ea[4].chk : NULL,
                               scl[0] ? &msc[0] : NULL,
                               scl[1] ? &msc[1] : NULL,
                               epi->scale_d ? &mdx[0] : NULL};
        const char *lnames[12] = {"D",
                                  "A",
                                  "B",
                                  "C",
                                  "epi.bias",
                                  "epi.row_scale",
                                  "epi.col_scale",
                                  "epi.residual",
                                  "epi.aux",
                                  "epi.scale_a",
                                  "epi.scale_b",
                                  "epi.scale_d"};
        for (int i = 0; i < 12; i++)
            if (list[i] && overlaps(&mdx[1], list[i]))
                return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                               "epi.amax_d overlaps %s in one buffer (amax_d may share memory "
                               "with no other operand)",
                               lnames[i]);
    }
    if (ea[4].m) {
        const mat *aux = &ea[4].chk;
        const mat *list[8] = {&md, &ma, &mb, c ? &mc : NULL, ea[0].m ? &ea[0].chk : NULL,
                              ea[1].m ? &ea[1].chk : NULL, ea[2].m ? &ea[2].chk : NULL,
                              ea[3].m ? &ea[3].chk : NULL};
        const char *lnames[8] = {"D", "A", "B", "C", "epi.bias", "epi.row_scale",
                                 "epi.col_scale", "epi.residual"};
        for (int i = 0; i < 8; i++)
            if (list[i] && overlaps(aux, list[i]))
                return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                               "epi.aux overlaps %s in one buffer (aux may share memory with "
                               "no other operand)",
                               lnames[i]);
    }

    /* ---- plan and run ---- */
    dt_plan plan;
    st = make_plan(options, OP_GEMM, ctx, m, n, batch, md.elem, fn, &plan);
    if (st != DUET_SUCCESS) return st;
    dt_stream *s = NULL;
    st = op_stream(stream, ctx, fn, &s);
    if (st != DUET_SUCCESS) return st;
    duet_launch_info *info = options ? options->info : NULL;
    if (m == 0 || n == 0) {
        dt_fill_info(info, "", &plan, 0);
        /* amax of no elements: 0, as duet_convert's. */
        return epi->amax_d ? be_memset(ctx->be, s->be, mdx[1].view.base, 0, sizeof(float))
                           : DUET_SUCCESS;
    }
    /* No epilogue, and D is a C the GEMM can write: the plain GEMM, no second pass. */
    if (epi_is_identity(epi) && gemm_dtypes_supported(dt, b->dtype, d->dtype) &&
        (d_is_c || beta == 0.0))
        return gemm_run(stream, ctx, op_a, op_b, alpha, &ma.view, &mb.view, d_is_c ? beta : 0.0,
                        md.view, dt, b->dtype, d->dtype, m, n, k, batch, options, 0, fn, NULL, NULL,
                        NULL);

    dt_epilogue e;
    memset(&e, 0, sizeof e);
    e.math = math;
    e.m = m;
    e.n = n;
    e.batch = batch;
    e.act = epi->act;
    e.lo = epi->act_lo;
    e.hi = epi->act_hi;
    e.beta = beta;
    e.d = epi_view(&md.view, d->dtype);
    if (c && beta != 0.0) e.c = epi_view(&mc.view, c->dtype);
    e.user = user;
    e.user_params = user_params;
    const epi_role roles[5] = {EPI_BIAS, EPI_ROW, EPI_COL, EPI_FULL, EPI_AUX};
    dt_epi_operand *ops[5] = {&e.bias, &e.row_scale, &e.col_scale, &e.residual, &e.aux};
    for (int i = 0; i < 5; i++)
        if (ea[i].m) *ops[i] = epi_operand(&ea[i].chk, roles[i], ea[i].per_row);
    /* Per-tensor scale_a and scale_b take the row and column scales' places, broadcast over all
     * of D. With a block scale both multiply the products of each 128 values of k inside the
     * GEMM instead (dt_gemm.sa, sb), a per-tensor one as a grid of strides 0. */
    const int blocked = sblock[0] || sblock[1];
    dt_scale_grid bsc[2];
    memset(bsc, 0, sizeof bsc);
    for (int i = 0; i < 2; i++) {
        if (!scl[i]) continue;
        const dt_view *sv = &msc[i].view;
        if (!blocked) {
            dt_view v = {sv->base, 0, 0, 0};
            *(i ? &e.col_scale : &e.row_scale) = epi_view(&v, DUET_DTYPE_F32);
            continue;
        }
        bsc[i].p = (const float *)sv->base;
        bsc[i].cshift = 7;
        if (!sblock[i]) continue;
        bsc[i].bs = msc[i].batch > 1 ? sv->bs : 0;
        /* A's grid is scale_a itself; B's (column j of C, k) is scale_b's transpose. */
        bsc[i].rs = i ? sv->cs : sv->rs;
        bsc[i].cs = i ? sv->rs : sv->cs;
        bsc[i].rshift = i ? 7 : 0;
    }
    const dt_scale_grid *bscp = blocked ? bsc : NULL;

    /* Where the GEMM writes alpha * acc at full precision (duet.h, "How it runs"). */
    const int product = k != 0 && alpha != 0.0;
    const int scaled = epi->row_scale || epi->col_scale || epi->scale_a || epi->scale_b;
    const size_t msize = duet_dtype_size(math);
    pthread_mutex_lock(&s->op_lock);
    if (product && !d8 && !user && (!options || options->algorithm == DUET_ALGO_AUTO)) {
        /* The epilogue in the GEMM's own store, where the backend's plan has one: D written
         * once, no intermediate, no second launch. */
        int fused = 0;
        st = gemm_run(stream, ctx, op_a, op_b, alpha, &ma.view, &mb.view, 0.0, md.view, dt,
                      b->dtype, d->dtype, m, n, k, batch, options, 1, fn, &e, &fused, bscp);
        if (st != DUET_SUCCESS || fused) {
            pthread_mutex_unlock(&s->op_lock);
            if (st == DUET_SUCCESS && info)
                snprintf(info->epilogue, sizeof info->epilogue, "fused_gemm_epilogue_%s_%s",
                         duet_dtype_name(math), duet_dtype_name(d->dtype));
            return st;
        }
    }
    size_t scratch = 0;
    dt_view tv; /* where the GEMM writes its product */
    memset(&tv, 0, sizeof tv);
    /* D is C in the accumulation dtype without scales: the GEMM adds beta * C itself, in place. */
    const int gemm_adds_c = product && d->dtype == math && d_is_c && !scaled && !user;
    if (gemm_adds_c) {
        tv = md.view;
        memset(&e.c, 0, sizeof e.c);
    } else if (product && d->dtype == math && !d_is_c) {
        tv = md.view; /* C is read once, by the epilogue */
    } else if (product || d8) {
        /* D narrower than the math type (or D is C and scaled), or an 8-bit float D: the
         * stream's scratch. For an 8-bit D the epilogue writes its result there too, in place,
         * and duet_convert's kernel takes it to D. */
        st = epi_scratch(ctx, s, d, m, n, batch, msize, fn, &tv, &scratch);
        if (st != DUET_SUCCESS) {
            pthread_mutex_unlock(&s->op_lock);
            return st;
        }
    }
    if (product) {
        st = gemm_run(stream, ctx, op_a, op_b, alpha, &ma.view, &mb.view, gemm_adds_c ? beta : 0.0,
                      tv, dt, b->dtype, math, m, n, k, batch, options, 1, fn, NULL, NULL, bscp);
        if (st != DUET_SUCCESS) {
            pthread_mutex_unlock(&s->op_lock);
            return st;
        }
        e.t = epi_view(&tv, math);
    } else {
        dt_fill_info(info, "", &plan, 0);
    }
    if (d8) e.d = epi_view(&tv, math);
    if (info) info->workspace_bytes += scratch;
    /* Kernels walk D along its unit stride. */
    const int turned = e.d.v.cs != 1 && e.d.v.rs == 1;
    if (turned) dt_epilogue_turn(&e);
    st = user ? dt_user_epilogue_run(ctx, s->be, &e, turned, m, info)
              : be_gemm_epilogue(ctx, s->be, &e, info);
    if (st == DUET_SUCCESS && d8) {
        /* D = the result (the scratch) times scale_d, rounded and saturated to D's dtype; amax. */
        dt_convert cv;
        memset(&cv, 0, sizeof cv);
        cv.src_dtype = math;
        cv.dst_dtype = d->dtype;
        cv.rows = m;
        cv.cols = n;
        cv.batch = batch;
        cv.saturate = 1;
        cv.src = tv;
        cv.dst = md.view;
        cv.scale = epi->scale_d ? mdx[0].view.base : NULL;
        cv.amax = epi->amax_d ? mdx[1].view.base : NULL;
        convert_along_dst(&cv);
        duet_launch_info ci;
        memset(&ci, 0, sizeof ci);
        st = be_convert(ctx, s->be, &cv, info ? &ci : NULL);
        if (st == DUET_SUCCESS && info) {
            info->launches += ci.launches;
            /* "<pass>+<conversion>", or "+convert" where the conversion's name does not fit. */
            const size_t used = strlen(info->epilogue), room = sizeof info->epilogue - used;
            if (strlen(ci.kernel) + 2 <= room)
                snprintf(info->epilogue + used, room, "+%s", ci.kernel);
            else
                snprintf(info->epilogue + used, room, "+convert");
        }
    }
    pthread_mutex_unlock(&s->op_lock);
    return st;
}

/* ---- convert ----------------------------------------------------------------------------- */

static int convert_dtype_ok(duet_dtype d)
{
    return d == DUET_DTYPE_F32 || d == DUET_DTYPE_F16 || d == DUET_DTYPE_BF16 ||
           d == DUET_DTYPE_F8E4M3 || d == DUET_DTYPE_F8E5M2;
}

/* A scale or amax operand: one f32 element. */
static duet_status check_scalar_matrix(const mat *x, const char *fn, const char *name)
{
    const duet_matrix *m = x->m;
    if (m->dtype != DUET_DTYPE_F32 || m->rows != 1 || m->cols != 1 || x->batch != 1)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "%s is %s %lld x %lld (batch_count %lld) but must be one f32 (1 x 1, "
                       "batch_count 1)",
                       name, duet_dtype_name(m->dtype), (long long)m->rows, (long long)m->cols,
                       (long long)x->batch);
    return DUET_SUCCESS;
}

duet_status duet_convert(duet_stream *stream, const duet_matrix *src, duet_matrix *dst,
                         const duet_convert_options *options)
{
    static const char *fn = "duet_convert";
    static const duet_convert_options defaults;
    dt_clear_error();
    const duet_convert_options *opt = options ? options : &defaults;
    dt_context *ctx = NULL;
    mat md, ms, mscale, mamax;
    memset(&mscale, 0, sizeof mscale);
    memset(&mamax, 0, sizeof mamax);
    duet_status st = check_matrix(dst, fn, "dst", "dst.ld", 1, &ctx, &md, NULL, NULL);
    if (st == DUET_SUCCESS) st = check_matrix(src, fn, "src", "src.ld", 0, &ctx, &ms, &md, NULL);
    if (st == DUET_SUCCESS) {
        const mat *const both[2] = {&ms, &md};
        const char *const names[2] = {"src", "dst"};
        st = check_contexts(fn, 2, both, names);
    }
    if (st == DUET_SUCCESS && opt->scale) {
        st = check_matrix(opt->scale, fn, "options.scale", "options.scale.ld", 0, &ctx, &mscale,
                          &md, &ms);
        if (st == DUET_SUCCESS) {
            const mat *const both[2] = {&mscale, &md};
            const char *const names[2] = {"options.scale", "dst"};
            st = check_contexts(fn, 2, both, names);
        }
        if (st == DUET_SUCCESS) st = check_scalar_matrix(&mscale, fn, "options.scale");
    }
    if (st == DUET_SUCCESS && opt->amax) {
        st = check_matrix(opt->amax, fn, "options.amax", "options.amax.ld", 1, &ctx, &mamax, &md,
                          &ms);
        if (st == DUET_SUCCESS) {
            const mat *const both[2] = {&mamax, &md};
            const char *const names[2] = {"options.amax", "dst"};
            st = check_contexts(fn, 2, both, names);
        }
        if (st == DUET_SUCCESS) st = check_scalar_matrix(&mamax, fn, "options.amax");
    }
    if (st != DUET_SUCCESS) return st;
    if ((int)opt->overflow != DUET_CONVERT_SATURATE && (int)opt->overflow != DUET_CONVERT_OVERFLOW)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "options.overflow (%d) is not a duet_convert_overflow", (int)opt->overflow);
    if (!convert_dtype_ok(src->dtype) || !convert_dtype_ok(dst->dtype))
        return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "src %s, dst %s: duet_convert takes f32, f16, bf16, f8e4m3 and f8e5m2 "
                       "(%s is none of them)",
                       duet_dtype_name(src->dtype), duet_dtype_name(dst->dtype),
                       duet_dtype_name(convert_dtype_ok(src->dtype) ? dst->dtype : src->dtype));
    if (src->rows != dst->rows || src->cols != dst->cols)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "src is %lld x %lld but dst is %lld x %lld",
                       (long long)src->rows, (long long)src->cols, (long long)dst->rows,
                       (long long)dst->cols);
    if (ms.batch != md.batch && ms.batch != 1)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "src.batch_count (%lld) is neither dst's (%lld) nor 1", (long long)ms.batch,
                       (long long)md.batch);
    /* The scalars are one element each: an empty flag of theirs never hides an overlap. */
    if (overlaps(&md, &ms))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "dst overlaps src in one buffer");
    if (opt->scale && overlaps(&md, &mscale))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "dst overlaps options.scale");
    if (opt->amax && (overlaps(&mamax, &md) || overlaps(&mamax, &ms) ||
                      (opt->scale && overlaps(&mamax, &mscale))))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "options.amax overlaps %s",
                       overlaps(&mamax, &md)   ? "dst"
                       : overlaps(&mamax, &ms) ? "src"
                                               : "options.scale");

    dt_stream *s = NULL;
    st = op_stream(stream, ctx, fn, &s);
    if (st != DUET_SUCCESS) return st;
    duet_launch_info *info = opt->info;
    if (info) {
        memset(info, 0, sizeof *info);
        snprintf(info->tuning, sizeof info->tuning, "-");
    }
    if (md.empty) {
        /* Nothing to convert; amax is still the maximum of no elements, 0. */
        if (!opt->amax) return DUET_SUCCESS;
        return be_memset(ctx->be, s->be, mamax.view.base, 0, sizeof(float));
    }
    dt_convert c;
    memset(&c, 0, sizeof c);
    c.src_dtype = src->dtype;
    c.dst_dtype = dst->dtype;
    c.rows = dst->rows;
    c.cols = dst->cols;
    c.batch = md.batch;
    c.saturate = opt->overflow == DUET_CONVERT_SATURATE;
    c.src = ms.view;
    c.dst = md.view;
    c.scale = opt->scale ? mscale.view.base : NULL;
    c.amax = opt->amax ? mamax.view.base : NULL;
    convert_along_dst(&c);
    pthread_mutex_lock(&s->op_lock);
    st = be_convert(ctx, s->be, &c, info);
    pthread_mutex_unlock(&s->op_lock);
    return st;
}
