// transpose_inplace_lab.cu - standalone timing of square in-place transpose designs vs a copy.
//
// Not part of the library: the place where the square in-place kernel's shape is chosen before
// it goes into kernels/transpose_inplace.cuh. Built by lab/CMakeLists.txt (-DDUET_BUILD_LAB=ON,
// cuda backend), or by hand:
//   nvcc -std=c++17 -O3 -arch=sm_90 -Ikernels -Isrc -Isrc/common -Iinclude -Ilab
//        lab/transpose_inplace_lab.cu -o build-lab/transpose_inplace_lab
//   build-lab/transpose_inplace_lab [--list] [--only NAME] [--reps N] [--n N] [--csv FILE]
//                                   [--no-sweep]
// lab/transpose_inplace_lab.sh runs every variant in a process of its own (one variant's
// fault cannot stop the others) and gathers one CSV.
//
// Each variant transposes an n x n matrix (default 16384; 4-byte variants 1 GiB, 8-byte 2 GiB,
// far beyond L2) in place. Before timing, a sweep of small and odd shapes (edge tiles, ld > n,
// batches of 3, views off 16-byte alignment) checks every element on the device against the
// expected transposed bytes, and that a second run restores the original (the padding between
// n and ld untouched). The timed size is checked the same way after timing. Times: medians of
// --reps runs (default 30) after 5 warm-up runs, CUDA events. GB/s counts bytes read + written
// (2 n^2 elem); "of copy" is against the faster of a copy kernel and cudaMemcpy of n^2 elem
// bytes.
//
// Variants (T: tile edge):
//   lib tile<T>         the library's transpose_inplace_square_kernel as the launcher runs it
//                       (32 x 8 threads, folded nt x (nt / 2 + 1) grid); T = 64 is today's
//                       4-byte default, T = 32 today's 8-byte one (and (b) for 4 bytes)
//   lib vec<T>          transpose_inplace_square_vec_kernel (lab/transpose_inplace_variants.cuh):
//                       16-byte accesses in full, aligned tile pairs
//   step<T,MINB>        (a) the library's transpose_inplace_square_step_kernel: the tile kernel
//                       with one pointer per thread and tile stepped by a loop-invariant stride,
//                       no bounds tests in full pairs, MINB blocks an SM
//   pipe<T,TH,S,MINB>   (c, d, e) transpose_inplace_square_pipe_kernel (lab/
//                       transpose_inplace_variants.cuh): a
//                       persistent grid, S shared stages of a tile pair filled by cp.async while
//                       the previous pair is stored, 16-byte accesses both ways with an
//                       XOR-swizzled shared layout and N x N register transposes, TH threads
#include "transpose_inplace.cuh"
#include "transpose_inplace_variants.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

/* A CUDA call that fails ends this variant (the caller prints FAIL and the process moves on,
 * or exits when the context is lost). */
struct lab_error {
    std::string what;
};
#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            char b_[512];                                                                          \
            snprintf(b_, sizeof b_, "%s:%d %s: %s", __FILE__, __LINE__, #x,                        \
                     cudaGetErrorString(e_));                                                      \
            throw lab_error{b_};                                                                   \
        }                                                                                          \
    } while (0)

static int g_sms = 132;

/* ---- launches ------------------------------------------------------------------------------- */

/* The folded grid of the library's launcher (dt_fold_grid clamps y and z to 65535). */
static dim3 folded(int64_t n, int T, int64_t batch)
{
    const int64_t nt = (n + T - 1) / T;
    return dim3((unsigned)nt, (unsigned)std::min<int64_t>(nt / 2 + 1, 65535),
                (unsigned)std::min<int64_t>(batch, 65535));
}

typedef std::function<void(void *, int64_t, int64_t, int64_t, int64_t, cudaStream_t)> launch_fn;

template <typename U, int T> static launch_fn lib_tile()
{
    return [](void *a, int64_t n, int64_t ld, int64_t bs, int64_t batch, cudaStream_t s) {
        transpose_inplace_square_kernel<U, T>
            <<<folded(n, T, batch), dim3(IP_SQ_X, IP_SQ_Y), 0, s>>>((U *)a, n, ld, bs, batch);
        CK(cudaGetLastError());
    };
}

template <typename U, int T> static launch_fn lib_vec()
{
    return [](void *a, int64_t n, int64_t ld, int64_t bs, int64_t batch, cudaStream_t s) {
        const int vec =
            ((uintptr_t)a % 16 == 0 && (ld * sizeof(U)) % 16 == 0 && (bs * sizeof(U)) % 16 == 0);
        transpose_inplace_square_vec_kernel<U, T>
            <<<folded(n, T, batch), IP_THREADS, 0, s>>>((U *)a, n, ld, bs, batch, vec);
        CK(cudaGetLastError());
    };
}

template <typename U, int T, int MINB> static launch_fn step()
{
    return [](void *a, int64_t n, int64_t ld, int64_t bs, int64_t batch, cudaStream_t s) {
        transpose_inplace_square_step_kernel<U, T, MINB>
            <<<folded(n, T, batch), dim3(IP_SQ_X, IP_SQ_Y), 0, s>>>((U *)a, n, ld, bs, batch);
        CK(cudaGetLastError());
    };
}

template <typename U, int T, int TH, int S, int MINB> static launch_fn pipe()
{
    return [](void *a, int64_t n, int64_t ld, int64_t bs, int64_t batch, cudaStream_t s) {
        const auto k = transpose_inplace_square_pipe_kernel<U, T, TH, S, MINB>;
        const size_t shared = (size_t)S * 2 * T * T * sizeof(U);
        static int per_sm = -1;
        if (per_sm < 0) {
            CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, TH, shared));
            cudaFuncAttributes fa;
            CK(cudaFuncGetAttributes(&fa, k));
            printf("  (pipe T%d TH%d S%d B%d, %zu-byte: %d regs, %zu B shared, %d blocks/SM)\n", T,
                   TH, S, MINB, sizeof(U), fa.numRegs, shared, per_sm);
            if (per_sm < 1) throw lab_error{"no block fits an SM"};
        }
        const int64_t nt = (n + T - 1) / T, pairs = nt * (nt + 1) / 2 * batch;
        const int vec =
            ((uintptr_t)a % 16 == 0 && (ld * sizeof(U)) % 16 == 0 && (bs * sizeof(U)) % 16 == 0);
        k<<<(unsigned)std::min<int64_t>(pairs, (int64_t)per_sm * g_sms), TH, shared, s>>>(
            (U *)a, n, ld, bs, batch, vec);
        CK(cudaGetLastError());
    };
}

struct variant {
    std::string name;
    int elem;
    launch_fn launch;
};

static std::vector<variant> variants()
{
    return {
        {"lib tile64", 4, lib_tile<uint32_t, 64>()},
        {"lib tile32", 4, lib_tile<uint32_t, 32>()},
        {"lib vec64", 4, lib_vec<uint32_t, 64>()},
        {"step T64 B3", 4, step<uint32_t, 64, 3>()},
        {"step T64 B4", 4, step<uint32_t, 64, 4>()},
        {"step T32 B8", 4, step<uint32_t, 32, 8>()},
        {"pipe T64 TH256 S2 B3", 4, pipe<uint32_t, 64, 256, 2, 3>()},
        {"pipe T64 TH256 S1 B4", 4, pipe<uint32_t, 64, 256, 1, 4>()},
        {"pipe T64 TH256 S3 B2", 4, pipe<uint32_t, 64, 256, 3, 2>()},
        {"pipe T64 TH128 S2 B3", 4, pipe<uint32_t, 64, 128, 2, 3>()},
        {"pipe T32 TH64 S2 B16", 4, pipe<uint32_t, 32, 64, 2, 16>()},
        {"pipe T32 TH64 S3 B12", 4, pipe<uint32_t, 32, 64, 3, 12>()},
        {"lib tile32", 8, lib_tile<uint64_t, 32>()},
        {"lib vec32", 8, lib_vec<uint64_t, 32>()},
        {"step T32 B4", 8, step<uint64_t, 32, 4>()},
        {"step T32 B6", 8, step<uint64_t, 32, 6>()},
        {"pipe T32 TH256 S2 B3", 8, pipe<uint64_t, 32, 256, 2, 3>()},
        {"pipe T32 TH256 S1 B4", 8, pipe<uint64_t, 32, 256, 1, 4>()},
        {"pipe T32 TH256 S3 B3", 8, pipe<uint64_t, 32, 256, 3, 3>()},
        {"pipe T32 TH128 S2 B6", 8, pipe<uint64_t, 32, 128, 2, 6>()},
        {"pipe T64 TH256 S2 B1", 8, pipe<uint64_t, 64, 256, 2, 1>()},
        {"pipe T16 TH64 S2 B16", 8, pipe<uint64_t, 16, 64, 2, 16>()},
        {"pipe T128 TH64 S2 B3", 1, pipe<uint8_t, 128, 64, 2, 3>()},
        {"pipe T64 TH64 S2 B6", 2, pipe<uint16_t, 64, 64, 2, 6>()},
        {"lib tile64", 1, lib_tile<uint8_t, 64>()},
        {"lib tile64", 2, lib_tile<uint16_t, 64>()},
    };
}

/* ---- data and checks ------------------------------------------------------------------------ */

__global__ void fill_kernel(unsigned char *a, int64_t bytes, uint32_t seed)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < bytes;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + seed;
        x ^= x >> 31;
        x *= 0xBF58476D1CE4E5B9ull;
        x ^= x >> 29;
        a[i] = (unsigned char)(x >> 24);
    }
}

/* Counts the elements of batch n x n matrices (row stride ld, batch stride bs) where
 * a(i, j) != o(j, i) (flip) or a(i, j) != o(i, j) (!flip), and every padding element
 * (j >= n, within the matrix's ld) that differs from o. */
template <typename U>
__global__ void check_kernel(const U *a, const U *o, int64_t n, int64_t ld, int64_t bs,
                             int64_t batch, int flip, unsigned long long *bad)
{
    const int64_t per = n * ld, cnt = per * batch;
    unsigned long long mine = 0;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < cnt;
         k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t z = k / per, r = k - z * per, i = r / ld, j = r - i * ld;
        const int64_t at = z * bs + i * ld + j;
        const int64_t from = (flip && j < n) ? z * bs + j * ld + i : at;
        mine += a[at] != o[from];
    }
    if (mine) atomicAdd(bad, mine);
}

struct lab {
    cudaStream_t st;
    unsigned long long *bad;
    cudaEvent_t e0, e1;
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

static unsigned long long count_bad(lab &L, int elem, const void *a, const void *o, int64_t n,
                                    int64_t ld, int64_t bs, int64_t batch, int flip)
{
    CK(cudaMemsetAsync(L.bad, 0, sizeof *L.bad, L.st));
    by_elem(elem, [&](auto u) {
        using U = decltype(u);
        check_kernel<U><<<4 * g_sms, 256, 0, L.st>>>((const U *)a, (const U *)o, n, ld, bs, batch,
                                                     flip, L.bad);
    });
    CK(cudaGetLastError());
    unsigned long long nbad = 0;
    CK(cudaMemcpyAsync(&nbad, L.bad, sizeof nbad, cudaMemcpyDeviceToHost, L.st));
    CK(cudaStreamSynchronize(L.st));
    return nbad;
}

/* One run must transpose, a second restore: the number of wrong elements over both. The
 * matrices start `off` elements past a (off > 0: views off 16-byte alignment). */
static unsigned long long run_twice(lab &L, const variant &v, unsigned char *a, unsigned char *o,
                                    int64_t n, int64_t ld, int64_t bs, int64_t batch, int64_t off)
{
    const int64_t bytes = ((batch - 1) * bs + n * ld + off) * v.elem;
    fill_kernel<<<4 * g_sms, 256, 0, L.st>>>(o, bytes, (uint32_t)(n * 7919 + ld + batch));
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(a, o, bytes, cudaMemcpyDeviceToDevice, L.st));
    unsigned char *ao = a + off * v.elem, *oo = o + off * v.elem;
    v.launch(ao, n, ld, bs, batch, L.st);
    unsigned long long nbad = count_bad(L, v.elem, ao, oo, n, ld, bs, batch, 1);
    v.launch(ao, n, ld, bs, batch, L.st);
    nbad += count_bad(L, v.elem, ao, oo, n, ld, bs, batch, 0);
    return nbad;
}

/* ---- main ----------------------------------------------------------------------------------- */

static double median_ms(lab &L, int reps, const std::function<void()> &fn)
{
    std::vector<float> t;
    for (int r = 0; r < 5 + reps; ++r) {
        CK(cudaEventRecord(L.e0, L.st));
        fn();
        CK(cudaEventRecord(L.e1, L.st));
        CK(cudaEventSynchronize(L.e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, L.e0, L.e1));
        if (r >= 5) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return (double)t[t.size() / 2];
}

__global__ void copy_kernel(const uint4 *__restrict__ a, uint4 *__restrict__ b, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        b[i] = a[i];
}

/* Small and odd shapes: {n, ld, batch, offset in elements, batch stride past n ld}. An odd
 * batch stride puts every matrix after the first off 16-byte alignment (the element-wise
 * paths); 16 keeps them aligned (the vector paths with ld > n and batches). */
static const int64_t g_sweep[][5] = {
    {1, 1, 1, 0, 0},       {2, 2, 2, 0, 3},       {7, 7, 1, 0, 0},       {31, 33, 1, 0, 0},
    {32, 32, 3, 0, 3},     {33, 33, 1, 0, 0},     {64, 64, 1, 0, 0},     {64, 68, 2, 0, 3},
    {65, 65, 2, 0, 3},     {100, 104, 3, 0, 3},   {127, 127, 1, 1, 0},   {128, 128, 1, 0, 0},
    {129, 132, 1, 0, 0},   {256, 256, 2, 0, 16},  {257, 260, 1, 0, 0},   {512, 528, 3, 0, 16},
    {1000, 1000, 1, 0, 0}, {1024, 1024, 3, 0, 0}, {1030, 1040, 1, 2, 0}, {2048, 2048, 1, 0, 0},
    {4096, 4112, 1, 0, 0}};

int main(int argc, char **argv)
{
    int reps = 30;
    int64_t N = 16384;
    bool sweep = true, list = false;
    std::string only;
    const char *csv_path = "transpose_inplace_lab.csv";
    for (int k = 1; k < argc; ++k) {
        if (!strcmp(argv[k], "--reps") && k + 1 < argc)
            reps = std::max(1, atoi(argv[++k]));
        else if (!strcmp(argv[k], "--n") && k + 1 < argc)
            N = atoll(argv[++k]);
        else if (!strcmp(argv[k], "--csv") && k + 1 < argc)
            csv_path = argv[++k];
        else if (!strcmp(argv[k], "--only") && k + 1 < argc)
            only = argv[++k];
        else if (!strcmp(argv[k], "--no-sweep"))
            sweep = false;
        else if (!strcmp(argv[k], "--list"))
            list = true;
        else {
            fprintf(stderr, "unknown argument %s\n", argv[k]);
            return 2;
        }
    }
    const std::vector<variant> vs = variants();
    if (list) {
        for (auto &v : vs) printf("%d:%s\n", v.elem, v.name.c_str());
        return 0;
    }
    lab L;
    int64_t maxelem = 0;
    for (auto &v : vs)
        if (only.empty() || only == std::to_string(v.elem) + ":" + v.name)
            maxelem = std::max<int64_t>(maxelem, v.elem);
    if (!maxelem) {
        fprintf(stderr, "no variant named %s (--list)\n", only.c_str());
        return 2;
    }
    unsigned char *a = nullptr, *o = nullptr, *c = nullptr;
    /* The timed matrix or the largest sweep shape, whichever is larger, plus slack. */
    const int64_t bytes =
        std::max<int64_t>(N * N, 4096 * 4112 + 3 * (1024 * 1024)) * maxelem + 4096;
    try {
        CK(cudaStreamCreate(&L.st));
        CK(cudaMalloc(&L.bad, sizeof *L.bad));
        CK(cudaEventCreate(&L.e0));
        CK(cudaEventCreate(&L.e1));
        cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, 0));
        g_sms = prop.multiProcessorCount;
        printf("%s, %d SMs, n = %lld, %d reps\n", prop.name, g_sms, (long long)N, reps);
        CK(cudaMalloc(&a, bytes));
        CK(cudaMalloc(&o, bytes));
        CK(cudaMalloc(&c, bytes));
    } catch (lab_error &e) {
        fprintf(stderr, "setup failed: %s\n", e.what.c_str());
        return 2;
    }
    FILE *had = fopen(csv_path, "r");
    if (had) fclose(had);
    FILE *csv = fopen(csv_path, "a");
    if (csv && !had) fprintf(csv, "elem,n,kernel,ms,gbs,copy_gbs,vs_copy,status\n");
    int failures = 0;
    for (auto &v : vs) {
        if (!only.empty() && only != std::to_string(v.elem) + ":" + v.name) continue;
        const double tbytes = 2.0 * (double)N * (double)N * v.elem;
        double ms = 0, copy_gbs = 0;
        std::string status = "ok";
        try {
            if (sweep)
                for (auto &sh : g_sweep) {
                    const int64_t n = sh[0], ld = sh[1], batch = sh[2], off = sh[3];
                    const int64_t bs = n * ld + sh[4];
                    const unsigned long long nbad = run_twice(L, v, a, o, n, ld, bs, batch, off);
                    if (nbad) {
                        char b[160];
                        snprintf(b, sizeof b, "WRONG n=%lld ld=%lld batch=%lld off=%lld: %llu",
                                 (long long)n, (long long)ld, (long long)batch, (long long)off,
                                 nbad);
                        status = b;
                        break;
                    }
                }
            if (status == "ok") {
                const int64_t mb = N * N * v.elem;
                const double copy_ms = median_ms(L, reps, [&] {
                    copy_kernel<<<g_sms * 8, 512, 0, L.st>>>((const uint4 *)o, (uint4 *)c, mb / 16);
                });
                const double memcpy_ms = median_ms(L, reps, [&] {
                    CK(cudaMemcpyAsync(c, o, mb, cudaMemcpyDeviceToDevice, L.st));
                });
                copy_gbs = tbytes / std::min(copy_ms, memcpy_ms) / 1e6;
                fill_kernel<<<4 * g_sms, 256, 0, L.st>>>(o, mb, 4242u);
                CK(cudaGetLastError());
                CK(cudaMemcpyAsync(a, o, mb, cudaMemcpyDeviceToDevice, L.st));
                ms = median_ms(L, reps, [&] { v.launch(a, N, N, N * N, 1, L.st); });
                const unsigned long long nbad =
                    count_bad(L, v.elem, a, o, N, N, N * N, 1, (5 + reps) % 2);
                if (nbad) status = "WRONG at n=" + std::to_string(N) + ": " + std::to_string(nbad);
            }
        } catch (lab_error &e) {
            status = "FAIL " + e.what;
        }
        if (status != "ok") ++failures;
        const double gbs = ms > 0 ? tbytes / ms / 1e6 : 0;
        printf("%d B  %-20s %8.3f ms %6.0f GB/s  copy %6.0f GB/s  %6.3fx of copy  %s\n", v.elem,
               v.name.c_str(), ms, gbs, copy_gbs, copy_gbs > 0 ? gbs / copy_gbs : 0.0,
               status.c_str());
        fflush(stdout);
        if (csv) {
            for (auto &ch : status)
                if (ch == ',') ch = ';';
            fprintf(csv, "%d,%lld,%s,%.4f,%.1f,%.1f,%.4f,%s\n", v.elem, (long long)N,
                    v.name.c_str(), ms, gbs, copy_gbs, copy_gbs > 0 ? gbs / copy_gbs : 0.0,
                    status.c_str());
            fflush(csv);
        }
        /* A lost context (a fault) fails everything after it: stop here. */
        if (cudaDeviceSynchronize() != cudaSuccess) {
            fprintf(stderr, "the CUDA context is lost; stopping\n");
            break;
        }
    }
    if (csv) fclose(csv);
    return failures ? 1 : 0;
}
