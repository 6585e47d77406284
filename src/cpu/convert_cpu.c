/* convert_cpu.c - be_convert of the cpu backend: f32/f16/bf16/f8e4m3/f8e5m2 conversions. */
#include "cpu_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* 2^k for -126 <= k <= 127, exactly. */
static float pow2f(int k) { return f32_of((uint32_t)(k + 127) << 23); }

/* An IEEE-style format of ebits exponent and mbits mantissa bits; fn: the "finite" variant
 * (e4m3fn) whose all-ones exponent still holds numbers and whose only NaN is all ones. */
typedef struct small_fmt {
    int ebits, mbits, fn;
} small_fmt;

static const small_fmt FMT_E4M3 = {4, 3, 1};
static const small_fmt FMT_E5M2 = {5, 2, 0};
static const small_fmt FMT_F16 = {5, 10, 0};

static uint32_t fmt_maxcode(small_fmt f)
{
    return f.fn ? (1u << (f.ebits + f.mbits)) - 2u
                : (((1u << f.ebits) - 2u) << f.mbits) | ((1u << f.mbits) - 1u);
}

static uint32_t fmt_infcode(small_fmt f) { return ((1u << f.ebits) - 1u) << f.mbits; }

static uint32_t fmt_nancode(small_fmt f)
{
    return f.fn ? (1u << (f.ebits + f.mbits)) - 1u : fmt_infcode(f) | (1u << (f.mbits - 1));
}

/* x rounded to nearest even in f. Beyond the largest finite value (or +-inf): +-max when
 * saturate, else +-inf, or NaN for a format without infinities. The quantum of x's binade is a
 * power of two, so x / quantum is exact and one rintf (nearest even) does the rounding; a
 * carry out of the mantissa moves into the exponent field by the addition itself. */
static uint32_t encode_small(float x, small_fmt f, int saturate)
{
    const int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias;
    const uint32_t maxcode = fmt_maxcode(f);
    const uint32_t u = f32_bits(x);
    const uint32_t sign = (u >> 31) << (f.ebits + f.mbits);
    const uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return sign | fmt_nancode(f);
    const uint32_t ovf = sign | (saturate ? maxcode : f.fn ? fmt_nancode(f) : fmt_infcode(f));
    const int e = (int)(a >> 23) - 127; /* f32 subnormals read as -127: below every emin here */
    if (a == 0x7F800000u || e > (int)(maxcode >> f.mbits) - bias) return ovf;
    const float ax = f32_of(a);
    uint32_t code;
    if (e < emin)
        code = (uint32_t)rintf(ax * pow2f(f.mbits - emin)); /* 2^mbits lands on the min normal */
    else
        code = ((uint32_t)(e + bias - 1) << f.mbits) + (uint32_t)rintf(ax * pow2f(f.mbits - e));
    return code > maxcode ? ovf : sign | code;
}

static float decode_small(uint32_t c, small_fmt f)
{
    const int bias = (1 << (f.ebits - 1)) - 1;
    const uint32_t emask = (1u << f.ebits) - 1u, mmask = (1u << f.mbits) - 1u;
    const uint32_t sign = (c >> (f.ebits + f.mbits) & 1u) << 31;
    const uint32_t e = c >> f.mbits & emask, m = c & mmask;
    if (f.fn ? (e == emask && m == mmask) : (e == emask && m != 0)) return f32_of(sign | 0x7FC00000u);
    if (!f.fn && e == emask) return f32_of(sign | 0x7F800000u);
    if (e == 0) return f32_of(sign | f32_bits((float)m * pow2f(1 - bias - f.mbits)));
    return f32_of(sign | (e - (uint32_t)bias + 127u) << 23 | m << (23 - f.mbits));
}

static float load(const unsigned char *p, duet_dtype dt)
{
    uint16_t h;
    float f;
    switch (dt) {
    case DUET_DTYPE_F16: memcpy(&h, p, 2); return decode_small(h, FMT_F16);
    case DUET_DTYPE_BF16: memcpy(&h, p, 2); return f32_of((uint32_t)h << 16);
    case DUET_DTYPE_F8E4M3: return decode_small(*p, FMT_E4M3);
    case DUET_DTYPE_F8E5M2: return decode_small(*p, FMT_E5M2);
    default: memcpy(&f, p, 4); return f;
    }
}

static void store(unsigned char *p, duet_dtype dt, float x, int saturate)
{
    uint16_t h;
    uint32_t u;
    switch (dt) {
    case DUET_DTYPE_F16:
        h = (uint16_t)encode_small(x, FMT_F16, 0);
        memcpy(p, &h, 2);
        return;
    case DUET_DTYPE_BF16:
        u = f32_bits(x);
        /* Round to nearest even on the bit pattern (a carry into the exponent is right, and
         * overflow lands on inf); NaN keeps its sign and becomes the quiet NaN. */
        h = (u & 0x7FFFFFFFu) > 0x7F800000u ? (uint16_t)((u >> 16 & 0x8000u) | 0x7FC0u)
                                              : (uint16_t)((u + 0x7FFFu + (u >> 16 & 1u)) >> 16);
        memcpy(p, &h, 2);
        return;
    case DUET_DTYPE_F8E4M3: *p = (unsigned char)encode_small(x, FMT_E4M3, saturate); return;
    case DUET_DTYPE_F8E5M2: *p = (unsigned char)encode_small(x, FMT_E5M2, saturate); return;
    default:
        /* An f32 NaN in gives the canonical quiet NaN with its sign, as every other dst. */
        u = f32_bits(x);
        if ((u & 0x7FFFFFFFu) > 0x7F800000u) u = (u & 0x80000000u) | 0x7FC00000u;
        memcpy(p, &u, 4);
        return;
    }
}

duet_status be_convert(dt_context *ctx, void *stream, const dt_convert *c,
                       duet_launch_info *info)
{
    (void)ctx, (void)stream;
    const size_t es = duet_dtype_size(c->src_dtype), ed = duet_dtype_size(c->dst_dtype);
    float scale = 1.0f;
    if (c->scale) memcpy(&scale, c->scale, sizeof scale);
    /* max |x| as the bit patterns of non-negative floats, which order as their values; NaN
     * becomes the one quiet NaN, above inf, so that the result does not depend on payloads. */
    uint32_t amax = 0;
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t i = 0; i < c->rows; i++) {
            const unsigned char *s = (const unsigned char *)c->src.base +
                                     (size_t)(b * c->src.bs + i * c->src.rs) * es;
            unsigned char *d =
                (unsigned char *)c->dst.base + (size_t)(b * c->dst.bs + i * c->dst.rs) * ed;
            for (int64_t j = 0; j < c->cols; j++) {
                const float x = load(s + (size_t)(j * c->src.cs) * es, c->src_dtype);
                uint32_t ax = f32_bits(x) & 0x7FFFFFFFu;
                if (ax > 0x7F800000u) ax = 0x7FC00000u;
                if (ax > amax) amax = ax;
                const dt_scale_grid *g = &c->bscale;
                const float y =
                    g->p ? x * g->p[b * g->bs + (i >> g->rshift) * g->rs + (j >> g->cshift) * g->cs]
                    : c->scale ? x * scale
                               : x;
                store(d + (size_t)(j * c->dst.cs) * ed, c->dst_dtype, y, c->saturate);
            }
        }
    if (c->amax) memcpy(c->amax, &amax, sizeof amax);
    if (info) {
        snprintf(info->kernel, sizeof info->kernel, "cpu_convert_%s_%s",
                 duet_dtype_name(c->src_dtype), duet_dtype_name(c->dst_dtype));
        info->launches = 1;
    }
    return DUET_SUCCESS;
}
