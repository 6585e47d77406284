/* gemm_wgmma_x3.h - launches of the Hopper 3xTF32 kernels (kernels/gemm_wgmma_x3.cuh), for
 * gemm_wgmma.cu, which checks coverage and builds the tensor maps. */
#ifndef DUET_CUDA_GEMM_WGMMA_X3_H
#define DUET_CUDA_GEMM_WGMMA_X3_H

#include <cuda.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

struct wg_params;

/* Block tile 128 x 128: A's tensor map has 128-row boxes of one 128-byte K slice, B's too. */
#define GEMM_WGMMA_X3_BN 128

/* tbs NULL: tb maps B itself, which the kernel splits in shared memory. Otherwise tb and tbs
 * map B's big and small parts from gemm_wgmma_x3_split. */
cudaError_t gemm_wgmma_x3_launch(const CUtensorMap &ta, const CUtensorMap &tb,
                                 const CUtensorMap *tbs, const wg_params &p, int grid,
                                 cudaStream_t stream, size_t *shared);
/* Dynamic shared memory the GEMM kernel needs (the device must allow it per block). */
size_t gemm_wgmma_x3_shared_bytes(void);

/* Splits the k x n f32 matrix at src (element (kk, j) of batch b at b bs + kk rs + j cs) into
 * big = tf32(x) and small = tf32(x - big), stored K-major: element (kk, j) of batch b at
 * (b n + j) ld + kk of big and of small. grid receives the launch's grid. */
cudaError_t gemm_wgmma_x3_split(const float *src, int64_t rs, int64_t cs, int64_t bs, int64_t k,
                                int64_t n, int64_t batch, float *big, float *small, int64_t ld,
                                cudaStream_t stream, unsigned grid[3]);

#endif /* DUET_CUDA_GEMM_WGMMA_X3_H */
