/* large_check.c - big transposes and GEMM, out-of-memory recovery and bandwidth on a GPU. */
/*
 * What the conformance suite cannot do in seconds: transposes whose operands pass 2^31
 * elements, an in-place transpose of a matrix filling more than half of the device, a GEMM whose A passes 2^32 bytes, a request for more memory than the GPU has, and
 * the bandwidth of transpose and elementwise ops next to a device-to-device copy.
 * Built and run by scripts/gpu-check.sh against the built library:
 * (lab/CMakeLists.txt builds it too, with -DDUET_BUILD_LAB=ON):
 *   cc -O2 [-fopenmp] -Iinclude lab/large_check.c -Lbuild -lduet -o large_check
 * Exit status: 0 all checks passed, 1 a check failed, 77 no device (skipped).
 * Inputs are filled from an integer hash of the position, so any element can be checked
 * against the formula without keeping a copy; outputs are poisoned before every run.
 */
#include "duet/duet.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_checks, g_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        g_checks++;                                                                                \
        if (!(cond)) {                                                                             \
            g_failures++;                                                                          \
            printf("  FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                               \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

#define OK(call)                                                                                   \
    do {                                                                                           \
        duet_status s_ = (call);                                                                   \
        g_checks++;                                                                                \
        if (s_ != DUET_SUCCESS) {                                                                  \
            g_failures++;                                                                          \
            printf("  FAIL %s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,                      \
                   duet_status_string(s_), duet_last_error());                                     \
        }                                                                                          \
    } while (0)

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Dull;
}

/* The value at (i, j): a cheap 32-bit mix that any index mix-up changes. */
static inline uint32_t pattern(uint64_t i, uint64_t j)
{
    uint32_t h =
        (uint32_t)i * 0x9E3779B1u ^ (uint32_t)(i >> 32) * 0x7FEB352Du ^ (uint32_t)j * 0x85EBCA77u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return h;
}

static void store_elem(unsigned char *p, size_t elem, uint64_t v)
{
    switch (elem) {
    case 1: *p = (unsigned char)v; break;
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default: memcpy(p, &v, 8); break;
    }
}

static uint64_t elem_mask(size_t elem) { return elem >= 8 ? ~0ull : (1ull << (8 * elem)) - 1; }

static uint64_t pattern_elem(uint64_t i, uint64_t j, size_t elem)
{
    uint64_t v = pattern(i, j);
    if (elem == 8) v |= (uint64_t)pattern(j + 0x12345, i) << 32;
    return v & elem_mask(elem);
}

static duet_dtype dtype_of(size_t elem)
{
    return elem == 1   ? DUET_DTYPE_I8
           : elem == 2 ? DUET_DTYPE_F16
           : elem == 4 ? DUET_DTYPE_I32
                       : DUET_DTYPE_F64;
}

/* Uploads rows x cols elements, row-major, from the pattern, in chunks. */
static int upload_pattern(duet_stream *st, duet_buffer *buf, int64_t rows, int64_t cols,
                          size_t elem)
{
    const size_t row_bytes = (size_t)cols * elem;
    int64_t chunk_rows = (int64_t)((512u << 20) / row_bytes);
    if (chunk_rows < 1) chunk_rows = 1;
    unsigned char *host = (unsigned char *)malloc((size_t)chunk_rows * row_bytes);
    if (!host) {
        printf("  host allocation failed\n");
        return 0;
    }
    for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
        const int64_t nr = rows - r0 < chunk_rows ? rows - r0 : chunk_rows;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
        for (int64_t r = 0; r < nr; ++r)
            for (int64_t j = 0; j < cols; ++j)
                store_elem(host + ((size_t)r * cols + j) * elem, elem,
                           pattern_elem(r0 + r, j, elem));
        if (duet_buffer_write(st, buf, (size_t)r0 * row_bytes, host, (size_t)nr * row_bytes) !=
            DUET_SUCCESS) {
            printf("  upload failed: %s\n", duet_last_error());
            free(host);
            return 0;
        }
    }
    free(host);
    return 1;
}

static uint64_t read_elem(duet_stream *st, duet_buffer *buf, size_t index, size_t elem)
{
    uint64_t v = 0;
    if (duet_buffer_read(st, buf, index * elem, &v, elem) != DUET_SUCCESS)
        printf("  read failed: %s\n", duet_last_error());
    return v & elem_mask(elem); /* little-endian hosts */
}

static double elapsed_ms(duet_event *a, duet_event *b)
{
    float ms = 0;
    if (duet_event_elapsed_ms(a, b, &ms) != DUET_SUCCESS) return -1;
    return ms;
}

/* out (cols x rows) = in^T for in rows x cols of elem bytes, both packed row-major; checks
 * samples, corners and the elements around flat index 2^31 of both operands. */
static void check_transpose(duet_context *ctx, duet_stream *st, int64_t rows, int64_t cols,
                            size_t elem)
{
    duet_device_props props;
    OK(duet_context_get_props(ctx, &props));
    const size_t bytes = (size_t)rows * (size_t)cols * elem;
    printf("transpose %lld x %lld of %zu-byte elements (%.2f GB each, %.3g elements)\n",
           (long long)rows, (long long)cols, elem, bytes / 1e9, (double)rows * cols);
    if (2 * bytes + (1ull << 30) > props.global_mem_bytes) {
        printf("  skipped: needs %.1f GB of device memory\n", 2 * bytes / 1e9);
        return;
    }
    duet_buffer *in = NULL, *out = NULL;
    OK(duet_buffer_create(ctx, bytes, &in));
    OK(duet_buffer_create(ctx, bytes, &out));
    if (!in || !out || !upload_pattern(st, in, rows, cols, elem)) goto done;
    {
        const duet_dtype dt = dtype_of(elem);
        duet_matrix mi = duet_matrix_make(in, dt, DUET_LAYOUT_ROW_MAJOR, rows, cols);
        duet_matrix mo = duet_matrix_make(out, dt, DUET_LAYOUT_ROW_MAJOR, cols, rows);
        const duet_algorithm algos[2] = {DUET_ALGO_AUTO, DUET_ALGO_TILED_PADDED};
        for (int a = 0; a < 2; ++a) {
            duet_launch_info info;
            duet_op_options opt;
            memset(&opt, 0, sizeof opt);
            opt.algorithm = algos[a];
            opt.info = &info;
            OK(duet_buffer_memset(st, out, 0, 0xA5, bytes));
            duet_event *e0 = NULL, *e1 = NULL;
            OK(duet_event_create(ctx, &e0));
            OK(duet_event_create(ctx, &e1));
            OK(duet_event_record(e0, st));
            OK(duet_transpose(st, &mi, &mo, &opt));
            OK(duet_event_record(e1, st));
            OK(duet_stream_synchronize(st));
            const double ms = elapsed_ms(e0, e1);
            printf("  %-28s %8.2f ms  %7.1f GB/s\n", info.kernel, ms, 2.0 * bytes / (ms * 1e6));
            duet_event_destroy(e0);
            duet_event_destroy(e1);
            int bad = 0;
            const int samples = 4096 + 12;
            for (int s = 0; s < samples; ++s) {
                uint64_t i, j;
                if (s < 4096) {
                    i = rnd() % (uint64_t)rows;
                    j = rnd() % (uint64_t)cols;
                } else if (s < 4100) { /* corners */
                    i = (s & 1) ? (uint64_t)rows - 1 : 0;
                    j = (s & 2) ? (uint64_t)cols - 1 : 0;
                } else { /* around flat index 2^31 of out (then of in) */
                    const uint64_t f = (1ull << 31) - 4 + (uint64_t)(s - 4100) % 8;
                    if (s < 4108) {
                        j = f / (uint64_t)rows;
                        i = f % (uint64_t)rows;
                    } else {
                        i = f / (uint64_t)cols;
                        j = f % (uint64_t)cols;
                    }
                    if (i >= (uint64_t)rows || j >= (uint64_t)cols) continue;
                }
                const uint64_t got = read_elem(st, out, (size_t)(j * (uint64_t)rows + i), elem);
                const uint64_t want = pattern_elem(i, j, elem);
                if (got != want && bad++ < 5)
                    printf("  FAIL out(%llu, %llu) = %#llx, want %#llx\n", (unsigned long long)j,
                           (unsigned long long)i, (unsigned long long)got,
                           (unsigned long long)want);
            }
            CHECK(bad == 0, "%s: %d of %d sampled elements wrong", info.kernel, bad, samples);
        }
    }
done:
    if (in) duet_buffer_destroy(in);
    if (out) duet_buffer_destroy(out);
}

/* An in-place transpose of a rows x cols matrix (packed row-major, rectangular) that takes more
 * than half of the device's memory, so that no out-of-place copy could sit beside it; checked
 * by sampling (and its corners) against the pattern. */
static void check_transpose_in_place(duet_context *ctx, duet_stream *st, size_t elem)
{
    duet_device_props props;
    OK(duet_context_get_props(ctx, &props));
    /* 55% of the device: more than half of whatever is free. cols share a large factor with
     * rows, so the decomposition's column rotation runs too. */
    const int64_t cols = 40000;
    int64_t rows = (int64_t)(0.55 * (double)props.global_mem_bytes / (double)(cols * (int64_t)elem));
    rows -= rows % 1000;
    if (rows < 2000) {
        printf("in-place transpose: skipped (device too small)\n");
        return;
    }
    const size_t bytes = (size_t)rows * (size_t)cols * elem;
    printf("in-place transpose %lld x %lld of %zu-byte elements (%.2f GB, %.0f%% of the device)\n",
           (long long)rows, (long long)cols, elem, bytes / 1e9,
           100.0 * (double)bytes / (double)props.global_mem_bytes);
    duet_buffer *buf = NULL;
    OK(duet_buffer_create(ctx, bytes, &buf));
    if (!buf || !upload_pattern(st, buf, rows, cols, elem)) goto done;
    {
        /* A second matrix of the same size does not fit: only in place can transpose this. */
        duet_buffer *other = NULL;
        const duet_status so = duet_buffer_create(ctx, bytes, &other);
        printf("  a second %.2f GB buffer: %s\n", bytes / 1e9,
               so == DUET_SUCCESS ? "fits (the device has more free memory than expected)"
                                  : duet_status_string(so));
        if (other) duet_buffer_destroy(other);
        const duet_dtype dt = dtype_of(elem);
        duet_matrix a = duet_matrix_make(buf, dt, DUET_LAYOUT_ROW_MAJOR, rows, cols);
        duet_matrix b = duet_matrix_make(buf, dt, DUET_LAYOUT_ROW_MAJOR, cols, rows);
        duet_launch_info info;
        duet_op_options opt;
        memset(&opt, 0, sizeof opt);
        opt.info = &info;
        duet_event *e0 = NULL, *e1 = NULL;
        OK(duet_event_create(ctx, &e0));
        OK(duet_event_create(ctx, &e1));
        OK(duet_event_record(e0, st));
        OK(duet_transpose(st, &a, &b, &opt));
        OK(duet_event_record(e1, st));
        OK(duet_stream_synchronize(st));
        const double ms = elapsed_ms(e0, e1);
        printf("  %-28s %8.2f ms  %7.1f GB/s  %d launches, workspace %zu bytes\n", info.kernel,
               ms, 2.0 * bytes / (ms * 1e6), info.launches, info.workspace_bytes);
        duet_event_destroy(e0);
        duet_event_destroy(e1);
        int bad = 0;
        const int samples = 4096 + 4;
        for (int s = 0; s < samples; ++s) {
            uint64_t i, j;
            if (s < 4096) {
                i = rnd() % (uint64_t)rows;
                j = rnd() % (uint64_t)cols;
            } else {
                i = (s & 1) ? (uint64_t)rows - 1 : 0;
                j = (s & 2) ? (uint64_t)cols - 1 : 0;
            }
            const uint64_t got = read_elem(st, buf, (size_t)(j * (uint64_t)rows + i), elem);
            const uint64_t want = pattern_elem(i, j, elem);
            if (got != want && bad++ < 5)
                printf("  FAIL in-place out(%llu, %llu) = %#llx, want %#llx\n",
                       (unsigned long long)j, (unsigned long long)i, (unsigned long long)got,
                       (unsigned long long)want);
        }
        CHECK(bad == 0, "in-place %s: %d of %d sampled elements wrong", info.kernel, bad, samples);
    }
done:
    if (buf) duet_buffer_destroy(buf);
}

/* C (m x n) = A (m x k) * B (k x n), f32 with small integer entries so every sum is exact;
 * A passes 2^31 elements and 2^32 bytes. Checked with Freivalds' test on sampled rows:
 * C r against A (B r) in double, for a random integer vector r. C starts as NaN and beta is 0,
 * so a kernel that reads C shows up as NaN. */
static float a_val(uint64_t i, uint64_t k) { return (float)((int)(pattern(i, k) % 9u) - 4); }
static float b_val(uint64_t k, uint64_t j)
{
    return (float)((int)(pattern(k + 0x777, j) % 9u) - 4);
}

static void check_gemm(duet_context *ctx, duet_stream *st, int64_t m, int64_t n, int64_t k)
{
    duet_device_props props;
    OK(duet_context_get_props(ctx, &props));
    const size_t abytes = (size_t)m * k * 4, bbytes = (size_t)k * n * 4, cbytes = (size_t)m * n * 4;
    printf("gemm f32 %lld x %lld x %lld (A: %.2f GB, %.3g elements)\n", (long long)m, (long long)n,
           (long long)k, abytes / 1e9, (double)m * k);
    if (abytes + bbytes + cbytes + (1ull << 30) > props.global_mem_bytes) {
        printf("  skipped: not enough device memory\n");
        return;
    }
    duet_buffer *a = NULL, *b = NULL, *c = NULL;
    float *hb = (float *)malloc(bbytes), *ha = NULL, *hc = (float *)malloc((size_t)n * 4);
    double *br = (double *)malloc((size_t)k * sizeof(double)),
           *r = (double *)malloc((size_t)n * sizeof(double));
    OK(duet_buffer_create(ctx, abytes, &a));
    OK(duet_buffer_create(ctx, bbytes, &b));
    OK(duet_buffer_create(ctx, cbytes, &c));
    if (!a || !b || !c || !hb || !hc || !br || !r) goto done;
    {
        const int64_t chunk = (int64_t)((256u << 20) / ((size_t)k * 4));
        ha = (float *)malloc((size_t)chunk * k * 4);
        if (!ha) goto done;
        for (int64_t r0 = 0; r0 < m; r0 += chunk) {
            const int64_t nr = m - r0 < chunk ? m - r0 : chunk;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
            for (int64_t i = 0; i < nr; ++i)
                for (int64_t q = 0; q < k; ++q) ha[(size_t)i * k + q] = a_val(r0 + i, q);
            OK(duet_buffer_write(st, a, (size_t)r0 * k * 4, ha, (size_t)nr * k * 4));
        }
        for (int64_t q = 0; q < k; ++q)
            for (int64_t j = 0; j < n; ++j) hb[q * n + j] = b_val(q, j);
        OK(duet_buffer_write(st, b, 0, hb, bbytes));
        for (int64_t j = 0; j < n; ++j) r[j] = (double)((int)(rnd() % 17u) - 8);
        for (int64_t q = 0; q < k; ++q) {
            double s = 0;
            for (int64_t j = 0; j < n; ++j) s += (double)hb[q * n + j] * r[j];
            br[q] = s;
        }
        duet_matrix ma = duet_matrix_make(a, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, m, k);
        duet_matrix mb = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, k, n);
        duet_matrix mc = duet_matrix_make(c, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, m, n);
        const duet_algorithm algos[3] = {DUET_ALGO_AUTO, DUET_ALGO_TILED, DUET_ALGO_NAIVE};
        for (int al = 0; al < 3; ++al) {
            duet_launch_info info;
            duet_op_options opt;
            memset(&opt, 0, sizeof opt);
            opt.algorithm = algos[al];
            opt.info = &info;
            OK(duet_buffer_memset(st, c, 0, 0xFF, cbytes)); /* all-ones: a NaN in every element */
            duet_event *e0 = NULL, *e1 = NULL;
            OK(duet_event_create(ctx, &e0));
            OK(duet_event_create(ctx, &e1));
            OK(duet_event_record(e0, st));
            OK(duet_gemm(st, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, 0.0, &mc, &opt));
            OK(duet_event_record(e1, st));
            OK(duet_stream_synchronize(st));
            const double ms = elapsed_ms(e0, e1);
            printf("  %-28s %8.2f ms  %7.2f TFLOP/s\n", info.kernel, ms,
                   2.0 * m * n * k / (ms * 1e9));
            duet_event_destroy(e0);
            duet_event_destroy(e1);
            int bad = 0, rows_checked = 0;
            const int64_t edge = (int64_t)((1ull << 31) / (uint64_t)k);
            for (int s = 0; s < 2048 + 6; ++s) {
                int64_t i = s < 2048 ? (int64_t)(rnd() % (uint64_t)m)
                                     : (s < 2050 ? (s == 2048 ? 0 : m - 1) : edge - 2 + (s - 2050));
                if (i < 0 || i >= m) continue;
                OK(duet_buffer_read(st, c, (size_t)i * n * 4, hc, (size_t)n * 4));
                double lhs = 0, rhs = 0;
                for (int64_t j = 0; j < n; ++j) lhs += (double)hc[j] * r[j];
                for (int64_t q = 0; q < k; ++q)
                    rhs += (double)a_val((uint64_t)i, (uint64_t)q) * br[q];
                double direct = 0; /* one element too, so a wrong column order is also caught */
                const int64_t j0 = (int64_t)(rnd() % (uint64_t)n);
                for (int64_t q = 0; q < k; ++q)
                    direct += (double)a_val((uint64_t)i, (uint64_t)q) * hb[q * n + j0];
                rows_checked++;
                if (!(fabs(lhs - rhs) <= 0.5) || !((double)hc[j0] == direct)) {
                    if (bad++ < 5)
                        printf("  FAIL row %lld: C r = %.1f, A (B r) = %.1f; C(%lld, %lld) = %g, "
                               "want %g\n",
                               (long long)i, lhs, rhs, (long long)i, (long long)j0, hc[j0], direct);
                }
            }
            CHECK(bad == 0, "%s: %d of %d sampled rows wrong", info.kernel, bad, rows_checked);
        }
    }
done:
    free(ha);
    free(hb);
    free(hc);
    free(br);
    free(r);
    if (a) duet_buffer_destroy(a);
    if (b) duet_buffer_destroy(b);
    if (c) duet_buffer_destroy(c);
}

/* Asks for more memory than the GPU has: a clean DUET_ERROR_OUT_OF_MEMORY, then the context
 * must still allocate and compute. */
static void check_out_of_memory(duet_context *ctx, duet_stream *st)
{
    duet_device_props props;
    OK(duet_context_get_props(ctx, &props));
    printf("out of memory (device has %.1f GB)\n", props.global_mem_bytes / 1e9);
    const size_t asks[2] = {props.global_mem_bytes, props.global_mem_bytes * 2};
    for (int q = 0; q < 2; ++q) {
        duet_buffer *huge = NULL;
        duet_status s = duet_buffer_create(ctx, asks[q], &huge);
        printf("  %zu bytes -> %s: %s\n", asks[q], duet_status_string(s), duet_last_error());
        CHECK(s == DUET_ERROR_OUT_OF_MEMORY, "got %s", duet_status_string(s));
        CHECK(huge == NULL, "no handle on failure");
        CHECK(strlen(duet_last_error()) > 0, "a message names the failure");
        if (huge) duet_buffer_destroy(huge);
    }
    /* Still usable: fill, scale, transpose, read back. */
    const int64_t n = 4096;
    duet_buffer *x = NULL, *y = NULL;
    OK(duet_buffer_create(ctx, (size_t)n * n * 4, &x));
    OK(duet_buffer_create(ctx, (size_t)n * n * 4, &y));
    if (x && y) {
        duet_matrix mx = duet_matrix_make(x, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
        duet_matrix my = duet_matrix_make(y, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, n, n);
        OK(duet_fill(st, 1.5, &mx, NULL));
        OK(duet_scale(st, 2.0, &mx, NULL));
        OK(duet_transpose(st, &mx, &my, NULL));
        OK(duet_stream_synchronize(st));
        float v[2] = {0, 0};
        OK(duet_buffer_read(st, y, 0, &v[0], 4));
        OK(duet_buffer_read(st, y, ((size_t)n * n - 1) * 4, &v[1], 4));
        CHECK(v[0] == 3.0f && v[1] == 3.0f, "after OOM: got %g, %g, want 3", v[0], v[1]);
        CHECK(duet_last_error()[0] == '\0', "no stale message: \"%s\"", duet_last_error());
    }
    if (x) duet_buffer_destroy(x);
    if (y) duet_buffer_destroy(y);
}

/* ---- bandwidth ------------------------------------------------------------------------------- */

typedef struct bw_job {
    duet_stream *st;
    int kind; /* 0 copy, 1 transpose, 2 scale, 3 add, 4 fill */
    duet_buffer *src, *dst;
    size_t bytes;
    duet_matrix mi, mo;
    duet_op_options opt;
} bw_job;

static duet_status bw_run(void *user)
{
    bw_job *j = (bw_job *)user;
    switch (j->kind) {
    case 0: return duet_buffer_copy(j->st, j->dst, 0, j->src, 0, j->bytes);
    case 1: return duet_transpose(j->st, &j->mi, &j->mo, &j->opt);
    case 2: return duet_scale(j->st, 1.0001, &j->mo, &j->opt);
    case 3: return duet_add(j->st, 0.5, &j->mi, 0.25, &j->mo, &j->mo, &j->opt);
    default: return duet_fill(j->st, 1.25, &j->mo, &j->opt);
    }
}

static double bw_time(duet_context *ctx, bw_job *j)
{
    duet_profile_result r;
    memset(&r, 0, sizeof r);
    duet_status s = duet_profile(ctx, j->st, bw_run, j, 3, 20, &r);
    if (s != DUET_SUCCESS) {
        printf("  FAIL profile: %s\n", duet_last_error());
        g_failures++;
        return -1;
    }
    return r.median_ms;
}

static void bandwidth(duet_context *ctx, duet_stream *st)
{
    printf("bandwidth (median of 20 after 3 warm-ups; bytes read + written)\n");
    const size_t max_bytes = (size_t)16384 * 16384 * 8;
    duet_buffer *s = NULL, *d = NULL;
    OK(duet_buffer_create(ctx, max_bytes, &s));
    OK(duet_buffer_create(ctx, max_bytes, &d));
    if (!s || !d) goto done;
    /* Hashed data, not a constant: HBM moves constant data measurably faster. Read as floats
     * it holds NaNs and denormals too, which the GPU's arithmetic takes at full speed. */
    if (!upload_pattern(st, s, 16384, 16384, 8)) goto done;
    OK(duet_buffer_copy(st, d, 0, s, 0, max_bytes));
    printf("  %-34s %-12s %9s %9s %8s\n", "op", "size", "ms", "GB/s", "of copy");
    {
        const int64_t sizes[2] = {8192, 16384};
        for (int si = 0; si < 2; ++si) {
            const int64_t n = sizes[si];
            for (size_t elem = 4; elem <= 8; elem += 4) {
                const size_t bytes = (size_t)n * n * elem;
                bw_job cj;
                memset(&cj, 0, sizeof cj);
                cj.st = st;
                cj.kind = 0;
                cj.src = s;
                cj.dst = d;
                cj.bytes = bytes;
                const double copy_ms = bw_time(ctx, &cj);
                const double copy_bw = 2.0 * bytes / (copy_ms * 1e6);
                printf("  %-34s %5lldx%-6lld %9.3f %9.1f %7.1f%%\n", "device-to-device copy",
                       (long long)n, (long long)n, copy_ms, copy_bw, 100.0);
                const duet_dtype dt = elem == 4 ? DUET_DTYPE_F32 : DUET_DTYPE_F64;
                const duet_algorithm algos[3] = {DUET_ALGO_AUTO, DUET_ALGO_TILED_PADDED,
                                                 DUET_ALGO_NAIVE};
                for (int a = 0; a < 3; ++a) {
                    bw_job tj = cj;
                    duet_launch_info info;
                    tj.kind = 1;
                    tj.mi = duet_matrix_make(s, dt, DUET_LAYOUT_ROW_MAJOR, n, n);
                    tj.mo = duet_matrix_make(d, dt, DUET_LAYOUT_ROW_MAJOR, n, n);
                    tj.opt.algorithm = algos[a];
                    tj.opt.info = &info;
                    memset(&info, 0, sizeof info);
                    const double ms = bw_time(ctx, &tj);
                    const double gbs = 2.0 * bytes / (ms * 1e6);
                    printf("  %-34s %5lldx%-6lld %9.3f %9.1f %7.1f%%\n", info.kernel, (long long)n,
                           (long long)n, ms, gbs, 100.0 * gbs / copy_bw);
                }
                for (int kind = 2; kind <= 4; ++kind) {
                    bw_job ej = cj;
                    duet_launch_info info;
                    ej.kind = kind;
                    ej.mi = duet_matrix_make(s, dt, DUET_LAYOUT_ROW_MAJOR, n, n);
                    ej.mo = duet_matrix_make(d, dt, DUET_LAYOUT_ROW_MAJOR, n, n);
                    ej.opt.info = &info;
                    memset(&info, 0, sizeof info);
                    const double ms = bw_time(ctx, &ej);
                    const double moved = kind == 2   ? 2.0 * bytes
                                         : kind == 3 ? 3.0 * bytes
                                                     : 1.0 * bytes;
                    const double gbs = moved / (ms * 1e6);
                    printf("  %-34s %5lldx%-6lld %9.3f %9.1f %7.1f%%\n", info.kernel, (long long)n,
                           (long long)n, ms, gbs, 100.0 * gbs / copy_bw);
                }
            }
        }
    }
done:
    if (s) duet_buffer_destroy(s);
    if (d) duet_buffer_destroy(d);
}

/* ---- small odd shapes through every algorithm (for the sanitizers) ------------------------- */

static size_t mat_index(const duet_matrix *m, int64_t b, int64_t i, int64_t j)
{
    const int64_t in_mat = m->layout == DUET_LAYOUT_ROW_MAJOR ? i * m->ld + j : j * m->ld + i;
    return m->offset + (size_t)(b * m->batch_stride + in_mat);
}

static size_t mat_span(const duet_matrix *m)
{
    const int64_t batch = m->batch_count > 0 ? m->batch_count : 1;
    const int64_t lines = m->layout == DUET_LAYOUT_ROW_MAJOR ? m->rows : m->cols;
    return m->offset + (size_t)((batch - 1) * m->batch_stride + lines * m->ld) + 8;
}

static duet_matrix small_mat(duet_buffer *buf, duet_dtype dt, duet_layout lay, int64_t rows,
                             int64_t cols, int64_t batch, int pad)
{
    duet_matrix m = duet_matrix_make(buf, dt, lay, rows, cols);
    m.ld = (lay == DUET_LAYOUT_ROW_MAJOR ? cols : rows) + pad;
    m.offset = (size_t)pad;
    m.batch_count = batch;
    m.batch_stride = (lay == DUET_LAYOUT_ROW_MAJOR ? rows : cols) * m.ld + pad;
    return m;
}

static const duet_algorithm k_algos[5] = {DUET_ALGO_AUTO, DUET_ALGO_NAIVE, DUET_ALGO_TILED,
                                          DUET_ALGO_TILED_PADDED, DUET_ALGO_GRID_STRIDE};

static void small_transposes(duet_context *ctx, duet_stream *st)
{
    static const int64_t shapes[3][2] = {{5, 3}, {33, 17}, {130, 67}};
    static const size_t elems[3] = {1, 4, 8};
    const size_t cap = 1u << 20;
    unsigned char *hin = (unsigned char *)malloc(cap * 8), *hout = (unsigned char *)malloc(cap * 8);
    duet_buffer *bin = NULL, *bout = NULL;
    OK(duet_buffer_create(ctx, cap * 8, &bin));
    OK(duet_buffer_create(ctx, cap * 8, &bout));
    int cases = 0, bad_cases = 0;
    for (int e = 0; e < 3 && hin && hout && bin && bout; ++e)
        for (int sh = 0; sh < 3; ++sh)
            for (int64_t batch = 1; batch <= 2; ++batch)
                for (int lay = 0; lay < 4; ++lay)
                    for (int al = 0; al < 6; ++al) {
                        const size_t elem = elems[e];
                        const duet_dtype dt = dtype_of(elem);
                        const int64_t rows = shapes[sh][0], cols = shapes[sh][1];
                        const int pad = sh == 2 ? 3 : 0;
                        duet_matrix mi =
                            small_mat(bin, dt, (duet_layout)(lay & 1), rows, cols, batch, pad);
                        duet_matrix mo =
                            small_mat(bout, dt, (duet_layout)(lay >> 1), cols, rows, batch, pad);
                        const size_t si = mat_span(&mi), so = mat_span(&mo);
                        for (size_t q = 0; q < si; ++q)
                            store_elem(hin + q * elem, elem, pattern(q, 7));
                        memset(hout, 0xA5, so * elem);
                        OK(duet_buffer_write(st, bin, 0, hin, si * elem));
                        OK(duet_buffer_write(st, bout, 0, hout, so * elem));
                        duet_op_options opt;
                        memset(&opt, 0, sizeof opt);
                        opt.algorithm = k_algos[al < 5 ? al : 2];
                        if (al == 5) opt.tile = 7; /* TILED with an odd run-time tile */
                        OK(duet_transpose(st, &mi, &mo, &opt));
                        OK(duet_buffer_read(st, bout, 0, hout, so * elem));
                        /* every element of out, and nothing outside it (guard = 0xA5 bytes) */
                        unsigned char *want = (unsigned char *)malloc(so * elem);
                        memset(want, 0xA5, so * elem);
                        for (int64_t b = 0; b < batch; ++b)
                            for (int64_t i = 0; i < cols; ++i)
                                for (int64_t j = 0; j < rows; ++j)
                                    memcpy(want + mat_index(&mo, b, i, j) * elem,
                                           hin + mat_index(&mi, b, j, i) * elem, elem);
                        cases++;
                        if (memcmp(want, hout, so * elem) != 0 && bad_cases++ < 5)
                            printf("  FAIL transpose %lldx%lld batch %lld elem %zu layouts %d algo "
                                   "%d\n",
                                   (long long)rows, (long long)cols, (long long)batch, elem, lay,
                                   al);
                        free(want);
                    }
    CHECK(bad_cases == 0, "%d of %d small transposes wrong", bad_cases, cases);
    printf("  %d small transposes checked\n", cases);
    free(hin);
    free(hout);
    if (bin) duet_buffer_destroy(bin);
    if (bout) duet_buffer_destroy(bout);
}

static void small_gemms(duet_context *ctx, duet_stream *st)
{
    static const int64_t shapes[3][3] = {{1, 1, 1}, {17, 15, 33}, {64, 65, 63}};
    const size_t cap = 1u << 16;
    float *ha = (float *)malloc(cap * 4), *hb = (float *)malloc(cap * 4),
          *hc = (float *)malloc(cap * 4);
    duet_buffer *a = NULL, *b = NULL, *c = NULL;
    OK(duet_buffer_create(ctx, cap * 4, &a));
    OK(duet_buffer_create(ctx, cap * 4, &b));
    OK(duet_buffer_create(ctx, cap * 4, &c));
    int cases = 0, bad_cases = 0;
    for (int sh = 0; sh < 3 && ha && hb && hc && a && b && c; ++sh)
        for (int al = 0; al < 6; ++al)
            for (int beta1 = 0; beta1 <= 1; ++beta1) {
                if (al == 3) continue; /* TILED_PADDED has no meaning for gemm */
                const int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
                duet_matrix ma = small_mat(a, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, m, k, 2, 1);
                duet_matrix mb = small_mat(b, DUET_DTYPE_F32, DUET_LAYOUT_COL_MAJOR, k, n, 2, 2);
                duet_matrix mc = small_mat(c, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, m, n, 2, 3);
                const size_t sa = mat_span(&ma), sb = mat_span(&mb), sc = mat_span(&mc);
                for (size_t q = 0; q < sa; ++q) ha[q] = (float)((int)(pattern(q, 1) % 9u) - 4);
                for (size_t q = 0; q < sb; ++q) hb[q] = (float)((int)(pattern(q, 2) % 9u) - 4);
                for (size_t q = 0; q < sc; ++q) hc[q] = beta1 ? (float)(q % 5) : NAN;
                OK(duet_buffer_write(st, a, 0, ha, sa * 4));
                OK(duet_buffer_write(st, b, 0, hb, sb * 4));
                OK(duet_buffer_write(st, c, 0, hc, sc * 4));
                duet_op_options opt;
                memset(&opt, 0, sizeof opt);
                opt.algorithm = k_algos[al < 5 ? al : 2];
                if (al == 5) opt.tile = 7;
                OK(duet_gemm(st, DUET_OP_N, DUET_OP_N, 2.0, &ma, &mb, beta1 ? 1.0 : 0.0, &mc,
                             &opt));
                float *got = (float *)malloc(sc * 4);
                OK(duet_buffer_read(st, c, 0, got, sc * 4));
                int bad = 0;
                for (int64_t bt = 0; bt < 2; ++bt)
                    for (int64_t i = 0; i < m; ++i)
                        for (int64_t j = 0; j < n; ++j) {
                            double sum = 0;
                            for (int64_t q = 0; q < k; ++q)
                                sum += (double)ha[mat_index(&ma, bt, i, q)] *
                                       hb[mat_index(&mb, bt, q, j)];
                            const size_t ci = mat_index(&mc, bt, i, j);
                            const double want = 2.0 * sum + (beta1 ? hc[ci] : 0.0);
                            if (got[ci] != (float)want) bad++;
                        }
                cases++;
                if (bad && bad_cases++ < 5)
                    printf("  FAIL gemm %lldx%lldx%lld algo %d beta %d: %d wrong\n", (long long)m,
                           (long long)n, (long long)k, al, beta1, bad);
                free(got);
            }
    CHECK(bad_cases == 0, "%d of %d small gemms wrong", bad_cases, cases);
    printf("  %d small gemms checked\n", cases);
    free(ha);
    free(hb);
    free(hc);
    if (a) duet_buffer_destroy(a);
    if (b) duet_buffer_destroy(b);
    if (c) duet_buffer_destroy(c);
}

static void small_elementwise(duet_context *ctx, duet_stream *st)
{
    const size_t cap = 1u << 16;
    float *hx = (float *)malloc(cap * 4), *hy = (float *)malloc(cap * 4),
          *got = (float *)malloc(cap * 4);
    duet_buffer *x = NULL, *y = NULL;
    OK(duet_buffer_create(ctx, cap * 4, &x));
    OK(duet_buffer_create(ctx, cap * 4, &y));
    int cases = 0, bad_cases = 0;
    static const duet_algorithm algos[3] = {DUET_ALGO_AUTO, DUET_ALGO_NAIVE, DUET_ALGO_GRID_STRIDE};
    for (int kind = 0; kind < 3 && hx && hy && got && x && y; ++kind)
        for (int al = 0; al < 3; ++al)
            for (int pad = 0; pad <= 3; pad += 3) {
                duet_matrix mx =
                    small_mat(x, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 37, 45, 3, pad);
                duet_matrix my =
                    small_mat(y, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 37, 45, 3, pad);
                const size_t sx = mat_span(&mx);
                for (size_t q = 0; q < sx; ++q) {
                    hx[q] = (float)(q % 13) - 6.0f;
                    hy[q] = (float)(q % 7);
                }
                OK(duet_buffer_write(st, x, 0, hx, sx * 4));
                OK(duet_buffer_write(st, y, 0, hy, sx * 4));
                duet_op_options opt;
                memset(&opt, 0, sizeof opt);
                opt.algorithm = algos[al];
                if (kind == 0) OK(duet_scale(st, 3.0, &my, &opt));
                if (kind == 1) OK(duet_add(st, 2.0, &mx, -1.0, &my, &my, &opt));
                if (kind == 2) OK(duet_fill(st, 0.5, &my, &opt));
                OK(duet_buffer_read(st, y, 0, got, sx * 4));
                float *want = (float *)malloc(sx * 4);
                memcpy(want, hy, sx * 4);
                for (int64_t b = 0; b < 3; ++b)
                    for (int64_t i = 0; i < 37; ++i)
                        for (int64_t j = 0; j < 45; ++j) {
                            const size_t q = mat_index(&my, b, i, j);
                            want[q] = kind == 0   ? 3.0f * hy[q]
                                      : kind == 1 ? 2.0f * hx[q] - hy[q]
                                                  : 0.5f;
                        }
                cases++;
                if (memcmp(want, got, sx * 4) != 0 && bad_cases++ < 5)
                    printf("  FAIL elementwise kind %d algo %d pad %d\n", kind, al, pad);
                free(want);
            }
    CHECK(bad_cases == 0, "%d of %d small elementwise ops wrong", bad_cases, cases);
    printf("  %d small elementwise ops checked\n", cases);
    free(hx);
    free(hy);
    free(got);
    if (x) duet_buffer_destroy(x);
    if (y) duet_buffer_destroy(y);
}

int main(int argc, char **argv)
{
    int count = 0;
    if (duet_device_count(&count) != DUET_SUCCESS || count < 1) {
        printf("large_check: no device (%s); skipped\n", duet_last_error());
        return 77;
    }
    duet_context *ctx = NULL;
    if (duet_context_create(0, &ctx) != DUET_SUCCESS) {
        printf("large_check: duet_context_create: %s\n", duet_last_error());
        return 1;
    }
    duet_device_props props;
    duet_context_get_props(ctx, &props);
    printf("large_check on %s (%s), %d compute units, %.1f GB, backend %s\n", props.name,
           props.arch, props.compute_units, props.global_mem_bytes / 1e9, duet_backend_name());
    duet_stream *st = NULL;
    OK(duet_stream_create(ctx, &st));
    const char *only = argc > 1 ? argv[1] : "all";
    const int all = strcmp(only, "all") == 0;

    if (all || strcmp(only, "small") == 0) {
        printf("small shapes, every algorithm\n");
        small_transposes(ctx, st);
        small_gemms(ctx, st);
        small_elementwise(ctx, st);
    }
    if (all || strcmp(only, "bandwidth") == 0) bandwidth(ctx, st);
    if (all || strcmp(only, "oom") == 0) check_out_of_memory(ctx, st);
    if (all || strcmp(only, "transpose") == 0) {
        check_transpose(ctx, st, 65536, 40000, 1); /* 2.62e9 one-byte elements */
        check_transpose(ctx, st, 46341, 46341, 4); /* 2^31 + 4633 four-byte elements, 8.6 GB */
    }
    if (all || strcmp(only, "inplace") == 0) check_transpose_in_place(ctx, st, 4);
    if (all || strcmp(only, "gemm") == 0)
        check_gemm(ctx, st, (int64_t)1 << 22, 64, 640); /* A: 2.68e9 elements, 10.7 GB */

    duet_stream_destroy(st);
    duet_context_destroy(ctx);
    printf("large_check: %d checks, %d failed\n", g_checks, g_failures);
    return g_failures ? 1 : 0;
}
