/* gemm_narrow_probe.cu - duet_gemm beside cublasGemmEx on narrow problems (n or m <= 64), one process. */
#include <duet/duet.h>

#include "lab_check.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

/*
 * Each case: random operands, 3 warm-up calls each, then REPS timed calls of duet and cuBLAS
 * interleaved, each alone between CUDA events after a 256 MiB memset that evicts L2; the median
 * of each, the ratio cuBLAS time / duet time, the bandwidth of reading A once against the
 * measured device-to-device copy bandwidth, and the largest difference between the two results
 * relative to the largest |C|. Each call is also timed warm (no memset before it): the gap
 * between the two is what a call pays for fetching its operands and its code from memory.
 * Usage: gemm_narrow_probe [reps [small|full|floor [label substring]]]; "floor" runs tiny
 * problems of every dtype and layout instead, where the time is the call's fixed cost, and
 * splits that cost: `launches` (info.launches), `fill_us` (one duet_fill of C after the same
 * memset: the floor of any one launch) and `kmaj_us` (the same GEMM on K-major copies of A and
 * B with rows padded to 16 bytes, made before the timing: the call without its operand copies).
 */


struct kase {
    const char *label;
    duet_dtype in, out;
    duet_math_mode math;
    long m, n, k;
    int a_col; /* A stored column-major (m-contiguous) */
    int b_col; /* B stored column-major (k-contiguous) */
};

static size_t esize(duet_dtype d) { return duet_dtype_size(d); }

static cudaDataType cuda_type(duet_dtype d)
{
    switch (d) {
    case DUET_DTYPE_F32: return CUDA_R_32F;
    case DUET_DTYPE_F64: return CUDA_R_64F;
    case DUET_DTYPE_F16: return CUDA_R_16F;
    case DUET_DTYPE_BF16: return CUDA_R_16BF;
    case DUET_DTYPE_I8: return CUDA_R_8I;
    case DUET_DTYPE_I32: return CUDA_R_32I;
    default: return CUDA_R_32F;
    }
}

static uint16_t f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
static uint16_t f2h(float f)
{
    /* small values in [-1, 1]: via the half conversion of the host compiler */
    const __half_raw r = __float2half(f);
    return r.x;
}
static double to_double(const void *p, duet_dtype d, size_t i)
{
    switch (d) {
    case DUET_DTYPE_F32: return ((const float *)p)[i];
    case DUET_DTYPE_F64: return ((const double *)p)[i];
    case DUET_DTYPE_I32: return ((const int32_t *)p)[i];
    case DUET_DTYPE_BF16: {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case DUET_DTYPE_F16: {
        __half_raw r;
        r.x = ((const uint16_t *)p)[i];
        return __half2float(__half(r));
    }
    default: return 0;
    }
}

static void fill(void *dev, duet_dtype d, size_t count, unsigned seed)
{
    std::vector<unsigned char> h(count * esize(d));
    srand(seed);
    for (size_t i = 0; i < count; i++) {
        float v = (float)rand() / RAND_MAX * 2.0f - 1.0f;
        if (v == 0.0f) v = 0.5f;
        switch (d) {
        case DUET_DTYPE_F32: ((float *)h.data())[i] = v; break;
        case DUET_DTYPE_F64: ((double *)h.data())[i] = v; break;
        case DUET_DTYPE_BF16: ((uint16_t *)h.data())[i] = f2bf(v); break;
        case DUET_DTYPE_F16: ((uint16_t *)h.data())[i] = f2h(v); break;
        case DUET_DTYPE_I8: ((int8_t *)h.data())[i] = (int8_t)(rand() % 7 - 3); break;
        case DUET_DTYPE_I32: ((int32_t *)h.data())[i] = rand() % 7 - 3; break;
        default: break;
        }
    }
    CK(cudaMemcpy(dev, h.data(), h.size(), cudaMemcpyHostToDevice));
}

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 30;
    /* "small": every case with m and k divided by 16 (n and narrow m kept), for the sanitizers. */
    const int small = argc > 2 && strcmp(argv[2], "small") == 0;
    const int floor_mode = argc > 2 && strcmp(argv[2], "floor") == 0;
    /* A third argument runs only the cases whose label contains it (for a profiler). */
    const char *only = argc > 3 ? argv[3] : NULL;
    const kase cases[] = {
        {"decode bf16>bf16", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 16, 4096, 0, 1},
        {"decode bf16 B n-major", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 16, 4096, 0, 0},
        {"decode bf16>bf16 m16 first", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 16, 4096, 4096, 0, 1},
        {"gemv bf16>bf16", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 1, 4096, 0, 1},
        {"bf16 n8", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 8, 4096, 0, 1},
        {"bf16 n32", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 32, 4096, 0, 1},
        {"bf16 n64", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 64, 4096, 0, 1},
        {"bf16 11008x16x4096", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 11008, 16, 4096, 0, 1},
        {"bf16 4096x16x11008", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 16, 11008, 0, 1},
        {"bf16 A m-major n16", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 16, 4096, 1, 0},
        {"bf16 A m-major n4", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 4, 4096, 1, 0},
        {"f16>f32 n16", DUET_DTYPE_F16, DUET_DTYPE_F32, DUET_MATH_DEFAULT, 4096, 16, 4096, 0, 1},
        {"i8>i32 n16", DUET_DTYPE_I8, DUET_DTYPE_I32, DUET_MATH_DEFAULT, 4096, 16, 4096, 0, 1},
        {"tf32 n16", DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_TF32, 4096, 16, 4096, 0, 1},
        {"f32 n16", DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_DEFAULT, 4096, 16, 4096, 0, 1},
        {"f32 gemv 8192", DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_DEFAULT, 8192, 1, 8192, 0, 1},
        {"f32 A m-major n8", DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_DEFAULT, 8192, 8, 8192, 1, 0},
        {"f64 n16", DUET_DTYPE_F64, DUET_DTYPE_F64, DUET_MATH_DEFAULT, 4096, 16, 4096, 0, 1},
        {"f64 gemv 8192", DUET_DTYPE_F64, DUET_DTYPE_F64, DUET_MATH_DEFAULT, 8192, 1, 8192, 0, 1},
        {"f64 A m-major n4", DUET_DTYPE_F64, DUET_DTYPE_F64, DUET_MATH_DEFAULT, 8192, 4, 8192, 1, 0},
        {"bf16 k 700 n16", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 8192, 16, 700, 0, 1},
    };
    const kase floor_cases[] = {
        {"floor bf16 2x2x1 A m-major", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 2, 2, 1, 1, 0},
        {"floor bf16 16^3 TN", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 16, 16, 16, 0, 1},
        {"floor bf16 16^3 NN", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 16, 16, 16, 0, 0},
        {"floor bf16 16^3 A m-major", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 16, 16, 16, 1, 0},
        {"floor bf16 256^3 A m-major", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 256, 256, 256, 1, 0},
        {"floor bf16 256^3 TN", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 256, 256, 256, 0, 1},
        {"floor bf16 999^3 NN", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 999, 999, 999, 0, 0},
        {"floor f16>f32 64^3 A m-major", DUET_DTYPE_F16, DUET_DTYPE_F32, DUET_MATH_DEFAULT, 64, 64, 64, 1, 0},
        {"floor f16 1000^3 NN", DUET_DTYPE_F16, DUET_DTYPE_F16, DUET_MATH_DEFAULT, 1000, 1000, 1000, 0, 0},
        {"floor i8 64^3 NN", DUET_DTYPE_I8, DUET_DTYPE_I32, DUET_MATH_DEFAULT, 64, 64, 64, 0, 0},
        {"floor tf32 64^3 NN", DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_TF32, 64, 64, 64, 0, 0},
        {"floor f32 64^3 NN", DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_DEFAULT, 64, 64, 64, 0, 0},
        {"floor f64 64^3 NN", DUET_DTYPE_F64, DUET_DTYPE_F64, DUET_MATH_DEFAULT, 64, 64, 64, 0, 0},
        {"floor f16 1x7x64 A m-major", DUET_DTYPE_F16, DUET_DTYPE_F16, DUET_MATH_DEFAULT, 1, 7, 64, 1, 0},
        {"floor f16 54x4x4 A m-major", DUET_DTYPE_F16, DUET_DTYPE_F16, DUET_MATH_DEFAULT, 54, 4, 4, 1, 0},
        {"floor tf32 382x7x1 TT", DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_TF32, 382, 7, 1, 1, 1},
        {"floor bf16 93x12293x3 A m-major", DUET_DTYPE_BF16, DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 93, 12293, 3, 1, 0},
        {"floor f16 512x183x91 A m-major", DUET_DTYPE_F16, DUET_DTYPE_F16, DUET_MATH_DEFAULT, 512, 183, 91, 1, 0},
        {"floor bf16 2048x5x414 NN", DUET_DTYPE_BF16, DUET_DTYPE_F32, DUET_MATH_DEFAULT, 2048, 5, 414, 0, 0},
    };
    duet_context *ctx;
    DK(duet_context_create(0, &ctx));
    duet_device_props props;
    DK(duet_context_get_props(ctx, &props));
    /* One stream for both libraries and the events: duet's default stream is its own. */
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    duet_stream *ds;
    DK(duet_stream_wrap(ctx, (void *)st, &ds));
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetStream(h, st));
    void *flush;
    const size_t flush_bytes = 256u << 20;
    CK(cudaMalloc(&flush, flush_bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    /* Copy bandwidth: 1 GiB device to device, bytes read + written. */
    float copy_gbs = 0;
    if (!small && !floor_mode) {
        void *x, *y;
        const size_t bytes = 1u << 30;
        CK(cudaMalloc(&x, bytes));
        CK(cudaMalloc(&y, bytes));
        std::vector<float> t;
        for (int r = 0; r < 10; r++) {
            CK(cudaEventRecord(e0, st));
            CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, st));
            CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            t.push_back(ms);
        }
        copy_gbs = (float)(2.0 * bytes / (median(t) * 1e-3) / 1e9);
        CK(cudaFree(x));
        CK(cudaFree(y));
    }
    printf("device: %s (%s, %d SMs), copy %.0f GB/s, reps %d\n", props.name, props.arch,
           props.compute_units, copy_gbs, reps);
    printf("%-28s %6s %6s %6s  %9s %9s %6s %7s %9s %9s %9s", "case", "m", "n", "k", "duet_us",
           "cublas_us", "ratio", "%copy", "rel_diff", "warm_duet", "warm_cub");
    if (floor_mode) printf(" %8s %8s %8s", "launches", "fill_us", "kmaj_us");
    printf("  %s\n", "kernel");

    const size_t ncases = floor_mode ? sizeof floor_cases / sizeof floor_cases[0]
                                     : sizeof cases / sizeof cases[0];
    for (size_t ci = 0; ci < ncases; ci++) {
        kase c = floor_mode ? floor_cases[ci] : cases[ci];
        if (only && !strstr(c.label, only)) continue;
        if (small) {
            if (c.m > 64) c.m /= 16;
            if (c.n > 64) c.n /= 16;
            c.k = c.k / 16 + (c.in == DUET_DTYPE_I8 ? 4 : 3); /* cuBLAS wants i8 rows of 4 bytes */
        }
        const size_t ie = esize(c.in), oe = esize(c.out);
        void *a, *b, *c1, *c2;
        CK(cudaMalloc(&a, (size_t)c.m * c.k * ie));
        CK(cudaMalloc(&b, (size_t)c.k * c.n * ie));
        CK(cudaMalloc(&c1, (size_t)c.m * c.n * oe));
        CK(cudaMalloc(&c2, (size_t)c.m * c.n * oe));
        fill(a, c.in, (size_t)c.m * c.k, 1);
        fill(b, c.in, (size_t)c.k * c.n, 2);
        duet_buffer *ba, *bb, *bc;
        DK(duet_buffer_wrap(ctx, a, (size_t)c.m * c.k * ie, &ba));
        DK(duet_buffer_wrap(ctx, b, (size_t)c.k * c.n * ie, &bb));
        DK(duet_buffer_wrap(ctx, c1, (size_t)c.m * c.n * oe, &bc));
        duet_matrix ma = duet_matrix_make(ba, c.in, c.a_col ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR, c.m, c.k);
        duet_matrix mb = duet_matrix_make(bb, c.in, c.b_col ? DUET_LAYOUT_COL_MAJOR : DUET_LAYOUT_ROW_MAJOR, c.k, c.n);
        duet_matrix mc = duet_matrix_make(bc, c.out, DUET_LAYOUT_ROW_MAJOR, c.m, c.n);
        duet_launch_info info;
        duet_op_options opt;
        memset(&opt, 0, sizeof opt);
        opt.math = c.math;
        opt.info = &info;

        /* Row-major C = A B as column-major C^T = B^T A^T. */
        const cublasOperation_t opb = c.b_col ? CUBLAS_OP_T : CUBLAS_OP_N;
        const cublasOperation_t opa = c.a_col ? CUBLAS_OP_T : CUBLAS_OP_N;
        const int ldb = c.b_col ? (int)c.k : (int)c.n, lda = c.a_col ? (int)c.m : (int)c.k;
        const bool integer = c.in == DUET_DTYPE_I8;
        cublasComputeType_t ct = c.in == DUET_DTYPE_F64 ? CUBLAS_COMPUTE_64F
                                 : integer             ? CUBLAS_COMPUTE_32I
                                 : c.math == DUET_MATH_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                            : CUBLAS_COMPUTE_32F;
        const float fa = 1.0f, fb = 0.0f;
        const double da = 1.0, db = 0.0;
        const int ia = 1, ib = 0;
        const void *pa = c.in == DUET_DTYPE_F64 ? (const void *)&da : integer ? (const void *)&ia : (const void *)&fa;
        const void *pb = c.in == DUET_DTYPE_F64 ? (const void *)&db : integer ? (const void *)&ib : (const void *)&fb;
        auto run_cublas = [&]() {
            CB(cublasGemmEx(h, opb, opa, (int)c.n, (int)c.m, (int)c.k, pa, b, cuda_type(c.in), ldb, a,
                            cuda_type(c.in), lda, pb, c2, cuda_type(c.out), (int)c.n, ct,
                            CUBLAS_GEMM_DEFAULT));
        };
        auto run_duet = [&]() { DK(duet_gemm(ds, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, 0.0, &mc, &opt)); };
        for (int w = 0; w < 3; w++) {
            run_duet();
            run_cublas();
        }
        CK(cudaStreamSynchronize(st));
        std::vector<float> td, tc, twd, twc;
        for (int r = 0; r < reps; r++) {
            for (int which = 0; which < 4; which++) {
                /* 0, 1: duet and cuBLAS after the memset; 2, 3: warm, right after a run of the same. */
                if (which < 2) CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, st));
                else (which == 2 ? run_duet() : run_cublas());
                CK(cudaEventRecord(e0, st));
                if (which % 2 == 0) run_duet();
                else run_cublas();
                CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                std::vector<float> *into[4] = {&td, &tc, &twd, &twc};
                into[which]->push_back(ms * 1000.0f);
            }
        }
        /* The floor's parts: one launch of any kind, and the GEMM without its operand copies. */
        const int launches = info.launches;
        char kernel_name[sizeof info.kernel];
        memcpy(kernel_name, info.kernel, sizeof kernel_name);
        float fill_us = 0, kmaj_us = 0;
        if (floor_mode) {
            const long ld = (c.k * (long)ie + 15) / 16 * 16 / (long)ie;
            duet_buffer *pa_buf, *pb_buf;
            DK(duet_buffer_create(ctx, (size_t)c.m * ld * ie, &pa_buf));
            DK(duet_buffer_create(ctx, (size_t)c.n * ld * ie, &pb_buf));
            duet_matrix ka = duet_matrix_make(pa_buf, c.in, DUET_LAYOUT_ROW_MAJOR, c.m, c.k);
            ka.ld = ld;
            duet_matrix kb = duet_matrix_make(pb_buf, c.in, DUET_LAYOUT_COL_MAJOR, c.k, c.n);
            kb.ld = ld;
            /* A copy is the transpose of the operand's transposed view. */
            auto flipped = [](duet_matrix x) {
                const int64_t r = x.rows;
                x.rows = x.cols;
                x.cols = r;
                x.layout = x.layout == DUET_LAYOUT_ROW_MAJOR ? DUET_LAYOUT_COL_MAJOR
                                                              : DUET_LAYOUT_ROW_MAJOR;
                return x;
            };
            const duet_matrix fa_ = flipped(ma), fb_ = flipped(mb);
            DK(duet_transpose(ds, &fa_, &ka, NULL));
            DK(duet_transpose(ds, &fb_, &kb, NULL));
            auto run_kmaj = [&]() { DK(duet_gemm(ds, DUET_OP_N, DUET_OP_N, 1.0, &ka, &kb, 0.0, &mc, &opt)); };
            auto run_fill = [&]() { DK(duet_fill(ds, 1.0, &mc, NULL)); };
            for (int w = 0; w < 3; w++) {
                run_kmaj();
                run_fill();
            }
            std::vector<float> tf, tk;
            for (int r = 0; r < reps; r++) {
                for (int which = 0; which < 2; which++) {
                    CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, st));
                    CK(cudaEventRecord(e0, st));
                    if (which == 0) run_fill();
                    else run_kmaj();
                    CK(cudaEventRecord(e1, st));
                    CK(cudaEventSynchronize(e1));
                    float ms;
                    CK(cudaEventElapsedTime(&ms, e0, e1));
                    (which == 0 ? tf : tk).push_back(ms * 1000.0f);
                }
            }
            fill_us = median(tf);
            kmaj_us = median(tk);
            run_duet(); /* C as the plain call writes it, for the comparison below */
            DK(duet_buffer_destroy(pa_buf));
            DK(duet_buffer_destroy(pb_buf));
        }
        /* Results. */
        CK(cudaStreamSynchronize(st));
        std::vector<unsigned char> h1((size_t)c.m * c.n * oe), h2(h1.size());
        CK(cudaMemcpy(h1.data(), c1, h1.size(), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h2.data(), c2, h2.size(), cudaMemcpyDeviceToHost));
        double maxd = 0, maxc = 0;
        for (size_t i = 0; i < (size_t)c.m * c.n; i++) {
            const double x = to_double(h1.data(), c.out, i), y = to_double(h2.data(), c.out, i);
            maxd = fmax(maxd, fabs(x - y));
            maxc = fmax(maxc, fabs(y));
        }
        const float md = median(td), mc_ = median(tc);
        const double bytes = (double)c.m * c.k * ie + (double)c.k * c.n * ie + (double)c.m * c.n * oe;
        printf("%-28s %6ld %6ld %6ld  %9.1f %9.1f %6.3f %6.1f%% %9.2e %9.1f %9.1f", c.label,
               c.m, c.n, c.k, md, mc_, mc_ / md,
               copy_gbs > 0 ? 100.0 * bytes / (md * 1e-6) / 1e9 / copy_gbs : 0.0,
               maxc > 0 ? maxd / maxc : maxd, median(twd), median(twc));
        if (floor_mode) printf(" %8d %8.1f %8.1f", launches, fill_us, kmaj_us);
        printf("  %s\n", kernel_name);
        fflush(stdout);
        DK(duet_buffer_destroy(ba));
        DK(duet_buffer_destroy(bb));
        DK(duet_buffer_destroy(bc));
        CK(cudaFree(a));
        CK(cudaFree(b));
        CK(cudaFree(c1));
        CK(cudaFree(c2));
    }
    CB(cublasDestroy(h));
    DK(duet_stream_destroy(ds));
    DK(duet_context_destroy(ctx));
    CK(cudaStreamDestroy(st));
    return 0;
}
