/* duet.h - the one public header of duet: portable GPU compute (CUDA, HIP, host) from C. */
#ifndef DUET_DUET_H
#define DUET_DUET_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(DUET_SHARED)
#if defined(DUET_BUILDING)
#define DUET_API __declspec(dllexport)
#else
#define DUET_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && defined(DUET_BUILDING)
#define DUET_API __attribute__((visibility("default")))
#else
#define DUET_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Version                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* The release this header belongs to. CMake's project(VERSION) must say the same (the build
 * refuses to configure otherwise). Before 1.0 a new minor version may break the API and ABI:
 * the shared library's SONAME is libduet.so.MAJOR.MINOR (docs/api.md, CHANGELOG.md). */
#define DUET_VERSION_MAJOR 0
#define DUET_VERSION_MINOR 2
#define DUET_VERSION_PATCH 0
/* "MAJOR.MINOR.PATCH" of the three macros above. */
#define DUET_VERSION_STRING "0.2.0"
/* One integer that compares in release order: 10000 * major + 100 * minor + patch. */
#define DUET_VERSION (DUET_VERSION_MAJOR * 10000 + DUET_VERSION_MINOR * 100 + DUET_VERSION_PATCH)

/* The version of the library actually linked (may differ from DUET_VERSION of the header). */
DUET_API int duet_version(void);
/* The linked library's version and backend as text: "MAJOR.MINOR.PATCH (BACKEND)", e.g.
 * "0.2.0 (cuda)", where BACKEND is duet_backend_name(). A constant string; never NULL. */
DUET_API const char *duet_version_string(void);
/* "cpu", "cuda" or "hip": the backend this library was built with. */
DUET_API const char *duet_backend_name(void);

/* ------------------------------------------------------------------------------------------ */
/* Status and errors                                                                           */
/* ------------------------------------------------------------------------------------------ */

typedef enum duet_status {
    DUET_SUCCESS = 0,
    DUET_ERROR_INVALID_ARGUMENT = 1, /* a value is out of range, inconsistent or NULL        */
    DUET_ERROR_INVALID_HANDLE = 2,   /* a handle is NULL, destroyed or never created          */
    DUET_ERROR_OUT_OF_MEMORY = 3,    /* device or host allocation failed; nothing leaked     */
    DUET_ERROR_NO_DEVICE = 4,        /* no device or driver for the built backend            */
    DUET_ERROR_UNSUPPORTED = 5,      /* valid request this backend/op/dtype does not do      */
    DUET_ERROR_LAUNCH_FAILED = 6,    /* a kernel launch was rejected or failed               */
    DUET_ERROR_BACKEND = 7,          /* any other runtime error, named in the message        */
    DUET_ERROR_COMPILE = 8,          /* runtime compilation failed; see the compile log      */
    DUET_ERROR_DEVICE_LOST = 9,      /* a sticky device error: the context is unusable       */
    DUET_ERROR_NOT_READY = 10        /* an event or stream has not completed yet             */
} duet_status;

/* A constant English name for a status ("invalid argument"); never NULL. */
DUET_API const char *duet_status_string(duet_status status);

/* The message of the last failing duet call on this thread, naming the function, the argument
 * and the values, e.g. "duet_gemm: lda (3) is smaller than the row length of A (4)".
 * Empty string when the last call on this thread succeeded. Valid until the next duet call on
 * this thread. */
DUET_API const char *duet_last_error(void);

/* ------------------------------------------------------------------------------------------ */
/* Handles (opaque; NULL or destroyed handles are reported as DUET_ERROR_INVALID_HANDLE)       */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet_context duet_context;
typedef struct duet_buffer duet_buffer;
typedef struct duet_stream duet_stream;
typedef struct duet_event duet_event;
typedef struct duet_module duet_module;
typedef struct duet_function duet_function;
typedef struct duet_epilogue_fn duet_epilogue_fn;

/* ------------------------------------------------------------------------------------------ */
/* Devices and contexts                                                                        */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet_device_props {
    char name[256];
    char arch[32];                  /* "sm_90", "gfx90a", "host"                            */
    int compute_units;              /* SMs, CUs, or host cores                              */
    int warp_size;                  /* 32 on NVIDIA, 64 or 32 on AMD                        */
    int max_threads_per_block;
    int max_block_dims[3];
    int64_t max_grid_dims[3];
    size_t shared_mem_per_block;    /* without opt-in                                       */
    size_t shared_mem_per_block_optin; /* the most a kernel may request                     */
    size_t global_mem_bytes;
    int capability_major;           /* CUDA compute capability or gfx major; 0 on host      */
    int capability_minor;
} duet_device_props;

/* Number of devices of the built backend (the cpu backend reports exactly one). A machine
 * without a device or driver gives DUET_ERROR_NO_DEVICE and *count = 0. */
DUET_API duet_status duet_device_count(int *count);
DUET_API duet_status duet_device_get_props(int device, duet_device_props *props);

/* Handles of two contexts never mix in one call (DUET_ERROR_INVALID_ARGUMENT).
 * A context owns everything created from it; destroying it releases its buffers, streams,
 * events and modules and invalidates their handles. A context may be used from several host
 * threads at once; give each thread its own stream. */
DUET_API duet_status duet_context_create(int device, duet_context **ctx);
DUET_API duet_status duet_context_destroy(duet_context *ctx);
DUET_API duet_status duet_context_get_props(const duet_context *ctx, duet_device_props *props);
/* Where the context's AUTO tuning rows come from (docs/tuning.md): "builtin" (no tuning file),
 * "file:PATH (N rows for ARCH)", or "builtin: REASON" when a tuning file was named or found
 * but not used (missing, malformed, no rows for this device). *text stays valid until the
 * context is destroyed. A bad tuning file never fails duet_context_create. */
DUET_API duet_status duet_context_tuning_source(const duet_context *ctx, const char **text);
/* The context's default stream (not to be destroyed). */
DUET_API duet_status duet_context_default_stream(duet_context *ctx, duet_stream **stream);
/* Waits for all work of the context. */
DUET_API duet_status duet_context_synchronize(duet_context *ctx);

/* ------------------------------------------------------------------------------------------ */
/* Buffers (device memory) and host memory                                                     */
/* ------------------------------------------------------------------------------------------ */

/* bytes may be 0 (an empty buffer). */
DUET_API duet_status duet_buffer_create(duet_context *ctx, size_t bytes, duet_buffer **buf);
DUET_API duet_status duet_buffer_destroy(duet_buffer *buf);
DUET_API duet_status duet_buffer_size(const duet_buffer *buf, size_t *bytes);

/* Copies. stream may be NULL: the buffer's context's default stream. Every range is checked
 * against the buffer's size, with no overflow, before anything is queued. A read-only buffer
 * (a DLPack import flagged read-only, duet_dlpack.h) is refused as the destination of every
 * call that writes a buffer (copies, memset, ops' outputs): DUET_ERROR_INVALID_ARGUMENT.
 * The plain forms return when the copy has completed (they wait on the stream). The _async
 * forms only queue the copy; the host memory must stay valid until the stream is synchronized
 * (use pinned or registered host memory for copies that overlap with host work). */
DUET_API duet_status duet_buffer_write(duet_stream *stream, duet_buffer *dst, size_t dst_offset,
                                       const void *src, size_t bytes);
DUET_API duet_status duet_buffer_read(duet_stream *stream, const duet_buffer *src,
                                      size_t src_offset, void *dst, size_t bytes);
DUET_API duet_status duet_buffer_write_async(duet_stream *stream, duet_buffer *dst,
                                             size_t dst_offset, const void *src, size_t bytes);
DUET_API duet_status duet_buffer_read_async(duet_stream *stream, const duet_buffer *src,
                                            size_t src_offset, void *dst, size_t bytes);
/* Device to device; the two ranges may be in one buffer but must not overlap. Asynchronous. */
DUET_API duet_status duet_buffer_copy(duet_stream *stream, duet_buffer *dst, size_t dst_offset,
                                      const duet_buffer *src, size_t src_offset, size_t bytes);
/* Between buffers of two contexts, which may be on different devices or on the same one (the
 * same context is accepted too: then it is duet_buffer_copy). stream belongs to dst's context
 * (NULL: dst's context's default stream); the copy is queued there and is asynchronous. Between
 * devices it is a peer copy: direct where the two devices can reach each other (peer access is
 * enabled once per pair of devices, on first use), staged through host memory by the runtime
 * otherwise. The copy is ordered after earlier work on stream only: work of src's context that
 * writes src must be complete or ordered before it (duet_event_record on src's stream, then
 * duet_stream_wait_event on stream), and src must not be written again, nor dst read from
 * another context, before the copy completes. Ranges are checked as in duet_buffer_copy; the
 * two ranges must not overlap in memory (two contexts may wrap the same memory). */
DUET_API duet_status duet_buffer_copy_peer(duet_stream *stream, duet_buffer *dst,
                                           size_t dst_offset, const duet_buffer *src,
                                           size_t src_offset, size_t bytes);
/* Sets bytes to value, which is a byte: 0..255 (anything else is DUET_ERROR_INVALID_ARGUMENT,
 * not cut to its low 8 bits). Asynchronous. */
DUET_API duet_status duet_buffer_memset(duet_stream *stream, duet_buffer *buf, size_t offset,
                                        int value, size_t bytes);

/* Page-locked host memory for fast and truly asynchronous copies. bytes 0, and freeing memory
 * that duet_host_alloc of this context did not return, are DUET_ERROR_INVALID_ARGUMENT. */
DUET_API duet_status duet_host_alloc(duet_context *ctx, size_t bytes, void **ptr);
DUET_API duet_status duet_host_free(duet_context *ctx, void *ptr);
/* Pins an existing host range (numba.roc's roc.register); unregister before freeing it.
 * Registering a range twice, or unregistering a pointer that does not start a registered
 * range, is DUET_ERROR_INVALID_ARGUMENT. */
DUET_API duet_status duet_host_register(duet_context *ctx, void *ptr, size_t bytes);
DUET_API duet_status duet_host_unregister(duet_context *ctx, void *ptr);

/* ------------------------------------------------------------------------------------------ */
/* Streams and events                                                                          */
/* ------------------------------------------------------------------------------------------ */

DUET_API duet_status duet_stream_create(duet_context *ctx, duet_stream **stream);
/* Waits for the stream's work, then releases it. The default stream cannot be destroyed. */
DUET_API duet_status duet_stream_destroy(duet_stream *stream);
DUET_API duet_status duet_stream_synchronize(duet_stream *stream);

DUET_API duet_status duet_event_create(duet_context *ctx, duet_event **event);
DUET_API duet_status duet_event_destroy(duet_event *event);
/* stream may be NULL (the event's context's default stream). */
DUET_API duet_status duet_event_record(duet_event *event, duet_stream *stream);
DUET_API duet_status duet_event_synchronize(duet_event *event);
/* Never waits: DUET_SUCCESS when the event's recorded work is complete (or it was never
 * recorded), DUET_ERROR_NOT_READY while it is not. */
DUET_API duet_status duet_event_query(duet_event *event);
/* Both events must have been recorded and completed (DUET_ERROR_NOT_READY otherwise). */
DUET_API duet_status duet_event_elapsed_ms(const duet_event *start, const duet_event *stop,
                                           float *ms);

/* Makes work queued on stream after this call wait until event's recorded work is complete,
 * without blocking the host. event may belong to any context, on any device (the way to order
 * work across contexts and devices); an event never recorded is complete. stream may not be
 * NULL (it names the context that waits). */
DUET_API duet_status duet_stream_wait_event(duet_stream *stream, duet_event *event);

typedef struct duet_profile_result {
    double min_ms, median_ms, mean_ms, max_ms;
    int iters;
} duet_profile_result;

/* The most iterations one duet_profile call takes: the exact median keeps every sample. */
#define DUET_PROFILE_MAX_ITERS (1 << 20)

/* Runs fn(user) warmup times, then iters times, each timed with events on stream (NULL: the
 * default stream of ctx); fn enqueues its work on that stream. A non-success status from fn
 * stops the profile and is returned. 1 <= iters <= DUET_PROFILE_MAX_ITERS, warmup >= 0. */
typedef duet_status (*duet_profile_fn)(void *user);
DUET_API duet_status duet_profile(duet_context *ctx, duet_stream *stream, duet_profile_fn fn,
                                  void *user, int warmup, int iters, duet_profile_result *result);

/* ------------------------------------------------------------------------------------------ */
/* Launch configurations                                                                       */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet_dim3 {
    uint32_t x, y, z;
} duet_dim3;

typedef struct duet_launch_config {
    duet_dim3 grid;       /* blocks per grid                                                 */
    duet_dim3 block;      /* threads per block                                               */
    size_t shared_bytes;  /* dynamic shared memory per block                                 */
} duet_launch_config;

/* grid.x = ceil(n / threads_per_block); the seeds' blockspergrid = ceil(n / tpb). n == 0 gives
 * grid.x == 0 (nothing to launch; duet_launch_config_validate rejects it). More than 2^31 - 1
 * blocks along an axis is DUET_ERROR_INVALID_ARGUMENT (no GPU takes that many). */
DUET_API duet_status duet_launch_config_1d(int64_t n, uint32_t threads_per_block,
                                           duet_launch_config *config);
/* A 2D config covering nx columns (x) by ny rows (y) with bx x by threads per block. */
DUET_API duet_status duet_launch_config_2d(int64_t nx, int64_t ny, uint32_t bx, uint32_t by,
                                           duet_launch_config *config);
/* Checks a config against the context's device limits (threads per block, block and grid
 * dimensions, shared memory) and says which limit is passed. */
DUET_API duet_status duet_launch_config_validate(const duet_context *ctx,
                                                 const duet_launch_config *config);

/* ------------------------------------------------------------------------------------------ */
/* Matrices                                                                                    */
/* ------------------------------------------------------------------------------------------ */

typedef enum duet_dtype {
    DUET_DTYPE_F32 = 0,
    DUET_DTYPE_F64 = 1,
    DUET_DTYPE_I32 = 2,
    DUET_DTYPE_F16 = 3,
    DUET_DTYPE_BF16 = 4,
    DUET_DTYPE_I8 = 5,
    /* OCP 8-bit floats (OFP8). Storage and duet_convert take them everywhere; duet_gemm takes
     * them for A and B (see its table); other ops answer DUET_ERROR_UNSUPPORTED. */
    DUET_DTYPE_F8E4M3 = 6, /* e4m3 "fn": 1 sign, 4 exponent (bias 7), 3 mantissa bits; no
                              infinities; NaN is S.1111.111; largest finite 448, smallest
                              subnormal 2^-9                                               */
    DUET_DTYPE_F8E5M2 = 7  /* e5m2: 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like
                              with +-inf (S.11111.00) and NaN; largest finite 57344, smallest
                              subnormal 2^-16                                              */
} duet_dtype;

/* Bytes per element, 0 for an invalid dtype. */
DUET_API size_t duet_dtype_size(duet_dtype dtype);
DUET_API const char *duet_dtype_name(duet_dtype dtype);

typedef enum duet_layout {
    DUET_LAYOUT_ROW_MAJOR = 0, /* element (i, j) at i * ld + j */
    DUET_LAYOUT_COL_MAJOR = 1  /* element (i, j) at j * ld + i */
} duet_layout;

typedef enum duet_op {
    DUET_OP_N = 0, /* use the matrix as stored */
    DUET_OP_T = 1  /* use its transpose        */
} duet_op;

/* A (batch of) matrices in a buffer. Element (b, i, j) lives at element index
 * offset + b * batch_stride + (row-major ? i * ld + j : j * ld + i), in units of the dtype.
 * batch_count 0 is read as 1. ld must be >= cols (row-major) or >= rows (col-major) when the
 * matrix is not empty. */
typedef struct duet_matrix {
    duet_buffer *buffer;
    size_t offset;        /* elements */
    int64_t rows;
    int64_t cols;
    int64_t ld;           /* elements */
    duet_dtype dtype;
    duet_layout layout;
    int64_t batch_count;
    int64_t batch_stride; /* elements; 0 broadcasts one matrix over the batch (inputs only) */
} duet_matrix;

/* A packed (ld = row length) single matrix. */
DUET_API duet_matrix duet_matrix_make(duet_buffer *buffer, duet_dtype dtype, duet_layout layout,
                                      int64_t rows, int64_t cols);

/* ------------------------------------------------------------------------------------------ */
/* Algorithms and options                                                                      */
/* ------------------------------------------------------------------------------------------ */

typedef enum duet_algorithm {
    DUET_ALGO_AUTO = 0,        /* the fastest kernel duet has for the device              */
    DUET_ALGO_NAIVE = 1,       /* one thread per output, global memory only (the seeds)   */
    DUET_ALGO_TILED = 2,       /* shared-memory tiles of tile x tile, barriers around use */
    DUET_ALGO_TILED_PADDED = 3,/* transpose only: 32x8 threads, +1 column (no bank clash) */
    DUET_ALGO_GRID_STRIDE = 4  /* any grid, each thread strides over the data             */
} duet_algorithm;

DUET_API const char *duet_algorithm_name(duet_algorithm algorithm);

/* How a GEMM may use matrix (tensor) cores. Only gemm takes a mode other than DEFAULT: TF32
 * and 3XTF32 with f32 A and B, FAST_ACCUM with 8-bit float A and B; any other op, dtype or
 * pairing with a non-zero mode is DUET_ERROR_INVALID_ARGUMENT. A device or backend without the
 * instructions (the cpu backend, AMD GPUs, NVIDIA GPUs before sm_80 for TF32, before sm_90 for
 * 8-bit floats) computes the mode's GEMM exactly (f32 accumulation) and reports
 * DUET_MATH_DEFAULT in duet_launch_info.math: a mode never fails for want of hardware. */
typedef enum duet_math_mode {
    DUET_MATH_DEFAULT = 0,   /* the dtype's own IEEE arithmetic (f32 FMA): the exact mode;
                                8-bit floats: see duet_gemm's accuracy note               */
    DUET_MATH_TF32 = 1,      /* one TF32 pass: inputs rounded to 10-bit mantissas (about 1e-3
                                relative per product), f32 accumulation                      */
    DUET_MATH_3XTF32 = 2,    /* f32-accurate: each input split into a TF32 high part and a TF32
                                residual, products big*big + big*small + small*big, f32
                                accumulation; error comparable to exact f32 GEMM             */
    DUET_MATH_FAST_ACCUM = 3 /* 8-bit floats: the whole of k summed in the FP8 tensor core's
                              accumulator (about 13 fraction bits at each of its k/32
                              steps; no f32 additions between), like cuBLASLt's FAST_ACCUM:
                              up to 1.2x faster on Hopper, about 30x the default's error at
                              k of thousands                                                */
} duet_math_mode;

DUET_API const char *duet_math_mode_name(duet_math_mode mode);

/* What an op launched, for teaching and tuning. */
typedef struct duet_launch_info {
    char kernel[64];           /* kernel name, e.g. "gemm_tiled_f32"                      */
    duet_algorithm algorithm;  /* used: AUTO for duet's tuned kernels, else the seed one  */
    duet_launch_config config; /* grid, block, dynamic shared bytes of the (last) launch  */
    int tile;                  /* the tile edge, 0 where none                             */
    int launches;              /* kernel launches the op made (0 for an empty op)         */
    duet_math_mode math;       /* gemm: the math mode that ran (DEFAULT where the device
                                  has no TF32 instructions or the op is not f32 gemm)     */
    size_t workspace_bytes;    /* scratch the op used from its stream's workspace (an
                                  in-place rectangular transpose; a streamed 1-byte
                                  transpose on the cpu backend; a GEMM that copied its
                                  operands into aligned rows first); 0 where none         */
    char tuning[32];           /* the tuning row an AUTO kernel took: "file:sm_90" (a
                                  tuning file), "builtin:sm_90", "builtin:default"; "-"
                                  where no tuning row chose the kernel (docs/tuning.md)   */
    char epilogue[48];         /* duet_gemm_ex: the epilogue kernel that ran after the
                                  GEMM, e.g. "gemm_epilogue_f32_bf16" (counted in
                                  launches; kernel, config, tile and tuning describe the
                                  GEMM), or "fused_gemm_epilogue_f32_bf16" when the GEMM
                                  kernel applied it in its store; "" where none ran      */
    char prologue[48];         /* gemm with 8-bit float A and B: the passes that decoded
                                  them before the GEMM, e.g.
                                  "convert_f8e4m3_f16,convert_f8e5m2_f16" (counted in
                                  launches and workspace_bytes); "" where none ran       */
} duet_launch_info;

/* Options common to every op. Zero-initialise ({0}) for the defaults; NULL means defaults. */
typedef struct duet_op_options {
    duet_algorithm algorithm;
    int tile;                  /* TILED: 1..32 (0: 16 for gemm, 32 for transpose)         */
    duet_launch_config launch; /* NAIVE: block (0: default); GRID_STRIDE: grid and block  */
    duet_launch_info *info;    /* if not NULL, filled with what was launched              */
    duet_math_mode math;       /* gemm: TF32/3XTF32 for f32 A and B, FAST_ACCUM for 8-bit
                                  float A and B; 0 (DEFAULT) elsewhere                   */
} duet_op_options;

/* ------------------------------------------------------------------------------------------ */
/* Ops (asynchronous on stream; stream NULL = the default stream of the output's context)      */
/* ------------------------------------------------------------------------------------------ */

/* C = alpha * op(A) * op(B) + beta * C with BLAS semantics: beta == 0 never reads C, alpha == 0
 * never reads A or B, K == 0 gives C = beta * C, M == 0 or N == 0 does nothing. Layouts are
 * independent. C may not overlap A or B. Batches: C.batch_count matrices; A and B have the same
 * batch_count (or 1 with batch_stride ignored: broadcast).
 *
 * Supported dtypes (A and B share one dtype, except that two 8-bit floats may differ):
 *
 *   A, B   C            products and sums       alpha, beta            options.math
 *   f32    f32          f32                     f32                    DEFAULT, TF32, 3XTF32
 *   f64    f64          f64                     f64                    DEFAULT
 *   i32    i32          i32 modulo 2^32         integers in i32 range  DEFAULT
 *   f16    f16 or f32   f32 (products exact)    f32                    DEFAULT
 *   bf16   bf16 or f32  f32 (products exact)    f32                    DEFAULT
 *   i8     i32          i32 modulo 2^32         integers in i32 range  DEFAULT
 *   f8e4m3 f32, f16     f32 (products exact;    f32                    DEFAULT, FAST_ACCUM
 *   f8e5m2   or bf16    Hopper: see below)      (A and B: either one each, e4m3 x e5m2 too)
 *
 * For f16, bf16 and the 8-bit floats, C = alpha * acc + beta * C is evaluated in f32 and rounded
 * once to C's dtype (round to nearest even; overflow gives inf, NaN propagates). A and B of
 * different dtypes (other than two 8-bit floats) are DUET_ERROR_INVALID_ARGUMENT; any other
 * combination outside the table is DUET_ERROR_UNSUPPORTED. Both messages name the three dtypes.
 *
 * 8-bit float A and B. On Hopper (sm_90) the FP8 tensor cores multiply them (wgmma, e4m3 and
 * e5m2 in any pairing), reading K-major operands: A or B stored otherwise (or off 16-byte
 * boundaries) is first copied K-major into the stream's workspace (duet_launch_info.kernel ends
 * in "_packed"; launches and workspace_bytes count the copies). The tensor core adds each
 * instruction's 32 exact products to its running sum keeping about 13 fraction bits of the
 * largest; by default duet starts that sum afresh every 128 values of k and adds the pieces in
 * f32, so |C - exact| <= about 2^-10 * sum |a||b| (measured at k = 4096-16384: 1e-5 of it)
 * plus the f32 sum's k * 2^-24 * sum |a||b| and the rounding to C; DUET_MATH_FAST_ACCUM sums
 * all of k in the tensor core (measured: 3e-4 of sum |a||b|). A narrow C (at most 16 columns,
 * or 16 rows) whose wide operand is K-major on 16-byte boundaries runs on NVIDIA sm_89 and
 * newer (Ada, Hopper) on the memory-bound kernel with mma.sync FP8 instructions instead
 * ("gemm_skinny_kmajor_mma_n<8|16>_<pair>_<C>", the pair of the kernel's A and B after the
 * transposition a narrow m takes): each instruction pair's 64 products is summed from zero and
 * added in f32, in both math modes (info.math says DEFAULT). Every other backend and device
 * decodes A and B exactly (every e4m3 and e5m2 value is an f16 and a bf16 value) into packed
 * f16 (bf16 for a C of bf16) in a per-stream workspace, two duet_convert passes named by
 * duet_launch_info.prologue, and runs the 16-bit GEMM on them: the error is then that of an f32
 * accumulation of exact products, |C - exact| <= about k * 2^-24 * sum |a||b| plus the final
 * rounding to C. Per-tensor scales and block scales (1 x 128 for A, 128 x 128 for B) are
 * duet_gemm_ex's epi.scale_a / scale_b. The sm_89 mma FP8 instructions for other than a narrow
 * C and MI300 MFMA FP8 are not there yet. Like any growing workspace, a stream capturing into a
 * graph needs one uncaptured run of the same shapes first. */
DUET_API duet_status duet_gemm(duet_stream *stream, duet_op op_a, duet_op op_b, double alpha,
                               const duet_matrix *a, const duet_matrix *b, double beta,
                               duet_matrix *c, const duet_op_options *options);

/* The activation of a GEMM epilogue (duet_gemm_epilogue.act). x is the pre-activation value in
 * the epilogue's math type (f32 or f64; see duet_gemm_ex); NaN in gives NaN out for every one.
 *   NONE        x
 *   RELU        x > 0 ? x : 0 (NaN stays NaN, -0 gives +0)
 *   GELU_TANH   0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))   (the "approximate" GELU)
 *   GELU_ERF    0.5 x (1 + erf(x / sqrt(2)))                         (the exact GELU)
 *   SILU        x / (1 + exp(-x))                                     (x sigmoid(x), "swish")
 *   SIGMOID     1 / (1 + exp(-x))
 *   CLAMP       min(max(x, act_lo), act_hi) (NaN stays NaN)
 * f64 math and the cpu backend evaluate these with the math library's erf, tanh and exp. f32
 * math on GPUs: GELU_ERF with the accurate erff; GELU_TANH and SILU in the equal form
 * x / (1 + 2^y), SIGMOID as 1 / (1 + 2^y) (GELU_TANH: y = -2 log2(e) sqrt(2 / pi)
 * (x + 0.044715 x^3); SILU, SIGMOID: y = -log2(e) x) with the device's exp2 and reciprocal
 * instructions, within 4 ulps of max(|result|, 1) in f32 (about one ulp more than tanhf or
 * expf would give, at a third of their instructions or less). The GPU's epilogue pass and the
 * GEMM kernels that fuse the epilogue evaluate the same code: the same bits either way. */
typedef enum duet_activation {
    DUET_ACT_NONE = 0,
    DUET_ACT_RELU = 1,
    DUET_ACT_GELU_TANH = 2,
    DUET_ACT_GELU_ERF = 3,
    DUET_ACT_SILU = 4,
    DUET_ACT_SIGMOID = 5,
    DUET_ACT_CLAMP = 6
} duet_activation;

/* "none", "relu", "gelu_tanh", "gelu_erf", "silu", "sigmoid", "clamp"; "?" for other values. */
DUET_API const char *duet_activation_name(duet_activation act);

/* What duet_gemm_ex applies to the product before it writes D. Zero-initialise ({0}) for no
 * epilogue: act NONE and every pointer NULL. Every matrix here is an ordinary duet_matrix (any
 * layout, ld, offset) in a buffer of the same context as A, B and D:
 *   bias        NULL, or a vector added before the activation: 1 x n (one value per column of
 *               D, the same for every row) or m x 1 (one value per row). When m or n is 1 the
 *               two readings give the same sums.
 *   row_scale   NULL, or m x 1: row i of alpha * op(A) * op(B) is multiplied by row_scale[i].
 *   col_scale   NULL, or 1 x n: column j of alpha * op(A) * op(B) is multiplied by
 *               col_scale[j]. With both, the product is scaled by row_scale[i] * col_scale[j]
 *               (the per-token and per-channel factors of a quantised GEMM).
 *   residual    NULL, or m x n: added after the activation.
 *   aux         NULL, or m x n, written: the pre-activation value (for a backward pass), cast
 *               once to aux's dtype as D is cast.
 * Vectors and the residual have batch_count 1 (one for every batch: broadcast) or D's. */
typedef struct duet_gemm_epilogue {
    duet_activation act;
    double act_lo, act_hi;        /* CLAMP's bounds (act_lo <= act_hi, not NaN; +-inf allowed
                                     for floats; integers in the i32 range for integer GEMMs);
                                     0 for every other act                                  */
    const duet_matrix *bias;
    const duet_matrix *row_scale;
    const duet_matrix *col_scale;
    const duet_matrix *residual;
    duet_matrix *aux;
    const duet_matrix *scale_a;   /* NULL, or f32, A of f8e4m3/f8e5m2 only, read on the device
                                     when the op runs (a captured graph sees its values): 1 x 1
                                     (batch_count 1), A's per-tensor scale, or m x ceil(k / 128)
                                     block scales, one per row of op(A) and 128 values of k
                                     (duet_gemm_ex, "Block scales")                          */
    const duet_matrix *scale_b;   /* likewise for B: 1 x 1, or ceil(k / 128) x ceil(n / 128)
                                     block scales, one per 128 x 128 block of op(B)          */
    const duet_matrix *scale_d;   /* NULL, or 1 x 1 f32 (batch_count 1), D of f8e4m3/f8e5m2
                                     only: D = result * scale_d, read on the device          */
    duet_matrix *amax_d;          /* NULL, or 1 x 1 f32 (batch_count 1), written, D of
                                     f8e4m3/f8e5m2 only: max |result| over D, before scale_d */
    const duet_epilogue_fn *fn;   /* NULL, or a user epilogue compiled at run time
                                     (duet_epilogue_fn_create) that replaces every step above:
                                     act NONE and the pointers above NULL (below)            */
    const duet_buffer *fn_params; /* NULL, or the buffer fn's params points into (read only) */
    size_t fn_params_offset;      /* bytes into fn_params                                    */
} duet_gemm_epilogue;

/* D = act(row_scale[i] * col_scale[j] * (alpha * op(A) * op(B)) + beta * C + bias) + residual,
 * with aux = the argument of act, for every batch b, row i and column j of D (m x n). A, B, C,
 * alpha, beta, ops, layouts and batches are those of duet_gemm (its dtype table holds for A, B
 * and C); epi NULL is the zero epilogue, and then D = alpha * op(A) * op(B) + beta * C rounded
 * once to D's dtype.
 *
 * D: m x n with C's batch_count, written; D may be C itself (the same buffer, offset, ld,
 * layout, batch_count and batch_stride, and the same dtype: in place) or must not overlap it.
 * C may be NULL when beta == 0 (C is never read then anyway). D may not overlap A, B or any
 * epilogue input; aux may not overlap any other operand.
 *
 * Math type and the order of operations. The product acc = op(A) * op(B) is the GEMM's own
 * (duet_gemm's table: f32 accumulation for f32/f16/bf16/8-bit float inputs, f64 for f64, i32
 * modulo 2^32 for i32/i8). The epilogue runs in the math type
 *   A, B           math   D, aux, bias, scales, residual       act
 *   f32/f16/bf16,  f32    any of f32, f16, bf16 (each its own)  all
 *   f8e4m3/f8e5m2         D also f8e4m3 or f8e5m2 (below)
 *   f64            f64    f64 or f32 (each its own)             all
 *   i32/i8         i32    i32 or i8 (each its own)              NONE, RELU, CLAMP
 * as: t = alpha * acc; t = t * row_scale[i]; t = t * col_scale[j]; t = t + beta * C; t = t +
 * bias; aux = t; t = act(t); t = t + residual; D = t. Each step rounds to the math type (a
 * multiply and the add after it may be one fused multiply-add on GPUs); inputs of a narrower
 * dtype are widened exactly; D and aux are rounded once from the math type: to nearest even
 * for floats (overflow gives inf, NaN stays NaN), and for i8 saturated to [-128, 127]. Integer
 * math wraps modulo 2^32 like the GEMM (scales and bias included); an integer GEMM with
 * another act is DUET_ERROR_UNSUPPORTED. NaN and inf in any input propagate as IEEE
 * arithmetic says (0 * inf is NaN); beta == 0 never reads C, alpha == 0 or K == 0 never reads
 * A or B (t = 0).
 *
 * How it runs (this release): where the GPU's plan runs the GEMM on the Hopper wgmma kernel
 * (sm_90; f16/bf16 inputs, f32 with TF32 math), that kernel applies the epilogue in its own
 * store, with the same f32 steps and roundings as the epilogue kernel below: one launch, no
 * intermediate (duet_launch_info.epilogue "fused_gemm_epilogue_f32_<D>"). Where it splits k
 * on the memory-bound kernel of a narrow C or on the swizzled tensor-core kernel (any GPU
 * dtype; the kernel name ends in "_splitk"), the reduction of the slices applies the epilogue
 * with the same steps and roundings in the math type: no intermediate and no third launch
 * (info.epilogue "fused_gemm_epilogue_<math>_<D>"). Elsewhere the GEMM
 * writes alpha * acc (or, when D is C in the GEMM's accumulation dtype and there are no scales,
 * alpha * acc + beta * C) at full precision, into D when D has that dtype and otherwise into a
 * per-stream scratch of m n batch elements of the math type, and one epilogue kernel then reads
 * it, C, the vectors and the residual once and writes D and aux: one more launch and one more
 * pass over m x n (duet_launch_info.launches counts it, .epilogue names it). The cpu backend
 * runs the same two steps. The scratch grows like the stream's workspace (a stream capturing
 * into a graph needs one uncaptured run first).
 *
 * Per-tensor scales of 8-bit float A and B (epi.scale_a, epi.scale_b): t = alpha * acc;
 * t = t * scale_a; t = t * scale_b (each an f32 rounding), then the steps above from beta * C on.
 * They take the places of row_scale and col_scale in the epilogue pass (broadcast over D), so
 * this release refuses either with row_scale or col_scale (DUET_ERROR_UNSUPPORTED), as it
 * refuses them for A and B of any other dtype. A scale that is not a 1 x 1 f32 matrix of
 * batch_count 1 or a block scale (below), or that D or aux overlaps, is
 * DUET_ERROR_INVALID_ARGUMENT.
 *
 * Block scales (DeepSeek-V3's recipe; any layout, ld and offset, batch_count 1 or D's):
 * scale_a m x ceil(k / 128), sa(i, q) for row i of op(A) and k in [128 q, 128 q + 128);
 * scale_b ceil(k / 128) x ceil(n / 128), sb(q, c) for the 128 x 128 block of op(B) at k block q
 * and columns [128 c, 128 c + 128). The product is then
 *   acc(i, j) = sum over q of P_q(i, j) * s_q(i, j),  s_q(i, j) = sa(i, q) * sb(q, j / 128),
 * P_q the block's 128 products, and t = alpha * acc goes on to the steps above from beta * C
 * (no per-tensor multiplications after it). A 1 x 1 scale beside a block one is its s factor
 * for every block (1 x 1 is always per tensor, so a problem whose blocks are all one block is
 * per-tensor scaled); a NULL one is 1. A narrow C on NVIDIA sm_89 and newer (the memory-bound
 * kernel's mma.sync form, as without block scales) adds each instruction pair's sums (64
 * values of k, within one block) to f32 as acc = fma(P, s_q, acc); on Hopper (sm_90) otherwise,
 * with a row-major (unit column stride) D, the FP8 wgmma kernel does so with each block's sums
 * (P_q, with its error as "8-bit float A and B" of duet_gemm states); s_q is one f32 product
 * and info.kernel ends in "_blockscaled" (wgmma: then "_packed" where A or B is copied K-major
 * first). options.math FAST_ACCUM is taken as DEFAULT (info.math says so): summing k in the
 * tensor core only leaves no place for the scales. Everywhere else (other devices, the cpu
 * backend, a column-major D with scale_a in blocks off the narrow kernel) A and B are decoded to
 * f32 with their scales multiplied in (one f32 rounding each: a(i, p) sa(i, p / 128) and b(p, j)
 * sb(p / 128, j / 128)) in the stream's workspace (info.prologue names the two conversions) and
 * the f32 GEMM (exact f32 math) multiplies them: |acc - exact| <= about (k + 2) 2^-24 sum over
 * p of |a sa b sb|. A block scale of the wrong shape or batch_count is
 * DUET_ERROR_INVALID_ARGUMENT.
 *
 * An 8-bit float D (f32 math): D = round(result * scale_d) to D's dtype, result being the f32
 * value the steps above give (D = t), multiplied by scale_d in f32 when there is one, rounded
 * to nearest even and saturated to +-448 (e4m3) or +-57344 (e5m2) as duet_convert's default
 * does; NaN stays NaN. amax_d, when given, receives max |result| over every element of D (all
 * batches), before scale_d: NaN if any is NaN, 0 when D is empty; deterministic, as
 * duet_convert's amax. This release writes the result in f32 to the stream's scratch (m n
 * batch elements, in info.workspace_bytes) and converts it with duet_convert's kernel: one
 * more launch and pass than an f32 D (info.epilogue names both). scale_d or amax_d with a D of
 * another dtype is DUET_ERROR_UNSUPPORTED; either not a 1 x 1 f32 matrix of batch_count 1,
 * D overlapping scale_d, or amax_d overlapping any operand, is DUET_ERROR_INVALID_ARGUMENT.
 * aux and the other epilogue operands keep the table's dtypes.
 *
 * Errors: as duet_gemm for A, B, C and the options; for the epilogue, a bad act or bound, a
 * vector or residual of the wrong shape or batch_count or an overlap is
 * DUET_ERROR_INVALID_ARGUMENT naming the argument (epi.bias, D, ...); a dtype outside the table
 * above, or an activation the integer math does not have, is DUET_ERROR_UNSUPPORTED (as a dtype
 * outside duet_gemm's table is). Nothing is written on either. */
DUET_API duet_status duet_gemm_ex(duet_stream *stream, duet_op op_a, duet_op op_b, double alpha,
                                  const duet_matrix *a, const duet_matrix *b, double beta,
                                  const duet_matrix *c, const duet_gemm_epilogue *epi,
                                  duet_matrix *d, const duet_op_options *options);

/* A user epilogue for duet_gemm_ex, compiled at run time for the context's device (CUDA: NVRTC,
 * HIP: hiprtc, with duet_module_create's prelude; cpu: DUET_ERROR_UNSUPPORTED). source defines
 * a device function named `name`:
 *
 *     __device__ float name(float acc, float c, long long row, long long col,
 *                           const void *params)
 *
 * (helpers, constants and other __device__ functions may sit beside it; no kernels needed).
 * With epi.fn set, duet_gemm_ex computes for every element of D, in f32,
 *     acc = alpha * sum_k op(A)(row, k) op(B)(k, col)   (the GEMM's product; 0 when K or alpha
 *                                                        is 0),
 *     c   = beta * C(row, col)                          (one f32 rounding; 0 when C is NULL or
 *                                                        beta is 0: C is then not read),
 * and D(row, col) = name(acc, c, row, col, params) rounded once to D's dtype (nearest even,
 * overflow to inf, NaN stays NaN). row and col are D's indices; with batch_count > 1, row counts
 * down the batches (batch b's row i is b * M + i). params is fn_params' device address plus
 * fn_params_offset (NULL when fn_params is NULL): the function reads whatever it keeps there
 * (a bias, scales, constants). It must be a pure function of its arguments and of memory
 * nothing else writes during the call; it runs once per element of D, in any order and
 * concurrently.
 *
 * Limits of this release: f32 math only (A and B f32, f16, bf16, f8e4m3 or f8e5m2; D f32, f16
 * or bf16), and not with epi.act, bias, scales, residual or aux (the function does what they
 * would); the GEMM writes its product to the stream's f32 scratch and one launch of the
 * compiled epilogue reads it (and C) and writes D: a second pass, never fused into the GEMM
 * kernel (duet_launch_info.epilogue names it "user_epilogue_<name>", name cut to 33
 * characters).
 *
 * The compilation happens here, once: duet_gemm_ex calls with fn compile nothing, and an
 * identical (source, name, device) compilation is served from the module cache (in memory;
 * duet_module_create's rules). A compile error is DUET_ERROR_COMPILE with the log in
 * duet_last_compile_log() and *fn = NULL; a NULL or empty source or name, a name that is not a
 * C identifier or is longer than 63 characters is DUET_ERROR_INVALID_ARGUMENT. fn belongs to the
 * context (destroyed with it) and may be used from any stream of it. */
DUET_API duet_status duet_epilogue_fn_create(duet_context *ctx, const char *source,
                                             const char *name, duet_epilogue_fn **fn);
/* Waits for the context's queued work, then frees fn and its compiled code. */
DUET_API duet_status duet_epilogue_fn_destroy(duet_epilogue_fn *fn);

/* ------------------------------------------------------------------------------------------ */
/* Groups of contexts: one GEMM over several devices of one process                            */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet_group duet_group;

/* A matrix (or strided batch of matrices) in host memory, read as duet_matrix reads a buffer:
 * element (b, i, j) at data + (b * batch_stride + (row-major ? i * ld + j : j * ld + i)) *
 * the dtype's size. batch_count 0 is read as 1. data may be NULL only for an empty matrix.
 * Host memory registered with duet_host_register (or from duet_host_alloc) of any context
 * copies faster and truly asynchronously; plain memory works too. */
typedef struct duet_host_matrix {
    void *data;
    duet_dtype dtype;
    duet_layout layout;
    int64_t rows;
    int64_t cols;
    int64_t ld;           /* elements */
    int64_t batch_count;
    int64_t batch_stride; /* elements; 0 broadcasts one matrix over the batch (inputs only) */
} duet_host_matrix;

/* A group of count (1..DUET_GROUP_MAX) contexts, usually one per device; one context may not
 * appear twice, but several contexts may be on one device. The group keeps, per context, two
 * streams, events and panel buffers, created on that context (destroying a member context
 * makes later group calls fail with DUET_ERROR_INVALID_HANDLE; destroy the group first).
 * The group takes no ownership of the contexts. */
#define DUET_GROUP_MAX 64
DUET_API duet_status duet_group_create(duet_context *const *contexts, int count,
                                       duet_group **group);
/* Waits for the group's work and releases its streams, events and buffers. */
DUET_API duet_status duet_group_destroy(duet_group *group);
/* The edge of the square C tiles duet_group_gemm deals out (rows and columns of C). 0 restores
 * the default: the DUET_GROUP_TILE environment variable if it holds a positive integer, else
 * 4096, shrunk for small C so that every context gets a tile (docs/semantics.md). */
DUET_API duet_status duet_group_set_tile(duet_group *group, int64_t tile);

/* C = alpha * op(A) * op(B) + beta * C over the group, with duet_gemm's semantics, dtypes,
 * math modes, ops, layouts and batches, for host matrices (duet_group_gemm_ex below takes
 * device matrices too). C is cut into tiles; counted in
 * the order batch, tile row, tile column, the tiles are dealt out in count contiguous runs of
 * (nearly) equal length, member i taking the i-th: a fixed assignment, so a result is the same
 * from run to run. Each tile is one duet_gemm over the whole K on its
 * member's context. Synchronous: returns when C is written. options as for duet_gemm
 * (options.info describes the first tile's gemm). C may not overlap A or B. On a validation
 * error nothing is written; on a device error C may be partly written. */
DUET_API duet_status duet_group_gemm(duet_group *group, duet_op op_a, duet_op op_b, double alpha,
                                     const duet_host_matrix *a, const duet_host_matrix *b,
                                     double beta, duet_host_matrix *c,
                                     const duet_op_options *options);

/* An operand of duet_group_gemm_ex: a matrix in host memory (host) or in a buffer of one of
 * the group's contexts (device); exactly one of the two is set. duet_group_host and
 * duet_group_device make one. */
typedef struct duet_group_operand {
    const duet_host_matrix *host;
    const duet_matrix *device;
} duet_group_operand;
DUET_API duet_group_operand duet_group_host(const duet_host_matrix *m);
DUET_API duet_group_operand duet_group_device(const duet_matrix *m);

/* duet_group_gemm where each of A, B and C is a host matrix or a device matrix, mixed freely;
 * each device operand may be on any member (A, B and C on different ones). The same tiles,
 * assignment and semantics: a member copies the panels of a device operand from its buffer
 * (within its own context, or from another member's) and writes its C tiles to a device C's
 * buffer. Work the caller queued on a context holding a device operand is waited for first
 * (its streams are synchronized); the call returns when C is written. A device operand is
 * checked as duet_gemm checks one (a buffer of a context outside the group is
 * DUET_ERROR_INVALID_ARGUMENT); C may not overlap A or B. */
DUET_API duet_status duet_group_gemm_ex(duet_group *group, duet_op op_a, duet_op op_b,
                                        double alpha, duet_group_operand a, duet_group_operand b,
                                        double beta, duet_group_operand c,
                                        const duet_op_options *options);

/* out = in^T: out has in's cols as rows and rows as cols, the same dtype (any: by element size)
 * and batch count. in and out must not overlap, except in the in-place form:
 *
 * In place: in and out in the same buffer at the same offset transposes the storage itself
 * (any shape, element size, layout and batch; options.algorithm AUTO only, any other is
 * DUET_ERROR_UNSUPPORTED). With in and out of one layout, let the stored matrix be P lines of
 * Q elements (row-major: P = rows, Q = cols) at stride in.ld:
 *   - square (P == Q): out.ld == in.ld, any ld >= Q (the padding is left untouched);
 *   - rectangular (P != Q): packed only, in.ld == Q and out.ld == P (the result is the
 *     Q x P transpose packed in the same P * Q elements);
 *   - in and out of different layouts: out.ld == in.ld (the storage already is in^T: nothing
 *     moves);
 *   - batches: out.batch_stride == in.batch_stride, at least one matrix's extent.
 * Anything else (a partial overlap, another ld or batch stride) is DUET_ERROR_INVALID_ARGUMENT
 * and writes nothing. A rectangular transpose uses O(max(P, Q)) elements of the stream's
 * workspace per matrix (duet_launch_info.workspace_bytes). See docs/semantics.md. */
DUET_API duet_status duet_transpose(duet_stream *stream, const duet_matrix *in, duet_matrix *out,
                                    const duet_op_options *options);

/* x = alpha * x (f32, f64, i32). */
DUET_API duet_status duet_scale(duet_stream *stream, double alpha, duet_matrix *x,
                                const duet_op_options *options);
/* c = alpha * a + beta * b (f32, f64, i32); c may be exactly a or b, not partly overlap. */
DUET_API duet_status duet_add(duet_stream *stream, double alpha, const duet_matrix *a,
                              double beta, const duet_matrix *b, duet_matrix *c,
                              const duet_op_options *options);
/* x = value (every dtype but f8e4m3 and f8e5m2, which are DUET_ERROR_UNSUPPORTED; value
 * converted to the dtype, integer dtypes need an exact value). */
DUET_API duet_status duet_fill(duet_stream *stream, double value, duet_matrix *x,
                               const duet_op_options *options);

/* How duet_convert treats a value beyond the largest finite value of an 8-bit float dst. */
typedef enum duet_convert_overflow {
    DUET_CONVERT_SATURATE = 0, /* to +-max (448 for e4m3, 57344 for e5m2), +-inf included */
    DUET_CONVERT_OVERFLOW = 1  /* as IEEE rounds: e5m2 gives +-inf; e4m3, which has no
                                  infinity, gives NaN (S.1111.111); +-inf likewise         */
} duet_convert_overflow;

/* Options of duet_convert. Zero-initialise ({0}) for the defaults; NULL means defaults. */
typedef struct duet_convert_options {
    duet_convert_overflow overflow; /* 8-bit float dst only (SATURATE by default)           */
    const duet_matrix *scale;       /* NULL, or a 1 x 1 f32 matrix read on the device when
                                       the op runs: dst = src * scale (a graph that captured
                                       the op sees the scale's current value)              */
    duet_matrix *amax;              /* NULL, or a 1 x 1 f32 matrix, written: max |src|     */
    duet_launch_info *info;         /* if not NULL, filled with what was launched           */
} duet_convert_options;

/* dst = convert(src [* scale]) element by element, over rows x cols x dst.batch_count, for
 * src and dst each of f32, f16, bf16, f8e4m3, f8e5m2 (any pair, the same dtype included).
 * Every value of every one of those dtypes is exact in f32, so each element is decoded exactly
 * to f32, multiplied by the scale in f32 when there is one (one f32 rounding, to nearest even),
 * and rounded once to dst's dtype, to nearest with ties to even. Overflow: an f8 dst follows
 * options.overflow; an f16 or bf16 dst gives +-inf as IEEE does. NaN gives NaN (its sign kept;
 * the payload is not: dst holds its dtype's canonical quiet NaN, S.1111.111 for e4m3 and
 * S.11111.10 for e5m2); -0 stays -0; values below half the smallest subnormal give +-0.
 *
 * amax, when given, receives max |src| over every element read, as f32, before the scale; NaN
 * if any element is NaN, 0 when the matrix is empty. It is deterministic: the maximum does not
 * depend on the order of the elements, and GPUs take it with an integer atomicMax on the bit
 * patterns of |x| (which order as the values do for non-negative floats; NaN is canonicalised
 * first), after a memset of amax to 0 on the same stream: two launches in all.
 *
 * src and dst have the same rows and cols; src.batch_count is dst's or 1 (broadcast). dst may
 * not overlap src, scale or amax; amax may not overlap src or scale.
 * Errors: a bad matrix, a shape or batch that does not match, an overlap, a scale or amax that is
 * not a 1 x 1 f32 matrix, or a bad options.overflow is DUET_ERROR_INVALID_ARGUMENT; a dtype
 * outside the five is DUET_ERROR_UNSUPPORTED. Nothing is written on any error. */
DUET_API duet_status duet_convert(duet_stream *stream, const duet_matrix *src, duet_matrix *dst,
                                  const duet_convert_options *options);

/* ------------------------------------------------------------------------------------------ */
/* Runtime-compiled kernels (CUDA: NVRTC, HIP: hiprtc; cpu: DUET_ERROR_UNSUPPORTED)            */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet_module_options {
    const char *const *defines;       /* "NAME" or "NAME=VALUE"; may be NULL                */
    int num_defines;
    const char *const *include_dirs;  /* may be NULL                                        */
    int num_include_dirs;
    const char *const *extra_options; /* passed to the compiler as they are; may be NULL     */
    int num_extra_options;
    const char *cache_dir;            /* on-disk cache directory, NULL: memory cache only   */
} duet_module_options;

/* Compiles source for the context's device, with duet's portability prelude (DUET_WARP_SIZE,
 * duet_barrier(), thread/block index names) injected. Sources that never say extern "C" are
 * wrapped in one extern "C" { } block, as PyCUDA's SourceModule does, so kernels are found by
 * their plain names.
 * A compile error returns DUET_ERROR_COMPILE, *module = NULL, and the log in
 * duet_last_compile_log(). Identical (source, options, arch) compilations are cached. */
DUET_API duet_status duet_module_create(duet_context *ctx, const char *source,
                                        const duet_module_options *options,
                                        duet_module **module);
/* Waits for the device's queued work before unloading. */
DUET_API duet_status duet_module_destroy(duet_module *module);
/* The compiler log of the module (may be empty, never NULL). */
DUET_API duet_status duet_module_log(const duet_module *module, const char **log);
/* The log of the last failed or successful compilation on this thread. */
DUET_API const char *duet_last_compile_log(void);
DUET_API duet_status duet_module_get_function(duet_module *module, const char *name,
                                              duet_function **function);

typedef enum duet_arg_kind {
    DUET_ARG_BUFFER = 0, /* a device pointer: buffer base + byte offset */
    DUET_ARG_I32 = 1,
    DUET_ARG_I64 = 2,
    DUET_ARG_F32 = 3,
    DUET_ARG_F64 = 4,
    DUET_ARG_U32 = 5,
    DUET_ARG_U64 = 6
} duet_arg_kind;

typedef struct duet_arg {
    duet_arg_kind kind;
    union {
        struct {
            duet_buffer *buffer;
            size_t offset; /* bytes */
        } buf;
        int32_t i32;
        int64_t i64;
        uint32_t u32;
        uint64_t u64;
        float f32;
        double f64;
    } value;
} duet_arg;

/* Launches function on stream with config and args (checked against the function's parameter
 * count and sizes where the runtime tells them). */
DUET_API duet_status duet_launch(duet_stream *stream, const duet_function *function,
                                 const duet_launch_config *config, const duet_arg *args,
                                 int num_args);

/* ------------------------------------------------------------------------------------------ */
/* Interoperability: the application's own memory, streams and events                         */
/* ------------------------------------------------------------------------------------------ */

/* duet works in the runtime's primary context of the context's device (the context that the
 * CUDA and HIP runtime APIs use for that device), so device pointers, streams and events that
 * the application made with the runtime API on that device are valid in duet, and duet's are
 * valid in the application's runtime calls. Native handles are passed as void *: a cudaStream_t
 * or hipStream_t, a cudaEvent_t or hipEvent_t, a device address. See docs/api.md for the cpu
 * backend's meaning of each.
 *
 * Wrapped objects are not owned: destroying the handle, or its context, forgets the object and
 * never frees, destroys or resets it; the application keeps it alive for as long as the handle
 * is used (and for as long as work queued through the handle may still run). */

/* A buffer over existing memory: device memory of ctx's device (cudaMalloc, hipMalloc, managed
 * memory of that device, a framework's allocator) or, on the cpu backend, host memory. ptr may
 * be NULL only when bytes is 0 (an empty buffer). On GPUs the runtime's pointer attributes must
 * say that ptr and ptr + bytes - 1 are device or managed memory of ctx's device
 * (DUET_ERROR_INVALID_ARGUMENT otherwise: host memory, another device, unknown memory); that
 * the whole range lies in one live allocation cannot be checked, and is the caller's promise.
 * The buffer works in every call that takes a duet_buffer. */
DUET_API duet_status duet_buffer_wrap(duet_context *ctx, void *ptr, size_t bytes,
                                      duet_buffer **buf);
/* 1 when buf wraps memory duet does not own (duet_buffer_wrap), 0 when duet allocated it. */
DUET_API duet_status duet_buffer_is_wrapped(const duet_buffer *buf, int *wrapped);
/* The device address of byte offset of buf (host address on the cpu backend), for the
 * application's own kernels. offset <= the buffer's size (offset == size gives the end). */
DUET_API duet_status duet_buffer_device_ptr(const duet_buffer *buf, size_t offset, void **ptr);

/* A duet_stream over the application's stream (cudaStream_t / hipStream_t; NULL is the
 * runtime's legacy default stream). duet queues its work there and never destroys it;
 * duet_stream_destroy waits for the stream's queued work (duet's workspace may be in use), then
 * forgets it. cpu backend: work runs on the calling thread, so there are no foreign streams:
 * native must be NULL (any other value is DUET_ERROR_UNSUPPORTED). */
DUET_API duet_status duet_stream_wrap(duet_context *ctx, void *native, duet_stream **stream);
/* The native stream of any duet stream: the runtime's stream (for a wrapped stream, the one
 * wrapped). cpu backend: an opaque, non-NULL object of duet's for the streams duet created
 * (only useful to tell streams apart), NULL for a wrapped one. */
DUET_API duet_status duet_stream_native(const duet_stream *stream, void **native);

/* A duet_event over the application's event (cudaEvent_t / hipEvent_t, not NULL), never
 * destroyed by duet. It is treated as recorded; duet_event_elapsed_ms needs it created with
 * timing. cpu backend: DUET_ERROR_UNSUPPORTED (duet's cpu events are host timestamps). */
DUET_API duet_status duet_event_wrap(duet_context *ctx, void *native, duet_event **event);
/* The native event of any duet event (cpu backend: duet's own opaque object). */
DUET_API duet_status duet_event_native(const duet_event *event, void **native);

/* Graph capture (CUDA stream capture, HIP graphs): gemm, transpose, scale, add, fill,
 * duet_buffer_copy, duet_buffer_memset, the _async host copies and duet_event_record queue
 * work without synchronising, allocating or blocking the host, so they can be captured, as
 * long as the stream's workspace needs no growing (run the op once before capturing; growing
 * it during capture is DUET_ERROR_INVALID_ARGUMENT instead). Calls that block the host return
 * DUET_ERROR_INVALID_ARGUMENT, naming the capture, instead of invalidating it when their
 * stream is capturing: duet_buffer_read / duet_buffer_write, duet_stream_synchronize,
 * duet_stream_destroy, duet_context_synchronize, duet_context_destroy, and
 * duet_event_synchronize / duet_event_elapsed_ms on an event last recorded during a capture.
 * The stream, its context and the buffers must outlive every graph captured through them. */

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Argument helpers (static inline so they cost nothing and need no linking). */
static inline duet_arg duet_arg_buffer(duet_buffer *buffer, size_t offset_bytes)
{
    duet_arg a;
    a.kind = DUET_ARG_BUFFER;
    a.value.buf.buffer = buffer;
    a.value.buf.offset = offset_bytes;
    return a;
}
static inline duet_arg duet_arg_i32(int32_t v) { duet_arg a; a.kind = DUET_ARG_I32; a.value.i32 = v; return a; }
static inline duet_arg duet_arg_i64(int64_t v) { duet_arg a; a.kind = DUET_ARG_I64; a.value.i64 = v; return a; }
static inline duet_arg duet_arg_u32(uint32_t v) { duet_arg a; a.kind = DUET_ARG_U32; a.value.u32 = v; return a; }
static inline duet_arg duet_arg_u64(uint64_t v) { duet_arg a; a.kind = DUET_ARG_U64; a.value.u64 = v; return a; }
static inline duet_arg duet_arg_f32(float v) { duet_arg a; a.kind = DUET_ARG_F32; a.value.f32 = v; return a; }
static inline duet_arg duet_arg_f64(double v) { duet_arg a; a.kind = DUET_ARG_F64; a.value.f64 = v; return a; }

#endif /* DUET_DUET_H */
