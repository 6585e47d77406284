/* gemm_wgmma_x3.h - launch of the Hopper 3xTF32 kernel (kernels/gemm_wgmma_x3.cuh), for
 * gemm_wgmma.cu, which checks coverage and builds the tensor maps. */
#ifndef DUET_CUDA_GEMM_WGMMA_X3_H
#define DUET_CUDA_GEMM_WGMMA_X3_H

#include <cuda.h>
#include <cuda_runtime.h>
#include <stddef.h>

struct wg_params;

/* Block tile 128 x 128: A's tensor map has 128-row boxes of one 128-byte K slice, B's too. */
#define GEMM_WGMMA_X3_BN 128

cudaError_t gemm_wgmma_x3_launch(const CUtensorMap &ta, const CUtensorMap &tb,
                                 const wg_params &p, int grid, cudaStream_t stream,
                                 size_t *shared);
/* Dynamic shared memory the kernel needs (the device must allow it per block). */
size_t gemm_wgmma_x3_shared_bytes(void);

#endif /* DUET_CUDA_GEMM_WGMMA_X3_H */
