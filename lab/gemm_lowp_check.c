/* gemm_lowp_check.c - a quick sweep of duet's f16/bf16/i8/TF32 GEMM paths against a host reference.
 */
/*
 * Built by lab/CMakeLists.txt (-DDUET_BUILD_LAB=ON, any backend), or by hand:
 *   cc -O2 -std=c11 -Iinclude lab/gemm_lowp_check.c -Lbuild -lduet -lm
 * Every dtype combination x op(A), op(B) x layouts of A, B, C x odd shapes around the GPU tile
 * edges, with beta 0 (C poisoned with NaN) and beta != 0, batches, padded leading dimensions;
 * checked element by element against a double (or int64) reference with a gauge bound. Exits 1
 * on the first failure with the case, 0 when all pass. The conformance suite is the full test;
 * this is the quick probe for kernel work.
 */
#include <duet/duet.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static double from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static double from_f16(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0    ? ldexp(m, -24)
                     : e == 31 ? (m ? NAN : INFINITY)
                               : ldexp(1024 + m, e - 25);
    return (h & 0x8000u) ? -v : v;
}
/* Small integers / 8 are exact in f16 and bf16. */
static uint16_t to_f16_exact(int q8)
{
    if (q8 == 0) return 0;
    double v = fabs(q8 / 8.0);
    int e;
    double m = frexp(v, &e);
    uint16_t mant = (uint16_t)(m * 2048.0) - 1024;
    return (uint16_t)((q8 < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) | mant);
}

static double get(const void *p, duet_dtype t, size_t i)
{
    switch (t) {
    case DUET_DTYPE_F16: return from_f16(((const uint16_t *)p)[i]);
    case DUET_DTYPE_BF16: return from_bf16(((const uint16_t *)p)[i]);
    case DUET_DTYPE_I8: return ((const int8_t *)p)[i];
    case DUET_DTYPE_I32: return ((const int32_t *)p)[i];
    default: return ((const float *)p)[i];
    }
}

static int failures = 0, cases = 0;

static void check(duet_context *ctx, duet_dtype ta, duet_dtype tc, duet_math_mode math, duet_op oa,
                  duet_op ob, duet_layout la, duet_layout lb, duet_layout lc, int64_t m, int64_t n,
                  int64_t k, int batch, double beta, int pad)
{
    const size_t ea = duet_dtype_size(ta), ec = duet_dtype_size(tc);
    const int64_t ar = oa == DUET_OP_N ? m : k, acl = oa == DUET_OP_N ? k : m;
    const int64_t br = ob == DUET_OP_N ? k : n, bcl = ob == DUET_OP_N ? n : k;
    const int64_t lda = (la == DUET_LAYOUT_ROW_MAJOR ? acl : ar) + pad;
    const int64_t ldb = (lb == DUET_LAYOUT_ROW_MAJOR ? bcl : br) + pad;
    const int64_t ldc = (lc == DUET_LAYOUT_ROW_MAJOR ? n : m) + pad;
    const int64_t sa = lda * (la == DUET_LAYOUT_ROW_MAJOR ? ar : acl) + 3;
    const int64_t sb = ldb * (lb == DUET_LAYOUT_ROW_MAJOR ? br : bcl) + 5;
    const int64_t sc = ldc * (lc == DUET_LAYOUT_ROW_MAJOR ? m : n) + 7;
    const size_t na = (size_t)(sa * batch), nb = (size_t)(sb * batch), nc = (size_t)(sc * batch);
    unsigned char *ha = malloc(na * ea + 1), *hb = malloc(nb * ea + 1);
    unsigned char *hc = malloc(nc * ec + 1), *hr = malloc(nc * ec + 1);
    for (int w = 0; w < 2; w++) {
        unsigned char *h = w ? hb : ha;
        const size_t cnt = w ? nb : na;
        for (size_t i = 0; i < cnt; i++) {
            const int q = (int)(next() % 33) - 16;
            switch (ta) {
            case DUET_DTYPE_F16: ((uint16_t *)h)[i] = to_f16_exact(q); break;
            case DUET_DTYPE_BF16: ((uint16_t *)h)[i] = to_bf16((float)q / 8.0f); break;
            case DUET_DTYPE_I8: ((int8_t *)h)[i] = (int8_t)(int)(next() % 256 - 128); break;
            default: ((float *)h)[i] = (float)((double)(next() >> 11) * 0x1p-53 * 2 - 1); break;
            }
        }
    }
    for (size_t i = 0; i < nc; i++) {
        const int q = (int)(next() % 17) - 8;
        if (tc == DUET_DTYPE_F16)
            ((uint16_t *)hc)[i] = beta == 0 ? 0x7e00 : to_f16_exact(q);
        else if (tc == DUET_DTYPE_BF16)
            ((uint16_t *)hc)[i] = beta == 0 ? 0x7fc0 : to_bf16((float)q / 8.0f);
        else if (tc == DUET_DTYPE_I32)
            ((int32_t *)hc)[i] = (int32_t)next();
        else
            ((float *)hc)[i] = beta == 0 ? NAN : (float)q / 8.0f;
    }
    duet_buffer *ba, *bb, *bc;
    duet_buffer_create(ctx, na * ea + 1, &ba);
    duet_buffer_create(ctx, nb * ea + 1, &bb);
    duet_buffer_create(ctx, nc * ec + 1, &bc);
    duet_buffer_write(NULL, ba, 0, ha, na * ea);
    duet_buffer_write(NULL, bb, 0, hb, nb * ea);
    duet_buffer_write(NULL, bc, 0, hc, nc * ec);
    duet_matrix A = duet_matrix_make(ba, ta, la, ar, acl),
                B = duet_matrix_make(bb, ta, lb, br, bcl);
    duet_matrix C = duet_matrix_make(bc, tc, lc, m, n);
    A.ld = lda, B.ld = ldb, C.ld = ldc;
    A.batch_count = B.batch_count = C.batch_count = batch;
    A.batch_stride = sa, B.batch_stride = sb, C.batch_stride = sc;
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    duet_launch_info info;
    opt.info = &info;
    opt.math = math;
    const double alpha = ta == DUET_DTYPE_I8 ? 3 : 1.5;
    const double bt = ta == DUET_DTYPE_I8 ? (beta == 0 ? 0 : -2) : beta;
    duet_status st = duet_gemm(NULL, oa, ob, alpha, &A, &B, bt, &C, &opt);
    cases++;
    if (st == DUET_SUCCESS) st = duet_buffer_read(NULL, bc, 0, hr, nc * ec);
    if (st != DUET_SUCCESS) {
        printf("FAIL %s>%s: %s (%s)\n", duet_dtype_name(ta), duet_dtype_name(tc),
               duet_status_string(st), duet_last_error());
        failures++;
        goto out;
    }
    const double eps_out = tc == DUET_DTYPE_BF16  ? 0x1p-8
                           : tc == DUET_DTYPE_F16 ? 0x1p-11
                                                  : 0x1p-24;
    const double eps_in = math == DUET_MATH_TF32 && info.math == DUET_MATH_TF32 ? 0x1p-10 : 0x1p-23;
    for (int b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double ref = 0, gauge = 0;
                int64_t iref = 0;
                for (int64_t p = 0; p < k; p++) {
                    const int64_t ai = oa == DUET_OP_N ? i : p, aj = oa == DUET_OP_N ? p : i;
                    const int64_t bi = ob == DUET_OP_N ? p : j, bj = ob == DUET_OP_N ? j : p;
                    const size_t ia =
                        (size_t)(b * sa +
                                 (la == DUET_LAYOUT_ROW_MAJOR ? ai * lda + aj : aj * lda + ai));
                    const size_t ib =
                        (size_t)(b * sb +
                                 (lb == DUET_LAYOUT_ROW_MAJOR ? bi * ldb + bj : bj * ldb + bi));
                    const double x = get(ha, ta, ia), y = get(hb, ta, ib);
                    ref += x * y;
                    gauge += fabs(x * y);
                    iref += (int64_t)x * (int64_t)y;
                }
                const size_t ic =
                    (size_t)(b * sc + (lc == DUET_LAYOUT_ROW_MAJOR ? i * ldc + j : j * ldc + i));
                const double got = get(hr, tc, ic), old = get(hc, tc, ic);
                int bad;
                if (tc == DUET_DTYPE_I32) {
                    const uint32_t want =
                        (uint32_t)(int64_t)alpha * (uint32_t)iref +
                        (bt == 0 ? 0u : (uint32_t)(int64_t)bt * (uint32_t)(int32_t)old);
                    bad = (uint32_t)(int32_t)got != want;
                    ref = (int32_t)want;
                } else {
                    ref = alpha * ref + (beta == 0 ? 0 : beta * old);
                    const double g = fabs(alpha) * gauge + (beta == 0 ? 0 : fabs(beta * old));
                    const double tol = (2.0 * k + 4) * eps_in * g + eps_out * fabs(ref) + 1e-30;
                    bad = !(fabs(got - ref) <= tol);
                }
                if (bad) {
                    printf("FAIL %s>%s%s op %d%d lay %d%d%d %ldx%ldx%ld batch %d beta %g pad %d "
                           "[%d,%ld,%ld] got %.9g want %.9g (%s)\n",
                           duet_dtype_name(ta), duet_dtype_name(tc),
                           math ? duet_math_mode_name(math) : "", oa, ob, la, lb, lc, (long)m,
                           (long)n, (long)k, batch, beta, pad, b, (long)i, (long)j, got, ref,
                           info.kernel);
                    failures++;
                    goto out;
                }
            }
    /* Guard: bytes outside C's elements are unchanged. */
    for (int b = 0; b < batch; b++)
        for (int64_t x = 0; x < sc; x++) {
            const int64_t r = lc == DUET_LAYOUT_ROW_MAJOR ? x / ldc : x % ldc;
            const int64_t cc = lc == DUET_LAYOUT_ROW_MAJOR ? x % ldc : x / ldc;
            const int inside = lc == DUET_LAYOUT_ROW_MAJOR ? (r < m && cc < n) : (cc < n && r < m);
            const size_t at = (size_t)(b * sc + x);
            if (!inside && memcmp(hr + at * ec, hc + at * ec, ec)) {
                printf("FAIL guard %s>%s %ldx%ldx%ld at %zu (%s)\n", duet_dtype_name(ta),
                       duet_dtype_name(tc), (long)m, (long)n, (long)k, at, info.kernel);
                failures++;
                goto out;
            }
        }
out:
    duet_buffer_destroy(ba);
    duet_buffer_destroy(bb);
    duet_buffer_destroy(bc);
    free(ha);
    free(hb);
    free(hc);
    free(hr);
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    duet_context *ctx;
    if (duet_context_create(0, &ctx) != DUET_SUCCESS) {
        printf("no device: %s\n", duet_last_error());
        return 77;
    }
    const struct {
        duet_dtype ta, tc;
        duet_math_mode math;
    } combos[] = {{DUET_DTYPE_F16, DUET_DTYPE_F32, 0},
                  {DUET_DTYPE_F16, DUET_DTYPE_F16, 0},
                  {DUET_DTYPE_BF16, DUET_DTYPE_F32, 0},
                  {DUET_DTYPE_BF16, DUET_DTYPE_BF16, 0},
                  {DUET_DTYPE_I8, DUET_DTYPE_I32, 0},
                  {DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_TF32},
                  {DUET_DTYPE_F32, DUET_DTYPE_F32, DUET_MATH_3XTF32}};
    const int64_t shapes[][3] = {{1, 1, 1},      {7, 5, 3},      {17, 33, 65},
                                 {128, 128, 64}, {129, 127, 67}, {200, 150, 257},
                                 {64, 300, 1},   {33, 1, 130},   {256, 256, 0}};
    const int ns = quick ? 6 : (int)(sizeof shapes / sizeof shapes[0]);
    /* A second argument "3xtf32" or "tf32" keeps only that math mode (sanitizer runs). */
    const int only = argc > 2 ? (!strcmp(argv[2], "3xtf32") ? DUET_MATH_3XTF32
                                 : !strcmp(argv[2], "tf32") ? DUET_MATH_TF32
                                                            : -1)
                              : -1;
    for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++)
        if (only < 0 || (int)combos[c].math == only)
            for (int s = 0; s < ns; s++)
                for (int lay = 0; lay < 8; lay++)
                    for (int op = 0; op < 4; op++) {
                        if (quick && (lay + op) % 3) continue;
                        check(ctx, combos[c].ta, combos[c].tc, combos[c].math, (duet_op)(op & 1),
                              (duet_op)(op >> 1), (duet_layout)(lay & 1),
                              (duet_layout)((lay >> 1) & 1), (duet_layout)(lay >> 2), shapes[s][0],
                              shapes[s][1], shapes[s][2], (s % 3 == 1) ? 3 : 1,
                              (s + lay) % 2 ? 0.0 : -0.5, (s + op) % 2 ? 8 : 0);
                        if (failures > 20) goto done;
                    }
done:
    duet_context_destroy(ctx);
    printf("gemm_lowp_check: %d cases, %d failed\n", cases, failures);
    return failures ? 1 : 0;
}
