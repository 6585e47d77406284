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
    int b_nvec;       /* K-major: B's rows are n-contiguous on 16-byte boundaries          */
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

/* Whether the Hopper FP8 kernel takes g's block scales (dt_gemm.sa, sb): grids over k blocks of
 * 128 (a stage), A's over rows at any granularity, B's per 128 columns (a tile half) or per
 * tensor. */
int dt_gemm_wgmma_takes_block_scales(const dt_gemm *g);

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


/*
 * The GPU backends' plan of an AUTO duet_gemm: which kernel family runs it, on which copies of
 * its operands, split how, with how much of the stream's workspace. dt_gemm_plan_gpu is the one
 * place where that is decided, in one ordered list of rules (gemm_plan.c); the launchers run the
 * plan and never decline it. docs/gemm-dispatch.md explains each rule.
 */
typedef enum dt_gemm_family {
    DT_GEMM_FAMILY_NONE = 0,
    DT_GEMM_SKINNY,    /* memory-bound narrow C (kernels/gemm_skinny.cuh)                   */
    DT_GEMM_WGMMA,     /* Hopper wgmma fed by TMA (kernels/gemm_wgmma.cuh, _x3 for 3xTF32)  */
    DT_GEMM_WGMMA_X3,  /* Hopper 3xTF32 on B split once into TF32 big and small parts       */
    DT_GEMM_TCS,       /* swizzled mma.sync, cp.async operands (kernels/gemm_tc_sw.cuh)     */
    DT_GEMM_TC,        /* register-staged mma.sync or MFMA (kernels/gemm_tc.cuh)           */
    DT_GEMM_LOWP_SIMT, /* f16, bf16, i8 without matrix instructions (gemm_lowp_simt.cuh)    */
    DT_GEMM_FAST,      /* f32, f64, i32 tiles by the tuning table's rows (gemm_fast_gpu.inc) */
    DT_GEMM_TC_SMALL,  /* 64 x 64 mma.sync, register-staged operands, k split over a cluster
                          (kernels/gemm_tc.cuh, src/cuda/gemm_tc_small.cu)                 */
    DT_GEMM_TINY       /* small problems of any dtype, compact SIMT (kernels/gemm_tiny.cuh) */
} dt_gemm_family;

/* How an operand's elements lie, as the tensor-core loaders read them: 16-byte runs along k
 * (base, leading stride and batch stride on 16-byte boundaries), 16-byte runs along m or n,
 * or neither. Values match the register loader's TC_KVEC, TC_XVEC and TC_SCALAR. */
typedef enum dt_operand_class {
    DT_OPERAND_ANY = 0,
    DT_OPERAND_X16 = 1,
    DT_OPERAND_K16 = 2
} dt_operand_class;

/* The class of an operand of `elem`-byte elements at base with strides sx (along m or n), sk
 * (along k) and batch stride bs over `batch` matrices. */
dt_operand_class dt_operand_class_of(const void *base, int64_t sx, int64_t sk, int64_t bs,
                                     int64_t batch, size_t elem);

/* What the plan depends on besides the problem: the device, what was built, the environment
 * knobs (docs/environment.md) and the workspace. The backend fills it per call. */
typedef struct dt_gemm_target {
    const duet_device_props *props;
    int nvidia;             /* the CUDA backend (mma.sync, cp.async); else HIP              */
    int wgmma;              /* the sm_90a kernels were built and TMA maps can be encoded     */
    size_t wgmma_shared;    /* shared bytes a wgmma block needs (the larger C's)            */
    size_t wgmma_x3_shared; /* the same for the 3xTF32 kernel                               */
    size_t tcs_shared;      /* the same for the swizzled mma.sync kernel                    */
    int portable;           /* DUET_GEMM_PORTABLE: no Hopper kernels                        */
    int hopper_all;         /* DUET_GEMM_HOPPER_ALL: wgmma at any size                      */
    int x3_inkernel;        /* DUET_GEMM_X3_INKERNEL=1: no B split pre-pass for 3xTF32       */
    int no_pack;            /* DUET_GEMM_NO_PACK=1: no K-major copies for the mma.sync kernels */
    int small;              /* the one-launch rule for small problems (DT_SMALL_STEPS) is on;
                               DUET_GEMM_NO_SMALL=1 turns it off                            */
    int tc_small;           /* the small tensor-core rule (DT_TC_SMALL_STEPS): 0 off
                               (DUET_GEMM_TC_SMALL=0), 1 on, 2 ahead of every other rule up
                               to DT_TC_SMALL_STEPS_ALL (DUET_GEMM_TC_SMALL=all: for
                               measuring it against the others)                              */
    int tiny;               /* the compact small-problem rule (DT_TINY_STEPS): 0 off
                               (DUET_GEMM_TINY=0), 1 on, 2 ahead of every other rule up to
                               DT_TINY_STEPS_ALL (DUET_GEMM_TINY=all)                        */
    size_t workspace_room;  /* bytes of workspace the plan may use (SIZE_MAX: it can grow)  */
} dt_gemm_target;

/* Tile shapes of the families the plan sizes (the kernels static_assert the same values). */
enum {
    DT_WGMMA_BM = 128,
    DT_WGMMA_BN = 256,
    DT_WGMMA_X3_BN = 128,
    DT_WGMMA_KBYTES = 128,
    DT_TCS_BM = 128,
    DT_TCS_BN = 128,
    DT_TCS_KBYTES = 128
};
/*
 * Small problems in one launch. After a flushed L2 every launch of a GEMM costs about 3.5 us
 * on the H200 before it computes anything (one fill of C: 3.1-3.6 us), and the swizzled
 * kernel 6-7 us on a problem of one tile, so a small problem whose operands need K-major
 * copies pays three launches (15-27 us against cuBLAS's 4-7). On NVIDIA such a problem runs in
 * one launch on a kernel that reads any layout when its measure
 *   cost = waves x steps,  waves = ceil(64 x 64 tiles x batch / (4 x SMs)),  steps = ceil(k / 16)
 * is small:
 *   - f16, bf16, i8 that need copies, on the SIMT kernel, cost <= DT_SMALL_STEPS: a step of 16
 *     k costs it about 2 us (latency-bound; the next step's loads overlap the current one's
 *     arithmetic), so at cost 1-6 it ran in 5-17 us against 16-28 us with the copies;
 *   - a narrow C that the memory-bound family's SIMT form would take, only up to
 *     DT_SMALL_STEPS_NARROW: that family splits k over the device and won from cost 5 on
 *     (1 x 1328 x 101 bf16 at cost 7: 12.8 us against 15.5);
 *   - TF32, copies or not, as exact f32 on the f32 tile family (a cp.async pipeline), cost <=
 *     DT_SMALL_STEPS_TF32: 5.5-13 us against 6.2-23 us up to cost 7, level at 9.
 * A 16-bit problem the swizzled kernel takes as it lies stays there (6.4 us on 16^3 against
 * the SIMT kernel's 7.9).
 */
enum {
    DT_SMALL_STEPS = 8,
    DT_SMALL_STEPS_NARROW = 3,
    DT_SMALL_STEPS_TF32 = 8,
    DT_SMALL_TILE = 64,
    DT_SMALL_BK = 16,
    DT_SMALL_BLOCKS_PER_UNIT = 4
};

/*
 * Small problems on tensor cores in one launch (DT_GEMM_TC_SMALL, NVIDIA sm_80+). 64 x 64
 * tiles of four warps read both operands as they lie through registers (no copies, any
 * alignment) and multiply them with mma.sync. Where the tiles leave the device idle, k is
 * split over a cluster of up to DT_TC_SMALL_MAX_SPLIT blocks (sm_90, not in the portable mode)
 * that add their sums through distributed shared memory in a fixed order: one launch, no
 * workspace, the same bits every run. Its measure
 *   cost = waves x steps,  waves = ceil(tiles x split / (DT_TC_SMALL_BLOCKS_PER_UNIT x SMs)),
 *   steps = k-tiles of DT_TC_SMALL_KBYTES per block
 * counts the k-tiles a block waits on in turn. The rule: f16, bf16 and i8 whose operands the
 * swizzled kernel cannot take as they lie (the copies and their launches), that the SIMT
 * one-launch rule does not take, with cost <= DT_TC_SMALL_STEPS (i8: DT_TC_SMALL_STEPS_I8). On
 * the H200's shape sweep (seed 1) it ran those at 1.27-1.71x (bf16 > f32 and f16, geometric
 * means by cost 1, 2, 3-4; i8 1.57-1.76x at cost 1-2) the speed of the copies and the
 * swizzled or wgmma kernel; at cost 5-8 (i8 3-4) at 0.90-0.98x and beyond at 0.37-0.76x (its
 * k-loop waits on memory once per two k-tiles). Against the SIMT kernel's
 * one launch it lost (0.73x): its code, about 140 KiB an instance, is fetched from memory
 * after a flushed L2, about 10 us of a small call. DUET_GEMM_TC_SMALL=all puts the kernel
 * ahead of every rule up to cost DT_TC_SMALL_STEPS_ALL, for such measurements.
 */
enum {
    DT_TC_SMALL_TILE = 64,
    DT_TC_SMALL_KBYTES = 64,
    DT_TC_SMALL_MAX_SPLIT = 8,
    DT_TC_SMALL_BLOCKS_PER_UNIT = 3,
    DT_TC_SMALL_STEPS = 4,
    DT_TC_SMALL_STEPS_I8 = 2,
    DT_TC_SMALL_STEPS_ALL = 64
};

/*
 * Small problems of any dtype on the compact SIMT kernel (DT_GEMM_TINY, kernels/gemm_tiny.cuh,
 * NVIDIA), ahead of every other rule: blocks of 16 x 16 threads with TM x TM outputs each
 * (tiles of 16 TM), k in steps of DT_TINY_BK, any layout as it lies, one launch. TM is the
 * largest of 4, 2, 1 whose tiles (all batches) number at least the SMs (else 1): a problem of
 * few tiles runs on small ones, whose threads each execute less; and a smaller TM where its
 * tiles take fewer waves (a batch of many tiny matrices, most of a large tile empty). Its measure
 *   cost = waves x steps,  waves = ceil(tiles x batch / (resident blocks x SMs)),
 *   steps = ceil(k / DT_TINY_BK)
 * counts the steps a block runs in turn. The rule takes cost <= DT_TINY_STEPS, every dtype.
 * On the H200's shape sweep (duet-bench --sweep 300 --seed 1) it ran what it takes at these
 * geometric-mean speeds over the kernels that ran them before (the SIMT tiles of every dtype,
 * the memory-bound family, the swizzled and wgmma kernels on copies):
 *   cost 1: 1.31-1.51x (f16, bf16 > f32, f32, TF32, f64; i8 1.20x), nearly every problem faster;
 *   cost 2-4: 1.12-1.82x (f64 3-4: 1.06-1.12x, a third slower: the memory-bound family's
 *   4-column forms); cost 5-8: 1.29-1.40x for f32, TF32, f64, f16 > f32 and bf16, 2-3 of each
 *   dtype's 14-26 problems slower; 9-16: 1.08-1.16x for f32, TF32 and f64 with a third slower,
 *   0.72-0.81x for the 16-bit inputs.
 * DUET_GEMM_TINY=all takes every problem up to DT_TINY_STEPS_ALL (how it was measured).
 */
enum { DT_TINY_BK = 16, DT_TINY_THREADS = 256, DT_TINY_STEPS = 8, DT_TINY_STEPS_ALL = 16 };
/* Resident blocks an SM by tile side (the kernel's launch bounds). */
enum { DT_TINY_BLOCKS_64 = 2, DT_TINY_BLOCKS_32 = 3, DT_TINY_BLOCKS_16 = 4 };
static inline int dt_tiny_blocks_per_unit(int tm)
{
    return tm == 4 ? DT_TINY_BLOCKS_64 : tm == 2 ? DT_TINY_BLOCKS_32 : DT_TINY_BLOCKS_16;
}

/*
 * Two rules from the shape sweep (duet-bench --sweep 300 --seed 1 on the H200, ratio =
 * cuBLAS time / duet time, medians over the problems of each group):
 *   - DT_TINY_K: with k <= 16 a problem runs on the SIMT tile kernels in one launch (f16,
 *     bf16 and i8 on the SIMT low-precision kernel, f32 in any math mode, f64 and i32 on the
 *     f32/f64/i32 tile family): C is an outer product bound by its own writes, where those
 *     ran at 0.74-0.97 against 0.35-0.45 for wgmma on K-major copies, 0.5-0.6 for the
 *     swizzled kernel and 0.27-0.56 for the memory-bound family's 16-column forms. Inputs
 *     with tensor-core families only up to DT_TINY_K_WAVES waves of 64 x 64 tiles (4 blocks
 *     an SM) and not where wgmma takes the operands as they lie: past about 1,900 tiles the
 *     SIMT kernel's stores ran slower than wgmma on copies (0.2-0.9 of its speed), and wgmma
 *     as they lie ran faster at every size.
 *   - DT_EXACT_F32_NARROW: f32 with a TF32 or 3xTF32 math mode and a C at most 64 wide runs
 *     as exact f32 (the memory-bound family up to 8, the f32 tile family above): 0.73 for the
 *     tile family against 0.40-0.49 for the tensor-core families on copies; 3xTF32 on the
 *     mma.sync kernel ran at 0.09-0.41 of cuBLAS's SGEMM. Not TF32 whose operands the
 *     swizzled kernel reads as they lie, in one batch or with k at most
 *     DT_EXACT_F32_NARROW_BATCH_K (it splits k for one batch only): on the H200's sweep those
 *     ran 0.33-0.56 as exact f32 and 0.79-1.21 on the swizzled kernel (4096 x 16 x 4096:
 *     0.43 and 0.81), batches of k 384-1000 0.37-0.46 and 0.50-0.78, while batches of k
 *     2944-5088 lost (1.27 and 0.41 as exact f32, 0.51 and 0.29 swizzled).
 */
enum {
    DT_TINY_K = 16,
    DT_TINY_K_WAVES = 3,
    DT_EXACT_F32_NARROW = 64,
    DT_EXACT_F32_NARROW_BATCH_K = 1024
};

/* With fewer wgmma tiles (all batches) than this many quarters of the SM count, the Hopper
 * path leaves most SMs idle and the mma.sync kernel's tiles spread better: on the H100 it ran
 * at 0.89x cuBLAS at 2048^3 (128 tiles, one wave), 0.67x at 1536^3 (72 tiles), about 0.5x at
 * 1024^3. */
enum { DT_WGMMA_MIN_WAVE_QUARTERS = 3 };

typedef struct dt_gemm_gpu_plan {
    dt_gemm_family family;
    duet_math_mode math;     /* the math that runs (DEFAULT: TF32 without its instructions)  */
    int pack_a, pack_b;      /* copy A (B) K-major, rows of ld elements (16-byte multiples)  */
    int64_t ld;
    int split;               /* TCS: k slices reduced in order (1: whole); SKINNY: in skinny */
    int64_t kslice;
    size_t pack_bytes;       /* workspace bytes of the copies, A's then B's (WGMMA_X3: A's,
                                then B's big and small parts), each a multiple of 256       */
    size_t a_bytes;          /* of which A's copy                                            */
    size_t split_bytes;      /* then the partial sums (f32; i32 for i8)                      */
    dt_skinny_plan skinny;   /* SKINNY: the family's own plan                                */
    int tile;                /* TINY: the tile's side, 16 x the micro-tile (16, 32 or 64)     */
    const char *rule;        /* the rule that chose the family, for tests and docs           */
} dt_gemm_gpu_plan;

/* Plans g (AUTO, after the common layer's normalisation) on target t. Pure. */
void dt_gemm_plan_gpu(const dt_gemm *g, const dt_gemm_target *t, dt_gemm_gpu_plan *plan);

/* The workspace bytes plan uses in all. */
static inline size_t dt_gemm_gpu_plan_workspace(const dt_gemm_gpu_plan *plan)
{
    return plan->family == DT_GEMM_SKINNY ? plan->skinny.workspace
                                          : plan->pack_bytes + plan->split_bytes;
}

/*
 * duet_gemm_ex's epilogue fused into the GEMM's store. g carries it (g->epi; g->c is D, of
 * D's dtype). Plans g with dt_gemm_plan_gpu as the plain GEMM of D's width (C of the inputs'
 * 16-bit dtype or f32: the fused store converts to D's dtype itself) into *plan, and returns
 * 1 when that plan's kernel applies the epilogue, beta 0 for the GEMM (C is the epilogue's),
 * no intermediate: the Hopper wgmma family (packed or not) on 16-bit, TF32 or 8-bit float
 * inputs, f32 epilogue math, D and every operand f32, f16 or bf16; the memory-bound family
 * and the swizzled tensor-core kernel where they split k (their reduction runs the pass's
 * steps: every dtype and operand the pass takes). 0: the GEMM and the epilogue pass run apart.
 * Pure.
 */
int dt_gemm_epilogue_fuses(const dt_gemm *g, const dt_gemm_target *t, dt_gemm_gpu_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* DUET_GEMM_PLAN_H */
