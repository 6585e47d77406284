/* gemm_naive.cuh - the seeds' naive GEMM: one thread per element of C, global memory only. */
#ifndef DUET_KERNELS_GEMM_NAIVE_CUH
#define DUET_KERNELS_GEMM_NAIVE_CUH

#include "kernel_util.cuh"

/* The numba `matmul` seed with strides and a batch: thread x is column j, y is row i. The
 * common layer clamps grid y and z to the device's limits, so rows and batches are walked with a
 * stride of the grid; x always covers n (grid.x may be up to 2^31 - 1 blocks). */
template <typename T> DUET_GLOBAL void gemm_naive_kernel(const duet_gemm_args<T> g)
{
    typedef typename duet_arith<T>::acc_t acc_t;
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= g.n) return;
    for (int64_t bz = (int64_t)blockIdx.z * blockDim.z + threadIdx.z; bz < g.batch;
         bz += (int64_t)gridDim.z * blockDim.z) {
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < g.m;
             i += (int64_t)gridDim.y * blockDim.y) {
            acc_t tmp = 0;
            for (int64_t k = 0; k < g.k; ++k)
                tmp +=
                    duet_arith<T>::load(g.a.at(bz, i, k)) * duet_arith<T>::load(g.b.at(bz, k, j));
            duet_gemm_store(g, bz, i, j, tmp);
        }
    }
}

#endif /* DUET_KERNELS_GEMM_NAIVE_CUH */
