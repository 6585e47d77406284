/* kernel_util.cuh - strided views, element arithmetic and 16-byte vectors for the kernels. */
#ifndef DUET_KERNELS_KERNEL_UTIL_CUH
#define DUET_KERNELS_KERNEL_UTIL_CUH

#include "compat.h"

#include <stdint.h>
#include <string.h>

/* A strided batch of matrices on the device: element (b, i, j) at p[b*bs + i*rs + j*cs].
 * int64 everywhere: i*rs alone passes 2^31 for any matrix over 8 GiB of 4-byte elements. */
template <typename T> struct duet_view {
    T *p;
    int64_t rs, cs, bs;
    DUET_INLINE T *at(int64_t b, int64_t i, int64_t j) const
    {
        return p + b * bs + i * rs + j * cs;
    }
};

/* How each arithmetic dtype computes. i32 computes in uint32_t so that overflow wraps modulo
 * 2^32 (signed overflow would be undefined behaviour); the launcher turns alpha/beta into acc_t
 * (duet_scalar_of, src/gpu/launch_util.h). f32 accumulates in f32, as cuBLAS and the seeds do. */
template <typename T> struct duet_arith;

template <> struct duet_arith<float> {
    typedef float acc_t;
    static DUET_INLINE acc_t load(const float *p) { return *p; }
    static DUET_INLINE void store(float *p, acc_t v) { *p = v; }
    static DUET_INLINE acc_t from_elem(float v) { return v; }
    static DUET_INLINE float to_elem(acc_t v) { return v; }
};

template <> struct duet_arith<double> {
    typedef double acc_t;
    static DUET_INLINE acc_t load(const double *p) { return *p; }
    static DUET_INLINE void store(double *p, acc_t v) { *p = v; }
    static DUET_INLINE acc_t from_elem(double v) { return v; }
    static DUET_INLINE double to_elem(acc_t v) { return v; }
};

template <> struct duet_arith<int32_t> {
    typedef uint32_t acc_t;
    static DUET_INLINE acc_t load(const int32_t *p) { return (uint32_t)*p; }
    /* Signed and unsigned variants may alias: this stores the wrapped bit pattern as is. */
    static DUET_INLINE void store(int32_t *p, acc_t v) { *reinterpret_cast<uint32_t *>(p) = v; }
    static DUET_INLINE acc_t from_elem(int32_t v) { return (uint32_t)v; }
    static DUET_INLINE int32_t to_elem(acc_t v)
    {
        int32_t r;
        memcpy(&r, &v, sizeof r); /* the bit pattern, without an implementation-defined cast */
        return r;
    }
};

/* C = alpha * A * B + beta * C, as the simple GEMM kernels take it (by value). */
template <typename T> struct duet_gemm_args {
    typedef typename duet_arith<T>::acc_t acc_t;
    int64_t m, n, k, batch;
    acc_t alpha, beta;
    int beta_zero; /* BLAS: beta == 0 never reads C, so NaN or garbage in C cannot leak in */
    duet_view<const T> a, b;
    duet_view<T> c;
};

/* The epilogue every simple GEMM kernel shares. */
template <typename T>
DUET_INLINE void duet_gemm_store(const duet_gemm_args<T> &g, int64_t bz, int64_t i, int64_t j,
                                 typename duet_arith<T>::acc_t acc)
{
    T *c = g.c.at(bz, i, j);
    typename duet_arith<T>::acc_t r = g.alpha * acc;
    if (!g.beta_zero) r = r + g.beta * duet_arith<T>::load(c);
    duet_arith<T>::store(c, r);
}

/* The unsigned integer that moves an element of `bytes` bytes. */
template <int Bytes> struct duet_uint;
template <> struct duet_uint<1> {
    typedef uint8_t type;
};
template <> struct duet_uint<2> {
    typedef uint16_t type;
};
template <> struct duet_uint<4> {
    typedef uint32_t type;
};
template <> struct duet_uint<8> {
    typedef uint64_t type;
};

/* 16 bytes seen as a vector (one global load or store) or as its elements. */
template <typename T> union duet_pack16 {
    static_assert(16 % sizeof(T) == 0, "element size must divide 16");
    enum { N = 16 / sizeof(T) };
    duet_vec16_t v;
    T e[16 / sizeof(T)];
};

/* The same 16 bytes held as four 32-bit words, elements taken out and put in with shifts.
 * hip-clang gives a duet_pack16 array indexed as p[it].e[e] a stack slot (scratch memory on
 * every AMD target) even when the loops are unrolled, because the element view is a union
 * member; word shifts stay in VGPRs. e must be a compile-time constant after unrolling. The
 * AUTO transpose uses these on HIP only; CUDA keeps duet_pack16, verified there. */
template <typename U> DUET_INLINE U duet_vec16_get(const duet_vec16_t &v, int e)
{
    static_assert(16 % sizeof(U) == 0, "element size must divide 16");
    const int byte = e * (int)sizeof(U), w = byte / 4;
    const uint32_t lo = w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
    if (sizeof(U) == 8) {
        const uint32_t hi = w == 0 ? v.y : v.w; /* w is 0 or 2 for 8-byte elements */
        return (U)(((uint64_t)hi << 32) | lo);
    }
    return (U)(lo >> (8 * (byte % 4)));
}

template <typename U> DUET_INLINE duet_vec16_t duet_vec16_make(const U (&x)[16 / sizeof(U)])
{
    static_assert(16 % sizeof(U) == 0, "element size must divide 16");
    enum { S = (int)sizeof(U) };
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int byte = 4 * i;
        if (S >= 4) {
            w[i] = (uint32_t)((uint64_t)x[byte / S] >> (8 * (byte % S)));
        } else {
            uint32_t r = 0;
#pragma unroll
            for (int k = 0; k < 4 / (S < 4 ? S : 4); ++k)
                r |= (uint32_t)x[byte / S + k] << (8 * S * k);
            w[i] = r;
        }
    }
    duet_vec16_t v;
    v.x = w[0];
    v.y = w[1];
    v.z = w[2];
    v.w = w[3];
    return v;
}

#endif /* DUET_KERNELS_KERNEL_UTIL_CUH */
