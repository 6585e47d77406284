// transpose_lab.cu - standalone timing of transpose kernel designs vs cublasSgeam/Dgeam and copy.
//
// Not part of the library: the place where AUTO transpose shapes are chosen before they go into
// the launcher's table (src/gpu/transpose_gpu.inc). Built by lab/CMakeLists.txt
// (-DDUET_BUILD_LAB=ON, cuda backend), or by hand (sm_90):
//   nvcc -std=c++17 -O3 -arch=sm_90 -Ikernels -Isrc -Isrc/common -Iinclude lab/transpose_lab.cu
//        -lcublas -o build-lab/transpose_lab
//   build-lab/transpose_lab [--reps N] [--csv FILE] [--elem 1|2|4|8] [--odd]
// Every kernel writes B = A^T for a row-major R x C matrix A of random bytes, for 1-, 2-, 4- and
// 8-byte elements (the lab's own kernels: 4-byte only; cuBLAS: 4 and 8); every timed
// result is checked element by element on the device. Times are medians of --reps runs (default
// 30; CUDA events, 5 warm-up runs; the matrices are far larger than L2). GB/s counts bytes read +
// written; "of copy" is against the faster of a copy kernel and cudaMemcpy of the same bytes.
//
// Designs (TI = tile extent along A's rows' contiguous axis, TJ = along B's):
//   duet AUTO  the library's AUTO launcher (src/gpu/transpose_gpu.inc) as the cuda backend calls it
//   duet tile 32xTJ, duet pack 32x32 words, duet vector 128x128  the library's AUTO kernels,
//              each forced
//   duet TILED_PADDED  the library's seed kernel (general strides, any batch)
//   padded32   the seeds' 32x8-thread 32x33 tile (one element per access), written for this case
//   col<TI,TJ> scalar shared stores, +1 padded column read (the first AUTO kernel)
//   swz<TI,TJ> 16-byte accesses on both sides of shared memory: each thread transposes 4x4
//              blocks in registers; the 16-byte column index is XOR-swizzled by (j / 4) % 8 so
//              both the row writes and the 4-row block reads are free of bank conflicts
//   cpa<TI,TJ,S> swz's layout filled by cp.async (no registers hold loads in flight), a
//              persistent grid, S shared stages so the next tiles load while this one stores
#include "gpu/transpose_gpu.inc"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

/* The one library helper the AUTO launcher calls (src/common/api_launch.c). */
void dt_fold_grid(const duet_device_props *props, duet_dim3 *grid)
{
    if ((int64_t)grid->y > props->max_grid_dims[1]) grid->y = (uint32_t)props->max_grid_dims[1];
    if ((int64_t)grid->z > props->max_grid_dims[2]) grid->z = (uint32_t)props->max_grid_dims[2];
}

struct prob {
    const uint32_t *a; /* R x C, row-major, leading dim C */
    uint32_t *b;       /* C x R, row-major, leading dim R */
    int64_t R, C;
    int elem; /* 1, 2, 4 or 8 bytes (the lab's own kernels: 4 only) */
};

/* ---- seeds' padded tile ---- */
template <int IFAST> __global__ void padded32(prob p)
{
    __shared__ uint32_t tile[32][33];
    const int64_t c0 = (IFAST ? blockIdx.x : blockIdx.y) * 32ll,
                  r0 = (IFAST ? blockIdx.y : blockIdx.x) * 32ll;
    const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int k = 0; k < 32; k += 8)
        if (r0 + ty + k < p.R && c0 + tx < p.C)
            tile[ty + k][tx] = p.a[(r0 + ty + k) * p.C + c0 + tx];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 32; k += 8)
        if (c0 + ty + k < p.C && r0 + tx < p.R)
            p.b[(c0 + ty + k) * p.R + r0 + tx] = tile[tx][ty + k];
}

/* In the kernels below: i runs along A's columns (A's contiguous axis, B's rows), j along A's
 * rows (B's contiguous axis). A(j, i) = a[j * C + i]; B(i, j) = b[i * R + j]. Full tiles only
 * (the lab's sizes are multiples of every tile). */

/* ---- col: the first AUTO kernel's vector path ---- */
/* Block order: IFAST = 1 puts blockIdx.x along i, so consecutive blocks read neighbouring
 * pieces of the same rows of A; IFAST = 0 puts it along j (neighbouring pieces of B's rows). */
template <int IFAST> __device__ __forceinline__ int64_t tile_i()
{
    return IFAST ? blockIdx.x : blockIdx.y;
}
template <int IFAST> __device__ __forceinline__ int64_t tile_j()
{
    return IFAST ? blockIdx.y : blockIdx.x;
}
template <int IFAST> static dim3 grid_of(int64_t tiles_i, int64_t tiles_j)
{
    return IFAST ? dim3((unsigned)tiles_i, (unsigned)tiles_j)
                 : dim3((unsigned)tiles_j, (unsigned)tiles_i);
}

template <int TI, int TJ, int IFAST> __global__ __launch_bounds__(256, 4) void col(prob p)
{
    enum {
        T = 256,
        N = 4,
        VPL = TI / N,
        LSTEP = T / VPL,
        LITER = TJ / LSTEP,
        VPW = TJ / N,
        WSTEP = T / VPW,
        WITER = TI / WSTEP
    };
    __shared__ uint32_t tile[TJ][TI + 1];
    const int tid = threadIdx.x;
    const int64_t i0 = tile_i<IFAST>() * TI, j0 = tile_j<IFAST>() * TJ;
    {
        const int r0 = tid / VPL, vc = tid % VPL;
        const uint32_t *src = p.a + (j0 + r0) * p.C + i0 + vc * N;
        uint4 v[LITER];
#pragma unroll
        for (int it = 0; it < LITER; ++it)
            v[it] = *reinterpret_cast<const uint4 *>(src + (int64_t)it * LSTEP * p.C);
#pragma unroll
        for (int it = 0; it < LITER; ++it) {
            uint32_t *t = &tile[r0 + it * LSTEP][vc * N];
            t[0] = v[it].x, t[1] = v[it].y, t[2] = v[it].z, t[3] = v[it].w;
        }
    }
    __syncthreads();
    const int r0 = tid / VPW, vc = tid % VPW;
    uint32_t *dst = p.b + (i0 + r0) * p.R + j0 + vc * N;
#pragma unroll
    for (int it = 0; it < WITER; ++it) {
        const int r = r0 + it * WSTEP;
        uint4 v = make_uint4(tile[vc * N][r], tile[vc * N + 1][r], tile[vc * N + 2][r],
                             tile[vc * N + 3][r]);
        *reinterpret_cast<uint4 *>(dst + (int64_t)it * WSTEP * p.R) = v;
    }
}

/* ---- swz: 4x4 register transposes, XOR-swizzled 16-byte shared layout ---- */
__device__ __forceinline__ void tr4(const uint4 (&a)[4], uint4 (&o)[4])
{
    o[0] = make_uint4(a[0].x, a[1].x, a[2].x, a[3].x);
    o[1] = make_uint4(a[0].y, a[1].y, a[2].y, a[3].y);
    o[2] = make_uint4(a[0].z, a[1].z, a[2].z, a[3].z);
    o[3] = make_uint4(a[0].w, a[1].w, a[2].w, a[3].w);
}

/* smem: uint4 s[TJ][TI/4]; vector (j, ib) at s[j][ib ^ ((j >> 2) & 7)]. */
template <int TI, int TJ, int T>
__device__ __forceinline__ void swz_store_tile(const uint4 *s, const prob &p, int64_t i0,
                                               int64_t j0)
{
    enum { VI = TI / 4, VJ = TJ / 4, SIB = T / VJ, SIT = VI / SIB };
    static_assert(T % VJ == 0 && VI % SIB == 0, "store split");
    const int tid = threadIdx.x, jb = tid % VJ, ib0 = tid / VJ;
    uint32_t *dst = p.b + (i0 + 4 * ib0) * p.R + j0 + 4 * jb;
#pragma unroll
    for (int it = 0; it < SIT; ++it) {
        const int ib = ib0 + it * SIB;
        uint4 a[4], o[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) a[k] = s[(4 * jb + k) * VI + (ib ^ (jb & 7))];
        tr4(a, o);
#pragma unroll
        for (int m = 0; m < 4; ++m)
            *reinterpret_cast<uint4 *>(dst + ((int64_t)4 * it * SIB + m) * p.R) = o[m];
    }
}

template <int TI, int TJ, int T, int MINB, int IFAST>
__global__ __launch_bounds__(T, MINB) void swz(prob p)
{
    enum { VI = TI / 4, LROWS = T / VI, LIT = TJ / LROWS };
    static_assert(VI % 8 == 0 && T % VI == 0 && TJ % LROWS == 0, "load split");
    extern __shared__ uint4 s[]; /* TJ * VI vectors */
    const int tid = threadIdx.x;
    const int64_t i0 = tile_i<IFAST>() * TI, j0 = tile_j<IFAST>() * TJ;
    const int ib = tid % VI, jr = tid / VI;
    const uint4 *src = reinterpret_cast<const uint4 *>(p.a + (j0 + jr) * p.C + i0) + ib;
    const int64_t step = (int64_t)LROWS * p.C / 4;
    uint4 v[LIT];
#pragma unroll
    for (int it = 0; it < LIT; ++it) v[it] = src[it * step];
#pragma unroll
    for (int it = 0; it < LIT; ++it) {
        const int j = jr + it * LROWS;
        s[j * VI + (ib ^ ((j >> 2) & 7))] = v[it];
    }
    __syncthreads();
    swz_store_tile<TI, TJ, T>(s, p, i0, j0);
}

/* ---- cpa: cp.async into the swizzled layout, persistent, S stages ---- */
__device__ __forceinline__ void cp16(void *smem, const void *g)
{
    const unsigned sa = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(g));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int K> __device__ __forceinline__ void cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(K));
}

template <int TI, int TJ, int T>
__device__ __forceinline__ void cpa_issue(uint4 *s, const prob &p, int64_t i0, int64_t j0)
{
    enum { VI = TI / 4, LROWS = T / VI, LIT = TJ / LROWS };
    const int tid = threadIdx.x, ib = tid % VI, jr = tid / VI;
    const uint4 *src = reinterpret_cast<const uint4 *>(p.a + (j0 + jr) * p.C + i0) + ib;
    const int64_t step = (int64_t)LROWS * p.C / 4;
#pragma unroll
    for (int it = 0; it < LIT; ++it) {
        const int j = jr + it * LROWS;
        cp16(&s[j * VI + (ib ^ ((j >> 2) & 7))], src + it * step);
    }
}

template <int TI, int TJ, int T, int S, int IFAST>
__global__ __launch_bounds__(T) void cpa(prob p, int64_t tiles_j, int64_t ntiles)
{
    enum { VI = TI / 4, STAGE = TJ * VI };
    extern __shared__ uint4 sm[];
    const int64_t tiles_i = ntiles / tiles_j;
    auto I0 = [&](int64_t t) { return (IFAST ? t % tiles_i : t / tiles_j) * TI; };
    auto J0 = [&](int64_t t) { return (IFAST ? t / tiles_i : t % tiles_j) * TJ; };
    const int64_t G = gridDim.x, b = blockIdx.x;
#pragma unroll
    for (int k = 0; k < S - 1; ++k) {
        const int64_t t = b + k * G;
        if (t < ntiles) cpa_issue<TI, TJ, T>(sm + k * STAGE, p, I0(t), J0(t));
        cp_commit();
    }
    int stage = 0;
    for (int64_t n = 0;; ++n) {
        const int64_t t = b + n * G;
        if (t >= ntiles) break;
        const int64_t tn = t + (int64_t)(S - 1) * G;
        const int ns = (stage + S - 1) % S;
        if (tn < ntiles) cpa_issue<TI, TJ, T>(sm + ns * STAGE, p, I0(tn), J0(tn));
        cp_commit();
        cp_wait<S - 1>();
        __syncthreads();
        swz_store_tile<TI, TJ, T>(sm + stage * STAGE, p, I0(t), J0(t));
        __syncthreads();
        stage = (stage + 1) % S;
    }
    cp_wait<0>();
}

/* ---- copy (ceiling) and the checker ---- */
__global__ void copy_kernel(const uint4 *__restrict__ a, uint4 *__restrict__ b, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        b[i] = a[i];
}
__global__ void fill_kernel(uint32_t *a, int64_t n, uint32_t seed)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + seed;
        x ^= x >> 31;
        x *= 0xBF58476D1CE4E5B9ull;
        x ^= x >> 29;
        a[i] = ((uint32_t)x & 0x807FFFFFu) | 0x3F000000u; /* finite floats for geam */
    }
}
template <typename U> __global__ void check_kernel(prob p, unsigned long long *bad)
{
    const int64_t n = p.R * p.C;
    const U *a = reinterpret_cast<const U *>(p.a);
    const U *b = reinterpret_cast<const U *>(p.b);
    unsigned long long mine = 0;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = k / p.R, j = k % p.R; /* b[i * R + j] == a[j * C + i] */
        mine += b[k] != a[j * p.C + i];
    }
    if (mine) atomicAdd(bad, mine);
}

struct variant {
    std::string name;
    void (*launch)(const prob &, cudaStream_t);
    bool any_shape; /* false: sizes must be multiples of 128 */
    int elems;      /* bit mask of the element sizes it runs */
};

template <typename F> static void by_elem(int elem, F f)
{
    switch (elem) {
    case 1: f(uint8_t()); break;
    case 2: f(uint16_t()); break;
    case 4: f(uint32_t()); break;
    default: f(uint64_t()); break;
    }
}

template <int TI, int TJ, int IF> void launch_col(const prob &p, cudaStream_t s)
{
    col<TI, TJ, IF><<<grid_of<IF>(p.C / TI, p.R / TJ), 256, 0, s>>>(p);
}
template <int TI, int TJ, int T, int MINB, int IF> void launch_swz(const prob &p, cudaStream_t s)
{
    const size_t smem = (size_t)TJ * TI * 4;
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(swz<TI, TJ, T, MINB, IF>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        set = true;
    }
    swz<TI, TJ, T, MINB, IF><<<grid_of<IF>(p.C / TI, p.R / TJ), T, smem, s>>>(p);
}
template <int TI, int TJ, int T, int S, int IF> void launch_cpa(const prob &p, cudaStream_t s)
{
    static int grid = 0;
    const size_t smem = (size_t)S * TJ * TI * 4;
    if (!grid) {
        CK(cudaFuncSetAttribute(cpa<TI, TJ, T, S, IF>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)smem));
        int per_sm = 0, dev = 0, sms = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cpa<TI, TJ, T, S, IF>, T, smem));
        CK(cudaGetDevice(&dev));
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        grid = per_sm * sms;
        fprintf(stderr, "cpa<%d,%d,%d,%d>: %d blocks per SM, grid %d\n", TI, TJ, T, S, per_sm,
                grid);
    }
    const int64_t tiles_j = p.R / TJ, ntiles = tiles_j * (p.C / TI);
    cpa<TI, TJ, T, S, IF>
        <<<(unsigned)std::min<int64_t>(grid, ntiles), T, smem, s>>>(p, tiles_j, ntiles);
}
template <int IF> void launch_padded(const prob &p, cudaStream_t s)
{
    padded32<IF><<<grid_of<IF>(p.C / 32, p.R / 32), dim3(32, 8), 0, s>>>(p);
}

/* B = A^T as the common layer hands it to the backend: out(i, j) = in(i, j) with i along A's
 * columns; in.rs = 1, in.cs = C; out.rs = R, out.cs = 1. */
static duet_device_props g_props;
static dt_copy2d copy_of(const prob &p)
{
    dt_copy2d t;
    memset(&t, 0, sizeof t);
    t.elem = (size_t)p.elem;
    t.rows = p.C;
    t.cols = p.R;
    t.batch = 1;
    t.in.base = const_cast<uint32_t *>(p.a);
    t.in.rs = 1;
    t.in.cs = p.C;
    t.in.bs = p.R * p.C;
    t.out.base = p.b;
    t.out.rs = p.R;
    t.out.cs = 1;
    t.out.bs = p.R * p.C;
    return t;
}
void launch_duet_auto(const prob &p, cudaStream_t s)
{
    const dt_copy2d t = copy_of(p);
    duet_auto_result r;
    by_elem(p.elem, [&](auto u) { CK(transpose_auto_launch<decltype(u)>(&t, &g_props, s, &r)); });
    static int64_t said_r = -1, said_c = -1;
    if (said_r != p.R || said_c != p.C) printf("  (duet AUTO runs %s)\n", r.kernel);
    said_r = p.R, said_c = p.C;
}
template <int TJ> void launch_duet_tile(const prob &p, cudaStream_t s)
{
    const dt_copy2d t = copy_of(p);
    duet_auto_result r;
    by_elem(p.elem,
            [&](auto u) { CK((transpose_tile_launch<decltype(u), TJ>(&t, &g_props, s, &r))); });
}
void launch_duet_pack(const prob &p, cudaStream_t s)
{
    const dt_copy2d t = copy_of(p);
    duet_auto_result r;
    if (p.elem == 1)
        CK(transpose_pack_launch<uint8_t>(&t, &g_props, s, &r));
    else
        CK(transpose_pack_launch<uint16_t>(&t, &g_props, s, &r));
}
/* The vector kernel with a 128 x 128 tile: AUTO for 1- and 2-byte elements before the word
 * kernel. */
void launch_duet_vec128(const prob &p, cudaStream_t s)
{
    const dt_copy2d t = copy_of(p);
    const dim3 grid((unsigned)dt_ceil_div(t.cols, 128), (unsigned)dt_ceil_div(t.rows, 128), 1);
    const auto go = [&](auto u) {
        using U = decltype(u);
        const int vec = duet_aligned16(t.in.base, sizeof(U), t.in.cs, 0) &&
                        duet_aligned16(t.out.base, sizeof(U), t.out.rs, 0);
        transpose_auto_try<U, 128, 128>(128, 128, grid, dim3(TRANSPOSE_AUTO_THREADS), s,
                                        duet_copy_args_of<U>(&t), vec);
    };
    if (p.elem == 1)
        go(uint8_t());
    else
        go(uint16_t());
}
void launch_duet_padded(const prob &p, cudaStream_t s)
{
    const dt_copy2d t = copy_of(p);
    duet_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.block.x = TRANSPOSE_PAD_DIM;
    cfg.block.y = TRANSPOSE_PAD_ROWS;
    cfg.block.z = 1;
    cfg.grid.x = (uint32_t)dt_ceil_div(t.cols, TRANSPOSE_PAD_DIM);
    cfg.grid.y = (uint32_t)dt_ceil_div(t.rows, TRANSPOSE_PAD_DIM);
    cfg.grid.z = 1;
    cfg.shared_bytes = TRANSPOSE_PAD_DIM * (TRANSPOSE_PAD_DIM + 1) * p.elem;
    by_elem(p.elem, [&](auto u) { CK(transpose_tiled_padded_launch<decltype(u)>(&t, cfg, s)); });
}

static cublasHandle_t g_blas;
void launch_geam(const prob &p, cudaStream_t s)
{
    (void)s;
    const float one = 1.0f, zero = 0.0f;
    /* column-major view: A is C x R (ld C); B = A^T is R x C (ld R) */
    const double d1 = 1.0, d0 = 0.0;
    if (p.elem == 8)
        cublasDgeam(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)p.R, (int)p.C, &d1,
                    reinterpret_cast<const double *>(p.a), (int)p.C, &d0,
                    reinterpret_cast<const double *>(p.b), (int)p.R,
                    reinterpret_cast<double *>(p.b), (int)p.R);
    else
        cublasSgeam(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)p.R, (int)p.C, &one,
                    reinterpret_cast<const float *>(p.a), (int)p.C, &zero,
                    reinterpret_cast<const float *>(p.b), (int)p.R, reinterpret_cast<float *>(p.b),
                    (int)p.R);
}

int main(int argc, char **argv)
{
    int reps = 30;
    std::vector<int> elems = {1, 2, 4, 8};
    bool odd_only = false; /* --odd: only the sizes whose rows start off 16-byte boundaries */
    const char *csv_path = "transpose_lab.csv";
    for (int k = 1; k < argc; ++k) {
        if (!strcmp(argv[k], "--reps") && k + 1 < argc)
            reps = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--csv") && k + 1 < argc)
            csv_path = argv[++k];
        else if (!strcmp(argv[k], "--elem") && k + 1 < argc)
            elems = {atoi(argv[++k])};
        else if (!strcmp(argv[k], "--odd"))
            odd_only = true;
    }
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    if (cublasCreate(&g_blas) != CUBLAS_STATUS_SUCCESS) return 2;
    cublasSetStream(g_blas, st);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    memset(&g_props, 0, sizeof g_props);
    snprintf(g_props.arch, sizeof g_props.arch, "sm_%d%d", prop.major, prop.minor);
    g_props.max_grid_dims[0] = prop.maxGridSize[0];
    g_props.max_grid_dims[1] = prop.maxGridSize[1];
    g_props.max_grid_dims[2] = prop.maxGridSize[2];
    FILE *csv = fopen(csv_path, "w");
    if (csv) fprintf(csv, "elem,R,C,kernel,ms,gbs,vs_copy,vs_geam\n");

    std::vector<variant> vs = {
        {"cublas geam", launch_geam, true, 4 | 8},
        {"duet AUTO", launch_duet_auto, true, 1 | 2 | 4 | 8},
        {"duet pack 32x32 words", launch_duet_pack, false, 1 | 2},
        {"duet vector 128x128", launch_duet_vec128, true, 1 | 2},
        {"duet tile 32x32", launch_duet_tile<32>, true, 4 | 8},
        {"duet tile 32x64", launch_duet_tile<64>, true, 1 | 2 | 4 | 8},
        {"duet tile 32x128", launch_duet_tile<128>, true, 1 | 2 | 4 | 8},
        {"duet TILED_PADDED", launch_duet_padded, true, 1 | 2 | 4 | 8},
        {"padded32 j-fast", launch_padded<0>, false, 4},
        {"col<64,128> j-fast", launch_col<64, 128, 0>, false, 4},
        {"swz<64,64,128> i-fast", launch_swz<64, 64, 128, 8, 1>, false, 4},
        {"cpa<128,128,2> j-fast", launch_cpa<128, 128, 256, 2, 0>, false, 4},
    };
    /* The last three have rows that start off 16-byte (and 32-byte sector) boundaries. */
    std::vector<std::array<int64_t, 2>> sizes = {{8192, 8192},   {16384, 16384}, {12800, 12800},
                                                 {8192, 32768},  {32768, 8192},  {16383, 16385},
                                                 {46341, 46341}, {8191, 8193}};
    unsigned long long *bad;
    CK(cudaMalloc(&bad, sizeof *bad));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int failures = 0;
    if (odd_only) sizes.erase(sizes.begin(), sizes.begin() + 5);
    for (int elem : elems)
        for (auto &sz : sizes) {
            prob p;
            p.R = sz[0];
            p.C = sz[1];
            p.elem = elem;
            const int64_t n = p.R * p.C, words = (n * elem + 15) / 16 * 4;
            uint32_t *a, *b;
            CK(cudaMalloc(&a, words * 4));
            CK(cudaMalloc(&b, words * 4));
            fill_kernel<<<2048, 256, 0, st>>>(a, words, 12345u + (uint32_t)p.R);
            p.a = a;
            p.b = b;
            auto time_it = [&](auto &&fn) {
                std::vector<float> t;
                for (int r = 0; r < 5 + reps; ++r) {
                    CK(cudaEventRecord(e0, st));
                    fn();
                    CK(cudaEventRecord(e1, st));
                    CK(cudaEventSynchronize(e1));
                    float ms;
                    CK(cudaEventElapsedTime(&ms, e0, e1));
                    if (r >= 5) t.push_back(ms);
                }
                std::sort(t.begin(), t.end());
                return (double)t[t.size() / 2];
            };
            const double bytes = 2.0 * n * elem;
            const double copy_ms = time_it([&] {
                copy_kernel<<<prop.multiProcessorCount * 8, 512, 0, st>>>(
                    reinterpret_cast<const uint4 *>(a), reinterpret_cast<uint4 *>(b), words / 4);
            });
            const double copy_memcpy_ms = time_it(
                [&] { CK(cudaMemcpyAsync(b, a, words * 4, cudaMemcpyDeviceToDevice, st)); });
            const double ceil_ms = std::min(copy_ms, copy_memcpy_ms);
            printf("\n%lld x %lld (%d B): copy kernel %.0f GB/s, cudaMemcpy %.0f GB/s\n",
                   (long long)p.R, (long long)p.C, elem, bytes / copy_ms / 1e6,
                   bytes / copy_memcpy_ms / 1e6);
            double geam_ms = 0;
            const bool multiple = p.R % 128 == 0 && p.C % 128 == 0;
            for (auto &v : vs) {
                if (!(v.elems & elem) || (!multiple && !v.any_shape)) continue;
                CK(cudaMemsetAsync(b, 0, words * 4, st));
                const double ms = time_it([&] { v.launch(p, st); });
                CK(cudaGetLastError());
                CK(cudaMemsetAsync(bad, 0, sizeof *bad, st));
                by_elem(elem,
                        [&](auto u) { check_kernel<decltype(u)><<<2048, 256, 0, st>>>(p, bad); });
                unsigned long long nbad = 0;
                CK(cudaMemcpyAsync(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost, st));
                CK(cudaStreamSynchronize(st));
                if (v.name == "cublas geam") geam_ms = ms;
                const double gbs = bytes / ms / 1e6;
                printf("  %-22s %8.3f ms %6.0f GB/s  %5.1f%% of copy  %5.3fx geam%s\n",
                       v.name.c_str(), ms, gbs, 100.0 * ceil_ms / ms, geam_ms / ms,
                       nbad ? "  WRONG" : "");
                if (nbad) ++failures;
                if (csv)
                    fprintf(csv, "%d,%lld,%lld,%s,%.4f,%.1f,%.4f,%.4f\n", elem, (long long)p.R,
                            (long long)p.C, v.name.c_str(), ms, gbs, ceil_ms / ms, geam_ms / ms);
            }
            CK(cudaFree(a));
            CK(cudaFree(b));
        }
    if (csv) fclose(csv);
    printf("\n%d wrong results\n", failures);
    return failures ? 1 : 0;
}
