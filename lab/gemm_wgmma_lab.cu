// gemm_wgmma_lab.cu - the Hopper wgmma GEMM path through duet_gemm: checked and timed against cuBLAS.
//
// Built by lab/CMakeLists.txt (-DDUET_BUILD_LAB=ON, CUDA backend) against the library:
//   build/lab/gemm_wgmma_lab [--quick] [--check-only] [--reps N]   (--quick: a third of part 1,
//   no 8192)
// DUET_GEMM_HOPPER_ALL=1 is set before the first call (docs/environment.md), so every shape runs
// on the wgmma path however small (the library otherwise falls back below a wave of tiles);
// a case that ran another kernel fails, naming it. Part 1: small, odd, batched and alpha/beta
// cases against a double / wrapping-uint32 host reference (gauge bound), C poisoned with NaN
// when beta == 0 and its padding checked untouched. Part 2: large shapes checked against
// cuBLAS (cublasGemmEx / strided batched: f16 and bf16 with CUBLAS_COMPUTE_32F, TF32 with
// CUBLAS_COMPUTE_32F_FAST_TF32, i8 with CUBLAS_COMPUTE_32I) and timed with events, L2 flushed
// before every run, median of N runs; ratio = cuBLAS time / duet time. Exit status 77 when the
// device is not an sm_90.

#include <duet/duet.h>

#include "lab_check.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>


// ---- data --------------------------------------------------------------------------------

__device__ __forceinline__ uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
// Uniform in [-1, 1) (never all zero) in the buffer's dtype; i8 in [-128, 127]; nan fills NaN.
__global__ void fill_kernel(void *p, size_t count, int dtype, uint64_t seed, int nan)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t r = mix64(seed * 0x100000001B3ull + i);
        const float u = nan ? __int_as_float(0x7fc00000) : (float)(r >> 40) * 0x1p-23f - 1.0f;
        switch (dtype) {
        case DUET_DTYPE_F32: ((float *)p)[i] = u; break;
        case DUET_DTYPE_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(u); break;
        case DUET_DTYPE_F16: ((__half *)p)[i] = __float2half_rn(u); break;
        case DUET_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)(r >> 56); break;
        case DUET_DTYPE_I32:
            ((int32_t *)p)[i] = nan ? (int32_t)0x7fc00000 : (int32_t)(r >> 40) - (1 << 23);
            break;
        }
    }
}
static size_t esize(duet_dtype d)
{
    return d == DUET_DTYPE_I8 ? 1 : (d == DUET_DTYPE_F16 || d == DUET_DTYPE_BF16) ? 2 : 4;
}
static void fill(void *p, size_t count, duet_dtype d, uint64_t seed, int nan)
{
    if (!count) return;
    fill_kernel<<<1024, 256>>>(p, count, (int)d, seed, nan);
    CK(cudaGetLastError());
}
static double hval(const void *p, size_t i, duet_dtype d)
{
    switch (d) {
    case DUET_DTYPE_F32: return ((const float *)p)[i];
    case DUET_DTYPE_BF16: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case DUET_DTYPE_F16: return (double)__half2float(((const __half *)p)[i]);
    case DUET_DTYPE_I8: return ((const int8_t *)p)[i];
    case DUET_DTYPE_I32: return ((const int32_t *)p)[i];
    default: return 0;
    }
}
static double tf32_trunc(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    u &= 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

// ---- one case ------------------------------------------------------------------------------

struct Case {
    duet_dtype in, c;
    int64_t m, n, k, batch;
    int64_t lda, ldb, ldc; // 0: packed (k, k, n)
    int a_bcast, b_bcast;  // batch stride 0
    double alpha, beta;
    bool time, host_ref;
    int a_mn, b_mn; // A M-major (stored K x M, lda >= m), B N-major (stored K x N, ldb >= n)
};

static cublasHandle_t g_blas;
static duet_context *g_ctx;
static duet_stream *g_stream; // the legacy default stream, which cuBLAS and the events use too
static void *g_flush;
static const size_t kFlushBytes = (size_t)256 << 20;
static int g_reps = 30;
static int g_failures = 0;

static const char *kname(const Case &t)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "%s->%s %c%c",
             t.in == DUET_DTYPE_F32 ? "tf32" : duet_dtype_name(t.in), duet_dtype_name(t.c),
             t.a_mn ? 'm' : 'k', t.b_mn ? 'n' : 'k');
    return buf;
}

static cudaDataType cu_type(duet_dtype d)
{
    switch (d) {
    case DUET_DTYPE_F32: return CUDA_R_32F;
    case DUET_DTYPE_BF16: return CUDA_R_16BF;
    case DUET_DTYPE_F16: return CUDA_R_16F;
    case DUET_DTYPE_I8: return CUDA_R_8I;
    default: return CUDA_R_32I;
    }
}

static void run_cublas(const Case &t, const void *A, const void *B, void *C, int64_t lda,
                       int64_t ldb, int64_t ldc, int64_t sa, int64_t sb, int64_t sc)
{
    // Row-major C (m x n) = A (m x k, K-major) B (stored n x k) is column-major
    // C^T (n x m) = B^T A: op(B) = T on the column-major k x n B, op(A) = N on the k x m A.
    const float fa = (float)t.alpha, fb = (float)t.beta;
    const int32_t ia = (int32_t)t.alpha, ib = (int32_t)t.beta;
    const void *pa = t.in == DUET_DTYPE_I8 ? (const void *)&ia : (const void *)&fa;
    const void *pb = t.in == DUET_DTYPE_I8 ? (const void *)&ib : (const void *)&fb;
    cublasComputeType_t ct = t.in == DUET_DTYPE_I8    ? CUBLAS_COMPUTE_32I
                             : t.in == DUET_DTYPE_F32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                      : CUBLAS_COMPUTE_32F;
    // An N-major B is the column-major n x k matrix (op N); an M-major A the column-major
    // m x k one (op T).
    const cublasOperation_t opb = t.b_mn ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t opa = t.a_mn ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (t.batch == 1)
        CB(cublasGemmEx(g_blas, opb, opa, (int)t.n, (int)t.m, (int)t.k, pa, B, cu_type(t.in),
                        (int)ldb, A, cu_type(t.in), (int)lda, pb, C, cu_type(t.c), (int)ldc, ct,
                        CUBLAS_GEMM_DEFAULT));
    else
        CB(cublasGemmStridedBatchedEx(g_blas, opb, opa, (int)t.n, (int)t.m, (int)t.k, pa, B,
                                      cu_type(t.in), (int)ldb, sb, A, cu_type(t.in), (int)lda, sa,
                                      pb, C, cu_type(t.c), (int)ldc, sc, (int)t.batch, ct,
                                      CUBLAS_GEMM_DEFAULT));
}

static float median_ms(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static void run_case(const Case &t)
{
    const int64_t lda = t.lda ? t.lda : (t.a_mn ? t.m : t.k);
    const int64_t ldb = t.ldb ? t.ldb : (t.b_mn ? t.n : t.k);
    const int64_t ldc = t.ldc ? t.ldc : t.n;
    const int64_t arows = t.a_mn ? t.k : t.m, brows = t.b_mn ? t.k : t.n;
    const int64_t sa = t.a_bcast ? 0 : arows * lda, sb = t.b_bcast ? 0 : brows * ldb;
    const int64_t sc = t.m * ldc;
    const int64_t na = (t.a_bcast ? 1 : t.batch) * arows * lda;
    const int64_t nb = (t.b_bcast ? 1 : t.batch) * brows * ldb;
    // Element (i, kk) of A and (kk, j) of B.
    const int64_t a_si = t.a_mn ? 1 : lda, a_sk = t.a_mn ? lda : 1;
    const int64_t b_sj = t.b_mn ? 1 : ldb, b_sk = t.b_mn ? ldb : 1;
    const int64_t nc = t.batch * t.m * ldc;
    const size_t ei = esize(t.in), ec = esize(t.c);
    void *A, *B, *C, *Cref, *C0;
    CK(cudaMalloc(&A, na * ei));
    CK(cudaMalloc(&B, nb * ei));
    CK(cudaMalloc(&C, nc * ec));
    CK(cudaMalloc(&Cref, nc * ec));
    CK(cudaMalloc(&C0, nc * ec));
    static uint64_t seed = 1;
    fill(A, na, t.in, seed++, 0);
    fill(B, nb, t.in, seed++, 0);
    fill(C0, nc, t.c, seed++, t.beta == 0.0);

    // The operands as duet sees them: A's element (i, kk) at i a_si + kk a_sk, B's (kk, j) at
    // kk b_sk + j b_sj, C row-major; a batch stride of 0 broadcasts.
    duet_buffer *bufs[3] = {nullptr, nullptr, nullptr};
    duet_matrix ma, mb, mc;
    duet_op_options opt;
    duet_launch_info info;
    memset(&opt, 0, sizeof opt);
    opt.math = t.in == DUET_DTYPE_F32 ? DUET_MATH_TF32 : DUET_MATH_DEFAULT;
    opt.info = &info;
    DK(duet_buffer_wrap(g_ctx, A, na * ei, &bufs[0]));
    DK(duet_buffer_wrap(g_ctx, B, nb * ei, &bufs[1]));
    DK(duet_buffer_wrap(g_ctx, C, nc * ec, &bufs[2]));
    ma = duet_matrix_make(bufs[0], t.in, t.a_mn ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR,
                          t.m, t.k);
    ma.ld = lda;
    mb = duet_matrix_make(bufs[1], t.in, t.b_mn ? DUET_LAYOUT_ROW_MAJOR : DUET_LAYOUT_COL_MAJOR,
                          t.k, t.n);
    mb.ld = ldb;
    mc = duet_matrix_make(bufs[2], t.c, DUET_LAYOUT_ROW_MAJOR, t.m, t.n);
    mc.ld = ldc;
    ma.batch_count = mb.batch_count = mc.batch_count = t.batch;
    ma.batch_stride = sa;
    mb.batch_stride = sb;
    mc.batch_stride = sc;

    CK(cudaMemcpy(C, C0, nc * ec, cudaMemcpyDeviceToDevice));
    {
        const duet_status st = duet_gemm(g_stream, DUET_OP_N, DUET_OP_N, t.alpha, &ma, &mb, t.beta,
                                         &mc, &opt);
        if (st != DUET_SUCCESS || strncmp(info.kernel, "gemm_wgmma", 10) != 0) {
            printf("%-14s %5lld %5lld %5lld b%-3lld  FAIL: %s\n", kname(t), (long long)t.m,
                   (long long)t.n, (long long)t.k, (long long)t.batch,
                   st != DUET_SUCCESS ? duet_last_error() : info.kernel);
            ++g_failures;
            goto done;
        }
    }
    CK(cudaDeviceSynchronize());
    {
        std::vector<char> hc(nc * ec), hr(nc * ec), h0(nc * ec);
        CK(cudaMemcpy(hc.data(), C, nc * ec, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h0.data(), C0, nc * ec, cudaMemcpyDeviceToHost));
        std::vector<char> ha, hb;
        bool ref32 = false;
        const bool is_int = t.in == DUET_DTYPE_I8;
        double u_out = t.c == DUET_DTYPE_BF16 ? 0x1p-8 : t.c == DUET_DTYPE_F16 ? 0x1p-11 : 0.0;
        double max_ratio = 0, se = 0, sr = 0;
        long long bad = 0, nans = 0, pad_bad = 0;
        if (t.host_ref) {
            ha.resize(na * ei);
            hb.resize(nb * ei);
            CK(cudaMemcpy(ha.data(), A, na * ei, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hb.data(), B, nb * ei, cudaMemcpyDeviceToHost));
        } else if (ec == 2 && t.beta == 0) {
            // A 16-bit C is checked against cuBLAS's f32 result (one rounding away), not
            // against cuBLAS's own 16-bit output (whose kernels may round differently).
            Case t32 = t;
            t32.c = DUET_DTYPE_F32;
            void *R32;
            CK(cudaMalloc(&R32, nc * 4));
            run_cublas(t32, A, B, R32, lda, ldb, ldc, sa, sb, sc);
            CK(cudaDeviceSynchronize());
            std::vector<float> r32(nc);
            CK(cudaMemcpy(r32.data(), R32, nc * 4, cudaMemcpyDeviceToHost));
            CK(cudaFree(R32));
            ref32 = true;
            hr.resize(nc * 4);
            memcpy(hr.data(), r32.data(), nc * 4);
        } else {
            CK(cudaMemcpy(Cref, C0, nc * ec, cudaMemcpyDeviceToDevice));
            run_cublas(t, A, B, Cref, lda, ldb, ldc, sa, sb, sc);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hr.data(), Cref, nc * ec, cudaMemcpyDeviceToHost));
        }
        const duet_dtype rt = ref32 ? DUET_DTYPE_F32 : t.c;
        // rms of the reference, for the scale of the vs-cuBLAS bound
        double rms = 0;
        if (!t.host_ref) {
            for (int64_t bt = 0; bt < t.batch; ++bt)
                for (int64_t i = 0; i < t.m; ++i)
                    for (int64_t j = 0; j < t.n; ++j) {
                        double r = hval(hr.data(), bt * sc + i * ldc + j, rt);
                        rms += r * r;
                    }
            rms = sqrt(rms / (double)(t.batch * t.m * t.n));
        }
        for (int64_t bt = 0; bt < t.batch; ++bt)
            for (int64_t i = 0; i < t.m; ++i) {
                for (int64_t j = 0; j < ldc; ++j) {
                    const int64_t ci = bt * sc + i * ldc + j;
                    if (j >= t.n) { // padding: untouched
                        if (memcmp(&hc[ci * ec], &h0[ci * ec], ec)) ++pad_bad;
                        continue;
                    }
                    const double d = hval(hc.data(), ci, t.c);
                    if (std::isnan(d)) {
                        ++nans;
                        continue;
                    }
                    double r, bound;
                    if (t.host_ref) {
                        const char *pa = ha.data() + (t.a_bcast ? 0 : bt * sa) * ei;
                        const char *pb = hb.data() + (t.b_bcast ? 0 : bt * sb) * ei;
                        if (is_int) {
                            uint32_t acc = 0;
                            for (int64_t kk = 0; kk < t.k; ++kk)
                                acc +=
                                    (uint32_t)(int32_t)((const int8_t *)pa)[i * a_si + kk * a_sk] *
                                    (uint32_t)(int32_t)((const int8_t *)pb)[j * b_sj + kk * b_sk];
                            uint32_t c0 = (uint32_t)((const int32_t *)h0.data())[ci];
                            uint32_t v = (uint32_t)(int32_t)t.alpha * acc +
                                         (t.beta != 0 ? (uint32_t)(int32_t)t.beta * c0 : 0u);
                            r = (double)(int32_t)v;
                            bound = 0;
                        } else {
                            double acc = 0, gauge = 0;
                            for (int64_t kk = 0; kk < t.k; ++kk) {
                                double x = hval(pa, i * a_si + kk * a_sk, t.in),
                                       y = hval(pb, j * b_sj + kk * b_sk, t.in);
                                if (t.in == DUET_DTYPE_F32) { // tf32 reads truncated inputs
                                    x = tf32_trunc(x);
                                    y = tf32_trunc(y);
                                }
                                acc += x * y;
                                gauge += fabs(x * y);
                            }
                            const double c0 = t.beta != 0 ? hval(h0.data(), ci, t.c) : 0.0;
                            r = t.alpha * acc + t.beta * c0;
                            gauge = fabs(t.alpha) * gauge + fabs(t.beta * c0);
                            bound = u_out * fabs(r) + (double)(t.k + 4) * 0x1p-23 * gauge + 1e-30;
                        }
                    } else {
                        r = hval(hr.data(), ci, rt);
                        bound = is_int ? 0
                                       : (ref32 ? 1 : 2) * u_out * fabs(r) +
                                             (t.in == DUET_DTYPE_F32 ? 2e-2 : 1e-4) * rms;
                    }
                    const double e = fabs(d - r);
                    se += e * e;
                    sr += r * r;
                    if (e > bound) ++bad;
                    if (bound > 0) max_ratio = std::max(max_ratio, e / bound);
                }
            }
        const bool ok = !bad && !nans && !pad_bad;
        if (!ok) ++g_failures;
        char check[160];
        snprintf(check, sizeof check, "%s relerr %.1e max/bound %.2f%s%s", ok ? "ok  " : "FAIL",
                 sr > 0 ? sqrt(se / sr) : 0.0, max_ratio, bad ? " (elements over bound)" : "",
                 nans ? " (NaN: unwritten?)" : "");
        if (pad_bad)
            snprintf(check + strlen(check), sizeof check - strlen(check), " (padding written)");
        if (bad || nans)
            snprintf(check + strlen(check), sizeof check - strlen(check), " bad=%lld nan=%lld", bad,
                     nans);

        if (!t.time) {
            printf("%-14s %5lld %5lld %5lld b%-3lld a=%g b=%g%s%s  %s  [%s]\n", kname(t),
                   (long long)t.m, (long long)t.n, (long long)t.k, (long long)t.batch, t.alpha,
                   t.beta, t.a_bcast ? " bcastA" : "", t.b_bcast ? " bcastB" : "", check,
                   t.host_ref ? "host ref" : "vs cuBLAS");
        } else {
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            std::vector<float> td, tc;
            for (int which = 0; which < 2; ++which) {
                std::vector<float> &v = which ? tc : td;
                for (int r = 0; r < g_reps + 3; ++r) {
                    CK(cudaMemsetAsync(g_flush, r & 0xff, kFlushBytes));
                    CK(cudaEventRecord(e0));
                    if (which)
                        run_cublas(t, A, B, Cref, lda, ldb, ldc, sa, sb, sc);
                    else
                        DK(duet_gemm(g_stream, DUET_OP_N, DUET_OP_N, t.alpha, &ma, &mb, t.beta,
                                     &mc, &opt));
                    CK(cudaEventRecord(e1));
                    CK(cudaEventSynchronize(e1));
                    float ms;
                    CK(cudaEventElapsedTime(&ms, e0, e1));
                    if (r >= 3) v.push_back(ms);
                }
            }
            const double flop = 2.0 * t.m * t.n * t.k * t.batch;
            const float md = median_ms(td), mc_ms = median_ms(tc);
            printf("%-14s %5lld %5lld %5lld b%-3lld  duet %8.3f ms %6.1f T  cublas %8.3f ms %6.1f T"
                   "  ratio %.3f  %s  [%s]\n",
                   kname(t), (long long)t.m, (long long)t.n, (long long)t.k, (long long)t.batch, md,
                   flop / md * 1e-9, mc_ms, flop / mc_ms * 1e-9, mc_ms / md, check, info.kernel);
            CK(cudaEventDestroy(e0));
            CK(cudaEventDestroy(e1));
        }
    }
done:
    fflush(stdout);
    for (duet_buffer *b : bufs)
        if (b) DK(duet_buffer_destroy(b));
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(Cref));
    CK(cudaFree(C0));
}

int main(int argc, char **argv)
{
    bool quick = false, check_only = false;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--check-only"))
            check_only = true;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
    }
    // Read once per process by the library, at its first GEMM: set before any.
    setenv("DUET_GEMM_HOPPER_ALL", "1", 1);
    duet_device_props props;
    if (duet_context_create(0, &g_ctx) != DUET_SUCCESS) {
        printf("gemm_wgmma_lab: no device (%s); skipped\n", duet_last_error());
        return 77;
    }
    DK(duet_context_get_props(g_ctx, &props));
    if (props.capability_major != 9 || props.capability_minor != 0) {
        printf("gemm_wgmma_lab: %s is %s, not sm_90; skipped\n", props.name, props.arch);
        return 77;
    }
    DK(duet_stream_wrap(g_ctx, nullptr, &g_stream));
    printf("device: %s (%s, %d SMs), reps %d (median), L2 flushed before each run\n", props.name,
           props.arch, props.compute_units, g_reps);
    CB(cublasCreate(&g_blas));
    CK(cudaMalloc(&g_flush, kFlushBytes));

    const duet_dtype BF = DUET_DTYPE_BF16, H = DUET_DTYPE_F16, F = DUET_DTYPE_F32,
                     I8 = DUET_DTYPE_I8, I32 = DUET_DTYPE_I32;
    struct Combo {
        duet_dtype in, c;
    };
    const Combo combos[] = {{BF, F}, {BF, BF}, {H, F}, {H, H}, {F, F}, {I8, I32}};

    printf("\n== part 1: correctness, host reference ==\n");
    struct Shape {
        int64_t m, n, k, batch, lda, ldb, ldc;
        int ab, bb;
        double alpha, beta;
    };
    const Shape small[] = {
        {1, 1, 1, 1, 16, 16, 1, 0, 0, 1, 0},
        {7, 13, 5, 1, 16, 16, 13, 0, 0, 1, 0},
        {129, 257, 65, 1, 80, 80, 260, 0, 0, 1, 0},
        {300, 200, 1000, 1, 1008, 1024, 201, 0, 0, -1, 0},
        {128, 256, 128, 1, 0, 0, 0, 0, 0, 0.5, 2},
        {257, 300, 300, 1, 320, 304, 301, 0, 0, 2, -1},
        {100, 70, 90, 3, 96, 96, 70, 0, 0, 1, 0.5},
        {100, 70, 90, 3, 96, 96, 72, 1, 0, 1, 0},
        {100, 70, 90, 3, 96, 96, 72, 0, 1, -2, 1},
        {100, 64, 90, 3, 96, 96, 80, 0, 0, 1, 0},
        {1000, 1, 64, 1, 64, 64, 1, 0, 0, 1, 0},
        {1, 1000, 64, 1, 64, 64, 1000, 0, 0, 1, 0},
        {64, 512, 33, 2, 48, 48, 512, 0, 0, 3, 0},
    };
    for (const Combo &co : combos)
        for (const Shape &s : small) {
            if (quick && (&s - small) % 3) continue;
            Case t{co.in, co.c, s.m,  s.n,     s.k,    s.batch, s.lda, s.ldb,
                   s.ldc, s.ab, s.bb, s.alpha, s.beta, false,   true,    0, 0};
            // TMA needs 16-byte strides: round the leading dimensions for 4-byte inputs
            // (i8 needs multiples of 16 elements, which every listed ld already is).
            if (co.in == F) {
                if (t.lda == 0) t.lda = (t.k + 3) / 4 * 4;
                if (t.ldb == 0) t.ldb = (t.k + 3) / 4 * 4;
            }
            if (co.in == I8) {
                if (t.lda == 0) t.lda = (t.k + 15) / 16 * 16;
                if (t.ldb == 0) t.ldb = (t.k + 15) / 16 * 16;
                t.alpha = t.alpha == 0.5 ? 100000 : t.alpha; // wraps modulo 2^32
            }
            if (t.lda % 16 || t.ldb % 16) continue;
            run_case(t);
        }

    // The other operand layouts (16-bit inputs): leading dimensions padded past m or n.
    for (const Combo &co : combos) {
        if (co.in != BF && co.in != H) continue;
        for (int lay = 1; lay < 4; ++lay)
            for (const Shape &s : small) {
                if (quick && (&s - small) % 3) continue;
                Case t{co.in, co.c, s.m,     s.n,    s.k,   s.batch, s.lda, s.ldb,   s.ldc,
                       s.ab,  s.bb, s.alpha, s.beta, false, true,    lay & 1, lay >> 1};
                if (t.a_mn) t.lda = (t.m + 7) / 8 * 8 + 8 * (lay & 2 ? 0 : 1);
                if (t.b_mn) t.ldb = (t.n + 7) / 8 * 8 + 8;
                run_case(t);
            }
    }

    if (!check_only) {
        printf("\n== part 2: vs cuBLAS, timed ==\n");
        struct Big {
            int64_t m, n, k, lda, ldb, ldc;
        };
        const Big big[] = {{4096, 4096, 4096, 0, 0, 0},
                           {8192, 8192, 8192, 0, 0, 0},
                           {4095, 4097, 4093, 4096, 4096, 4097}};
        for (const Combo &co : combos)
            for (const Big &s : big) {
                if (quick && s.m == 8192) continue;
                Case t{co.in, co.c, s.m, s.n, s.k, 1, s.lda, s.ldb, s.ldc, 0, 0, 1, 0, true, false, 0, 0};
                if (co.in == I8 && s.m == 4095) continue; // cuBLAS: not supported
                run_case(t);
            }
        // The other operand layouts at size (lds = m or n).
        for (int lay = 1; lay < 4; ++lay) {
            const Combo lc[] = {{BF, F}, {BF, BF}, {H, H}};
            for (const Combo &co : lc)
                for (int64_t sz : {4096, 8192}) {
                    if (quick && sz == 8192) continue;
                    if (sz == 8192 && co.in == H) continue;
                    run_case(Case{co.in, co.c, sz, sz, sz, 1, 0, 0, 0, 0, 0, 1, 0, true, false,
                                  lay & 1, lay >> 1});
                }
            run_case(Case{BF, BF, 4095, 4097, 4093, 1, 4096, 4104, 4097, 0, 0, 1, 0, true, false,
                          lay & 1, lay >> 1});
        }
        // Medium sizes (bf16 -> bf16) for the size threshold, and beta != 0 at size.
        if (!quick) {
            const int64_t mids[] = {256, 512, 768, 1024, 1536, 2048};
            for (int64_t s : mids)
                run_case(Case{BF, BF, s, s, s, 1, 0, 0, 0, 0, 0, 1, 0, true, false, 0, 0});
            run_case(Case{BF, BF, 1024, 1024, 4096, 1, 0, 0, 0, 0, 0, 1, 0, true, false, 0, 0});
            run_case(Case{BF, BF, 512, 512, 8192, 1, 0, 0, 0, 0, 0, 1, 0, true, false, 0, 0});
            run_case(Case{BF, F, 4096, 4096, 4096, 1, 0, 0, 0, 0, 0, 0.5, 0.25, true, false, 0, 0});
            run_case(Case{BF, BF, 1024, 1024, 1024, 8, 0, 0, 0, 0, 0, 1, 0, true, false, 0, 0});
        }
    }
    printf("\n%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures);
    CB(cublasDestroy(g_blas));
    CK(cudaFree(g_flush));
    DK(duet_stream_destroy(g_stream));
    DK(duet_context_destroy(g_ctx));
    return g_failures ? 1 : 0;
}
