/* gemm_edges_probe.cu - where the odd f32 shapes lose: copying unaligned operands into 16-byte
 * rows and splitting off a partial last column of tiles, each against cuBLAS in one process.
 *
 * Built by lab/CMakeLists.txt (-DDUET_BUILD_LAB=ON, cuda backend) into build/lab/, or:
 *   nvcc -O2 -arch=sm_90 -Iinclude lab/gemm_edges_probe.cu -o gemm_edges_probe \
 *        -Lbuild -lduet -lcublas
 *   LD_LIBRARY_PATH=build ./gemm_edges_probe 4095x4097x4093 4096x4100x4096 ...
 *
 * Per M x N x K (f32, row-major, random data): cuBLAS; duet_gemm on the whole ("plain", the
 * library's own plan); columns [0, n_main) and the rest as two duet_gemm calls on views
 * ("strip", n_main = N rounded down to 128); the copies alone; duet_gemm on the copies (whole,
 * and the strip's left part); copies then the strip ("pack+strip"). Median of 11 rounds of
 * back-to-back calls, CUDA events; docs/results/gemm-edges-lab-2026-11-24-h100.log. */
#include <duet/duet.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>
#include <functional>
#define CK(x) do{ if((x)!=0){fprintf(stderr,"%s:%d %s -> %d (%s)\n",__FILE__,__LINE__,#x,(int)(x),duet_last_error());exit(1);} }while(0)

/* Row copy into a padded pitch: coalesced scalar loads, 4 per thread. */
__global__ void pack_rows(float *dst, int64_t ldd, const float *src, int64_t lds, int64_t cols)
{
    const int64_t r = blockIdx.y;
    const int64_t c0 = (int64_t)blockIdx.x * 1024 + threadIdx.x;
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) { const int64_t c = c0 + j * 256; v[j] = c < cols ? src[r * lds + c] : 0.f; }
#pragma unroll
    for (int j = 0; j < 4; ++j) { const int64_t c = c0 + j * 256; if (c < ldd) dst[r * ldd + c] = v[j]; }
}
static void pack(cudaStream_t s, float *d, int64_t ldd, const float *src, int64_t lds, int64_t rows, int64_t cols)
{
    for (int64_t r0 = 0; r0 < rows; r0 += 65535) {
        int64_t rr = std::min<int64_t>(65535, rows - r0);
        dim3 g((unsigned)((ldd + 1023) / 1024), (unsigned)rr);
        pack_rows<<<g, 256, 0, s>>>(d + r0 * ldd, ldd, src + r0 * lds, lds, cols);
    }
}
static int64_t r4(int64_t x) { return (x + 3) / 4 * 4; }
static cudaStream_t cs; static cudaEvent_t e0, e1;
static double timeit(const std::function<void()> &f, int reps)
{
    f(); f(); CK(cudaStreamSynchronize(cs));
    std::vector<double> t;
    for (int r = 0; r < 11; ++r) {
        cudaEventRecord(e0, cs);
        for (int q = 0; q < reps; ++q) f();
        cudaEventRecord(e1, cs); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms * 1000.0 / reps);
    }
    std::sort(t.begin(), t.end()); return t[5];
}
int main(int argc, char **argv)
{
    duet_context *ctx; CK(duet_context_create(0, &ctx));
    CK(cudaStreamCreate(&cs)); cudaEventCreate(&e0); cudaEventCreate(&e1);
    duet_stream *s; CK(duet_stream_wrap(ctx, cs, &s));
    cublasHandle_t h; cublasCreate(&h); cublasSetStream(h, cs);
    for (int i = 1; i < argc; ++i) {
        long m, n, k; if (sscanf(argv[i], "%ldx%ldx%ld", &m, &n, &k) < 3) continue;
        const int reps = 2.0 * m * n * k > 4e11 ? 3 : 10;
        const int64_t lk = r4(k), ln = r4(n);
        const int64_t ni = n % 128 ? n / 128 * 128 : n;
        float *a, *b, *c, *c2, *a2, *b2;
        CK(cudaMalloc(&a, m * k * 4)); CK(cudaMalloc(&b, k * n * 4)); CK(cudaMalloc(&c, m * n * 4)); CK(cudaMalloc(&c2, m * n * 4));
        CK(cudaMalloc(&a2, m * lk * 4)); CK(cudaMalloc(&b2, k * ln * 4));
        size_t big = std::max(m * k, k * n); std::vector<float> hh(big); srand(1);
        for (auto &x : hh) x = (float)rand() / RAND_MAX - 0.5f;
        cudaMemcpy(a, hh.data(), m * k * 4, cudaMemcpyHostToDevice); cudaMemcpy(b, hh.data(), k * n * 4, cudaMemcpyHostToDevice);
        duet_buffer *A, *B, *C, *A2, *B2, *C2;
        CK(duet_buffer_wrap(ctx, a, m * k * 4, &A)); CK(duet_buffer_wrap(ctx, b, k * n * 4, &B)); CK(duet_buffer_wrap(ctx, c, m * n * 4, &C));
        CK(duet_buffer_wrap(ctx, c2, m * n * 4, &C2));
        CK(duet_buffer_wrap(ctx, a2, m * lk * 4, &A2)); CK(duet_buffer_wrap(ctx, b2, k * ln * 4, &B2));
        auto mk = [](duet_buffer *bf, int64_t r, int64_t cc, int64_t ld, size_t off) { duet_matrix x = duet_matrix_make(bf, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, r, cc); x.ld = ld; x.offset = off; return x; };
        duet_matrix Am = mk(A, m, k, k, 0), Bm = mk(B, k, n, n, 0), Cm = mk(C, m, n, n, 0);
        duet_matrix Bl = mk(B, k, ni, n, 0), Br = mk(B, k, n - ni, n, ni);
        duet_matrix Cl = mk(C2, m, ni, n, 0), Cr = mk(C2, m, n - ni, n, ni);
        duet_matrix Ap = mk(A2, m, k, lk, 0), Bp = mk(B2, k, n, ln, 0), Bpl = mk(B2, k, ni, ln, 0);
        duet_launch_info info; duet_op_options o; memset(&o, 0, sizeof o); o.info = &info;
        char kp[96], kl[96], kr[96], kpk[96];
        const float one = 1.f, zero = 0.f;
        auto cub = [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n); };
        auto plain = [&] { duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &Am, &Bm, 0, &Cm, NULL); };
        auto strip = [&] { duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &Am, &Bl, 0, &Cl, NULL); if (ni < n) duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &Am, &Br, 0, &Cr, NULL); };
        auto copies = [&] { if (lk != k) pack(cs, a2, lk, a, k, m, k); if (ln != n) pack(cs, b2, ln, b, n, k, n); };
        duet_matrix *PA = lk != k ? &Ap : &Am, *PBl = ln != n ? &Bpl : &Bl, *PB = ln != n ? &Bp : &Bm;
        auto packed_main = [&] { duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, PA, PBl, 0, &Cl, NULL); if (ni < n) duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &Am, &Br, 0, &Cr, NULL); };
        auto packed_whole = [&] { duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, PA, PB, 0, &Cm, NULL); };
        auto pack_strip = [&] { copies(); packed_main(); };
        auto main_only = [&] { duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &Am, &Bl, 0, &Cl, NULL); };
        auto strip_only = [&] { if (ni < n) duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &Am, &Br, 0, &Cr, NULL); };
        auto pmain_only = [&] { duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, PA, PBl, 0, &Cl, NULL); };
        copies();
        CK(duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &Am, &Bm, 0, &Cm, &o)); snprintf(kp, 96, "%s", info.kernel);
        CK(duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &Am, &Bl, 0, &Cl, &o)); snprintf(kl, 96, "%s", info.kernel);
        if (ni < n) { CK(duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, &Am, &Br, 0, &Cr, &o)); snprintf(kr, 96, "%s", info.kernel); } else snprintf(kr, 96, "-");
        CK(duet_gemm(s, DUET_OP_N, DUET_OP_N, 1, PA, PBl, 0, &Cl, &o)); snprintf(kpk, 96, "%s", info.kernel);
        CK(cudaStreamSynchronize(cs));
        /* check: packed + strip equals plain bit for bit? (no: different kernels) - compare to cuBLAS within tolerance */
        pack_strip(); cub(); CK(cudaStreamSynchronize(cs));
        std::vector<float> r1(m * n), r2(m * n); cudaMemcpy(r1.data(), c, m * n * 4, cudaMemcpyDeviceToHost); cudaMemcpy(r2.data(), c2, m * n * 4, cudaMemcpyDeviceToHost);
        double md = 0; for (size_t q = 0; q < r1.size(); ++q) md = std::max(md, (double)fabsf(r1[q] - r2[q]));
        double tc = timeit(cub, reps), tp = timeit(plain, reps), ts = timeit(strip, reps), tcp = timeit(copies, reps),
               tpm = timeit(packed_main, reps), tpw = timeit(packed_whole, reps), tps = timeit(pack_strip, reps),
               tmo = timeit(main_only, reps), tso = timeit(strip_only, reps), tpmo = timeit(pmain_only, reps);
        printf("%ldx%ldx%ld r%ld maxdiff %.2g | cublas %.1f | plain %.1f (%.3f) %s | strip %.1f (%.3f) = main %.1f %s + strip %.1f %s | copies %.1f | packed: whole %.1f, main %.1f %s, main+strip %.1f | pack+strip %.1f (%.3f) | best %.3f\n",
               m, n, k, n - ni, md, tc, tp, tc / tp, kp, ts, tc / ts, tmo, kl, tso, kr, tcp, tpw, tpmo, kpk, tpm, tps, tc / tps, tc / std::min(tp, std::min(ts, tps)));
        fflush(stdout);
        duet_buffer_destroy(A); duet_buffer_destroy(B); duet_buffer_destroy(C); duet_buffer_destroy(C2); duet_buffer_destroy(A2); duet_buffer_destroy(B2);
        cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(c2); cudaFree(a2); cudaFree(b2);
    }
    duet_stream_destroy(s); duet_context_destroy(ctx); return 0;
}
