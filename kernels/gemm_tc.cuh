/* gemm_tc.cuh - the portable tensor-core GEMM (f16, bf16, tf32, 3xtf32, i8) over mma_atom.cuh. */
#ifndef DUET_KERNELS_GEMM_TC_CUH
#define DUET_KERNELS_GEMM_TC_CUH

#include "duet/duet.h"

#include "compat.h"
#include "gemm_fast_tile.cuh"
#include "lowp_convert.cuh"
#include "mma_atom.cuh"

#include <stdint.h>

/*
 * One kernel source for NVIDIA (mma.sync, sm_80+) and AMD (MFMA, CDNA): a block computes a
 * BM x BN tile of C with (BM / WM) x (BN / WN) warps, each a WM x WN tile of atoms.
 *
 * Shared memory holds A and B k-major as 32-bit words (mma_atom.cuh): per stage, BM rows of A
 * and BN rows of B, each BKW = 16 words (64 bytes of k: 32 f16/bf16, 16 f32, 64 i8) padded to
 * TC_PW = 20 words. The pad makes the eight 16-byte row segments that one ldmatrix phase reads
 * fall in eight distinct bank groups (a pitch of 5 16-byte units), and keeps every row start
 * 16-byte aligned for cp.async and ldmatrix.
 *
 * Each operand has one of three loaders (template arguments LA, LB):
 *   TC_LOAD_ASYNC  cp.async of 16-byte k-runs straight into shared memory, STAGES - 1 tiles in
 *                  flight (NVIDIA sm_80+; the operand is contiguous along k with 16-byte
 *                  aligned rows, which the launcher checks);
 *   TC_LOAD_ASYNC_MN  16-bit inputs contiguous along m (n) with 16-byte aligned rows (a
 *                  column-major A, a row-major B): cp.async of 16-byte runs along m (n) into an
 *                  m- (n-) major tile, rows of k with a pitch of BX + 8 elements, whose
 *                  fragments ldmatrix.trans delivers in the k-major order (NVIDIA sm_80+);
 *   TC_LOAD_REG    register-staged: the next tile is read into registers before the current
 *                  one is multiplied and written to shared memory after it. Its mode (a kernel
 *                  argument, uniform) says how it reads: 16-byte k-runs (TC_KVEC), 16-byte runs
 *                  along m or n transposed into k-words in registers (TC_XVEC: a row-major B, a
 *                  column-major A), or element by element (TC_SCALAR: any stride, unaligned).
 * Out-of-range elements are stored as zeros, so edge tiles need no special multiply.
 *
 * 3xTF32: an f32 input x is split into big = tf32(x) and small = tf32(x - big); the three
 * products small*big + big*small + big*big (smallest first) accumulate in f32, which recovers
 * about 21 of the 24 mantissa bits of each product: f32-level accuracy at three tf32 passes.
 */

#define TC_BKW 16 /* k words per tile row */
#define TC_PW 20  /* shared pitch of a row, in words */

enum { TC_LOAD_ASYNC = 0, TC_LOAD_REG = 1, TC_LOAD_ASYNC_MN = 2 };
enum { TC_SCALAR = 0, TC_XVEC = 1, TC_KVEC = 2 };

/* One operand seen along x (m for A, n for B) and k: element (bt, x, k) at
 * base + (bt * bs + x * sx + k * sk) * element bytes. */
struct tc_operand {
    const unsigned char *base;
    int64_t sx, sk, bs;
    int mode; /* TC_SCALAR, TC_XVEC or TC_KVEC (the register loader's read pattern) */
};

struct tc_args {
    int64_t m, n, k, batch;
    /* When > 0, the k of the last batch entry alone (the swizzled kernel only): a split-K
     * launch runs its k-slices as batch entries, the last one shorter. */
    int64_t k_last;
    /* The cluster split of gemm_tc_kernel (CSPLIT, sm_90): the k of one slice; slice y of a
     * tile is the block of blockIdx.y in the tile's cluster of gridDim.y blocks. */
    int64_t kslice;
    int64_t tiles_m, tiles_n;
    tc_operand a, b;
    unsigned char *c;
    int64_t c_rs, c_cs, c_bs; /* elements */
    int c_dtype;              /* duet_dtype of C: f32, f16, bf16 or i32 */
    float alpha, beta;        /* float C */
    uint32_t ialpha, ibeta;   /* i32 C: arithmetic modulo 2^32 */
    int beta_zero;            /* C is never read */
};

template <int KIND> struct tc_kind {
    static constexpr int ELEM = KIND == DUET_MMA_TF32 ? 4 : KIND == DUET_MMA_I8 ? 1 : 2;
    static constexpr int EPW = 4 / ELEM; /* elements per word */
    static constexpr int BK = TC_BKW * EPW;
};

/* The low 8 * ELEM bits of a word. */
template <int ELEM> DUET_HOST_DEVICE constexpr uint32_t tc_elem_mask() { return ELEM == 4 ? 0xffffffffu : (ELEM == 2 ? 0xffffu : 0xffu); }

template <int ELEM> DUET_INLINE uint32_t tc_load_elem(const unsigned char *p)
{
    if (ELEM == 1) return *p;
    if (ELEM == 2) return *reinterpret_cast<const uint16_t *>(p);
    return *reinterpret_cast<const uint32_t *>(p);
}

/* cp.async of 16 bytes (src_bytes of them read, the rest zero) to a shared-window address. */
DUET_INLINE void tc_cp_async16(uint32_t s, const void *src, int src_bytes)
{
#if DUET_GEMM_CP_ASYNC
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes)
                 : "memory");
#else
    (void)s;
    (void)src;
    (void)src_bytes;
#endif /* DUET_GEMM_CP_ASYNC */
}

/*
 * The loader of one operand: a BX x BKW-word tile, rows of x, from element (x0, k0) on.
 * RW: words per thread (the register loader's staging).
 */
/* Bytes of one x-vector of the TC_XVEC read pattern: 16, or 8 where 16-byte vectors would
 * leave threads without one (i8 tiles on 256-thread AMD blocks). */
template <int KIND, int BX, int THREADS>
DUET_HOST_DEVICE constexpr int tc_xb()
{
    return (BX * tc_kind<KIND>::ELEM / 16) * TC_BKW >= THREADS ? 16 : 8;
}

/* Whether a register loader of a BX-row tile can work in two parts (every read pattern
 * divides evenly between them). */
template <int KIND, int BX, int THREADS>
DUET_HOST_DEVICE constexpr bool tc_splittable()
{
    return (BX * (TC_BKW / 4) / THREADS) % 2 == 0 &&
           ((BX / (tc_xb<KIND, BX, THREADS>() / tc_kind<KIND>::ELEM)) * TC_BKW / THREADS) % 2 == 0 &&
           (BX * TC_BKW / THREADS) % 2 == 0;
}

template <int KIND, int BX, int THREADS, int NP>
struct tc_loader {
    typedef tc_kind<KIND> K;
    static constexpr int ELEM = K::ELEM, EPW = K::EPW;
    static constexpr int RW = BX * TC_BKW / THREADS;
    static constexpr int CHUNKS = BX * (TC_BKW / 4) / THREADS; /* 16-byte k-runs per thread */
    static constexpr int XB = tc_xb<KIND, BX, THREADS>();       /* bytes per x-vector */
    static constexpr int V = XB / ELEM;                         /* elements per x-vector */
    static constexpr int XUNITS = (BX / V) * TC_BKW / THREADS; /* XVEC units per thread */
    static_assert(BX * TC_BKW % THREADS == 0, "whole words per thread");
    static_assert(BX * (TC_BKW / 4) % THREADS == 0, "whole k-runs per thread");
    static_assert((BX / V) * TC_BKW % THREADS == 0, "whole x-vectors per thread");
    static_assert(XUNITS * V == RW, "the x-vector mode fills the same registers");

    /* cp.async: 16-byte run q of row r (run = 4 words = 4 * EPW elements along k). A thread's
     * runs are rows r0, r0 + THREADS / 4, ... at one q, so one pointer and one stride describe
     * them; a tile whole in x and k takes the fast path (no clamping, no per-run arithmetic
     * beyond an add). */
    static DUET_DEVICE void copy_async(uint32_t *s, const unsigned char *base, int64_t sx,
                                       int64_t xrem, int64_t krem, int tid)
    {
        if (xrem >= BX && krem >= tc_kind<KIND>::BK) {
            const int r0 = tid >> 2, q = tid & 3;
            const unsigned char *p = base + ((int64_t)r0 * sx + q * 4 * EPW) * ELEM;
            const int64_t step = (int64_t)(THREADS / 4) * sx * ELEM;
            uint32_t *d = s + r0 * TC_PW + q * 4;
#pragma unroll
            for (int i = 0; i < CHUNKS; ++i)
                gf_copy_async<16>(d + i * (THREADS / 4) * TC_PW, p + i * step, 16);
            return;
        }
#pragma unroll
        for (int i = 0; i < CHUNKS; ++i) {
            const int c = tid + i * THREADS;
            const int r = c >> 2, q = c & 3;
            const int64_t k = (int64_t)q * 4 * EPW;
            int64_t valid = r < xrem ? krem - k : 0;
            valid = valid < 0 ? 0 : valid > 4 * EPW ? 4 * EPW : valid;
            const unsigned char *p = base + ((int64_t)r * sx + k) * ELEM;
            gf_copy_async<16>(s + r * TC_PW + q * 4, valid > 0 ? (const void *)p : (const void *)base,
                              (int)valid * ELEM);
        }
    }

    /* TC_LOAD_ASYNC_MN (16-bit inputs): BK rows of k, each BX elements along x, pitch MNPW
     * words (BX + 8 elements: eight rows of an ldmatrix phase in distinct bank groups). */
    static constexpr int MNPW = (BX + 8) / 2;
    static constexpr int MNCHUNKS = tc_kind<KIND>::BK * (BX / 8) / THREADS;
    static DUET_DEVICE void copy_async_mn(uint32_t *s, const unsigned char *base, int64_t sk,
                                          int64_t xrem, int64_t krem, int tid)
    {
        static_assert(ELEM == 2, "the m-/n-major tile is for 16-bit inputs");
        static_assert(tc_kind<KIND>::BK * (BX / 8) % THREADS == 0, "whole runs per thread");
        static_assert(tc_kind<KIND>::BK * MNPW <= BX * TC_PW, "the tile fits the stage");
        constexpr int RUNS = BX / 8; /* 16-byte runs per k row */
        const bool whole = xrem >= BX && krem >= tc_kind<KIND>::BK;
#pragma unroll
        for (int i = 0; i < MNCHUNKS; ++i) {
            const int c = tid + i * THREADS;
            const int kr = c / RUNS, xc = c % RUNS;
            const unsigned char *p = base + ((int64_t)kr * sk + xc * 8) * 2;
            int valid = 8;
            if (!whole) {
                const int64_t v = kr < krem ? xrem - xc * 8 : 0;
                valid = v <= 0 ? 0 : v >= 8 ? 8 : (int)v;
            }
            gf_copy_async<16>(s + kr * MNPW + xc * 4, valid > 0 ? (const void *)p : (const void *)base,
                              valid * 2);
        }
    }

    /* The pipelined kernel's copies (NVIDIA, both operands by cp.async): state made once per
     * output tile, then per k-tile a few adds and selects for each 16-byte run and no branch.
     * (copy_async above tests for a whole tile and keeps a clamping path beside its fast one;
     * the compiler predicated both into one block of about 380 instructions per k-tile, as
     * many as the tile's MMAs and ldmatrix several times over.) Runs out of range read
     * nothing (src_bytes 0) from an address inside the block's first row; a run that ends
     * past k or x reads its valid part and zero-fills the rest, as copy_async does. */
    struct pipe {
        const unsigned char *p0;  /* the thread's first run at k = 0 */
        const unsigned char *blk; /* element (x0, 0): an address that is always valid */
        int64_t step;             /* bytes between the thread's runs */
        int lim;                  /* k-major: rows in range; x-major: valid bytes of its runs */
    };
    /* k-major (TC_LOAD_ASYNC): thread t copies run q = t % 4 of rows t / 4 + i * THREADS / 4. */
    static DUET_DEVICE void pipe_init_k(pipe &st, const unsigned char *base, int64_t sx,
                                        int64_t xrem, int tid)
    {
        st.p0 = base + (int64_t)(tid >> 2) * sx * ELEM;
        st.blk = base;
        st.step = (int64_t)(THREADS / 4) * sx * ELEM;
        st.lim = xrem < BX ? (int)xrem : BX;
    }
    static DUET_DEVICE void pipe_copy_k(uint32_t sdst, const pipe &st, int64_t kt, int64_t k,
                                        int tid)
    {
        const int r0 = tid >> 2, q = tid & 3;
        const int64_t k0 = kt * tc_kind<KIND>::BK;
        const int64_t left = (k - k0) * ELEM - q * 16;
        const int kb = left >= 16 ? 16 : left <= 0 ? 0 : (int)left;
        const int64_t off = k0 * ELEM + (kb > 0 ? q * 16 : 0);
        const unsigned char *const fallback = st.blk + k0 * ELEM;
        const uint32_t d = sdst + (uint32_t)(r0 * TC_PW + q * 4) * 4u;
#pragma unroll
        for (int i = 0; i < CHUNKS; ++i) {
            const bool ok = r0 + i * (THREADS / 4) < st.lim;
            tc_cp_async16(d + (uint32_t)(i * (THREADS / 4) * TC_PW * 4),
                          ok ? (const void *)(st.p0 + i * st.step + off) : (const void *)fallback,
                          ok ? kb : 0);
        }
    }
    /* x-major (TC_LOAD_ASYNC_MN, 16-bit): thread t copies x-run t % RUNS of k rows
     * t / RUNS + i * THREADS / RUNS, as copy_async_mn does. */
    static constexpr int MNRUNS = BX / 8;
    static DUET_DEVICE void pipe_init_mn(pipe &st, const unsigned char *base, int64_t sk,
                                         int64_t xrem, int tid)
    {
        static_assert(THREADS % MNRUNS == 0, "every thread keeps one x-run");
        const int kr0 = tid / MNRUNS, xc = tid % MNRUNS;
        st.p0 = base + ((int64_t)kr0 * sk + xc * 8) * 2;
        st.blk = base;
        st.step = (int64_t)(THREADS / MNRUNS) * sk * 2;
        const int64_t v = xrem - xc * 8;
        st.lim = v <= 0 ? 0 : v >= 8 ? 16 : (int)v * 2;
    }
    static DUET_DEVICE void pipe_copy_mn(uint32_t sdst, const pipe &st, int64_t kt, int64_t k,
                                         int64_t sk, int tid)
    {
        constexpr int KRS = THREADS / MNRUNS;
        const int kr0 = tid / MNRUNS, xc = tid % MNRUNS;
        const int64_t k0 = kt * tc_kind<KIND>::BK;
        const unsigned char *const pk = st.p0 + k0 * sk * 2;
        const int64_t krem = k - k0;
        const uint32_t d = sdst + (uint32_t)(kr0 * MNPW + xc * 4) * 4u;
#pragma unroll
        for (int i = 0; i < MNCHUNKS; ++i) {
            const bool ok = kr0 + i * KRS < krem && st.lim > 0;
            tc_cp_async16(d + (uint32_t)(i * KRS * MNPW * 4),
                          ok ? (const void *)(pk + i * st.step) : (const void *)st.blk,
                          ok ? st.lim : 0);
        }
    }

    /* The register loader works in NP parts, so that only RW / NP words are staged at a time
     * (the kernel stores part 0 halfway through a tile's multiply, then fetches part 1). */
    static constexpr int PW = RW / NP;
    static_assert(NP == 1 || (CHUNKS % NP == 0 && XUNITS % NP == 0 && RW % NP == 0),
                  "the parts divide every read pattern");

    /* Register loader, step 1: global -> registers (words packed along k), part P of NP. */
    template <int P>
    static DUET_DEVICE void fetch(uint32_t (&wp)[PW], const tc_operand &op, const unsigned char *base,
                                  int64_t xrem, int64_t krem, int tid)
    {
        /* The offsets below are recomputed per call, not held across the k loop. */
        tid = duet_opaque(tid);
        if (op.mode == TC_KVEC) {
#pragma unroll
            for (int i = P * CHUNKS / NP; i < (P + 1) * CHUNKS / NP; ++i) {
                const int c = tid + i * THREADS;
                const int r = c >> 2, q = c & 3;
                const int64_t k = (int64_t)q * 4 * EPW;
                const unsigned char *p = base + ((int64_t)r * op.sx + k) * ELEM;
                if (r < xrem && krem - k >= 4 * EPW) {
                    const duet_vec16_t v = *reinterpret_cast<const duet_vec16_t *>(p);
                    wp[-P * PW + 4 * i + 0] = v.x;
                    wp[-P * PW + 4 * i + 1] = v.y;
                    wp[-P * PW + 4 * i + 2] = v.z;
                    wp[-P * PW + 4 * i + 3] = v.w;
                } else {
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        uint32_t word = 0;
#pragma unroll
                        for (int e = 0; e < EPW; ++e) {
                            const int64_t ke = k + j * EPW + e;
                            if (r < xrem && ke < krem)
                                word |= tc_load_elem<ELEM>(p + (int64_t)(j * EPW + e) * ELEM)
                                        << (8 * ELEM * e);
                        }
                        wp[-P * PW + 4 * i + j] = word;
                    }
                }
            }
        } else if (op.mode == TC_XVEC) {
            /* Unit u: x-vector xv (V elements along x) at k-word kw. Lanes pair up on x so
             * that each k row is read in whole 32-byte sectors; EPW rows make the words. */
#pragma unroll
            for (int i = P * XUNITS / NP; i < (P + 1) * XUNITS / NP; ++i) {
                const int u = tid + i * THREADS;
                const int xv = (u & 1) + 2 * (u / (2 * TC_BKW)), kw = (u >> 1) % TC_BKW;
                const int x = xv * V;
                uint32_t vec[EPW][XB / 4];
#pragma unroll
                for (int e = 0; e < EPW; ++e) {
                    const int64_t k = (int64_t)kw * EPW + e;
                    const unsigned char *p = base + ((int64_t)x + k * op.sk) * ELEM;
                    if (k < krem && xrem - x >= V) {
                        if constexpr (XB == 16) {
                            const duet_vec16_t v = *reinterpret_cast<const duet_vec16_t *>(p);
                            vec[e][0] = v.x;
                            vec[e][1] = v.y;
                            vec[e][2 % (XB / 4)] = v.z;
                            vec[e][3 % (XB / 4)] = v.w;
                        } else {
                            const uint2 v = *reinterpret_cast<const uint2 *>(p);
                            vec[e][0] = v.x;
                            vec[e][1] = v.y;
                        }
                    } else {
#pragma unroll
                        for (int j = 0; j < XB / 4; ++j) {
                            uint32_t word = 0;
#pragma unroll
                            for (int b = 0; b < EPW; ++b) {
                                const int xe = x + j * EPW + b;
                                if (k < krem && xe < xrem)
                                    word |= tc_load_elem<ELEM>(p + (int64_t)(j * EPW + b) * ELEM)
                                            << (8 * ELEM * b);
                            }
                            vec[e][j] = word;
                        }
                    }
                }
                /* Transpose EPW k-rows of V x-elements into V words of EPW k-elements. */
#pragma unroll
                for (int xi = 0; xi < V; ++xi) {
                    uint32_t word = 0;
#pragma unroll
                    for (int e = 0; e < EPW; ++e) {
                        const uint32_t bits =
                            (vec[e][xi / EPW] >> (8 * ELEM * (xi % EPW))) & tc_elem_mask<ELEM>();
                        word |= bits << (8 * ELEM * e);
                    }
                    wp[-P * PW + i * V + xi] = word;
                }
            }
        } else {
            /* Element by element; neighbouring lanes walk the operand's smaller stride. */
            const bool walk_x = op.sx <= op.sk;
#pragma unroll
            for (int i = P * PW; i < (P + 1) * PW; ++i) {
                const int u = tid + i * THREADS;
                const int x = walk_x ? u % BX : u / TC_BKW;
                const int kw = walk_x ? u / BX : u % TC_BKW;
                uint32_t word = 0;
#pragma unroll
                for (int e = 0; e < EPW; ++e) {
                    const int64_t k = (int64_t)kw * EPW + e;
                    if (x < xrem && k < krem)
                        word |= tc_load_elem<ELEM>(base + ((int64_t)x * op.sx + k * op.sk) * ELEM)
                                << (8 * ELEM * e);
                }
                wp[-P * PW + i] = word;
            }
        }
    }

    /* Register loader, step 2: registers -> shared, in the layout of the mode that read them. */
    template <int P>
    static DUET_DEVICE void store(uint32_t *s, const uint32_t (&wp)[PW], const tc_operand &op,
                                  int tid)
    {
        if (op.mode == TC_KVEC) {
#pragma unroll
            for (int i = P * CHUNKS / NP; i < (P + 1) * CHUNKS / NP; ++i) {
                const int c = tid + i * THREADS;
                const int r = c >> 2, q = c & 3;
                duet_vec16_t v;
                v.x = wp[-P * PW + 4 * i + 0];
                v.y = wp[-P * PW + 4 * i + 1];
                v.z = wp[-P * PW + 4 * i + 2];
                v.w = wp[-P * PW + 4 * i + 3];
                *reinterpret_cast<duet_vec16_t *>(s + r * TC_PW + q * 4) = v;
            }
        } else if (op.mode == TC_XVEC) {
#pragma unroll
            for (int i = P * XUNITS / NP; i < (P + 1) * XUNITS / NP; ++i) {
                const int u = tid + i * THREADS;
                const int xv = (u & 1) + 2 * (u / (2 * TC_BKW)), kw = (u >> 1) % TC_BKW;
#pragma unroll
                for (int xi = 0; xi < V; ++xi) s[(xv * V + xi) * TC_PW + kw] = wp[-P * PW + i * V + xi];
            }
        } else {
            const bool walk_x = op.sx <= op.sk;
#pragma unroll
            for (int i = P * PW; i < (P + 1) * PW; ++i) {
                const int u = tid + i * THREADS;
                const int x = walk_x ? u % BX : u / TC_BKW;
                const int kw = walk_x ? u / BX : u % TC_BKW;
                s[x * TC_PW + kw] = wp[-P * PW + i];
            }
        }
    }
};

/* f32 C = alpha * acc + beta * C (beta == 0: C unread), rounded once to C's dtype. */
DUET_INLINE void tc_store_float(const tc_args &p, unsigned char *c, float acc)
{
    float v = p.alpha * acc;
    if (p.c_dtype == DUET_DTYPE_F32) {
        float *q = reinterpret_cast<float *>(c);
        if (!p.beta_zero) v = fmaf(p.beta, *q, v);
        *q = v;
    } else if (p.c_dtype == DUET_DTYPE_F16) {
        uint16_t *q = reinterpret_cast<uint16_t *>(c);
        if (!p.beta_zero) v = fmaf(p.beta, duet_f16_to_f32(*q), v);
        *q = duet_f32_to_f16(v);
    } else {
        uint16_t *q = reinterpret_cast<uint16_t *>(c);
        if (!p.beta_zero) v = fmaf(p.beta, duet_bf16_to_f32(*q), v);
        *q = duet_f32_to_bf16(v);
    }
}

DUET_INLINE void tc_store_int(const tc_args &p, unsigned char *c, int32_t acc)
{
    uint32_t *q = reinterpret_cast<uint32_t *>(c);
    uint32_t v = p.ialpha * (uint32_t)acc;
    if (!p.beta_zero) v += p.ibeta * *q;
    *q = v;
}

/* The address of C's element (row, col) of batch entry bz. */
DUET_INLINE unsigned char *tc_c_at(const tc_args &p, int64_t bz, int64_t row, int64_t col)
{
    const int64_t off = bz * p.c_bs + row * p.c_rs + col * p.c_cs;
    return p.c + off * (p.c_dtype == DUET_DTYPE_F16 || p.c_dtype == DUET_DTYPE_BF16 ? 2 : 4);
}

DUET_INLINE void tc_store(const tc_args &p, unsigned char *c, float acc) { tc_store_float(p, c, acc); }
DUET_INLINE void tc_store(const tc_args &p, unsigned char *c, int32_t acc) { tc_store_int(p, c, acc); }

/* The blocks per SM the cluster-split kernel is compiled to keep resident (the planner's
 * DT_TC_SMALL_BLOCKS_PER_UNIT): 170 registers a thread, room for two k-tiles of staging in
 * flight; and the pitch of its shared sums, in words. */
#define TC_CSPLIT_MIN_BLOCKS 3
template <int BM, int BN> DUET_HOST_DEVICE constexpr int tc_csplit_pitch() { return BN + 4; }

#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* Arrival at and wait on the cluster's barrier: shared-memory writes before it are visible
 * to every block of the cluster after it. */
DUET_INLINE void tc_cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::
                     : "memory");
}

/* An accumulator as a 32-bit word and back. */
DUET_INLINE uint32_t tc_bits(float v) { return __float_as_uint(v); }
DUET_INLINE uint32_t tc_bits(int32_t v) { return (uint32_t)v; }
template <typename T> DUET_INLINE T tc_from_bits(uint32_t w);
template <> DUET_INLINE float tc_from_bits<float>(uint32_t w) { return __uint_as_float(w); }
template <> DUET_INLINE int32_t tc_from_bits<int32_t>(uint32_t w) { return (int32_t)w; }

/* The word at shared address s (this block's window) in the window of cluster block `rank`. */
DUET_INLINE uint32_t tc_cluster_load(uint32_t s, uint32_t rank)
{
    uint32_t remote, v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(s), "r"(rank));
    asm volatile("ld.shared::cluster.u32 %0, [%1];\n" : "=r"(v) : "r"(remote) : "memory");
    return v;
}

/* The cluster split's store (gemm_tc_kernel, CSPLIT): the block's raw sums to its shared
 * memory (a BM x BN tile of 32-bit words, pitch tc_csplit_pitch; the stages are free: the
 * kernel's barrier after its k-loop), then its share of rows summed over the cluster's
 * blocks in block order and stored. The second cluster barrier keeps every block's window
 * alive (and unwritten by its next tile) until all have read it. */
template <int BM, int BN, int WM, int WN, typename atom, typename Frag>
DUET_DEVICE void tc_csplit_store(const tc_args &p, const Frag &acc, uint32_t *smem, int64_t bz,
                                 int64_t m0, int64_t n0, int64_t mrem, int64_t nrem, int tid)
{
    typedef typename atom::acc_t acc_t;
    constexpr int AI = WM / atom::M, AJ = WN / atom::N;
    constexpr int THREADS = (BM / WM) * (BN / WN) * DUET_WARP_SIZE;
    constexpr int PITCH = tc_csplit_pitch<BM, BN>();
    const int lane = tid % DUET_WARP_SIZE, warp = tid / DUET_WARP_SIZE;
    const int wm = warp % (BM / WM), wn = warp / (BM / WM);
#pragma unroll
    for (int i = 0; i < AI; ++i)
#pragma unroll
        for (int j = 0; j < AJ; ++j)
#pragma unroll
            for (int e = 0; e < atom::C_REGS; ++e) {
                int r, c;
                atom::c_pos(lane, e, r, c);
                const int row = wm * WM + i * atom::M + r, col = wn * WN + j * atom::N + c;
                smem[row * PITCH + col] = tc_bits(acc[i][j][e]);
            }
    tc_cluster_sync();
    const uint32_t blocks = gridDim.y, rank = blockIdx.y;
    const int r0 = (int)(rank * BM / blocks), r1 = (int)((rank + 1) * BM / blocks);
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    for (int x = r0 * BN + tid; x < r1 * BN; x += THREADS) {
        const int row = x / BN, col = x % BN;
        const uint32_t s = base + (uint32_t)(row * PITCH + col) * 4u;
        acc_t sum = tc_from_bits<acc_t>(tc_cluster_load(s, 0));
        for (uint32_t b = 1; b < blocks; ++b) sum += tc_from_bits<acc_t>(tc_cluster_load(s, b));
        if (row < mrem && col < nrem) tc_store(p, tc_c_at(p, bz, m0 + row, n0 + col), sum);
    }
    tc_cluster_sync();
}
#endif /* the cluster split: sm_90 */

/* A compile-time int as a value (the kernel's generic lambdas take parts this way). */
template <int V> struct tc_int {
    static constexpr int value = V;
};

/* Shared bytes of one launch. */
template <int BM, int BN, int STAGES>
constexpr int tc_shared_bytes()
{
    return STAGES * (BM + BN) * TC_PW * 4;
}

/* The cluster split (CSPLIT, NVIDIA sm_90): gridDim.y blocks, one cluster, share each tile,
 * block y taking k in [y * kslice, (y + 1) * kslice). Each block leaves its raw sums in its own
 * shared memory; after a cluster barrier block y reads rows [y * BM / S, (y + 1) * BM / S) of
 * every block's sums through distributed shared memory, adds them in block order (the same
 * order whichever block finished first: the bits do not depend on the run) and stores C. One
 * launch, no workspace. gridDim.y == 1 (and every device without clusters) stores as the
 * plain kernel does. */
template <int KIND, bool SPLIT3, int BM, int BN, int WM, int WN, int STAGES, int LA, int LB,
          bool CSPLIT = false>
DUET_GLOBAL void GF_LAUNCH_BOUNDS((BM / WM) * (BN / WN) * DUET_WARP_SIZE,
                                  CSPLIT ? TC_CSPLIT_MIN_BLOCKS : 1) gemm_tc_kernel(const tc_args p)
{
    typedef duet_mma_atom<KIND> atom;
    typedef typename atom::acc_t acc_t;
    typedef tc_kind<KIND> K;
    constexpr int THREADS = (BM / WM) * (BN / WN) * DUET_WARP_SIZE;
    constexpr int AI = WM / atom::M, AJ = WN / atom::N;
    constexpr int SA = BM * TC_PW, SB = BN * TC_PW; /* words of one stage */
    constexpr int NSTEP = TC_BKW / atom::KW; /* atom k-steps per tile */
    /* Register-staged operands are fetched and stored in two halves around the two halves of
     * the multiply where everything divides evenly: half the staging registers (the 64 x 64
     * warp tile already holds 128 accumulators), the same latency hiding. */
    constexpr int NP = (!CSPLIT && NSTEP % 2 == 0 && tc_splittable<KIND, BM, THREADS>() &&
                        tc_splittable<KIND, BN, THREADS>())
                           ? 2
                           : 1;
    typedef tc_loader<KIND, BM, THREADS, NP> LdA;
    typedef tc_loader<KIND, BN, THREADS, NP> LdB;
    /* Both operands by cp.async (NVIDIA): the pipelined k-loop (below). */
    constexpr bool PIPE = LA != TC_LOAD_REG && LB != TC_LOAD_REG;
    (void)PIPE;
    static_assert(WM % atom::M == 0 && WN % atom::N == 0, "warp tiles hold whole atoms");
    static_assert(TC_BKW % atom::KW == 0, "a tile row holds whole atoms");
    static_assert(STAGES >= 2, "double buffering at least");

    if (!atom::available) return; /* never launched: the launcher checks the device */

    extern __shared__ __align__(16) uint32_t tc_smem[];
    uint32_t *const As = tc_smem;
    uint32_t *const Bs = tc_smem + STAGES * SA;
    const typename atom::saddr sA0 = atom::to_saddr(As), sB0 = atom::to_saddr(Bs);

    const int64_t tiles = p.tiles_m * p.tiles_n;
    /* The block's k: all of it, or its slice of the cluster split. */
    int64_t kbeg = 0, kk = p.k;
    if constexpr (CSPLIT) {
        if (gridDim.y > 1) {
            kbeg = (int64_t)blockIdx.y * p.kslice;
            kk = p.k - kbeg < p.kslice ? p.k - kbeg : p.kslice;
            kk = kk < 0 ? 0 : kk;
        }
    }
    const int64_t kt_count = (kk + K::BK - 1) / K::BK;

    for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
        for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int64_t tm, tn;
            gf_tile_coords(tile, p.tiles_m, p.tiles_n, &tm, &tn);
            /* The thread's indices, anew for each tile: derived from the opaque thread index,
             * the per-thread offsets of the loaders and the epilogue are computed where they
             * are used instead of being hoisted out of the persistent loops and held in
             * registers across them (on CDNA that took every VGPR and AGPR and spilled). */
            const int tid = duet_opaque((int)threadIdx.x);
            const int lane = tid % DUET_WARP_SIZE, warp = tid / DUET_WARP_SIZE;
            const int wm = warp % (BM / WM), wn = warp / (BM / WM);
            const int64_t m0 = tm * BM, n0 = tn * BN;
            const int64_t mrem = p.m - m0, nrem = p.n - n0;
            const unsigned char *a0 =
                p.a.base + (bz * p.a.bs + m0 * p.a.sx + kbeg * p.a.sk) * K::ELEM;
            const unsigned char *b0 =
                p.b.base + (bz * p.b.bs + n0 * p.b.sx + kbeg * p.b.sk) * K::ELEM;

            typename atom::cfrag acc[AI][AJ];
            /* 3xTF32: the tensor cores' f32 accumulation is not round-to-nearest (it
             * truncates), which over a long k biases the sum; each k-tile is therefore summed
             * from zero in tacc and added to acc with an ordinary (round-to-nearest) f32 add,
             * so the truncation acts on short partial sums only. The launcher gives 3xTF32 a
             * 64 x 32 warp tile to make room for the second accumulator. */
            typename atom::cfrag tacc[SPLIT3 ? AI : 1][SPLIT3 ? AJ : 1];
            (void)tacc;
            /* An opaque zero: a constant zero fragment would be hoisted out of the tile loop
             * and held whole (16 AGPRs per MFMA fragment on CDNA) just to be copied. */
            const acc_t zero = acc_t(duet_opaque(0));
#pragma unroll
            for (int i = 0; i < AI; ++i)
#pragma unroll
                for (int j = 0; j < AJ; ++j)
#pragma unroll
                    for (int e = 0; e < atom::C_REGS; ++e) {
                        acc[i][j][e] = zero;
                        if constexpr (SPLIT3) tacc[i][j][e] = zero;
                    }
            auto flush = [&]() {
                if constexpr (SPLIT3) {
#pragma unroll
                    for (int i = 0; i < AI; ++i)
#pragma unroll
                        for (int j = 0; j < AJ; ++j)
#pragma unroll
                            for (int e = 0; e < atom::C_REGS; ++e) {
                                acc[i][j][e] += tacc[i][j][e];
                                tacc[i][j][e] = zero;
                            }
                }
            };

            uint32_t ra[LdA::PW], rb[LdB::PW]; /* register loaders only; unused otherwise */
            (void)ra;
            (void)rb;

            /* Tile kt's operand pointers. */
            auto at = [&](int64_t kt) { return a0 + kt * K::BK * p.a.sk * K::ELEM; };
            auto bt = [&](int64_t kt) { return b0 + kt * K::BK * p.b.sk * K::ELEM; };
            /* cp.async operands of tile kt into stage st. */
            auto issue = [&](int64_t kt, int st) {
                const int64_t krem = kk - kt * K::BK;
                (void)krem;
                (void)st;
                if constexpr (LA == TC_LOAD_ASYNC)
                    LdA::copy_async(As + st * SA, at(kt), p.a.sx, mrem, krem, tid);
                if constexpr (LB == TC_LOAD_ASYNC)
                    LdB::copy_async(Bs + st * SB, bt(kt), p.b.sx, nrem, krem, tid);
                if constexpr (LA == TC_LOAD_ASYNC_MN)
                    LdA::copy_async_mn(As + st * SA, at(kt), p.a.sk, mrem, krem, tid);
                if constexpr (LB == TC_LOAD_ASYNC_MN)
                    LdB::copy_async_mn(Bs + st * SB, bt(kt), p.b.sk, nrem, krem, tid);
            };
            /* Register operands of tile kt, part P: global -> registers, registers -> stage. */
            auto fetch = [&](auto part, int64_t kt) {
                constexpr int P = decltype(part)::value;
                const int64_t krem = kk - kt * K::BK;
                (void)P;
                (void)krem;
                if constexpr (LA == TC_LOAD_REG) LdA::template fetch<P>(ra, p.a, at(kt), mrem, krem, tid);
                if constexpr (LB == TC_LOAD_REG) LdB::template fetch<P>(rb, p.b, bt(kt), nrem, krem, tid);
            };
            auto put = [&](auto part, int st) {
                constexpr int P = decltype(part)::value;
                (void)P;
                (void)st;
                if constexpr (LA == TC_LOAD_REG) LdA::template store<P>(As + st * SA, ra, p.a, tid);
                if constexpr (LB == TC_LOAD_REG) LdB::template store<P>(Bs + st * SB, rb, p.b, tid);
            };
            /* Atom k-steps [s0, s1) of the tile in stage st. */
            auto multiply = [&](int st, int s0, int s1) {
                const typename atom::saddr as = atom::offset(sA0, st * SA + wm * WM * TC_PW);
                const typename atom::saddr bs = atom::offset(sB0, st * SB + wn * WN * TC_PW);
                /* m- (n-) major tiles: word (k, x) at k * MNPW + x / 2. */
                const typename atom::saddr as_mn = atom::offset(sA0, st * SA + wm * WM / 2);
                const typename atom::saddr bs_mn = atom::offset(sB0, st * SB + wn * WN / 2);
                (void)as_mn;
                (void)bs_mn;
                auto load_b = [&](uint32_t (&b)[atom::B_REGS], int j, int kw) {
                    if constexpr (LB == TC_LOAD_ASYNC_MN)
                        atom::load_b_mn(b, atom::offset(bs_mn, kw * 2 * LdB::MNPW + j * atom::N / 2),
                                        LdB::MNPW, lane);
                    else
                        atom::load_b(b, atom::offset(bs, j * atom::N * TC_PW + kw), TC_PW, lane);
                };
#pragma unroll
                for (int step = s0; step < s1; ++step) {
                    const int kw = step * atom::KW;
                    uint32_t af[AI][atom::A_REGS];
                    uint32_t as_small[SPLIT3 ? AI : 1][atom::A_REGS];
                    (void)as_small;
#pragma unroll
                    for (int i = 0; i < AI; ++i) {
                        if constexpr (LA == TC_LOAD_ASYNC_MN)
                            atom::load_a_mn(af[i],
                                            atom::offset(as_mn, kw * 2 * LdA::MNPW + i * atom::M / 2),
                                            LdA::MNPW, lane);
                        else
                            atom::load_a(af[i], atom::offset(as, i * atom::M * TC_PW + kw), TC_PW, lane);
                        if constexpr (KIND == DUET_MMA_TF32) {
#pragma unroll
                            for (int r = 0; r < atom::A_REGS; ++r) {
                                const uint32_t big = duet_f32_to_tf32(af[i][r]);
                                if constexpr (SPLIT3)
                                    as_small[i][r] = duet_f32_to_tf32(__float_as_uint(
                                        __uint_as_float(af[i][r]) - __uint_as_float(big)));
                                af[i][r] = big;
                            }
                        }
                    }
                    /* B fragments one atom ahead: the ldmatrix of atom j + 1 is in flight
                     * while atom j's MMAs issue (the asm statements keep their order). */
                    uint32_t bnext[atom::B_REGS];
                    load_b(bnext, 0, kw);
#pragma unroll
                    for (int j = 0; j < AJ; ++j) {
                        uint32_t bf[atom::B_REGS];
#pragma unroll
                        for (int r = 0; r < atom::B_REGS; ++r) bf[r] = bnext[r];
                        if (j + 1 < AJ)
                            load_b(bnext, j + 1, kw);
                        if constexpr (KIND == DUET_MMA_TF32) {
                            uint32_t bsm[atom::B_REGS];
#pragma unroll
                            for (int r = 0; r < atom::B_REGS; ++r) {
                                const uint32_t big = duet_f32_to_tf32(bf[r]);
                                bsm[r] = duet_f32_to_tf32(__float_as_uint(__uint_as_float(bf[r]) -
                                                                          __uint_as_float(big)));
                                bf[r] = big;
                            }
                            if constexpr (SPLIT3) {
#pragma unroll
                                for (int i = 0; i < AI; ++i) {
                                    atom::mma(tacc[i][j], as_small[i], bf);
                                    atom::mma(tacc[i][j], af[i], bsm);
                                    atom::mma(tacc[i][j], af[i], bf);
                                }
                            } else {
                                (void)bsm;
                            }
                        }
                        if constexpr (!SPLIT3) {
#pragma unroll
                            for (int i = 0; i < AI; ++i) atom::mma(acc[i][j], af[i], bf);
                        }
                    }
                }
            };

#if DUET_GPU_CUDA
            if constexpr (PIPE) {
                /* Every operand by cp.async: the software pipeline of the NVIDIA kernels (as in
                 * CUTLASS's multistage mainloop). Fragments are double-buffered across atom
                 * k-steps: the ldmatrix of step s + 1 (or of the next tile's step 0) is issued
                 * before the MMAs of step s, so shared-memory latency hides behind the tensor
                 * cores instead of stalling the warp. One barrier per tile, after the MMAs of
                 * step NSTEP - 2: past it, tile kt + 1 has landed and every warp has finished
                 * reading tile kt - 1's stage, which the copies issued at step 0 of tile kt + 1
                 * then refill. Addresses: a per-lane part made here, a stage base advanced per
                 * tile, and per-atom constants that ldmatrix takes as immediates. */
                static_assert(NSTEP % 2 == 0 && AJ % 2 == 0, "whole fragment pairs per tile");
                const uint32_t a_l = sA0 + 4u * (uint32_t)(LA == TC_LOAD_ASYNC_MN
                                                                ? atom::a_mn_lane(LdA::MNPW, lane) + wm * WM / 2
                                                                : atom::a_lane(TC_PW, lane) + wm * WM * TC_PW);
                const uint32_t b_l = sB0 + 4u * (uint32_t)(LB == TC_LOAD_ASYNC_MN
                                                                ? atom::b2_mn_lane(LdB::MNPW, lane) + wn * WN / 2
                                                                : atom::b2_lane(TC_PW, lane) + wn * WN * TC_PW);
                uint32_t fa[2][AI][atom::A_REGS], fb[2][AJ][atom::B_REGS];
                auto load_frags = [&](uint32_t(&a)[AI][atom::A_REGS], uint32_t(&b)[AJ][atom::B_REGS],
                                      int st, int step) {
                    const uint32_t as = a_l + (uint32_t)st * (SA * 4u), bs = b_l + (uint32_t)st * (SB * 4u);
                    const int kw = step * atom::KW;
#pragma unroll
                    for (int i = 0; i < AI; ++i)
                        atom::template load_a_at<LA == TC_LOAD_ASYNC_MN>(
                            a[i], as + 4u * (uint32_t)(LA == TC_LOAD_ASYNC_MN
                                                           ? kw * 2 * LdA::MNPW + i * atom::M / 2
                                                           : i * atom::M * TC_PW + kw));
#pragma unroll
                    for (int j = 0; j < AJ; j += 2)
                        atom::template load_b2_at<LB == TC_LOAD_ASYNC_MN>(
                            b[j], b[j + 1], bs + 4u * (uint32_t)(LB == TC_LOAD_ASYNC_MN
                                                                     ? kw * 2 * LdB::MNPW + j * atom::N / 2
                                                                     : j * atom::N * TC_PW + kw));
                };
                auto mma_frags = [&](uint32_t(&a)[AI][atom::A_REGS], uint32_t(&b)[AJ][atom::B_REGS]) {
                    if constexpr (KIND == DUET_MMA_TF32) {
                        /* f32 words to tf32 in registers (3xTF32: and their residuals). */
                        uint32_t asm_[SPLIT3 ? AI : 1][atom::A_REGS];
                        (void)asm_;
#pragma unroll
                        for (int i = 0; i < AI; ++i)
#pragma unroll
                            for (int r = 0; r < atom::A_REGS; ++r) {
                                const uint32_t big = duet_f32_to_tf32(a[i][r]);
                                if constexpr (SPLIT3)
                                    asm_[i][r] = duet_f32_to_tf32(__float_as_uint(
                                        __uint_as_float(a[i][r]) - __uint_as_float(big)));
                                a[i][r] = big;
                            }
#pragma unroll
                        for (int j = 0; j < AJ; ++j) {
                            uint32_t bsm[atom::B_REGS];
                            (void)bsm;
#pragma unroll
                            for (int r = 0; r < atom::B_REGS; ++r) {
                                const uint32_t big = duet_f32_to_tf32(b[j][r]);
                                if constexpr (SPLIT3)
                                    bsm[r] = duet_f32_to_tf32(__float_as_uint(__uint_as_float(b[j][r]) -
                                                                              __uint_as_float(big)));
                                b[j][r] = big;
                            }
#pragma unroll
                            for (int i = 0; i < AI; ++i) {
                                if constexpr (SPLIT3) {
                                    atom::mma(tacc[i][j], asm_[i], b[j]);
                                    atom::mma(tacc[i][j], a[i], bsm);
                                    atom::mma(tacc[i][j], a[i], b[j]);
                                } else {
                                    atom::mma(acc[i][j], a[i], b[j]);
                                }
                            }
                        }
                    } else {
#pragma unroll
                        for (int j = 0; j < AJ; ++j)
#pragma unroll
                            for (int i = 0; i < AI; ++i) atom::mma(acc[i][j], a[i], b[j]);
                    }
                };

                typename LdA::pipe pa;
                typename LdB::pipe pb;
                if constexpr (LA == TC_LOAD_ASYNC_MN)
                    LdA::pipe_init_mn(pa, a0, p.a.sk, mrem, tid);
                else
                    LdA::pipe_init_k(pa, a0, p.a.sx, mrem, tid);
                if constexpr (LB == TC_LOAD_ASYNC_MN)
                    LdB::pipe_init_mn(pb, b0, p.b.sk, nrem, tid);
                else
                    LdB::pipe_init_k(pb, b0, p.b.sx, nrem, tid);
                auto issue_pipe = [&](int64_t kt, int st) {
                    const uint32_t da = sA0 + (uint32_t)st * (SA * 4u), db = sB0 + (uint32_t)st * (SB * 4u);
                    if constexpr (LA == TC_LOAD_ASYNC_MN)
                        LdA::pipe_copy_mn(da, pa, kt, kk, p.a.sk, tid);
                    else
                        LdA::pipe_copy_k(da, pa, kt, kk, tid);
                    if constexpr (LB == TC_LOAD_ASYNC_MN)
                        LdB::pipe_copy_mn(db, pb, kt, kk, p.b.sk, tid);
                    else
                        LdB::pipe_copy_k(db, pb, kt, kk, tid);
                };
#pragma unroll
                for (int s = 0; s < STAGES - 1; ++s) {
                    if (s < kt_count) issue_pipe(s, s);
                    gf_copy_commit();
                }
                gf_copy_wait<STAGES - 2>();
                duet_barrier();
                int rst = 0, wst = STAGES - 1; /* the stage read, the stage refilled next */
                if (kt_count > 0) load_frags(fa[0], fb[0], 0, 0);
                for (int64_t kt = 0; kt < kt_count; ++kt) {
#pragma unroll
                    for (int step = 0; step < NSTEP; ++step) {
                        if (step + 1 < NSTEP)
                            load_frags(fa[(step + 1) & 1], fb[(step + 1) & 1], rst, step + 1);
                        else if (kt + 1 < kt_count)
                            load_frags(fa[(step + 1) & 1], fb[(step + 1) & 1], rst, 0);
                        if (step == 0) {
                            if (kt + STAGES - 1 < kt_count) issue_pipe(kt + STAGES - 1, wst);
                            gf_copy_commit();
                            wst = wst + 1 == STAGES ? 0 : wst + 1;
                        }
                        mma_frags(fa[step & 1], fb[step & 1]);
                        if (step == NSTEP - 2) {
                            gf_copy_wait<STAGES - 2>();
                            duet_barrier();
                            rst = rst + 1 == STAGES ? 0 : rst + 1;
                        }
                    }
                    flush();
                }
            } else
#endif /* DUET_GPU_CUDA */
                if constexpr (CSPLIT) {
                    /* The small-problem kernel: register-staged operands in chunks of D = STAGES /
                     * 2 k-tiles. A chunk's loads are all issued before the previous chunk is
                     * multiplied and stored to the other half of the stages after it, so a block
                     * waits on one memory latency per D k-tiles (its multiplies are short: the
                     * latency, not the tensor cores, sets its pace). */
                    static_assert(LA == TC_LOAD_REG && LB == TC_LOAD_REG && NP == 1 &&
                                      STAGES % 2 == 0,
                                  "the chunked loop is for register-staged operands");
                    constexpr int D = STAGES / 2;
                    uint32_t qa[D][LdA::PW], qb[D][LdB::PW];
                    const int64_t chunks = (kt_count + D - 1) / D;
                    auto fetch_chunk = [&](int64_t c) {
#pragma unroll
                        for (int d = 0; d < D; ++d) {
                            const int64_t kt = c * D + d;
                            if (kt < kt_count) {
                                LdA::template fetch<0>(qa[d], p.a, at(kt), mrem, kk - kt * K::BK,
                                                       tid);
                                LdB::template fetch<0>(qb[d], p.b, bt(kt), nrem, kk - kt * K::BK,
                                                       tid);
                            }
                        }
                    };
                    auto put_chunk = [&](int64_t c) {
#pragma unroll
                        for (int d = 0; d < D; ++d) {
                            const int st = (int)(c & 1) * D + d;
                            if (c * D + d < kt_count) {
                                LdA::template store<0>(As + st * SA, qa[d], p.a, tid);
                                LdB::template store<0>(Bs + st * SB, qb[d], p.b, tid);
                            }
                        }
                    };
                    if (chunks > 0) {
                        fetch_chunk(0);
                        put_chunk(0);
                    }
                    for (int64_t c = 0; c < chunks; ++c) {
                        /* Chunk c is in its stages; every warp is done with chunk c - 1's, which
                         * chunk c + 1 refills. */
                        duet_barrier();
                        const bool next = c + 1 < chunks;
                        if (next) fetch_chunk(c + 1);
#pragma unroll
                        for (int d = 0; d < D; ++d)
                            if (c * D + d < kt_count) multiply((int)(c & 1) * D + d, 0, NSTEP);
                        if (next) put_chunk(c + 1);
                    }
                } else {
                    /* Prologue: tiles 0 .. STAGES-2. The previous tile's readers are done before
                     * any stage is overwritten (barrier at the end of the tile loop). */
#pragma unroll
                    for (int s = 0; s < STAGES - 1; ++s) {
                        if (s < kt_count) {
                            issue(s, s);
                            fetch(tc_int<0>(), s);
                            put(tc_int<0>(), s);
                            if constexpr (NP == 2) {
                                fetch(tc_int<1>(), s);
                                put(tc_int<1>(), s);
                            }
                        }
                        gf_copy_commit();
                    }

                    for (int64_t kt = 0; kt < kt_count; ++kt) {
                        gf_copy_wait<STAGES - 2>();
                        duet_barrier();
                        /* Tile kt + STAGES - 1 goes into the stage tile kt - 1 used: every warp has
                         * finished with it (the barrier above). */
                        const int64_t nt = kt + STAGES - 1;
                        const int nst = (int)(nt % STAGES), st = (int)(kt % STAGES);
                        const bool next = nt < kt_count;
                        if (next) issue(nt, nst);
                        gf_copy_commit();
                        if (next) fetch(tc_int<0>(), nt);
                        multiply(st, 0, NSTEP / NP);
                        if (next) put(tc_int<0>(), nst);
                        if constexpr (NP == 2) {
                            if (next) fetch(tc_int<1>(), nt);
                            multiply(st, NSTEP / 2, NSTEP);
                            if (next) put(tc_int<1>(), nst);
                        }
                        flush();
                    }
                }
            gf_copy_wait<0>();
            duet_barrier(); /* the next tile's prologue overwrites the stages */

#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
            if constexpr (CSPLIT) {
                if (gridDim.y > 1) {
                    tc_csplit_store<BM, BN, WM, WN, atom>(p, acc, tc_smem, bz, m0, n0, mrem, nrem,
                                                          tid);
                    continue;
                }
            }
#endif      /* the cluster split: sm_90 */
            /* Epilogue: straight from the accumulators (C is read at most once per element). */
#pragma unroll
            for (int i = 0; i < AI; ++i)
#pragma unroll
                for (int j = 0; j < AJ; ++j)
#pragma unroll
                    for (int e = 0; e < atom::C_REGS; ++e) {
                        int r, c;
                        atom::c_pos(lane, e, r, c);
                        const int64_t gm = wm * WM + i * atom::M + r;
                        const int64_t gn = wn * WN + j * atom::N + c;
                        if (gm < mrem && gn < nrem)
                            tc_store(p, tc_c_at(p, bz, m0 + gm, n0 + gn), acc[i][j][e]);
                    }
        }
    }
}

#endif /* DUET_KERNELS_GEMM_TC_CUH */
