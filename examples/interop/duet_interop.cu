/* duet_interop.cu - duet inside an application's own CUDA program: its memory, stream, kernels. */
#include <duet/duet.h>

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

/*
 * The application allocates with cudaMalloc, creates its stream and fills its matrices with a
 * kernel of its own. duet then works on that memory and stream, wrapped (nothing is copied
 * and nothing changes owner): C = A B with duet_gemm, T = C^T with duet_transpose. The
 * application's kernel runs again on duet's result, in stream order, and on a buffer that duet
 * allocated (through duet_buffer_device_ptr). Everything is small integers, so the host check
 * is exact. Exit status: 0 checked, 1 wrong or failed, 77 no CUDA device.
 */

enum { M = 64, K = 48, N = 32 };

#define CU(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "duet-interop: %s: %s\n", #call, cudaGetErrorString(e_));              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define DU(call)                                                                                   \
    do {                                                                                           \
        duet_status s_ = (call);                                                                   \
        if (s_ != DUET_SUCCESS) {                                                                  \
            fprintf(stderr, "duet-interop: %s: %s (%s)\n", #call, duet_status_string(s_),          \
                    duet_last_error());                                                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static float a_value(int i, int k) { return (float)((i + 2 * k) % 7 - 3); }
static float b_value(int k, int j) { return (float)((3 * k + j) % 5 - 2); }

/* The application's own kernels. */
__global__ void init_matrices(float *a, float *b)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < M * K) a[t] = (float)(((t / K) + 2 * (t % K)) % 7 - 3);
    if (t < K * N) b[t] = (float)((3 * (t / N) + (t % N)) % 5 - 2);
}

__global__ void add_scaled(float *dst, const float *src, float s, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) dst[t] += s * src[t];
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
        printf("duet-interop: no CUDA device, skipped\n");
        return 77;
    }
    CU(cudaSetDevice(0));

    /* The application's memory and stream. */
    float *a, *b, *c, *t;
    cudaStream_t stream;
    CU(cudaMalloc(&a, sizeof(float) * M * K));
    CU(cudaMalloc(&b, sizeof(float) * K * N));
    CU(cudaMalloc(&c, sizeof(float) * M * N));
    CU(cudaMalloc(&t, sizeof(float) * N * M));
    CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    init_matrices<<<(M * K + 255) / 256, 256, 0, stream>>>(a, b);
    CU(cudaGetLastError());

    /* duet on the same device (its primary context), memory and stream. */
    duet_context *ctx;
    DU(duet_context_create(0, &ctx));
    duet_stream *ds;
    duet_buffer *ba, *bb, *bc, *bt;
    DU(duet_stream_wrap(ctx, stream, &ds));
    DU(duet_buffer_wrap(ctx, a, sizeof(float) * M * K, &ba));
    DU(duet_buffer_wrap(ctx, b, sizeof(float) * K * N, &bb));
    DU(duet_buffer_wrap(ctx, c, sizeof(float) * M * N, &bc));
    DU(duet_buffer_wrap(ctx, t, sizeof(float) * N * M, &bt));
    duet_matrix ma = duet_matrix_make(ba, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, K);
    duet_matrix mb = duet_matrix_make(bb, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, K, N);
    duet_matrix mc = duet_matrix_make(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, N);
    duet_matrix mt = duet_matrix_make(bt, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, N, M);
    DU(duet_gemm(ds, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, 0.0, &mc, NULL));
    DU(duet_transpose(ds, &mc, &mt, NULL));

    /* The application's kernel again, on duet's result and on duet's own memory: D = 2 T. */
    duet_buffer *bd;
    DU(duet_buffer_create(ctx, sizeof(float) * N * M, &bd));
    DU(duet_buffer_memset(ds, bd, 0, 0, sizeof(float) * N * M));
    void *d = NULL;
    DU(duet_buffer_device_ptr(bd, 0, &d));
    add_scaled<<<(N * M + 255) / 256, 256, 0, stream>>>((float *)d, t, 2.0f, N * M);
    CU(cudaGetLastError());

    float *ht = (float *)malloc(sizeof(float) * N * M), *hd = (float *)malloc(sizeof(float) * N * M);
    if (!ht || !hd) return 1;
    CU(cudaMemcpyAsync(ht, t, sizeof(float) * N * M, cudaMemcpyDeviceToHost, stream));
    DU(duet_buffer_read_async(ds, bd, 0, hd, sizeof(float) * N * M));
    CU(cudaStreamSynchronize(stream));

    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += a_value(i, k) * b_value(k, j);
            bad += ht[j * M + i] != s || hd[j * M + i] != 2 * s;
        }

    /* duet forgets the wrapped objects; the application still owns and frees them. */
    DU(duet_stream_destroy(ds));
    DU(duet_context_destroy(ctx));
    CU(cudaStreamDestroy(stream));
    CU(cudaFree(a));
    CU(cudaFree(b));
    CU(cudaFree(c));
    CU(cudaFree(t));
    free(ht);
    free(hd);
    printf("duet-interop: C = A B (%dx%dx%d) and T = C^T on the application's memory and stream: "
           "%s\n",
           M, N, K, bad ? "WRONG" : "exact");
    return bad ? 1 : 0;
}
