/* gemm_dmma_tma.h - the Hopper (sm_90a) f64 GEMM on TMA loads: the launcher's entry point. */
#ifndef DUET_CUDA_GEMM_DMMA_TMA_H
#define DUET_CUDA_GEMM_DMMA_TMA_H

#include <cuda_runtime.h>

#include "common/internal.h"
#include "gemm_fast_tile.cuh"

/* What gemm_dmma_tma_launch ran. */
struct gemm_dmma_tma_ran {
    unsigned grid_x; /* blocks (gridDim.y is the split) */
    int threads;
    size_t shared;
    int tile_m, tile_n; /* the tile is tile_m x tile_n x 16 */
};

/* The split of K the kernel below would run args with (unsplit arguments of the launcher's DMMA
 * tile), given the launcher's planned split: `planned` when the kernel takes the problem with
 * it, else the smallest split of its own that fills the kernel's rounds (mostly for problems of
 * the small tile), else 0 (the launcher keeps its own kernel and plan). */
int gemm_dmma_tma_split(const gf_args<double> &args, int planned, const duet_device_props *props);

/* Queues the f64 GEMM of args (gemm_fast.cuh's arguments for a DMMA tile, split-K slices
 * included: `split` slices of args.slice_k, a multiple of 16) on the sm_90a kernel of
 * kernels/gemm_dmma_tma.cuh, on its own 128 x 128 tiles. Returns false, with nothing queued,
 * when that kernel does not cover it: not an sm_90 device, more than DUET_DMMA_TMA_MAX_ROUNDS
 * and fewer than DUET_DMMA_TMA_MANY_ROUNDS rounds of its tiles, or a last round of the few
 * under DUET_DMMA_TMA_MIN_FILL percent full, m or n of 64
 * or less, A or B without a unit stride, TMA's 16-byte rules (bases, leading and batch
 * strides), sizes past int32 coordinates, a tensor map the driver refuses. Otherwise true,
 * with the launch's error in *err and its geometry in *ran. */
bool gemm_dmma_tma_launch(const gf_args<double> &args, int split, cudaStream_t stream,
                          const duet_device_props *props, cudaError_t *err, gemm_dmma_tma_ran *ran);

#endif /* DUET_CUDA_GEMM_DMMA_TMA_H */
