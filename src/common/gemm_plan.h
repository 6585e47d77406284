/* gemm_plan.h - GEMM planning in plain C: which kernel family runs a problem, and how. */
#ifndef DUET_GEMM_PLAN_H
#define DUET_GEMM_PLAN_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The memory-bound family (kernels/gemm_skinny.cuh) for a narrow C: after an optional
 * transposition (C^T = B^T A^T) the problem has n <= 16 columns, so each element of A takes
 * part in at most 2n operations and reading A once is the whole cost. Its plan:
 */
typedef enum dt_skinny_form {
    DT_SKINNY_NONE = 0,     /* the family does not take the problem              */
    DT_SKINNY_KMAJOR = 1,   /* A contiguous along k, SIMT (f32, f64, i32)         */
    DT_SKINNY_KMAJOR_MMA,   /* A contiguous along k, NVIDIA mma.sync (f16, bf16, i8) */
    DT_SKINNY_MMAJOR        /* A contiguous along m, SIMT (f32, f64, i32)         */
} dt_skinny_form;

typedef struct dt_skinny_plan {
    dt_skinny_form form;
    int transpose;    /* run C^T = B^T A^T (the narrow side was m)                        */
    int nmax;         /* the kernel's column count (>= n after transposition)             */
    int block_rows;   /* rows of C a block computes                                        */
    int threads;      /* threads of a block                                                */
    int64_t kchunk;   /* k a block reads per step; kslice is a multiple of it              */
    int64_t kslice;   /* k of one slice                                                    */
    int64_t kwindow;  /* K-major: k of B a block keeps in shared memory at once (<= kslice,
                         a multiple of kchunk); 0 for M-major                               */
    int split;        /* slices (gridDim.y); > 1: partial sums in the workspace, reduced   */
    int a_vec;        /* A's contiguous runs may be read in vectors (alignment checked)    */
    int b_vec;        /* K-major: B's columns are k-contiguous on 16-byte boundaries       */
    size_t workspace; /* bytes of partial sums (split > 1)                                 */
} dt_skinny_plan;

/* The widest n each form takes. */
enum { DT_SKINNY_MAX_N_SIMT = 16, DT_SKINNY_MAX_N_MMA = 16 };

/* Plans g (AUTO) on the memory-bound family for a device of props, or returns 0 (plan->form
 * DT_SKINNY_NONE) when another family should run it. Pure: the same inputs, the same plan.
 * g's operand bases are read only for their alignment. */
int dt_gemm_plan_skinny(const dt_gemm *g, const duet_device_props *props, dt_skinny_plan *plan);

/* g as the kernels see it under plan: transposed (C^T = B^T A^T) when plan->transpose. */
void dt_gemm_skinny_view(const dt_gemm *g, const dt_skinny_plan *plan, dt_gemm *out);

/*
 * Split-K for a tile family whose grid leaves most of the device idle: an m x n x k problem
 * (batch 1) on bm x bn tiles, each a pipeline over ceil(k / bk) k-tiles, `slots` blocks
 * resident at once. Tiles that fill half the slots or more are not split. Otherwise the
 * k-tiles are cut into `split` slices of `kslice` (a multiple of bk; the last slice may be
 * shorter), as many as allow
 *   - tiles x split within one wave of the slots;
 *   - at least DT_TILE_SPLIT_MIN_KTILES k-tiles a slice (its pipeline fills);
 *   - the partial sums' traffic (split x m x n sums of acc bytes, written then read) at most
 *     half the operands' ((m + n) x k elements of elem bytes): the memory roofline's term, so
 *     a square-ish problem with a short k, whose C is as large as its operands, stays whole.
 * Each slice writes raw f32/i32 partial sums; a reduction adds them in slice order, so the
 * bits do not depend on the run. Pure; returns split (1: no split) and sets *kslice.
 */
enum { DT_TILE_SPLIT_MIN_KTILES = 4 };
int dt_gemm_tile_split(int64_t m, int64_t n, int64_t k, int64_t bm, int64_t bn, int64_t bk,
                       size_t elem, size_t acc, int64_t slots, int64_t *kslice);

#ifdef __cplusplus
}
#endif

#endif /* DUET_GEMM_PLAN_H */
