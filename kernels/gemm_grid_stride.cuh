/* gemm_grid_stride.cuh - the DLI mm_stride GEMM: any grid covers any C with grid-stride loops. */
#ifndef DUET_KERNELS_GEMM_GRID_STRIDE_CUH
#define DUET_KERNELS_GEMM_GRID_STRIDE_CUH

#include "kernel_util.cuh"

/* Each thread starts at its global (z, y, x) index and strides by the grid's total threads in
 * that dimension over batches, rows and columns: the DLI `mm_stride` exercise's loops. */
template <typename T> DUET_GLOBAL void gemm_grid_stride_kernel(const duet_gemm_args<T> g)
{
    typedef typename duet_arith<T>::acc_t acc_t;
    const int64_t stride_z = (int64_t)gridDim.z * blockDim.z;
    const int64_t stride_row = (int64_t)gridDim.y * blockDim.y;
    const int64_t stride_col = (int64_t)gridDim.x * blockDim.x;
    for (int64_t bz = (int64_t)blockIdx.z * blockDim.z + threadIdx.z; bz < g.batch; bz += stride_z)
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < g.m; i += stride_row)
            for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < g.n;
                 j += stride_col) {
                acc_t sum = 0;
                for (int64_t k = 0; k < g.k; ++k)
                    sum += duet_arith<T>::load(g.a.at(bz, i, k)) *
                           duet_arith<T>::load(g.b.at(bz, k, j));
                duet_gemm_store(g, bz, i, j, sum);
            }
}

#endif /* DUET_KERNELS_GEMM_GRID_STRIDE_CUH */
