/* gemm_tiled.cuh - the seeds' shared-memory GEMM: t x t tiles of A and B, barriers around use. */
#ifndef DUET_KERNELS_GEMM_TILED_CUH
#define DUET_KERNELS_GEMM_TILED_CUH

#include "kernel_util.cuh"

/* numba's `fast_matmul` (the bounds-guarded version): tile edge t = blockDim.x = blockDim.y,
 * chosen at run time (1..32), so the two tiles live in dynamic shared memory (2*t*t elements).
 * Loads that fall outside A or B write 0 into the tile, so the partial product needs no
 * guard and every thread reaches both barriers. Unlike the seed, the k loop runs over
 * ceil(k / t) tiles, not over gridDim.x, which only works for square matrices. */
template <typename T> DUET_GLOBAL void gemm_tiled_kernel(const duet_gemm_args<T> g)
{
    typedef typename duet_arith<T>::acc_t acc_t;
    extern __shared__ __align__(16) unsigned char gemm_tiled_smem[];
    const int t = (int)blockDim.x;
    acc_t *sA = reinterpret_cast<acc_t *>(gemm_tiled_smem);
    acc_t *sB = sA + t * t;
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t j = (int64_t)blockIdx.x * t + tx;

    /* Block-uniform loops (batch and folded row tiles), so the barriers inside are legal. */
    for (int64_t bz = blockIdx.z; bz < g.batch; bz += gridDim.z) {
        for (int64_t by = blockIdx.y; by * t < g.m; by += gridDim.y) {
            const int64_t i = by * t + ty;
            acc_t tmp = 0;
            for (int64_t k0 = 0; k0 < g.k; k0 += t) {
                // Preload data into shared memory
                sA[ty * t + tx] = (i < g.m && k0 + tx < g.k)
                                      ? duet_arith<T>::load(g.a.at(bz, i, k0 + tx))
                                      : acc_t(0);
                sB[ty * t + tx] = (k0 + ty < g.k && j < g.n)
                                      ? duet_arith<T>::load(g.b.at(bz, k0 + ty, j))
                                      : acc_t(0);
                // Wait until all threads finish preloading
                duet_barrier();
                // Computes partial product on the shared memory
                for (int q = 0; q < t; ++q) tmp += sA[ty * t + q] * sB[q * t + tx];
                // Wait until all threads finish computing
                duet_barrier();
            }
            if (i < g.m && j < g.n) duet_gemm_store(g, bz, i, j, tmp);
        }
    }
}

#endif /* DUET_KERNELS_GEMM_TILED_CUH */
