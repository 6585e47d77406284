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
 * No atomics, and the order of the additions depends on the split alone, so a problem gives
 * the same bits on every run. With a long split (a small output over a long K: 64 x 64 x 65536
 * runs 241 slices) one thread per element would leave the device idle, so a block is
 * GROUPS x COLS threads: group g sums slices g, g + GROUPS, g + 2 GROUPS, ... of COLS adjacent
 * elements, then group 0 adds the groups' sums in group order. GROUPS is chosen from the split
 * (gemm_splitk_groups), which keeps the order fixed per problem.
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
};

template <typename T, int GROUPS>
DUET_GLOBAL void __launch_bounds__(GEMM_SPLITK_THREADS)
    gemm_splitk_reduce_kernel(const gemm_splitk_args<T> p)
{
    constexpr int COLS = GEMM_SPLITK_THREADS / GROUPS;
    __shared__ T part[GROUPS > 1 ? GROUPS - 1 : 1][COLS];
    const int lx = (int)(threadIdx.x % COLS), g = (int)(threadIdx.x / COLS);
    const int64_t total = p.slice_stride;
    const int64_t mn = p.m * p.n;
    /* Block-uniform trip count: every thread reaches the barriers. */
    for (int64_t base = (int64_t)blockIdx.x * COLS; base < total;
         base += (int64_t)gridDim.x * COLS) {
        const int64_t e = base + lx;
        T sum = T(0);
        if (e < total && g < p.split) {
            const T *q = p.ws + e;
            sum = q[(int64_t)g * p.slice_stride];
            for (int64_t s = g + GROUPS; s < p.split; s += GROUPS)
                sum = sum + q[s * p.slice_stride];
        }
        if (GROUPS > 1) {
            if (g > 0) part[g - 1][lx] = sum;
            duet_barrier();
        }
        if (g == 0 && e < total) {
#pragma unroll
            for (int h = 1; h < GROUPS; ++h)
                if (h < p.split) sum = sum + part[h - 1][lx];
            const int64_t b = e / mn, r = e - b * mn;
            const int64_t i = r / p.n, j = r - i * p.n;
            T *q = p.c + b * p.c_bs + i * p.c_rs + j * p.c_cs;
            const T v = p.alpha * sum;
            *q = p.beta_zero ? v : gf_fma(p.beta, *q, v);
        }
        if (GROUPS > 1) duet_barrier();
    }
}

/* Slice groups per block for a split: enough that a long split keeps many threads busy. */
static inline int gemm_splitk_groups(int64_t split)
{
    return split >= 32 ? 8 : split >= 4 ? 4 : split >= 2 ? 2 : 1;
}

/* Launches the reduction on stream; returns the runtime's launch error. */
template <typename T>
static duet_gpu_error_t gemm_splitk_reduce(const gemm_splitk_args<T> &p, int64_t max_grid_x,
                                           duet_gpu_stream_t stream, unsigned *grid_out)
{
    const int groups = gemm_splitk_groups(p.split);
    const int64_t cols = GEMM_SPLITK_THREADS / groups;
    int64_t blocks = (p.slice_stride + cols - 1) / cols;
    /* A grid-stride loop covers the rest: enough blocks to fill any current device. */
    const int64_t cap = max_grid_x > 0 && max_grid_x < 65536 ? max_grid_x : 65536;
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    const dim3 grid((unsigned)blocks, 1, 1);
    *grid_out = (unsigned)blocks;
    switch (groups) {
    case 8: gemm_splitk_reduce_kernel<T, 8><<<grid, GEMM_SPLITK_THREADS, 0, stream>>>(p); break;
    case 4: gemm_splitk_reduce_kernel<T, 4><<<grid, GEMM_SPLITK_THREADS, 0, stream>>>(p); break;
    case 2: gemm_splitk_reduce_kernel<T, 2><<<grid, GEMM_SPLITK_THREADS, 0, stream>>>(p); break;
    default: gemm_splitk_reduce_kernel<T, 1><<<grid, GEMM_SPLITK_THREADS, 0, stream>>>(p); break;
    }
    return duet_gpu_get_last_error();
}

#endif /* DUET_KERNELS_GEMM_SPLITK_CUH */
