/* transpose.cuh - duet_transpose as a strided copy: naive, tiled, padded, grid-stride, auto. */
#ifndef DUET_KERNELS_TRANSPOSE_CUH
#define DUET_KERNELS_TRANSPOSE_CUH

#include "kernel_util.cuh"

#include <stdio.h>
#include <string.h>

/* The common layer swaps in's strides, so every kernel here copies out(b,i,j) = in(b,i,j);
 * for a real transpose `in` is contiguous along i (in.rs == 1) and `out` along j
 * (out.cs == 1). Elements move as unsigned integers of their size (U: 1, 2, 4 or 8 bytes). */
template <typename U> struct duet_copy_args {
    int64_t rows, cols, batch;
    duet_view<const U> in;
    duet_view<U> out;
};

template <typename U> static inline duet_copy_args<U> duet_copy_args_of(const dt_copy2d *t)
{
    duet_copy_args<U> r;
    r.rows = t->rows;
    r.cols = t->cols;
    r.batch = t->batch;
    r.in = duet_cview_of<U>(t->in);
    r.out = duet_view_of<U>(t->out);
    return r;
}

/* ---- NAIVE: one thread per element, global memory only (the DLI `transpose`) ------------- */

/* Thread x runs along out's unit-stride axis j, so writes coalesce and reads stride. */
template <typename U> DUET_GLOBAL void transpose_naive_kernel(const duet_copy_args<U> t)
{
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= t.cols) return;
    for (int64_t bz = (int64_t)blockIdx.z * blockDim.z + threadIdx.z; bz < t.batch;
         bz += (int64_t)gridDim.z * blockDim.z)
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < t.rows;
             i += (int64_t)gridDim.y * blockDim.y)
            *t.out.at(bz, i, j) = *t.in.at(bz, i, j);
}

template <typename U>
static inline duet_gpu_error_t
transpose_naive_launch(const dt_copy2d *t, const duet_launch_config &cfg, duet_gpu_stream_t stream)
{
    transpose_naive_kernel<U>
        <<<duet_dim3_of(cfg.grid), duet_dim3_of(cfg.block), 0, stream>>>(duet_copy_args_of<U>(t));
    return duet_gpu_get_last_error();
}

/* ---- TILED: t x t threads, a t x t tile (the DLI `tile_transpose`) ------------------------- */

/* Reads along in's contiguous axis (i, thread x) into tile[j][i], then after the barrier
 * writes along out's contiguous axis (j, thread x) from tile[.][i]: both global sides coalesce;
 * the column read of the unpadded tile is the bank conflict TILED_PADDED removes. The tile
 * edge t = blockDim.x = blockDim.y is a run-time value, hence dynamic shared memory. */
template <typename U> DUET_GLOBAL void transpose_tiled_kernel(const duet_copy_args<U> t)
{
    extern __shared__ __align__(16) unsigned char transpose_tiled_smem[];
    U *tile = reinterpret_cast<U *>(transpose_tiled_smem);
    const int td = (int)blockDim.x;
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t j0 = (int64_t)blockIdx.x * td;
    for (int64_t bz = blockIdx.z; bz < t.batch; bz += gridDim.z) {
        for (int64_t by = blockIdx.y; by * td < t.rows; by += gridDim.y) {
            const int64_t i0 = by * td;
            if (i0 + tx < t.rows && j0 + ty < t.cols)
                tile[ty * td + tx] = *t.in.at(bz, i0 + tx, j0 + ty);
            // Wait for all threads in the block to finish updating shared memory
            duet_barrier();
            if (i0 + ty < t.rows && j0 + tx < t.cols)
                *t.out.at(bz, i0 + ty, j0 + tx) = tile[tx * td + ty];
            // The next folded tile reuses the shared array
            duet_barrier();
        }
    }
}

template <typename U>
static inline duet_gpu_error_t
transpose_tiled_launch(const dt_copy2d *t, const duet_launch_config &cfg, duet_gpu_stream_t stream)
{
    transpose_tiled_kernel<U>
        <<<duet_dim3_of(cfg.grid), duet_dim3_of(cfg.block), cfg.shared_bytes, stream>>>(
            duet_copy_args_of<U>(t));
    return duet_gpu_get_last_error();
}

/* ---- TILED_PADDED: 32x8 threads, a 32 x (32+1) tile (Mark Harris / the DLI appendix) ------ */

enum { TRANSPOSE_PAD_DIM = 32, TRANSPOSE_PAD_ROWS = 8 };
static_assert(TRANSPOSE_PAD_DIM % TRANSPOSE_PAD_ROWS == 0, "each thread moves DIM/ROWS elements");

/* The extra column shifts each tile row by one bank, so the column read after the barrier
 * hits 32 different banks instead of one. Each thread moves DIM/ROWS elements, which also
 * cuts the index arithmetic per element. */
template <typename U> DUET_GLOBAL void transpose_tiled_padded_kernel(const duet_copy_args<U> t)
{
    const int DIM = TRANSPOSE_PAD_DIM, PADDED = TRANSPOSE_PAD_DIM + 1;
    extern __shared__ __align__(16) unsigned char transpose_padded_smem[];
    U *tile = reinterpret_cast<U *>(transpose_padded_smem); /* [DIM][DIM + 1] */
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t j0 = (int64_t)blockIdx.x * DIM;
    for (int64_t bz = blockIdx.z; bz < t.batch; bz += gridDim.z) {
        for (int64_t by = blockIdx.y; by * DIM < t.rows; by += gridDim.y) {
            const int64_t i0 = by * DIM;
#pragma unroll
            for (int r = 0; r < DIM; r += TRANSPOSE_PAD_ROWS)
                if (i0 + tx < t.rows && j0 + ty + r < t.cols)
                    tile[(ty + r) * PADDED + tx] = *t.in.at(bz, i0 + tx, j0 + ty + r);
            // wait for all threads in the block to finish updating shared memory
            duet_barrier();
#pragma unroll
            for (int r = 0; r < DIM; r += TRANSPOSE_PAD_ROWS)
                if (i0 + ty + r < t.rows && j0 + tx < t.cols)
                    *t.out.at(bz, i0 + ty + r, j0 + tx) = tile[tx * PADDED + ty + r];
            duet_barrier();
        }
    }
}

static inline bool transpose_tiled_padded_config_ok(const duet_launch_config &cfg, size_t elem)
{
    return cfg.block.x == TRANSPOSE_PAD_DIM && cfg.block.y == TRANSPOSE_PAD_ROWS &&
           cfg.block.z == 1 &&
           cfg.shared_bytes >= (size_t)TRANSPOSE_PAD_DIM * (TRANSPOSE_PAD_DIM + 1) * elem;
}

template <typename U>
static inline duet_gpu_error_t transpose_tiled_padded_launch(const dt_copy2d *t,
                                                             const duet_launch_config &cfg,
                                                             duet_gpu_stream_t stream)
{
    /* The kernel's geometry is compiled in: the caller checks the plan is the documented
     * 32x8 threads with 32 * 33 * elem shared bytes (transpose_tiled_padded_config_ok). */
    transpose_tiled_padded_kernel<U>
        <<<duet_dim3_of(cfg.grid), duet_dim3_of(cfg.block), cfg.shared_bytes, stream>>>(
            duet_copy_args_of<U>(t));
    return duet_gpu_get_last_error();
}

/* ---- GRID_STRIDE: any grid covers any shape (the DLI `add_matrix_stride` loops) ----------- */

template <typename U> DUET_GLOBAL void transpose_grid_stride_kernel(const duet_copy_args<U> t)
{
    const int64_t sz = (int64_t)gridDim.z * blockDim.z;
    const int64_t sy = (int64_t)gridDim.y * blockDim.y;
    const int64_t sx = (int64_t)gridDim.x * blockDim.x;
    for (int64_t bz = (int64_t)blockIdx.z * blockDim.z + threadIdx.z; bz < t.batch; bz += sz)
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < t.rows; i += sy)
            for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < t.cols; j += sx)
                *t.out.at(bz, i, j) = *t.in.at(bz, i, j);
}

template <typename U>
static inline duet_gpu_error_t transpose_grid_stride_launch(const dt_copy2d *t,
                                                            const duet_launch_config &cfg,
                                                            duet_gpu_stream_t stream)
{
    transpose_grid_stride_kernel<U>
        <<<duet_dim3_of(cfg.grid), duet_dim3_of(cfg.block), 0, stream>>>(duet_copy_args_of<U>(t));
    return duet_gpu_get_last_error();
}

/* ---- AUTO: the bandwidth path ---------------------------------------------------------------- */

/* Threads per block of the vector transpose and the copy kernel, and the blocks per SM their
 * register budget is cut for: 4 x 256 threads leave 64 registers a thread, enough for 8 vectors
 * in flight without spilling, and keep 4 x 2 KB..8 KB of loads outstanding per SM between
 * barriers. */
enum { TRANSPOSE_AUTO_THREADS = 256, TRANSPOSE_AUTO_MIN_BLOCKS = 4, TRANSPOSE_AUTO_UNROLL = 4 };

/* Transpose of 1- and 2-byte elements (AUTO's choice; it compiles for any size) with a TI x TJ
 * tile (TI along in's contiguous axis i, TJ along out's contiguous axis j), 16-byte global loads
 * and stores and several independent vectors per thread in flight (a full 128x128 tile of
 * 1-byte elements is four 16-byte loads per thread): element-wide accesses would give 32- or
 * 64-byte runs per warp. Full tiles of an aligned problem take the vector path; edge tiles and
 * unaligned problems take the scalar path, which is correct for any strides. The +1 column
 * keeps the scalar path conflict-free. */
template <typename U, int TI, int TJ>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(TRANSPOSE_AUTO_THREADS, TRANSPOSE_AUTO_MIN_BLOCKS)
    transpose_auto_kernel(const duet_copy_args<U> t, int vec)
{
    enum {
        THREADS = TRANSPOSE_AUTO_THREADS,
        N = 16 / sizeof(U), /* elements per 16-byte vector                         */
        VPL = TI / N,       /* load: vectors per tile line (fixed j, TI elements)   */
        LSTEP = THREADS / VPL,
        LITER = TJ / LSTEP, /* load: vectors in flight per thread                   */
        VPW = TJ / N,       /* store: vectors per out row (fixed i, TJ elements)    */
        WSTEP = THREADS / VPW,
        WITER = TI / WSTEP,
        SI = THREADS / TI, /* scalar load: tile lines per trip                      */
        SJ = THREADS / TJ  /* scalar store: out rows per trip                       */
    };
    static_assert(TI % N == 0 && TJ % N == 0, "tile lines are whole 16-byte vectors");
    static_assert(THREADS % VPL == 0 && TJ % LSTEP == 0, "load vectors divide among the threads");
    static_assert(THREADS % VPW == 0 && TI % WSTEP == 0, "store vectors divide among the threads");
    static_assert(THREADS % TI == 0 && TJ % SI == 0 && THREADS % TJ == 0 && TI % SJ == 0,
                  "scalar elements divide among the threads");
    __shared__ U tile[TJ][TI + 1]; /* tile[j - j0][i - i0] */
    const int tid = (int)threadIdx.x;
    const int64_t tiles_i = (t.rows + TI - 1) / TI;

    for (int64_t bz = blockIdx.z; bz < t.batch; bz += gridDim.z) {
        for (int64_t by = blockIdx.y; by < tiles_i; by += gridDim.y) {
            const int64_t i0 = by * TI, j0 = (int64_t)blockIdx.x * TJ;
            const bool full = vec && i0 + TI <= t.rows && j0 + TJ <= t.cols;
            if (full) {
                /* in.rs == 1: in(i0 + c, j0 + r) is at src[r * in.cs + c]. All loads first. */
                const int r0 = tid / VPL, vc = tid % VPL;
                const U *src = t.in.at(bz, i0, j0) + r0 * t.in.cs + vc * N;
                const int64_t step = LSTEP * t.in.cs;
#if DUET_GPU_HIP
                /* Plain vectors and shifts: hip-clang puts the duet_pack16 array below in
                 * scratch for 1- and 2-byte elements (duet_vec16_get says why). */
                duet_vec16_t p[LITER];
#pragma unroll
                for (int it = 0; it < LITER; ++it)
                    p[it] = *reinterpret_cast<const duet_vec16_t *>(src + it * step);
#pragma unroll
                for (int it = 0; it < LITER; ++it)
#pragma unroll
                    for (int e = 0; e < N; ++e)
                        tile[r0 + it * LSTEP][vc * N + e] = duet_vec16_get<U>(p[it], e);
#else
                duet_pack16<U> p[LITER];
#pragma unroll
                for (int it = 0; it < LITER; ++it)
                    p[it].v = *reinterpret_cast<const duet_vec16_t *>(src + it * step);
#pragma unroll
                for (int it = 0; it < LITER; ++it)
#pragma unroll
                    for (int e = 0; e < N; ++e) tile[r0 + it * LSTEP][vc * N + e] = p[it].e[e];
#endif /* DUET_GPU_HIP */
            } else {
                /* Edge tiles and unaligned views: one element at a time, any strides; a thread
                 * keeps its i (c) and walks j, so only a pointer add per element. */
                const int c = tid % TI;
                int r = tid / TI;
                const U *src = t.in.at(bz, i0 + c, j0 + r);
                const int64_t step = SI * t.in.cs;
                const bool in_i = i0 + c < t.rows;
#pragma unroll 4
                for (int k = 0; k < TJ / SI; ++k, r += SI, src += step)
                    if (in_i && j0 + r < t.cols) tile[r][c] = *src;
            }
            duet_barrier();
            if (full) {
                /* out.cs == 1: out(i0 + r, j0 + c) is at dst[r * out.rs + c]. */
                const int r0 = tid / VPW, vc = tid % VPW;
                U *dst = t.out.at(bz, i0, j0) + r0 * t.out.rs + vc * N;
                const int64_t step = WSTEP * t.out.rs;
#pragma unroll
                for (int it = 0; it < WITER; ++it) {
#if DUET_GPU_HIP
                    /* Elements packed by shifts, not through the duet_pack16 union (scratch on
                     * AMD: see duet_vec16_get). */
                    U x[N];
#pragma unroll
                    for (int e = 0; e < N; ++e) x[e] = tile[vc * N + e][r0 + it * WSTEP];
                    *reinterpret_cast<duet_vec16_t *>(dst + it * step) = duet_vec16_make<U>(x);
#else
                    duet_pack16<U> p;
#pragma unroll
                    for (int e = 0; e < N; ++e) p.e[e] = tile[vc * N + e][r0 + it * WSTEP];
                    *reinterpret_cast<duet_vec16_t *>(dst + it * step) = p.v;
#endif /* DUET_GPU_HIP */
                }
            } else {
                const int c = tid % TJ;
                int r = tid / TJ;
                U *dst = t.out.at(bz, i0 + r, j0 + c);
                const int64_t step = SJ * t.out.rs;
                const bool in_j = j0 + c < t.cols;
#pragma unroll 4
                for (int k = 0; k < TI / SJ; ++k, r += SJ, dst += step)
                    if (in_j && i0 + r < t.rows) *dst = tile[c][r];
            }
            duet_barrier();
        }
    }
}

/* The scalar tile of TILED_PADDED, reshaped for bandwidth: 32 x 8 threads, a 32 x TJ tile
 * (32 along i, TJ along j) with the +1 column, and the unit strides that AUTO's transpose path
 * guarantees (in.rs == 1, out.cs == 1) written into the addressing, so an element costs one
 * load, one shared store, one shared load and one store: pointer steps, no multiplies, and full
 * tiles without bounds tests. Element accesses need no alignment. A warp writes TJ elements of
 * an out row back to back, so rows that start off a 32-byte sector boundary leave partly
 * written sectors only at the ends of each TJ-element run. Small blocks (4 KB of shared memory
 * for a 32 x 32 tile of 4-byte elements) keep eight per SM resident, which hides memory
 * latency better than the larger vector tiles: see the tuning table. */
enum { TRANSPOSE_TILE_DIM = 32, TRANSPOSE_TILE_ROWS = 8, TRANSPOSE_TILE_MIN_BLOCKS = 8 };

/* Blocks per SM / CU the tile kernel's register budget is cut for. CUDA: eight, for every TJ
 * (32 registers a thread, measured on the H100, where shared memory holds 13 of the largest
 * 4-byte tile). AMD: as many as a CU's 64 KiB of LDS holds, at most eight. The wide tiles are
 * LDS-bound at 1-7 blocks there, so a cap for eight would only force their 8 or 16 loads in
 * flight into scratch. */
template <typename U, int TJ> struct transpose_tile_blocks {
#if DUET_GPU_HIP
    enum {
        LDS = TJ * (TRANSPOSE_TILE_DIM + 1) * (int)sizeof(U),
        BY_LDS = 65536 / LDS,
        value = BY_LDS < 1 ? 1 : BY_LDS > TRANSPOSE_TILE_MIN_BLOCKS ? TRANSPOSE_TILE_MIN_BLOCKS : BY_LDS
    };
#else
    enum { value = TRANSPOSE_TILE_MIN_BLOCKS };
#endif /* DUET_GPU_HIP */
};

template <typename U, int TJ>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(TRANSPOSE_TILE_DIM *TRANSPOSE_TILE_ROWS,
                                    (transpose_tile_blocks<U, TJ>::value))
    transpose_tile_kernel(const duet_copy_args<U> t)
{
    enum { DIM = TRANSPOSE_TILE_DIM, ROWS = TRANSPOSE_TILE_ROWS, K = TJ / DIM };
    static_assert(TJ % DIM == 0, "the tile's j extent is whole warps");
    __shared__ U tile[TJ][DIM + 1]; /* tile[j - j0][i - i0] */
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t j0 = (int64_t)blockIdx.x * TJ;
    const int64_t tiles_i = (t.rows + DIM - 1) / DIM;
    for (int64_t bz = blockIdx.z; bz < t.batch; bz += gridDim.z) {
        for (int64_t by = blockIdx.y; by < tiles_i; by += gridDim.y) {
            const int64_t i0 = by * DIM;
            /* Loads: in(bz, i0 + tx, j0 + ty + r). Stores: out(bz, i0 + ty + r, j0 + tx + 32k). */
            const U *src = t.in.p + bz * t.in.bs + (j0 + ty) * t.in.cs + (i0 + tx);
            U *dst = t.out.p + bz * t.out.bs + (i0 + ty) * t.out.rs + (j0 + tx);
            const int64_t ls = ROWS * t.in.cs, ss = ROWS * t.out.rs;
            if (i0 + DIM <= t.rows && j0 + TJ <= t.cols) {
#pragma unroll
                for (int r = 0; r < TJ; r += ROWS, src += ls) tile[ty + r][tx] = *src;
                duet_barrier();
#pragma unroll
                for (int r = 0; r < DIM; r += ROWS, dst += ss)
#pragma unroll
                    for (int k = 0; k < K; ++k) dst[k * DIM] = tile[tx + k * DIM][ty + r];
            } else {
                const bool in_i = i0 + tx < t.rows;
#pragma unroll
                for (int r = 0; r < TJ; r += ROWS, src += ls)
                    if (in_i && j0 + ty + r < t.cols) tile[ty + r][tx] = *src;
                duet_barrier();
#pragma unroll
                for (int r = 0; r < DIM; r += ROWS, dst += ss)
#pragma unroll
                    for (int k = 0; k < K; ++k)
                        if (i0 + ty + r < t.rows && j0 + tx + k * DIM < t.cols)
                            dst[k * DIM] = tile[tx + k * DIM][ty + r];
            }
            /* The next folded tile reuses the shared array. */
            duet_barrier();
        }
    }
}

template <typename U, int TJ>
static inline duet_gpu_error_t transpose_tile_launch(const dt_copy2d *t,
                                                     const duet_device_props *props,
                                                     duet_gpu_stream_t stream,
                                                     duet_auto_result *res)
{
    duet_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.block.x = TRANSPOSE_TILE_DIM;
    cfg.block.y = TRANSPOSE_TILE_ROWS;
    cfg.block.z = 1;
    cfg.grid.x = duet_clamp_u32(dt_ceil_div(t->cols, TJ));
    cfg.grid.y = duet_clamp_u32(dt_ceil_div(t->rows, TRANSPOSE_TILE_DIM));
    cfg.grid.z = duet_clamp_u32(t->batch);
    dt_fold_grid(props, &cfg.grid);
    transpose_tile_kernel<U, TJ><<<duet_dim3_of(cfg.grid), duet_dim3_of(cfg.block), 0, stream>>>(
        duet_copy_args_of<U>(t));
    snprintf(res->kernel, sizeof res->kernel, "transpose_auto_tile%dx%d", TRANSPOSE_TILE_DIM, TJ);
    res->tile = TRANSPOSE_TILE_DIM;
    res->cfg = cfg; /* static shared memory: TJ * 33 * elem bytes */
    res->algo = DUET_ALGO_AUTO;
    return duet_gpu_get_last_error();
}

/* Both sides contiguous along j (or, with vec == 0, any strides): a row-by-row copy, 16-byte
 * vectors when every row start is aligned, UNROLL vectors per thread in flight. Rows of a
 * fully packed problem are merged into one long row by the launcher. */
template <typename U>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(TRANSPOSE_AUTO_THREADS, TRANSPOSE_AUTO_MIN_BLOCKS)
    copy2d_auto_kernel(const duet_copy_args<U> t, int vec)
{
    enum { N = 16 / sizeof(U), UNROLL = TRANSPOSE_AUTO_UNROLL };
    const int64_t sy = (int64_t)gridDim.y * blockDim.y;
    const int64_t gx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t sx = (int64_t)gridDim.x * blockDim.x;
    for (int64_t bz = blockIdx.z; bz < t.batch; bz += gridDim.z) {
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < t.rows; i += sy) {
            if (vec) {
                const duet_vec16_t *src = reinterpret_cast<const duet_vec16_t *>(t.in.at(bz, i, 0));
                duet_vec16_t *dst = reinterpret_cast<duet_vec16_t *>(t.out.at(bz, i, 0));
                const int64_t nvec = t.cols / N;
                const int64_t chunk = (int64_t)blockDim.x * UNROLL;
                for (int64_t base = (int64_t)blockIdx.x * chunk + threadIdx.x; base < nvec;
                     base += (int64_t)gridDim.x * chunk) {
                    duet_vec16_t v[UNROLL];
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u)
                        if (base + (int64_t)u * blockDim.x < nvec)
                            v[u] = src[base + (int64_t)u * blockDim.x];
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u)
                        if (base + (int64_t)u * blockDim.x < nvec)
                            dst[base + (int64_t)u * blockDim.x] = v[u];
                }
                for (int64_t j = nvec * N + gx; j < t.cols; j += sx)
                    *t.out.at(bz, i, j) = *t.in.at(bz, i, j);
            } else {
                for (int64_t j = gx; j < t.cols; j += sx) *t.out.at(bz, i, j) = *t.in.at(bz, i, j);
            }
        }
    }
}

/* AUTO's transpose tiles per architecture: data, not code. Per element size (1, 2, 4, 8 bytes)
 * the tile's extent along i (in's contiguous axis: the length of each read run) and along j
 * (out's contiguous axis: the length of each write run), and the j extent used instead when
 * out's rows do not start on 32-byte sector boundaries. 1- and 2-byte elements take the
 * vector kernel (transpose_auto_kernel: 128 x 128 or 64 x 64, any other pair falls back to
 * 64 x 64); 4- and 8-byte elements take the scalar tile kernel (transpose_tile_kernel: i extent
 * 32, j extent 32, 64 or 128, any other falls back to 32). */
struct transpose_tune_row {
    const char *arch;
    int tile_i[4], tile_j[4], tile_j_misaligned[4];
};
static const transpose_tune_row transpose_tune_table[] = {
    {"default", {128, 128, 32, 32}, {128, 128, 32, 32}, {128, 128, 128, 128}},
    /* H100 80GB HBM3, 2026-11-21, scripts/transpose_lab.cu: median of 20, random data, as a
     * share of the faster of a copy kernel and cudaMemcpy of the same bytes (2.9-3.0 TB/s), and
     * against cublasSgeam / Dgeam in the same run.
     *   4 B, aligned rows      8192^2  16384^2  12800^2  8192x32768  32768x8192
     *   tile 32 x 32           95.3%   94.4%    94.4%    95.7%       92.4%      <- chosen
     *   tile 32 x 64           94.5%   94.2%    94.4%    94.5%       92.8%
     *   tile 32 x 128          90.6%   90.4%    90.5%    91.0%       89.6%
     *   vector 64 x 128        81.7%   81.4%    81.4%    82.1%       82.3%      (before)
     *   vector 64 x 64, 128 threads, XOR-swizzled 16-byte shared accesses:  89.7-93.3%
     *   vector 128 x 128, cp.async into shared memory, two stages deep:     89.7-91.3%
     *   cublasSgeam            95.6%   95.9%    96.1%    96.3%       95.5%
     *   4 B, rows off 32 B     16383x16385  46341^2  8191x8193 (x cublasSgeam)
     *   tile 32 x 32           0.905x       0.921x   0.935x
     *   tile 32 x 128          1.156x       1.200x   1.310x                       <- chosen
     *   8 B, aligned rows      tile 32 x 32: 96.6-97.9% (1.020-1.032x cublasDgeam);
     *                          vector 64 x 64 (before): 94.5-96.1%
     *   8 B, rows off 32 B     tile 32 x 128: 1.002x, 1.019x, 1.163x cublasDgeam; 32 x 32:
     *                          0.930x, 0.937x, 0.966x
     * Small blocks resident in numbers hide memory latency best: eight 4 KB blocks per SM beat
     * four 32 KB vector tiles, whatever their shared-memory layout. Rows off sector boundaries
     * leave partly written sectors at both ends of every write run; 128-element runs make them
     * rare. */
    {"sm_90", {128, 128, 32, 32}, {128, 128, 32, 32}, {128, 128, 128, 128}},
};

struct transpose_tune {
    int ti, tj;
};

static inline transpose_tune transpose_auto_tune(const duet_device_props *props, size_t elem,
                                                 bool misaligned)
{
    const int k = elem == 1 ? 0 : elem == 2 ? 1 : elem == 4 ? 2 : 3;
    const transpose_tune_row *row = &transpose_tune_table[0];
    for (size_t r = 1; r < sizeof transpose_tune_table / sizeof transpose_tune_table[0]; ++r)
        if (props && strcmp(props->arch, transpose_tune_table[r].arch) == 0)
            row = &transpose_tune_table[r];
    transpose_tune tt = {row->tile_i[k], misaligned ? row->tile_j_misaligned[k] : row->tile_j[k]};
    return tt;
}

/* Launches the instantiated shape (ti, tj) for U; false when it is not one of them. */
template <typename U, int TI, int TJ>
static inline bool transpose_auto_try(int ti, int tj, dim3 grid, dim3 block, duet_gpu_stream_t s,
                                      const duet_copy_args<U> &a, int vec)
{
    if (ti != TI || tj != TJ) return false;
    transpose_auto_kernel<U, TI, TJ><<<grid, block, 0, s>>>(a, vec);
    return true;
}

/* The vector shapes compiled per element size (static shared memory stays under 48 KB). */
template <typename U>
static inline bool transpose_auto_dispatch(int ti, int tj, dim3 grid, dim3 block,
                                           duet_gpu_stream_t s, const duet_copy_args<U> &a, int vec)
{
    static_assert(sizeof(U) <= 2, "4- and 8-byte elements take transpose_tile_kernel");
    return transpose_auto_try<U, 128, 128>(ti, tj, grid, block, s, a, vec) ||
           transpose_auto_try<U, 64, 64>(ti, tj, grid, block, s, a, vec);
}

/* Merges rows (and then batches) that follow each other in memory on both sides into one long
 * row, so a packed copy becomes a single 1D range. Only for in.cs == out.cs == 1. */
static inline void transpose_flatten(dt_copy2d *t)
{
    if (t->rows > 1 && t->in.rs == t->cols && t->out.rs == t->cols) {
        t->cols *= t->rows;
        t->rows = 1;
        t->in.rs = t->out.rs = t->cols;
    }
    if (t->batch > 1 && t->rows == 1 && t->in.bs == t->cols && t->out.bs == t->cols) {
        t->cols *= t->batch;
        t->batch = 1;
        t->in.rs = t->out.rs = t->in.bs = t->out.bs = t->cols;
    }
}

template <typename U>
static inline duet_gpu_error_t
transpose_auto_launch(const dt_copy2d *orig, const duet_device_props *props,
                      duet_gpu_stream_t stream, duet_auto_result *res)
{
    const size_t elem = sizeof(U);
    dt_copy2d t = *orig;
    /* The op is symmetric in its two axes: make j the axis along which out is contiguous. */
    if (t.out.cs != 1 && t.out.rs == 1) {
        int64_t s = t.rows;
        t.rows = t.cols;
        t.cols = s;
        s = t.in.rs;
        t.in.rs = t.in.cs;
        t.in.cs = s;
        s = t.out.rs;
        t.out.rs = t.out.cs;
        t.out.cs = s;
    }
    duet_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    res->tile = 0;

    if (t.out.cs == 1 && t.in.rs == 1 && t.in.cs != 1 && t.rows > 1) {
        /* Out rows on 32-byte sector boundaries (an axis of extent 1 never moves the address). */
        const bool out_sectors = (uintptr_t)t.out.base % 32u == 0 &&
                                 ((uint64_t)t.out.rs * elem) % 32u == 0 &&
                                 (t.batch == 1 || ((uint64_t)t.out.bs * elem) % 32u == 0);
        transpose_tune tt = transpose_auto_tune(props, elem, !out_sectors);
        if constexpr (sizeof(U) >= 4) {
            if (tt.tj == 128) return transpose_tile_launch<U, 128>(&t, props, stream, res);
            if (tt.tj == 64) return transpose_tile_launch<U, 64>(&t, props, stream, res);
            return transpose_tile_launch<U, 32>(&t, props, stream, res);
        } else {
            const bool vec =
                duet_aligned16(t.in.base, elem, t.in.cs, t.batch > 1 ? t.in.bs : 0) &&
                duet_aligned16(t.out.base, elem, t.out.rs, t.batch > 1 ? t.out.bs : 0);
            cfg.block.x = TRANSPOSE_AUTO_THREADS;
            cfg.block.y = cfg.block.z = 1;
            for (int attempt = 0; attempt < 2; ++attempt) {
                cfg.grid.x = duet_clamp_u32(dt_ceil_div(t.cols, tt.tj));
                cfg.grid.y = duet_clamp_u32(dt_ceil_div(t.rows, tt.ti));
                cfg.grid.z = duet_clamp_u32(t.batch);
                dt_fold_grid(props, &cfg.grid);
                if (transpose_auto_dispatch<U>(tt.ti, tt.tj, duet_dim3_of(cfg.grid),
                                               duet_dim3_of(cfg.block), stream,
                                               duet_copy_args_of<U>(&t), vec)) {
                    snprintf(res->kernel, sizeof res->kernel, "transpose_auto_%dx%d", tt.ti,
                             tt.tj);
                    res->tile = tt.ti;
                    res->cfg = cfg; /* static shared memory: tj * (ti + 1) * elem bytes */
                    res->algo = DUET_ALGO_AUTO; /* a tuned kernel reports AUTO */
                    return duet_gpu_get_last_error();
                }
                /* A table row naming a shape that is not compiled: the 64x64 default. */
                tt.ti = tt.tj = 64;
            }
        }
    }

    /* Both contiguous along j: a (vectorized) copy; otherwise the same kernel with scalar
     * access along any strides. */
    const bool contiguous = t.in.cs == 1 && t.out.cs == 1;
    if (contiguous) transpose_flatten(&t);
    const bool vec =
        contiguous &&
        duet_aligned16(t.in.base, elem, t.rows > 1 ? t.in.rs : 0, t.batch > 1 ? t.in.bs : 0) &&
        duet_aligned16(t.out.base, elem, t.rows > 1 ? t.out.rs : 0, t.batch > 1 ? t.out.bs : 0);
    /* Work along a row: 16-byte vectors (vec) or elements. Short rows share a block. */
    const int64_t work = vec ? dt_ceil_div(t.cols, (int64_t)(16 / elem)) : t.cols;
    uint32_t bx = TRANSPOSE_AUTO_THREADS;
    while (bx > 32 && (int64_t)bx / 2 >= work) bx /= 2;
    cfg.block.x = bx;
    cfg.block.y = TRANSPOSE_AUTO_THREADS / bx;
    cfg.block.z = 1;
    cfg.grid.x = duet_clamp_u32(dt_ceil_div(work, (int64_t)bx * (vec ? TRANSPOSE_AUTO_UNROLL : 1)));
    cfg.grid.y = duet_clamp_u32(dt_ceil_div(t.rows, cfg.block.y));
    cfg.grid.z = duet_clamp_u32(t.batch);
    dt_fold_grid(props, &cfg.grid);
    copy2d_auto_kernel<U><<<duet_dim3_of(cfg.grid), duet_dim3_of(cfg.block), 0, stream>>>(
        duet_copy_args_of<U>(&t), vec);
    snprintf(res->kernel, sizeof res->kernel, "%s",
             contiguous ? "transpose_auto_copy" : "transpose_auto_strided");
    res->cfg = cfg;
    res->algo = DUET_ALGO_AUTO;
    return duet_gpu_get_last_error();
}

#endif /* DUET_KERNELS_TRANSPOSE_CUH */
