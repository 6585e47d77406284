/* api_dlpack.c - DLPack import (rank 2 and 3 tensors as matrices over wrapped buffers) and export. */
#include "backend.h"
#include "internal.h"

#include "duet/duet_dlpack.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- dtypes and devices ------------------------------------------------------------------ */

static int dtype_from_dl(DLDataType t, duet_dtype *out)
{
    if (t.lanes != 1) return 0;
    switch (t.code) {
    case kDLFloat:
        if (t.bits == 32) *out = DUET_DTYPE_F32;
        else if (t.bits == 64) *out = DUET_DTYPE_F64;
        else if (t.bits == 16) *out = DUET_DTYPE_F16;
        else return 0;
        return 1;
    case kDLBfloat:
        if (t.bits != 16) return 0;
        *out = DUET_DTYPE_BF16;
        return 1;
    case kDLInt:
        if (t.bits == 32) *out = DUET_DTYPE_I32;
        else if (t.bits == 8) *out = DUET_DTYPE_I8;
        else return 0;
        return 1;
    default: return 0;
    }
}

static DLDataType dtype_to_dl(duet_dtype d)
{
    DLDataType t;
    t.lanes = 1;
    t.bits = (uint8_t)(8 * duet_dtype_size(d));
    t.code = d == DUET_DTYPE_I32 || d == DUET_DTYPE_I8 ? kDLInt
             : d == DUET_DTYPE_BF16                    ? kDLBfloat
                                                       : kDLFloat;
    return t;
}

/* The device types whose memory this backend's buffers can be. */
static int device_type_ok(int type)
{
    const char *be = be_name();
    if (strcmp(be, "cpu") == 0) return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost;
    if (strcmp(be, "cuda") == 0) return type == kDLCUDA || type == kDLCUDAManaged;
    if (strcmp(be, "hip") == 0) return type == kDLROCM;
    return 0;
}

static const char *device_types_text(void)
{
    const char *be = be_name();
    if (strcmp(be, "cpu") == 0) return "kDLCPU, kDLCUDAHost or kDLROCMHost";
    if (strcmp(be, "cuda") == 0) return "kDLCUDA or kDLCUDAManaged";
    return "kDLROCM";
}

static DLDevice device_of(const dt_context *ctx)
{
    DLDevice d;
    const char *be = be_name();
    d.device_type = strcmp(be, "cpu") == 0 ? kDLCPU : strcmp(be, "cuda") == 0 ? kDLCUDA : kDLROCM;
    d.device_id = ctx->device;
    return d;
}

/* ---- import ------------------------------------------------------------------------------ */

/* The geometry of t as a matrix: everything but the buffer. Fails naming the field (prefix is
 * "tensor->dl_tensor" or the like). */
static duet_status matrix_of_tensor(const dt_context *ctx, const DLTensor *t, const char *func,
                                    const char *p, duet_matrix *m, size_t *bytes)
{
    memset(m, 0, sizeof *m);
    if (t->ndim != 2 && t->ndim != 3)
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "%s.ndim (%d) is not 2 (a matrix) or 3 (a batch of matrices)", p,
                       (int)t->ndim);
    if (!dtype_from_dl(t->dtype, &m->dtype))
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "%s.dtype (code %u, bits %u, lanes %u) is not a duet dtype (float 16, 32, "
                       "64, bfloat 16, int 8, 32; lanes 1)",
                       p, (unsigned)t->dtype.code, (unsigned)t->dtype.bits,
                       (unsigned)t->dtype.lanes);
    if (!device_type_ok((int)t->device.device_type))
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "%s.device.device_type (%d) is not memory of the %s backend (%s)", p,
                       (int)t->device.device_type, be_name(), device_types_text());
    const int host_type = t->device.device_type == kDLCUDAHost ||
                          t->device.device_type == kDLROCMHost;
    if (!host_type && t->device.device_id != ctx->device)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s.device.device_id (%d) is not the context's device (%d)", p,
                       (int)t->device.device_id, ctx->device);
    if (!t->shape) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s.shape is NULL", p);
    const size_t elem = duet_dtype_size(m->dtype);
    if (t->byte_offset % elem != 0)
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "%s.byte_offset (%llu) is not a multiple of the element size (%zu)", p,
                       (unsigned long long)t->byte_offset, elem);
    const int r = t->ndim - 2, c = t->ndim - 1; /* the row and column dimensions */
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] < 0)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s.shape[%d] (%lld) is negative",
                           p, d, (long long)t->shape[d]);
        if (t->strides && t->strides[d] < 0)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                           "%s.strides[%d] (%lld) is negative", p, d, (long long)t->strides[d]);
    }
    const int64_t rows = t->shape[r], cols = t->shape[c];
    const int64_t batch = t->ndim == 3 ? t->shape[0] : 1;
    if (batch == 0)
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "%s.shape[0] is 0: a batch of no matrices has no duet_matrix form "
                       "(batch_count 0 reads as 1)",
                       p);
    /* Strides of NULL: compact row-major. */
    const int64_t sr = t->strides ? t->strides[r] : cols, sc = t->strides ? t->strides[c] : 1;
    const int64_t sb = t->ndim == 3 ? (t->strides ? t->strides[0] : rows * cols) : 0;
    m->rows = rows;
    m->cols = cols;
    m->batch_count = batch;
    m->batch_stride = batch > 1 ? sb : 0;
    m->offset = (size_t)(t->byte_offset / elem);
    /* A dimension of size 1 has no stride worth the name (frameworks write 1 or anything). */
    const int row_major_inner = cols <= 1 || sc == 1;
    const int col_major_inner = rows <= 1 || sr == 1;
    if (row_major_inner && (rows <= 1 || sr >= cols)) {
        m->layout = DUET_LAYOUT_ROW_MAJOR;
        m->ld = rows <= 1 ? (cols > 0 ? cols : 1) : sr;
    } else if (col_major_inner && (cols <= 1 || sc >= rows)) {
        m->layout = DUET_LAYOUT_COL_MAJOR;
        m->ld = cols <= 1 ? (rows > 0 ? rows : 1) : sc;
    } else if (!row_major_inner && !col_major_inner) {
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "%s.strides[%d] (%lld) and %s.strides[%d] (%lld): neither is 1, and duet "
                       "matrices need an inner stride of 1",
                       p, r, (long long)sr, p, c, (long long)sc);
    } else {
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s.strides[%d] (%lld) is smaller than the %s length (%lld): rows overlap",
                       p, row_major_inner ? r : c, (long long)(row_major_inner ? sr : sc),
                       row_major_inner ? "row" : "column",
                       (long long)(row_major_inner ? cols : rows));
    }
    /* Bytes from data to one past the last element reached (0 for an empty tensor). */
    *bytes = 0;
    if (rows == 0 || cols == 0 || batch == 0) return DUET_SUCCESS;
    const int64_t lines = m->layout == DUET_LAYOUT_ROW_MAJOR ? rows : cols;
    const int64_t len = m->layout == DUET_LAYOUT_ROW_MAJOR ? cols : rows;
    int64_t span, bspan;
    if (!dt_mul_ok(lines - 1, m->ld, &span) || span > INT64_MAX - len ||
        !dt_mul_ok(batch - 1, m->batch_stride, &bspan) || bspan > INT64_MAX - (span + len))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s.shape and %s.strides describe more elements than fit in 64 bits", p,
                       p);
    const uint64_t elems = (uint64_t)(span + len + bspan);
    if (elems > (SIZE_MAX - t->byte_offset) / elem)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "%s.byte_offset (%llu) + the tensor's extent overflows", p,
                       (unsigned long long)t->byte_offset);
    *bytes = (size_t)t->byte_offset + (size_t)elems * elem;
    if (!t->data)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "%s.data is NULL but the tensor has "
                       "elements", p);
    return DUET_SUCCESS;
}

/* ---- the managed tensors duet owns --------------------------------------------------------- */

/* Every managed tensor imported and not yet released, in any context: a tensor imported twice
 * would have its deleter run once per buffer, so a second import while the first one's buffer
 * lives is refused. A small hash set of the tensors' addresses; each entry is also the buffer's
 * release argument. */
typedef struct import_rec {
    void *tensor; /* DLManagedTensor * or DLManagedTensorVersioned * */
    int versioned;
    struct import_rec *next;
} import_rec;

#define IMPORT_BUCKETS 256u
static import_rec *g_imports[IMPORT_BUCKETS];
static pthread_mutex_t g_imports_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned import_bucket(const void *tensor)
{
    const uintptr_t x = (uintptr_t)tensor;
    return (unsigned)((x >> 4) ^ (x >> 12)) % IMPORT_BUCKETS;
}

/* Adds rec unless its tensor is already there (returns 0 then). */
static int imports_add(import_rec *rec)
{
    const unsigned b = import_bucket(rec->tensor);
    pthread_mutex_lock(&g_imports_lock);
    for (const import_rec *r = g_imports[b]; r; r = r->next)
        if (r->tensor == rec->tensor) {
            pthread_mutex_unlock(&g_imports_lock);
            return 0;
        }
    rec->next = g_imports[b];
    g_imports[b] = rec;
    pthread_mutex_unlock(&g_imports_lock);
    return 1;
}

static void imports_remove(const import_rec *rec)
{
    const unsigned b = import_bucket(rec->tensor);
    pthread_mutex_lock(&g_imports_lock);
    for (import_rec **p = &g_imports[b]; *p; p = &(*p)->next)
        if (*p == rec) {
            *p = rec->next;
            break;
        }
    pthread_mutex_unlock(&g_imports_lock);
}

/* The buffer's release: the tensor leaves the set before its deleter runs (which may free it,
 * and after which its address may come back in another tensor). */
static void release_import(void *arg)
{
    import_rec *rec = (import_rec *)arg;
    imports_remove(rec);
    if (rec->versioned) {
        DLManagedTensorVersioned *t = (DLManagedTensorVersioned *)rec->tensor;
        if (t->deleter) t->deleter(t);
    } else {
        DLManagedTensor *t = (DLManagedTensor *)rec->tensor;
        if (t->deleter) t->deleter(t);
    }
    free(rec);
}

static duet_status import_tensor(duet_context *handle, void *tensor, int versioned,
                                 const DLTensor *t, int read_only, const char *func,
                                 const char *prefix, duet_matrix *matrix)
{
    dt_context *ctx = (dt_context *)dt_handle_get(handle, DT_CONTEXT);
    if (!ctx)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, func, "ctx is %s",
                       handle ? "not a live handle (destroyed or never created)" : "NULL");
    if (!matrix) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "matrix is NULL");
    duet_matrix m;
    size_t bytes = 0;
    duet_status st = matrix_of_tensor(ctx, t, func, prefix, &m, &bytes);
    if (st != DUET_SUCCESS) return st;
    import_rec *rec = (import_rec *)calloc(1, sizeof *rec);
    if (!rec) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func, "cannot allocate an import record");
    rec->tensor = tensor;
    rec->versioned = versioned;
    if (!imports_add(rec)) {
        free(rec);
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "tensor is already imported and its buffer is alive: a managed tensor "
                       "is imported once (duet runs its deleter when that buffer is destroyed); "
                       "share the first duet_matrix, or destroy its buffer before importing "
                       "again");
    }
    st = dt_buffer_wrap(ctx, bytes > 0 ? t->data : NULL, bytes, release_import, rec, read_only,
                        func, &m.buffer);
    if (st != DUET_SUCCESS) {
        imports_remove(rec);
        free(rec);
        return st;
    }
    *matrix = m;
    return DUET_SUCCESS;
}

duet_status duet_matrix_from_dlpack(duet_context *ctx, DLManagedTensor *tensor, duet_matrix *matrix)
{
    static const char *fn = "duet_matrix_from_dlpack";
    dt_clear_error();
    if (!tensor) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "tensor is NULL");
    return import_tensor(ctx, tensor, 0, &tensor->dl_tensor, 0, fn, "tensor->dl_tensor", matrix);
}

duet_status duet_matrix_from_dlpack_versioned(duet_context *ctx, DLManagedTensorVersioned *tensor,
                                              duet_matrix *matrix)
{
    static const char *fn = "duet_matrix_from_dlpack_versioned";
    dt_clear_error();
    if (!tensor) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "tensor is NULL");
    if (tensor->version.major != 1)
        return dt_fail(DUET_ERROR_UNSUPPORTED, fn,
                       "tensor->version (%u.%u) is not a DLPack 1.x tensor", tensor->version.major,
                       tensor->version.minor);
    /* A read-only tensor stays read-only: every op that would write its buffer refuses. */
    const int read_only = (tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    return import_tensor(ctx, tensor, 1, &tensor->dl_tensor, read_only, fn, "tensor->dl_tensor",
                         matrix);
}

/* ---- export ------------------------------------------------------------------------------ */

/* One allocation holds the managed tensor and its shape and strides, so the deleter is one
 * free() and needs nothing of duet's (the context may be gone by then). */
typedef struct export_unversioned {
    DLManagedTensor managed;
    int64_t shape[3], strides[3];
} export_unversioned;

typedef struct export_versioned {
    DLManagedTensorVersioned managed;
    int64_t shape[3], strides[3];
} export_versioned;

static void delete_unversioned(DLManagedTensor *self) { free(self); }
static void delete_versioned(DLManagedTensorVersioned *self) { free(self); }

/* Checks matrix as the ops do and fills t (shape and strides point into the given arrays);
 * *read_only says whether the matrix's buffer is read-only. */
static duet_status tensor_of_matrix(const duet_matrix *m, const char *func, DLTensor *t,
                                    int64_t *shape, int64_t *strides, int *read_only)
{
    if (!m) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "matrix is NULL");
    dt_buffer *b = (dt_buffer *)dt_handle_get(m->buffer, DT_BUFFER);
    if (!b)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, func, "matrix->buffer is %s",
                       m->buffer ? "not a live handle (destroyed or never created)" : "NULL");
    const size_t elem = duet_dtype_size(m->dtype);
    if (elem == 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "matrix->dtype (%d) is not a duet_dtype",
                       (int)m->dtype);
    /* The DLPack this build speaks (v0.6) has no type codes for 8-bit floats. */
    if (m->dtype == DUET_DTYPE_F8E4M3 || m->dtype == DUET_DTYPE_F8E5M2)
        return dt_fail(DUET_ERROR_UNSUPPORTED, func,
                       "matrix->dtype %s has no DLPack type code in DLPack %d",
                       duet_dtype_name(m->dtype), DLPACK_VERSION);
    if (m->layout != DUET_LAYOUT_ROW_MAJOR && m->layout != DUET_LAYOUT_COL_MAJOR)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "matrix->layout (%d) is not a duet_layout", (int)m->layout);
    if (m->rows < 0 || m->cols < 0 || m->ld < 0 || m->batch_count < 0 || m->batch_stride < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "matrix has a negative rows, cols, ld, batch_count or batch_stride");
    const int row_major = m->layout == DUET_LAYOUT_ROW_MAJOR;
    const int64_t len = row_major ? m->cols : m->rows, lines = row_major ? m->rows : m->cols;
    const int64_t batch = m->batch_count == 0 ? 1 : m->batch_count;
    const int empty = m->rows == 0 || m->cols == 0;
    if (!empty && m->ld < len)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "matrix->ld (%lld) is smaller than the %s length (%lld)", (long long)m->ld,
                       row_major ? "row" : "column", (long long)len);
    if (m->offset > SIZE_MAX / elem || m->offset * elem > b->bytes)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "matrix->offset (%zu) is past the end of its buffer (%zu bytes)",
                       m->offset, b->bytes);
    if (!empty) {
        int64_t span, bspan;
        if (!dt_mul_ok(lines - 1, m->ld, &span) || span > INT64_MAX - len ||
            !dt_mul_ok(batch - 1, batch > 1 ? m->batch_stride : 0, &bspan) ||
            bspan > INT64_MAX - (span + len) ||
            (uint64_t)(span + len + bspan) > (b->bytes - m->offset * elem) / elem)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                           "matrix reaches past the end of its buffer (%zu bytes)", b->bytes);
    }
    *read_only = b->read_only;
    memset(t, 0, sizeof *t);
    t->data = b->ptr;
    t->device = device_of(b->ctx);
    t->dtype = dtype_to_dl(m->dtype);
    t->byte_offset = (uint64_t)(m->offset * elem);
    const int three = batch > 1;
    t->ndim = three ? 3 : 2;
    int d = 0;
    if (three) {
        shape[d] = batch;
        strides[d++] = m->batch_stride;
    }
    shape[d] = m->rows;
    strides[d++] = row_major ? m->ld : 1;
    shape[d] = m->cols;
    strides[d] = row_major ? 1 : m->ld;
    t->shape = shape;
    t->strides = strides;
    return DUET_SUCCESS;
}

duet_status duet_matrix_to_dlpack(const duet_matrix *matrix, DLManagedTensor **tensor)
{
    static const char *fn = "duet_matrix_to_dlpack";
    dt_clear_error();
    if (!tensor) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "tensor is NULL");
    export_unversioned *x = (export_unversioned *)calloc(1, sizeof *x);
    if (!x) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate a tensor");
    int read_only = 0;
    duet_status st =
        tensor_of_matrix(matrix, fn, &x->managed.dl_tensor, x->shape, x->strides, &read_only);
    /* An unversioned tensor has no flags: its consumer would take the memory as writable. */
    if (st == DUET_SUCCESS && read_only)
        st = dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                     "matrix->buffer is read-only (imported from a DLPack tensor flagged "
                     "DLPACK_FLAG_BITMASK_READ_ONLY) and an unversioned DLManagedTensor cannot "
                     "say so: use duet_matrix_to_dlpack_versioned");
    if (st != DUET_SUCCESS) {
        free(x);
        return st;
    }
    x->managed.manager_ctx = NULL;
    x->managed.deleter = delete_unversioned;
    *tensor = &x->managed;
    return DUET_SUCCESS;
}

duet_status duet_matrix_to_dlpack_versioned(const duet_matrix *matrix,
                                            DLManagedTensorVersioned **tensor)
{
    static const char *fn = "duet_matrix_to_dlpack_versioned";
    dt_clear_error();
    if (!tensor) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "tensor is NULL");
    export_versioned *x = (export_versioned *)calloc(1, sizeof *x);
    if (!x) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate a tensor");
    int read_only = 0;
    duet_status st =
        tensor_of_matrix(matrix, fn, &x->managed.dl_tensor, x->shape, x->strides, &read_only);
    if (st != DUET_SUCCESS) {
        free(x);
        return st;
    }
    x->managed.version.major = 1;
    x->managed.version.minor = 0;
    x->managed.manager_ctx = NULL;
    x->managed.deleter = delete_versioned;
    x->managed.flags = read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    *tensor = &x->managed;
    return DUET_SUCCESS;
}
