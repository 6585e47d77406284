/* numba_roc_matmul.c - the numba.roc documentation's matmulfast: 16x16 blocks on a 256x256 f32 product, registered host memory, GPU vs CPU time, allclose. */
/*
 * The documentation registers A, B and C with roc.register (pinning them for the GPU), runs
 * matmulfast twice - the first time pays for setup, the second shows the kernel - and then
 * numpy's np.dot, printing the three times, and checks
 * np.testing.assert_allclose(ans, C, rtol=1e-5). Here duet_host_register pins the host arrays,
 * each "GPU time" covers copying A and B in, duet_gemm with DUET_ALGO_TILED and tile 16 (the
 * blocksize of matmulfast) and copying C out, and the CPU time is a plain triple loop over the
 * same product. The naive matmul of the documentation is checked the same way.
 */
#include "seed_util.h"

#define BLOCKSIZE 16
#define GRIDSIZE 16
#define N (GRIDSIZE * BLOCKSIZE)

static double gpu_product(duet_context *ctx, const duet_matrix *a, const duet_matrix *b,
                          duet_matrix *c, float *ha, float *hb, float *hc,
                          const duet_op_options *opts)
{
    const size_t bytes = (size_t)N * N * sizeof(float);
    /* with roc.register(A, B, C): */
    SEED_OK(duet_host_register(ctx, ha, bytes));
    SEED_OK(duet_host_register(ctx, hb, bytes));
    SEED_OK(duet_host_register(ctx, hc, bytes));
    const double ts = seed_now();
    SEED_OK(duet_buffer_write(NULL, a->buffer, 0, ha, bytes));
    SEED_OK(duet_buffer_write(NULL, b->buffer, 0, hb, bytes));
    SEED_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, a, b, 0.0, c, opts));
    SEED_OK(duet_buffer_read(NULL, c->buffer, 0, hc, bytes));
    const double te = seed_now();
    SEED_OK(duet_host_unregister(ctx, ha));
    SEED_OK(duet_host_unregister(ctx, hb));
    SEED_OK(duet_host_unregister(ctx, hc));
    return te - ts;
}

int main(void)
{
    duet_context *ctx = seed_open("numba_roc_matmul");
    const size_t elems = (size_t)N * N;
    float *ha = malloc(elems * sizeof *ha), *hb = malloc(elems * sizeof *hb);
    float *hc = calloc(elems, sizeof *hc); /* C = np.zeros_like(A) */
    double *da = malloc(elems * sizeof *da), *db = malloc(elems * sizeof *db);
    double *ans = malloc(elems * sizeof *ans), *got = malloc(elems * sizeof *got);
    if (!ha || !hb || !hc || !da || !db || !ans || !got) return 1;
    /* A = np.random.random((N, N)).astype(np.float32), and B */
    for (size_t i = 0; i < elems; i++) {
        ha[i] = (float)seed_random();
        hb[i] = (float)seed_random();
        da[i] = ha[i];
        db[i] = hb[i];
    }
    duet_matrix a = seed_matrix(ctx, DUET_DTYPE_F32, N, N, NULL);
    duet_matrix b = seed_matrix(ctx, DUET_DTYPE_F32, N, N, NULL);
    duet_matrix c = seed_matrix(ctx, DUET_DTYPE_F32, N, N, NULL);

    duet_launch_info info;
    duet_op_options fast = seed_options(DUET_ALGO_TILED, BLOCKSIZE, 0, 0, 0, 0, &info);
    printf("1st GPU time: %.6f\n", gpu_product(ctx, &a, &b, &c, ha, hb, hc, &fast));
    printf("2nd GPU time: %.6f\n", gpu_product(ctx, &a, &b, &c, ha, hb, hc, &fast));

    /* ans = np.dot(A, B), timed: a triple loop in double, the same product. */
    const double ts = seed_now();
    seed_host_matmul(da, db, ans, N, N, N);
    const double te = seed_now();
    printf("CPU time: %.6f\n", te - ts);

    /* np.testing.assert_allclose(ans, C, rtol=1e-5) */
    for (size_t i = 0; i < elems; i++) got[i] = hc[i];
    int bad = seed_mismatches("matmulfast", got, ans, (int64_t)elems, 1e-5, 0.0) != 0;
    printf("matmulfast (%s): %s\n", seed_info(&info),
           bad ? "NOT allclose to np.dot(A, B)" : "allclose(rtol=1e-5) to np.dot(A, B)");

    /* The documentation's naive matmul on the same data. */
    duet_op_options naive = seed_options(DUET_ALGO_NAIVE, 0, BLOCKSIZE, BLOCKSIZE, 0, 0, &info);
    memset(hc, 0, elems * sizeof *hc);
    (void)gpu_product(ctx, &a, &b, &c, ha, hb, hc, &naive);
    for (size_t i = 0; i < elems; i++) got[i] = hc[i];
    const int naive_bad =
        seed_mismatches("matmul (naive)", got, ans, (int64_t)elems, 1e-5, 0.0) != 0;
    printf("matmul (naive, %s): %s\n", seed_info(&info),
           naive_bad ? "NOT allclose to np.dot(A, B)" : "allclose(rtol=1e-5) to np.dot(A, B)");
    bad += naive_bad;

    seed_free(&a);
    seed_free(&b);
    seed_free(&c);
    SEED_OK(duet_context_destroy(ctx));
    free(ha);
    free(hb);
    free(hc);
    free(da);
    free(db);
    free(ans);
    free(got);
    return bad ? 1 : 0;
}
