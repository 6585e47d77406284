/* gemm_cpu.c - GEMM on the host: the seeds' loops, and a packed, cache-blocked kernel for AUTO. */
#define _POSIX_C_SOURCE 200809L

#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

/* x86-64 hosts get AVX2 + FMA micro-kernels chosen at run time, so one build runs on any
 * x86-64 and is fast on the ones that have them. DUET_CPU_PORTABLE keeps to plain C. */
#if !defined(DUET_CPU_PORTABLE) && defined(__GNUC__) && defined(__x86_64__)
#define CPU_GEMM_X86 1
#include <immintrin.h>
#endif

/* alpha and beta in the arithmetic of the dtype: f32 in float like the GPU kernels, i32 as
 * the uint32_t bits of the int32 value so that every product and sum wraps modulo 2^32. */
typedef union gemm_scalar {
    float f32;
    double f64;
    uint32_t u32;
} gemm_scalar;

typedef struct gemm_job {
    const dt_gemm *g;
    gemm_scalar alpha, beta;
    int64_t tile;
} gemm_job;

/* The largest tile of TILED: a tile x tile block of threads is at most 1024 on a GPU. */
#define GEMM_TILE_MAX 32

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- reference loops: NAIVE, GRID_STRIDE and TILED ------------------------------------------ */

/* Outputs j0 <= j < j1 of row i, each the way one thread of the naive kernel computes it: a dot
 * product over k in ascending order, then alpha and beta (beta == 0 never reads C). TILED
 * adds the same products in the same order, so the three reference algorithms compute the
 * same sums. scale_row is C = beta * C, for a problem that has no product to add. */
#define GEMM_REFERENCE(SFX, T, F)                                                                  \
    static void gemm_row_##SFX(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)            \
    {                                                                                              \
        const gemm_job *job = arg;                                                                 \
        const dt_gemm *g = job->g;                                                                 \
        const T alpha = job->alpha.F, beta = job->beta.F;                                          \
        const T *a = (const T *)g->a.base + b * g->a.bs + i * g->a.rs;                             \
        const T *bm = (const T *)g->b.base + b * g->b.bs;                                          \
        T *c = (T *)g->c.base + b * g->c.bs + i * g->c.rs;                                         \
        for (int64_t j = j0; j < j1; ++j) {                                                        \
            T sum = 0;                                                                             \
            for (int64_t p = 0; p < g->k; ++p)                                                     \
                sum += a[p * g->a.cs] * bm[p * g->b.rs + j * g->b.cs];                             \
            T *cj = c + j * g->c.cs;                                                               \
            *cj = beta == 0 ? alpha * sum : alpha * sum + beta * *cj;                              \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void gemm_scale_row_##SFX(void *arg, int64_t b, int64_t i, int64_t j0, int64_t j1)      \
    {                                                                                              \
        const gemm_job *job = arg;                                                                 \
        const dt_gemm *g = job->g;                                                                 \
        const T beta = job->beta.F;                                                                \
        T *c = (T *)g->c.base + b * g->c.bs + i * g->c.rs;                                         \
        for (int64_t j = j0; j < j1; ++j)                                                          \
            c[j * g->c.cs] = beta == 0 ? (T)0 : beta * c[j * g->c.cs];                             \
    }                                                                                              \
                                                                                                   \
    /* One tile x tile block of C, k walked in steps of tile as the shared-memory kernel           \
     * does; acc plays the part of the per-thread sums. */                                         \
    static void gemm_tile_##SFX(const gemm_job *job, int64_t b, int64_t i0, int64_t j0)            \
    {                                                                                              \
        const dt_gemm *g = job->g;                                                                 \
        const int64_t t = job->tile;                                                               \
        const int64_t mi = min64(t, g->m - i0), nj = min64(t, g->n - j0);                          \
        const T alpha = job->alpha.F, beta = job->beta.F;                                          \
        const T *a = (const T *)g->a.base + b * g->a.bs;                                           \
        const T *bm = (const T *)g->b.base + b * g->b.bs;                                          \
        T *c = (T *)g->c.base + b * g->c.bs;                                                       \
        T acc[GEMM_TILE_MAX * GEMM_TILE_MAX];                                                      \
        for (int64_t x = 0; x < mi * nj; ++x) acc[x] = 0;                                          \
        for (int64_t p0 = 0; p0 < g->k; p0 += t) {                                                 \
            const int64_t p1 = min64(p0 + t, g->k);                                                \
            for (int64_t r = 0; r < mi; ++r) {                                                     \
                T *row = acc + r * nj;                                                             \
                for (int64_t p = p0; p < p1; ++p) {                                                \
                    const T av = a[(i0 + r) * g->a.rs + p * g->a.cs];                              \
                    const T *brow = bm + p * g->b.rs + j0 * g->b.cs;                               \
                    for (int64_t q = 0; q < nj; ++q) row[q] += av * brow[q * g->b.cs];             \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        for (int64_t r = 0; r < mi; ++r) {                                                         \
            T *cr = c + (i0 + r) * g->c.rs + j0 * g->c.cs;                                         \
            for (int64_t q = 0; q < nj; ++q) {                                                     \
                const T s = acc[r * nj + q];                                                       \
                cr[q * g->c.cs] = beta == 0 ? alpha * s : alpha * s + beta * cr[q * g->c.cs];      \
            }                                                                                      \
        }                                                                                          \
    }

GEMM_REFERENCE(f32, float, f32)
GEMM_REFERENCE(f64, double, f64)
GEMM_REFERENCE(i32, uint32_t, u32)

/* ---- AUTO: packed panels and micro-kernels ------------------------------------------------- */

/* The Goto/BLIS scheme: a kc x nc block of B and an mc x kc block of A are copied into
 * panels that the micro-kernel reads with unit stride, whatever the strides, transposes or
 * layouts of the operands; the kc x nr sliver of B stays in L1 while an mc x kc block of A
 * sits in L2 and a kc x nc block of B in L2/L3. Each micro-kernel call adds kc products to an
 * mr x nr tile of register accumulators. */
#define GEMM_KC      256
#define GEMM_MC      168        /* a multiple of every mr (4, 6 and 12)       */
#define GEMM_B_BYTES (4u << 20) /* the packed block of B: nc = 4 MiB / (kc e) */
#define GEMM_NC_ACC  512        /* nc of f16 and bf16 inputs (f32 sums of C)   */
#define GEMM_THREAD_WORK ((int64_t)1 << 27) /* the least work worth a thread (mnk)   */

/* count lanes (rows of A, columns of B) of kc elements each, lane l element p at
 * src[l * s_lane + p * s_k], into panels of width lanes: panel q holds lane q * width + w,
 * element p, at q * width * kc + p * width + w. The lanes past count are zero, so edge tiles
 * run the full micro-kernel and only their live part is stored. */
#define GEMM_PACK(BITS, U)                                                                         \
    static void gemm_pack_##BITS(const void *srcp, int64_t s_lane, int64_t s_k, int64_t count,     \
                                 int64_t kc, int width, void *dstp)                                \
    {                                                                                              \
        const U *src = srcp;                                                                       \
        U *dst = dstp;                                                                             \
        for (int64_t q = 0; q < count; q += width) {                                               \
            const int64_t live = min64(width, count - q);                                          \
            const U *lane0 = src + q * s_lane;                                                     \
            for (int64_t p = 0; p < kc; ++p) {                                                     \
                const U *s = lane0 + p * s_k;                                                      \
                int64_t w = 0;                                                                     \
                for (; w < live; ++w) dst[w] = s[w * s_lane];                                      \
                for (; w < width; ++w) dst[w] = 0;                                                 \
                dst += width;                                                                      \
            }                                                                                      \
        }                                                                                          \
    }

GEMM_PACK(32, uint32_t)
GEMM_PACK(64, uint64_t)

/* The live mv x nv part of an accumulator tile (row length nr) into C. The first block of k
 * applies beta (beta == 0: C is not read); later blocks add to what the first stored. */
#define GEMM_UPDATE(SFX, T, F)                                                                     \
    static void gemm_update_##SFX(const void *abp, int nr, void *cp, int64_t rs, int64_t cs,       \
                                  int64_t mv, int64_t nv, gemm_scalar al, gemm_scalar be,          \
                                  int first)                                                       \
    {                                                                                              \
        const T *ab = abp;                                                                         \
        T *c = cp;                                                                                 \
        const T alpha = al.F, beta = be.F;                                                         \
        for (int64_t r = 0; r < mv; ++r) {                                                         \
            const T *x = ab + r * nr;                                                              \
            T *y = c + r * rs;                                                                     \
            if (!first)                                                                            \
                for (int64_t q = 0; q < nv; ++q) y[q * cs] += alpha * x[q];                        \
            else if (beta == 0)                                                                    \
                for (int64_t q = 0; q < nv; ++q) y[q * cs] = alpha * x[q];                         \
            else                                                                                   \
                for (int64_t q = 0; q < nv; ++q) y[q * cs] = alpha * x[q] + beta * y[q * cs];      \
        }                                                                                          \
    }

GEMM_UPDATE(f32, float, f32)
GEMM_UPDATE(f64, double, f64)
GEMM_UPDATE(i32, uint32_t, u32)

/* ab (mr x nr, row-major) = the sum over p < kc of a[p][0..mr) x b[p][0..nr), in plain C.
 * The fixed trip counts let the compiler keep acc in vector registers at -O2 (mr x nr is
 * sized for 16 SSE registers). */
#define GEMM_UKR_C(SFX, T, MR, NR)                                                                 \
    static void gemm_ukr_##SFX##_c(int64_t kc, const void *ap, const void *bp, void *abp)          \
    {                                                                                              \
        const T *restrict a = ap;                                                                  \
        const T *restrict b = bp;                                                                  \
        T *restrict ab = abp;                                                                      \
        T acc[MR][NR];                                                                             \
        CPU_UNROLL for (int r = 0; r < MR; ++r) CPU_UNROLL for (int c = 0; c < NR; ++c)            \
            acc[r][c] = 0;                                                                         \
        for (int64_t p = 0; p < kc; ++p) {                                                         \
            CPU_UNROLL for (int r = 0; r < MR; ++r)                                                \
            {                                                                                      \
                const T av = a[p * MR + r];                                                        \
                CPU_UNROLL for (int c = 0; c < NR; ++c) acc[r][c] += av * b[p * NR + c];           \
            }                                                                                      \
        }                                                                                          \
        CPU_UNROLL for (int r = 0; r < MR; ++r) CPU_UNROLL for (int c = 0; c < NR; ++c)            \
            ab[r * NR + c] = acc[r][c];                                                            \
    }

GEMM_UKR_C(f32, float, 4, 8)
GEMM_UKR_C(f64, double, 4, 4)
GEMM_UKR_C(i32, uint32_t, 4, 8)

#ifdef CPU_GEMM_X86
/* 6 x 16 floats: 12 ymm accumulators, 2 for the row of B, 1 for the broadcast of A - the
 * 16 registers of AVX2 exactly. */
__attribute__((target("avx2,fma"))) static void gemm_ukr_f32_avx2(int64_t kc, const void *ap,
                                                                  const void *bp, void *abp)
{
    const float *a = ap, *b = bp;
    float *ab = abp;
    __m256 acc[6][2];
    CPU_UNROLL for (int r = 0; r < 6; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t p = 0; p < kc; ++p, a += 6, b += 16) {
        const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        CPU_UNROLL for (int r = 0; r < 6; ++r)
        {
            const __m256 av = _mm256_broadcast_ss(a + r);
            acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
        }
    }
    CPU_UNROLL for (int r = 0; r < 6; ++r)
    {
        _mm256_storeu_ps(ab + r * 16, acc[r][0]);
        _mm256_storeu_ps(ab + r * 16 + 8, acc[r][1]);
    }
}

/* 6 x 8 doubles, the same register budget. */
__attribute__((target("avx2,fma"))) static void gemm_ukr_f64_avx2(int64_t kc, const void *ap,
                                                                  const void *bp, void *abp)
{
    const double *a = ap, *b = bp;
    double *ab = abp;
    __m256d acc[6][2];
    CPU_UNROLL for (int r = 0; r < 6; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_pd();
    for (int64_t p = 0; p < kc; ++p, a += 6, b += 8) {
        const __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
        CPU_UNROLL for (int r = 0; r < 6; ++r)
        {
            const __m256d av = _mm256_broadcast_sd(a + r);
            acc[r][0] = _mm256_fmadd_pd(av, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_pd(av, b1, acc[r][1]);
        }
    }
    CPU_UNROLL for (int r = 0; r < 6; ++r)
    {
        _mm256_storeu_pd(ab + r * 8, acc[r][0]);
        _mm256_storeu_pd(ab + r * 8 + 4, acc[r][1]);
    }
}

/* 6 x 16 int32: the low 32 bits of each product are the same signed or unsigned. */
__attribute__((target("avx2"))) static void gemm_ukr_i32_avx2(int64_t kc, const void *ap,
                                                              const void *bp, void *abp)
{
    const uint32_t *a = ap, *b = bp;
    uint32_t *ab = abp;
    __m256i acc[6][2];
    CPU_UNROLL for (int r = 0; r < 6; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int64_t p = 0; p < kc; ++p, a += 6, b += 16) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)b);
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 8));
        CPU_UNROLL for (int r = 0; r < 6; ++r)
        {
            const __m256i av = _mm256_set1_epi32((int)a[r]);
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_mullo_epi32(av, b0));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_mullo_epi32(av, b1));
        }
    }
    CPU_UNROLL for (int r = 0; r < 6; ++r)
    {
        _mm256_storeu_si256((__m256i *)(ab + r * 16), acc[r][0]);
        _mm256_storeu_si256((__m256i *)(ab + r * 16 + 8), acc[r][1]);
    }
}

/* AVX-512 (Zen 4/5, Skylake-X and later): 32 zmm registers hold a 12 x 32 f32 (12 x 16 f64)
 * tile in 24 accumulators, with 2 for the row of B and 1 for the broadcast of A. Each output
 * still takes its products one fma at a time in ascending p, as the AVX2 kernels do. */
#define GEMM_UKR_AVX512(SFX, T, V, NR, LOAD, BCAST, FMA, ZERO, STORE)                             \
    __attribute__((target("avx512f"))) static void gemm_ukr_##SFX##_avx512(                       \
        int64_t kc, const void *ap, const void *bp, void *abp)                                     \
    {                                                                                              \
        const T *a = ap, *b = bp;                                                                  \
        T *ab = abp;                                                                               \
        const int h = NR / 2;                                                                      \
        V acc[12][2];                                                                              \
        CPU_UNROLL for (int r = 0; r < 12; ++r) acc[r][0] = acc[r][1] = ZERO();                    \
        for (int64_t p = 0; p < kc; ++p, a += 12, b += NR) {                                       \
            const V b0 = LOAD(b), b1 = LOAD(b + h);                                                \
            CPU_UNROLL for (int r = 0; r < 12; ++r)                                                \
            {                                                                                      \
                const V av = BCAST(a[r]);                                                          \
                acc[r][0] = FMA(av, b0, acc[r][0]);                                                \
                acc[r][1] = FMA(av, b1, acc[r][1]);                                                \
            }                                                                                      \
        }                                                                                          \
        CPU_UNROLL for (int r = 0; r < 12; ++r)                                                    \
        {                                                                                          \
            STORE(ab + r * NR, acc[r][0]);                                                         \
            STORE(ab + r * NR + h, acc[r][1]);                                                     \
        }                                                                                          \
    }

GEMM_UKR_AVX512(f32, float, __m512, 32, _mm512_loadu_ps, _mm512_set1_ps, _mm512_fmadd_ps,
                _mm512_setzero_ps, _mm512_storeu_ps)
GEMM_UKR_AVX512(f64, double, __m512d, 16, _mm512_loadu_pd, _mm512_set1_pd, _mm512_fmadd_pd,
                _mm512_setzero_pd, _mm512_storeu_pd)

static int cpu_has_avx512(void) { return __builtin_cpu_supports("avx512f"); }

static int cpu_has_avx2_fma(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif /* CPU_GEMM_X86 */

int cpu_gemm_avx512(void)
{
#ifdef CPU_GEMM_X86
    return cpu_has_avx512();
#else
    return 0;
#endif /* CPU_GEMM_X86 */
}

/* ---- per-dtype table ----------------------------------------------------------------------- */

typedef void (*gemm_tile_fn)(const gemm_job *job, int64_t b, int64_t i0, int64_t j0);
typedef void (*gemm_pack_fn)(const void *src, int64_t s_lane, int64_t s_k, int64_t count,
                             int64_t kc, int width, void *dst);
typedef void (*gemm_update_fn)(const void *ab, int nr, void *c, int64_t rs, int64_t cs, int64_t mv,
                               int64_t nv, gemm_scalar alpha, gemm_scalar beta, int first);
typedef void (*gemm_ukr_fn)(int64_t kc, const void *a, const void *b, void *ab);

typedef struct gemm_kernel {
    int mr, nr;
    gemm_ukr_fn ukr;
} gemm_kernel;

typedef void (*gemm_finish_fn)(const float *acc, int64_t acc_ld, void *c, int64_t rs, int64_t cs,
                               int64_t mv, int64_t nv, float alpha, float beta);

/* One row per supported (A and B, C) dtype pair. The packed panels, the micro-kernel and the
 * accumulators are in the compute dtype (elem bytes); A and B are read as in_elem bytes and
 * widened by pack, C is c_elem bytes. f16 and bf16 inputs keep f32 sums of the whole of k and
 * finish C once (finish); the others add each block of k to C (update). The seeds' algorithms
 * (row, tile) exist for f32, f64 and i32 only: the common layer sends the rest to AUTO. */
typedef struct gemm_type {
    duet_dtype dtype, c_dtype, compute;
    const char *suffix; /* of the kernel name */
    size_t elem, in_elem, c_elem;
    cpu_row_fn row, scale_row;
    gemm_tile_fn tile;
    gemm_pack_fn pack;
    gemm_update_fn update;
    gemm_finish_fn finish;
    gemm_kernel portable;
} gemm_type;

#define F32 DUET_DTYPE_F32
#define F64 DUET_DTYPE_F64
#define I32 DUET_DTYPE_I32
#define F16 DUET_DTYPE_F16
#define BF16 DUET_DTYPE_BF16
#define I8 DUET_DTYPE_I8

static const gemm_type gemm_types[] = {
    {F32, F32, F32, "f32", 4, 4, 4, gemm_row_f32, gemm_scale_row_f32, gemm_tile_f32, gemm_pack_32,
     gemm_update_f32, NULL, {4, 8, gemm_ukr_f32_c}},
    {F64, F64, F64, "f64", 8, 8, 8, gemm_row_f64, gemm_scale_row_f64, gemm_tile_f64, gemm_pack_64,
     gemm_update_f64, NULL, {4, 4, gemm_ukr_f64_c}},
    {I32, I32, I32, "i32", 4, 4, 4, gemm_row_i32, gemm_scale_row_i32, gemm_tile_i32, gemm_pack_32,
     gemm_update_i32, NULL, {4, 8, gemm_ukr_i32_c}},
    {F16, F16, F32, "f16", 4, 2, 2, NULL, cpu_gemm_scale_row_f16, NULL, cpu_gemm_pack_f16, NULL,
     cpu_gemm_finish_f16, {4, 8, gemm_ukr_f32_c}},
    {F16, F32, F32, "f16_f32", 4, 2, 4, NULL, cpu_gemm_scale_row_f32, NULL, cpu_gemm_pack_f16,
     NULL, cpu_gemm_finish_f32, {4, 8, gemm_ukr_f32_c}},
    {BF16, BF16, F32, "bf16", 4, 2, 2, NULL, cpu_gemm_scale_row_bf16, NULL, cpu_gemm_pack_bf16,
     NULL, cpu_gemm_finish_bf16, {4, 8, gemm_ukr_f32_c}},
    {BF16, F32, F32, "bf16_f32", 4, 2, 4, NULL, cpu_gemm_scale_row_f32, NULL, cpu_gemm_pack_bf16,
     NULL, cpu_gemm_finish_f32, {4, 8, gemm_ukr_f32_c}},
    {I8, I32, I32, "i8_i32", 4, 1, 4, NULL, gemm_scale_row_i32, NULL, cpu_gemm_pack_i8,
     gemm_update_i32, NULL, {4, 8, gemm_ukr_i32_c}},
};

#undef F32
#undef F64
#undef I32
#undef F16
#undef BF16
#undef I8

static const gemm_type *gemm_type_of(duet_dtype dtype, duet_dtype c_dtype)
{
    for (size_t x = 0; x < sizeof gemm_types / sizeof gemm_types[0]; ++x)
        if (gemm_types[x].dtype == dtype && gemm_types[x].c_dtype == c_dtype)
            return &gemm_types[x];
    return NULL;
}

static gemm_kernel gemm_kernel_for(const gemm_type *type)
{
#ifdef CPU_GEMM_X86
    if (cpu_has_avx512() && (type->compute == DUET_DTYPE_F32 || type->compute == DUET_DTYPE_F64)) {
        static const gemm_kernel f32 = {12, 32, gemm_ukr_f32_avx512};
        static const gemm_kernel f64 = {12, 16, gemm_ukr_f64_avx512};
        return type->compute == DUET_DTYPE_F64 ? f64 : f32;
    }
    if (cpu_has_avx2_fma()) {
        static const gemm_kernel f32 = {6, 16, gemm_ukr_f32_avx2};
        static const gemm_kernel f64 = {6, 8, gemm_ukr_f64_avx2};
        static const gemm_kernel i32 = {6, 16, gemm_ukr_i32_avx2};
        const duet_dtype dtype = type->compute;
        return dtype == DUET_DTYPE_F64 ? f64 : dtype == DUET_DTYPE_I32 ? i32 : f32;
    }
#endif /* CPU_GEMM_X86 */
    return type->portable;
}

/* ---- AUTO driver --------------------------------------------------------------------------- */

typedef struct gemm_packed {
    const gemm_job *job;
    const gemm_type *type;
    gemm_kernel kern;
    int64_t mc, kc, nc;      /* block sizes (mc, nc multiples of mr, nr)  */
    size_t a_bytes, b_bytes; /* one packed block of A, of B: a workspace */
    size_t acc_bytes;        /* mc x nc f32 sums of a finishing type, or 0 */
} gemm_packed;

/* The largest micro-tile: 12 x 32 f32 or 12 x 16 f64 (1536 bytes); 64-byte aligned for
 * vector stores. */
#define GEMM_TILE_BYTES 1536
typedef union gemm_tile_buf {
    float f32[GEMM_TILE_BYTES / 4];
    double f64[GEMM_TILE_BYTES / 8];
    uint32_t u32[GEMM_TILE_BYTES / 4];
    _Alignas(64) unsigned char bytes[GEMM_TILE_BYTES];
} gemm_tile_buf;

/* Rows [i0, i1) x columns [j0, j1) of matrix bi of C, on the calling thread, with the
 * workspace ws (a_bytes + b_bytes). Each output gets its k products in the same order
 * wherever the slab boundaries fall. */
static void gemm_packed_slab(const gemm_packed *pk, int64_t bi, int64_t i0, int64_t i1, int64_t j0,
                             int64_t j1, unsigned char *ws)
{
    const dt_gemm *g = pk->job->g;
    const size_t e = pk->type->elem, ie = pk->type->in_elem, ce = pk->type->c_elem;
    const int mr = pk->kern.mr, nr = pk->kern.nr;
    const unsigned char *A = (const unsigned char *)g->a.base + (size_t)(bi * g->a.bs) * ie;
    const unsigned char *B = (const unsigned char *)g->b.base + (size_t)(bi * g->b.bs) * ie;
    unsigned char *C = (unsigned char *)g->c.base + (size_t)(bi * g->c.bs) * ce;
    unsigned char *a_pack = ws, *b_pack = ws + pk->a_bytes;
    gemm_tile_buf ab;

    for (int64_t jc = j0; jc < j1; jc += pk->nc) {
        const int64_t nc = min64(pk->nc, j1 - jc);
        const int64_t panels = dt_ceil_div(nc, nr);
        for (int64_t pc = 0; pc < g->k; pc += pk->kc) {
            const int64_t kc = min64(pk->kc, g->k - pc);
            for (int64_t q = 0; q < panels; ++q)
                pk->type->pack(B + (size_t)(pc * g->b.rs + (jc + q * nr) * g->b.cs) * ie, g->b.cs,
                               g->b.rs, min64(nr, nc - q * nr), kc, nr,
                               b_pack + (size_t)(q * nr * kc) * e);
            for (int64_t ic = i0; ic < i1; ic += pk->mc) {
                const int64_t mc = min64(pk->mc, i1 - ic);
                pk->type->pack(A + (size_t)(ic * g->a.rs + pc * g->a.cs) * ie, g->a.rs, g->a.cs, mc,
                               kc, mr, a_pack);
                for (int64_t q = 0; q < panels; ++q) {
                    const int64_t jr = jc + q * nr, nv = min64(nr, nc - q * nr);
                    const unsigned char *bq = b_pack + (size_t)(q * nr * kc) * e;
                    for (int64_t ir = 0; ir < mc; ir += mr) {
                        pk->kern.ukr(kc, a_pack + (size_t)(ir * kc) * e, bq, ab.bytes);
                        pk->type->update(ab.bytes, nr,
                                         C + (size_t)((ic + ir) * g->c.rs + jr * g->c.cs) * ce,
                                         g->c.rs, g->c.cs, min64(mr, mc - ir), nv, pk->job->alpha,
                                         pk->job->beta, pc == 0);
                    }
                }
            }
        }
    }
}

/* As gemm_packed_slab for a finishing type (f16 and bf16 inputs): each mc x nc block of C
 * keeps its f32 sums in the workspace over the whole of k and is finished once, so k is the
 * inner block loop here and the block of B is packed again for every block of A (O(kn) per
 * O(mc kn) of arithmetic). Each output still adds its products in the same order. */
static void gemm_packed_slab_acc(const gemm_packed *pk, int64_t bi, int64_t i0, int64_t i1,
                                 int64_t j0, int64_t j1, unsigned char *ws)
{
    const dt_gemm *g = pk->job->g;
    const size_t e = pk->type->elem, ie = pk->type->in_elem, ce = pk->type->c_elem;
    const int mr = pk->kern.mr, nr = pk->kern.nr;
    const unsigned char *A = (const unsigned char *)g->a.base + (size_t)(bi * g->a.bs) * ie;
    const unsigned char *B = (const unsigned char *)g->b.base + (size_t)(bi * g->b.bs) * ie;
    unsigned char *C = (unsigned char *)g->c.base + (size_t)(bi * g->c.bs) * ce;
    unsigned char *a_pack = ws, *b_pack = ws + pk->a_bytes;
    float *acc = (float *)(ws + pk->a_bytes + pk->b_bytes);
    const int64_t ld = pk->nc;
    gemm_tile_buf ab;

    for (int64_t jc = j0; jc < j1; jc += pk->nc) {
        const int64_t nc = min64(pk->nc, j1 - jc);
        const int64_t panels = dt_ceil_div(nc, nr);
        for (int64_t ic = i0; ic < i1; ic += pk->mc) {
            const int64_t mc = min64(pk->mc, i1 - ic);
            for (int64_t pc = 0; pc < g->k; pc += pk->kc) {
                const int64_t kc = min64(pk->kc, g->k - pc);
                for (int64_t q = 0; q < panels; ++q)
                    pk->type->pack(B + (size_t)(pc * g->b.rs + (jc + q * nr) * g->b.cs) * ie,
                                   g->b.cs, g->b.rs, min64(nr, nc - q * nr), kc, nr,
                                   b_pack + (size_t)(q * nr * kc) * e);
                pk->type->pack(A + (size_t)(ic * g->a.rs + pc * g->a.cs) * ie, g->a.rs, g->a.cs,
                               mc, kc, mr, a_pack);
                for (int64_t q = 0; q < panels; ++q) {
                    const int64_t nv = min64(nr, nc - q * nr);
                    const unsigned char *bq = b_pack + (size_t)(q * nr * kc) * e;
                    for (int64_t ir = 0; ir < mc; ir += mr) {
                        pk->kern.ukr(kc, a_pack + (size_t)(ir * kc) * e, bq, ab.bytes);
                        const int64_t mv = min64(mr, mc - ir);
                        for (int64_t r = 0; r < mv; ++r) {
                            float *y = acc + (ir + r) * ld + q * nr;
                            const float *x = ab.f32 + r * nr;
                            if (pc == 0)
                                for (int64_t c = 0; c < nv; ++c) y[c] = x[c];
                            else
                                for (int64_t c = 0; c < nv; ++c) y[c] += x[c];
                        }
                    }
                }
            }
            pk->type->finish(acc, ld, C + (size_t)(ic * g->c.rs + jc * g->c.cs) * ce, g->c.rs,
                             g->c.cs, mc, nc, pk->job->alpha.f32, pk->job->beta.f32);
        }
    }
}

static int64_t round_up(int64_t x, int64_t to) { return dt_ceil_div(x, to) * to; }

/* Threads never share a block or wait for one another: each matrix of the batch is cut into
 * slabs of whole micro-panels along its longer axis (in panels), one slab per thread, and
 * each thread packs what its slab reads into a workspace of its own. Re-packing the operand
 * that the slabs share costs O(mk + kn) per thread against O(mnk / threads) of arithmetic. */
static duet_status gemm_packed_run(dt_context *ctx, void *stream, const gemm_job *job,
                                   const gemm_type *type)
{
    const dt_gemm *g = job->g;
    gemm_packed pk;
    pk.job = job;
    pk.type = type;
    pk.kern = gemm_kernel_for(type);
    const int mr = pk.kern.mr, nr = pk.kern.nr;
    const int64_t per_matrix = g->m * g->n * g->k; /* < 2^63: the operands exist */
    const int64_t total = per_matrix > INT64_MAX / g->batch ? INT64_MAX : per_matrix * g->batch;
    /* A second thread only for a share of at least GEMM_THREAD_WORK multiply-adds (about a
     * millisecond on one AVX-512 core): on a busy host a thread may wait several scheduler
     * ticks for its core, and a call then takes as long as its slowest share. */
    const int nt = cpu_threads_for(total / (GEMM_THREAD_WORK / CPU_PARALLEL_MIN_WORK));

    /* Matrices of C that cannot overlap may run at once; else one matrix at a time. */
    const int64_t c_span = (g->m - 1) * g->c.rs + (g->n - 1) * g->c.cs + 1;
    const int64_t group = g->batch > 1 && g->c.bs >= c_span ? g->batch : 1;
    /* Enough matrices for every thread: whole matrices are the tasks. Else slabs. */
    const int64_t m_panels = dt_ceil_div(g->m, mr), n_panels = dt_ceil_div(g->n, nr);
    const int split_n = n_panels >= m_panels;
    int64_t slabs = group >= 2 * (int64_t)nt ? 1 : nt;
    slabs = min64(slabs, split_n ? n_panels : m_panels);

    const int64_t slab_n = split_n ? dt_ceil_div(n_panels, slabs) * nr : round_up(g->n, nr);
    pk.kc = min64(GEMM_KC, g->k);
    /* A finishing type holds mc x nc sums as well: a narrower block of B keeps them in L2. */
    const int64_t b_cap = type->finish ? GEMM_NC_ACC
                                       : (int64_t)(GEMM_B_BYTES / ((size_t)GEMM_KC * type->elem));
    pk.nc = min64(slab_n, b_cap / nr * nr);
    pk.mc = min64(GEMM_MC / mr * mr, round_up(g->m, mr));
    pk.a_bytes = (size_t)(pk.mc * pk.kc) * type->elem;
    pk.b_bytes = (size_t)(pk.nc * pk.kc) * type->elem;
    pk.acc_bytes = type->finish ? (size_t)(pk.mc * pk.nc) * sizeof(float) : 0;
    /* Whole cache lines per workspace: threads never write one line. */
    const size_t one = (pk.a_bytes + pk.b_bytes + pk.acc_bytes + 63) / 64 * 64;
    /* The stream's workspace (64-byte aligned host memory here): no allocation per call. */
    void *wsp = NULL;
    duet_status st = dt_workspace_reserve(ctx, stream, g->ws, one * (size_t)nt, "duet_gemm", &wsp);
    if (st != DUET_SUCCESS) return st;
    unsigned char *ws = wsp;

    const int64_t panels = split_n ? n_panels : m_panels;
    const int64_t tasks = group * slabs;
    for (int64_t b0 = 0; b0 < g->batch; b0 += group) {
        CPU_PARALLEL_FOR(x, tasks, {
            /* nt == 1 also inside the application's OpenMP team (nested regions get one
             * thread): share 0 then. */
            const int tid = cpu_share_index(nt);
            const int64_t bi = b0 + x / slabs, s = x % slabs;
            const int64_t p0 = s * panels / slabs, p1 = (s + 1) * panels / slabs;
            if (p0 == p1) continue;
            const int64_t i0 = split_n ? 0 : p0 * mr, i1 = split_n ? g->m : min64(p1 * mr, g->m);
            const int64_t j0 = split_n ? p0 * nr : 0, j1 = split_n ? min64(p1 * nr, g->n) : g->n;
            if (type->finish)
                gemm_packed_slab_acc(&pk, bi, i0, i1, j0, j1, ws + (size_t)tid * one);
            else
                gemm_packed_slab(&pk, bi, i0, i1, j0, j1, ws + (size_t)tid * one);
        });
    }
    return DUET_SUCCESS;
}

/* ---- entry point --------------------------------------------------------------------------- */

static void gemm_tiled_run(const gemm_job *job, const gemm_type *type)
{
    const dt_gemm *g = job->g;
    const int64_t t = job->tile;
    const int64_t tm = dt_ceil_div(g->m, t), tn = dt_ceil_div(g->n, t);
    const int64_t tiles = g->batch * tm * tn;
    const int nt = cpu_threads_for(g->batch * g->m * g->n * g->k);
    (void)nt;
    CPU_PARALLEL_FOR(x, tiles, type->tile(job, x / (tm * tn), x / tn % tm * t, x % tn * t););
}

duet_status be_gemm(dt_context *ctx, void *stream, const dt_gemm *g, const dt_plan *plan,
                    duet_launch_info *info)
{
    const gemm_type *type = gemm_type_of(g->dtype, g->c_dtype);
    if (!type)
        return dt_fail(DUET_ERROR_UNSUPPORTED, "duet_gemm",
                       "the cpu backend has no gemm of %s inputs with %s C",
                       duet_dtype_name(g->dtype), duet_dtype_name(g->c_dtype));
    if (plan->algo != DUET_ALGO_AUTO && !type->row)
        return dt_fail(DUET_ERROR_UNSUPPORTED, "duet_gemm",
                       "algorithm %s runs f32, f64 and i32 gemm only; %s inputs take auto",
                       duet_algorithm_name(plan->algo), duet_dtype_name(g->dtype));
    gemm_job job;
    job.g = g;
    job.tile = plan->tile;
    /* alpha and beta in the compute dtype: TF32 and 3XTF32 run as exact f32 here, and
     * info.math reports DEFAULT (dt_fill_info clears it). */
    switch (type->compute) {
    case DUET_DTYPE_F32:
        job.alpha.f32 = (float)g->alpha;
        job.beta.f32 = (float)g->beta;
        break;
    case DUET_DTYPE_F64:
        job.alpha.f64 = g->alpha;
        job.beta.f64 = g->beta;
        break;
    default:
        if (!cpu_to_u32(g->alpha, &job.alpha.u32) || !cpu_to_u32(g->beta, &job.beta.u32))
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_gemm",
                           "%s gemm needs integral alpha and beta in the int32 range "
                           "(got %.17g and %.17g)",
                           duet_dtype_name(g->dtype), g->alpha, g->beta);
        break;
    }
    const char *dt = type->suffix;
    if (g->m <= 0 || g->n <= 0 || g->batch <= 0) {
        cpu_fill_info(info, "gemm", dt, plan);
        if (info) info->launches = 0;
        return DUET_SUCCESS;
    }
    /* The common layer turns these into a scale of C, except for an f16 or bf16 C, which has
     * no elementwise op: C = beta * C in f32, rounded once (beta == 0 writes zeros). */
    if (g->k <= 0 || g->alpha == 0) {
        cpu_gemm_scale sc;
        sc.c = &g->c;
        sc.beta = (float)g->beta;
        void *arg = type->finish ? (void *)&sc : (void *)&job;
        cpu_walk(g->batch, g->m, g->n, g->batch, g->m, g->n, 1, type->scale_row, arg);
        cpu_fill_info(info, "gemm", dt, plan);
        return DUET_SUCCESS;
    }

    duet_status st = DUET_SUCCESS;
    int64_t tx, ty, tz;
    switch (plan->algo) {
    case DUET_ALGO_NAIVE:
        cpu_walk(g->batch, g->m, g->n, g->batch, g->m, g->n, g->k, type->row, &job);
        break;
    case DUET_ALGO_GRID_STRIDE:
        st = cpu_grid_threads(plan, "duet_gemm", &tx, &ty, &tz);
        if (st == DUET_SUCCESS) cpu_walk(g->batch, g->m, g->n, tz, ty, tx, g->k, type->row, &job);
        break;
    case DUET_ALGO_TILED:
        if (job.tile < 1 || job.tile > GEMM_TILE_MAX)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_gemm", "tile %d is outside 1..%d",
                           plan->tile, GEMM_TILE_MAX);
        gemm_tiled_run(&job, type);
        break;
    case DUET_ALGO_AUTO:
#ifdef DUET_HAVE_CBLAS
        /* f32 and f64 go to the CBLAS where it can express the operands (docs/cpu.md), on
         * the threads duet's own ops would take for this much work. The BLAS runs a batch
         * one matrix at a time; a batch of matrices too small for every thread each runs
         * faster on duet's kernel, which spreads the matrices over the threads. */
        if (!type->finish) {
            char name[64];
            const int64_t mnk = g->m * g->n * g->k;
            const int64_t work = mnk > INT64_MAX / g->batch ? INT64_MAX : mnk * g->batch;
            const int nt = cpu_threads_for(work);
            if (cpu_threads_for(mnk) >= nt && cpu_gemm_blas(g, nt, name, sizeof name)) {
                dt_fill_info(info, name, plan, (int)min64(g->batch, INT32_MAX));
                return DUET_SUCCESS;
            }
        }
#endif /* DUET_HAVE_CBLAS */
        st = gemm_packed_run(ctx, stream, &job, type);
        break;
    default:
        return dt_fail(DUET_ERROR_UNSUPPORTED, "duet_gemm", "gemm has no %s algorithm",
                       duet_algorithm_name(plan->algo));
    }
    if (st != DUET_SUCCESS) return st;
    /* The packed kernel is a tiled gemm, with blocks for the caches instead of shared memory. */
    cpu_fill_info(info, "gemm", dt, plan);
    return DUET_SUCCESS;
}
