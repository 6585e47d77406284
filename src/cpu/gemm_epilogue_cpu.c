/* gemm_epilogue_cpu.c - the cpu backend's epilogue pass of duet_gemm_ex: the reference. */
/*
 * The reference the GPU backends are tested against: every step of duet.h's order in the math
 * type, each rounded (C's arithmetic without contraction: the build never asks for FMA), the
 * transcendental functions from the C library (erff, tanhf, expf; erf, tanh, exp for f64).
 */
#include "cpu_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const void *epi_at(const dt_epi_operand *o, int64_t b, int64_t i, int64_t j)
{
    const int64_t idx = b * o->v.bs + i * o->v.rs + j * o->v.cs;
    return (const char *)o->v.base + idx * (int64_t)duet_dtype_size(o->dtype);
}

/* ---- loads and stores in each math type ---- */

static float load_f32(const dt_epi_operand *o, int64_t b, int64_t i, int64_t j)
{
    const void *p = epi_at(o, b, i, j);
    uint16_t h;
    float f;
    switch (o->dtype) {
    case DUET_DTYPE_F16: memcpy(&h, p, 2); return cpu_f16_to_f32(h);
    case DUET_DTYPE_BF16: memcpy(&h, p, 2); return cpu_bf16_to_f32(h);
    default: memcpy(&f, p, 4); return f;
    }
}

static void store_f32(const dt_epi_operand *o, int64_t b, int64_t i, int64_t j, float v)
{
    void *p = (void *)epi_at(o, b, i, j);
    uint16_t h;
    switch (o->dtype) {
    case DUET_DTYPE_F16:
        h = cpu_f32_to_f16(v);
        memcpy(p, &h, 2);
        break;
    case DUET_DTYPE_BF16:
        h = cpu_f32_to_bf16(v);
        memcpy(p, &h, 2);
        break;
    default: memcpy(p, &v, 4); break;
    }
}

static double load_f64(const dt_epi_operand *o, int64_t b, int64_t i, int64_t j)
{
    const void *p = epi_at(o, b, i, j);
    if (o->dtype == DUET_DTYPE_F32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

static void store_f64(const dt_epi_operand *o, int64_t b, int64_t i, int64_t j, double v)
{
    void *p = (void *)epi_at(o, b, i, j);
    if (o->dtype == DUET_DTYPE_F32) {
        const float f = (float)v; /* round to nearest even; overflow to inf */
        memcpy(p, &f, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

/* i32 math wraps modulo 2^32: it runs in uint32_t. */
static uint32_t load_i32(const dt_epi_operand *o, int64_t b, int64_t i, int64_t j)
{
    const void *p = epi_at(o, b, i, j);
    if (o->dtype == DUET_DTYPE_I8) {
        int8_t v;
        memcpy(&v, p, 1);
        return (uint32_t)(int32_t)v;
    }
    uint32_t u;
    memcpy(&u, p, 4);
    return u;
}

static int32_t as_i32(uint32_t u)
{
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) - INT32_MAX - 1;
}

static void store_i32(const dt_epi_operand *o, int64_t b, int64_t i, int64_t j, uint32_t v)
{
    void *p = (void *)epi_at(o, b, i, j);
    if (o->dtype == DUET_DTYPE_I8) {
        const int32_t s = as_i32(v);
        const int8_t q = (int8_t)(s < -128 ? -128 : s > 127 ? 127 : s); /* saturated */
        memcpy(p, &q, 1);
    } else {
        memcpy(p, &v, 4);
    }
}

/* ---- activations (duet.h's formulas) ---- */

static float act_f32(duet_activation act, float x, float lo, float hi)
{
    switch (act) {
    case DUET_ACT_RELU: return x > 0.0f || x != x ? x : 0.0f;
    case DUET_ACT_GELU_TANH:
        return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case DUET_ACT_GELU_ERF: return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
    case DUET_ACT_SILU: return x / (1.0f + expf(-x));
    case DUET_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case DUET_ACT_CLAMP: return x != x ? x : x < lo ? lo : x > hi ? hi : x;
    default: return x;
    }
}

static double act_f64(duet_activation act, double x, double lo, double hi)
{
    switch (act) {
    case DUET_ACT_RELU: return x > 0.0 || x != x ? x : 0.0;
    case DUET_ACT_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case DUET_ACT_GELU_ERF: return 0.5 * x * (1.0 + erf(x * 0.7071067811865476));
    case DUET_ACT_SILU: return x / (1.0 + exp(-x));
    case DUET_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case DUET_ACT_CLAMP: return x != x ? x : x < lo ? lo : x > hi ? hi : x;
    default: return x;
    }
}

static uint32_t act_i32(duet_activation act, uint32_t x, int32_t lo, int32_t hi)
{
    const int32_t s = as_i32(x);
    switch (act) {
    case DUET_ACT_RELU: return s > 0 ? x : 0u;
    case DUET_ACT_CLAMP: return (uint32_t)(s < lo ? lo : s > hi ? hi : s);
    default: return x;
    }
}

/* ---- the rows ---- */

static void epi_row_f32(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)
{
    const dt_epilogue *e = (const dt_epilogue *)arg;
    const float beta = (float)e->beta, lo = (float)e->lo, hi = (float)e->hi;
    for (int64_t j = j0; j < j1; j++) {
        float x = 0.0f;
        if (e->t.on) {
            x = load_f32(&e->t, b, i, j);
            if (e->row_scale.on) x = x * load_f32(&e->row_scale, b, i, j);
            if (e->col_scale.on) x = x * load_f32(&e->col_scale, b, i, j);
        }
        if (e->c.on) x = x + beta * load_f32(&e->c, b, i, j);
        if (e->bias.on) x = x + load_f32(&e->bias, b, i, j);
        if (e->aux.on) store_f32(&e->aux, b, i, j, x);
        x = act_f32(e->act, x, lo, hi);
        if (e->residual.on) x = x + load_f32(&e->residual, b, i, j);
        store_f32(&e->d, b, i, j, x);
    }
}

static void epi_row_f64(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)
{
    const dt_epilogue *e = (const dt_epilogue *)arg;
    for (int64_t j = j0; j < j1; j++) {
        double x = 0.0;
        if (e->t.on) {
            x = load_f64(&e->t, b, i, j);
            if (e->row_scale.on) x = x * load_f64(&e->row_scale, b, i, j);
            if (e->col_scale.on) x = x * load_f64(&e->col_scale, b, i, j);
        }
        if (e->c.on) x = x + e->beta * load_f64(&e->c, b, i, j);
        if (e->bias.on) x = x + load_f64(&e->bias, b, i, j);
        if (e->aux.on) store_f64(&e->aux, b, i, j, x);
        x = act_f64(e->act, x, e->lo, e->hi);
        if (e->residual.on) x = x + load_f64(&e->residual, b, i, j);
        store_f64(&e->d, b, i, j, x);
    }
}

static void epi_row_i32(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)
{
    const dt_epilogue *e = (const dt_epilogue *)arg;
    /* beta, lo and hi are integers in the i32 range (checked by the common layer). */
    const uint32_t beta = (uint32_t)(int32_t)e->beta;
    const int32_t lo = (int32_t)e->lo, hi = (int32_t)e->hi;
    for (int64_t j = j0; j < j1; j++) {
        uint32_t x = 0u;
        if (e->t.on) {
            x = load_i32(&e->t, b, i, j);
            if (e->row_scale.on) x = x * load_i32(&e->row_scale, b, i, j);
            if (e->col_scale.on) x = x * load_i32(&e->col_scale, b, i, j);
        }
        if (e->c.on) x = x + beta * load_i32(&e->c, b, i, j);
        if (e->bias.on) x = x + load_i32(&e->bias, b, i, j);
        if (e->aux.on) store_i32(&e->aux, b, i, j, x);
        x = act_i32(e->act, x, lo, hi);
        if (e->residual.on) x = x + load_i32(&e->residual, b, i, j);
        store_i32(&e->d, b, i, j, x);
    }
}

/* The cpu GEMMs have no fused epilogue: duet_gemm_ex always runs the pass below. */
int be_gemm_fuses_epilogue(dt_context *ctx, void *stream, const dt_gemm *g)
{
    (void)ctx, (void)stream, (void)g;
    return 0;
}

/* The cpu backend multiplies the 16-bit decodes of 8-bit floats (exact: every 8-bit float is
 * an f16 or bf16). */
int be_gemm_takes_f8(dt_context *ctx, void *stream, const dt_gemm *g)
{
    (void)ctx, (void)stream, (void)g;
    return 0;
}

duet_status be_gemm_epilogue(dt_context *ctx, void *stream, const dt_epilogue *e,
                             duet_launch_info *info)
{
    (void)ctx, (void)stream;
    cpu_row_fn fn = e->math == DUET_DTYPE_F64   ? epi_row_f64
                    : e->math == DUET_DTYPE_I32 ? epi_row_i32
                                                : epi_row_f32;
    /* About a GEMM's finishing work per element, more with a transcendental activation. */
    const int64_t work =
        e->act == DUET_ACT_NONE || e->act == DUET_ACT_RELU || e->act == DUET_ACT_CLAMP ? 8 : 32;
    if (e->m > 0 && e->n > 0 && e->batch > 0)
        cpu_walk(e->batch, e->m, e->n, e->batch, e->m, e->n, work, fn, (void *)e);
    if (info) {
        snprintf(info->epilogue, sizeof info->epilogue, "cpu_gemm_epilogue_%s_%s",
                 duet_dtype_name(e->math), duet_dtype_name(e->d.dtype));
        info->launches += 1;
    }
    return DUET_SUCCESS;
}
