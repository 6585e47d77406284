/* convert.cuh - duet_convert's kernel: f32/f16/bf16/f8e4m3/f8e5m2 to each other, scale, amax. */
#ifndef DUET_KERNELS_CONVERT_CUH
#define DUET_KERNELS_CONVERT_CUH

#include "duet/duet.h"

#include "compat.h"

#include <stdint.h>

/*
 * Every value of the five dtypes is exact in f32, so an element is decoded to f32, multiplied
 * by the scale (one f32 rounding), and encoded once with round to nearest even (duet.h). The
 * encoder works for any IEEE-style format narrower than f32 (f16, e5m2, and e4m3 "fn", whose
 * all-ones exponent still holds numbers): the quantum of x's binade is a power of two, so
 * x / quantum is exact and one rintf does the rounding; a carry out of the mantissa moves into
 * the exponent field by the addition itself. bf16 rounds on the f32 bit pattern.
 *
 * amax: each thread keeps the largest bit pattern of |x| (NaN canonicalised above inf), the
 * block reduces it in shared memory, and one thread per block takes an integer atomicMax on
 * the output, which the launcher zeroed on the same stream. Non-negative floats order as their
 * bit patterns, and a maximum does not depend on the order of its arguments: the result is the
 * same on every run.
 */

#define CV_THREADS 256

struct cv_args {
    const unsigned char *src;
    unsigned char *dst;
    int64_t rows, cols, batch;
    int64_t srs, scs, sbs; /* src strides, elements */
    int64_t drs, dcs, dbs; /* dst strides, elements */
    const float *scale;    /* NULL: none */
    unsigned int *amax;    /* NULL: none; the f32 bits of max |src| */
    int saturate;
    /* NULL, or a scale per element instead of scale: element (b, i, j) is multiplied by
     * bscale[b * b_bs + (i >> b_rsh) * b_rs + (j >> b_csh) * b_cs]. */
    const float *bscale;
    int64_t b_rs, b_cs, b_bs;
    int b_rsh, b_csh;
};

/* 2^k for -126 <= k <= 127, exactly. */
DUET_INLINE float cv_pow2(int k) { return __uint_as_float((unsigned)(k + 127) << 23); }

template <int EB, int MB, bool FN> struct cv_fmt {
    static constexpr int bias = (1 << (EB - 1)) - 1;
    static constexpr unsigned maxcode =
        FN ? (1u << (EB + MB)) - 2u : (((1u << EB) - 2u) << MB) | ((1u << MB) - 1u);
    static constexpr unsigned infcode = ((1u << EB) - 1u) << MB;
    static constexpr unsigned nancode = FN ? (1u << (EB + MB)) - 1u : infcode | (1u << (MB - 1));
};

template <int EB, int MB, bool FN> DUET_INLINE unsigned cv_encode(float x, bool saturate)
{
    typedef cv_fmt<EB, MB, FN> F;
    constexpr int emin = 1 - F::bias;
    const unsigned u = __float_as_uint(x);
    const unsigned sign = (u >> 31) << (EB + MB);
    const unsigned a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return sign | F::nancode;
    const unsigned ovf = sign | (saturate ? F::maxcode : FN ? F::nancode : F::infcode);
    const int e = (int)(a >> 23) - 127; /* f32 subnormals read as -127: below every emin here */
    if (a == 0x7F800000u || e > (int)(F::maxcode >> MB) - F::bias) return ovf;
    const float ax = __uint_as_float(a);
    unsigned code;
    if (e < emin)
        code = (unsigned)rintf(ax * cv_pow2(MB - emin)); /* 2^MB lands on the smallest normal */
    else
        code = ((unsigned)(e + F::bias - 1) << MB) + (unsigned)rintf(ax * cv_pow2(MB - e));
    return code > F::maxcode ? ovf : sign | code;
}

template <int EB, int MB, bool FN> DUET_INLINE float cv_decode(unsigned c)
{
    typedef cv_fmt<EB, MB, FN> F;
    constexpr unsigned emask = (1u << EB) - 1u, mmask = (1u << MB) - 1u;
    const unsigned sign = (c >> (EB + MB) & 1u) << 31;
    const unsigned e = c >> MB & emask, m = c & mmask;
    if (FN ? (e == emask && m == mmask) : (e == emask && m != 0))
        return __uint_as_float(sign | 0x7FC00000u);
    if (!FN && e == emask) return __uint_as_float(sign | 0x7F800000u);
    if (e == 0) return __uint_as_float(sign | __float_as_uint((float)m * cv_pow2(1 - F::bias - MB)));
    return __uint_as_float(sign | (e - (unsigned)F::bias + 127u) << 23 | m << (23 - MB));
}

template <int DT> DUET_INLINE float cv_load(const unsigned char *p)
{
    if constexpr (DT == DUET_DTYPE_F16)
        return cv_decode<5, 10, false>(*reinterpret_cast<const unsigned short *>(p));
    else if constexpr (DT == DUET_DTYPE_BF16)
        return __uint_as_float((unsigned)*reinterpret_cast<const unsigned short *>(p) << 16);
    else if constexpr (DT == DUET_DTYPE_F8E4M3)
        return cv_decode<4, 3, true>(*p);
    else if constexpr (DT == DUET_DTYPE_F8E5M2)
        return cv_decode<5, 2, false>(*p);
    else
        return *reinterpret_cast<const float *>(p);
}

template <int DT> DUET_INLINE void cv_store(unsigned char *p, float x, bool saturate)
{
    const unsigned u = __float_as_uint(x);
    if constexpr (DT == DUET_DTYPE_F16) {
        *reinterpret_cast<unsigned short *>(p) = (unsigned short)cv_encode<5, 10, false>(x, false);
    } else if constexpr (DT == DUET_DTYPE_BF16) {
        /* Nearest even on the bit pattern; overflow lands on inf; NaN keeps its sign. */
        *reinterpret_cast<unsigned short *>(p) =
            (u & 0x7FFFFFFFu) > 0x7F800000u ? (unsigned short)((u >> 16 & 0x8000u) | 0x7FC0u)
                                            : (unsigned short)((u + 0x7FFFu + (u >> 16 & 1u)) >> 16);
    } else if constexpr (DT == DUET_DTYPE_F8E4M3) {
        *p = (unsigned char)cv_encode<4, 3, true>(x, saturate);
    } else if constexpr (DT == DUET_DTYPE_F8E5M2) {
        *p = (unsigned char)cv_encode<5, 2, false>(x, saturate);
    } else {
        *reinterpret_cast<unsigned *>(p) =
            (u & 0x7FFFFFFFu) > 0x7F800000u ? (u & 0x80000000u) | 0x7FC00000u : u;
    }
}

template <int DT> struct cv_size {
    static constexpr int value =
        DT == DUET_DTYPE_F32 ? 4 : DT == DUET_DTYPE_F16 || DT == DUET_DTYPE_BF16 ? 2 : 1;
};

/* x along dst's rows (unit stride when dst has one), y over rows x batch; both grid-stride.
 * Every thread reaches the reduction, whatever its share of the elements. */
template <int SD, int DD> DUET_GLOBAL void convert_kernel(cv_args p)
{
    const float scale = p.scale ? *p.scale : 1.0f;
    unsigned mx = 0;
    const int64_t lines = p.rows * p.batch;
    for (int64_t r = blockIdx.y; r < lines; r += gridDim.y) {
        const int64_t b = r / p.rows, i = r - b * p.rows;
        const unsigned char *s = p.src + (b * p.sbs + i * p.srs) * cv_size<SD>::value;
        unsigned char *d = p.dst + (b * p.dbs + i * p.drs) * cv_size<DD>::value;
        const float *bs = p.bscale ? p.bscale + b * p.b_bs + (i >> p.b_rsh) * p.b_rs : nullptr;
        for (int64_t j = (int64_t)blockIdx.x * CV_THREADS + threadIdx.x; j < p.cols;
             j += (int64_t)gridDim.x * CV_THREADS) {
            const float x = cv_load<SD>(s + j * p.scs * cv_size<SD>::value);
            unsigned ax = __float_as_uint(x) & 0x7FFFFFFFu;
            if (ax > 0x7F800000u) ax = 0x7FC00000u;
            mx = ax > mx ? ax : mx;
            /* One product, never contracted with anything: the single f32 rounding of duet.h. */
            const float y = bs                   ? __fmul_rn(x, bs[(j >> p.b_csh) * p.b_cs])
                            : p.scale != nullptr ? __fmul_rn(x, scale)
                                                 : x;
            cv_store<DD>(d + j * p.dcs * cv_size<DD>::value, y, p.saturate != 0);
        }
    }
    if (!p.amax) return; /* uniform over the grid */
    __shared__ unsigned red[CV_THREADS];
    red[threadIdx.x] = mx;
    duet_barrier();
    for (int w = CV_THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w && red[threadIdx.x + w] > red[threadIdx.x])
            red[threadIdx.x] = red[threadIdx.x + w];
        duet_barrier();
    }
    if (threadIdx.x == 0 && red[0] != 0) atomicMax(p.amax, red[0]);
}

#endif /* DUET_KERNELS_CONVERT_CUH */
