/* test_dlpack.c - DLPack export and import: round trips of every dtype, layout and batch; bad fields. */
#include "harness.h"

#include <duet/duet_dlpack.h>

static duet_context *g_ctx;
static int g_cpu, g_cuda;

static const duet_dtype k_dtypes[] = {DUET_DTYPE_F32, DUET_DTYPE_F64, DUET_DTYPE_I32,
                                      DUET_DTYPE_F16, DUET_DTYPE_BF16, DUET_DTYPE_I8};

/* Deleters that count, so that "called exactly once, and only on success" is checked. */
static int g_deleted;
static void (*g_orig_unversioned)(DLManagedTensor *);
static void (*g_orig_versioned)(DLManagedTensorVersioned *);
static void count_unversioned(DLManagedTensor *t)
{
    g_deleted++;
    if (g_orig_unversioned) g_orig_unversioned(t);
}
static void count_versioned(DLManagedTensorVersioned *t)
{
    g_deleted++;
    if (g_orig_versioned) g_orig_versioned(t);
}

static void expect_dl_dtype(DLDataType t, duet_dtype d)
{
    const unsigned code = d == DUET_DTYPE_I32 || d == DUET_DTYPE_I8 ? kDLInt
                          : d == DUET_DTYPE_BF16                    ? kDLBfloat
                                                                    : kDLFloat;
    DT_CHECK(t.code == code && t.bits == 8 * duet_dtype_size(d) && t.lanes == 1,
             "%s exported as code %u bits %u lanes %u", duet_dtype_name(d), (unsigned)t.code,
             (unsigned)t.bits, (unsigned)t.lanes);
}

/* ---- round trips ------------------------------------------------------------------------- */

static void round_trip(duet_dtype dtype, duet_layout layout, int64_t batch, int versioned)
{
    const size_t elem = duet_dtype_size(dtype);
    duet_matrix m = duet_matrix_make(NULL, dtype, layout, 5, 7);
    const int row_major = layout == DUET_LAYOUT_ROW_MAJOR;
    m.ld = (row_major ? m.cols : m.rows) + 3;
    m.offset = 4;
    m.batch_count = batch;
    m.batch_stride = batch > 1 ? dt_matrix_extent(&m) + 2 : 0;
    const size_t n = dt_matrix_span_elems(&m) + 5;
    unsigned char *host = malloc(n * elem), *back = malloc(n * elem);
    if (!host || !back) exit(1);
    for (size_t i = 0; i < n * elem; i++) host[i] = (unsigned char)(i * 37 + 11);
    DT_OK(duet_buffer_create(g_ctx, n * elem, &m.buffer));
    DT_OK(duet_buffer_write(NULL, m.buffer, 0, host, n * elem));
    void *base = NULL;
    DT_OK(duet_buffer_device_ptr(m.buffer, 0, &base));

    DLManagedTensor *u = NULL;
    DLManagedTensorVersioned *v = NULL;
    if (versioned)
        DT_OK(duet_matrix_to_dlpack_versioned(&m, &v));
    else
        DT_OK(duet_matrix_to_dlpack(&m, &u));
    DLTensor *t = versioned ? (v ? &v->dl_tensor : NULL) : (u ? &u->dl_tensor : NULL);
    if (!t) exit(1);
    const int nd = batch > 1 ? 3 : 2, r = nd - 2, c = nd - 1;
    DT_CHECK(t->ndim == nd, "ndim %d", (int)t->ndim);
    DT_CHECK(t->data == base && t->byte_offset == m.offset * elem, "data %p (%p) byte_offset %llu",
             t->data, base, (unsigned long long)t->byte_offset);
    DT_CHECK(t->shape[r] == 5 && t->shape[c] == 7 && (nd == 2 || t->shape[0] == batch),
             "shape");
    DT_CHECK(t->strides[r] == (row_major ? m.ld : 1) && t->strides[c] == (row_major ? 1 : m.ld) &&
                 (nd == 2 || t->strides[0] == m.batch_stride),
             "strides %lld %lld", (long long)t->strides[r], (long long)t->strides[c]);
    expect_dl_dtype(t->dtype, dtype);
    const int want_dev = g_cpu ? kDLCPU : g_cuda ? kDLCUDA : kDLROCM;
    DT_CHECK((int)t->device.device_type == want_dev && t->device.device_id == 0, "device %d:%d",
             (int)t->device.device_type, (int)t->device.device_id);
    if (versioned)
        DT_CHECK(v->version.major == 1 && v->flags == 0 && v->deleter != NULL, "version %u flags",
                 v->version.major);

    /* Import: the same geometry over a new, wrapped buffer. */
    duet_matrix w;
    memset(&w, 0, sizeof w);
    g_deleted = 0;
    if (versioned) {
        g_orig_versioned = v->deleter;
        v->deleter = count_versioned;
        DT_OK(duet_matrix_from_dlpack_versioned(g_ctx, v, &w));
    } else {
        g_orig_unversioned = u->deleter;
        u->deleter = count_unversioned;
        DT_OK(duet_matrix_from_dlpack(g_ctx, u, &w));
    }
    int wrapped = 0;
    void *wbase = NULL;
    DT_OK(duet_buffer_is_wrapped(w.buffer, &wrapped));
    DT_OK(duet_buffer_device_ptr(w.buffer, 0, &wbase));
    DT_CHECK(wrapped && wbase == base && w.buffer != m.buffer, "imported buffer");
    DT_CHECK(w.dtype == dtype && w.layout == layout && w.rows == 5 && w.cols == 7 &&
                 w.ld == m.ld && w.offset == m.offset && dt_matrix_batches(&w) == batch &&
                 (batch == 1 || w.batch_stride == m.batch_stride),
             "%s %s batch %lld: imported as %s ld %lld offset %zu batch %lld/%lld",
             duet_dtype_name(dtype), row_major ? "row" : "col", (long long)batch,
             w.layout == DUET_LAYOUT_ROW_MAJOR ? "row" : "col", (long long)w.ld, w.offset,
             (long long)w.batch_count, (long long)w.batch_stride);
    /* An op through the import writes the exporter's memory, exactly the matrix's elements. */
    DT_OK(duet_fill(NULL, 3.0, &w, NULL));
    DT_OK(duet_buffer_read(NULL, m.buffer, 0, back, n * elem));
    int bad = 0;
    unsigned char *expect = malloc(n * elem);
    if (!expect) exit(1);
    memcpy(expect, host, n * elem);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < 5; i++)
            for (int64_t j = 0; j < 7; j++) dt_set(expect, dtype, dt_matrix_index(&m, b, i, j), 3.0);
    bad = memcmp(expect, back, n * elem) != 0;
    DT_CHECK(!bad, "%s: fill through the imported matrix wrote the wrong bytes",
             duet_dtype_name(dtype));
    DT_CHECK(g_deleted == 0, "deleter ran before the buffer was destroyed");
    DT_OK(duet_buffer_destroy(w.buffer));
    DT_CHECK(g_deleted == 1, "deleter ran %d times after the destroy", g_deleted);
    DT_OK(duet_buffer_destroy(m.buffer));
    free(expect);
    free(host);
    free(back);
}

/* A hand-made tensor over a buffer of g_ctx: compact strides, size-1 dimensions, col-major. */
static void hand_made(void)
{
    duet_buffer *buf = NULL;
    DT_OK(duet_buffer_create(g_ctx, 256 * sizeof(float), &buf));
    void *base = NULL;
    DT_OK(duet_buffer_device_ptr(buf, 0, &base));
    int64_t shape[2] = {4, 6};
    DLManagedTensor mt;
    memset(&mt, 0, sizeof mt);
    mt.dl_tensor.data = base;
    mt.dl_tensor.device.device_type = g_cpu ? kDLCPU : g_cuda ? kDLCUDA : kDLROCM;
    mt.dl_tensor.ndim = 2;
    mt.dl_tensor.dtype.code = kDLFloat;
    mt.dl_tensor.dtype.bits = 32;
    mt.dl_tensor.dtype.lanes = 1;
    mt.dl_tensor.shape = shape;
    duet_matrix w;
    /* strides NULL: compact row-major; deleter NULL is allowed. */
    DT_OK(duet_matrix_from_dlpack(g_ctx, &mt, &w));
    DT_CHECK(w.layout == DUET_LAYOUT_ROW_MAJOR && w.ld == 6 && w.offset == 0, "compact: ld %lld",
             (long long)w.ld);
    DT_OK(duet_buffer_destroy(w.buffer));
    /* Column-major with a padded ld. */
    int64_t st[2] = {1, 9};
    mt.dl_tensor.strides = st;
    DT_OK(duet_matrix_from_dlpack(g_ctx, &mt, &w));
    DT_CHECK(w.layout == DUET_LAYOUT_COL_MAJOR && w.ld == 9, "col-major: ld %lld", (long long)w.ld);
    DT_OK(duet_buffer_destroy(w.buffer));
    /* Size-1 dimensions: their strides do not matter. */
    int64_t row[2] = {1, 6}, row_st[2] = {1, 1}, col[2] = {6, 1}, col_st[2] = {1, 1};
    mt.dl_tensor.shape = row;
    mt.dl_tensor.strides = row_st;
    DT_OK(duet_matrix_from_dlpack(g_ctx, &mt, &w));
    DT_CHECK(w.rows == 1 && w.cols == 6 && w.ld >= 6, "1 x 6: ld %lld", (long long)w.ld);
    DT_OK(duet_buffer_destroy(w.buffer));
    mt.dl_tensor.shape = col;
    mt.dl_tensor.strides = col_st;
    DT_OK(duet_matrix_from_dlpack(g_ctx, &mt, &w));
    DT_CHECK(w.rows == 6 && w.cols == 1, "6 x 1");
    DT_OK(duet_buffer_destroy(w.buffer));
    /* Empty: no elements, data may be NULL. */
    int64_t empty[2] = {0, 6};
    mt.dl_tensor.shape = empty;
    mt.dl_tensor.strides = NULL;
    mt.dl_tensor.data = NULL;
    DT_OK(duet_matrix_from_dlpack(g_ctx, &mt, &w));
    DT_CHECK(w.rows == 0, "empty");
    DT_OK(duet_buffer_destroy(w.buffer));
    DT_OK(duet_buffer_destroy(buf));
}

/* ---- bad input, one field at a time ------------------------------------------------------ */

typedef struct good_tensor {
    duet_buffer *buf;
    DLManagedTensorVersioned v;
    int64_t shape[3], strides[3];
} good_tensor;

/* A valid rank-3 f32 tensor [2, 3, 4] row-major, ld 5, batch stride 16, offset 4 elements. */
static void make_good(good_tensor *g)
{
    memset(&g->v, 0, sizeof g->v);
    void *base = NULL;
    DT_OK(duet_buffer_device_ptr(g->buf, 0, &base));
    g->shape[0] = 2, g->shape[1] = 3, g->shape[2] = 4;
    g->strides[0] = 16, g->strides[1] = 5, g->strides[2] = 1;
    g->v.version.major = 1;
    g->v.deleter = count_versioned;
    DLTensor *t = &g->v.dl_tensor;
    t->data = base;
    t->device.device_type = g_cpu ? kDLCPU : g_cuda ? kDLCUDA : kDLROCM;
    t->device.device_id = 0;
    t->ndim = 3;
    t->dtype.code = kDLFloat;
    t->dtype.bits = 32;
    t->dtype.lanes = 1;
    t->shape = g->shape;
    t->strides = g->strides;
    t->byte_offset = 16;
}

/* Imports g's tensor both ways and expects the same failure, no deleter call, no write. */
static void expect_bad(good_tensor *g, duet_status want, const char *field, int line)
{
    duet_matrix out, before;
    memset(&out, 0x5A, sizeof out);
    before = out;
    g_deleted = 0;
    g_orig_versioned = NULL;
    g_orig_unversioned = NULL;
    duet_status s = duet_matrix_from_dlpack_versioned(g_ctx, &g->v, &out);
    dt_checks++;
    if (s != want || !strstr(duet_last_error(), field) || g_deleted != 0 ||
        memcmp(&out, &before, sizeof out) != 0) {
        dt_failures++;
        fprintf(stderr, "line %d (versioned): %s, want %s naming \"%s\": \"%s\" (deleted %d)\n",
                line, duet_status_string(s), duet_status_string(want), field, duet_last_error(),
                g_deleted);
    }
    DLManagedTensor u;
    memset(&u, 0, sizeof u);
    u.dl_tensor = g->v.dl_tensor;
    u.deleter = count_unversioned;
    s = duet_matrix_from_dlpack(g_ctx, &u, &out);
    dt_checks++;
    if (s != want || !strstr(duet_last_error(), field) || g_deleted != 0 ||
        memcmp(&out, &before, sizeof out) != 0) {
        dt_failures++;
        fprintf(stderr, "line %d: %s, want %s naming \"%s\": \"%s\" (deleted %d)\n", line,
                duet_status_string(s), duet_status_string(want), field, duet_last_error(),
                g_deleted);
    }
    make_good(g); /* restore the one field */
}

#define BAD(want, field) expect_bad(&g, (want), (field), __LINE__)

static void bad_inputs(void)
{
    good_tensor g;
    DT_OK(duet_buffer_create(g_ctx, 64 * sizeof(float), &g.buf));
    make_good(&g);
    duet_matrix ok;
    g_deleted = 0;
    g_orig_versioned = NULL;
    DT_OK(duet_matrix_from_dlpack_versioned(g_ctx, &g.v, &ok));
    DT_CHECK(ok.batch_count == 2 && ok.batch_stride == 16 && ok.ld == 5 && ok.offset == 4,
             "the good tensor imports as ld %lld offset %zu", (long long)ok.ld, ok.offset);
    DT_OK(duet_buffer_destroy(ok.buffer));
    DT_CHECK(g_deleted == 1, "deleted %d", g_deleted);
    make_good(&g);

    DT_FAILS(duet_matrix_from_dlpack(g_ctx, NULL, &ok), DUET_ERROR_INVALID_ARGUMENT, "tensor");
    DT_FAILS(duet_matrix_from_dlpack_versioned(g_ctx, NULL, &ok), DUET_ERROR_INVALID_ARGUMENT,
             "tensor");
    DT_FAILS(duet_matrix_from_dlpack_versioned(NULL, &g.v, &ok), DUET_ERROR_INVALID_HANDLE, "ctx");
    DT_FAILS(duet_matrix_from_dlpack_versioned(g_ctx, &g.v, NULL), DUET_ERROR_INVALID_ARGUMENT,
             "matrix");

    g.v.dl_tensor.ndim = 1;
    BAD(DUET_ERROR_UNSUPPORTED, "ndim");
    g.v.dl_tensor.ndim = 4;
    BAD(DUET_ERROR_UNSUPPORTED, "ndim");
    g.v.dl_tensor.dtype.code = kDLUInt;
    BAD(DUET_ERROR_UNSUPPORTED, "dtype");
    g.v.dl_tensor.dtype.code = kDLComplex;
    g.v.dl_tensor.dtype.bits = 64;
    BAD(DUET_ERROR_UNSUPPORTED, "dtype");
    g.v.dl_tensor.dtype.bits = 24;
    BAD(DUET_ERROR_UNSUPPORTED, "bits");
    g.v.dl_tensor.dtype.lanes = 4;
    BAD(DUET_ERROR_UNSUPPORTED, "lanes");
    g.v.dl_tensor.device.device_type = kDLOpenCL;
    BAD(DUET_ERROR_UNSUPPORTED, "device_type");
    g.v.dl_tensor.device.device_type = g_cpu ? kDLCUDA : kDLCPU;
    BAD(DUET_ERROR_UNSUPPORTED, "device_type");
    g.v.dl_tensor.device.device_id = 1;
    BAD(DUET_ERROR_INVALID_ARGUMENT, "device_id");
    g.v.dl_tensor.shape = NULL;
    BAD(DUET_ERROR_INVALID_ARGUMENT, "shape");
    g.shape[1] = -3;
    BAD(DUET_ERROR_INVALID_ARGUMENT, "shape[1]");
    g.shape[0] = 0;
    BAD(DUET_ERROR_UNSUPPORTED, "shape[0]");
    g.strides[0] = -16;
    BAD(DUET_ERROR_INVALID_ARGUMENT, "strides[0]");
    g.strides[2] = 2; /* neither inner stride is 1 */
    BAD(DUET_ERROR_UNSUPPORTED, "strides[2]");
    g.strides[1] = 3; /* rows of 4 elements 3 apart overlap */
    BAD(DUET_ERROR_INVALID_ARGUMENT, "strides[1]");
    g.v.dl_tensor.byte_offset = 6; /* not a multiple of 4 */
    BAD(DUET_ERROR_UNSUPPORTED, "byte_offset");
    g.v.dl_tensor.data = NULL;
    BAD(DUET_ERROR_INVALID_ARGUMENT, "data");
    g.shape[0] = (int64_t)1 << 34; /* far past the end: GPUs catch it at the last byte */
    if (g_cpu) make_good(&g);
    else BAD(DUET_ERROR_INVALID_ARGUMENT, "bytes");
    /* Only the versioned form has a version. */
    g.v.version.major = 2;
    g_deleted = 0;
    DT_FAILS(duet_matrix_from_dlpack_versioned(g_ctx, &g.v, &ok), DUET_ERROR_UNSUPPORTED,
             "version");
    DT_CHECK(g_deleted == 0, "deleter ran on failure");
    make_good(&g);

    /* Export of bad matrices. */
    DLManagedTensor *u = (DLManagedTensor *)0x1;
    duet_matrix m = duet_matrix_make(g.buf, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    DT_FAILS(duet_matrix_to_dlpack(NULL, &u), DUET_ERROR_INVALID_ARGUMENT, "matrix");
    DT_FAILS(duet_matrix_to_dlpack(&m, NULL), DUET_ERROR_INVALID_ARGUMENT, "tensor");
    m.ld = 3;
    DT_FAILS(duet_matrix_to_dlpack(&m, &u), DUET_ERROR_INVALID_ARGUMENT, "ld");
    m.ld = 4;
    m.offset = 60;
    DT_FAILS(duet_matrix_to_dlpack(&m, &u), DUET_ERROR_INVALID_ARGUMENT, "buffer");
    m.offset = 0;
    m.dtype = (duet_dtype)42;
    DT_FAILS(duet_matrix_to_dlpack(&m, &u), DUET_ERROR_INVALID_ARGUMENT, "dtype");
    DT_CHECK(u == (DLManagedTensor *)0x1, "nothing written on failure");
    DT_OK(duet_buffer_destroy(g.buf));
    m.dtype = DUET_DTYPE_F32;
    DT_FAILS(duet_matrix_to_dlpack(&m, &u), DUET_ERROR_INVALID_HANDLE, "buffer");
}

/* An exported tensor's deleter works after its context is gone; an imported one's runs when
 * the context is destroyed. */
static void lifetimes(void)
{
    duet_context *ctx = NULL;
    DT_OK(duet_context_create(0, &ctx));
    if (!ctx) return;
    duet_buffer *b = NULL;
    DT_OK(duet_buffer_create(ctx, 64, &b));
    duet_matrix m = duet_matrix_make(b, DUET_DTYPE_I8, DUET_LAYOUT_COL_MAJOR, 8, 8);
    DLManagedTensor *out = NULL, *in = NULL;
    DT_OK(duet_matrix_to_dlpack(&m, &out));
    DT_OK(duet_matrix_to_dlpack(&m, &in));
    duet_matrix w;
    g_deleted = 0;
    if (in) {
        g_orig_unversioned = in->deleter;
        in->deleter = count_unversioned;
        DT_OK(duet_matrix_from_dlpack(ctx, in, &w));
    }
    DT_OK(duet_context_destroy(ctx));
    DT_CHECK(g_deleted == 1, "an imported tensor's deleter ran %d times with its context",
             g_deleted);
    if (out) out->deleter(out);
}

/* ---- read-only tensors and one import per tensor -------------------------------------- */

/* call must fail with DUET_ERROR_INVALID_ARGUMENT, its message naming func, the argument and
 * the read-only flag. */
static void expect_read_only(duet_status got, const char *func, const char *arg, int line)
{
    const char *msg = duet_last_error();
    dt_checks++;
    if (got != DUET_ERROR_INVALID_ARGUMENT || strncmp(msg, func, strlen(func)) != 0 ||
        !strstr(msg, arg) || !strstr(msg, "DLPACK_FLAG_BITMASK_READ_ONLY")) {
        dt_failures++;
        fprintf(stderr, "line %d: %s on a read-only buffer: %s (\"%s\"), wanted invalid argument "
                        "naming %s, %s and the flag\n",
                line, func, duet_status_string(got), msg, func, arg);
    }
}
#define READ_ONLY(call, func, arg) expect_read_only((call), (func), (arg), __LINE__)

/* A versioned tensor flagged DLPACK_FLAG_BITMASK_READ_ONLY imports as a read-only matrix: every
 * call that writes a buffer refuses it (naming the argument and the flag) and writes nothing;
 * reading it works; its export keeps the flag, and it has no unversioned export. */
static void read_only(void)
{
    enum { N = 4, ELEMS = N * N };
    duet_buffer *src = NULL, *other = NULL;
    DT_OK(duet_buffer_create(g_ctx, ELEMS * sizeof(float), &src));
    DT_OK(duet_buffer_create(g_ctx, 3 * ELEMS * sizeof(float), &other));
    if (!src || !other) return;
    float init[ELEMS], back[ELEMS], zeros[3 * ELEMS] = {0};
    for (int i = 0; i < ELEMS; i++) init[i] = (float)(i + 1);
    DT_OK(duet_buffer_write(NULL, src, 0, init, sizeof init));
    DT_OK(duet_buffer_write(NULL, other, 0, zeros, sizeof zeros));
    duet_matrix m = duet_matrix_make(src, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, N, N);
    DLManagedTensorVersioned *v = NULL;
    DT_OK(duet_matrix_to_dlpack_versioned(&m, &v));
    if (!v) return;
    v->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    g_orig_versioned = v->deleter;
    v->deleter = count_versioned;
    g_deleted = 0;
    duet_matrix r;
    DT_OK(duet_matrix_from_dlpack_versioned(g_ctx, v, &r));
    duet_buffer *rb = r.buffer;

    /* Matrices of other: x (elements 0..15), y (16..31), z (32..47). */
    duet_matrix x = duet_matrix_make(other, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, N, N);
    duet_matrix y = x, z = x;
    y.offset = ELEMS;
    z.offset = 2 * ELEMS;

    /* Every op's output. */
    READ_ONLY(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &x, &y, 0.0, &r, NULL), "duet_gemm",
              "C.buffer");
    READ_ONLY(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &x, &y, 1.0, &r, NULL), "duet_gemm",
              "C.buffer");
    READ_ONLY(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 0.0, &x, &y, 0.0, &r, NULL), "duet_gemm",
              "C.buffer"); /* the fill path of alpha == 0 */
    READ_ONLY(duet_transpose(NULL, &x, &r, NULL), "duet_transpose", "out.buffer");
    READ_ONLY(duet_transpose(NULL, &r, &r, NULL), "duet_transpose", "out.buffer"); /* in place */
    READ_ONLY(duet_scale(NULL, 2.0, &r, NULL), "duet_scale", "x.buffer");
    READ_ONLY(duet_fill(NULL, 7.0, &r, NULL), "duet_fill", "x.buffer");
    READ_ONLY(duet_add(NULL, 1.0, &x, 1.0, &y, &r, NULL), "duet_add", "c.buffer");
    READ_ONLY(duet_add(NULL, 1.0, &r, 1.0, &y, &r, NULL), "duet_add", "c.buffer");
    /* Buffer calls that write. */
    READ_ONLY(duet_buffer_write(NULL, rb, 0, zeros, 16), "duet_buffer_write", "dst");
    READ_ONLY(duet_buffer_write_async(NULL, rb, 0, zeros, 16), "duet_buffer_write_async", "dst");
    READ_ONLY(duet_buffer_copy(NULL, rb, 0, other, 0, 16), "duet_buffer_copy", "dst");
    READ_ONLY(duet_buffer_copy_peer(NULL, rb, 0, other, 0, 16), "duet_buffer_copy_peer", "dst");
    READ_ONLY(duet_buffer_memset(NULL, rb, 0, 0, 16), "duet_buffer_memset", "buf");
    READ_ONLY(duet_buffer_write(NULL, rb, 0, zeros, 0), "duet_buffer_write", "dst");
    /* A group gemm's device C. */
    duet_group *grp = NULL;
    DT_OK(duet_group_create(&g_ctx, 1, &grp));
    if (grp) {
        READ_ONLY(duet_group_gemm_ex(grp, DUET_OP_N, DUET_OP_N, 1.0, duet_group_device(&x),
                                     duet_group_device(&y), 0.0, duet_group_device(&r), NULL),
                  "duet_group_gemm_ex", "C.buffer");
        /* As an input it is read. */
        DT_OK(duet_group_gemm_ex(grp, DUET_OP_N, DUET_OP_N, 1.0, duet_group_device(&r),
                                 duet_group_device(&x), 0.0, duet_group_device(&z), NULL));
        DT_OK(duet_group_destroy(grp));
    }
    DT_OK(duet_buffer_read(NULL, src, 0, back, sizeof back));
    DT_CHECK(memcmp(back, init, sizeof init) == 0, "a refused call wrote the read-only memory");

    /* Reads work: as gemm's A and B, transpose's and add's inputs, copies' src. */
    DT_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &r, &r, 0.0, &z, NULL));
    DT_OK(duet_transpose(NULL, &r, &z, NULL));
    DT_OK(duet_add(NULL, 1.0, &r, -1.0, &r, &z, NULL));
    DT_OK(duet_buffer_copy(NULL, other, 0, rb, 0, 16));
    DT_OK(duet_buffer_copy_peer(NULL, other, 0, rb, 0, 16));
    DT_OK(duet_buffer_read(NULL, rb, 0, back, sizeof back));
    DT_CHECK(memcmp(back, init, sizeof init) == 0, "reading the read-only matrix");

    /* Export: the versioned tensor keeps the flag; the unversioned one cannot carry it. */
    DLManagedTensorVersioned *again = NULL;
    DT_OK(duet_matrix_to_dlpack_versioned(&r, &again));
    if (again) {
        DT_CHECK((again->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0,
                 "a read-only matrix exported without the read-only flag (flags %llu)",
                 (unsigned long long)again->flags);
        again->deleter(again);
    }
    DLManagedTensor *u = (DLManagedTensor *)0x1;
    READ_ONLY(duet_matrix_to_dlpack(&r, &u), "duet_matrix_to_dlpack", "matrix->buffer");
    DT_CHECK(u == (DLManagedTensor *)0x1, "nothing written on failure");

    /* Without the flag the same tensor's memory is writable through the import. */
    DT_CHECK(g_deleted == 0, "deleter ran before the buffer was destroyed");
    DT_OK(duet_buffer_destroy(rb));
    DT_CHECK(g_deleted == 1, "deleter ran %d times", g_deleted);
    DT_OK(duet_matrix_to_dlpack_versioned(&m, &v));
    if (v) {
        DT_CHECK(v->flags == 0, "a writable matrix exported with flags %llu",
                 (unsigned long long)v->flags);
        DT_OK(duet_matrix_from_dlpack_versioned(g_ctx, v, &r));
        DT_OK(duet_fill(NULL, 7.0, &r, NULL));
        DT_OK(duet_buffer_destroy(r.buffer));
    }
    DT_OK(duet_buffer_destroy(src));
    DT_OK(duet_buffer_destroy(other));
}

/* A managed tensor is imported once: a second import while the first buffer lives (in this
 * context or another) is refused, the deleter runs once; after the first buffer is destroyed
 * a new tensor may be imported as usual. */
static void import_once(void)
{
    duet_context *c2 = NULL;
    DT_OK(duet_context_create(0, &c2));
    duet_buffer *b = NULL;
    DT_OK(duet_buffer_create(g_ctx, 64, &b));
    if (!b || !c2) return;
    duet_matrix m = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 4, 4);
    for (int versioned = 0; versioned < 2; versioned++) {
        DLManagedTensor *u = NULL;
        DLManagedTensorVersioned *v = NULL;
        if (versioned) {
            DT_OK(duet_matrix_to_dlpack_versioned(&m, &v));
            if (!v) return;
            g_orig_versioned = v->deleter;
            v->deleter = count_versioned;
        } else {
            DT_OK(duet_matrix_to_dlpack(&m, &u));
            if (!u) return;
            g_orig_unversioned = u->deleter;
            u->deleter = count_unversioned;
        }
        const char *fn = versioned ? "duet_matrix_from_dlpack_versioned" : "duet_matrix_from_dlpack";
#define IMPORT(ctx, out)                                                                       \
    (versioned ? duet_matrix_from_dlpack_versioned((ctx), v, (out))                             \
               : duet_matrix_from_dlpack((ctx), u, (out)))
        g_deleted = 0;
        duet_matrix first, second, before;
        DT_OK(IMPORT(g_ctx, &first));
        memset(&second, 0x5A, sizeof second);
        before = second;
        for (int c = 0; c < 2; c++) {
            const duet_status s = IMPORT(c ? c2 : g_ctx, &second);
            dt_checks++;
            if (s != DUET_ERROR_INVALID_ARGUMENT || strncmp(duet_last_error(), fn, strlen(fn)) ||
                !strstr(duet_last_error(), "already imported") ||
                memcmp(&second, &before, sizeof second) != 0) {
                dt_failures++;
                fprintf(stderr, "%s: a second import%s gave %s (\"%s\"), wanted invalid argument "
                                "naming the import\n",
                        fn, c ? " into another context" : "", duet_status_string(s),
                        duet_last_error());
            }
        }
        DT_CHECK(g_deleted == 0, "%s: the refused import ran the deleter", fn);
        DT_OK(duet_buffer_destroy(first.buffer));
        DT_CHECK(g_deleted == 1, "%s: the deleter ran %d times, wanted once", fn, g_deleted);
#undef IMPORT
    }
    /* Two tensors over the same memory are two imports. */
    DLManagedTensor *p = NULL, *q = NULL;
    DT_OK(duet_matrix_to_dlpack(&m, &p));
    DT_OK(duet_matrix_to_dlpack(&m, &q));
    duet_matrix mp, mq;
    if (p) DT_OK(duet_matrix_from_dlpack(g_ctx, p, &mp));
    if (q) DT_OK(duet_matrix_from_dlpack(c2, q, &mq));
    if (p) DT_OK(duet_buffer_destroy(mp.buffer));
    DT_OK(duet_context_destroy(c2)); /* releases q's import */
    DT_OK(duet_buffer_destroy(b));
}

int main(void)
{
    g_ctx = dt_open_or_skip();
    g_cpu = strcmp(duet_backend_name(), "cpu") == 0;
    g_cuda = strcmp(duet_backend_name(), "cuda") == 0;
    for (size_t d = 0; d < sizeof k_dtypes / sizeof k_dtypes[0]; d++)
        for (int layout = 0; layout < 2; layout++)
            for (int64_t batch = 1; batch <= 3; batch += 2)
                for (int versioned = 0; versioned < 2; versioned++)
                    round_trip(k_dtypes[d], (duet_layout)layout, batch, versioned);
    hand_made();
    bad_inputs();
    lifetimes();
    read_only();
    import_once();
    DT_OK(duet_context_destroy(g_ctx));
    return dt_finish("test_dlpack");
}
