// gemm_fast_check.cu - standalone correctness check and timing of the AUTO GEMM kernels vs cuBLAS.
//
// Built outside the library (the kernels and their launcher, src/gpu/gemm_fast_gpu.inc, are
// header-only), so the kernels can be checked and timed before the rest of the CUDA backend
// links: by lab/CMakeLists.txt (-DDUET_BUILD_LAB=ON, cuda backend), or by hand (one line):
//   nvcc -std=c++17 -O3 -arch=sm_90 -Ikernels -Isrc -Iinclude -Isrc/common
//        lab/gemm_fast_check.cu src/common/tuning.c -lcublas -o build-gf/gemm_fast_check
//   build-gf/gemm_fast_check [--check-only | --time-only] [--quick] [--csv FILE]
// Part 1 runs every compiled shape of every dtype on random small problems of every operand
// layout against a double / wrapping-uint32 host reference. Part 2 times shapes against
// cublasGemmEx (default math: no TF32) with L2 flushed before each run, and checks each timed
// result against cuBLAS with a gauge bound. Part 2's variants other than "auto" (the device's
// table row) are launched directly on row-major A and B (one instantiation each), so shapes
// can be compared before they enter a tuning row.
// Environment: LAB_ONLY=name[,name...] times those variants only; LAB_SIZES=MxNxK one size; LAB_CHECK=dmma
// checks only the DMMA shapes; LAB_LAYOUT=bt times B stored N x K (variants then launch through
// the dispatcher with their tile as the table row); LAB_CASES=n cases per shape in part 1 (default 40; fewer for
// compute-sanitizer racecheck). The workspace is not linked here, so nothing splits K.

// Extra experimental shapes are compiled only with a fixed layout (below), not in the lists.
#include "gpu/gemm_fast_gpu.inc"

#include <cublas_v2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// ---- the two library helpers the launcher calls --------------------------------------------

static char g_err[1024];
duet_status dt_fail(duet_status status, const char *func, const char *fmt, ...)
{
    int n = snprintf(g_err, sizeof g_err, "%s: ", func);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_err + n, sizeof g_err - n, fmt, ap);
    va_end(ap);
    return status;
}
void dt_clear_error(void) {}
duet_status dt_workspace_reserve(dt_context *, void *, dt_workspace *, size_t, const char *, void **ptr)
{
    *ptr = NULL;
    return DUET_ERROR_UNSUPPORTED;
}
const dt_gemm_tuning *dt_gemm_tuning_select(const dt_tuning_set *, const char *arch, duet_dtype dtype, int *from_file)
{
    if (from_file) *from_file = 0;
    return dt_gemm_tuning_lookup(arch, dtype);
}
void dt_fill_info(duet_launch_info *info, const char *kernel, const dt_plan *plan, int launches)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    snprintf(info->kernel, sizeof info->kernel, "%s", kernel);
    info->algorithm = plan->algo;
    info->config = plan->cfg;
    info->tile = plan->tile;
    info->launches = launches;
}

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)
#define CB(x)                                                                                      \
    do {                                                                                           \
        cublasStatus_t s_ = (x);                                                                   \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s:%d %s: cublas %d\n", __FILE__, __LINE__, #x, (int)s_);            \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

static duet_device_props g_props;
static cudaStream_t g_stream;
static int g_fail = 0;

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd()
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 2685821657736338717ull;
}
static double urand() { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0; }

// ---- part 1: small problems of every layout against a host reference -----------------------

template <typename T>
static T rand_val()
{
    return (T)urand();
}
template <>
uint32_t rand_val<uint32_t>()
{
    return (uint32_t)rnd();
}

template <typename T>
static T poison()
{
    return (T)NAN;
}
template <>
uint32_t poison<uint32_t>()
{
    return 0x5A5A5A5Au;
}

template <typename T>
static double eps_of()
{
    return sizeof(T) == 4 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
}

struct View {
    int64_t rs, cs, bs, off, span;
};

// A rows x cols matrix view, row- or column-major with ld padding, an element offset, batch.
// aligned: ld and the batch stride are multiples of 4 elements (16-byte rows for 4-byte types,
// 32 for 8-byte), so with offset 0 the vectorized layouts are taken.
static View make_view(int64_t rows, int64_t cols, bool colmajor, int64_t pad, int64_t off,
                      int64_t batch, bool broadcast, bool aligned)
{
    View v;
    const int64_t len = colmajor ? rows : cols;
    const int64_t ld = aligned ? (len + 3) / 4 * 4 + 4 : len + pad;
    v.rs = colmajor ? 1 : ld;
    v.cs = colmajor ? ld : 1;
    const int64_t one = (colmajor ? cols : rows) * ld;
    v.bs = broadcast ? 0 : one + (aligned ? 4 : 3);
    v.off = off;
    v.span = off + (broadcast ? one : v.bs * (batch - 1) + one) + 8;
    return v;
}

template <typename T>
static bool run_case(const dt_gemm_tuning &row, int64_t m, int64_t n, int64_t k, int64_t batch,
                     bool acol, bool bcol, int cmode, int64_t off, double alpha, double beta,
                     bool bcast, bool aligned)
{
    const bool is_int = gf_dtype<T>::id == DUET_DTYPE_I32;
    View va = make_view(m, k, acol, acol ? 3 : 1, off, batch, false, aligned);
    View vb = make_view(k, n, bcol, 2, off, batch, bcast, aligned);
    // cmode 0: row-major C (unit column stride); 1: C with no unit stride (cs = 2).
    View vc = make_view(m, n, false, 5, off, batch, false, aligned);
    if (cmode == 1) {
        vc.cs = 2;
        vc.rs = 2 * n + 3;
        vc.bs = vc.rs * m + 1;
        vc.span = off + vc.bs * batch + 8;
    }
    std::vector<T> ha(va.span), hb(vb.span), hc(vc.span), out(vc.span);
    for (auto &x : ha) x = rand_val<T>();
    for (auto &x : hb) x = rand_val<T>();
    for (auto &x : hc) x = rand_val<T>();
    if (beta == 0.0 && !is_int)
        for (auto &x : hc) x = poison<T>(); // must never be read

    T *da, *db, *dc;
    CK(cudaMalloc(&da, va.span * sizeof(T)));
    CK(cudaMalloc(&db, vb.span * sizeof(T)));
    CK(cudaMalloc(&dc, vc.span * sizeof(T)));
    CK(cudaMemcpy(da, ha.data(), va.span * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb.data(), vb.span * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dc, hc.data(), vc.span * sizeof(T), cudaMemcpyHostToDevice));

    dt_gemm g;
    g.dtype = gf_dtype<T>::id;
    g.m = m;
    g.n = n;
    g.k = k;
    g.batch = batch;
    g.alpha = alpha;
    g.beta = beta;
    g.a = {da + va.off, va.rs, va.cs, va.bs};
    g.b = {db + vb.off, vb.rs, vb.cs, vb.bs};
    g.c = {dc + vc.off, vc.rs, vc.cs, vc.bs};
    duet_launch_info info;
    duet_status s = gemm_fast_run_row<T>(NULL, NULL, &g, g_stream, &g_props, &row, &info);
    if (s != DUET_SUCCESS) {
        printf("FAIL launch %s: status %d %s\n", info.kernel, (int)s, g_err);
        g_fail++;
        return false;
    }
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaGetLastError());
    CK(cudaMemcpy(out.data(), dc, vc.span * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));

    // Reference and guard check: every element outside C keeps its bytes.
    std::vector<char> inside(vc.span, 0);
    double worst = 0;
    bool ok = true;
    for (int64_t bz = 0; bz < batch && ok; ++bz)
        for (int64_t i = 0; i < m && ok; ++i)
            for (int64_t j = 0; j < n; ++j) {
                const int64_t ci = vc.off + bz * vc.bs + i * vc.rs + j * vc.cs;
                inside[ci] = 1;
                if (is_int) {
                    uint32_t acc = 0;
                    for (int64_t p = 0; p < k; ++p)
                        acc += (uint32_t)ha[va.off + bz * va.bs + i * va.rs + p * va.cs] *
                               (uint32_t)hb[vb.off + bz * vb.bs + p * vb.rs + j * vb.cs];
                    uint32_t ref = (uint32_t)(int32_t)alpha * acc;
                    if (beta != 0.0) ref += (uint32_t)(int32_t)beta * (uint32_t)hc[ci];
                    if ((uint32_t)out[ci] != ref) {
                        printf("FAIL %s m%ld n%ld k%ld (%ld,%ld,%ld): %u != %u\n", info.kernel,
                               (long)m, (long)n, (long)k, (long)bz, (long)i, (long)j,
                               (unsigned)out[ci], ref);
                        ok = false;
                        break;
                    }
                } else {
                    double acc = 0, gauge = 0;
                    for (int64_t p = 0; p < k; ++p) {
                        const double x = ha[va.off + bz * va.bs + i * va.rs + p * va.cs];
                        const double y = hb[vb.off + bz * vb.bs + p * vb.rs + j * vb.cs];
                        acc += x * y;
                        gauge += fabs(x * y);
                    }
                    double ref = alpha * acc;
                    gauge = fabs(alpha) * gauge;
                    if (beta != 0.0) {
                        ref += beta * (double)hc[ci];
                        gauge += fabs(beta * (double)hc[ci]);
                    }
                    const double err = fabs((double)out[ci] - ref);
                    const double r = err / (eps_of<T>() * (gauge + 1e-300));
                    worst = std::max(worst, r);
                    if (!(r <= 4.0 * sqrt((double)k) + 8.0)) {
                        printf("FAIL %s m%ld n%ld k%ld (%ld,%ld,%ld): %.17g vs %.17g (%.1f eps)\n",
                               info.kernel, (long)m, (long)n, (long)k, (long)bz, (long)i, (long)j,
                               (double)out[ci], ref, r);
                        ok = false;
                        break;
                    }
                }
            }
    if (ok)
        for (int64_t x = 0; x < vc.span; ++x)
            if (!inside[x] && memcmp(&out[x], &hc[x], sizeof(T)) != 0 &&
                !(beta == 0.0 && !is_int && out[x] != out[x] && hc[x] != hc[x])) {
                printf("FAIL %s m%ld n%ld k%ld: wrote outside C at %ld\n", info.kernel, (long)m,
                       (long)n, (long)k, (long)x);
                ok = false;
                break;
            }
    if (!ok) g_fail++;
    return ok;
}

template <typename T>
static void check_row(const char *label, const dt_gemm_tuning &row, int cases)
{
    static const int64_t shapes[][3] = {{1, 1, 1},     {3, 5, 7},      {17, 33, 9},
                                        {64, 64, 16},  {129, 257, 65}, {200, 130, 300},
                                        {255, 67, 33}, {96, 200, 1000}};
    const int nshapes = sizeof shapes / sizeof shapes[0];
    int ok = 0, total = 0;
    for (int c = 0; c < cases; ++c) {
        const int si = c % nshapes;
        const int64_t batch = (c % 5 == 4) ? 3 : 1;
        const bool acol = (c >> 0) & 1, bcol = (c >> 1) & 1;
        const int cmode = (c % 7 == 6) ? 1 : 0;
        const int64_t off = (c % 3 == 2) ? 1 : 0;
        const bool aligned = c % 3 == 0;
        double alpha = 1.5, beta = (c & 4) ? 0.0 : -2.0;
        if (gf_dtype<T>::id == DUET_DTYPE_I32) {
            alpha = 3;
            beta = (c & 4) ? 0 : -7;
        }
        const bool bcast = batch > 1 && (c & 8);
        total++;
        ok += run_case<T>(row, shapes[si][0], shapes[si][1], shapes[si][2], batch, acol, bcol,
                          cmode, off, alpha, beta, bcast, aligned);
    }
    // The shapes of the operand layouts that vector loads take: aligned, larger, square.
    for (int lay = 0; lay < 4; ++lay) {
        total++;
        ok += run_case<T>(row, 300, 260, 200, 2, lay & 1, lay >> 1, 0, 0, 1.0, 0.5, false, true);
        total++;
        ok += run_case<T>(row, 301, 259, 203, 1, lay & 1, lay >> 1, 0, 0, -1.0, 0.0, false, true);
    }
    printf("  %-44s %3d/%3d cases pass\n", label, ok, total);
}

template <typename T>
static void check_shape(dt_gemm_engine engine, int bm, int bn, int bk, int tm, int tn, int th,
                        int st)
{
    dt_gemm_tuning row;
    row.arch = "check";
    row.dtype = gf_dtype<T>::id;
    row.engine = engine;
    row.large = {bm, bn, bk, tm, tn, th, st};
    row.small = row.large;
    char label[96];
    snprintf(label, sizeof label, "%s %s %dx%dx%d %dx%d t%d s%d", gf_dtype<T>::name(),
             engine == DT_GEMM_ENGINE_DMMA ? "dmma" : "fma", bm, bn, bk, tm, tn, th, st);
    check_row<T>(label, row, getenv("LAB_CASES") ? atoi(getenv("LAB_CASES")) : 40);
}

// ---- part 2: timing against cuBLAS ----------------------------------------------------------

template <typename T>
__global__ void fill_kernel(T *p, int64_t n, uint64_t seed, int absval)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + seed;
        x ^= x >> 31;
        x *= 0xBF58476D1CE4E5B9ull;
        x ^= x >> 29;
        double u = (double)(x >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
        if (u == 0.0) u = 0.5; // non-zero inputs
        p[i] = (T)(absval ? fabs(u) : u);
    }
}
template <typename T>
__global__ void abs_kernel(const T *src, T *dst, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = src[i] < 0 ? -src[i] : src[i];
}
// max over elements of |c - ref| / gauge, in units of eps; NaN or unwritten counts as huge.
template <typename T>
__global__ void compare_kernel(const T *c, const T *ref, const T *gauge, int64_t n, double eps,
                               unsigned long long *worst_bits)
{
    double w = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const double e = fabs((double)c[i] - (double)ref[i]) / (eps * ((double)gauge[i] + 1e-30));
        w = (e == e) ? fmax(w, e) : 1e30;
    }
    atomicMax(worst_bits, (unsigned long long)__double_as_longlong(w));
}

struct Timer {
    cudaEvent_t a, b;
    void *flush;
    size_t flush_bytes = 256u << 20;
    Timer()
    {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        CK(cudaMalloc(&flush, flush_bytes));
    }
    template <typename F>
    double median_ms(F fn, int warm, int reps)
    {
        for (int i = 0; i < warm; ++i) fn();
        std::vector<float> t;
        for (int r = 0; r < reps; ++r) {
            CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, g_stream)); // evict L2
            CK(cudaEventRecord(a, g_stream));
            fn();
            CK(cudaEventRecord(b, g_stream));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }
};

struct Variant {
    const char *name;
    dt_gemm_engine engine;
    dt_gemm_tile tile;
    int fixed; // 0: through gemm_fast_run_row; 1..: an experimental kernel launched directly
};

static cublasHandle_t g_cublas;

// Experimental kernels launched directly, row-major A and B only (A K_VEC, B X_VEC).
#define LAB_DMMA(id_, bm, bn, bk, wm, wn, th, st)                                                  \
    if (id == id_) {                                                                               \
        gf_args<double> args = gf_make_args<double>(&g, t);                                        \
        const dim3 grid((unsigned)(args.tiles_m * args.tiles_n), 1, 1);                            \
        return gf_launch_dmma_layout<bm, bn, bk, wm, wn, th, st, 16, 8, GF_K_VEC, GF_X_VEC>(args, grid, g_stream) == cudaSuccess; \
    }
#define LAB_FMA(id_, bm, bn, bk, tm, tn, th, st)                                                   \
    if (id == id_) {                                                                               \
        gf_args<float> args = gf_make_args<float>(&g, t);                                          \
        const dim3 grid((unsigned)(args.tiles_m * args.tiles_n), 1, 1);                            \
        gf_launch_fma_layout<float, bm, bn, bk, tm, tn, th, st, GF_K_VEC, GF_X_VEC>(args, false, grid, g_stream); \
        return true;                                                                               \
    }
template <typename T>
static bool launch_fixed(int id, const dt_gemm &g, const dt_gemm_tile &t)
{
    const int code = 4 * gf_operand_layout<T>(g.a.base, g.a.rs, g.a.cs, g.a.bs, 1) +
                     gf_operand_layout<T>(g.b.base, g.b.cs, g.b.rs, g.b.bs, 1);
    if (code != 4 * GF_K_VEC + GF_X_VEC) { snprintf(g_err, sizeof g_err, "layout code %d", code); return false; }
    if constexpr (sizeof(T) == 8) {
        LAB_DMMA(31, 64, 64, 16, 32, 32, 128, 3)
        LAB_DMMA(32, 128, 64, 16, 64, 32, 128, 3)
        LAB_DMMA(33, 128, 64, 16, 64, 32, 128, 4)
        LAB_DMMA(34, 128, 128, 16, 64, 32, 256, 3)
        LAB_DMMA(35, 64, 128, 16, 32, 64, 128, 3)
        LAB_DMMA(36, 128, 64, 32, 64, 32, 128, 3)
        LAB_DMMA(37, 64, 64, 16, 32, 32, 128, 4)
        LAB_DMMA(38, 128, 128, 16, 64, 64, 128, 3)
        LAB_DMMA(39, 64, 64, 32, 32, 32, 128, 3)
        LAB_DMMA(40, 128, 64, 32, 64, 32, 128, 2)
        LAB_DMMA(41, 64, 64, 32, 32, 32, 128, 2)
    }
    if constexpr (sizeof(T) == 4) {
        LAB_FMA(21, 128, 128, 8, 16, 8, 128, 2)
        LAB_FMA(22, 128, 128, 8, 16, 8, 128, 3)
        LAB_FMA(23, 256, 128, 8, 16, 8, 256, 3)
        LAB_FMA(24, 256, 128, 8, 16, 8, 256, 2)
        LAB_FMA(25, 128, 256, 8, 8, 16, 256, 3)
        LAB_FMA(26, 128, 64, 16, 8, 4, 256, 3)
    }
    return false;
}

template <typename T>
static void time_dtype(const std::vector<Variant> &vars, const std::vector<std::array<int64_t, 3>> &sizes,
                       Timer &tm, FILE *csv)
{
    const bool f64 = sizeof(T) == 8;
    const cudaDataType dt = f64 ? CUDA_R_64F : CUDA_R_32F;
    const cublasComputeType_t ct = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    for (auto sz : sizes) {
        const int64_t m = sz[0], n = sz[1], k = sz[2];
        T *A, *B, *C, *R, *G, *AA, *BB;
        CK(cudaMalloc(&A, m * k * sizeof(T)));
        CK(cudaMalloc(&B, k * n * sizeof(T)));
        CK(cudaMalloc(&C, m * n * sizeof(T)));
        CK(cudaMalloc(&R, m * n * sizeof(T)));
        CK(cudaMalloc(&G, m * n * sizeof(T)));
        CK(cudaMalloc(&AA, m * k * sizeof(T)));
        CK(cudaMalloc(&BB, k * n * sizeof(T)));
        fill_kernel<T><<<1024, 256, 0, g_stream>>>(A, m * k, 1234 + m, 0);
        fill_kernel<T><<<1024, 256, 0, g_stream>>>(B, k * n, 987 + n, 0);
        abs_kernel<T><<<1024, 256, 0, g_stream>>>(A, AA, m * k);
        abs_kernel<T><<<1024, 256, 0, g_stream>>>(B, BB, k * n);
        const T one = 1, zero = 0;
        // Row-major C = A B is column-major C^T = B^T A^T.
        // LAB_LAYOUT=bt: B is stored N x K (B^T row-major), so both operands are k-contiguous.
        const bool bt = getenv("LAB_LAYOUT") && !strcmp(getenv("LAB_LAYOUT"), "bt");
        auto cublas = [&](const T *a, const T *b, T *c) {
            CB(cublasGemmEx(g_cublas, bt ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m,
                            (int)k, &one, b, dt, bt ? (int)k : (int)n, a, dt, (int)k, &zero, c, dt,
                            (int)n, ct, CUBLAS_GEMM_DEFAULT));
        };
        cublas(AA, BB, G); // gauge |A||B|
        const double flops = 2.0 * m * n * k;
        const int reps = flops > 1e12 ? 20 : 30;
        const double cb_ms = tm.median_ms([&] { cublas(A, B, R); }, 3, reps);
        const double cb_tf = flops / cb_ms / 1e9;
        printf("%s %5ldx%5ldx%5ld  cublas            %8.3f ms %7.2f TFLOP/s\n", f64 ? "f64" : "f32",
               (long)m, (long)n, (long)k, cb_ms, cb_tf);
        fprintf(csv, "%s,%ld,%ld,%ld,cublas,%.4f,%.3f,1.000,0\n", f64 ? "f64" : "f32", (long)m,
                (long)n, (long)k, cb_ms, cb_tf);
        dt_gemm g;
        g.dtype = gf_dtype<T>::id;
        g.m = m;
        g.n = n;
        g.k = k;
        g.batch = 1;
        g.alpha = 1;
        g.beta = 0;
        g.a = {A, k, 1, 0};
        g.b = bt ? dt_view{B, 1, k, 0} : dt_view{B, n, 1, 0};
        g.c = {C, n, 1, 0};
        unsigned long long *wbits;
        CK(cudaMalloc(&wbits, sizeof *wbits));
        for (const Variant &v : vars) {
            dt_gemm_tuning row;
            row.arch = "time";
            row.dtype = g.dtype;
            row.engine = v.engine;
            row.large = v.tile;
            row.small = v.tile;
            duet_launch_info info;
            bool ran = true;
            auto run = [&] {
                if (v.fixed < 0) {
                    ran = gemm_fast_run<T>(NULL, NULL, &g, g_stream, &g_props, &info) == DUET_SUCCESS;
                } else if (v.fixed && !bt) {
                    ran = launch_fixed<T>(v.fixed, g, v.tile);
                } else {
                    duet_status s = gemm_fast_run_row<T>(NULL, NULL, &g, g_stream, &g_props, &row, &info);
                    ran = s == DUET_SUCCESS;
                }
            };
            CK(cudaMemsetAsync(C, 0xff, m * n * sizeof(T), g_stream)); // NaN poison
            run();
            if (!ran) {
                printf("  %-18s not compiled / not runnable (%s)\n", v.name, g_err);
                continue;
            }
            CK(cudaGetLastError());
            CK(cudaMemsetAsync(wbits, 0, sizeof *wbits, g_stream));
            compare_kernel<T><<<1024, 256, 0, g_stream>>>(C, R, G, m * n,
                                                          f64 ? 2.220446049250313e-16 : 1.1920928955078125e-07, wbits);
            unsigned long long wb;
            CK(cudaMemcpyAsync(&wb, wbits, sizeof wb, cudaMemcpyDeviceToHost, g_stream));
            CK(cudaStreamSynchronize(g_stream));
            double worst;
            memcpy(&worst, &wb, sizeof worst);
            const bool ok = worst <= 4.0 * sqrt((double)k) + 8.0;
            if (!ok) g_fail++;
            const double ms = tm.median_ms(run, 3, reps);
            const double tf = flops / ms / 1e9;
            printf("%s %5ldx%5ldx%5ld  %-18s %8.3f ms %7.2f TFLOP/s  %5.3fx cublas  err %.2f eps %s %s\n",
                   f64 ? "f64" : "f32", (long)m, (long)n, (long)k, v.name, ms, tf, cb_ms / ms, worst,
                   ok ? "" : "FAIL", v.fixed < 0 ? info.kernel : "");
            fprintf(csv, "%s,%ld,%ld,%ld,%s,%.4f,%.3f,%.3f,%.2f\n", f64 ? "f64" : "f32", (long)m,
                    (long)n, (long)k, v.name, ms, tf, cb_ms / ms, worst);
            fflush(stdout);
        }
        CK(cudaFree(wbits));
        CK(cudaFree(A));
        CK(cudaFree(B));
        CK(cudaFree(C));
        CK(cudaFree(R));
        CK(cudaFree(G));
        CK(cudaFree(AA));
        CK(cudaFree(BB));
    }
}

int main(int argc, char **argv)
{
    bool check_only = false, quick = false, time_only = false;
    const char *csv_path = "gemm_fast_check.csv";
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--check-only")) check_only = true;
        else if (!strcmp(argv[i], "--time-only")) time_only = true;
        else if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
    }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    memset(&g_props, 0, sizeof g_props);
    snprintf(g_props.name, sizeof g_props.name, "%s", p.name);
    snprintf(g_props.arch, sizeof g_props.arch, "sm_%d%d", p.major, p.minor);
    g_props.compute_units = p.multiProcessorCount;
    g_props.warp_size = p.warpSize;
    g_props.max_threads_per_block = p.maxThreadsPerBlock;
    for (int i = 0; i < 3; ++i) g_props.max_grid_dims[i] = p.maxGridSize[i];
    g_props.shared_mem_per_block = p.sharedMemPerBlock;
    g_props.shared_mem_per_block_optin = p.sharedMemPerBlockOptin;
    g_props.capability_major = p.major;
    g_props.capability_minor = p.minor;
    printf("device: %s (%s, %d SMs, %d MHz?)\n", p.name, g_props.arch, p.multiProcessorCount,
           0);
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));

    if (!time_only) {
        printf("== part 1: every compiled shape against a host reference ==\n");
#define CHECK_F32(bm, bn, bk, tm, tn, th, st) check_shape<float>(DT_GEMM_ENGINE_FMA, bm, bn, bk, tm, tn, th, st);
#define CHECK_I32(bm, bn, bk, tm, tn, th, st) check_shape<uint32_t>(DT_GEMM_ENGINE_FMA, bm, bn, bk, tm, tn, th, st);
#define CHECK_F64(bm, bn, bk, tm, tn, th, st) check_shape<double>(DT_GEMM_ENGINE_FMA, bm, bn, bk, tm, tn, th, st);
#define CHECK_DMMA(bm, bn, bk, tm, tn, th, st) check_shape<double>(DT_GEMM_ENGINE_DMMA, bm, bn, bk, tm, tn, th, st);
        const char *only_check = getenv("LAB_CHECK");
        if (!only_check || strcmp(only_check, "dmma")) {
            GF_FMA_SHAPES_F32(CHECK_F32)
            GF_FMA_SHAPES_I32(CHECK_I32)
            GF_FMA_SHAPES_F64(CHECK_F64)
        }
        GF_DMMA_SHAPES(CHECK_DMMA)
        // The production entry point with the device's own table row.
        for (int d = 0; d < 3; ++d) {
            const duet_dtype dt = d == 0 ? DUET_DTYPE_F32 : d == 1 ? DUET_DTYPE_F64 : DUET_DTYPE_I32;
            const dt_gemm_tuning *row = dt_gemm_tuning_lookup(g_props.arch, dt);
            printf("  table row %s/%s: engine %d large %dx%dx%d small %dx%dx%d\n", row->arch,
                   (d == 0 ? "f32" : d == 1 ? "f64" : "i32"), (int)row->engine, row->large.bm, row->large.bn,
                   row->large.bk, row->small.bm, row->small.bn, row->small.bk);
        }
        printf("part 1: %s (%d failures)\n", g_fail ? "FAIL" : "pass", g_fail);
    }
    if (check_only) return g_fail ? 1 : 0;

    printf("== part 2: timing against cublasGemmEx (default math), L2 flushed ==\n");
    CB(cublasCreate(&g_cublas));
    CB(cublasSetStream(g_cublas, g_stream));
    FILE *csv = fopen(csv_path, "w");
    fprintf(csv, "dtype,m,n,k,variant,ms,tflops,ratio_cublas,err_eps\n");
    Timer tm;
    std::vector<std::array<int64_t, 3>> sizes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                                                 {8192, 8192, 8192}, {4095, 4097, 4093}, {8192, 128, 8192}, {128, 8192, 8192}, {1024, 1024, 16384}, {256, 256, 32768}};
    if (quick) sizes = {{1024, 1024, 1024}, {4096, 4096, 4096}};
    // fixed -1: the production entry gemm_fast_run (the device's table row).
    std::vector<Variant> f32v = {
        {"auto", DT_GEMM_ENGINE_FMA, {0, 0, 0, 0, 0, 0, 0}, -1},
        {"f_128x128x8_s2", DT_GEMM_ENGINE_FMA, {128, 128, 8, 16, 8, 128, 2}, 21},
        {"f_128x128x8_s3", DT_GEMM_ENGINE_FMA, {128, 128, 8, 16, 8, 128, 3}, 22},
        {"f_256x128x8_s3", DT_GEMM_ENGINE_FMA, {256, 128, 8, 16, 8, 256, 3}, 23},
        {"f_256x128x8_s2", DT_GEMM_ENGINE_FMA, {256, 128, 8, 16, 8, 256, 2}, 24},
        {"f_128x256x8_s3", DT_GEMM_ENGINE_FMA, {128, 256, 8, 8, 16, 256, 3}, 25},
        {"f_128x64x16_s3", DT_GEMM_ENGINE_FMA, {128, 64, 16, 8, 4, 256, 3}, 26},
    };
    std::vector<Variant> f64v = {
        {"auto", DT_GEMM_ENGINE_DMMA, {0, 0, 0, 0, 0, 0, 0}, -1},
        {"d_64x64x16_w32x32_s3", DT_GEMM_ENGINE_DMMA, {64, 64, 16, 32, 32, 128, 3}, 31},
        {"d_128x64x16_w64x32_s3", DT_GEMM_ENGINE_DMMA, {128, 64, 16, 64, 32, 128, 3}, 32},
        {"d_128x64x16_w64x32_s4", DT_GEMM_ENGINE_DMMA, {128, 64, 16, 64, 32, 128, 4}, 33},
        {"d_128x128x16_w64x32_s3", DT_GEMM_ENGINE_DMMA, {128, 128, 16, 64, 32, 256, 3}, 34},
        {"d_64x128x16_w32x64_s3", DT_GEMM_ENGINE_DMMA, {64, 128, 16, 32, 64, 128, 3}, 35},
        {"d_128x64x32_w64x32_s3", DT_GEMM_ENGINE_DMMA, {128, 64, 32, 64, 32, 128, 3}, 36},
        {"d_64x64x16_w32x32_s4", DT_GEMM_ENGINE_DMMA, {64, 64, 16, 32, 32, 128, 4}, 37},
        {"d_128x128x16_w64x64_s3", DT_GEMM_ENGINE_DMMA, {128, 128, 16, 64, 64, 128, 3}, 38},
        {"d_64x64x32_w32x32_s3", DT_GEMM_ENGINE_DMMA, {64, 64, 32, 32, 32, 128, 3}, 39},
        {"d_128x64x32_w64x32_s2", DT_GEMM_ENGINE_DMMA, {128, 64, 32, 64, 32, 128, 2}, 40},
        {"d_64x64x32_w32x32_s2", DT_GEMM_ENGINE_DMMA, {64, 64, 32, 32, 32, 128, 2}, 41},
    };
    if (getenv("LAB_ONLY")) {
        const char *only = getenv("LAB_ONLY");
        // A comma-separated list of variant names.
        const std::string list = std::string(",") + only + ",";
        auto keep = [&](std::vector<Variant> &v) { std::vector<Variant> r; for (auto &x : v) if (list.find(std::string(",") + x.name + ",") != std::string::npos) r.push_back(x); v = r; };
        keep(f32v); keep(f64v);
    }
    if (getenv("LAB_SIZES")) { int m, n, k; sscanf(getenv("LAB_SIZES"), "%dx%dx%d", &m, &n, &k); sizes = {{m, n, k}}; }
    time_dtype<float>(f32v, sizes, tm, csv);
    time_dtype<double>(f64v, sizes, tm, csv);
    fclose(csv);
    printf("overall: %s (%d failures)\n", g_fail ? "FAIL" : "pass", g_fail);
    return g_fail ? 1 : 0;
}
