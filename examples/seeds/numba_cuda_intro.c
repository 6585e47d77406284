/* numba_cuda_intro.c - the numba CUDA notebook: doubling a vector, the naive matmul on 24x12 @ 12x22, the shared-memory one on 32x48 @ 48x16. */
/*
 * my_kernel doubles numpy.ones(256) with one thread per element: duet_scale by 2. matmul (one
 * thread per element of C, 16x16 threads per block) is duet_gemm with DUET_ALGO_NAIVE and a
 * 16x16 block; fast_matmul with TPB = 16 is DUET_ALGO_TILED with tile 16. float64, as numpy's
 * arrays are; every result is compared with the host product.
 */
#include "seed_util.h"

#define TPB 16

static int matmul(duet_context *ctx, int64_t m, int64_t k, int64_t n, double va, double vb,
                  const duet_op_options *opts, const char *name)
{
    double *ha = malloc((size_t)(m * k) * sizeof *ha), *hb = malloc((size_t)(k * n) * sizeof *hb);
    double *ref = malloc((size_t)(m * n) * sizeof *ref);
    if (!ha || !hb || !ref) exit(1);
    for (int64_t i = 0; i < m * k; i++) ha[i] = va; /* numpy.full((m, k), va, float) */
    for (int64_t i = 0; i < k * n; i++) hb[i] = vb;
    seed_host_matmul(ha, hb, ref, m, k, n);
    duet_matrix a = seed_matrix(ctx, DUET_DTYPE_F64, m, k, ha);
    duet_matrix b = seed_matrix(ctx, DUET_DTYPE_F64, k, n, hb);
    duet_matrix c = seed_matrix(ctx, DUET_DTYPE_F64, m, n, NULL);
    SEED_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.0, &c, opts));
    double *got = seed_read(&c);
    printf("%s, %lldx%lld full(%g) @ %lldx%lld full(%g) (%s):\n", name, (long long)m,
           (long long)k, va, (long long)k, (long long)n, vb, seed_info(opts->info));
    seed_print(got, m, n, 2, 0);
    printf("\n");
    const int bad = seed_mismatches(name, got, ref, m * n, 0.0, 0.0) != 0;
    free(got);
    seed_free(&a);
    seed_free(&b);
    seed_free(&c);
    free(ha);
    free(hb);
    free(ref);
    return bad;
}

int main(void)
{
    duet_context *ctx = seed_open("numba_cuda_intro");
    int bad = 0;

    /* data = numpy.ones(256); my_kernel[blockspergrid, 256](data); print(data) */
    double ones[256], want[256];
    for (int i = 0; i < 256; i++) {
        ones[i] = 1.0;
        want[i] = 2.0;
    }
    duet_matrix data = seed_matrix(ctx, DUET_DTYPE_F64, 1, 256, ones);
    duet_launch_info info;
    duet_op_options o = seed_options(DUET_ALGO_NAIVE, 0, 256, 1, 0, 0, &info);
    SEED_OK(duet_scale(NULL, 2.0, &data, &o));
    double *got = seed_read(&data);
    printf("my_kernel: io_array[pos] *= 2 over numpy.ones(256) (%s):\n", seed_info(&info));
    seed_print(got, 1, 256, 1, 0);
    printf("\n");
    bad += seed_mismatches("my_kernel", got, want, 256, 0.0, 0.0) != 0;
    free(got);
    seed_free(&data);

    /* matmul[(ceil(24/16), ceil(22/16)), (16, 16)] on full((24, 12), 3) @ full((12, 22), 4) */
    o = seed_options(DUET_ALGO_NAIVE, 0, 16, 16, 0, 0, &info);
    bad += matmul(ctx, 24, 12, 22, 3.0, 4.0, &o, "matmul");

    /* fast_matmul with TPB = 16 on full((TPB*2, TPB*3), 3) @ full((TPB*3, TPB*1), 4) */
    o = seed_options(DUET_ALGO_TILED, TPB, 0, 0, 0, 0, &info);
    bad += matmul(ctx, TPB * 2, TPB * 3, TPB * 1, 3.0, 4.0, &o, "fast_matmul");

    SEED_OK(duet_context_destroy(ctx));
    if (bad) {
        fprintf(stderr, "numba_cuda_intro: %d result(s) differ from the host\n", bad);
        return 1;
    }
    return 0;
}
