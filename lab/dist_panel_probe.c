/* dist_panel_probe.c - the local GEMMs of duet_dist's SUMMA, timed alone on one device. */
/*
 * duet_dist_gemm's local update is a chain of GEMMs over groups of k panels (depth kw each,
 * beta 1 after the first), on panel copies: A column-major (rows x kw), B row-major
 * (kw x cols). This probe times that chain on one device, without communication, beside one
 * GEMM of the whole depth on the operands as the caller lays them out (column-major), so the
 * cost of the panel split (C read and written once a group, the shorter depth, B's layout) is
 * told apart from the cost of communication in a scaling run.
 *
 *   dist_panel_probe [--dtype f64|f32|bf16] [--rows R] [--cols C] [--k K]
 *                    [--widths w1,w2,...] [--iters N]
 * Defaults: f64, 32768 x 16384, k 32768 (a rank's share of n = 32768 on a 1 x 2 grid), widths
 * 2048,4096,8192,16384,32768, median of 3 after one warm-up. Inputs: a random pattern
 * (never zero). Prints one line per case: time, TFLOP/s, ratio to the whole-depth GEMM, and the
 * kernel that ran. Exit status 0, 1 on a failed call, 2 bad usage, 77 no device.
 */
#include "duet/duet.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALL(x)                                                                                    \
    do {                                                                                           \
        duet_status s_ = (x);                                                                      \
        if (s_ != DUET_SUCCESS) {                                                                  \
            fprintf(stderr, "dist_panel_probe: %s: %s\n", #x, duet_last_error());                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Fills buf (elems of dt) with a random pattern of 2^20 values, uploaded piece by piece. */
static void fill_random(duet_buffer *buf, duet_dtype dt, size_t elems)
{
    enum { CHUNK = 1 << 20 };
    const size_t es = duet_dtype_size(dt);
    unsigned char *h = malloc(CHUNK * es);
    if (!h) exit(1);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < CHUNK; i++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        const double v = (double)((s * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1 << 24) - 0.5;
        const double x = v == 0.0 ? 0.25 : v;
        if (dt == DUET_DTYPE_F64) {
            memcpy(h + i * es, &x, es);
        } else {
            const float f = (float)x;
            uint32_t u;
            memcpy(&u, &f, 4);
            if (dt == DUET_DTYPE_F32) {
                memcpy(h + i * es, &u, 4);
            } else {
                const uint16_t hi = (uint16_t)(u >> 16); /* bf16: the high half */
                memcpy(h + i * es, &hi, 2);
            }
        }
    }
    for (size_t off = 0; off < elems; off += CHUNK) {
        const size_t n = elems - off < CHUNK ? elems - off : CHUNK;
        CALL(duet_buffer_write(NULL, buf, off * es, h, n * es));
    }
    free(h);
}

int main(int argc, char **argv)
{
    duet_dtype dt = DUET_DTYPE_F64;
    int64_t rows = 32768, cols = 16384, K = 32768;
    int iters = 3;
    int64_t widths[16] = {2048, 4096, 8192, 16384, 32768};
    int nw = 5;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--dtype") && v) {
            dt = !strcmp(v, "f32")    ? DUET_DTYPE_F32
                 : !strcmp(v, "bf16") ? DUET_DTYPE_BF16
                                      : DUET_DTYPE_F64;
        } else if (!strcmp(argv[i], "--rows") && v) {
            rows = atoll(v);
        } else if (!strcmp(argv[i], "--cols") && v) {
            cols = atoll(v);
        } else if (!strcmp(argv[i], "--k") && v) {
            K = atoll(v);
        } else if (!strcmp(argv[i], "--iters") && v) {
            iters = atoi(v);
        } else if (!strcmp(argv[i], "--widths") && v) {
            nw = 0;
            for (const char *p = v; *p && nw < 16; nw++) {
                widths[nw] = atoll(p);
                p = strchr(p, ',');
                if (!p) {
                    nw++;
                    break;
                }
                p++;
            }
        } else {
            fprintf(stderr, "usage: dist_panel_probe [--dtype f64|f32|bf16] [--rows R] "
                            "[--cols C] [--k K] [--widths w1,...] [--iters N]\n");
            return 2;
        }
        i++;
    }
    if (rows < 1 || cols < 1 || K < 1 || iters < 1 || iters > 64) return 2;
    duet_context *ctx = NULL;
    if (duet_context_create(0, &ctx) != DUET_SUCCESS) {
        fprintf(stderr, "dist_panel_probe: no device: %s\n", duet_last_error());
        return 77;
    }
    duet_stream *stream = NULL;
    CALL(duet_stream_create(ctx, &stream));
    const duet_dtype cdt = dt == DUET_DTYPE_BF16 ? DUET_DTYPE_F32 : dt;
    const size_t es = duet_dtype_size(dt), cs = duet_dtype_size(cdt);
    duet_buffer *a = NULL, *b = NULL, *bt = NULL, *c = NULL;
    CALL(duet_buffer_create(ctx, (size_t)(rows * K) * es, &a));
    CALL(duet_buffer_create(ctx, (size_t)(K * cols) * es, &b));
    CALL(duet_buffer_create(ctx, (size_t)(K * cols) * es, &bt));
    CALL(duet_buffer_create(ctx, (size_t)(rows * cols) * cs, &c));
    fill_random(a, dt, (size_t)(rows * K));
    fill_random(b, dt, (size_t)(K * cols));
    fill_random(bt, dt, (size_t)(K * cols));
    fill_random(c, cdt, (size_t)(rows * cols));
    duet_event *e0 = NULL, *e1 = NULL;
    CALL(duet_event_create(ctx, &e0));
    CALL(duet_event_create(ctx, &e1));
    const double flops = 2.0 * (double)rows * (double)cols * (double)K;
    printf("dist_panel_probe: %s, C %lld x %lld (%s), k %lld, median of %d\n", duet_dtype_name(dt),
           (long long)rows, (long long)cols, duet_dtype_name(cdt), (long long)K, iters);
    printf("%-34s %10s %9s %7s  %s\n", "case", "ms", "TFLOP/s", "ratio", "kernel");
    double whole_ms = 0.0;
    /* variant 0: one GEMM of the whole depth; 1: groups, B column-major (k-major) as the caller
     * has it; 2: groups, B row-major (n-major) as SUMMA's panel buffers hold it. */
    for (int wi = -1; wi < nw; wi++) {
        for (int variant = (wi < 0 ? 0 : 1); variant <= (wi < 0 ? 0 : 2); variant++) {
            const int64_t kw = wi < 0 ? K : (widths[wi] < K ? widths[wi] : K);
            if (kw < 1) continue;
            double t[64];
            duet_launch_info info;
            memset(&info, 0, sizeof info);
            for (int it = -1; it < iters; it++) {
                CALL(duet_event_record(e0, stream));
                for (int64_t k0 = 0; k0 < K; k0 += kw) {
                    const int64_t w = K - k0 < kw ? K - k0 : kw;
                    duet_matrix ma = duet_matrix_make(a, dt, DUET_LAYOUT_COL_MAJOR, rows, w);
                    ma.offset = (size_t)(k0 * rows);
                    ma.ld = rows;
                    duet_matrix mb;
                    if (variant == 2) {
                        mb = duet_matrix_make(bt, dt, DUET_LAYOUT_ROW_MAJOR, w, cols);
                        mb.offset = (size_t)(k0 * cols);
                        mb.ld = cols;
                    } else {
                        mb = duet_matrix_make(b, dt, DUET_LAYOUT_COL_MAJOR, w, cols);
                        mb.offset = (size_t)k0;
                        mb.ld = K;
                    }
                    duet_matrix mc = duet_matrix_make(c, cdt, DUET_LAYOUT_COL_MAJOR, rows, cols);
                    duet_op_options o;
                    memset(&o, 0, sizeof o);
                    o.info = &info;
                    CALL(duet_gemm(stream, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, k0 == 0 ? 0.0 : 1.0,
                                   &mc, &o));
                }
                CALL(duet_event_record(e1, stream));
                CALL(duet_event_synchronize(e1));
                float ms = 0.0f;
                CALL(duet_event_elapsed_ms(e0, e1, &ms));
                if (it >= 0) t[it] = ms;
            }
            qsort(t, (size_t)iters, sizeof t[0], cmp_double);
            const double med = t[iters / 2];
            if (variant == 0) whole_ms = med;
            char name[64];
            if (variant == 0)
                snprintf(name, sizeof name, "whole depth, B k-major");
            else
                snprintf(name, sizeof name, "groups of %lld, B %s", (long long)kw,
                         variant == 1 ? "k-major" : "n-major");
            printf("%-34s %10.3f %9.2f %7.3f  %s\n", name, med, flops / (med * 1e9), whole_ms / med,
                   info.kernel);
            fflush(stdout);
        }
    }
    duet_event_destroy(e0);
    duet_event_destroy(e1);
    duet_buffer_destroy(a);
    duet_buffer_destroy(b);
    duet_buffer_destroy(bt);
    duet_buffer_destroy(c);
    duet_stream_destroy(stream);
    duet_context_destroy(ctx);
    return 0;
}
