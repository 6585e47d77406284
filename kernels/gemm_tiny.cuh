/* gemm_tiny.cuh - small GEMMs of every input dtype in one compact launch (SIMT lanes). */
#ifndef DUET_KERNELS_GEMM_TINY_CUH
#define DUET_KERNELS_GEMM_TINY_CUH

#include "duet/duet.h"

#include "compat.h"
#include "gemm_elem.cuh"
#include "lowp_convert.cuh"

#include <stdint.h>

/*
 * A small GEMM costs what its warps execute one after another: on a 64 x 64 tile with 4 x 4
 * outputs a thread, a 16 x 16 x 16 problem still runs a whole tile's dependent loads,
 * multiplies (most of them of zeros) and stores in each warp, and a problem of a few dozen such
 * tiles leaves most SMs idle. This kernel sizes its tile to the problem: a block is 16 x 16
 * threads, each with TM x TM outputs (TM = 1, 2 or 4: tiles of 16, 32 or 64), chosen by the
 * planner so that the tiles spread over the SMs, and
 *   - k runs in steps of TY_BK = 16, the next step's elements read into registers while the
 *     current one multiplies (all of a step's loads in flight at once);
 *   - each operand is read along whichever of its dimensions is contiguous (k for a k-major
 *     operand, m or n otherwise), so a warp's loads are coalesced for any layout;
 *   - the multiply runs to the step's k rounded up to 4, not to TY_BK (zeros pad it);
 *   - C's dtype is a template argument: the store is straight code, no dtype dispatch.
 * f16/bf16 accumulate in f32, f32 in f32 (exact f32 for the TF32 math modes), f64 in f64, i8
 * and i32 in 32-bit integers modulo 2^32. The summation order is k order: the bits do not
 * depend on the run.
 */

#define TY_BK      16
#define TY_THREADS 256

/* Resident blocks an SM each micro-tile compiles for (the planner's DT_TINY_BLOCKS_*). */
template <int TM> DUET_HOST_DEVICE constexpr int ty_min_blocks()
{
    return TM == 4 ? 2 : TM == 2 ? 3 : 4;
}

/* One operand seen along x (m for A, n for B) and k: element (bt, x, k) at
 * base + (bt * bs + x * sx + k * sk) * element bytes. */
struct ty_operand {
    const unsigned char *base;
    int64_t sx, sk, bs;
};

struct ty_args {
    int64_t m, n, k, batch;
    int64_t tiles_m, tiles_n;
    ty_operand a, b;
    unsigned char *c;
    int64_t c_rs, c_cs, c_bs; /* elements */
    int beta_zero;            /* C is never read */
    double alpha, beta;       /* f64 C */
    float falpha, fbeta;      /* f32, f16, bf16 C */
    uint32_t ialpha, ibeta;   /* i32 C: arithmetic modulo 2^32 */
};

/* C's element at q = alpha * acc + beta * C, C of dtype CD. */
template <int CD> DUET_INLINE void ty_store(const ty_args &p, unsigned char *q, float acc)
{
    float v = p.falpha * acc;
    if constexpr (CD == DUET_DTYPE_F32) {
        float *c = reinterpret_cast<float *>(q);
        if (!p.beta_zero) v = fmaf(p.fbeta, *c, v);
        *c = v;
    } else if constexpr (CD == DUET_DTYPE_F16) {
        uint16_t *c = reinterpret_cast<uint16_t *>(q);
        if (!p.beta_zero) v = fmaf(p.fbeta, duet_f16_to_f32(*c), v);
        *c = duet_f32_to_f16(v);
    } else {
        uint16_t *c = reinterpret_cast<uint16_t *>(q);
        if (!p.beta_zero) v = fmaf(p.fbeta, duet_bf16_to_f32(*c), v);
        *c = duet_f32_to_bf16(v);
    }
}
template <int CD> DUET_INLINE void ty_store(const ty_args &p, unsigned char *q, double acc)
{
    double *c = reinterpret_cast<double *>(q);
    double v = p.alpha * acc;
    if (!p.beta_zero) v = fma(p.beta, *c, v);
    *c = v;
}
template <int CD> DUET_INLINE void ty_store(const ty_args &p, unsigned char *q, uint32_t acc)
{
    uint32_t *c = reinterpret_cast<uint32_t *>(q);
    uint32_t v = p.ialpha * acc;
    if (!p.beta_zero) v += p.ibeta * *c;
    *c = v;
}

template <int CD> DUET_HOST_DEVICE constexpr int ty_c_elem()
{
    return CD == DUET_DTYPE_F64 ? 8 : CD == DUET_DTYPE_F16 || CD == DUET_DTYPE_BF16 ? 2 : 4;
}

/* How a thread reads its TM elements of an operand's step (a X x TY_BK tile, X = 16 TM):
 * element u at (x0 + u dx, kk0 + u dk). A k-contiguous operand is read along k (16
 * consecutive k of a row per half-warp), any other along x. */
struct ty_reader {
    const unsigned char *q; /* element (x0, kk0) of step 0 */
    int64_t step;           /* bytes from element u to u + 1 */
    int64_t kstep;          /* bytes from one step to the next */
    int x0, kk0, dx, dk;
    int64_t xrem; /* rows of the operand from the tile's first */
};

template <int ELEM, int X>
DUET_INLINE ty_reader ty_reader_make(const ty_operand &o, int64_t bt, int64_t x_first, int64_t xrem,
                                     int tid)
{
    ty_reader r;
    const bool kfast = o.sk == 1;
    r.kk0 = kfast ? tid % TY_BK : tid / X;
    r.x0 = kfast ? tid / TY_BK : tid % X;
    r.dx = kfast ? TY_THREADS / TY_BK : 0;
    r.dk = kfast ? 0 : TY_THREADS / X;
    r.q = o.base + (bt * o.bs + (x_first + r.x0) * o.sx + r.kk0 * o.sk) * ELEM;
    r.step = ((int64_t)r.dx * o.sx + (int64_t)r.dk * o.sk) * ELEM;
    r.kstep = (int64_t)TY_BK * o.sk * ELEM;
    r.xrem = xrem;
    return r;
}

template <int DT, int TM>
DUET_INLINE void ty_fetch(const ty_reader &r, int64_t s, int64_t klim,
                          typename gemm_elem<DT>::acc (&v)[TM])
{
    const unsigned char *q = r.q + s * r.kstep;
#pragma unroll
    for (int u = 0; u < TM; ++u) {
        const bool in = r.x0 + u * r.dx < r.xrem && r.kk0 + u * r.dk < klim;
        v[u] = in ? gemm_load_elem<DT>(q + u * r.step) : typename gemm_elem<DT>::acc(0);
    }
}

template <typename T, int X, int TM>
DUET_INLINE void ty_put(T *s, const ty_reader &r, const T (&v)[TM])
{
#pragma unroll
    for (int u = 0; u < TM; ++u) s[(r.kk0 + u * r.dk) * (X + 1) + r.x0 + u * r.dx] = v[u];
}

template <int DT, int CD, int TM>
DUET_GLOBAL void __launch_bounds__(TY_THREADS, ty_min_blocks<TM>())
    gemm_tiny_kernel(const ty_args p)
{
    typedef typename gemm_elem<DT>::acc acc_t;
    constexpr int ELEM = gemm_elem<DT>::ELEM, X = 16 * TM, PITCH = X + 1;
    __shared__ acc_t As[TY_BK * PITCH], Bs[TY_BK * PITCH];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    /* The planner keeps tiles x batch within int32. */
    const uint32_t tiles_m = (uint32_t)p.tiles_m, tiles = tiles_m * (uint32_t)p.tiles_n;

    for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
        for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            const int64_t m0 = (int64_t)(tile % tiles_m) * X;
            const int64_t n0 = (int64_t)(tile / tiles_m) * X;
            const ty_reader ra = ty_reader_make<ELEM, X>(p.a, bz, m0, p.m - m0, tid);
            const ty_reader rb = ty_reader_make<ELEM, X>(p.b, bz, n0, p.n - n0, tid);
            acc_t acc[TM][TM];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TM; ++j) acc[i][j] = acc_t(0);
            acc_t va[TM], vb[TM];
            ty_fetch<DT, TM>(ra, 0, p.k, va);
            ty_fetch<DT, TM>(rb, 0, p.k, vb);
            for (int64_t k0 = 0; k0 < p.k; k0 += TY_BK) {
                ty_put<acc_t, X, TM>(As, ra, va);
                ty_put<acc_t, X, TM>(Bs, rb, vb);
                duet_barrier();
                const int64_t left = p.k - k0;
                if (left > TY_BK) {
                    ty_fetch<DT, TM>(ra, k0 / TY_BK + 1, left - TY_BK, va);
                    ty_fetch<DT, TM>(rb, k0 / TY_BK + 1, left - TY_BK, vb);
                }
                const int kn = left < TY_BK ? (int)((left + 3) & ~(int64_t)3) : TY_BK;
                for (int kk = 0; kk < kn; kk += 4) {
#pragma unroll
                    for (int u = 0; u < 4; ++u) {
                        acc_t a[TM], b[TM];
#pragma unroll
                        for (int r = 0; r < TM; ++r) {
                            a[r] = As[(kk + u) * PITCH + ty + 16 * r];
                            b[r] = Bs[(kk + u) * PITCH + tx + 16 * r];
                        }
#pragma unroll
                        for (int i = 0; i < TM; ++i)
#pragma unroll
                            for (int j = 0; j < TM; ++j) acc[i][j] += a[i] * b[j];
                    }
                }
                duet_barrier();
            }
            constexpr int CE = ty_c_elem<CD>();
            unsigned char *const c0 = p.c + (bz * p.c_bs + m0 * p.c_rs + n0 * p.c_cs) * CE;
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TM; ++j) {
                    const int row = ty + 16 * i, col = tx + 16 * j;
                    if (m0 + row < p.m && n0 + col < p.n)
                        ty_store<CD>(p, c0 + (row * p.c_rs + col * p.c_cs) * CE, acc[i][j]);
                }
        }
    }
}

#endif /* DUET_KERNELS_GEMM_TINY_CUH */
