/* cpu_internal.h - what the cpu backend's files share: kernel names, the launch walk, threads. */
#ifndef DUET_CPU_INTERNAL_H
#define DUET_CPU_INTERNAL_H

#include "backend.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OpenMP is optional: without it the pragmas vanish (no -Wunknown-pragmas) and every loop
 * runs on the calling thread. */
#ifdef DUET_HAVE_OPENMP
#define CPU_OMP(directive) _Pragma(directive)
#else
#define CPU_OMP(directive)
#endif /* DUET_HAVE_OPENMP */

/* for (int64_t x = 0; x < n; ++x) { body } on nt threads (the caller's variable must be named
 * nt: the pragma names it). An OpenMP region whose if clause is false still builds a team of
 * one in libgomp, an allocation and about 1,100 instructions per call: more than all the rest
 * of a small op's host work (docs/performance.md, call overhead). One thread runs it plainly. */
#define CPU_PARALLEL_FOR(x, n, ...)                                                                \
    do {                                                                                           \
        const int64_t cpu_n_ = (n);                                                                \
        if (nt > 1) {                                                                              \
            CPU_OMP("omp parallel for schedule(static) num_threads(nt)")                           \
            for (int64_t x = 0; x < cpu_n_; ++x) { __VA_ARGS__ }                                   \
        } else {                                                                                   \
            for (int64_t x = 0; x < cpu_n_; ++x) { __VA_ARGS__ }                                   \
        }                                                                                          \
    } while (0)

/* The calling thread's share of a per-thread scratch buffer sized for threads shares: its
 * number in the parallel region the op opened when it opened one (threads > 1), else 0. With
 * no region of the op's own the caller's OpenMP number (inside the application's team) says
 * nothing about the buffer, which then holds one share. */
#ifdef DUET_HAVE_OPENMP
#include <omp.h>
static inline int cpu_share_index(int threads) { return threads > 1 ? omp_get_thread_num() : 0; }
#else
static inline int cpu_share_index(int threads)
{
    (void)threads;
    return 0;
}
#endif /* DUET_HAVE_OPENMP */

/* Fixed-trip inner loops of the kernels must unroll completely so that their accumulator
 * arrays live in registers; -O2 alone leaves them in memory. */
#if defined(__clang__)
#define CPU_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && __GNUC__ >= 8
#define CPU_UNROLL _Pragma("GCC unroll 16")
#else
#define CPU_UNROLL
#endif

/* Below this many scalar operations a parallel region costs more than it saves. (Defined on
 * the command line as 1, it sends even tiny shapes down the threaded paths, for testing.) */
#ifndef CPU_PARALLEL_MIN_WORK
#define CPU_PARALLEL_MIN_WORK ((int64_t)1 << 16)
#endif

/* Threads worth using for work scalar operations: 1 below CPU_PARALLEL_MIN_WORK or without
 * OpenMP, else the OpenMP team size. */
int cpu_threads_for(int64_t work);

/* Fills info (if not NULL) with the kernel name "cpu_<op>_<algo>_<suffix>", the plan and one
 * launch. AUTO reports itself with a zero configuration: there is no GPU launch to mirror. */
void cpu_fill_info(duet_launch_info *info, const char *op, const char *suffix, const dt_plan *plan);

/* The threads of a grid-stride launch along x, y and z (grid * block); fails, naming func,
 * when a dimension is 0. */
duet_status cpu_grid_threads(const dt_plan *plan, const char *func, int64_t *tx, int64_t *ty,
                             int64_t *tz);

/* Work on the row segment j0 <= j < j1 of row i of matrix b. */
typedef void (*cpu_row_fn)(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1);

/* Visits every element of batch x rows x cols once, in the waves of a grid of tz x ty x tx
 * threads: wave (b0, i0, j0) covers the block of elements that the grid's threads handle in
 * one iteration of their stride loops. A naive launch is one wave (tz, ty, tx = the shape).
 * Within a wave the rows are shared among threads; each element is written by exactly one
 * call, so the result does not depend on the number of threads. work_per_elem sizes the
 * parallel decision. */
void cpu_walk(int64_t batch, int64_t rows, int64_t cols, int64_t tz, int64_t ty, int64_t tx,
              int64_t work_per_elem, cpu_row_fn fn, void *arg);

/* duet_transpose with in and out one storage (dt_copy2d.in_place; transpose_inplace_cpu.c). */
duet_status cpu_transpose_inplace(dt_context *ctx, void *stream, const dt_copy2d *t,
                                  const dt_plan *plan, duet_launch_info *info);

/* v as int32 in its two's-complement bits (the i32 ops compute modulo 2^32 in uint32_t);
 * 0 when v is NaN, not an integer or outside the int32 range. */
int cpu_to_u32(double v, uint32_t *out);

/* ---- f16, bf16 and i8 gemm (gemm_lowp_cpu.c) ---- */

/* Packs of count lanes x kc elements into panels of width lanes, as gemm_cpu.c's packs, widened
 * to 4-byte elements: f16 and bf16 to f32, i8 to i32 (sign-extended). */
void cpu_gemm_pack_f16(const void *src, int64_t s_lane, int64_t s_k, int64_t count, int64_t kc,
                       int width, void *dst);
void cpu_gemm_pack_bf16(const void *src, int64_t s_lane, int64_t s_k, int64_t count, int64_t kc,
                        int width, void *dst);
void cpu_gemm_pack_i8(const void *src, int64_t s_lane, int64_t s_k, int64_t count, int64_t kc,
                      int width, void *dst);

/* The mv x nv outputs at c (strides rs, cs) = alpha * acc + beta * C in f32 (beta == 0: C is
 * not read), rounded once to C's dtype (nearest even; overflow to inf; NaN stays NaN). acc has
 * rows of acc_ld floats. */
void cpu_gemm_finish_f32(const float *acc, int64_t acc_ld, void *c, int64_t rs, int64_t cs,
                         int64_t mv, int64_t nv, float alpha, float beta);
void cpu_gemm_finish_f16(const float *acc, int64_t acc_ld, void *c, int64_t rs, int64_t cs,
                         int64_t mv, int64_t nv, float alpha, float beta);
void cpu_gemm_finish_bf16(const float *acc, int64_t acc_ld, void *c, int64_t rs, int64_t cs,
                          int64_t mv, int64_t nv, float alpha, float beta);

/* C = beta * C for the cpu_walk rows of a gemm with no product (k == 0 or alpha == 0), C of
 * f32, f16 or bf16, arg a cpu_gemm_scale. */
typedef struct cpu_gemm_scale {
    const dt_view *c;
    float beta;
} cpu_gemm_scale;
void cpu_gemm_scale_row_f32(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1);
void cpu_gemm_scale_row_f16(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1);
void cpu_gemm_scale_row_bf16(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1);

/* Scalar f16 and bf16 conversions (gemm_lowp_cpu.c): exact widening; narrowing rounds to
 * nearest even, overflows to inf and keeps NaN a (quiet) NaN. */
float cpu_f16_to_f32(uint16_t h);
uint16_t cpu_f32_to_f16(float f);
float cpu_bf16_to_f32(uint16_t h);
uint16_t cpu_f32_to_bf16(float f);

/* ---- f32 and f64 gemm on a CBLAS (docs/cpu.md) ---- */

/* One matrix of a gemm as a row-major CBLAS call takes it: C(m x n, row stride ldc, unit
 * column stride) = alpha * op(A) * op(B) + beta * C, op(A) m x k and op(B) k x n, with
 * trans_* = 1 for CblasTrans. a, b and c are the views the call reads (g's a and b, or b and a
 * when the problem was turned into C^T = B^T A^T), strides already swapped to match. */
typedef struct cpu_blas_gemm {
    int trans_a, trans_b;
    int64_t m, n, k, lda, ldb, ldc;
    dt_view a, b, c;
} cpu_blas_gemm;

/* Whether every matrix of g, elem-byte elements, is one CBLAS gemm call with all of m, n, k and
 * the leading dimensions at most int_max; fills *call when it is. Not expressible, so left to
 * duet's own kernel: an operand with no unit stride, a zero or negative stride where the BLAS
 * would step by it, a leading dimension below the row length, C overlapping A or B or its own
 * other batch matrices. A dimension of 1 makes its stride unused: the BLAS is then given the
 * smallest leading dimension it accepts. Pure (gemm_blas_map.c): host tests call it. */
int cpu_blas_map(const dt_gemm *g, size_t elem, int64_t int_max, cpu_blas_gemm *call);

/* Whether duet's own f32/f64 AUTO kernels are the AVX-512 ones on this host (gemm_cpu.c). */
int cpu_gemm_avx512(void);

#ifdef DUET_HAVE_CBLAS
/* Runs g (f32 or f64, k >= 1, alpha != 0) through cblas_sgemm / cblas_dgemm on threads threads
 * when cpu_blas_map accepts it and the library is the faster of the two on this host, and
 * writes the kernel name for the launch info into name; returns 0, having done nothing,
 * otherwise (gemm_blas.c). */
int cpu_gemm_blas(const dt_gemm *g, int threads, char *name, size_t name_size);
#endif /* DUET_HAVE_CBLAS */

#ifdef __cplusplus
}
#endif

#endif /* DUET_CPU_INTERNAL_H */
