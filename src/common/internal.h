/* internal.h - objects, normalized op descriptors and error helpers shared by every backend. */
#ifndef DUET_INTERNAL_H
#define DUET_INTERNAL_H

#include "duet/duet.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------------------------ */

/* Records "func: message" as this thread's last error and returns status (func NULL: the
 * message alone). */
duet_status dt_fail(duet_status status, const char *func, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Clears this thread's last error (every public entry point calls it first). */
void dt_clear_error(void);
/* Sets this thread's last compile log (copied). */
void dt_set_compile_log(const char *log);

/* ---- objects ----------------------------------------------------------------------------- */

typedef struct dt_context {
    int device;
    duet_device_props props;
    void *be;                    /* backend context                          */
    duet_stream *default_stream; /* handle of the default stream             */
    duet_context *self;          /* this context's handle                    */
    struct dt_tuning_set *tuning; /* rows of a tuning file (tuning_file.c);
                                     NULL: the built-in table only            */
} dt_context;

typedef struct dt_buffer {
    dt_context *ctx;
    void *ptr;                   /* device pointer (host pointer on cpu)     */
    size_t bytes;
    int foreign;                 /* duet_buffer_wrap: never freed by duet    */
    void (*release)(void *);     /* if set, called with release_arg when the */
    void *release_arg;           /* buffer goes (an imported DLPack tensor)  */
    int read_only;               /* imported from a DLPack tensor flagged    */
                                 /* read-only: every op that writes a buffer */
                                 /* refuses it (dt_refuse_read_only)         */
} dt_buffer;

/* Device scratch owned by one stream (split-K partial sums, in-place transpose buffers). Work
 * on one stream runs in order, so the stream's queued ops share it safely; it grows to the
 * largest request and is then reused, so ops allocate nothing per call (and stay capturable
 * into graphs once it is large enough). See dt_workspace_reserve. */
typedef struct dt_workspace {
    void *ptr;
    size_t bytes;
    int fixed; /* a window of another workspace (the room past an op's own data in it): never
                  grows, a larger request is DUET_ERROR_OUT_OF_MEMORY                        */
} dt_workspace;

typedef struct dt_stream {
    dt_context *ctx;
    void *be;
    int is_default;
    pthread_mutex_t op_lock; /* held by the common layer around each op's backend call */
    dt_workspace ws;         /* guarded by op_lock                                      */
    dt_workspace epi_ws;     /* duet_gemm_ex's intermediate product (guarded by op_lock):
                                apart from ws so that the GEMM may grow ws meanwhile    */
    dt_workspace f8_ws;      /* an FP8 GEMM's A and B decoded to f16/bf16 (op_lock): apart
                                from ws and epi_ws for the same reason                  */
    int foreign;             /* duet_stream_wrap: the native stream is never destroyed  */
} dt_stream;

typedef struct dt_event {
    dt_context *ctx;
    void *be;
    int recorded;
    int foreign;  /* duet_event_wrap: the native event is never destroyed     */
    int captured; /* last recorded on a stream that was capturing into a graph */
} dt_event;

typedef struct dt_module {
    dt_context *ctx;
    void *be;
    char *log;
} dt_module;

/* A user epilogue (duet_epilogue_fn_create): its compiled module and kernel on the backend. */
typedef struct dt_epilogue_fn {
    dt_context *ctx;
    void *module, *kernel;
    char name[64];
} dt_epilogue_fn;

/* Frees f and its compiled code (duet_epilogue_fn_destroy, context destruction). */
void dt_epilogue_fn_release(dt_epilogue_fn *f);

typedef struct dt_function {
    dt_module *module;
    void *be;
    char name[128];
} dt_function;

/* Frees the host memory allocated and unregisters the host ranges registered through ctx
 * (src/common/host.c); context destroy calls it once the context's work is complete. */
void dt_host_release_context(dt_context *ctx);

/* ---- handle table ------------------------------------------------------------------------ */
/* Handles are (slot, generation, kind) codes, never raw pointers, so a destroyed or forged
 * handle is detected without touching freed memory. */

typedef enum dt_kind {
    DT_CONTEXT = 1,
    DT_BUFFER = 2,
    DT_STREAM = 3,
    DT_EVENT = 4,
    DT_MODULE = 5,
    DT_FUNCTION = 6,
    DT_GROUP = 7, /* owned by no context (api_group.c) */
    DT_EPILOGUE_FN = 8
} dt_kind;

/* Registers obj under kind, owned by owner (a context handle, or NULL for a context).
 * Returns the handle, or NULL when the table cannot grow (out of memory). */
void *dt_handle_new(dt_kind kind, void *obj, const void *owner);
/* The object behind handle if it is live and of kind, else NULL. */
void *dt_handle_get(const void *handle, dt_kind kind);
/* Unregisters handle (its object is the caller's to free). */
void dt_handle_release(const void *handle);
/* Unregisters and returns, one at a time, the live handles of kind owned by owner: start with
 * *cursor = 0 and call until it returns NULL (one pass over the table in all). *obj receives
 * the object. Handles created meanwhile may be missed. */
void *dt_handle_take_owned(const void *owner, dt_kind kind, uint32_t *cursor, void **obj);
/* The same for the live handles of kind whose object match(obj, user) accepts; match runs
 * under the table's lock and must not call into it. */
void *dt_handle_take_matching(dt_kind kind, int (*match)(const void *obj, const void *user),
                              const void *user, uint32_t *cursor, void **obj);

/* Calls fn(obj, user) for each live handle of kind owned by owner (listed first, then called
 * without the table's lock held), stopping at the first non-success status, which it returns.
 * The objects must not be destroyed meanwhile. */
duet_status dt_handle_for_each_owned(const void *owner, dt_kind kind,
                                     duet_status (*fn)(void *obj, void *user), void *user);

/* ---- arithmetic helpers ------------------------------------------------------------------ */

/* Ceil of a / b for a >= 0, b > 0, without the overflow of (a + b - 1) / b. */
static inline int64_t dt_ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* a * b into *out; returns 0 on overflow of int64 (both non-negative). */
static inline int dt_mul_ok(int64_t a, int64_t b, int64_t *out)
{
    if (a != 0 && b > INT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

/* The fields of a matrix operand (a duet_matrix, or a host matrix of a group gemm), checked as
 * every op checks them, with one message each naming func, the operand (name: "A") and its
 * leading dimension (ldname: "lda"). */
typedef struct dt_shape {
    size_t elem;         /* bytes per element                                    */
    int64_t batch, bs;   /* batch_count read as >= 1; the batch stride, 0 for one  */
    int64_t len, lines;  /* contiguous run (row-major: cols) and number of runs   */
    int empty;           /* rows == 0 or cols == 0                                 */
    int row_major;
} dt_shape;
/* dtype, layout, signs, rows x cols x elem without overflow and, when not empty, ld >= len. */
duet_status dt_check_shape(const char *func, const char *name, const char *ldname,
                           duet_dtype dtype, duet_layout layout, int64_t rows, int64_t cols,
                           int64_t ld, int64_t batch_count, int64_t batch_stride, dt_shape *s);
/* The elements a non-empty matrix spans, batches included, into *total: without overflow, and
 * for an output (is_output) with batches that do not overlap. */
duet_status dt_check_span(const char *func, const char *name, const char *ldname, int is_output,
                          int64_t ld, int64_t batch_stride, const dt_shape *s, uint64_t *total);

/* ---- normalized ops ---------------------------------------------------------------------- */

/* A strided view: element (b, i, j) is at base + (b * bs + i * rs + j * cs) * elem bytes.
 * Strides are in elements and never negative. */
typedef struct dt_view {
    void *base;
    int64_t rs, cs, bs;
} dt_view;

/* A grid of f32 scales over a rows x cols (x batch) index space, one value per block of
 * 2^rshift rows and 2^cshift columns: the value of element (b, r, c) is
 * p[b * bs + (r >> rshift) * rs + (c >> cshift) * cs] (strides in elements; 0 broadcasts).
 * p NULL: none. The block scales of 8-bit float GEMM operands (duet_gemm_ex's epi.scale_a and
 * scale_b in their block shapes) are grids over (row or column of C, k) with cshift 7; a
 * per-tensor scale beside one is a grid of strides 0. */
typedef struct dt_scale_grid {
    const float *p;
    int64_t rs, cs, bs;
    int rshift, cshift;
} dt_scale_grid;

/* C(m x n) = alpha * A(m x k) * B(k x n) + beta * C, op() already folded into the strides.
 * The common layer arranges c.cs == 1 whenever C has a unit stride at all (by solving the
 * transposed problem C^T = B^T A^T when C is column-major). For a C of f16 or bf16 the backend
 * also receives k == 0 (alpha == 0 or an empty inner dimension: C = beta * C, A and B unread);
 * for every other C dtype those cases never reach it. */
typedef struct dt_gemm {
    dt_workspace *ws;      /* the stream's scratch (dt_workspace_reserve)               */
    duet_dtype dtype;      /* A's and B's dtype                                         */
    duet_dtype b_dtype;    /* for 8-bit float A, B's dtype (e4m3 and e5m2 mix); else unused */
    duet_dtype c_dtype;    /* C's dtype: dtype, or f32 for f16/bf16 inputs, i32 for i8,
                              f32, f16 or bf16 for 8-bit floats                          */
    duet_math_mode math;   /* f32 inputs: DEFAULT, TF32 or 3XTF32; DEFAULT otherwise    */
    int64_t m, n, k, batch;
    double alpha, beta;
    dt_view a, b, c;
    /* duet_gemm_ex's epilogue, applied by the GEMM's own store (NULL: none). Set only where
     * be_gemm_fuses_epilogue said so; then c is D (c_dtype D's dtype), beta is 0 (the
     * epilogue's C and beta are its own) and epi is turned like g. */
    const struct dt_epilogue *epi;
    /* Block scales of 8-bit float A and B (sa.p NULL: none; then sb.p is NULL too): sa over
     * (row i of C, k), sb over (column j of C, k), both with cshift 7. The product is
     * C(i, j) = sum over k blocks q of P_q(i, j) * (sa(i, 128 q) * sb(j, 128 q)), P_q the sum of
     * the block's 128 products (duet.h gives the roundings). Exchanged with A and B in the
     * column-major turn. */
    dt_scale_grid sa, sb;
} dt_gemm;

/* out(i, j) = in(i, j) over rows x cols x batch: a strided copy. duet_transpose arrives here
 * with in's strides swapped, so the kernels see one op that covers transposes and copies. */
/*
 * in_place (duet_transpose with in and out the same storage): in.base == out.base, and the
 * common layer has arranged out.cs == 1 and in.rs == 1, so the stored source is cols lines of
 * rows elements at stride in.cs and the result is rows lines of cols elements at stride out.rs:
 * either square (rows == cols, in.cs == out.rs, padding untouched) or packed rectangular
 * (in.cs == rows, out.rs == cols); in.bs == out.bs. The plan is AUTO. Scratch comes from ws
 * only, O(max(rows, cols)) elements per matrix, reported in info->workspace_bytes.
 */
typedef struct dt_copy2d {
    dt_workspace *ws;         /* the stream's scratch (dt_workspace_reserve) */
    size_t elem;              /* 1, 2, 4 or 8 */
    int64_t rows, cols, batch;
    dt_view in, out;
    int in_place;             /* 1: in and out are one storage (see above) */
} dt_copy2d;

typedef enum dt_ew_kind { DT_EW_SCALE = 0, DT_EW_ADD = 1, DT_EW_FILL = 2 } dt_ew_kind;

/* x = alpha * x | c = alpha * a + beta * b | x = value, over rows x cols x batch.
 * For scale and fill the operand is c. value holds the fill value (cast to dtype by the
 * backend). The common layer arranges c.cs == 1 whenever possible. */
typedef struct dt_elementwise {
    dt_ew_kind kind;
    duet_dtype dtype;
    int64_t rows, cols, batch;
    double alpha, beta, value;
    dt_view a, b, c;
} dt_elementwise;

/* dst = convert(src [* scale]) over rows x cols x batch (duet_convert; duet.h gives the
 * semantics), rows, cols and batch > 0. src and dst each f32, f16, bf16, f8e4m3 or f8e5m2.
 * scale: NULL or the device address of one f32 read when the op runs; amax: NULL or the device
 * address of one f32, written with max |src|. saturate: 1 for DUET_CONVERT_SATURATE. The
 * common layer arranges dst.cs == 1 whenever dst has a unit stride at all; src.bs may be 0
 * (one src for every batch). */
typedef struct dt_convert {
    duet_dtype src_dtype, dst_dtype;
    int64_t rows, cols, batch;
    int saturate;
    dt_view src, dst;
    const void *scale;
    void *amax;
    /* NULL p, or a scale per element instead of scale (never both): dst(b, i, j) =
     * convert(src(b, i, j) * bscale(b, i, j)), one f32 rounding of the product. */
    dt_scale_grid bscale;
} dt_convert;

/* One operand of a GEMM epilogue pass: on = 0 when absent. Every operand is seen as an
 * m x n x batch view; a vector or a batch-broadcast operand has stride 0 along the dimension
 * it is broadcast over (a 1 x n bias: rs == 0; an m x 1 scale: cs == 0; one batch: bs == 0). */
typedef struct dt_epi_operand {
    int on;
    duet_dtype dtype;
    dt_view v;
} dt_epi_operand;

/* The epilogue of duet_gemm_ex (duet.h gives the semantics) over the m x n x batch outputs,
 * in the math type math (F32, F64 or I32):
 *   x = t * row_scale * col_scale + beta * c + bias; aux = x; d = act(x) + residual,
 * with t = 0 when t is off (alpha == 0 or K == 0) and the beta * c term only when c is on.
 * t, when on, has the math type's dtype and holds alpha * op(A) * op(B) as the GEMM wrote it
 * (it may be d itself: then read before d is written, element by element). c may be d itself
 * (in place). The common layer arranges d.v.cs == 1 whenever d has a unit stride at all. */
typedef struct dt_epilogue {
    duet_dtype math;
    int64_t m, n, batch;
    duet_activation act;
    double lo, hi;   /* CLAMP's bounds */
    double beta;
    dt_epi_operand t, c, bias, row_scale, col_scale, residual, aux, d;
    const dt_epilogue_fn *user; /* NULL, or D = user(t, beta * c, row, col, user_params) */
    void *user_params;
} dt_epilogue;

/* e seen transposed (D^T = ...): m and n, and every operand's row and column strides, swapped. */
void dt_epilogue_turn(dt_epilogue *e);

/* Launches e's user epilogue (e->user) on the backend's stream: D from t and C, as
 * duet_epilogue_fn_create says. turned: e is D^T's view (m and n swapped); rows: D's M, by which
 * rows count down the batches. Names the kernel in info->epilogue and counts its launch. */
duet_status dt_user_epilogue_run(dt_context *ctx, void *stream, const dt_epilogue *e, int turned,
                                 int64_t rows, duet_launch_info *info);

/* The resolved algorithm and, for every algorithm but AUTO, the launch configuration the
 * common layer computed and validated against the device (the backend launches exactly it).
 * For AUTO the backend picks its own configuration from the tuning tables. */
typedef struct dt_plan {
    duet_algorithm algo;
    int tile;
    duet_launch_config cfg;
} dt_plan;

/* Makes ws hold at least bytes of device memory of ctx and returns it in *ptr. Growing waits
 * for the stream's queued work (which may still use the old block), frees the old block and
 * allocates the new one (rounded up, so a series of growing requests allocates rarely); a
 * large enough workspace returns at once. func names the op in errors (out of memory). Ops
 * call it from the backend while the common layer holds the stream's op lock, so two threads
 * that share a stream cannot free each other's scratch. */
duet_status dt_workspace_reserve(dt_context *ctx, void *be_stream, dt_workspace *ws, size_t bytes,
                                 const char *func, void **ptr);
/* Frees ws (the stream's work must be complete). */
void dt_workspace_free(dt_context *ctx, dt_workspace *ws);

/* A non-owning buffer over [ptr, ptr + bytes) of ctx (checked as duet_buffer_wrap checks it);
 * release(release_arg), if release is not NULL, runs when the buffer is destroyed (by
 * duet_buffer_destroy or with its context), never on failure. read_only: no op may write it. */
duet_status dt_buffer_wrap(dt_context *ctx, void *ptr, size_t bytes, void (*release)(void *),
                           void *release_arg, int read_only, const char *func, duet_buffer **out);
/* DUET_ERROR_INVALID_ARGUMENT naming func and argname ("C.buffer", "dst") when b is read-only;
 * every entry point that writes a buffer calls it before queuing anything. */
duet_status dt_refuse_read_only(const dt_buffer *b, const char *func, const char *argname);
/* Runs a destroyed buffer's release callback (if any) and frees the object. */
void dt_buffer_release(dt_buffer *b);

/* DUET_ERROR_INVALID_ARGUMENT naming func when s is capturing into a graph: for calls that
 * would block the host on it (and so invalidate the capture). */
duet_status dt_refuse_capture(const dt_stream *s, const char *func);

/* Fills info (if not NULL): kernel name "<base>_<dtype or elem>", algorithm, config. */
void dt_fill_info(duet_launch_info *info, const char *kernel, const dt_plan *plan, int launches);

/* Folds a grid into the device's limits: y and z are clamped to max_grid_dims (kernels loop
 * over the rest with a stride of gridDim). */
void dt_fold_grid(const duet_device_props *props, duet_dim3 *grid);

/* Validates cfg against props; func names the caller in the message. */
duet_status dt_validate_config(const duet_device_props *props, const duet_launch_config *cfg,
                               const char *func);

#ifdef __cplusplus
}
#endif

#endif /* DUET_INTERNAL_H */
