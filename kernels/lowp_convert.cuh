/* lowp_convert.cuh - f16, bf16 and tf32 conversions for device code, the same bits on CUDA and HIP. */
#ifndef DUET_KERNELS_LOWP_CONVERT_CUH
#define DUET_KERNELS_LOWP_CONVERT_CUH

#include "compat.h"

#include <stdint.h>

/*
 * duet's f16 and bf16 values travel as raw 16-bit patterns (uint16_t), never as the vendors'
 * __half / __nv_bfloat16 / hip_bfloat16 classes: the kernels then read the same on both
 * vendors and need none of their headers. Every conversion to a 16-bit type rounds to nearest
 * even, overflows to inf and keeps NaN a NaN (duet.h's rule for f16/bf16 outputs).
 */

DUET_INLINE float duet_f16_to_f32(uint16_t h)
{
#if DUET_GPU_CUDA
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    _Float16 v;
    __builtin_memcpy(&v, &h, 2);
    return (float)v;
#endif /* DUET_GPU_CUDA */
}

DUET_INLINE uint16_t duet_f32_to_f16(float f)
{
#if DUET_GPU_CUDA
    uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    const _Float16 v = (_Float16)f; /* clang: round to nearest even */
    uint16_t h;
    __builtin_memcpy(&h, &v, 2);
    return h;
#endif /* DUET_GPU_CUDA */
}

DUET_INLINE float duet_bf16_to_f32(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }

DUET_INLINE uint16_t duet_f32_to_bf16(float f)
{
    uint32_t u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* nearest even; a carry into the exponent gives inf */
    return (uint16_t)(u >> 16);
}

/* f32 -> tf32 (round to nearest, ties away: cvt.rna), returned as the f32 bit pattern whose
 * low 13 mantissa bits are zero. */
DUET_INLINE uint32_t duet_f32_to_tf32(uint32_t x)
{
#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(x)));
    return r;
#else
    if ((x & 0x7f800000u) == 0x7f800000u) return x; /* inf and NaN as they are */
    return (x + 0x1000u) & 0xffffe000u;
#endif /* sm_80+ */
}

#endif /* DUET_KERNELS_LOWP_CONVERT_CUH */
