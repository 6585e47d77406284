/* gemm_elem.cuh - a GEMM input dtype as the SIMT kernels see it: bytes, accumulator, one load. */
#ifndef DUET_KERNELS_GEMM_ELEM_CUH
#define DUET_KERNELS_GEMM_ELEM_CUH

#include "duet/duet.h"

#include "compat.h"
#include "lowp_convert.cuh"

#include <stdint.h>

/* A and B's dtype DT (a duet_dtype): ELEM bytes an element, accumulated in acc (f32 for f16
 * and bf16, 32-bit integers modulo 2^32 for i8 and i32). */
template <int DT> struct gemm_elem;
template <> struct gemm_elem<DUET_DTYPE_F32> {
    typedef float acc;
    static constexpr int ELEM = 4;
};
template <> struct gemm_elem<DUET_DTYPE_F64> {
    typedef double acc;
    static constexpr int ELEM = 8;
};
template <> struct gemm_elem<DUET_DTYPE_I32> {
    typedef uint32_t acc; /* products and sums modulo 2^32 */
    static constexpr int ELEM = 4;
};
template <> struct gemm_elem<DUET_DTYPE_F16> {
    typedef float acc;
    static constexpr int ELEM = 2;
};
template <> struct gemm_elem<DUET_DTYPE_BF16> {
    typedef float acc;
    static constexpr int ELEM = 2;
};
template <> struct gemm_elem<DUET_DTYPE_I8> {
    typedef uint32_t acc;
    static constexpr int ELEM = 1;
};
/* The 8-bit floats: multiplied by matrix instructions only (no one-element load here). */
struct gemm_elem_f8 {
    typedef float acc;
    static constexpr int ELEM = 1;
};
template <> struct gemm_elem<DUET_DTYPE_F8E4M3> : gemm_elem_f8 {};
template <> struct gemm_elem<DUET_DTYPE_F8E5M2> : gemm_elem_f8 {};

/* One element at p as the accumulator type. */
template <int DT> DUET_INLINE typename gemm_elem<DT>::acc gemm_load_elem(const unsigned char *p)
{
    if constexpr (DT == DUET_DTYPE_F32)
        return *(const float *)p;
    else if constexpr (DT == DUET_DTYPE_F64)
        return *(const double *)p;
    else if constexpr (DT == DUET_DTYPE_I32)
        return *(const uint32_t *)p;
    else if constexpr (DT == DUET_DTYPE_F16)
        return duet_f16_to_f32(*(const uint16_t *)p);
    else if constexpr (DT == DUET_DTYPE_BF16)
        return duet_bf16_to_f32(*(const uint16_t *)p);
    else {
        static_assert(DT == DUET_DTYPE_I8, "no one-element load for the dtype");
        return (uint32_t)(int32_t)(*(const int8_t *)p);
    }
}

#endif /* DUET_KERNELS_GEMM_ELEM_CUH */
