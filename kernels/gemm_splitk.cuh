/* gemm_splitk.cuh - split-K GEMM: the fixed-order reduction of the slices' partial sums. */
#ifndef DUET_KERNELS_GEMM_SPLITK_CUH
#define DUET_KERNELS_GEMM_SPLITK_CUH

#include "compat.h"
#include "gemm_fast_tile.cuh"

#include <stdint.h>

/*
 * A split GEMM runs the AUTO kernel with gridDim.y = split: slice s multiplies its K range and
 * stores the raw partial product (alpha 1, beta 0) at ws + s * slice_stride, laid out as
 * batch x m x n with unit column stride. This kernel then computes, for every element,
 *
 *     C = alpha * (P_0 + P_1 + ... + P_{split-1}) + beta * C      (beta == 0: C is not read)
 *
 * No atomics, and the order of the additions depends on the problem alone (split, batch, m,
 * n), so a problem gives the same bits on every run.
 *
 * A thread owns VEC adjacent elements of one row (one 16-byte vector when n is a multiple of
 * it, else one element) and a group of the slices: a block is GROUPS x COLS threads, group g
 * sums slices g, g + GROUPS, g + 2 GROUPS, ... of COLS vectors, its loads independent of each
 * other so many are in flight, then the groups' sums meet in a fixed pairwise tree in shared
 * memory. A short split over a large output (8192 x 128 x 8192: 4 slices of a million
 * elements) runs one group, every thread summing all the slices of its vector; a long split
 * over a small output (64 x 64 x 65536: 241 slices of 4,096) runs up to 32 groups so the
 * device has threads enough to keep its loads in flight (gemm_splitk_groups, in the launcher:
 * src/gpu/gemm_fast_gpu.inc).
 *
 * Plain code with no vendor instruction: it compiles as CUDA and as HIP.
 */

#define GEMM_SPLITK_THREADS 256

template <typename T> struct gemm_splitk_args {
    const T *ws;
    int64_t split, slice_stride; /* slices, and elements between them (batch * m * n) */
    int64_t m, n;
    T *c;
    int64_t c_rs, c_cs, c_bs;
    T alpha, beta;
    int beta_zero;
    int c_vec;  /* C's rows are contiguous and every vector of VEC elements is 16-byte aligned */
    int narrow; /* batch * m * n < 2^31: positions in 32-bit arithmetic */
};

template <typename T, int VEC> DUET_INLINE void gemm_splitk_load(const T *p, T (&v)[VEC])
{
    if constexpr (VEC == 1) {
        v[0] = *p;
    } else {
        const gf_vec<T> x = gf_load16(p);
#pragma unroll
        for (int e = 0; e < VEC; ++e) v[e] = x.e[e];
    }
}

template <typename T, int VEC, int GROUPS>
DUET_GLOBAL void __launch_bounds__(GEMM_SPLITK_THREADS)
    gemm_splitk_reduce_kernel(const gemm_splitk_args<T> p)
{
    constexpr int COLS = GEMM_SPLITK_THREADS / GROUPS;
    /* [group][element][column]: a warp's lanes read and write consecutive words. */
    __shared__ T part[GROUPS > 1 ? GROUPS : 1][VEC][COLS];
    const int lx = (int)(threadIdx.x % COLS), g = (int)(threadIdx.x / COLS);
    const int64_t vectors = p.slice_stride / VEC; /* VEC > 1 only when n % VEC == 0 */
    /* Block-uniform trip count: every thread reaches the barriers. */
    for (int64_t base = (int64_t)blockIdx.x * COLS; base < vectors;
         base += (int64_t)gridDim.x * COLS) {
        const int64_t v = base + lx;
        T sum[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) sum[e] = T(0);
        if (v < vectors && g < p.split) {
            const T *q = p.ws + v * VEC;
            gemm_splitk_load<T, VEC>(q + (int64_t)g * p.slice_stride, sum);
#pragma unroll 4
            for (int64_t s = g + GROUPS; s < p.split; s += GROUPS) {
                T x[VEC];
                gemm_splitk_load<T, VEC>(q + s * p.slice_stride, x);
#pragma unroll
                for (int e = 0; e < VEC; ++e) sum[e] = sum[e] + x[e];
            }
        }
        if constexpr (GROUPS > 1) {
            /* Pairwise: group g adds group g + h for h = GROUPS/2, ..., 1. */
#pragma unroll
            for (int e = 0; e < VEC; ++e) part[g][e][lx] = sum[e];
            duet_barrier();
#pragma unroll
            for (int h = GROUPS / 2; h >= 1; h /= 2) {
                if (g < h) {
#pragma unroll
                    for (int e = 0; e < VEC; ++e) {
                        sum[e] = sum[e] + part[g + h][e][lx];
                        part[g][e][lx] = sum[e];
                    }
                }
                duet_barrier();
            }
        }
        if (g == 0 && v < vectors) {
            /* The vector's row: element (b, i, j) of the batch x m x n partial product. */
            const int64_t e0 = v * VEC;
            int64_t b, i, j;
            if (p.narrow) {
                const uint32_t x = (uint32_t)e0, mn = (uint32_t)(p.m * p.n), n = (uint32_t)p.n;
                const uint32_t bb = x / mn, r = x - bb * mn, ii = r / n;
                b = bb;
                i = ii;
                j = r - ii * n;
            } else {
                const int64_t mn = p.m * p.n;
                b = e0 / mn;
                const int64_t r = e0 - b * mn;
                i = r / p.n;
                j = r - i * p.n;
            }
            T *q = p.c + b * p.c_bs + i * p.c_rs + j * p.c_cs;
            if (VEC > 1 && p.c_vec) {
                T old[VEC] = {};
                if (!p.beta_zero) gemm_splitk_load<T, VEC>(q, old);
                gf_vec<T> out;
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    const T a = p.alpha * sum[e];
                    out.e[e] = p.beta_zero ? a : gf_fma(p.beta, old[e], a);
                }
                gf_store16(q, out);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    T *d = q + (int64_t)e * p.c_cs;
                    const T a = p.alpha * sum[e];
                    *d = p.beta_zero ? a : gf_fma(p.beta, *d, a);
                }
            }
        }
        if constexpr (GROUPS > 1) duet_barrier();
    }
}

#endif /* DUET_KERNELS_GEMM_SPLITK_CUH */
