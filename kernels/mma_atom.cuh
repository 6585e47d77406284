/* mma_atom.cuh - the neutral matrix-fragment vocabulary of duet's tensor-core GEMM (both vendors). */
#ifndef DUET_KERNELS_MMA_ATOM_CUH
#define DUET_KERNELS_MMA_ATOM_CUH

#include "compat.h"

#include <stdint.h>

/*
 * One warp (NVIDIA) or wavefront (AMD) multiplies an M x KW-word tile of A by a KW-word x N
 * tile of B into an M x N accumulator: an "atom". Every input kind is seen as 32-bit words
 * packed along k (two f16/bf16, one f32/tf32, four i8 per word), and both operands sit in
 * shared memory k-major: A as rows of m, B as rows of n, each row a run of words along k with
 * a pitch in words. With that one layout every vendor's fragment load is a word load from
 * (row, word) positions, and the GEMM kernel (gemm_tc.cuh) reads the same on both vendors.
 *
 * An atom type provides:
 *   M, N, KW            the atom's shape (KW: k extent in 32-bit words)
 *   acc_t               float, or int32_t for i8 (wrapping modulo 2^32)
 *   cfrag               one atom's accumulators of a lane, indexable [0, C_REGS) (an array on
 *                       NVIDIA, the MFMA's own vector type on AMD)
 *   A_REGS, B_REGS      32-bit words of one A / B fragment per lane
 *   C_REGS              accumulator elements per lane
 *   saddr, to_saddr(p), offset(s, words)
 *                       a shared-memory address (NVIDIA: the 32-bit shared window, AMD: a
 *                       pointer), made once from a pointer and moved by words
 *   load_a(a, s, pitch, lane)   s: word (0, 0) of the atom's M x KW block of A in shared
 *   load_b(b, s, pitch, lane)   s: word (0, 0) of the atom's N x KW block of B in shared
 *   mma(c, a, b)                c += a * b
 *   c_pos(lane, i, row, col)    where accumulator element i of this lane lives in the atom
 * and a constant `available` (false where the target has no such instruction; the kernel is
 * then never launched there, and the launcher picks the SIMT kernel).
 *
 * Input kinds (the KIND template argument): f16, bf16, tf32 (f32 inputs rounded to tf32 in
 * registers), i8, and the 8-bit floats as (A, B) pairs, e4m3 or e5m2 each (four bytes a word,
 * f32 accumulators; NVIDIA sm_89 and newer, used by the memory-bound family's MMA form only).
 * 3xTF32 uses the tf32 atom three times (gemm_tc.cuh).
 */
enum duet_mma_kind {
    DUET_MMA_F16 = 0,
    DUET_MMA_BF16 = 1,
    DUET_MMA_TF32 = 2,
    DUET_MMA_I8 = 3,
    DUET_MMA_F8_44 = 4, /* A e4m3, B e4m3 */
    DUET_MMA_F8_45 = 5, /* A e4m3, B e5m2 */
    DUET_MMA_F8_54 = 6, /* A e5m2, B e4m3 */
    DUET_MMA_F8_55 = 7  /* A e5m2, B e5m2 */
};

/* Whether KIND is one of the 8-bit float pairs. */
DUET_HOST_DEVICE constexpr bool duet_mma_is_f8(int kind)
{
    return kind >= DUET_MMA_F8_44 && kind <= DUET_MMA_F8_55;
}

#if DUET_GPU_CUDA
#include "mma_sync_nv.cuh"
#else
#include "mma_mfma_amd.cuh"
#endif /* DUET_GPU_CUDA */

#endif /* DUET_KERNELS_MMA_ATOM_CUH */
