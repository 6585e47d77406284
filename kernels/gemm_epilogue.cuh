/* gemm_epilogue.cuh - duet_gemm_ex's epilogue pass: scales, C, bias, act, residual, aux, D. */
#ifndef DUET_KERNELS_GEMM_EPILOGUE_CUH
#define DUET_KERNELS_GEMM_EPILOGUE_CUH

#include "duet/duet.h"

#include "compat.h"
#include "lowp_convert.cuh"

#include <stdint.h>

/*
 * One thread per output element (grid-stride in all three dimensions), duet.h's steps in its
 * order in the math type M (float, double, or uint32_t for i32 math, which wraps modulo 2^32):
 *   x = t * row_scale * col_scale + beta * c + bias; aux = x; d = act(x) + residual.
 * Every operand is an m x n x batch view whose strides may be 0 (a vector, one batch for all),
 * of a dtype read at run time: the switch is uniform across the block, and the pass is bound
 * by memory, not by it. x runs along D's unit stride (threadIdx.x), so the accesses to D, t
 * and a C laid out like D coalesce. Each element is read and written by one thread once: no
 * atomics, the same bits on every run.
 */

#define GE_THREADS 256

struct ge_operand {
    unsigned char *p; /* NULL: absent */
    int64_t rs, cs, bs;
    int dtype;        /* a duet_dtype */
};

struct ge_args {
    int64_t m, n, batch;
    ge_operand t, c, bias, row_scale, col_scale, residual, aux, d;
    int act;          /* a duet_activation */
    double lo, hi, beta;
};

DUET_INLINE unsigned char *ge_at(const ge_operand &o, int64_t b, int64_t i, int64_t j, int size)
{
    return o.p + (b * o.bs + i * o.rs + j * o.cs) * size;
}

/* ---- loads and stores per math type ---- */

/* One element of an f32-math operand (f32, f16 or bf16) at p, as f32, and back with one
 * rounding to nearest even. */
DUET_INLINE int ge_size_f32(int dtype) { return dtype == DUET_DTYPE_F32 ? 4 : 2; }
DUET_INLINE float ge_load_f32(const unsigned char *p, int dtype)
{
    if (dtype == DUET_DTYPE_F16) return duet_f16_to_f32(*(const uint16_t *)p);
    if (dtype == DUET_DTYPE_BF16) return duet_bf16_to_f32(*(const uint16_t *)p);
    return *(const float *)p;
}
/* f32 -> bf16 for the epilogue's outputs: nearest even, overflow to inf, NaN a NaN. On NVIDIA
 * (sm_80 on) the instruction, whose NaN is the canonical one, so that the pass and the fused
 * store (which packs pairs with cvt.rn.bf16x2) give the same bits; elsewhere lowp_convert's. */
DUET_INLINE uint16_t ge_f32_to_bf16(float v)
{
#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
    uint16_t h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
    return h;
#else
    return duet_f32_to_bf16(v);
#endif
}
/* Two f32 values as one 32-bit word of 16-bit dtype (f16 or bf16), lo in the low half. */
DUET_INLINE uint32_t ge_pack2_16(int dtype, float lo, float hi)
{
#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
    uint32_t w;
    if (dtype == DUET_DTYPE_F16)
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
    else
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
    return w;
#else
    if (dtype == DUET_DTYPE_F16) return duet_f32_to_f16(lo) | (uint32_t)duet_f32_to_f16(hi) << 16;
    return ge_f32_to_bf16(lo) | (uint32_t)ge_f32_to_bf16(hi) << 16;
#endif
}
DUET_INLINE void ge_store_f32(unsigned char *p, int dtype, float v)
{
    if (dtype == DUET_DTYPE_F16)
        *(uint16_t *)p = duet_f32_to_f16(v);
    else if (dtype == DUET_DTYPE_BF16)
        *(uint16_t *)p = ge_f32_to_bf16(v);
    else
        *(float *)p = v;
}

/* 2^y and 1 / d for the f32 activations: on NVIDIA the special-function unit's instructions
 * (ex2.approx, within 2 ulps; rcp.approx, within 1 ulp), flushing subnormal results to 0, which
 * changes no activation's result beyond its bound (1 + 2^y is 1 for any subnormal 2^y, and a
 * reciprocal below 2^-126 multiplies an |x| that leaves a result below the f32 normal range).
 * Elsewhere exp2f and __fdividef. */
DUET_INLINE float ge_exp2(float y)
{
#if DUET_GPU_CUDA && defined(__CUDA_ARCH__)
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
    return r;
#else
    return exp2f(y);
#endif
}
DUET_INLINE float ge_rcp(float d)
{
#if DUET_GPU_CUDA && defined(__CUDA_ARCH__)
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
    return r;
#else
    return __fdividef(1.0f, d);
#endif
}

template <typename M> struct ge_math;

template <> struct ge_math<float> {
    static DUET_INLINE float load(const ge_operand &o, int64_t b, int64_t i, int64_t j)
    {
        return ge_load_f32(ge_at(o, b, i, j, ge_size_f32(o.dtype)), o.dtype);
    }
    static DUET_INLINE void store(const ge_operand &o, int64_t b, int64_t i, int64_t j, float v)
    {
        ge_store_f32(ge_at(o, b, i, j, ge_size_f32(o.dtype)), o.dtype, v);
    }
    static DUET_INLINE float scalar(double v) { return (float)v; }
    /* Each step rounds on its own: no multiply is contracted into a later add, so every kernel
     * that applies the epilogue (this pass, the Hopper GEMM's fused store) gives the same bits. */
    static DUET_INLINE float mul(float a, float b) { return __fmul_rn(a, b); }
    static DUET_INLINE float add(float a, float b) { return __fadd_rn(a, b); }
    static DUET_INLINE float axpy(float beta, float c, float x) { return __fmaf_rn(beta, c, x); }
    static DUET_INLINE float act(int act, float x, float lo, float hi)
    {
        switch (act) {
        case DUET_ACT_RELU: return x > 0.0f || x != x ? x : 0.0f;
        /* GELU (tanh) as x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3), the same function
         * (0.5 (1 + tanh u) = 1 / (1 + e^-2u)) in one exp2 and one reciprocal; SiLU and sigmoid
         * likewise: 2 special-function and 4-6 other instructions against tanhf's or expf's
         * and a division's 20-30. The exponent is formed in f32 and e^y turns its few ulps into
         * a few ulps of relative error; the result is within 4 ulps of max(|result|, 1) (duet.h).
         * At x = -inf GELU and SiLU give NaN, as the tanh and exp forms do (-inf * 0). */
        case DUET_ACT_GELU_TANH: {
            const float x2 = __fmul_rn(x, x);
            const float y = __fmul_rn(x, __fmaf_rn(x2, -0.10294324f, -2.3022082f));
            return __fmul_rn(x, ge_rcp(__fadd_rn(1.0f, ge_exp2(y))));
        }
        case DUET_ACT_GELU_ERF: return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
        case DUET_ACT_SILU:
            return __fmul_rn(x, ge_rcp(__fadd_rn(1.0f, ge_exp2(__fmul_rn(x, -1.4426950f)))));
        case DUET_ACT_SIGMOID: return ge_rcp(__fadd_rn(1.0f, ge_exp2(__fmul_rn(x, -1.4426950f))));
        case DUET_ACT_CLAMP: return x != x ? x : x < lo ? lo : x > hi ? hi : x;
        default: return x;
        }
    }
};

template <> struct ge_math<double> {
    static DUET_INLINE double load(const ge_operand &o, int64_t b, int64_t i, int64_t j)
    {
        if (o.dtype == DUET_DTYPE_F32) return (double)*(const float *)ge_at(o, b, i, j, 4);
        return *(const double *)ge_at(o, b, i, j, 8);
    }
    static DUET_INLINE void store(const ge_operand &o, int64_t b, int64_t i, int64_t j, double v)
    {
        if (o.dtype == DUET_DTYPE_F32)
            *(float *)ge_at(o, b, i, j, 4) = (float)v; /* nearest even; overflow to inf */
        else
            *(double *)ge_at(o, b, i, j, 8) = v;
    }
    static DUET_INLINE double scalar(double v) { return v; }
    static DUET_INLINE double mul(double a, double b) { return a * b; }
    static DUET_INLINE double add(double a, double b) { return a + b; }
    static DUET_INLINE double axpy(double beta, double c, double x) { return x + beta * c; }
    static DUET_INLINE double act(int act, double x, double lo, double hi)
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
};

template <> struct ge_math<uint32_t> {
    static DUET_INLINE uint32_t load(const ge_operand &o, int64_t b, int64_t i, int64_t j)
    {
        if (o.dtype == DUET_DTYPE_I8) {
            const int8_t v = *(const int8_t *)ge_at(o, b, i, j, 1);
            return (uint32_t)(int32_t)v;
        }
        return *(const uint32_t *)ge_at(o, b, i, j, 4);
    }
    static DUET_INLINE void store(const ge_operand &o, int64_t b, int64_t i, int64_t j, uint32_t v)
    {
        if (o.dtype == DUET_DTYPE_I8) {
            const int32_t s = (int32_t)v; /* two's complement */
            *(int8_t *)ge_at(o, b, i, j, 1) = (int8_t)(s < -128 ? -128 : s > 127 ? 127 : s);
        } else {
            *(uint32_t *)ge_at(o, b, i, j, 4) = v;
        }
    }
    /* beta, lo and hi are integers in the i32 range (checked on the host). */
    static DUET_INLINE uint32_t scalar(double v) { return (uint32_t)(int32_t)v; }
    static DUET_INLINE uint32_t mul(uint32_t a, uint32_t b) { return a * b; }
    static DUET_INLINE uint32_t add(uint32_t a, uint32_t b) { return a + b; }
    static DUET_INLINE uint32_t axpy(uint32_t beta, uint32_t c, uint32_t x) { return x + beta * c; }
    static DUET_INLINE uint32_t act(int act, uint32_t x, uint32_t lo, uint32_t hi)
    {
        const int32_t s = (int32_t)x, l = (int32_t)lo, h = (int32_t)hi;
        switch (act) {
        case DUET_ACT_RELU: return s > 0 ? x : 0u;
        case DUET_ACT_CLAMP: return (uint32_t)(s < l ? l : s > h ? h : s);
        default: return x;
        }
    }
};

/* The steps of element (b, i, j) from t, the GEMM's alpha * acc in M: the scales, then
 * ge_finish. A GEMM kernel that holds t in registers (the memory-bound family's reduction)
 * calls these two in place of the pass, with the same bits. */
template <typename M> DUET_INLINE M ge_scale(const ge_args &p, int64_t b, int64_t i, int64_t j, M x)
{
    typedef ge_math<M> G;
    if (p.row_scale.p) x = G::mul(x, G::load(p.row_scale, b, i, j));
    if (p.col_scale.p) x = G::mul(x, G::load(p.col_scale, b, i, j));
    return x;
}

/* beta * C, bias, aux, the activation, residual and D from the scaled product x. */
template <typename M>
DUET_INLINE void ge_finish(const ge_args &p, int64_t b, int64_t i, int64_t j, M x, M beta, M lo,
                           M hi)
{
    typedef ge_math<M> G;
    if (p.c.p) x = G::axpy(beta, G::load(p.c, b, i, j), x);
    if (p.bias.p) x = G::add(x, G::load(p.bias, b, i, j));
    if (p.aux.p) G::store(p.aux, b, i, j, x);
    x = G::act(p.act, x, lo, hi);
    if (p.residual.p) x = G::add(x, G::load(p.residual, b, i, j));
    G::store(p.d, b, i, j, x);
}

template <typename M>
DUET_GLOBAL void __launch_bounds__(GE_THREADS) gemm_epilogue_kernel(const ge_args p)
{
    typedef ge_math<M> G;
    const M beta = G::scalar(p.beta), lo = G::scalar(p.lo), hi = G::scalar(p.hi);
    const int64_t sy = (int64_t)gridDim.y * blockDim.y, sx = (int64_t)gridDim.x * blockDim.x;
    for (int64_t b = blockIdx.z; b < p.batch; b += gridDim.z) {
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < p.m; i += sy) {
            for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < p.n; j += sx) {
                M x = M(0);
                if (p.t.p) x = ge_scale<M>(p, b, i, j, G::load(p.t, b, i, j));
                ge_finish<M>(p, b, i, j, x, beta, lo, hi);
            }
        }
    }
}

#endif /* DUET_KERNELS_GEMM_EPILOGUE_CUH */
