/* gemm_lowp_cpu.c - f16, bf16 and i8 gemm operands on the host: widening packs, rounding C once. */
#include "cpu_internal.h"

#include <string.h>

/* The packed gemm driver (gemm_cpu.c) runs these dtypes on its f32 and i32 micro-kernels: the
 * packs below widen A and B while they copy them into panels (f16 and bf16 products are exact
 * in f32, i8 products in i32), and the f16/bf16 driver keeps an f32 accumulator per output
 * until the last block of k, so that C = alpha * acc + beta * C is rounded once. */

#if !defined(DUET_CPU_PORTABLE) && defined(__GNUC__) && defined(__x86_64__)
#define CPU_LOWP_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- scalar conversions -------------------------------------------------------------------- */

static float f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = h >> 10 & 0x1Fu, m = h & 0x3FFu;
    if (e == 0) {
        /* Zero or subnormal: m * 2^-24 is exact in f32. */
        const float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    if (e == 31) return bits_f32(sign | 0x7F800000u | m << 13); /* inf, NaN (payload kept) */
    return bits_f32(sign | (e + 112u) << 23 | m << 13);
}

/* Round to nearest, ties to even; at or past 65520 the result is inf; NaN stays NaN (quiet). */
static uint16_t f32_to_f16(float f)
{
    const uint32_t u = f32_bits(f);
    const uint16_t sign = (uint16_t)(u >> 16 & 0x8000u);
    const uint32_t x = u & 0x7FFFFFFFu;
    if (x > 0x7F800000u) return (uint16_t)(sign | 0x7E00u | (x >> 13 & 0x3FFu));
    if (x >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* 65520 and up, inf */
    if (x >= 0x38800000u) {
        /* A normal f16: rebias the exponent (127 - 15) and drop 13 fraction bits. */
        const uint32_t r = x - 0x38000000u;
        return (uint16_t)(sign | (r + 0xFFFu + (r >> 13 & 1u)) >> 13);
    }
    /* A subnormal f16 (or zero): the significand in units of 2^-24. A carry out of the
     * subnormal range lands exactly on the smallest normal's bits. */
    const uint32_t e = x >> 23;
    if (e < 102) return sign; /* below 2^-25: rounds to zero */
    const uint32_t m = (x & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return (uint16_t)(sign | q);
}

static float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

static uint16_t f32_to_bf16(float f)
{
    const uint32_t u = f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)(u >> 16 | 0x40u); /* quiet NaN */
    return (uint16_t)((u + 0x7FFFu + (u >> 16 & 1u)) >> 16); /* overflow carries into inf */
}

/* ---- widening n contiguous elements -------------------------------------------------------- */

#ifdef CPU_LOWP_X86
__attribute__((target("avx,f16c"))) static void widen_f16_f16c(const uint16_t *s, int64_t n,
                                                               float *d)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
    for (; i < n; ++i) d[i] = f16_to_f32(s[i]);
}

__attribute__((target("avx2"))) static void widen_bf16_avx2(const uint16_t *s, int64_t n, float *d)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
        _mm256_storeu_si256((__m256i *)(d + i), _mm256_slli_epi32(w, 16));
    }
    for (; i < n; ++i) d[i] = bf16_to_f32(s[i]);
}

__attribute__((target("avx2"))) static void widen_i8_avx2(const int8_t *s, int64_t n, uint32_t *d)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i b = _mm_loadl_epi64((const __m128i *)(s + i));
        _mm256_storeu_si256((__m256i *)(d + i), _mm256_cvtepi8_epi32(b));
    }
    for (; i < n; ++i) d[i] = (uint32_t)(int32_t)s[i];
}

/* CPUID leaf 1, ECX bit 29 (F16C): clang 14's __builtin_cpu_supports knows no "f16c". */
static int has_f16c(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return __builtin_cpu_supports("avx") && (c & (1u << 29)) != 0;
}
static int has_avx2(void) { return __builtin_cpu_supports("avx2") != 0; }
#endif /* CPU_LOWP_X86 */

static void widen_f16(const void *src, int64_t n, void *dst)
{
#ifdef CPU_LOWP_X86
    if (has_f16c()) {
        widen_f16_f16c(src, n, dst);
        return;
    }
#endif /* CPU_LOWP_X86 */
    const uint16_t *s = src;
    float *d = dst;
    for (int64_t i = 0; i < n; ++i) d[i] = f16_to_f32(s[i]);
}

static void widen_bf16(const void *src, int64_t n, void *dst)
{
#ifdef CPU_LOWP_X86
    if (has_avx2()) {
        widen_bf16_avx2(src, n, dst);
        return;
    }
#endif /* CPU_LOWP_X86 */
    const uint16_t *s = src;
    float *d = dst;
    for (int64_t i = 0; i < n; ++i) d[i] = bf16_to_f32(s[i]);
}

static void widen_i8(const void *src, int64_t n, void *dst)
{
#ifdef CPU_LOWP_X86
    if (has_avx2()) {
        widen_i8_avx2(src, n, dst);
        return;
    }
#endif /* CPU_LOWP_X86 */
    const int8_t *s = src;
    uint32_t *d = dst;
    for (int64_t i = 0; i < n; ++i) d[i] = (uint32_t)(int32_t)s[i];
}

typedef void (*widen_fn)(const void *src, int64_t n, void *dst);

/* ---- widening packs ------------------------------------------------------------------------ */

/* The layout of gemm_cpu.c's packs (panel q holds lane q * width + w, element p, at
 * q * width * kc + p * width + w; lanes past count are zero), into 4-byte elements. Whichever
 * axis of the source is contiguous is widened in vector runs: along the lanes straight into
 * the panel, along k through a small buffer that is then spread over the panel's column. */
#define LOWP_RUN 256

static void pack_widen(const unsigned char *src, size_t in_elem, int64_t s_lane, int64_t s_k,
                       int64_t count, int64_t kc, int width, uint32_t *dst, widen_fn widen)
{
    uint32_t run[LOWP_RUN];
    for (int64_t q = 0; q < count; q += width, dst += (size_t)width * (size_t)kc) {
        const int64_t live = min64(width, count - q);
        const unsigned char *lane0 = src + (size_t)(q * s_lane) * in_elem;
        if (s_lane == 1) {
            uint32_t *d = dst;
            for (int64_t p = 0; p < kc; ++p, d += width) {
                widen(lane0 + (size_t)(p * s_k) * in_elem, live, d);
                for (int64_t w = live; w < width; ++w) d[w] = 0;
            }
        } else if (s_k == 1) {
            for (int64_t w = 0; w < live; ++w)
                for (int64_t p0 = 0; p0 < kc; p0 += LOWP_RUN) {
                    const int64_t len = min64(LOWP_RUN, kc - p0);
                    widen(lane0 + (size_t)(w * s_lane + p0) * in_elem, len, run);
                    for (int64_t p = 0; p < len; ++p) dst[(p0 + p) * width + w] = run[p];
                }
            for (int64_t p = 0; p < kc; ++p)
                for (int64_t w = live; w < width; ++w) dst[p * width + w] = 0;
        } else {
            for (int64_t p = 0; p < kc; ++p)
                for (int64_t w = 0; w < width; ++w)
                    if (w < live)
                        widen(lane0 + (size_t)(w * s_lane + p * s_k) * in_elem, 1,
                              dst + p * width + w);
                    else
                        dst[p * width + w] = 0;
        }
    }
}

void cpu_gemm_pack_f16(const void *src, int64_t s_lane, int64_t s_k, int64_t count, int64_t kc,
                       int width, void *dst)
{
    pack_widen(src, 2, s_lane, s_k, count, kc, width, dst, widen_f16);
}

void cpu_gemm_pack_bf16(const void *src, int64_t s_lane, int64_t s_k, int64_t count, int64_t kc,
                        int width, void *dst)
{
    pack_widen(src, 2, s_lane, s_k, count, kc, width, dst, widen_bf16);
}

void cpu_gemm_pack_i8(const void *src, int64_t s_lane, int64_t s_k, int64_t count, int64_t kc,
                      int width, void *dst)
{
    pack_widen(src, 1, s_lane, s_k, count, kc, width, dst, widen_i8);
}

/* ---- C = alpha * acc + beta * C, once --------------------------------------------------- */

/* Evaluated in f32 like the GPU kernels' epilogue; beta == 0 never reads C. The expression is
 * written as two roundings (no contraction into an FMA) so that every build agrees. */
static float epilogue(float alpha, float acc, float beta, float old)
{
    const float ax = alpha * acc;
    if (beta == 0.0f) return ax;
    const float bc = beta * old;
    return ax + bc;
}

#define LOWP_FINISH(SFX, T, LOAD, STORE)                                                           \
    void cpu_gemm_finish_##SFX(const float *acc, int64_t acc_ld, void *cp, int64_t rs, int64_t cs, \
                               int64_t mv, int64_t nv, float alpha, float beta)                    \
    {                                                                                              \
        T *c = cp;                                                                                 \
        for (int64_t r = 0; r < mv; ++r) {                                                         \
            const float *x = acc + r * acc_ld;                                                     \
            T *y = c + r * rs;                                                                     \
            for (int64_t q = 0; q < nv; ++q) {                                                     \
                T *yq = y + q * cs;                                                                \
                const float old = beta == 0.0f ? 0.0f : LOAD(*yq);                                 \
                *yq = STORE(epilogue(alpha, x[q], beta, old));                                     \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* C = beta * C for a product with nothing to add (k == 0 or alpha == 0); beta == 0 writes     \
     * zeros without reading C. */                                                                 \
    void cpu_gemm_scale_row_##SFX(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)         \
    {                                                                                              \
        const cpu_gemm_scale *s = arg;                                                             \
        T *c = (T *)s->c->base + b * s->c->bs + i * s->c->rs;                                      \
        for (int64_t j = j0; j < j1; ++j) {                                                        \
            T *cj = c + j * s->c->cs;                                                              \
            *cj = STORE(s->beta == 0.0f ? 0.0f : s->beta * LOAD(*cj));                             \
        }                                                                                          \
    }

#define LOAD_F32(v)  (v)
#define STORE_F32(v) (v)

LOWP_FINISH(f32, float, LOAD_F32, STORE_F32)
LOWP_FINISH(f16, uint16_t, f16_to_f32, f32_to_f16)
LOWP_FINISH(bf16, uint16_t, bf16_to_f32, f32_to_bf16)

/* ---- the conversions for other files of the backend (cpu_internal.h) ------------------------ */

float cpu_f16_to_f32(uint16_t h) { return f16_to_f32(h); }
uint16_t cpu_f32_to_f16(float f) { return f32_to_f16(f); }
float cpu_bf16_to_f32(uint16_t h) { return bf16_to_f32(h); }
uint16_t cpu_f32_to_bf16(float f) { return f32_to_bf16(f); }
