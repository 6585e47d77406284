/* test_module.c - runtime-compiled kernels: the seeds' kernels from source, compile errors, argument and launch checks, the caches. */
#include "harness.h"
#include "seed_kernels.h" /* examples/seeds: the notebooks' kernel sources */

#include <time.h>
#if !defined(_WIN32)
#include <dirent.h>
#include <unistd.h>
#endif /* !_WIN32 */

static duet_context *ctx;

/* ---- the seeds' kernels, as source strings --------------------------------------------------- */

/* The DLI notebook's add_matrix (i, j = cuda.grid(2); C[j, i] = A[j, i] + B[j, i]). */
static const char *dli_add_src =
    "__global__ void add_matrix(const int *A, const int *B, int *C, int cols) {\n"
    "    int i = (int)duet_global_idx_x();\n"
    "    int j = (int)duet_global_idx_y();\n"
    "    C[j * cols + i] = A[j * cols + i] + B[j * cols + i];\n"
    "}\n";

static const char *dli_stride_src = DLI_ADD_2D_COORDINATES_STRIDE_SRC;

/* The prelude's names and a define: the kernel reports what it was compiled with. */
static const char *prelude_src =
    "DUET_KERNEL void report(int *out) {\n"
    "    DUET_SHARED int slot[4];\n"
    "    slot[duet_thread_idx_x()] = duet_thread_idx_x();\n"
    "    duet_barrier();\n"
    "    if (duet_thread_idx_x() == 0) {\n"
    "        out[0] = DUET_WARP_SIZE;\n"
    "        out[1] = DUET_GPU_CUDA * 1 + DUET_GPU_HIP * 2;\n"
    "        out[2] = TWELVE;\n"
    "        out[3] = slot[3];\n"
    "    }\n"
    "}\n";

/* ---- helpers ----------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static duet_buffer *dev_buffer(const void *data, size_t bytes)
{
    duet_buffer *b = NULL;
    DT_OK(duet_buffer_create(ctx, bytes, &b));
    if (b && data) DT_OK(duet_buffer_write(NULL, b, 0, data, bytes));
    return b;
}

static duet_launch_config config2d(uint32_t gx, uint32_t gy, uint32_t bx, uint32_t by)
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

static duet_module *compile(const char *src, const duet_module_options *opts)
{
    duet_module *m = NULL;
    duet_status s = duet_module_create(ctx, src, opts, &m);
    DT_CHECK(s == DUET_SUCCESS, "duet_module_create -> %s: %s\n%s", duet_status_string(s),
             duet_last_error(), duet_last_compile_log());
    return s == DUET_SUCCESS ? m : NULL;
}

static duet_function *function(duet_module *m, const char *name)
{
    duet_function *f = NULL;
    if (m) DT_OK(duet_module_get_function(m, name, &f));
    return f;
}

/* ---- the PyCUDA notebook's kernels -------------------------------------------------------- */

/* Integer-valued inputs in [-4, 4]: every partial sum is exact in f32, so the GPU must match
 * the host product exactly. */
static void test_pycuda_matmul(int shared)
{
    const int n = 128;
    const size_t bytes = (size_t)n * n * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    double *ref = malloc((size_t)n * n * sizeof *ref);
    if (!a || !b || !c || !ref) exit(1);
    dt_seed(shared ? 21 : 20);
    for (int i = 0; i < n * n; i++) {
        a[i] = (float)dt_rand_int(-4, 4);
        b[i] = (float)dt_rand_int(-4, 4);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += (double)a[i * n + k] * b[k * n + j];
            ref[i * n + j] = s;
        }
    duet_buffer *da = dev_buffer(a, bytes), *db = dev_buffer(b, bytes);
    duet_buffer *dc = dev_buffer(NULL, bytes);
    duet_buffer *dbg = dev_buffer(NULL, 64 * sizeof(int));
    duet_module *m = compile(shared ? pycuda_shared_matmul_src : pycuda_naive_matmul_src, NULL);
    duet_function *f = function(m, "matmul");
    /* block (8, 8, 1), grid (N / 8, N / 8, 1): the notebook's configuration. */
    duet_launch_config cfg = config2d((uint32_t)n / 8, (uint32_t)n / 8, 8, 8);
    if (f && dc) {
        DT_OK(duet_buffer_memset(NULL, dc, 0, 0xFF, bytes));
        if (shared) {
            duet_arg args[5] = {duet_arg_buffer(da, 0), duet_arg_buffer(db, 0),
                                duet_arg_buffer(dc, 0), duet_arg_buffer(dbg, 0), duet_arg_i32(n)};
            DT_OK(duet_launch(NULL, f, &cfg, args, 5));
        } else {
            duet_arg args[4] = {duet_arg_buffer(da, 0), duet_arg_buffer(db, 0),
                                duet_arg_buffer(dc, 0), duet_arg_i32(n)};
            DT_OK(duet_launch(NULL, f, &cfg, args, 4));
        }
        DT_OK(duet_buffer_read(NULL, dc, 0, c, bytes));
        int bad = 0;
        for (int i = 0; i < n * n; i++)
            if ((double)c[i] != ref[i]) {
                if (bad++ < 3)
                    fprintf(stderr, "pycuda %s matmul: C[%d][%d] = %g, want %g\n",
                            shared ? "shared" : "naive", i / n, i % n, (double)c[i], ref[i]);
            }
        DT_CHECK(bad == 0, "pycuda %s matmul: %d of %d elements differ",
                 shared ? "shared" : "naive", bad, n * n);
    }
    if (m) DT_OK(duet_module_destroy(m));
    duet_buffer *bufs[4] = {da, db, dc, dbg};
    for (int i = 0; i < 4; i++)
        if (bufs[i]) DT_OK(duet_buffer_destroy(bufs[i]));
    free(a);
    free(b);
    free(c);
    free(ref);
}

/* ---- the DLI notebook's kernels ----------------------------------------------------------- */

static void test_dli_add(void)
{
    enum { N = 36 };
    int a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = i;     /* np.arange(36*36).reshape(36, 36) */
        b[i] = 2 * i; /* B = A * 2 */
        c[i] = 0;
    }
    duet_buffer *da = dev_buffer(a, sizeof a), *db = dev_buffer(b, sizeof b),
                *dc = dev_buffer(c, sizeof c);
    duet_module *m = compile(dli_add_src, NULL);
    duet_function *f = function(m, "add_matrix");
    duet_launch_config cfg = config2d(6, 6, 6, 6); /* blocks (6, 6), threads_per_block (6, 6) */
    if (f) {
        duet_arg args[4] = {duet_arg_buffer(da, 0), duet_arg_buffer(db, 0),
                            duet_arg_buffer(dc, 0), duet_arg_i32(N)};
        DT_OK(duet_launch(NULL, f, &cfg, args, 4));
        DT_OK(duet_buffer_read(NULL, dc, 0, c, sizeof c));
        int bad = 0;
        for (int i = 0; i < N * N; i++) bad += c[i] != 3 * i;
        DT_CHECK(bad == 0, "DLI add_matrix 36x36: %d elements differ from A + B", bad);
    }
    if (m) DT_OK(duet_module_destroy(m));
    DT_OK(duet_buffer_destroy(da));
    DT_OK(duet_buffer_destroy(db));
    DT_OK(duet_buffer_destroy(dc));
}

static void test_dli_stride(void)
{
    enum { ROWS = 11, COLS = 5 };
    /* The notebook's printed output. */
    static const int want[ROWS][COLS] = {{0, 1, 2, 3, 4}, {1, 2, 3, 4, 5}, {2, 3, 4, 5, 6},
                                         {3, 4, 5, 6, 7}, {0, 1, 2, 3, 4}, {1, 2, 3, 4, 5},
                                         {2, 3, 4, 5, 6}, {3, 4, 5, 6, 7}, {0, 1, 2, 3, 4},
                                         {1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}};
    int a[ROWS * COLS];
    memset(a, 0, sizeof a);
    duet_buffer *da = dev_buffer(a, sizeof a);
    duet_module *m = compile(dli_stride_src, NULL);
    duet_function *f = function(m, "add_2D_coordinates_stride");
    duet_launch_config cfg = config2d(3, 2, 3, 2); /* blocks (3, 2), threads (3, 2) */
    if (f) {
        duet_arg args[3] = {duet_arg_buffer(da, 0), duet_arg_i32(ROWS), duet_arg_i32(COLS)};
        DT_OK(duet_launch(NULL, f, &cfg, args, 3));
        DT_OK(duet_buffer_read(NULL, da, 0, a, sizeof a));
        int bad = 0;
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < COLS; j++) bad += a[i * COLS + j] != want[i][j];
        DT_CHECK(bad == 0, "DLI add_2D_coordinates_stride 11x5: %d elements differ from the "
                           "notebook's output", bad);
    }
    if (m) DT_OK(duet_module_destroy(m));
    DT_OK(duet_buffer_destroy(da));
}

/* ---- the prelude, defines, offsets -------------------------------------------------------- */

static void test_prelude(void)
{
    duet_device_props props;
    DT_OK(duet_context_get_props(ctx, &props));
    const char *defines[1] = {"TWELVE=12"};
    duet_module_options o;
    memset(&o, 0, sizeof o);
    o.defines = defines;
    o.num_defines = 1;
    duet_module *m = compile(prelude_src, &o);
    duet_function *f = function(m, "report");
    const char *log = NULL;
    if (m) {
        DT_OK(duet_module_log(m, &log));
        DT_CHECK(log != NULL, "duet_module_log gave NULL");
    }
    int out[8];
    for (int i = 0; i < 8; i++) out[i] = -1;
    duet_buffer *d = dev_buffer(out, sizeof out);
    duet_launch_config cfg = config2d(1, 1, 4, 1);
    if (f) {
        /* Written at an offset of 4 ints: the argument's byte offset must reach the kernel. */
        duet_arg arg = duet_arg_buffer(d, 4 * sizeof(int));
        DT_OK(duet_launch(NULL, f, &cfg, &arg, 1));
        DT_OK(duet_buffer_read(NULL, d, 0, out, sizeof out));
        DT_CHECK(out[0] == -1 && out[3] == -1, "the kernel wrote before its offset");
        DT_CHECK(out[4] == props.warp_size, "DUET_WARP_SIZE is %d, the device's warp is %d",
                 out[4], props.warp_size);
        const int vendor = strcmp(duet_backend_name(), "hip") == 0 ? 2 : 1;
        DT_CHECK(out[5] == vendor, "DUET_GPU_CUDA/DUET_GPU_HIP say %d, want %d", out[5], vendor);
        DT_CHECK(out[6] == 12, "the define TWELVE=12 gave %d", out[6]);
        DT_CHECK(out[7] == 3, "shared memory and duet_barrier(): slot[3] is %d", out[7]);
    }
    if (m) DT_OK(duet_module_destroy(m));
    if (d) DT_OK(duet_buffer_destroy(d));
}

/* ---- dynamic shared memory above the default 48 KiB -------------------------------------- */

/* Each thread writes its slot of a dynamic shared array spanning the whole request and reads
 * back its neighbour's, so the launch really uses (and the kernel really gets) every byte. */
static const char *dyn_shared_src =
    "DUET_KERNEL void dyn_shared(int *out, int n) {\n"
    "    extern __shared__ int dyn[];\n"
    "    for (int i = duet_thread_idx_x(); i < n; i += duet_block_dim_x()) dyn[i] = i * 3;\n"
    "    duet_barrier();\n"
    "    int sum = 0;\n"
    "    for (int i = duet_thread_idx_x(); i < n; i += duet_block_dim_x())\n"
    "        sum += dyn[n - 1 - i] == (n - 1 - i) * 3;\n"
    "    atomicAdd(out, sum);\n"
    "}\n";

static void test_dynamic_shared_above_48k(void)
{
    duet_device_props props;
    DT_OK(duet_context_get_props(ctx, &props));
    const size_t want = 64 * 1024;
    if (props.shared_mem_per_block_optin < want) {
        printf("dynamic shared memory: the device allows %zu bytes per block, not tested\n",
               props.shared_mem_per_block_optin);
        return;
    }
    duet_module *m = compile(dyn_shared_src, NULL);
    duet_function *f = function(m, "dyn_shared");
    int zero = 0, got = -1;
    duet_buffer *d = dev_buffer(&zero, sizeof zero);
    const int n = (int)(want / sizeof(int));
    duet_launch_config cfg = config2d(1, 1, 256, 1);
    cfg.shared_bytes = want; /* above the 48 KiB every kernel gets without an opt-in */
    if (f) {
        duet_arg args[2] = {duet_arg_buffer(d, 0), duet_arg_i32(n)};
        DT_OK(duet_launch(NULL, f, &cfg, args, 2));
        DT_OK(duet_buffer_read(NULL, d, 0, &got, sizeof got));
        DT_CHECK(got == n, "a launch with %zu bytes of dynamic shared memory saw %d of %d slots",
                 want, got, n);
    }
    if (m) DT_OK(duet_module_destroy(m));
    if (d) DT_OK(duet_buffer_destroy(d));
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_compile_error(void)
{
    duet_module *m = (duet_module *)&m; /* must come back NULL */
    const char *bad = "__global__ void broken(int *x) {\n"
                      "    x[0] = undefined_name_42;\n"
                      "}\n";
    DT_FAILS(duet_module_create(ctx, bad, NULL, &m), DUET_ERROR_COMPILE, "undefined_name_42");
    DT_CHECK(m == NULL, "a failed compile left *module non-NULL");
    const char *log = duet_last_compile_log();
    DT_CHECK(log != NULL && log[0] != '\0', "the compile log is empty");
    DT_CHECK(log != NULL && strstr(log, "undefined_name_42") != NULL,
             "the compile log does not mention the error:\n%s", log ? log : "(null)");
    /* The message names the source line the user wrote (line 2), not the prelude's. */
    DT_CHECK(strstr(duet_last_error(), "(2)") != NULL || strstr(duet_last_error(), ":2:") != NULL,
             "the message does not point at line 2: %s", duet_last_error());

    /* An option the compiler rejects is a compile error too, with a log. */
    const char *extra[1] = {"--no-such-option-for-duet"};
    duet_module_options o;
    memset(&o, 0, sizeof o);
    o.extra_options = extra;
    o.num_extra_options = 1;
    DT_FAILS(duet_module_create(ctx, dli_add_src, &o, &m), DUET_ERROR_COMPILE, "compile");
    log = duet_last_compile_log();
    DT_CHECK(log != NULL && log[0] != '\0', "a rejected option left an empty log");
}

static void test_bad_calls(void)
{
    duet_module *m = compile(pycuda_naive_matmul_src, NULL);
    duet_function *f = function(m, "matmul");
    duet_function *g = NULL;
    if (m) {
        DT_FAILS(duet_module_get_function(m, "matmul_nope", &g), DUET_ERROR_INVALID_ARGUMENT,
                 "matmul_nope");
        DT_CHECK(g == NULL, "a missing function gave a handle");
    }
    /* A, B and C as three zeroed 16 x 16 regions of one buffer: the launch that succeeds
     * below reads only written memory and writes nothing it reads. */
    const size_t mat_bytes = 16 * 16 * sizeof(float);
    duet_buffer *d = dev_buffer(NULL, 3 * mat_bytes);
    if (f && d) {
        DT_OK(duet_buffer_memset(NULL, d, 0, 0, 3 * mat_bytes));
        duet_arg args[4] = {duet_arg_buffer(d, 0), duet_arg_buffer(d, mat_bytes),
                            duet_arg_buffer(d, 2 * mat_bytes), duet_arg_i32(16)};
        /* 2048 threads per block is over every device's limit: refused before any launch. */
        duet_launch_config big = config2d(1, 1, 2048, 1);
        DT_FAILS(duet_launch(NULL, f, &big, args, 4), DUET_ERROR_INVALID_ARGUMENT, "block");
        duet_launch_config cfg = config2d(2, 2, 8, 8);
        if (strcmp(duet_backend_name(), "cuda") == 0) {
            DT_FAILS(duet_launch(NULL, f, &cfg, args, 3), DUET_ERROR_INVALID_ARGUMENT,
                     "function matmul takes 4 arguments, got 3");
            args[3] = duet_arg_i64(16);
            DT_FAILS(duet_launch(NULL, f, &cfg, args, 4), DUET_ERROR_INVALID_ARGUMENT,
                     "argument 3 of function matmul");
            args[3] = duet_arg_i32(16);
            DT_OK(duet_launch(NULL, f, &cfg, args, 4));
        } else {
            /* hipModule has no query of a kernel's parameters: nothing to check against. */
            printf("note: %s cannot check argument counts (no parameter query)\n",
                   duet_backend_name());
        }
        DT_OK(duet_context_synchronize(ctx));
    }
    if (m) DT_OK(duet_module_destroy(m));
    if (d) DT_OK(duet_buffer_destroy(d));
}

/* ---- the caches -------------------------------------------------------------------------- */

#if !defined(_WIN32)
static int count_cache_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "duet-rtc-", 9) == 0 && strstr(e->d_name, ".bin")) n++;
    closedir(d);
    return n;
}

static void remove_cache_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "duet-rtc-", 9) != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        (void)remove(path);
    }
    closedir(d);
    (void)rmdir(dir);
}
#endif /* !_WIN32 */

static void test_cache(void)
{
    /* A source no earlier run of this process has seen (the memory cache is per process). */
    char src[512];
    snprintf(src, sizeof src, "/* cache test %.0f */\n%s", now_s() * 1e6, dli_add_src);
    double t0 = now_s();
    duet_module *m1 = compile(src, NULL);
    double t1 = now_s();
    duet_module *m2 = compile(src, NULL);
    double t2 = now_s();
    const double first = t1 - t0, second = t2 - t1;
    printf("cache: first create %.2f ms, second %.2f ms\n", 1e3 * first, 1e3 * second);
    DT_CHECK(second < 0.5 * first, "the second create (%.3f ms) is not faster than the first "
                                   "(%.3f ms): no cache hit", 1e3 * second, 1e3 * first);
    /* The cached module is a working one. */
    duet_function *f = function(m2, "add_matrix");
    if (f) {
        int a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, c[4] = {0, 0, 0, 0};
        duet_buffer *da = dev_buffer(a, sizeof a), *db = dev_buffer(b, sizeof b),
                    *dc = dev_buffer(c, sizeof c);
        duet_launch_config cfg = config2d(1, 1, 2, 2);
        duet_arg args[4] = {duet_arg_buffer(da, 0), duet_arg_buffer(db, 0),
                            duet_arg_buffer(dc, 0), duet_arg_i32(2)};
        DT_OK(duet_launch(NULL, f, &cfg, args, 4));
        DT_OK(duet_buffer_read(NULL, dc, 0, c, sizeof c));
        DT_CHECK(c[0] == 11 && c[1] == 22 && c[2] == 33 && c[3] == 44,
                 "the cached module computed %d %d %d %d", c[0], c[1], c[2], c[3]);
        DT_OK(duet_buffer_destroy(da));
        DT_OK(duet_buffer_destroy(db));
        DT_OK(duet_buffer_destroy(dc));
    }
    if (m1) DT_OK(duet_module_destroy(m1));
    if (m2) DT_OK(duet_module_destroy(m2));

#if !defined(_WIN32)
    /* With a cache directory a file appears, also for a source already in the memory cache,
     * and a module created from it works. */
    char dir[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/duet-test-module-%ld", tmp && tmp[0] ? tmp : "/tmp",
             (long)getpid());
    remove_cache_dir(dir);
    duet_module_options o;
    memset(&o, 0, sizeof o);
    o.cache_dir = dir;
    duet_module *m3 = compile(src, &o);
    DT_CHECK(count_cache_files(dir) == 1, "cache_dir %s holds %d duet-rtc-*.bin files, want 1",
             dir, count_cache_files(dir));
    snprintf(src, sizeof src, "/* cache test %.0f b */\n%s", now_s() * 1e6, dli_add_src);
    duet_module *m4 = compile(src, &o);
    DT_CHECK(count_cache_files(dir) == 2, "cache_dir %s holds %d duet-rtc-*.bin files, want 2",
             dir, count_cache_files(dir));
    DT_CHECK(function(m4, "add_matrix") != NULL || m4 == NULL, "no add_matrix in a cached module");
    if (m3) DT_OK(duet_module_destroy(m3));
    if (m4) DT_OK(duet_module_destroy(m4));
    remove_cache_dir(dir);
#endif /* !_WIN32 */
}

/* ---- the cpu backend --------------------------------------------------------------------- */

static void test_unsupported(void)
{
    duet_module *m = NULL;
    DT_FAILS(duet_module_create(ctx, pycuda_naive_matmul_src, NULL, &m), DUET_ERROR_UNSUPPORTED, "cuda");
    DT_CHECK(strstr(duet_last_error(), "hip") != NULL,
             "the message does not name the hip backend: %s", duet_last_error());
    DT_CHECK(m == NULL, "an unsupported create left *module non-NULL");
}

int main(void)
{
    ctx = dt_open_or_skip();
    printf("backend %s\n", duet_backend_name());
    if (strcmp(duet_backend_name(), "cpu") == 0) {
        test_unsupported();
    } else {
        test_pycuda_matmul(0);
        test_pycuda_matmul(1);
        test_dli_add();
        test_dli_stride();
        test_prelude();
        test_dynamic_shared_above_48k();
        test_compile_error();
        test_bad_calls();
        test_cache();
    }
    DT_OK(duet_context_destroy(ctx));
    return dt_finish("test_module");
}
