/* gemm_skinny.cuh - the memory-bound GEMM of a narrow C (n <= 64): A read once, K split over the device. */
#ifndef DUET_KERNELS_GEMM_SKINNY_CUH
#define DUET_KERNELS_GEMM_SKINNY_CUH

#include "duet/duet.h"

#include "compat.h"
#include "gemm_elem.cuh"
#include "gemm_epilogue.cuh"
#include "gemm_fast_tile.cuh"
#include "lowp_convert.cuh"
#include "mma_atom.cuh"

#include <stdint.h>

#include <type_traits>

/*
 * C (m x n) = alpha * A (m x k) * B (k x n) + beta * C with n small (the launcher solves
 * C^T = B^T A^T when m is the small side). Such a GEMM does about 2n operations per element of
 * A, so its time is the time to read A once: the kernels stream A straight from global memory
 * into registers, keep the small B in shared memory, and split K over the grid (gridDim.y) so a
 * problem of few rows still has enough loads in flight to fill the memory system. Each slice
 * writes raw partial sums to the workspace and gemm_skinny_reduce_kernel adds them in slice
 * order and applies alpha, beta and C's dtype: no atomics, the same bits on every run.
 *
 * Two forms, by which of A's strides is 1:
 *
 * K-major A (rows contiguous along k): a warp owns 2 * G rows (G = warp / 4 lane groups);
 * lane (g, t) = (lane / 4, lane % 4) reads 16 bytes of rows g and g + G per step, at k offset
 * t * VEC within the step's 4 * VEC elements. The order in which a dot product visits k is free,
 * so the lane's 16 bytes are taken as the k positions the matrix-core fragment wants:
 *   - MMA (NVIDIA mma.sync m16n8k*, f16/bf16/tf32/i8, and e4m3/e5m2 pairs from sm_89 on: one
 *     dtype each for A and B, f32 sums): the four 32-bit words of row g are words
 *     {t, t + 4} of two consecutive atoms (mma_sync_nv.cuh's layout: a0 = (g, t), a2 = (g, t + 4)),
 *     and B's column (n) g supplies the same k positions from shared memory; a 16 x 8 atom per
 *     8 columns of C, two atoms per step;
 *   - SIMT (every dtype, both vendors): the lane multiplies its VEC elements of both rows by
 *     the same k positions of every column of B (broadcast reads of shared memory) and the four
 *     lanes of a group add their sums at the end.
 * M-major A (columns contiguous along m): SIMT only. A lane owns LV adjacent rows (4 or 8 bytes
 * of a column), a warp LV * warp rows; the block's four warps take every fourth k of each
 * chunk and add their sums in warp order through shared memory at the end.
 *
 * K-major: a block stages B's part of its slice in shared memory once (a window of up to 32 KiB;
 * a longer slice is walked window by window), then streams A with no barrier through two
 * register buffers that take turns: while one chunk is multiplied the next one's loads are in
 * flight, and the first two chunks' loads go out before B is staged (sk_kmajor_shape::PAIRED
 * says which forms; the others issue the next chunk's loads before the current chunk's
 * multiplies). M-major: B is staged per chunk of 64 k. B is kept converted to the
 * accumulator's type for SIMT and as raw words for MMA, read from global 16 bytes a load where
 * its columns (k-contiguous) are on 16-byte boundaries (by cp.async where the device has it)
 * or, on NVIDIA, its rows (n-contiguous) are, else element by element in the order that is
 * contiguous for its layout. Out of range rows, columns and k read as zeros. Plain CUDA
 * syntax: the SIMT kernels compile as HIP.
 * Which dtypes and forms run, and up to how many columns, is the plan's choice
 * (src/common/gemm_plan.c); the launcher instantiates only those.
 */

#define SK_WARPS 4 /* warps of a block */

/* The accumulator of an MMA atom: int32 for i8, else f32. */
template <int DT> struct sk_mma_acc {
    typedef float type;
};
template <> struct sk_mma_acc<DUET_DTYPE_I8> {
    typedef int32_t type;
};

/* The mma.sync kind of the MMA form's atoms for A's dtype DT and B's DTB (which differ only
 * for the 8-bit floats: e4m3 and e5m2 mix). */
template <int DT, int DTB> DUET_HOST_DEVICE constexpr int sk_mma_kind()
{
    return DT == DUET_DTYPE_F16      ? DUET_MMA_F16
           : DT == DUET_DTYPE_BF16   ? DUET_MMA_BF16
           : DT == DUET_DTYPE_I8     ? DUET_MMA_I8
           : DT == DUET_DTYPE_F8E4M3 ? (DTB == DUET_DTYPE_F8E5M2 ? DUET_MMA_F8_45 : DUET_MMA_F8_44)
           : DT == DUET_DTYPE_F8E5M2 ? (DTB == DUET_DTYPE_F8E5M2 ? DUET_MMA_F8_55 : DUET_MMA_F8_54)
                                     : DUET_MMA_TF32;
}

/* Element e of the little-endian words w (ELEM bytes each) as the accumulator type. */
template <int DT> DUET_INLINE typename gemm_elem<DT>::acc sk_word_elem(const uint32_t *w, int e)
{
    if constexpr (DT == DUET_DTYPE_F32) return __uint_as_float(w[e]);
    else if constexpr (DT == DUET_DTYPE_I32) return w[e];
    else if constexpr (DT == DUET_DTYPE_F64)
        return __longlong_as_double((long long)(((uint64_t)w[2 * e + 1] << 32) | w[2 * e]));
    else if constexpr (DT == DUET_DTYPE_F16)
        return duet_f16_to_f32((uint16_t)(w[e / 2] >> (16 * (e % 2))));
    else if constexpr (DT == DUET_DTYPE_BF16)
        return duet_bf16_to_f32((uint16_t)(w[e / 2] >> (16 * (e % 2))));
    else {
        static_assert(DT == DUET_DTYPE_I8, "the 8-bit floats run on the MMA form only");
        return (uint32_t)(int32_t)(int8_t)(w[e / 4] >> (8 * (e % 4)));
    }
}

/* One element at p as raw bits (the low ELEM bytes). */
template <int ELEM> DUET_INLINE uint32_t sk_load_bits(const unsigned char *p)
{
    if constexpr (ELEM == 4) return *(const uint32_t *)p;
    else if constexpr (ELEM == 2) return *(const uint16_t *)p;
    else return *(const uint8_t *)p;
}

/* One element at p as raw bits, zero-extended to 64. */
template <int ELEM> DUET_INLINE uint64_t sk_load_bits64(const unsigned char *p)
{
    if constexpr (ELEM == 8)
        return *(const uint64_t *)p;
    else
        return sk_load_bits<ELEM>(p);
}

struct sk_args {
    const unsigned char *a, *b;
    unsigned char *c;
    void *ws;                 /* split > 1: split x batch x m x n partial sums (accumulator) */
    int64_t m, n, k, batch;
    int64_t a_rs, a_cs, a_bs; /* elements */
    int64_t b_rs, b_cs, b_bs;
    int64_t c_rs, c_cs, c_bs;
    int64_t kslice;           /* k of one slice (gridDim.y slices), a multiple of the chunk */
    int64_t kwin;             /* K-major: k of B a block keeps in shared memory at once     */
    int split;
    int a_vec;                /* A's rows (K-major) or columns (M-major) may be read in vectors */
    int b_vec;                /* K-major: B's columns are k-contiguous on 16-byte boundaries */
    int b_nvec;               /* K-major: B's rows are n-contiguous on 16-byte boundaries */
    int b_nmajor;             /* B's unit stride is along n: stage it column-fastest */
    int c_imajor;             /* C's unit stride is along m: partial sums kept that way too */
    int c_dtype;
    double alpha, beta;       /* f64 C */
    float falpha, fbeta;      /* f32, f16, bf16 C */
    uint32_t ialpha, ibeta;   /* i32 C: modulo 2^32 */
    int beta_zero;            /* C is never read */
    /* 8-bit floats' block scales (dt_gemm.sa, sb of the kernel's problem; blocked 0: none):
     * the sums of k block q (128 values) of row i and column j are multiplied by
     * sa[bz * sa_bs + (i >> sa_shift) * sa_rs + q * sa_ks] times the like value of sb at
     * column j (a NULL one is 1); kq = ceil(k / 128). */
    int blocked;
    const float *sa, *sb;
    int64_t sa_rs, sa_ks, sa_bs, sb_rs, sb_ks, sb_bs, kq;
    int sa_shift, sb_shift;
};

/* C(bz, i, j) = alpha * v + beta * C, rounded once to C's dtype. */
template <typename ACC> DUET_INLINE void sk_store_c(const sk_args &p, int64_t bz, int64_t i, int64_t j, ACC v)
{
    const int64_t off = bz * p.c_bs + i * p.c_rs + j * p.c_cs;
    if constexpr (sizeof(ACC) == 8) {
        double *c = (double *)p.c + off;
        *c = p.beta_zero ? p.alpha * v : p.alpha * v + p.beta * *c;
    } else if constexpr (ACC(-1) > ACC(0)) { /* uint32_t: i32 C */
        uint32_t *c = (uint32_t *)p.c + off;
        *c = p.beta_zero ? p.ialpha * v : p.ialpha * v + p.ibeta * *c;
    } else if (p.c_dtype == DUET_DTYPE_F32) {
        float *c = (float *)p.c + off;
        *c = p.beta_zero ? p.falpha * v : p.falpha * v + p.fbeta * *c;
    } else {
        uint16_t *c = (uint16_t *)p.c + off;
        const bool h = p.c_dtype == DUET_DTYPE_F16;
        float r = p.falpha * v;
        if (!p.beta_zero) r += p.fbeta * (h ? duet_f16_to_f32(*c) : duet_bf16_to_f32(*c));
        *c = h ? duet_f32_to_f16(r) : duet_f32_to_bf16(r);
    }
}

/* A slice's result for (bz, i, j): final when the problem is not split, else a partial sum. */
template <typename ACC>
DUET_INLINE void sk_out(const sk_args &p, int64_t bz, int64_t i, int64_t j, ACC v)
{
    if (i >= p.m || j >= p.n) return;
    if (p.split == 1) {
        sk_store_c<ACC>(p, bz, i, j, v);
    } else {
        ACC *w = (ACC *)p.ws;
        w[((int64_t)blockIdx.y * p.batch + bz) * p.m * p.n + (p.c_imajor ? j * p.m + i : i * p.n + j)] = v;
    }
}

/* ---- K-major A ------------------------------------------------------------------------------ */

/* Compile-time shape of the K-major kernel (DTB: B's dtype, A's but for the 8-bit floats). */
template <int DT, int NMAX, bool MMA_, int DTB = DT> struct sk_kmajor_shape {
    typedef typename gemm_elem<DT>::acc acc;
    static constexpr int ELEM = gemm_elem<DT>::ELEM;
    static constexpr bool MMA = MMA_;
    static constexpr int KIND = sk_mma_kind<DT, DTB>(); /* MMA: the atoms' kind */
    static constexpr int VEC = 16 / ELEM;  /* elements of a lane's 16 bytes */
    static constexpr int STEP = 4 * VEC;   /* k of one step (a lane group's 64 bytes) */
    /* B in shared: raw words (MMA) or accumulators (SIMT), per column a row of the window. */
    static constexpr int BS = MMA_ ? ELEM : (int)sizeof(acc);
    /* A chunk is the k of A a lane holds in one register buffer: CH steps, two rows. SIMT
     * with 16 columns keeps 2 x 16 sums in registers and takes two steps, the others four. */
    static constexpr int CH = !MMA_ && NMAX >= 16 ? 2 : 4;
    /* PAIRED: two buffers that take turns (while one chunk is multiplied the next is in
     * flight), for the MMA form and 4- and 8-byte SIMT on NVIDIA. The SIMT form of
     * 16-bit and i8 A (rows off 16 bytes, read element by element, 8-16 conversions and
     * multiplies per 16 bytes per column) ran its loop of two chunks at 0.93x (bf16) and 0.98x
     * (f16 > f32) the speed of one chunk a turn (geometric means over the H200 shape sweep's
     * problems on that form); on AMD's CDNA targets the second buffer pushed every SIMT
     * instance past 256 VGPRs into 36-1,000 bytes of scratch, and nothing on AMD was measured.
     * Those keep one chunk a turn, the next chunk's loads issued first. */
    static constexpr bool PAIRED = MMA_ || (ELEM >= 4 && DUET_GPU_CUDA);
    static constexpr int KCH = CH * STEP;
    /* The window: the k of B a block keeps in shared memory (32 KiB of it), a whole number of
     * chunk pairs (the k-loop's turn). A slice within the window is staged once, before its
     * first chunk. */
    static constexpr int KWIN = (32768 / (NMAX * BS)) / (2 * KCH) * (2 * KCH);
    static_assert(KWIN >= 2 * KCH, "a window holds at least one pair of chunks");
};

/* The pitch of a column's row of a window of win k, in bytes: 16-byte aligned and 64 mod 128,
 * so the eight columns the lanes of an MMA quarter-warp read fall in distinct bank groups. */
static DUET_HOST_DEVICE inline int64_t sk_kmajor_pitch(int64_t win, int bs) { return (win * bs + 127) / 128 * 128 + 64; }

/* One chunk of A for the lane: CH steps of 16 bytes from rows pa0 and pa1 at k .. Out of
 * range k read as zeros; rows past m were pointed at row 0 by the caller. */
template <typename S>
DUET_INLINE void sk_load_a_chunk(uint32_t (&va)[S::CH][2][4], const unsigned char *pa0, const unsigned char *pa1,
                                 bool in0, bool in1, int64_t kc, int64_t kend, int t, int a_vec)
{
    if (a_vec && kc + S::KCH <= kend) {
        /* A whole chunk in range: its loads back to back, no test between them. */
#pragma unroll
        for (int s = 0; s < S::CH; ++s) {
            const int64_t k = kc + s * S::STEP + t * S::VEC;
            const duet_vec16_t x0 = *(const duet_vec16_t *)(pa0 + k * S::ELEM);
            const duet_vec16_t x1 = *(const duet_vec16_t *)(pa1 + k * S::ELEM);
            va[s][0][0] = x0.x, va[s][0][1] = x0.y, va[s][0][2] = x0.z, va[s][0][3] = x0.w;
            va[s][1][0] = x1.x, va[s][1][1] = x1.y, va[s][1][2] = x1.z, va[s][1][3] = x1.w;
        }
        return;
    }
#pragma unroll
    for (int s = 0; s < S::CH; ++s) {
        const int64_t k = kc + s * S::STEP + t * S::VEC;
        if (a_vec && k + S::VEC <= kend) {
            const duet_vec16_t x0 = *(const duet_vec16_t *)(pa0 + k * S::ELEM);
            const duet_vec16_t x1 = *(const duet_vec16_t *)(pa1 + k * S::ELEM);
            va[s][0][0] = x0.x, va[s][0][1] = x0.y, va[s][0][2] = x0.z, va[s][0][3] = x0.w;
            va[s][1][0] = x1.x, va[s][1][1] = x1.y, va[s][1][2] = x1.z, va[s][1][3] = x1.w;
        } else {
            if constexpr (S::MMA) {
                /* The vector straddles kend (A's rows are on 16-byte boundaries here): element
                 * by element into two 64-bit halves, in a loop that is not unrolled (short code,
                 * few registers; it runs at most once per slice). */
                uint64_t lo0 = 0, hi0 = 0, lo1 = 0, hi1 = 0;
#pragma unroll 1
                for (int e = 0; e < S::VEC && k + e < kend; ++e) {
                    const int sh = (e * S::ELEM * 8) & 63;
                    const uint64_t u0 =
                        in0 ? sk_load_bits64<S::ELEM>(pa0 + (k + e) * S::ELEM) << sh : 0;
                    const uint64_t u1 =
                        in1 ? sk_load_bits64<S::ELEM>(pa1 + (k + e) * S::ELEM) << sh : 0;
                    if (e * S::ELEM >= 8)
                        hi0 |= u0, hi1 |= u1;
                    else
                        lo0 |= u0, lo1 |= u1;
                }
                va[s][0][0] = (uint32_t)lo0, va[s][0][1] = (uint32_t)(lo0 >> 32);
                va[s][0][2] = (uint32_t)hi0, va[s][0][3] = (uint32_t)(hi0 >> 32);
                va[s][1][0] = (uint32_t)lo1, va[s][1][1] = (uint32_t)(lo1 >> 32);
                va[s][1][2] = (uint32_t)hi1, va[s][1][3] = (uint32_t)(hi1 >> 32);
            } else {
                /* SIMT, where A's rows may be off 16 bytes and every chunk comes this way: a
                 * predicate per element rather than an early exit, so that the loop unrolls
                 * whole, every index into va is a constant and the loads are in flight
                 * together. */
#pragma unroll
                for (int w = 0; w < 4; ++w) va[s][0][w] = va[s][1][w] = 0u;
#pragma unroll
                for (int e = 0; e < S::VEC; ++e) {
                    const bool ink = k + e < kend;
                    if constexpr (S::ELEM == 8) {
                        const uint64_t u0 = ink && in0 ? *(const uint64_t *)(pa0 + (k + e) * 8) : 0;
                        const uint64_t u1 = ink && in1 ? *(const uint64_t *)(pa1 + (k + e) * 8) : 0;
                        va[s][0][2 * e] = (uint32_t)u0, va[s][0][2 * e + 1] = (uint32_t)(u0 >> 32);
                        va[s][1][2 * e] = (uint32_t)u1, va[s][1][2 * e + 1] = (uint32_t)(u1 >> 32);
                    } else {
                        constexpr int PER = 4 / S::ELEM;
                        const int sh = 8 * S::ELEM * (e % PER);
                        if (ink && in0)
                            va[s][0][e / PER] |= sk_load_bits<S::ELEM>(pa0 + (k + e) * S::ELEM)
                                                 << sh;
                        if (ink && in1)
                            va[s][1][e / PER] |= sk_load_bits<S::ELEM>(pa1 + (k + e) * S::ELEM)
                                                 << sh;
                    }
                }
            }
        }
    }
}

/* Loads a thread issues before it stores any of them when staging B: the staging is a few
 * round trips to L2, not one per element. */
#define SK_STAGE_BATCH 8

/* B's window, k positions kw + k0 .. kw + k1 of its columns j0 .. nmax - 1, one element a load,
 * in the order that is contiguous for B's layout; columns past n are zeros. */
template <int DT, bool MMA, typename S>
DUET_INLINE void sk_stage_b(const sk_args &p, const unsigned char *pb, unsigned char *smem,
                            int64_t pitch, int64_t kw, int k0, int k1, int j0, int nmax, int tid,
                            int threads)
{
    typedef typename S::acc acc;
    typedef typename std::conditional<MMA, uint32_t, acc>::type held; /* raw bits or the value */
    constexpr int U = sizeof(held) == 8 ? SK_STAGE_BATCH / 2 : SK_STAGE_BATCH; /* registers */
    const int len = k1 - k0, nc = nmax - j0, total = nc * len;
    for (int base = tid; base < total; base += threads * U) {
        held v[U];
    #pragma unroll
        for (int u = 0; u < U; ++u) {
            const int idx = base + u * threads;
            const int j = j0 + (p.b_nmajor ? idx % nc : idx / len);
            const int kk = k0 + (p.b_nmajor ? idx / nc : idx % len);
            const unsigned char *src = pb + ((kw + kk) * p.b_rs + (int64_t)j * p.b_cs) * S::ELEM;
            const bool in = idx < total && j < p.n;
            if constexpr (MMA) {
                uint32_t x = in ? sk_load_bits<S::ELEM == 8 ? 4 : S::ELEM>(src) : 0u;
                if constexpr (DT == DUET_DTYPE_F32) x = duet_f32_to_tf32(x);
                v[u] = x;
            } else {
                v[u] = in ? gemm_load_elem<DT>(src) : acc(0);
            }
        }
    #pragma unroll
        for (int u = 0; u < U; ++u) {
            const int idx = base + u * threads;
            if (idx >= total) break;
            const int j = j0 + (p.b_nmajor ? idx % nc : idx / len);
            const int kk = k0 + (p.b_nmajor ? idx / nc : idx % len);
            unsigned char *dst = smem + j * pitch + kk * S::BS;
            if constexpr (MMA) {
                if constexpr (S::ELEM == 4) *(uint32_t *)dst = v[u];
                else if constexpr (S::ELEM == 2) *(uint16_t *)dst = (uint16_t)v[u];
                else *(uint8_t *)dst = (uint8_t)v[u];
            } else {
                *(acc *)dst = v[u];
            }
        }
    }
}

/* B's window where B's rows (along n) are contiguous on 16-byte boundaries: 16 bytes a load,
 * the first nv * VEC columns (all inside n), k positions kw .. kw + wlen, each load's VEC
 * elements stored to their columns' rows of the window; SK_STAGE_BATCH_NVEC loads in flight
 * (16 registers: the two chunks of A are held meanwhile). */
#define SK_STAGE_BATCH_NVEC 4
template <int DT, bool MMA, typename S>
DUET_INLINE void sk_stage_b_nvec(const sk_args &p, const unsigned char *pb, unsigned char *smem,
                                 int64_t pitch, int64_t kw, int wlen, int nv, int tid, int threads)
{
    for (int jv = 0; jv < nv; ++jv)
        for (int base = tid; base < wlen; base += threads * SK_STAGE_BATCH_NVEC) {
            duet_vec16_t v[SK_STAGE_BATCH_NVEC];
#pragma unroll
            for (int u = 0; u < SK_STAGE_BATCH_NVEC; ++u) {
                const int kk = base + u * threads;
                v[u] = duet_vec16_t{0u, 0u, 0u, 0u};
                if (kk < wlen)
                    v[u] =
                        *(const duet_vec16_t *)(pb + ((kw + kk) * p.b_rs + (int64_t)jv * S::VEC) *
                                                         S::ELEM);
            }
#pragma unroll
            for (int u = 0; u < SK_STAGE_BATCH_NVEC; ++u) {
                const int kk = base + u * threads;
                if (kk >= wlen) break;
                const uint32_t w[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
                for (int e = 0; e < S::VEC; ++e) {
                    unsigned char *dst = smem + (jv * S::VEC + e) * pitch + kk * S::BS;
                    if constexpr (!MMA) {
                        *(typename S::acc *)dst = sk_word_elem<DT>(w, e);
                    } else if constexpr (S::ELEM == 4) {
                        *(uint32_t *)dst = DT == DUET_DTYPE_F32 ? duet_f32_to_tf32(w[e]) : w[e];
                    } else if constexpr (S::ELEM == 2) {
                        *(uint16_t *)dst = (uint16_t)(w[e / 2] >> (16 * (e % 2)));
                    } else {
                        *(uint8_t *)dst = (uint8_t)(w[e / 4] >> (8 * (e % 4)));
                    }
                }
            }
        }
}

/* B's window where its columns are k-contiguous on 16-byte boundaries: 16 bytes a copy, k
 * positions kw .. kw + vw * VEC; columns past n are zeros. Where cp.async exists (sm_80+) every
 * copy of the window is in flight at once and holds no registers; elsewhere the copies go
 * through registers SK_STAGE_BATCH at a time. The caller waits for them (sk_stage_window). */
template <int DT, bool MMA, typename S>
DUET_INLINE void sk_stage_b_vec(const sk_args &p, const unsigned char *pb, unsigned char *smem, int64_t pitch,
                                int64_t kw, int vw, int nmax, int tid, int threads)
{
#if DUET_GEMM_CP_ASYNC
    if constexpr (!(MMA && DT == DUET_DTYPE_F32)) { /* raw copies: no TF32 rounding on the way */
        for (int j = 0; j < nmax; ++j) {
            const unsigned char *src =
                pb + (kw * p.b_rs + (int64_t)(j < p.n ? j : 0) * p.b_cs) * S::ELEM;
            unsigned char *dst = smem + j * pitch;
            for (int v = tid; v < vw; v += threads)
                gf_copy_async<16>(dst + v * 16, src + v * 16, j < p.n ? 16 : 0);
        }
        return;
    }
#endif /* DUET_GEMM_CP_ASYNC */
    const int total = nmax * vw;
    for (int base = tid; base < total; base += threads * SK_STAGE_BATCH) {
        duet_vec16_t v[SK_STAGE_BATCH];
    #pragma unroll
        for (int u = 0; u < SK_STAGE_BATCH; ++u) {
            const int idx = base + u * threads;
            const int j = idx / vw, kk = idx % vw * S::VEC;
            v[u] = duet_vec16_t{0u, 0u, 0u, 0u};
            if (idx < total && j < p.n)
                v[u] = *(const duet_vec16_t *)(pb + ((kw + kk) * p.b_rs + (int64_t)j * p.b_cs) * S::ELEM);
            if constexpr (MMA && DT == DUET_DTYPE_F32) {
                v[u].x = duet_f32_to_tf32(v[u].x), v[u].y = duet_f32_to_tf32(v[u].y);
                v[u].z = duet_f32_to_tf32(v[u].z), v[u].w = duet_f32_to_tf32(v[u].w);
            }
        }
    #pragma unroll
        for (int u = 0; u < SK_STAGE_BATCH; ++u) {
            const int idx = base + u * threads;
            if (idx >= total) break;
            const int j = idx / vw, kk = idx % vw * S::VEC;
            *(duet_vec16_t *)(smem + j * pitch + kk * S::BS) = v[u];
        }
    }
}

/* B's window kw .. kw + wlen of the K-major kernel in shared memory (column j's k positions at
 * smem + j * pitch), then zeros up to the next whole chunk, so a chunk's reads of B past the
 * window's end (whose A reads as zero too) never meet stale values; returns after the block's
 * barrier. */
template <int DT, int NMAX, bool MMA, typename S>
DUET_INLINE void sk_stage_window(const sk_args &p, const unsigned char *pb, unsigned char *smem,
                                 int64_t pitch, int64_t kw, int wlen, int tid)
{
    constexpr int THREADS = SK_WARPS * DUET_WARP_SIZE;
    if (p.b_vec && !p.b_nmajor && S::BS == S::ELEM) {
        const int vw = wlen / S::VEC;
        sk_stage_b_vec<DT, MMA, S>(p, pb, smem, pitch, kw, vw, NMAX, tid, THREADS);
        sk_stage_b<DT, MMA, S>(p, pb, smem, pitch, kw, vw * S::VEC, wlen, 0, NMAX, tid, THREADS);
    } else if (DUET_GPU_CUDA && S::ELEM <= 4 && p.b_nvec && p.b_nmajor && NMAX >= S::VEC) {
        /* NVIDIA only: on AMD its registers pushed the SIMT instances into scratch. */
        const int nv = (int)(p.n < NMAX ? p.n : NMAX) / S::VEC;
        sk_stage_b_nvec<DT, MMA, S>(p, pb, smem, pitch, kw, wlen, nv, tid, THREADS);
        if (nv * S::VEC < NMAX)
            sk_stage_b<DT, MMA, S>(p, pb, smem, pitch, kw, 0, wlen, nv * S::VEC, NMAX, tid,
                                   THREADS);
    } else {
        sk_stage_b<DT, MMA, S>(p, pb, smem, pitch, kw, 0, wlen, 0, NMAX, tid, THREADS);
    }
    const int wpad = (wlen + S::KCH - 1) / S::KCH * S::KCH;
    for (int idx = tid; idx < NMAX * (wpad - wlen); idx += THREADS) {
        const int j = idx / (wpad - wlen), kk = wlen + idx % (wpad - wlen);
        unsigned char *dst = smem + j * pitch + kk * S::BS;
        for (int b = 0; b < S::BS; ++b) dst[b] = 0;
    }
    gf_copy_commit();
    gf_copy_wait<0>();
    duet_barrier();
}

/* The block scale of 8-bit float rows or columns x (clamped into range) at k block q. */
DUET_INLINE float sk_block_scale(const float *s, int64_t bs, int64_t rs, int64_t ks, int shift,
                                 int64_t bz, int64_t x, int64_t q)
{
    return s ? __ldg(s + bz * bs + (x >> shift) * rs + q * ks) : 1.0f;
}

/* One chunk of A (va: CH steps of 16 bytes of rows g and g + G) times B's window from bw: MMA
 * atoms into mac, or SIMT products into sum. BSC (8-bit floats): block scales, from p at the
 * chunk's first k kc, the lane's two rows ra (in range) and batch bz. */
template <int DT, int NMAX, bool MMA, bool BSC, typename S, typename MAC, typename SUM>
DUET_INLINE void sk_kmajor_mul(const uint32_t (&va)[S::CH][2][4], const unsigned char *bw,
                               int64_t pitch, int g, int t, MAC &mac, SUM &sum, const sk_args &p,
                               int64_t bz, const int64_t (&ra)[2], int64_t kc)
{
    (void)p, (void)bz, (void)ra, (void)kc;
    typedef typename S::acc acc;
    /* BSC: the scales of the lane's rows and columns in the current block of 128 k, loaded
     * when a step starts a block (a chunk starts on a multiple of 256; k past the end reads
     * zeros, its block clamped to the last). */
    float bsr[2] = {1.0f, 1.0f}, bsc[NMAX >= 8 ? NMAX / 8 : 1][2];
    (void)bsr, (void)bsc;
#pragma unroll
    for (int s = 0; s < S::CH; ++s) {
#if DUET_GPU_CUDA
        if constexpr (BSC) {
            if ((s * S::STEP) % 128 == 0) {
                const int64_t q0 = (kc + s * S::STEP) >> 7;
                const int64_t q = q0 < p.kq ? q0 : p.kq - 1;
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    bsr[h] =
                        sk_block_scale(p.sa, p.sa_bs, p.sa_rs, p.sa_ks, p.sa_shift, bz, ra[h], q);
#pragma unroll
                for (int nt = 0; nt < NMAX / 8; ++nt)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int64_t j = nt * 8 + 2 * t + h;
                        bsc[nt][h] = sk_block_scale(p.sb, p.sb_bs, p.sb_rs, p.sb_ks, p.sb_shift, bz,
                                                    j < p.n ? j : p.n - 1, q);
                    }
            }
        }
        if constexpr (MMA) {
            typedef duet_mma_atom<S::KIND> atom;
            uint32_t w0[4], w1[4];
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                w0[w] = va[s][0][w];
                w1[w] = va[s][1][w];
                if constexpr (DT == DUET_DTYPE_F32) {
                    w0[w] = duet_f32_to_tf32(w0[w]);
                    w1[w] = duet_f32_to_tf32(w1[w]);
                }
            }
            const uint32_t a_lo[4] = {w0[0], w1[0], w0[1], w1[1]};
            const uint32_t a_hi[4] = {w0[2], w1[2], w0[3], w1[3]};
#pragma unroll
            for (int nt = 0; nt < NMAX / 8; ++nt) {
                const duet_vec16_t bq =
                    *(const duet_vec16_t *)(bw + (nt * 8 + g) * pitch + (s * 4 + t) * 16);
                const uint32_t b_lo[2] = {bq.x, bq.y}, b_hi[2] = {bq.z, bq.w};
                if constexpr (duet_mma_is_f8(S::KIND)) {
                    /* The tensor core keeps fewer fraction bits than f32 in a running sum of
                     * 8-bit float products (duet.h): a step's two instructions (64 products)
                     * sum from zero and the kernel adds them to its f32 sums, which costs
                     * nothing a memory-bound kernel would notice. */
                    float st[4] = {0.f, 0.f, 0.f, 0.f};
                    atom::mma(st, a_lo, b_lo);
                    atom::mma(st, a_hi, b_hi);
                    if constexpr (BSC) {
                        /* The sums leave as fma(st, sa sb, mac). */
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            mac[nt][e] = __fmaf_rn(st[e], __fmul_rn(bsr[e >> 1], bsc[nt][e & 1]),
                                                   mac[nt][e]);
                    } else {
#pragma unroll
                        for (int e = 0; e < 4; ++e) mac[nt][e] += st[e];
                    }
                } else {
                    atom::mma(mac[nt], a_lo, b_lo);
                    atom::mma(mac[nt], a_hi, b_hi);
                }
            }
        } else
#endif /* DUET_GPU_CUDA */
        {
            (void)g;
            acc x0[S::VEC], x1[S::VEC];
#pragma unroll
            for (int e = 0; e < S::VEC; ++e) {
                x0[e] = sk_word_elem<DT>(va[s][0], e);
                x1[e] = sk_word_elem<DT>(va[s][1], e);
            }
            const unsigned char *bs = bw + (s * S::STEP + t * S::VEC) * S::BS;
#pragma unroll
            for (int j = 0; j < NMAX; ++j) {
                const acc *bj = (const acc *)(bs + j * pitch);
#pragma unroll
                for (int e = 0; e < S::VEC; ++e) {
                    const acc b = bj[e];
                    sum[0][j] += x0[e] * b;
                    sum[MMA ? 0 : 1][j] += x1[e] * b;
                }
            }
        }
    }
}

/* Blocks of the K-major kernel resident per SM or CU, its launch bound: three on 32-lane
 * warps; two on 64-lane wavefronts (CDNA), where three leave 168 VGPRs a lane and every SIMT
 * instance spilled 156-668 bytes to scratch on gfx90a; at two (256 VGPRs) the 16-column f64
 * instance still spills, and on gfx90a and gfx940 the 16-column f32 one (60-116 bytes;
 * docs/hip-resources.md). The plan (src/common/gemm_plan.c) aims its split at the same
 * count. */
#define SK_KMAJOR_BLOCKS (DUET_WARP_SIZE == 64 ? 2 : 3)

/* BSC: 8-bit floats with block scales (sk_args.blocked), an instance of its own so that the
 * others do not carry the scales' registers. */
template <int DT, int NMAX, bool MMA, int DTB = DT, bool BSC = false>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(SK_WARPS *DUET_WARP_SIZE, SK_KMAJOR_BLOCKS)
    gemm_skinny_kmajor_kernel(const sk_args p)
{
    typedef sk_kmajor_shape<DT, NMAX, MMA, DTB> S;
    typedef typename S::acc acc;
    constexpr int G = DUET_WARP_SIZE / 4;          /* lane groups of a warp */
    constexpr int WR = 2 * G;                      /* rows of a warp */
    constexpr int NT = NMAX / 8;                   /* MMA: atoms along n */
#if DUET_GPU_CUDA
    typedef duet_mma_atom<S::KIND> atom;
    static_assert(!MMA || NMAX % 8 == 0, "MMA columns come in atoms of 8");
    static_assert(!MMA || DUET_WARP_SIZE == 32, "the MMA form is NVIDIA's");
    if constexpr (MMA) {
        if (!atom::available) return; /* never launched: the launcher checks the device */
    }
#else
    static_assert(!MMA, "the MMA form is NVIDIA's");
#endif /* DUET_GPU_CUDA */
    (void)NT;

    extern __shared__ __align__(16) unsigned char sk_smem[];

    const int tid = (int)threadIdx.x;
    const int lane = tid % DUET_WARP_SIZE, warp = tid / DUET_WARP_SIZE;
    const int g = lane / 4, t = lane % 4;
    const int64_t pitch = sk_kmajor_pitch(p.kwin, S::BS);
    /* Batches past the grid's z limit: the grid strides over them. */
    for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
        const int64_t r0 = (int64_t)blockIdx.x * (SK_WARPS * WR) + warp * WR + g, r1 = r0 + G;
        const int64_t kbeg = (int64_t)blockIdx.y * p.kslice;
        const int64_t kend = kbeg + p.kslice < p.k ? kbeg + p.kslice : p.k;
        /* Rows past m read row 0 (always there) and are never written. */
        const unsigned char *pa0 = p.a + (bz * p.a_bs + (r0 < p.m ? r0 : 0) * p.a_rs) * S::ELEM;
        const unsigned char *pa1 = p.a + (bz * p.a_bs + (r1 < p.m ? r1 : 0) * p.a_rs) * S::ELEM;
        const bool in0 = r0 < p.m, in1 = r1 < p.m;
        const int64_t ra[2] = {in0 ? r0 : 0, in1 ? r1 : 0};
        const unsigned char *pb = p.b + bz * p.b_bs * S::ELEM;

        /* SIMT: sums of rows g, g + G for every column over this lane's k positions. MMA: the
         * atoms' accumulators (four per lane per atom). */
        acc sum[MMA ? 1 : 2][MMA ? 1 : NMAX];
        typename sk_mma_acc<DT>::type mac[MMA ? NT : 1][4];
    #pragma unroll
        for (int j = 0; j < (MMA ? 1 : NMAX); ++j) sum[0][j] = sum[MMA ? 0 : 1][j] = acc(0);
    #pragma unroll
        for (int j = 0; j < (MMA ? NT : 1); ++j)
    #pragma unroll
            for (int e = 0; e < 4; ++e) mac[j][e] = 0;

        /* The first chunk of A (PAIRED: the first two) is on its way while B's first window
         * is staged. */
        uint32_t va[S::CH][2][4], vb[S::CH][2][4];
        sk_load_a_chunk<S>(va, pa0, pa1, in0, in1, kbeg, kend, t, p.a_vec);
        if (S::PAIRED && kbeg + S::KCH < kend)
            sk_load_a_chunk<S>(vb, pa0, pa1, in0, in1, kbeg + S::KCH, kend, t, p.a_vec);

        for (int64_t kw = kbeg; kw < kend; kw += p.kwin) {
            const int64_t wend = kw + p.kwin < kend ? kw + p.kwin : kend;
            const int wlen = (int)(wend - kw);
            /* B's window: column j's k positions kw .. wend at sk_smem + j * pitch. */
            if (kw != kbeg) duet_barrier();
            sk_stage_window<DT, NMAX, MMA, S>(p, pb, sk_smem, pitch, kw, wlen, tid);

            if constexpr (S::PAIRED) {
                /* Two chunks a turn, one in each of va and vb: each buffer's next loads go out
                 * as soon as it has been multiplied, with no register copies between turns
                 * (a copy would wait on the loads just issued). A window short of kend holds
                 * an even number of chunks, so every window starts with its first chunk in va. */
                for (int64_t kc = kw; kc < wend; kc += 2 * S::KCH) {
                    sk_kmajor_mul<DT, NMAX, MMA, BSC, S>(va, sk_smem + (kc - kw) * S::BS, pitch, g,
                                                         t, mac, sum, p, bz, ra, kc);
                    if (kc + 2 * S::KCH < kend)
                        sk_load_a_chunk<S>(va, pa0, pa1, in0, in1, kc + 2 * S::KCH, kend, t,
                                           p.a_vec);
                    if (kc + S::KCH < wend) {
                        sk_kmajor_mul<DT, NMAX, MMA, BSC, S>(
                            vb, sk_smem + (kc + S::KCH - kw) * S::BS, pitch, g, t, mac, sum, p, bz,
                            ra, kc + S::KCH);
                        if (kc + 3 * S::KCH < kend)
                            sk_load_a_chunk<S>(vb, pa0, pa1, in0, in1, kc + 3 * S::KCH, kend, t,
                                               p.a_vec);
                    }
                }
            } else {
                for (int64_t kc = kw; kc < wend; kc += S::KCH) {
                    /* The next chunk's loads go out before this chunk's multiplies. */
                    uint32_t vn[S::CH][2][4];
                    if (kc + S::KCH < kend)
                        sk_load_a_chunk<S>(vn, pa0, pa1, in0, in1, kc + S::KCH, kend, t, p.a_vec);
                    sk_kmajor_mul<DT, NMAX, MMA, BSC, S>(va, sk_smem + (kc - kw) * S::BS, pitch, g,
                                                         t, mac, sum, p, bz, ra, kc);
#pragma unroll
                    for (int s = 0; s < S::CH; ++s)
#pragma unroll
                        for (int w = 0; w < 4; ++w)
                            va[s][0][w] = vn[s][0][w], va[s][1][w] = vn[s][1][w];
                }
            }
        }

        if constexpr (MMA) {
            /* Accumulator e of atom nt: row g (e < 2) or g + 8, column nt * 8 + 2t + e % 2. */
    #pragma unroll
            for (int nt = 0; nt < NT; ++nt)
    #pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int64_t i = e < 2 ? r0 : r1;
                    const int64_t j = nt * 8 + 2 * t + e % 2;
                    if constexpr (DT == DUET_DTYPE_I8)
                        sk_out<uint32_t>(p, bz, i, j, (uint32_t)mac[nt][e]);
                    else
                        sk_out<float>(p, bz, i, j, mac[nt][e]);
                }
        } else {
            /* The four lanes of a group hold sums over disjoint k: add them (the same bits in each
             * lane), then lane t writes columns t, t + 4, ... */
    #pragma unroll
            for (int j = 0; j < NMAX; ++j)
    #pragma unroll
                for (int r = 0; r < 2; ++r) {
                    acc v = sum[MMA ? 0 : r][j];
                    v += duet_shfl_xor(v, 1);
                    v += duet_shfl_xor(v, 2);
                    sum[MMA ? 0 : r][j] = v;
                }
    #pragma unroll
            for (int j = 0; j < NMAX; ++j)
                if (j % 4 == t) {
                    sk_out<acc>(p, bz, r0, j, sum[0][j]);
                    sk_out<acc>(p, bz, r1, j, sum[MMA ? 0 : 1][j]);
                }
        }
        /* The next batch restages B over this one's window. */
        duet_barrier();
    }
}

/* ---- M-major A ------------------------------------------------------------------------------ */

template <int DT, int NMAX> struct sk_mmajor_shape {
    typedef typename gemm_elem<DT>::acc acc;
    static constexpr int ELEM = gemm_elem<DT>::ELEM;
    static constexpr int LV = 8 / ELEM; /* rows of a lane: 8 bytes of A's column */
    static constexpr int KCH = 64;                              /* k of one chunk */
    static constexpr int SMEM_B = KCH * NMAX * (int)sizeof(acc);
    static constexpr int SMEM_R = LV * NMAX * (int)sizeof(acc); /* x the warp's lanes */
};

template <int DT, int NMAX>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(SK_WARPS *DUET_WARP_SIZE, 2)
    gemm_skinny_mmajor_kernel(const sk_args p)
{
    typedef sk_mmajor_shape<DT, NMAX> S;
    typedef typename S::acc acc;
    constexpr int THREADS = SK_WARPS * DUET_WARP_SIZE;
    constexpr int BM = S::LV * DUET_WARP_SIZE;
    extern __shared__ __align__(16) unsigned char sk_smem[];
    acc *const bsm = (acc *)sk_smem; /* [KCH][NMAX] */

    const int tid = (int)threadIdx.x;
    const int lane = tid % DUET_WARP_SIZE, warp = tid / DUET_WARP_SIZE;
    /* Batches past the grid's z limit: the grid strides over them. */
    for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
        const int64_t i0 = (int64_t)blockIdx.x * BM + lane * S::LV;
        const int64_t kbeg = (int64_t)blockIdx.y * p.kslice;
        const int64_t kend = kbeg + p.kslice < p.k ? kbeg + p.kslice : p.k;
        const bool full = p.a_vec && i0 + S::LV <= p.m;
        const unsigned char *pa = p.a + (bz * p.a_bs + (i0 < p.m ? i0 : 0)) * S::ELEM;
        const unsigned char *pb = p.b + bz * p.b_bs * S::ELEM;

        acc sum[S::LV][NMAX];
    #pragma unroll
        for (int l = 0; l < S::LV; ++l)
    #pragma unroll
            for (int j = 0; j < NMAX; ++j) sum[l][j] = acc(0);

        constexpr int KW = S::KCH / SK_WARPS; /* k of a warp per chunk */
        for (int64_t kc = kbeg; kc < kend; kc += S::KCH) {
            acc x[KW][S::LV];
    #pragma unroll
            for (int q = 0; q < KW; ++q) {
                const int64_t k = kc + q * SK_WARPS + warp;
                const unsigned char *src = pa + k * p.a_cs * S::ELEM;
                if (k < kend && full) {
                    if constexpr (S::LV * S::ELEM == 8) {
                        const uint2 u = *(const uint2 *)src;
                        const uint32_t w[2] = {u.x, u.y};
    #pragma unroll
                        for (int l = 0; l < S::LV; ++l) x[q][l] = sk_word_elem<DT>(w, l);
                    } else {
                        const uint32_t w[1] = {*(const uint32_t *)src};
    #pragma unroll
                        for (int l = 0; l < S::LV; ++l) x[q][l] = sk_word_elem<DT>(w, l);
                    }
                } else {
    #pragma unroll
                    for (int l = 0; l < S::LV; ++l)
                        x[q][l] = k < kend && i0 + l < p.m ? gemm_load_elem<DT>(src + l * S::ELEM)
                                                           : acc(0);
                }
            }

            duet_barrier();
            for (int idx = tid; idx < S::KCH * NMAX; idx += THREADS) {
                int j, kk;
                if (p.b_nmajor) {
                    j = idx % NMAX;
                    kk = idx / NMAX;
                } else {
                    j = idx / S::KCH;
                    kk = idx % S::KCH;
                }
                const int64_t k = kc + kk;
                bsm[kk * NMAX + j] =
                    j < p.n && k < kend
                        ? gemm_load_elem<DT>(pb + (k * p.b_rs + (int64_t)j * p.b_cs) * S::ELEM)
                        : acc(0);
            }
            duet_barrier();

    #pragma unroll
            for (int q = 0; q < KW; ++q) {
                const acc *bk = bsm + (q * SK_WARPS + warp) * NMAX;
    #pragma unroll
                for (int j = 0; j < NMAX; ++j) {
                    const acc b = bk[j];
    #pragma unroll
                    for (int l = 0; l < S::LV; ++l) sum[l][j] += x[q][l] * b;
                }
            }
        }

        /* The warps' sums over their k positions meet in warp order, one warp at a time. */
        acc *const red = (acc *)sk_smem; /* [lane][LV][NMAX] */
        for (int w = 0; w < SK_WARPS; ++w) {
            duet_barrier();
            if (warp == w) {
#pragma unroll
                for (int l = 0; l < S::LV; ++l)
#pragma unroll
                    for (int j = 0; j < NMAX; ++j) {
                        acc *r = red + (lane * S::LV + l) * NMAX + j;
                        const acc v = w == 0 ? sum[l][j] : *r + sum[l][j];
                        if (w < SK_WARPS - 1) *r = v;
                        else sk_out<acc>(p, bz, i0 + l, j, v);
                    }
            }
        }
        duet_barrier();
    }
}

/* ---- the reduction of the slices --------------------------------------------------------------- */

#define SK_REDUCE_THREADS 256

/* alpha * v in the accumulator's type: what the family stores for a C it does not read. */
template <typename ACC> DUET_INLINE ACC sk_product(const sk_args &p, ACC v)
{
    if constexpr (sizeof(ACC) == 8)
        return p.alpha * v;
    else if constexpr (ACC(-1) > ACC(0))
        return p.ialpha * v;
    else
        return p.falpha * v;
}

/* C(bz, i, j) from the split slices' partial sums, added in slice order; consecutive threads
 * take elements adjacent in C. EPI: duet_gemm_ex's epilogue e (gemm_epilogue.cuh, in the
 * accumulator's type, its operands seen as the kernels see C) writes D from alpha * sum instead,
 * the same steps and bits as its own pass over a product stored first. */
template <typename ACC, bool EPI>
DUET_GLOBAL void __launch_bounds__(SK_REDUCE_THREADS)
    gemm_skinny_reduce_kernel(const sk_args p, const ge_args e)
{
    typedef ge_math<ACC> G;
    const ACC beta = G::scalar(e.beta), lo = G::scalar(e.lo), hi = G::scalar(e.hi);
    const int64_t total = p.batch * p.m * p.n;
    const ACC *w = (const ACC *)p.ws;
    for (int64_t idx = (int64_t)blockIdx.x * SK_REDUCE_THREADS + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * SK_REDUCE_THREADS) {
        ACC v = w[idx];
        for (int s = 1; s < p.split; ++s) v += w[(int64_t)s * total + idx];
        const int64_t mn = idx % (p.m * p.n), bz = idx / (p.m * p.n);
        const int64_t i = p.c_imajor ? mn % p.m : mn / p.n, j = p.c_imajor ? mn / p.m : mn % p.n;
        if constexpr (EPI)
            ge_finish<ACC>(e, bz, i, j, ge_scale<ACC>(e, bz, i, j, sk_product<ACC>(p, v)), beta, lo,
                           hi);
        else
            sk_store_c<ACC>(p, bz, i, j, v);
    }
}

#endif /* DUET_KERNELS_GEMM_SKINNY_CUH */
