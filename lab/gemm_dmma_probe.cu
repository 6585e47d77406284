/* gemm_dmma_probe.cu - f64 AUTO GEMM against cuBLAS DGEMM in one process, per shape and layout.
 *
 * Built by lab/CMakeLists.txt (-DDUET_BUILD_LAB=ON, cuda backend) into build/lab/, or:
 *   nvcc -O2 -arch=sm_90 -Iinclude lab/gemm_dmma_probe.cu -o gemm_dmma_probe \
 *        -Lbuild -lduet -lcublas
 *   LD_LIBRARY_PATH=build ./gemm_dmma_probe [--bt] [--check] 4096x4096x4096 6144x6144x6144 ...
 *
 * Row-major A (M x K), B (K x N; with --bt stored N x K and used transposed) and C, random
 * values in [-0.5, 0.5). Times cublasDgemm and duet_gemm: three warm-up calls, then 11 samples of
 * back-to-back calls between CUDA events, cuBLAS and duet samples interleaved; prints the medians,
 * the ratio cuBLAS time / duet time, duet's kernel name and the largest difference from cuBLAS's
 * result over sqrt(K) (both round each product's sum in their own order). PROBE_ONCE=1: one
 * checked call per shape, no timing (for compute-sanitizer). PROBE_SEPARATE=1: cuBLAS's samples
 * all first, then duet's, with time stamps. PROBE_REPS=n: calls per sample. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <duet/duet.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        if ((x) != 0) {                                                                            \
            fprintf(stderr, "%s:%d %s -> %d (%s)\n", __FILE__, __LINE__, #x, (int)(x),             \
                    duet_last_error());                                                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static cudaStream_t cs;
static cudaEvent_t e0, e1;

static double sample(const std::function<void()> &f, int reps)
{
    cudaEventRecord(e0, cs);
    for (int q = 0; q < reps; ++q) f();
    cudaEventRecord(e1, cs);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    return ms * 1000.0 / reps;
}

int main(int argc, char **argv)
{
    bool bt = false;
    duet_context *ctx;
    CK(duet_context_create(0, &ctx));
    CK(cudaStreamCreate(&cs));
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    duet_stream *s;
    CK(duet_stream_wrap(ctx, cs, &s));
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetStream(h, cs);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--bt")) {
            bt = true;
            continue;
        }
        long m, n, k;
        if (sscanf(argv[i], "%ldx%ldx%ld", &m, &n, &k) < 3) continue;
        const int reps = getenv("PROBE_REPS")
                             ? atoi(getenv("PROBE_REPS"))
                             : (2.0 * m * n * k > 4e11 ? 2 : (2.0 * m * n * k > 2e10 ? 5 : 20));
        double *a, *b, *c, *c2;
        CK(cudaMalloc(&a, m * k * 8));
        CK(cudaMalloc(&b, k * n * 8));
        CK(cudaMalloc(&c, m * n * 8));
        CK(cudaMalloc(&c2, m * n * 8));
        {
            std::vector<double> hh(std::max(m * k, k * n));
            srand(1);
            for (auto &x : hh) x = (double)rand() / RAND_MAX - 0.5;
            cudaMemcpy(a, hh.data(), m * k * 8, cudaMemcpyHostToDevice);
            for (auto &x : hh) x = (double)rand() / RAND_MAX - 0.5;
            cudaMemcpy(b, hh.data(), k * n * 8, cudaMemcpyHostToDevice);
        }
        duet_buffer *A, *B, *C;
        CK(duet_buffer_wrap(ctx, a, m * k * 8, &A));
        CK(duet_buffer_wrap(ctx, b, k * n * 8, &B));
        CK(duet_buffer_wrap(ctx, c2, m * n * 8, &C));
        duet_matrix Am = duet_matrix_make(A, DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, m, k);
        duet_matrix Bm = bt ? duet_matrix_make(B, DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, n, k)
                            : duet_matrix_make(B, DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, k, n);
        duet_matrix Cm = duet_matrix_make(C, DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, m, n);
        const duet_op opb = bt ? DUET_OP_T : DUET_OP_N;
        const double one = 1.0, zero = 0.0;
        /* C^T (N x M, column-major) = B^T A^T */
        auto cub = [&] {
            cublasDgemm(h, bt ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b,
                        bt ? k : n, a, k, &zero, c, n);
        };
        auto duet = [&] { duet_gemm(s, DUET_OP_N, opb, 1, &Am, &Bm, 0, &Cm, NULL); };
        duet_launch_info info;
        duet_op_options o;
        memset(&o, 0, sizeof o);
        o.info = &info;
        CK(duet_gemm(s, DUET_OP_N, opb, 1, &Am, &Bm, 0, &Cm, &o));
        const bool once = getenv("PROBE_ONCE") != NULL; /* one checked call (compute-sanitizer) */
        for (int w = 0; w < (once ? 1 : 3); ++w) {
            cub();
            if (!once) duet();
        }
        CK(cudaStreamSynchronize(cs));
        std::vector<double> r1(m * n), r2(m * n);
        cudaMemcpy(r1.data(), c, m * n * 8, cudaMemcpyDeviceToHost);
        cudaMemcpy(r2.data(), c2, m * n * 8, cudaMemcpyDeviceToHost);
        double md = 0;
        for (size_t q = 0; q < r1.size(); ++q) md = std::max(md, fabs(r1[q] - r2[q]));
        if (once)
            printf("%ldx%ldx%ld%s %s diff/sqrtk %.2g\n", m, n, k, bt ? " bt" : "", info.kernel,
                   md / sqrt((double)k));
        else {
            std::vector<double> tc, td;
            if (getenv("PROBE_SEPARATE")) {
                /* All of cuBLAS's samples, then all of duet's, each phase stamped (Unix ms) so
                 * that clock and power logs can be matched to it. */
                auto stamp = [](const char *what) {
                    const auto t = std::chrono::system_clock::now().time_since_epoch();
                    printf("stamp %s %lld\n", what,
                           (long long)std::chrono::duration_cast<std::chrono::milliseconds>(t)
                               .count());
                };
                stamp("cublas-begin");
                for (int r = 0; r < 11; ++r) tc.push_back(sample(cub, reps));
                stamp("cublas-end");
                for (int w = 0; w < 3; ++w) duet();
                stamp("duet-begin");
                for (int r = 0; r < 11; ++r) td.push_back(sample(duet, reps));
                stamp("duet-end");
            } else {
                for (int r = 0; r < 11; ++r) {
                    tc.push_back(sample(cub, reps));
                    td.push_back(sample(duet, reps));
                }
            }
            std::sort(tc.begin(), tc.end());
            std::sort(td.begin(), td.end());
            const double flops = 2.0 * m * n * k;
            printf("%ldx%ldx%ld%s cublas %.1f us (%.1f TF) duet %.1f us (%.1f TF) ratio %.3f "
                   "[duet min %.1f max %.1f] %s diff/sqrtk %.2g\n",
                   m, n, k, bt ? " bt" : "", tc[5], flops / tc[5] / 1e6, td[5], flops / td[5] / 1e6,
                   tc[5] / td[5], td[0], td[10], info.kernel, md / sqrt((double)k));
        }
        fflush(stdout);
        duet_buffer_destroy(A);
        duet_buffer_destroy(B);
        duet_buffer_destroy(C);
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
        cudaFree(c2);
    }
    duet_stream_destroy(s);
    duet_context_destroy(ctx);
    return 0;
}
