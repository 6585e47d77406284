/* transpose.cuh - duet_transpose as a strided copy: naive, tiled, padded, grid-stride, auto. */
#ifndef DUET_KERNELS_TRANSPOSE_CUH
#define DUET_KERNELS_TRANSPOSE_CUH

#include "kernel_util.cuh"

/* The common layer swaps in's strides, so every kernel here copies out(b,i,j) = in(b,i,j);
 * for a real transpose `in` is contiguous along i (in.rs == 1) and `out` along j
 * (out.cs == 1). Elements move as unsigned integers of their size (U: 1, 2, 4 or 8 bytes). */
template <typename U> struct duet_copy_args {
    int64_t rows, cols, batch;
    duet_view<const U> in;
    duet_view<U> out;
};

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
 * latency better than the larger vector tiles: see the tuning table of the launcher
 * (src/gpu/transpose_gpu.inc). */
enum { TRANSPOSE_TILE_DIM = 32, TRANSPOSE_TILE_ROWS = 8, TRANSPOSE_TILE_MIN_BLOCKS = 8 };

/* Blocks per SM / CU the register budget of the tile kernels (this one and
 * transpose_pack_kernel) is cut for, given their static shared memory and, on AMD, a cap for
 * the loads a thread keeps in flight. CUDA: eight (32 registers a thread, measured on the
 * H100, where shared memory holds 13 of the largest tile). AMD: as many as a CU's 64 KiB of
 * LDS holds, at most AmdCap. A cap of eight (64 VGPRs on gfx9) fits the 4 loads of a 32 x 32
 * tile; the 8 or 16 loads of the wider tiles and their 64-bit addresses spilled to scratch
 * under it (docs/hip-resources.md), so those ask for 6 (80 VGPRs) or 4 (128). */
template <int SharedBytes, int AmdCap> struct transpose_resident_blocks {
#if DUET_GPU_HIP
    enum {
        BY_LDS = 65536 / SharedBytes,
        value = BY_LDS < 1 ? 1 : BY_LDS > AmdCap ? AmdCap : BY_LDS
    };
#else
    enum { value = TRANSPOSE_TILE_MIN_BLOCKS };
#endif /* DUET_GPU_HIP */
};

template <typename U, int TJ>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(
    TRANSPOSE_TILE_DIM *TRANSPOSE_TILE_ROWS,
    (transpose_resident_blocks<TJ *(TRANSPOSE_TILE_DIM + 1) * (int)sizeof(U),
                               TJ <= 32 ? 8 : TJ <= 64 ? 6 : 4>::value))
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

/* 1- and 2-byte elements moved as 32-bit words of P = 4 / sizeof(U) elements along i, so the
 * small-block recipe of transpose_tile_kernel gives 128-byte runs on both sides: a tile of 32
 * words each way (32P x 32P elements), 32 x 8 threads. The loads put in's words in shared
 * memory by word column, w[c][j] (word c of in's row j0 + j; the odd pad word keeps these
 * column writes free of bank conflicts). After the barrier a thread takes a P x P block of
 * elements as P words of consecutive j, transposes it in registers with byte permutes and
 * stores P words, one per out row. The launcher runs it only when every row start of both
 * views is on a 4-byte boundary; edge tiles go element by element through the same array. */
enum { TRANSPOSE_PACK_WORDS = 32 };

template <typename U> DUET_INLINE void transpose_pack_block(uint32_t (&a)[4 / sizeof(U)])
{
    static_assert(sizeof(U) == 1 || sizeof(U) == 2, "words of 1- or 2-byte elements");
    if constexpr (sizeof(U) == 2) {
        /* a[q] = elements (2c, 2c + 1) of row j = 2x + q  ->  a[p] = row 2c + p, j = 2x, 2x + 1 */
        const uint32_t o0 = __byte_perm(a[0], a[1], 0x5410), o1 = __byte_perm(a[0], a[1], 0x7632);
        a[0] = o0;
        a[1] = o1;
    } else {
        const uint32_t l01 = __byte_perm(a[0], a[1], 0x5140), h01 = __byte_perm(a[0], a[1], 0x7362);
        const uint32_t l23 = __byte_perm(a[2], a[3], 0x5140), h23 = __byte_perm(a[2], a[3], 0x7362);
        a[0] = __byte_perm(l01, l23, 0x5410);
        a[1] = __byte_perm(l01, l23, 0x7632);
        a[2] = __byte_perm(h01, h23, 0x5410);
        a[3] = __byte_perm(h01, h23, 0x7632);
    }
}

/* Static shared memory of transpose_pack_kernel<U>: 32 words x (32 P + 1). */
template <typename U> struct transpose_pack_smem {
    enum { value = TRANSPOSE_PACK_WORDS * (TRANSPOSE_PACK_WORDS * 4 / (int)sizeof(U) + 1) * 4 };
};

template <typename U>
DUET_GLOBAL void
DUET_LAUNCH_BOUNDS(TRANSPOSE_TILE_DIM *TRANSPOSE_TILE_ROWS,
                   (transpose_resident_blocks<transpose_pack_smem<U>::value, 8>::value))
    transpose_pack_kernel(const duet_copy_args<U> t)
{
    enum {
        P = 4 / (int)sizeof(U),    /* elements per word                           */
        W = TRANSPOSE_PACK_WORDS,  /* words per tile edge                         */
        T = W * P,                 /* elements per tile edge                      */
        STRIDE = T + 1,            /* words per shared column (odd: no conflicts) */
        ROWS = TRANSPOSE_TILE_ROWS /* blockDim.y                                  */
    };
    static_assert(TRANSPOSE_TILE_DIM == W, "one thread per word of a tile row");
    __shared__ uint32_t w[W * STRIDE];
    /* Element (e, j) of the tile: we[((e / P) * STRIDE + j) * P + e % P]. */
    U *we = reinterpret_cast<U *>(w);
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t j0 = (int64_t)blockIdx.x * T;
    const int64_t tiles_i = (t.rows + T - 1) / T;
    for (int64_t bz = blockIdx.z; bz < t.batch; bz += gridDim.z) {
        for (int64_t by = blockIdx.y; by < tiles_i; by += gridDim.y) {
            const int64_t i0 = by * T;
            const bool full = i0 + T <= t.rows && j0 + T <= t.cols;
            if (full) {
                /* word tx of in's rows j0 + ty + r */
                const uint32_t *src = reinterpret_cast<const uint32_t *>(
                                          t.in.p + bz * t.in.bs + (j0 + ty) * t.in.cs + i0) +
                                      tx;
                const int64_t ls = ROWS * (t.in.cs / P);
#pragma unroll
                for (int r = 0; r < T; r += ROWS, src += ls) w[tx * STRIDE + ty + r] = *src;
            } else {
#pragma unroll 1
                for (int m = 0; m < P; ++m) {
                    const int e = tx + W * m;
                    if (i0 + e >= t.rows) continue;
#pragma unroll 1
                    for (int j = ty; j < T; j += ROWS)
                        if (j0 + j < t.cols)
                            we[((e / P) * STRIDE + j) * P + e % P] = *t.in.at(bz, i0 + e, j0 + j);
                }
            }
            duet_barrier();
            if (full) {
                /* word tx of out's rows i0 + cP + p, for word columns c = ty + k * ROWS */
                const int64_t ss = t.out.rs / P;
#pragma unroll
                for (int k = 0; k < W / ROWS; ++k) {
                    const int c = ty + k * ROWS;
                    uint32_t a[P];
#pragma unroll
                    for (int q = 0; q < P; ++q) a[q] = w[c * STRIDE + tx * P + q];
                    transpose_pack_block<U>(a);
                    uint32_t *dst = reinterpret_cast<uint32_t *>(
                                        t.out.p + bz * t.out.bs + (i0 + c * P) * t.out.rs + j0) +
                                    tx;
#pragma unroll
                    for (int p = 0; p < P; ++p) dst[p * ss] = a[p];
                }
            } else {
#pragma unroll 1
                for (int m = 0; m < P; ++m) {
                    const int jj = tx + W * m;
                    if (j0 + jj >= t.cols) continue;
#pragma unroll 1
                    for (int e = ty; e < T; e += ROWS)
                        if (i0 + e < t.rows)
                            *t.out.at(bz, i0 + e, j0 + jj) =
                                we[((e / P) * STRIDE + jj) * P + e % P];
                }
            }
            /* The next folded tile reuses the shared array. */
            duet_barrier();
        }
    }
}

/* Elements per thread in flight where contiguous rows start off 16-byte boundaries: 4, and 2 of
 * 8 bytes (8 took the kernel past its register budget into scratch on gfx908, gfx90a and gfx940,
 * and 4 of 8 bytes on gfx908: docs/hip-resources.md). */
template <typename U> struct copy2d_one_unroll {
    enum { value = sizeof(U) >= 8 ? 2 : 4 };
};
enum { COPY2D_STRIDED = 0, COPY2D_VECTOR = 1, COPY2D_ELEMENTS = 2 };

/* A row-by-row copy. COPY2D_VECTOR: both sides contiguous along j and every row start 16-byte
 * aligned: 16-byte vectors, UNROLL per thread in flight. COPY2D_ELEMENTS: contiguous, some row
 * start not aligned: elements, copy2d_one_unroll per thread in flight (one element per thread
 * moved 67 MB of 4-byte rows at about 1 TB/s on the H100; GEMM packs such operands). Rows of a
 * fully packed problem are merged into one long row by the launcher. COPY2D_STRIDED: elements
 * along any strides. */
template <typename U>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(TRANSPOSE_AUTO_THREADS, TRANSPOSE_AUTO_MIN_BLOCKS)
    copy2d_auto_kernel(const duet_copy_args<U> t, int mode)
{
    enum { N = 16 / sizeof(U), UNROLL = TRANSPOSE_AUTO_UNROLL, ONE = copy2d_one_unroll<U>::value };
    const int64_t sy = (int64_t)gridDim.y * blockDim.y;
    const int64_t gx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t sx = (int64_t)gridDim.x * blockDim.x;
    for (int64_t bz = blockIdx.z; bz < t.batch; bz += gridDim.z) {
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < t.rows; i += sy) {
            if (mode == COPY2D_VECTOR) {
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
            } else if (mode == COPY2D_ELEMENTS) {
                const U *src = t.in.at(bz, i, 0);
                U *dst = t.out.at(bz, i, 0);
                const int64_t chunk = (int64_t)blockDim.x * ONE;
                for (int64_t base = (int64_t)blockIdx.x * chunk + threadIdx.x; base < t.cols;
                     base += (int64_t)gridDim.x * chunk) {
                    const int64_t left = t.cols - base; /* elements from base on, >= 1 */
                    U v[ONE];
#pragma unroll
                    for (int u = 0; u < ONE; ++u)
                        if ((int64_t)u * blockDim.x < left) v[u] = src[base + u * blockDim.x];
#pragma unroll
                    for (int u = 0; u < ONE; ++u)
                        if ((int64_t)u * blockDim.x < left) dst[base + u * blockDim.x] = v[u];
                }
            } else {
                for (int64_t j = gx; j < t.cols; j += sx) *t.out.at(bz, i, j) = *t.in.at(bz, i, j);
            }
        }
    }
}

#endif /* DUET_KERNELS_TRANSPOSE_CUH */
