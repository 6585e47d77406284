// gemm_tc_lab.cu - lab of the portable mma.sync GEMM on the H100: the library's kernels vs cuBLAS, bf16 > f32.
//
// Built outside the library (the kernels are header-only) by lab/CMakeLists.txt
// (-DDUET_BUILD_LAB=ON, cuda backend), or by hand:
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90,code=sm_90 -Ikernels -Isrc -Iinclude -Isrc/common
//        lab/gemm_tc_lab.cu -lcublas -o build-lab/gemm_tc_lab
//   [LAB_SIZES=2048,4096] [LAB_ONLY=substring] [LAB_BN=1] [LAB_REPS=20] build-lab/gemm_tc_lab
// Square problems, A row-major; B k-major (n x k, "Bt") or with LAB_BN=1 n-major (k x n, "Bn").
// Each variant is timed (L2 flushed before each run, 3 warm-ups, median of LAB_REPS CUDA-event
// timings) beside cublasGemmEx (CUBLAS_COMPUTE_32F) in the same process and checked against it.
// Variants: gemm_tc.cuh's pipelined kernel ("old"), "tc2" (the first 64-wide swizzled kernel
// below: whole tiles only, no edges, its epilogue straight from the registers; what the library's
// kernel started from), and gemm_tc_sw.cuh's kernel in three shapes ("tcs"). Build with
// -DTCS_DIRECT_EPILOGUE=0 to time the library kernel's shared-memory epilogue everywhere.
#include "gemm_tc.cuh"
#include "gemm_tc_sw.cuh"

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// tc2: mma.sync with 64-wide k-tiles in XOR-swizzled 128-byte shared rows. Both operands
// k-major (A rows of m, B rows of n), 16-bit. BK = 64 elements = 8 chunks of 16 B
// per row; chunk c of row r at r * 128 + ((c ^ (r & 7)) * 16).
template <int KIND, int BM, int BN, int WM, int WN, int STAGES, int MINB>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB) tc2_kernel(const tc_args p)
{
    typedef duet_mma_atom<KIND> atom;
    constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
    constexpr int AI = WM / 16, AJ = WN / 8;
    constexpr int SA = BM * 128, SB = BN * 128; // bytes per stage
    constexpr int BK = 64;
    constexpr int RA = BM * 8 / THREADS, RB = BN * 8 / THREADS; // chunks per thread
    constexpr int ROWS = THREADS / 8;                             // rows per copy pass
    static_assert(ROWS % 8 == 0, "swizzle phase constant across passes");
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t sA = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t sB = sA + STAGES * SA;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % (BM / WM), wn = warp / (BM / WM);
    int64_t tm, tn;
    gf_tile_coords(blockIdx.x, p.tiles_m, p.tiles_n, &tm, &tn);
    const int64_t m0 = tm * BM, n0 = tn * BN;
    const int64_t kt_count = (p.k + BK - 1) / BK;

    // Copy state: thread's chunk c = tid % 8 of rows tid / 8 + i * ROWS.
    const int crow = tid >> 3, cc = tid & 7;
    const uint32_t cdst = (uint32_t)(crow * 128 + ((cc ^ (crow & 7)) * 16));
    const unsigned char *ga = p.a.base + ((m0 + crow) * p.a.sx + cc * 8) * 2;
    const unsigned char *gb = p.b.base + ((n0 + crow) * p.b.sx + cc * 8) * 2;
    const int64_t stepa = (int64_t)ROWS * p.a.sx * 2, stepb = (int64_t)ROWS * p.b.sx * 2;
    auto issue = [&](int64_t kt, int st) {
        const unsigned char *pa = ga + kt * BK * 2, *pb = gb + kt * BK * 2;
        const uint32_t da = sA + st * SA + cdst, db = sB + st * SB + cdst;
#pragma unroll
        for (int i = 0; i < RA; ++i) tc_cp_async16(da + i * ROWS * 128, pa + i * stepa, 16);
#pragma unroll
        for (int i = 0; i < RB; ++i) tc_cp_async16(db + i * ROWS * 128, pb + i * stepb, 16);
    };

    // Fragment addresses: per lane, one byte offset per k-step s (the XOR differs per s).
    const int ar = wm * WM + (lane & 15), ah = lane >> 4;
    const int br = wn * WN + (lane & 7) + ((lane >> 4) & 1) * 8, bh = (lane >> 3) & 1;
    uint32_t aoff[4], boff[4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        aoff[s] = (uint32_t)(ar * 128 + (((2 * s + ah) ^ (ar & 7)) * 16));
        boff[s] = (uint32_t)(br * 128 + (((2 * s + bh) ^ (br & 7)) * 16));
    }

    float acc[AI][AJ][4];
#pragma unroll
    for (int i = 0; i < AI; ++i)
#pragma unroll
        for (int j = 0; j < AJ; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    uint32_t fa[2][AI][4], fb[2][AJ][2];
    auto load = [&](int buf, int st, int s) {
#pragma unroll
        for (int i = 0; i < AI; ++i) duet_ldmatrix_x4(fa[buf][i], sA + st * SA + aoff[s] + i * 16 * 128);
#pragma unroll
        for (int j = 0; j < AJ; j += 2) {
            uint32_t r[4];
            duet_ldmatrix_x4(r, sB + st * SB + boff[s] + j * 8 * 128);
            fb[buf][j][0] = r[0];
            fb[buf][j][1] = r[1];
            fb[buf][j + 1][0] = r[2];
            fb[buf][j + 1][1] = r[3];
        }
    };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < kt_count) issue(s, s);
        gf_copy_commit();
    }
    gf_copy_wait<STAGES - 2>();
    __syncthreads();
    load(0, 0, 0);
    int rst = 0, wst = STAGES - 1;
    for (int64_t kt = 0; kt < kt_count; ++kt) {
#pragma unroll
        for (int s = 0; s < 4; ++s) {
            if (s == 3) {
                gf_copy_wait<STAGES - 2>();
                __syncthreads();
                rst = rst + 1 == STAGES ? 0 : rst + 1;
            }
            load((s + 1) & 1, rst, (s + 1) & 3);
            if (s == 0) {
                if (kt + STAGES - 1 < kt_count) issue(kt + STAGES - 1, wst);
                gf_copy_commit();
                wst = wst + 1 == STAGES ? 0 : wst + 1;
            }
#pragma unroll
            for (int i = 0; i < AI; ++i)
#pragma unroll
                for (int j = 0; j < AJ; ++j) atom::mma(acc[i][j], fa[s & 1][i], fb[s & 1][j]);
        }
    }
    gf_copy_wait<0>();

    // Epilogue: C f32 row-major, beta 0.
    float *c = reinterpret_cast<float *>(p.c);
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < AI; ++i)
#pragma unroll
        for (int j = 0; j < AJ; ++j) {
            const int64_t r = m0 + wm * WM + i * 16 + g, col = n0 + wn * WN + j * 8 + 2 * t;
            float2 v0 = make_float2(p.alpha * acc[i][j][0], p.alpha * acc[i][j][1]);
            float2 v1 = make_float2(p.alpha * acc[i][j][2], p.alpha * acc[i][j][3]);
            *reinterpret_cast<float2 *>(c + r * p.c_rs + col) = v0;
            *reinterpret_cast<float2 *>(c + (r + 8) * p.c_rs + col) = v1;
        }
}


#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                    \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static int g_bn;
static tc_args make_args(const void *a, const void *b, float *c, int64_t m, int64_t n, int64_t k,
                         int bm, int bn)
{
    tc_args p;
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.batch = 1;
    p.tiles_m = (m + bm - 1) / bm;
    p.tiles_n = (n + bn - 1) / bn;
    p.a.base = (const unsigned char *)a, p.a.sx = k, p.a.sk = 1, p.a.mode = TC_KVEC;
    p.b.base = (const unsigned char *)b, p.b.sx = k, p.b.sk = 1, p.b.mode = TC_KVEC;
    if (g_bn) p.b.sx = 1, p.b.sk = n, p.b.mode = TC_XVEC;
    p.c = (unsigned char *)c, p.c_rs = n, p.c_cs = 1;
    p.c_dtype = DUET_DTYPE_F32;
    p.alpha = 1.f, p.beta = 0.f, p.beta_zero = 1;
    return p;
}

struct variant {
    const char *name;
    void (*run)(const void *, const void *, float *, int64_t, int64_t, int64_t);
};

template <int BM, int BN, int WM, int WN, int ST, int MINB>
static void run_tc2(const void *a, const void *b, float *c, int64_t m, int64_t n, int64_t k)
{
    auto kern = tc2_kernel<DUET_MMA_BF16, BM, BN, WM, WN, ST, MINB>;
    const int bytes = ST * (BM + BN) * 128;
    static bool once;
    if (!once) {
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        once = true;
    }
    tc_args p = make_args(a, b, c, m, n, k, BM, BN);
    kern<<<(unsigned)(p.tiles_m * p.tiles_n), (BM / WM) * (BN / WN) * 32, bytes>>>(p);
}

static void run_old(const void *a, const void *b, float *c, int64_t m, int64_t n, int64_t k)
{
    auto kern = gemm_tc_kernel<DUET_MMA_BF16, false, 128, 128, 64, 64, 4, TC_LOAD_ASYNC, TC_LOAD_ASYNC>;
    const int bytes = tc_shared_bytes<128, 128, 4>();
    static bool once;
    if (!once) {
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        once = true;
    }
    tc_args p = make_args(a, b, c, m, n, k, 128, 128);
    kern<<<(unsigned)(p.tiles_m * p.tiles_n), 128, bytes>>>(p);
}

template <int BM, int BN, int ST, int LB>
static void run_tcs(const void *a, const void *b, float *c, int64_t m, int64_t n, int64_t k)
{
    auto kern = gemm_tcs_kernel<DUET_MMA_BF16, BM, BN, ST, TC_LOAD_ASYNC, LB>;
    const int bytes = tcs_shared_bytes<BM, BN, ST>();
    static bool once;
    if (!once) {
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        once = true;
    }
    tc_args p = make_args(a, b, c, m, n, k, BM, BN);
    kern<<<(unsigned)(p.tiles_m * p.tiles_n), (BM / 64) * (BN / 64) * 32, bytes>>>(p);
}
template <int BM, int BN, int ST>
static void run_tcs_any(const void *a, const void *b, float *c, int64_t m, int64_t n, int64_t k)
{
    if (g_bn) run_tcs<BM, BN, ST, TC_LOAD_ASYNC_MN>(a, b, c, m, n, k);
    else run_tcs<BM, BN, ST, TC_LOAD_ASYNC>(a, b, c, m, n, k);
}

static cublasHandle_t g_h;
static void run_cublas(const void *a, const void *b, float *c, int64_t m, int64_t n, int64_t k)
{
    const float one = 1.f, zero = 0.f;
    cublasStatus_t s = cublasGemmEx(g_h, g_bn ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b,
                                    CUDA_R_16BF, g_bn ? (int)n : (int)k, a, CUDA_R_16BF, (int)k, &zero, c, CUDA_R_32F,
                                    (int)n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) printf("cublas %d\n", (int)s);
}

static const variant g_variants[] = {
    {"old_128x128x32_s4", run_old},
    {"tc2_128x128x64_s3", run_tc2<128, 128, 64, 64, 3, 2>},
    {"tc2_128x128x64_s4", run_tc2<128, 128, 64, 64, 4, 1>},
    {"tc2_128x256x64_s3", run_tc2<128, 256, 64, 64, 3, 1>},
    {"tc2_256x128x64_s3", run_tc2<256, 128, 64, 64, 3, 1>},
    {"tc2_128x256x64_s4", run_tc2<128, 256, 64, 64, 4, 1>},
    {"tcs_128x128_s3", run_tcs_any<128, 128, 3>},
    {"tcs_128x256_s3", run_tcs_any<128, 256, 3>},
    {"tcs_128x128_s4", run_tcs_any<128, 128, 4>},
};

int main()
{
    const char *sizes_env = getenv("LAB_SIZES");
    std::vector<int64_t> sizes = {2048, 4096, 8192};
    if (sizes_env) {
        sizes.clear();
        for (const char *s = sizes_env; *s;) {
            sizes.push_back(strtoll(s, (char **)&s, 10));
            while (*s == ',') ++s;
        }
    }
    const char *only = getenv("LAB_ONLY");
    g_bn = getenv("LAB_BN") ? 1 : 0;
    const int reps = getenv("LAB_REPS") ? atoi(getenv("LAB_REPS")) : 20;
    cublasCreate(&g_h);
    int64_t maxn = *std::max_element(sizes.begin(), sizes.end());
    std::vector<__nv_bfloat16> ha(maxn * maxn), hb(maxn * maxn);
    srand(1);
    for (auto &x : ha) x = __float2bfloat16((rand() % 2001 - 1000) / 1000.f);
    for (auto &x : hb) x = __float2bfloat16((rand() % 2001 - 1000) / 1000.f);
    void *a, *b;
    float *c, *cref;
    char *flush;
    CK(cudaMalloc(&a, maxn * maxn * 2));
    CK(cudaMalloc(&b, maxn * maxn * 2));
    CK(cudaMalloc(&c, maxn * maxn * 4));
    CK(cudaMalloc(&cref, maxn * maxn * 4));
    CK(cudaMalloc(&flush, 256 << 20));
    CK(cudaMemcpy(a, ha.data(), maxn * maxn * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), maxn * maxn * 2, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    printf("size,variant,us,tflops,ratio_vs_cublas,maxrel\n");
    for (int64_t n : sizes) {
        auto time = [&](auto fn) {
            std::vector<float> t;
            for (int r = 0; r < reps + 3; ++r) {
                CK(cudaMemsetAsync(flush, r, 256 << 20));
                cudaEventRecord(e0);
                fn(a, b, c, n, n, n);
                cudaEventRecord(e1);
                CK(cudaEventSynchronize(e1));
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                if (r >= 3) t.push_back(ms);
            }
            std::sort(t.begin(), t.end());
            return t[t.size() / 2];
        };
        run_cublas(a, b, cref, n, n, n);
        const float tc = time(run_cublas);
        run_cublas(a, b, cref, n, n, n);
        CK(cudaDeviceSynchronize());
        std::vector<float> href(n * n), hc(n * n);
        CK(cudaMemcpy(href.data(), cref, n * n * 4, cudaMemcpyDeviceToHost));
        const double fl = 2.0 * n * n * n;
        printf("%ld,cublas,%.1f,%.1f,1.000,0\n", (long)n, tc * 1e3, fl / tc / 1e9);
        for (const variant &v : g_variants) {
            if (only && !strstr(v.name, only)) continue;
            if (g_bn && strncmp(v.name, "tcs", 3)) continue;
            CK(cudaMemset(c, 0, n * n * 4));
            v.run(a, b, c, n, n, n);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hc.data(), c, n * n * 4, cudaMemcpyDeviceToHost));
            double mr = 0, scale = 0;
            for (int64_t i = 0; i < n * n; ++i) scale = std::max(scale, (double)fabs(href[i]));
            for (int64_t i = 0; i < n * n; ++i) mr = std::max(mr, (double)fabs(hc[i] - href[i]) / scale);
            const float t = time(v.run);
            printf("%ld,%s,%.1f,%.1f,%.3f,%.2e%s\n", (long)n, v.name, t * 1e3, fl / t / 1e9, tc / t, mr,
                   mr > 1e-3 ? " WRONG" : "");
            fflush(stdout);
        }
    }
    return 0;
}
