/* numba_cuda_matmul.c - the numba.cuda documentation's matmul examples: naive and shared-memory fast_matmul, square and non-square. */
/*
 * The documentation runs fast_matmul (TPB x TPB tiles in shared memory, a barrier after the
 * preload and after the partial product) on np.arange(16).reshape(4, 4) @ np.ones((4, 4)) with
 * TPB = 3, then on np.arange(115).reshape(5, 23) @ np.ones((23, 7)) with TPB = 32, printing the
 * GPU result and numpy's x_h @ y_h under it. duet_gemm with DUET_ALGO_TILED and tile = TPB is
 * that kernel; DUET_ALGO_NAIVE is the documentation's first, global-memory matmul. float64, as
 * numpy's arrays are.
 */
#include "seed_util.h"

static int run(duet_context *ctx, int64_t m, int64_t k, int64_t n, int tpb)
{
    double *x = malloc((size_t)(m * k) * sizeof *x), *y = malloc((size_t)(k * n) * sizeof *y);
    double *ref = malloc((size_t)(m * n) * sizeof *ref);
    if (!x || !y || !ref) exit(1);
    for (int64_t i = 0; i < m * k; i++) x[i] = (double)i; /* np.arange(m * k) */
    for (int64_t i = 0; i < k * n; i++) y[i] = 1.0;       /* np.ones((k, n)) */
    seed_host_matmul(x, y, ref, m, k, n);

    duet_matrix a = seed_matrix(ctx, DUET_DTYPE_F64, m, k, x);
    duet_matrix b = seed_matrix(ctx, DUET_DTYPE_F64, k, n, y);
    duet_matrix c = seed_matrix(ctx, DUET_DTYPE_F64, m, n, NULL);
    int bad = 0;

    /* fast_matmul[blockspergrid, (TPB, TPB)](x_d, y_d, z_d) */
    duet_launch_info info;
    duet_op_options fast = seed_options(DUET_ALGO_TILED, tpb, 0, 0, 0, 0, &info);
    SEED_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.0, &c, &fast));
    double *z = seed_read(&c);
    printf("fast_matmul, TPB = %d, %lldx%lld @ %lldx%lld (%s):\n", tpb, (long long)m,
           (long long)k, (long long)k, (long long)n, seed_info(&info));
    seed_print(z, m, n, 2, 0); /* print(z_h) */
    seed_print(ref, m, n, 2, 0); /* print(x_h @ y_h) */
    bad += seed_mismatches("fast_matmul", z, ref, m * n, 0.0, 0.0) != 0;
    free(z);

    /* The documentation's naive matmul: one thread per element of C, global memory only. */
    duet_op_options naive = seed_options(DUET_ALGO_NAIVE, 0, 0, 0, 0, 0, &info);
    SEED_OK(duet_buffer_memset(NULL, c.buffer, 0, 0, (size_t)(m * n) * sizeof(double)));
    SEED_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.0, &c, &naive));
    z = seed_read(&c);
    const int naive_bad = seed_mismatches("matmul (naive)", z, ref, m * n, 0.0, 0.0) != 0;
    printf("matmul (naive, %s): %s\n\n", seed_info(&info),
           naive_bad ? "DIFFERS from x_h @ y_h" : "equal to x_h @ y_h");
    bad += naive_bad;
    free(z);

    seed_free(&a);
    seed_free(&b);
    seed_free(&c);
    free(x);
    free(y);
    free(ref);
    return bad;
}

int main(void)
{
    duet_context *ctx = seed_open("numba_cuda_matmul");
    int bad = 0;
    bad += run(ctx, 4, 4, 4, 3);   /* the square example, TPB = 3 */
    bad += run(ctx, 5, 23, 7, 32); /* the non-square example, TPB = 32 */
    SEED_OK(duet_context_destroy(ctx));
    if (bad) {
        fprintf(stderr, "numba_cuda_matmul: %d result(s) differ from the host product\n", bad);
        return 1;
    }
    return 0;
}
