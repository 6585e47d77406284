/* pycuda_matmul.c - the PyCUDA notebook: runtime-compiled naive and 8x8 shared-memory matmul kernels on 1024x1024 f32, profiled and checked. */
/*
 * PyCUDA's SourceModule(kernel_code).get_function("matmul") is duet_module_create +
 * duet_module_get_function; the notebook's kernel strings are used exactly as written (duet,
 * like SourceModule, wraps a source without extern "C" in an extern "C" block). profile_gpu
 * with n_warmup = 2 and n_iters = 50 (naive) or 100 (shared) is duet_profile. The result is
 * checked like np.testing.assert_almost_equal(C, c_numpy, decimal=3): |C - ref| < 1.5e-3.
 * Runtime compilation needs the cuda or hip backend: on cpu the program exits 77.
 */
#include "seed_kernels.h"
#include "seed_util.h"

#define N 1024


typedef struct launch_args {
    duet_function *f;
    duet_launch_config cfg;
    duet_arg args[5];
    int num_args;
} launch_args;

/* launch = lambda: matmul(d_a, d_b, d_c, np.int32(N), block=block_size, grid=grid_size) */
static duet_status launch(void *user)
{
    launch_args *l = (launch_args *)user;
    return duet_launch(NULL, l->f, &l->cfg, l->args, l->num_args);
}

static void profile(duet_context *ctx, launch_args *l, int n_warmup, int n_iters)
{
    duet_profile_result r;
    SEED_OK(duet_profile(ctx, NULL, launch, l, n_warmup, n_iters, &r));
    const double flops = 2.0 * N * N * N;
    printf("profile: %d warm-ups, %d iterations: min %.3f ms, median %.3f ms, mean %.3f ms, "
           "max %.3f ms (%.1f GFLOP/s at the median)\n",
           n_warmup, r.iters, r.min_ms, r.median_ms, r.mean_ms, r.max_ms,
           flops / (r.median_ms * 1e-3) * 1e-9);
}

/* np.testing.assert_almost_equal(C, c_numpy, decimal=3) */
static int check(const char *what, const float *c, const double *ref)
{
    double *got = malloc((size_t)N * N * sizeof *got);
    if (!got) exit(1);
    for (size_t i = 0; i < (size_t)N * N; i++) got[i] = c[i];
    const int bad = seed_mismatches(what, got, ref, (int64_t)N * N, 0.0, 1.5e-3) != 0;
    free(got);
    printf("%s: %s\n", what, bad ? "NOT almost equal (decimal=3) to np.matmul(A, B)"
                                 : "almost equal (decimal=3) to np.matmul(A, B)");
    return bad;
}

int main(void)
{
    duet_context *ctx = seed_open("pycuda_matmul");
    const size_t elems = (size_t)N * N, bytes = elems * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    double *da = malloc(elems * sizeof *da), *db = malloc(elems * sizeof *db);
    double *ref = malloc(elems * sizeof *ref);
    if (!a || !b || !c || !da || !db || !ref) return 1;
    /* A = np.random.randn(N, N).astype(np.float32), and B */
    for (size_t i = 0; i < elems; i++) {
        a[i] = (float)seed_randn();
        b[i] = (float)seed_randn();
        da[i] = a[i];
        db[i] = b[i];
    }
    printf("Matrix A:\n");
    seed_print(da, N, N, 2, 0);
    printf("Matrix B:\n");
    seed_print(db, N, N, 2, 0);

    duet_module *mod = seed_module(ctx, pycuda_naive_matmul_src); /* mod = SourceModule(kernel_code) */
    if (!mod) {
        SEED_OK(duet_context_destroy(ctx));
        free(a);
        free(b);
        free(c);
        free(da);
        free(db);
        free(ref);
        return SEED_SKIP;
    }
    duet_function *matmul = NULL;
    SEED_OK(duet_module_get_function(mod, "matmul", &matmul));

    duet_buffer *d_a, *d_b, *d_c, *d_debug;
    SEED_OK(duet_buffer_create(ctx, bytes, &d_a));
    SEED_OK(duet_buffer_create(ctx, bytes, &d_b));
    SEED_OK(duet_buffer_create(ctx, bytes, &d_c));
    SEED_OK(duet_buffer_create(ctx, 64 * sizeof(int), &d_debug));
    SEED_OK(duet_buffer_write(NULL, d_a, 0, a, bytes));
    SEED_OK(duet_buffer_write(NULL, d_b, 0, b, bytes));

    /* block_size = (8, 8, 1); grid_size = (N // 8, N // 8, 1) */
    launch_args l;
    memset(&l, 0, sizeof l);
    l.f = matmul;
    l.cfg.block.x = 8;
    l.cfg.block.y = 8;
    l.cfg.block.z = 1;
    l.cfg.grid.x = N / 8;
    l.cfg.grid.y = N / 8;
    l.cfg.grid.z = 1;
    l.args[0] = duet_arg_buffer(d_a, 0);
    l.args[1] = duet_arg_buffer(d_b, 0);
    l.args[2] = duet_arg_buffer(d_c, 0);
    l.args[3] = duet_arg_i32(N);
    l.num_args = 4;
    printf("Launching with grid_size=(%u, %u, %u), block_size=(%u, %u, %u)\n", l.cfg.grid.x,
           l.cfg.grid.y, l.cfg.grid.z, l.cfg.block.x, l.cfg.block.y, l.cfg.block.z);
    profile(ctx, &l, 2, 50);

    SEED_OK(duet_buffer_read(NULL, d_c, 0, c, bytes));
    seed_host_matmul(da, db, ref, N, N, N); /* c_numpy = np.matmul(A, B) */
    double *shown = malloc(elems * sizeof *shown);
    if (!shown) return 1;
    for (size_t i = 0; i < elems; i++) shown[i] = c[i];
    printf("Result matrix C (A x B):\n");
    seed_print(shown, N, N, 2, 0);
    free(shown);
    int bad = check("matmul (global memory)", c, ref);
    SEED_OK(duet_module_destroy(mod));

    /* gpu_matrix_multiply(A, B, shared_mem_kernel) */
    mod = seed_module(ctx, pycuda_shared_matmul_src);
    if (!mod) return 1; /* the first module compiled: this one must too */
    SEED_OK(duet_module_get_function(mod, "matmul", &matmul));
    /* The notebook's d_debug is never written by the kernel; zeroed here so the print is
     * reproducible. */
    SEED_OK(duet_buffer_memset(NULL, d_debug, 0, 0, 64 * sizeof(int)));
    SEED_OK(duet_buffer_memset(NULL, d_c, 0, 0, bytes));
    l.f = matmul;
    l.args[3] = duet_arg_buffer(d_debug, 0);
    l.args[4] = duet_arg_i32(N);
    l.num_args = 5;
    SEED_OK(launch(&l));
    SEED_OK(duet_buffer_read(NULL, d_c, 0, c, bytes));
    int debug[64];
    SEED_OK(duet_buffer_read(NULL, d_debug, 0, debug, sizeof debug));
    double dbg[8];
    for (int i = 0; i < 8; i++) dbg[i] = debug[i];
    printf("debug =  ");
    seed_print(dbg, 1, 8, 1, 1);
    bad += check("matmul (8x8 shared memory)", c, ref);
    profile(ctx, &l, 2, 100);

    SEED_OK(duet_module_destroy(mod));
    SEED_OK(duet_buffer_destroy(d_a));
    SEED_OK(duet_buffer_destroy(d_b));
    SEED_OK(duet_buffer_destroy(d_c));
    SEED_OK(duet_buffer_destroy(d_debug));
    SEED_OK(duet_context_destroy(ctx));
    free(a);
    free(b);
    free(c);
    free(da);
    free(db);
    free(ref);
    return bad ? 1 : 0;
}
