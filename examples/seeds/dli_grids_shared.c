/* dli_grids_shared.c - the NVIDIA DLI notebook on 2D grids and shared memory: coordinates, add, mm, grid-stride loops, swap_with_shared, transposes, the assessment. */
/*
 * Each cell of the notebook in order. Its own kernels that duet has no op for (writing grid
 * coordinates, swap_with_shared) are compiled at run time from CUDA source with
 * duet_module_create; the rest are duet's ops with the notebook's launch geometry:
 *   add_matrix 36x36, blocks (6, 6) x threads (6, 6)    duet_add, DUET_ALGO_NAIVE, block 6x6
 *   mm 4x4 int32, grid (2, 2) x block (2, 2)           duet_gemm, DUET_ALGO_NAIVE, block 2x2
 *   add_matrix_stride 64x64 on a (6, 6) x (6, 6) grid   duet_add, DUET_ALGO_GRID_STRIDE
 *   mm_stride 3x4 @ 4x6, blocks (3, 7) x threads (4, 3) duet_gemm, DUET_ALGO_GRID_STRIDE
 *   transpose / tile_transpose / no bank conflicts      duet_transpose NAIVE 32x32, TILED 32,
 *                                                       TILED_PADDED (32x8 threads, +1 column)
 *   mm_shared, M = 128 and N = 32 or 8                  duet_gemm, DUET_ALGO_TILED, tile N
 * The transposes run on 16384 x 16384 int32 (the notebook's size) on a GPU and on 2048 x 2048
 * on the cpu backend; --size N chooses another. Every result is checked. Without runtime
 * compilation (the cpu backend) the runtime-compiled cells are skipped and, once everything
 * else has passed, the program exits 77 so the skip shows.
 */
#include "seed_kernels.h"
#include "seed_util.h"

/* The notebook's kernels that no duet op covers, in one module. cuda.grid(2) is (x, y). */
static const char *dli_kernels =
    "__global__ void add_2D_coordinates(int *A, int cols) {\n"
    "    int x = (int)duet_global_idx_x();\n"
    "    int y = (int)duet_global_idx_y();\n"
    "    A[y * cols + x] = x + y;\n"
    "}\n"
    "\n"
    DLI_ADD_2D_COORDINATES_STRIDE_SRC
    "\n"
    "__global__ void swap_with_shared(const int *x, int *y) {\n"
    "    __shared__ int temp[4];\n"
    "    int idx = (int)duet_global_idx_x();\n"
    "    temp[idx] = x[idx];\n"
    "    __syncthreads();\n"
    "    y[idx] = temp[blockDim.x - threadIdx.x - 1];\n"
    "}\n";

static duet_context *ctx;
static duet_module *mod;
static int bad, skipped;

static duet_launch_config grid2d(uint32_t gx, uint32_t gy, uint32_t bx, uint32_t by)
{
    duet_launch_config c;
    memset(&c, 0, sizeof c);
    c.grid.x = gx;
    c.grid.y = gy;
    c.grid.z = 1;
    c.block.x = bx;
    c.block.y = by;
    c.block.z = 1;
    return c;
}

/* Runs a coordinates kernel on a rows x cols int32 zero matrix, prints it like the notebook
 * and compares it with want(i, j). */
static void coordinates(const char *name, int64_t rows, int64_t cols, duet_launch_config cfg,
                        int stride, int (*want)(int64_t i, int64_t j))
{
    printf("%s, %lldx%lld, blocks (%u, %u), threads (%u, %u):\n", name, (long long)rows,
           (long long)cols, cfg.grid.x, cfg.grid.y, cfg.block.x, cfg.block.y);
    if (!mod) {
        printf("skipped (needs runtime compilation)\n\n");
        skipped = 1;
        return;
    }
    duet_function *f = NULL;
    SEED_OK(duet_module_get_function(mod, name, &f));
    duet_matrix a = seed_matrix(ctx, DUET_DTYPE_I32, rows, cols, NULL);
    SEED_OK(duet_buffer_memset(NULL, a.buffer, 0, 0, (size_t)(rows * cols) * sizeof(int32_t)));
    duet_arg args[3] = {duet_arg_buffer(a.buffer, 0), duet_arg_i32((int32_t)rows),
                        duet_arg_i32((int32_t)cols)};
    if (stride) {
        SEED_OK(duet_launch(NULL, f, &cfg, args, 3));
    } else {
        args[1] = args[2];
        SEED_OK(duet_launch(NULL, f, &cfg, args, 2));
    }
    double *got = seed_read(&a);
    seed_print(got, rows, cols, 2, 1);
    printf("\n");
    int64_t wrong = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) wrong += got[i * cols + j] != want(i, j);
    if (wrong) {
        fprintf(stderr, "%s: %lld elements differ from the notebook's output\n", name,
                (long long)wrong);
        bad++;
    }
    free(got);
    seed_free(&a);
}

static int want_sum(int64_t i, int64_t j) { return (int)(i + j); }
static int want_stride(int64_t i, int64_t j) { return (int)(i % 4 + j); } /* stride_x is 4 */

/* C = alpha * A + beta * B on int32 arange data, with the options given. */
static void add(const char *name, int64_t n, const duet_op_options *o)
{
    double *ha = malloc((size_t)(n * n) * sizeof *ha), *hb = malloc((size_t)(n * n) * sizeof *hb);
    double *want = malloc((size_t)(n * n) * sizeof *want);
    if (!ha || !hb || !want) exit(1);
    for (int64_t i = 0; i < n * n; i++) {
        ha[i] = (double)i;    /* A = np.arange(n*n).reshape(n, n) */
        hb[i] = 2.0 * ha[i];  /* B = A * 2 */
        want[i] = ha[i] + hb[i];
    }
    duet_matrix a = seed_matrix(ctx, DUET_DTYPE_I32, n, n, ha);
    duet_matrix b = seed_matrix(ctx, DUET_DTYPE_I32, n, n, hb);
    duet_matrix c = seed_matrix(ctx, DUET_DTYPE_I32, n, n, NULL);
    SEED_OK(duet_add(NULL, 1.0, &a, 1.0, &b, &c, o));
    double *got = seed_read(&c);
    const int wrong = seed_mismatches(name, got, want, n * n, 0.0, 0.0) != 0;
    printf("%s, %lldx%lld (%s): %s\n\n", name, (long long)n, (long long)n, seed_info(o->info),
           wrong ? "DIFFERS from A + B" : "testing.assert_array_equal(output, A + B) holds");
    bad += wrong;
    free(got);
    free(ha);
    free(hb);
    free(want);
    seed_free(&a);
    seed_free(&b);
    seed_free(&c);
}

/* c = a @ b on int32 arange data (a: m x k from arange(m*k), b: k x n from arange(k*n)). */
static void mm(const char *name, int64_t m, int64_t k, int64_t n, const duet_op_options *o,
               int print)
{
    double *ha = malloc((size_t)(m * k) * sizeof *ha), *hb = malloc((size_t)(k * n) * sizeof *hb);
    double *want = malloc((size_t)(m * n) * sizeof *want);
    if (!ha || !hb || !want) exit(1);
    for (int64_t i = 0; i < m * k; i++) ha[i] = (double)i;
    for (int64_t i = 0; i < k * n; i++) hb[i] = (double)i;
    seed_host_matmul(ha, hb, want, m, k, n);
    duet_matrix a = seed_matrix(ctx, DUET_DTYPE_I32, m, k, ha);
    duet_matrix b = seed_matrix(ctx, DUET_DTYPE_I32, k, n, hb);
    duet_matrix c = seed_matrix(ctx, DUET_DTYPE_I32, m, n, NULL);
    SEED_OK(duet_buffer_memset(NULL, c.buffer, 0, 0, (size_t)(m * n) * sizeof(int32_t)));
    SEED_OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &a, &b, 0.0, &c, o));
    double *got = seed_read(&c);
    const int wrong = seed_mismatches(name, got, want, m * n, 0.0, 0.0) != 0;
    printf("%s, %lldx%lld @ %lldx%lld (%s): %s\n", name, (long long)m, (long long)k,
           (long long)k, (long long)n, seed_info(o->info),
           wrong ? "DIFFERS from a @ b" : "testing.assert_array_equal(output, a @ b) holds");
    if (print) seed_print(got, m, n, 2, 1);
    printf("\n");
    bad += wrong;
    free(got);
    free(ha);
    free(hb);
    free(want);
    seed_free(&a);
    seed_free(&b);
    seed_free(&c);
}

static void swap_with_shared(void)
{
    printf("swap_with_shared[1, 4] on np.arange(4):\n");
    if (!mod) {
        printf("skipped (needs runtime compilation)\n\n");
        skipped = 1;
        return;
    }
    duet_function *f = NULL;
    SEED_OK(duet_module_get_function(mod, "swap_with_shared", &f));
    int32_t x[4] = {0, 1, 2, 3}, y[4] = {0, 0, 0, 0};
    duet_buffer *dx, *dy;
    SEED_OK(duet_buffer_create(ctx, sizeof x, &dx));
    SEED_OK(duet_buffer_create(ctx, sizeof y, &dy));
    SEED_OK(duet_buffer_write(NULL, dx, 0, x, sizeof x));
    SEED_OK(duet_buffer_write(NULL, dy, 0, y, sizeof y));
    duet_launch_config cfg = grid2d(1, 1, 4, 1);
    duet_arg args[2] = {duet_arg_buffer(dx, 0), duet_arg_buffer(dy, 0)};
    SEED_OK(duet_launch(NULL, f, &cfg, args, 2));
    SEED_OK(duet_buffer_read(NULL, dy, 0, y, sizeof y));
    printf("array([%d, %d, %d, %d], dtype=int32)\n\n", y[0], y[1], y[2], y[3]);
    if (y[0] != 3 || y[1] != 2 || y[2] != 1 || y[3] != 0) {
        fprintf(stderr, "swap_with_shared: got [%d, %d, %d, %d], want [3, 2, 1, 0]\n", y[0],
                y[1], y[2], y[3]);
        bad++;
    }
    SEED_OK(duet_buffer_destroy(dx));
    SEED_OK(duet_buffer_destroy(dy));
}

typedef struct transpose_job {
    duet_matrix in, out;
    duet_op_options opts;
} transpose_job;

static duet_status transpose_once(void *user)
{
    transpose_job *t = (transpose_job *)user;
    return duet_transpose(NULL, &t->in, &t->out, &t->opts);
}

static void transposes(int64_t size)
{
    const size_t elems = (size_t)(size * size);
    int32_t *h = malloc(elems * sizeof *h);
    if (!h) {
        fprintf(stderr, "cannot allocate %zu bytes of host memory\n", elems * sizeof *h);
        exit(1);
    }
    /* a_in = cuda.to_device(np.arange(size*size, dtype=np.int32).reshape((size, size))) */
    for (size_t i = 0; i < elems; i++) h[i] = (int32_t)i;
    printf("transpose, %lldx%lld int32%s; print(a_in.copy_to_host()):\n", (long long)size,
           (long long)size, size == 16384 ? "" : " (the notebook's 16384 scaled down)");
    seed_print_any(h, seed_get_i32, size, size, 2, 1);
    printf("\n");
    transpose_job t;
    memset(&t, 0, sizeof t);
    t.in = seed_matrix(ctx, DUET_DTYPE_I32, size, size, NULL);
    t.out = seed_matrix(ctx, DUET_DTYPE_I32, size, size, NULL);
    SEED_OK(duet_buffer_write(NULL, t.in.buffer, 0, h, elems * sizeof *h));

    static const struct {
        const char *name;
        duet_algorithm algo;
        int tile;
        uint32_t bx, by;
    } kinds[3] = {
        {"transpose (global memory only)", DUET_ALGO_NAIVE, 0, 32, 32},
        {"tile_transpose (32x32 shared tile)", DUET_ALGO_TILED, 32, 0, 0},
        {"tile_transpose_no_bank_conflict (32x33 tile)", DUET_ALGO_TILED_PADDED, 0, 0, 0},
    };
    for (int k = 0; k < 3; k++) {
        duet_launch_info info;
        t.opts = seed_options(kinds[k].algo, kinds[k].tile, kinds[k].bx, kinds[k].by, 0, 0, &info);
        SEED_OK(duet_buffer_memset(NULL, t.out.buffer, 0, 0, elems * sizeof *h));
        /* %timeit ...; cuda.synchronize() */
        duet_profile_result r;
        SEED_OK(duet_profile(ctx, NULL, transpose_once, &t, 1, 10, &r));
        printf("%s (%s): mean %.3f ms, median %.3f ms, min %.3f ms, max %.3f ms over %d runs "
               "(%.1f GB/s at the median)\n",
               kinds[k].name, seed_info(&info), r.mean_ms, r.median_ms, r.min_ms, r.max_ms,
               r.iters, 2.0 * (double)(elems * sizeof *h) / (r.median_ms * 1e-3) * 1e-9);
        SEED_OK(duet_buffer_read(NULL, t.out.buffer, 0, h, elems * sizeof *h));
        if (k == 0) {
            printf("print(a_out.copy_to_host()):\n");
            seed_print_any(h, seed_get_i32, size, size, 2, 1);
        }
        int64_t wrong = 0;
        for (int64_t i = 0; i < size; i++)
            for (int64_t j = 0; j < size; j++) wrong += h[i * size + j] != (int32_t)(j * size + i);
        if (wrong) {
            fprintf(stderr, "%s: %lld elements are not the transpose\n", kinds[k].name,
                    (long long)wrong);
            bad++;
        }
    }
    printf("\n");
    seed_free(&t.in);
    seed_free(&t.out);
    free(h);
}

int main(int argc, char **argv)
{
    int64_t size = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            size = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("dli_grids_shared %s\n", duet_version_string());
            return 0;
        } else {
            fprintf(stderr, "usage: dli_grids_shared [--size N] [--version]   (transpose size, "
                            "default 16384 on a GPU, 2048 on cpu)\n");
            return 2;
        }
    }
    ctx = seed_open("dli_grids_shared");
    const int on_cpu = strcmp(duet_backend_name(), "cpu") == 0;
    if (size <= 0) size = on_cpu ? 2048 : 16384;
    mod = seed_module(ctx, dli_kernels);

    duet_launch_info info;
    coordinates("add_2D_coordinates", 4, 4, grid2d(2, 2, 2, 2), 0, want_sum);

    duet_op_options o = seed_options(DUET_ALGO_NAIVE, 0, 6, 6, 0, 0, &info);
    add("add_matrix", 36, &o);

    o = seed_options(DUET_ALGO_NAIVE, 0, 2, 2, 0, 0, &info);
    mm("mm", 4, 4, 4, &o, 0);

    coordinates("add_2D_coordinates_stride", 11, 5, grid2d(3, 2, 3, 2), 1, want_stride);

    o = seed_options(DUET_ALGO_GRID_STRIDE, 0, 6, 6, 6, 6, &info);
    add("add_matrix_stride", 64, &o);

    /* ts = (4, 3) threads, bs = (3, 7) blocks */
    o = seed_options(DUET_ALGO_GRID_STRIDE, 0, 4, 3, 3, 7, &info);
    mm("mm_stride", 3, 4, 6, &o, 0);

    swap_with_shared();

    transposes(size);

    /* The assessment: a (M x N) @ b (N x M), N x N threads per block, M/N x M/N blocks. */
    const int64_t M = 128, ns[2] = {32, 8};
    for (int i = 0; i < 2; i++) {
        o = seed_options(DUET_ALGO_TILED, (int)ns[i], 0, 0, 0, 0, &info);
        char name[64];
        snprintf(name, sizeof name, "mm_shared (M = %lld, N = %lld)", (long long)M,
                 (long long)ns[i]);
        mm(name, M, ns[i], M, &o, 0);
    }

    if (mod) SEED_OK(duet_module_destroy(mod));
    SEED_OK(duet_context_destroy(ctx));
    if (bad) {
        fprintf(stderr, "dli_grids_shared: %d cell(s) gave wrong results\n", bad);
        return 1;
    }
    if (skipped) {
        printf("dli_grids_shared: every cell that ran is correct; the runtime-compiled cells "
               "need the cuda or hip backend (skipped)\n");
        return SEED_SKIP;
    }
    return 0;
}
