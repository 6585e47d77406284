/* tma_map.h - tensor maps of GEMM operands for the sm_90a kernels' TMA loads. */
#ifndef DUET_CUDA_TMA_MAP_H
#define DUET_CUDA_TMA_MAP_H

#include <cuda.h> /* CUtensorMap (the type only; libcuda is not linked) */
#include <stddef.h>
#include <stdint.h>

/* A 3D (inner, outer, batch) map of an operand whose inner dimension is contiguous, with the
 * 128-byte swizzle and zero fill out of range, boxes of box_inner x box_outer x 1 (box_inner
 * elements at most 128 bytes). ld: the outer stride, batch_stride the batch stride, both in
 * elements; batch_stride 0 (a shared operand) maps a batch dimension of 1 that every batch
 * reads at coordinate 0. The driver's encoder is reached through the runtime (duet does not
 * link libcuda). False when it is missing or refuses the map (TMA's 16-byte rules: the base,
 * ld and batch_stride in bytes multiples of 16). */
bool duet_tma_encode_operand(CUtensorMap *map, CUtensorMapDataType type, size_t elem, void *base,
                             int64_t inner, int64_t outer, int64_t ld, int64_t batch,
                             int64_t batch_stride, int box_inner, int box_outer);

#endif /* DUET_CUDA_TMA_MAP_H */
