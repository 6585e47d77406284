/* gemm_wgmma.cuh - the Hopper (sm_90a) GEMM: TMA loads, wgmma, warp-specialised warpgroups. */
#ifndef DUET_KERNELS_GEMM_WGMMA_CUH
#define DUET_KERNELS_GEMM_WGMMA_CUH

#include <cuda.h> /* CUtensorMap (the type only; libcuda is not linked) */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "gemm_epilogue.cuh"
#include "wgmma_sm90.cuh"

/* Design (one CTA per SM, persistent):
 * - Block tile 128 x 256; each shared-memory stage holds a 128-byte slice of K for A (128 rows)
 *   and B (256 rows), both K-major, written by TMA with the 128-byte swizzle that the wgmma
 *   descriptors name. A 128-byte slice is 64 bf16/f16, 32 tf32 or 128 i8 values, so the stage
 *   geometry (48 KiB) and the descriptor walk (four 32-byte K steps) are the same for every
 *   input type; only the wgmma instruction changes.
 * - Warpgroup 0 is the producer: one thread issues the TMA loads into a ring of stages
 *   (wg_config), each guarded by a "full" mbarrier (TMA bytes landed) and an "empty" one (both
 *   consumers done reading). It gives registers away (setmaxnreg) since it needs few.
 * - Warpgroups 1 and 2 are consumers: each owns 64 rows of the block tile (a 64 x 256 f32 or
 *   s32 accumulator, 128 registers per thread), keeps one wgmma group in flight while it
 *   waits for the next stage, and writes its rows of C with bounds checks (straight from
 *   registers, or for a 16-bit C with beta == 0 through shared memory and a TMA store, which
 *   clips at the edges), so M and N edges need no special tiles; K edges read TMA's zero
 *   fill.
 * - With duet_gemm_ex's epilogue fused (EPI) there are two stores. An epilogue of scales, a
 *   bias and an activation only (wg_epi.direct: no C, residual or aux to read or write) is
 *   applied to the accumulator registers where they are (wg_epi_direct): a tile's column
 *   vectors go through shared memory once (a thread's two columns, asked into L1 when the
 *   tile starts and loaded while its last MMAs run), its rows' values stay in registers, and
 *   D leaves like a plain GEMM's C (16-bit through the TMA store, f32 from the registers).
 *   This is the store of inference's bias + activation GEMMs; it costs a few instructions an
 *   element beyond the plain store (GELU, SiLU, sigmoid: two of them special-function ones,
 *   whose throughput bounds it). Any other epilogue writes the 64 x 256 f32 results to
 *   shared memory 128 columns at a time and applies the epilogue in a loop over rows, a warp
 *   per row and four columns a lane (wg_epi_rows), so D, C, the residual and aux are read and
 *   written in whole rows. No MMA runs while the consumers apply either: the producer fills
 *   the next tile's stages meanwhile, and the rest of the epilogue's time adds to the GEMM's.
 * - Tiles (and batches) are walked by every CTA with a stride of gridDim.x in a grouped order
 *   (WG_GROUP_M tile rows at a time, column by column), so the CTAs resident at one moment
 *   share A row panels and B column panels in L2. The producer runs ahead into the next tile
 *   while the consumers store the last one. */

#define WG_BM            128
#define WG_BN            256
#define WG_KBYTES        128
#define WG_THREADS       384
#define WG_GROUP_M       8
#define WG_A_STAGE_BYTES (WG_BM * WG_KBYTES)
#define WG_B_STAGE_BYTES (WG_BN * WG_KBYTES)
#define WG_C_TILE_BYTES  (WG_BM * WG_BN * 2) /* a 16-bit C tile staged for the TMA store */
/* The fused epilogue's f32 staging: per consumer warpgroup 64 rows of 128 columns, rows padded
 * by 8 floats so that the fragment stores of a warp (8 rows, 4 column pairs) take 2 wavefronts. */
#define WG_EPI_COLS        128
#define WG_EPI_LD          (WG_EPI_COLS + 8)
#define WG_EPI_STAGE_BYTES (2 * 64 * WG_EPI_LD * 4)
/* The direct store's column vectors (scale, bias) of a tile, f32, per consumer warpgroup, two
 * tiles' worth (alternate tiles fill alternate halves, so a fill never meets the previous
 * tile's readers and needs no barrier before it). */
#define WG_EPI_VEC_BYTES (2 * 2 * 2 * WG_BN * 4)

/* A 16-bit C is written through shared memory by TMA stores, which need the 64 KiB that a
 * fourth stage would take; an f32 or i32 C (twice the bytes) is stored from registers. The
 * fused epilogue (EPI, any D dtype) needs its f32 staging, so it also runs on 3 stages. */
template <typename CT, bool EPI = false> struct wg_config {
    static constexpr bool tma_store = !EPI && sizeof(CT) == 2;
    static constexpr int stages = tma_store || EPI ? 3 : 4;
    static constexpr int c_bytes = EPI         ? WG_EPI_STAGE_BYTES + WG_EPI_VEC_BYTES
                                   : tma_store ? WG_C_TILE_BYTES
                                               : 0;
    /* Stages, the C tile, 2 mbarriers per stage, slack to align to the swizzle's 1024 bytes. */
    static constexpr int shared_bytes =
        stages * (WG_A_STAGE_BYTES + WG_B_STAGE_BYTES) + c_bytes + 2 * stages * 8 + 1024;
};

/* Input kinds (A's and B's dtype and the instruction that multiplies them); 4 is the 3xTF32
 * kernel's (gemm_wgmma_x3.cuh). WG_F8_AB: A e4m3 (A = 4) or e5m2 (5), B likewise. */
enum wg_kind {
    WG_BF16 = 0,
    WG_F16 = 1,
    WG_TF32 = 2,
    WG_I8 = 3,
    WG_F8_44 = 5,
    WG_F8_45 = 6,
    WG_F8_54 = 7,
    WG_F8_55 = 8
};
__host__ __device__ constexpr bool wg_is_f8(int kind)
{
    return kind >= WG_F8_44 && kind <= WG_F8_55;
}

struct wg_params {
    void *c;
    int64_t ldc, bsc; /* C's row and batch strides, in elements (c.cs == 1)      */
    int m, n, ktiles; /* ktiles: K in 128-byte slices, rounded up                */
    int tiles_m, tiles_n;
    int64_t tiles_total;      /* tiles_m * tiles_n * batch                               */
    int a_batched, b_batched; /* 0: the operand is shared by every batch (stride 0)     */
    int beta_zero;
    int tma_store;          /* C through shared memory and the tensor map tmc (16-bit C,
                               beta == 0, 16-byte aligned rows)                          */
    float alpha, beta;      /* floating kinds                                          */
    uint32_t ialpha, ibeta; /* i8: int32 values whose uint32 images wrap modulo 2^32   */
    int f8_fast; /* 8-bit floats, DUET_MATH_FAST_ACCUM: k summed in the tensor core only  */
    /* 8-bit floats' block scales (dt_gemm.sa, sb; blocked 0: none). A stage's sums of row r,
     * column c multiply sa[bt * sa_bs + (r >> sa_shift) * sa_rs + kt * sa_ks] times
     * sb[bt * sb_bs + (c >> sb_shift) * sb_rs + kt * sb_ks] (a NULL one is 1); sb_shift is 7 (a
     * tile half) unless sb_rs is 0. */
    int blocked;
    const float *sa, *sb;
    int64_t sa_rs, sa_ks, sa_bs, sb_rs, sb_ks, sb_bs;
    int sa_shift, sb_shift;
};

/* duet_gemm_ex's epilogue as the fused store applies it (src/common/internal.h, dt_epilogue,
 * turned with D): x = alpha acc [* row_scale] [* col_scale] [+ beta c] [+ bias]; aux = x;
 * D = act(x) [+ residual], in f32 with gemm_epilogue.cuh's steps. An operand with p NULL is
 * absent; row_scale has cs == 0, col_scale rs == 0, a bias one of the two. D is wg_params.c
 * with the dtype d_dtype (f32, f16 or bf16). */
struct wg_epi {
    ge_operand c, bias, row_scale, col_scale, residual, aux;
    int act;
    int d_dtype;
    int direct; /* no c, residual or aux: applied in the registers (wg_epi_direct) */
    float lo, hi, beta;
};

template <int KIND> struct wg_traits {
    typedef float acc_t;
};
template <> struct wg_traits<WG_I8> {
    typedef int32_t acc_t;
};

#if DUET_SM90_DEVICE

/* One K step of the 64 x 256 warpgroup tile (32 bytes of K-major rows; 16 rows of MN-major
 * ones). TA, TB: the operand is MN-major (the 16-bit kinds only). */
template <int KIND, int TA, int TB>
DUET_SM90_INLINE void wg_mma(typename wg_traits<KIND>::acc_t *d, uint64_t da, uint64_t db, int sd)
{
    if constexpr (KIND == WG_BF16)
        sm90_wgmma_m64n256k16_bf16<TA, TB>(d, da, db, sd);
    else if constexpr (KIND == WG_F16)
        sm90_wgmma_m64n256k16_f16<TA, TB>(d, da, db, sd);
    else if constexpr (KIND == WG_TF32)
        sm90_wgmma_m64n256k8_tf32(d, da, db, sd);
    else if constexpr (KIND == WG_I8)
        sm90_wgmma_m64n256k32_s8(d, da, db, sd);
    else if constexpr (wg_is_f8(KIND)) {
        /* DUET_MATH_FAST_ACCUM: the two 128-column halves (B's rows 128 on: 128 rows of 128
         * bytes further, in 16-byte units), summed in the tensor core only. */
        constexpr int ea = KIND == WG_F8_54 || KIND == WG_F8_55;
        constexpr int eb = KIND == WG_F8_45 || KIND == WG_F8_55;
        sm90_wgmma_m64n128k32_f8<ea, eb>(d, da, db, sd);
        sm90_wgmma_m64n128k32_f8<ea, eb>(d + 64, da, db + 1024, sd);
    }
}

/* A stage of 8-bit float K (128 values) for the warpgroup's 64 x 256 tile, added to acc in f32:
 * each 128-column half is multiplied by four m64n128k32 instructions into t (starting from
 * zero), which is then added to acc's values of those columns (acc[64 h + i] is t[i]: the
 * fragment layouts of n = 128 and n = 256 agree column by column). The tensor core's own
 * accumulation keeps about 13 fraction bits; adding its sums of 128 products in f32 bounds
 * what a long K loses to that (the promotion that cuBLASLt's default FP8 mode also makes).
 * With block scales (SCALED) the addition is acc = fma(t, sc[h][r], acc), r the row half of
 * t[i] (bit 1 of i): the product of the half's column scale and the thread's row scale.
 * Returns with the stage read (every group waited for). */
template <int KIND, bool SCALED>
DUET_SM90_INLINE void wg_mma_f8_stage(float *acc, float *t, uint64_t da, uint64_t db,
                                      const float (&sc)[2][2])
{
    constexpr int ea = KIND == WG_F8_54 || KIND == WG_F8_55;
    constexpr int eb = KIND == WG_F8_45 || KIND == WG_F8_55;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int i = 0; i < 64; ++i) sm90_fence_operand(t[i]);
        sm90_wgmma_fence();
        /* B's rows 128 h on: 128 rows of 128 bytes further (16-byte units). */
#pragma unroll
        for (int kk = 0; kk < WG_KBYTES / 32; ++kk)
            sm90_wgmma_m64n128k32_f8<ea, eb>(t, da + 2 * kk, db + 1024 * h + 2 * kk, kk != 0);
        sm90_wgmma_commit();
        sm90_wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < 64; ++i) {
            sm90_fence_operand(t[i]);
            if constexpr (SCALED)
                acc[64 * h + i] = __fmaf_rn(t[i], sc[h][(i >> 1) & 1], acc[64 * h + i]);
            else
                acc[64 * h + i] += t[i];
        }
    }
}

/* A consumer's step through the ring with 8-bit floats: wait for stage s, multiply it and add
 * the sums to acc (wg_mma_f8_stage), release it, advance s and the phase. */
template <int KIND, bool SCALED, int STAGES>
DUET_SM90_INLINE void wg_f8_step(float *acc, uint64_t *full, uint64_t *empty, int &s,
                                 uint32_t &phase, uint32_t sa_addr, uint32_t sb_addr, int tid,
                                 const float (&sc)[2][2])
{
    sm90_mbar_wait(&full[s], phase);
    float part[64];
    wg_mma_f8_stage<KIND, SCALED>(acc, part, sm90_desc_kmajor_sw128(sa_addr + s * WG_A_STAGE_BYTES),
                                  sm90_desc_kmajor_sw128(sb_addr + s * WG_B_STAGE_BYTES), sc);
    if (tid == 0) sm90_mbar_arrive(&empty[s]);
    if (++s == STAGES) {
        s = 0;
        phase ^= 1;
    }
}

/* Stage kt's block scales of the thread's two rows (va) and the tile's two column halves (vb);
 * a NULL pointer (no scale of that operand) leaves 1. */
DUET_SM90_INLINE void wg_block_scales(float (&va)[2], float (&vb)[2], const float *const (&sap)[2],
                                      const float *const (&sbp)[2], const wg_params &p, int kt)
{
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (sap[r]) va[r] = __ldg(sap[r] + kt * p.sa_ks);
        if (sbp[r]) vb[r] = __ldg(sbp[r] + kt * p.sb_ks);
    }
}

/* C element conversions for the epilogue. */
DUET_SM90_INLINE float wg_to_float(float v) { return v; }
DUET_SM90_INLINE float wg_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
DUET_SM90_INLINE float wg_to_float(__half v) { return __half2float(v); }
template <typename CT> DUET_SM90_INLINE CT wg_from_float(float v);
template <> DUET_SM90_INLINE float wg_from_float<float>(float v) { return v; }
template <> DUET_SM90_INLINE __nv_bfloat16 wg_from_float<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}
template <> DUET_SM90_INLINE __half wg_from_float<__half>(float v) { return __float2half_rn(v); }
/* Never called: keeps the (dead) shared-memory epilogue compilable for an i32 C. */
template <> DUET_SM90_INLINE int32_t wg_from_float<int32_t>(float v) { return (int32_t)v; }

/* C's old value in the accumulator's type, for beta. */
template <typename CT> DUET_SM90_INLINE float wg_load_c(const CT *p) { return wg_to_float(*p); }
DUET_SM90_INLINE int32_t wg_load_c(const int32_t *p) { return *p; }

/* Two horizontally adjacent results (col, col + 1) of one row; col + 1 may be past N. o0 and
 * o1 are C's old values (read only when beta != 0). */
template <typename CT>
DUET_SM90_INLINE void wg_store2(CT *p, bool two, float v0, float v1, float o0, float o1,
                                const wg_params &pr)
{
    float r0 = pr.alpha * v0, r1 = pr.alpha * v1;
    if (!pr.beta_zero) {
        r0 += pr.beta * o0;
        r1 += pr.beta * o1;
    }
    if (two && (reinterpret_cast<uintptr_t>(p) % (2 * sizeof(CT))) == 0) {
        if (sizeof(CT) == 4) {
            *reinterpret_cast<float2 *>(p) = make_float2(r0, r1);
        } else {
            CT h[2] = {wg_from_float<CT>(r0), wg_from_float<CT>(r1)};
            *reinterpret_cast<uint32_t *>(p) = *reinterpret_cast<const uint32_t *>(h);
        }
    } else {
        p[0] = wg_from_float<CT>(r0);
        if (two) p[1] = wg_from_float<CT>(r1);
    }
}
DUET_SM90_INLINE void wg_store2(int32_t *p, bool two, int32_t v0, int32_t v1, int32_t o0,
                                int32_t o1, const wg_params &pr)
{
    uint32_t r0 = pr.ialpha * (uint32_t)v0, r1 = pr.ialpha * (uint32_t)v1;
    if (!pr.beta_zero) {
        r0 += pr.ibeta * (uint32_t)o0;
        r1 += pr.ibeta * (uint32_t)o1;
    }
    if (two && (reinterpret_cast<uintptr_t>(p) % 8) == 0) {
        *reinterpret_cast<int2 *>(p) = make_int2((int32_t)r0, (int32_t)r1);
    } else {
        p[0] = (int32_t)r0;
        if (two) p[1] = (int32_t)r1;
    }
}

/* act over the U values of x: the activation chosen once, then applied to all of them. */
template <int A, int U> DUET_SM90_INLINE void wg_act_all(float (&x)[U], float lo, float hi)
{
#pragma unroll
    for (int u = 0; u < U; ++u) x[u] = ge_math<float>::act(A, x[u], lo, hi);
}
template <int U> DUET_SM90_INLINE void wg_act(int act, float (&x)[U], float lo, float hi)
{
    switch (act) {
    case DUET_ACT_RELU: wg_act_all<DUET_ACT_RELU>(x, lo, hi); break;
    case DUET_ACT_GELU_TANH: wg_act_all<DUET_ACT_GELU_TANH>(x, lo, hi); break;
    case DUET_ACT_GELU_ERF: wg_act_all<DUET_ACT_GELU_ERF>(x, lo, hi); break;
    case DUET_ACT_SILU: wg_act_all<DUET_ACT_SILU>(x, lo, hi); break;
    case DUET_ACT_SIGMOID: wg_act_all<DUET_ACT_SIGMOID>(x, lo, hi); break;
    case DUET_ACT_CLAMP: wg_act_all<DUET_ACT_CLAMP>(x, lo, hi); break;
    default: break;
    }
}

/* The fused epilogue of one warpgroup's 64 rows from row0 and WG_EPI_COLS columns from col0,
 * whose accumulators the warpgroup has just written to st (row stride WG_EPI_LD): a warp per
 * row, a lane per pair of adjacent columns (two pairs, 64 columns apart), so every access of
 * a warp covers a run of a row and D takes one 4-byte (16-bit D) or 8-byte (f32 D) store per
 * pair where the pair's address allows it. A lane takes its U = 4 columns of a row together:
 * each step of the epilogue is chosen once and applied to all four (the choices are the same
 * for every element, and independent chains hide each other's latency); what depends on the
 * column alone (a bias per column, the column scale) is loaded once for the 64 rows, and a
 * row's loads of C and the residual are issued before the first is used. The steps are those
 * of the epilogue pass, in the same order, so both give the same bits. Columns past N compute
 * on the staging's values and are not stored. */
DUET_SM90_INLINE void wg_epi_rows(const float *st, const wg_params &p, const wg_epi &e, int bt,
                                  int row0, int col0, int warp, int lane)
{
    typedef ge_math<float> G;
    constexpr int U = WG_EPI_COLS / 32; /* columns of a lane: element u is column cof(u) */
    auto cof = [lane](int u) { return 64 * (u / 2) + 2 * lane + u % 2; };
    const int64_t b = bt;
    const int d_size = ge_size_f32(e.d_dtype);
    unsigned char *d = static_cast<unsigned char *>(p.c);
    const bool bias_row = e.bias.p && e.bias.cs == 0;
    const bool bias_col = e.bias.p && !bias_row;
    bool in[U];
    float cbias[U], cscale[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int col = col0 + cof(u);
        in[u] = col < p.n;
        cbias[u] = bias_col && in[u] ? G::load(e.bias, b, 0, col) : 0.0f;
        cscale[u] = e.col_scale.p && in[u] ? G::load(e.col_scale, b, 0, col) : 1.0f;
    }
#pragma unroll 1
    for (int r = warp; r < 64; r += 4) {
        const int row = row0 + r;
        if (row >= p.m) break;
        float x[U], cv[U], rv[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int col = col0 + cof(u);
            cv[u] = e.c.p && in[u] ? G::load(e.c, b, row, col) : 0.0f;
            rv[u] = e.residual.p && in[u] ? G::load(e.residual, b, row, col) : 0.0f;
        }
#pragma unroll
        for (int w = 0; w < U / 2; ++w) {
            const float2 a = *reinterpret_cast<const float2 *>(st + r * WG_EPI_LD + cof(2 * w));
            x[2 * w] = G::mul(p.alpha, a.x);
            x[2 * w + 1] = G::mul(p.alpha, a.y);
        }
        if (e.row_scale.p) {
            const float rs = G::load(e.row_scale, b, row, 0);
#pragma unroll
            for (int u = 0; u < U; ++u) x[u] = G::mul(x[u], rs);
        }
        if (e.col_scale.p) {
#pragma unroll
            for (int u = 0; u < U; ++u) x[u] = G::mul(x[u], cscale[u]);
        }
        if (e.c.p) {
#pragma unroll
            for (int u = 0; u < U; ++u) x[u] = G::axpy(e.beta, cv[u], x[u]);
        }
        if (bias_row) {
            const float rb = G::load(e.bias, b, row, 0);
#pragma unroll
            for (int u = 0; u < U; ++u) x[u] = G::add(x[u], rb);
        } else if (bias_col) {
#pragma unroll
            for (int u = 0; u < U; ++u) x[u] = G::add(x[u], cbias[u]);
        }
        if (e.aux.p) {
#pragma unroll
            for (int u = 0; u < U; ++u)
                if (in[u]) G::store(e.aux, b, row, col0 + cof(u), x[u]);
        }
        wg_act<U>(e.act, x, e.lo, e.hi);
        if (e.residual.p) {
#pragma unroll
            for (int u = 0; u < U; ++u) x[u] = G::add(x[u], rv[u]);
        }
        unsigned char *drow = d + ((int64_t)bt * p.bsc + (int64_t)row * p.ldc + col0) * d_size;
#pragma unroll
        for (int w = 0; w < U / 2; ++w) {
            unsigned char *q = drow + (int64_t)cof(2 * w) * d_size;
            const bool pair = in[2 * w + 1] && (reinterpret_cast<uintptr_t>(q) % (2 * d_size)) == 0;
            if (pair && e.d_dtype == DUET_DTYPE_F32) {
                *reinterpret_cast<float2 *>(q) = make_float2(x[2 * w], x[2 * w + 1]);
            } else if (pair) {
                *reinterpret_cast<uint32_t *>(q) = ge_pack2_16(e.d_dtype, x[2 * w], x[2 * w + 1]);
            } else {
                if (in[2 * w]) ge_store_f32(q, e.d_dtype, x[2 * w]);
                if (in[2 * w + 1]) ge_store_f32(q + d_size, e.d_dtype, x[2 * w + 1]);
            }
        }
    }
}

/* A warpgroup's 64 x 256 results of 16 bits out through shared memory and the TMA store:
 * half (this warpgroup's 32 KiB) holds them as four 64 x 64 boxes of 128-byte rows in the
 * 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r % 8)), which also keeps the
 * 4-byte stores of a warp on 32 distinct banks. word(j, h) is the 32-bit pair of columns
 * 8 j + 2 (lane % 4) + {0, 1} of row warp * 16 + lane / 4 + 8 h. The caller has seen the
 * previous TMA store read half (sm90_bulk_wait_read, then a barrier of the warpgroup). The
 * store runs on while the next tile's main loop does. */
template <typename Word>
DUET_SM90_INLINE void wg_tma_store_half(uint8_t *half, const CUtensorMap *tmc, Word word, int bt,
                                        int tm, int tn, int wg, int tid)
{
    const int warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = warp * 16 + lane / 4 + 8 * h;
#pragma unroll
        for (int j = 0; j < 32; ++j)
            *reinterpret_cast<uint32_t *>(half + (j / 8) * 8192 + r * 128 +
                                          (((j % 8) ^ (r % 8)) * 16) + (lane % 4) * 4) = word(j, h);
    }
    sm90_fence_proxy_async();
    sm90_named_barrier(wg, 128);
    if (tid == 0) {
#pragma unroll
        for (int q = 0; q < 4; ++q)
            sm90_tma_store_3d(tmc, half + q * 8192, tn * WG_BN + 64 * q, tm * WG_BM + (wg - 1) * 64,
                              bt);
        sm90_bulk_commit();
    }
}

/* What the direct store needs beyond the accumulators: this thread's two columns of the tile's
 * column scale and column bias (columns tid and tid + 128 of the tile, shared through
 * wg_epi_direct's vec), and its two rows' row scale and row bias (rows row0 and row0 + 8).
 * Absent ones are 1 and 0. With touch, only asks for their lines in L1 (prefetch, no
 * registers held across the main loop), so that the loads after it hit. */
struct wg_epi_pre {
    float cs[2], cb[2], rs[2], rb[2];
};

DUET_SM90_INLINE void wg_epi_vectors(wg_epi_pre &v, bool touch, const wg_params &p, const wg_epi &e,
                                     int bt, int row0, int col0, int tid)
{
    typedef ge_math<float> G;
    const bool bias_row = e.bias.p && e.bias.cs == 0;
    const bool bias_col = e.bias.p && !bias_row;
    auto get = [touch, bt](const ge_operand &o, int i, int j, float absent, bool on) {
        if (!on) return absent;
        if (!touch) return G::load(o, bt, i, j);
        asm volatile("prefetch.global.L1 [%0];" ::"l"(ge_at(o, bt, i, j, ge_size_f32(o.dtype))));
        return absent;
    };
#pragma unroll
    for (int q = 0; q < 2; ++q) {
        const int col = col0 + tid + 128 * q;
        const bool in = col < p.n;
        v.cs[q] = get(e.col_scale, 0, col, 1.0f, e.col_scale.p && in);
        v.cb[q] = get(e.bias, 0, col, 0.0f, bias_col && in);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int row = row0 + 8 * h;
        const bool in = row < p.m;
        v.rs[h] = get(e.row_scale, row, 0, 1.0f, e.row_scale.p && in);
        v.rb[h] = get(e.bias, row, 0, 0.0f, bias_row && in);
    }
}

/* The direct store of a fused epilogue without C, residual or aux (wg_epi.direct): the steps of
 * the epilogue pass, in its order and with its roundings (so the same bits), applied to the
 * warpgroup's 64 x 256 accumulators in their registers (element 4 j + 2 h + e: row
 * warp * 16 + lane / 4 + 8 h, column 8 j + 2 (lane % 4) + e), each step chosen once for all
 * 128 of a thread. The column vectors are read from vec (2 x 256 f32 of this warpgroup and
 * this tile's parity), which the warpgroup fills from pre first. D leaves as a plain GEMM's C does:
 * 16-bit through shared memory (half, this warpgroup's 32 KiB) and the TMA store when p.tma_store,
 * else from the registers a pair of columns at a time, bounds checked. */
DUET_SM90_INLINE void wg_epi_direct(float (&acc)[128], const wg_epi_pre &pre, float *vec,
                                    uint8_t *half, const CUtensorMap *tmc, const wg_params &p,
                                    const wg_epi &e, int bt, int tm, int tn, int wg, int tid)
{
    typedef ge_math<float> G;
    const int warp = tid / 32, lane = tid % 32, cl = 2 * (lane % 4);
    const bool bias_row = e.bias.p && e.bias.cs == 0;
    const bool bias_col = e.bias.p && !bias_row;
    /* After the barrier below the previous tile's TMA store has read half. */
    if (p.tma_store && tid == 0) sm90_bulk_wait_read();
    if (e.col_scale.p) {
        vec[tid] = pre.cs[0];
        vec[tid + 128] = pre.cs[1];
    }
    if (bias_col) {
        vec[WG_BN + tid] = pre.cb[0];
        vec[WG_BN + tid + 128] = pre.cb[1];
    }
    sm90_named_barrier(wg, 128);
    if (p.alpha != 1.0f) { /* a product with 1 is the value itself */
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = G::mul(p.alpha, acc[i]);
    }
    if (e.row_scale.p) {
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = G::mul(acc[i], pre.rs[(i / 2) % 2]);
    }
    if (e.col_scale.p) {
#pragma unroll
        for (int j = 0; j < 32; ++j) {
            const float2 c = *reinterpret_cast<const float2 *>(vec + 8 * j + cl);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                acc[4 * j + 2 * h] = G::mul(acc[4 * j + 2 * h], c.x);
                acc[4 * j + 2 * h + 1] = G::mul(acc[4 * j + 2 * h + 1], c.y);
            }
        }
    }
    if (bias_col) {
#pragma unroll
        for (int j = 0; j < 32; ++j) {
            const float2 c = *reinterpret_cast<const float2 *>(vec + WG_BN + 8 * j + cl);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                acc[4 * j + 2 * h] = G::add(acc[4 * j + 2 * h], c.x);
                acc[4 * j + 2 * h + 1] = G::add(acc[4 * j + 2 * h + 1], c.y);
            }
        }
    } else if (bias_row) {
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = G::add(acc[i], pre.rb[(i / 2) % 2]);
    }
    wg_act<128>(e.act, acc, e.lo, e.hi);

    if (p.tma_store) {
        wg_tma_store_half(
            half, tmc,
            [&](int j, int h) {
                return ge_pack2_16(e.d_dtype, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
            },
            bt, tm, tn, wg, tid);
        return;
    }
    const int d_size = ge_size_f32(e.d_dtype);
    const int row0 = tm * WG_BM + (wg - 1) * 64 + warp * 16 + lane / 4;
    const int col0 = tn * WG_BN + cl;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int row = row0 + 8 * h;
        if (row >= p.m) continue;
        unsigned char *drow = static_cast<unsigned char *>(p.c) +
                              ((int64_t)bt * p.bsc + (int64_t)row * p.ldc + col0) * d_size;
        if (e.d_dtype == DUET_DTYPE_F32) {
#pragma unroll
            for (int j = 0; j < 32; ++j) {
                const int col = col0 + 8 * j;
                if (col >= p.n) continue;
                float *q = reinterpret_cast<float *>(drow) + 8 * j;
                if (col + 1 < p.n && (reinterpret_cast<uintptr_t>(q) % 8) == 0) {
                    *reinterpret_cast<float2 *>(q) =
                        make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
                } else {
                    q[0] = acc[4 * j + 2 * h];
                    if (col + 1 < p.n) q[1] = acc[4 * j + 2 * h + 1];
                }
            }
        } else {
#pragma unroll
            for (int j = 0; j < 32; ++j) {
                const int col = col0 + 8 * j;
                if (col >= p.n) continue;
                unsigned char *q = drow + 16 * j;
                if (col + 1 < p.n && (reinterpret_cast<uintptr_t>(q) % 4) == 0) {
                    *reinterpret_cast<uint32_t *>(q) =
                        ge_pack2_16(e.d_dtype, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
                } else {
                    ge_store_f32(q, e.d_dtype, acc[4 * j + 2 * h]);
                    if (col + 1 < p.n) ge_store_f32(q + 2, e.d_dtype, acc[4 * j + 2 * h + 1]);
                }
            }
        }
    }
}

/* Tile t of the grouped order: batch, tile row, tile column. */
DUET_SM90_INLINE void wg_tile_coords(int64_t t, const wg_params &p, int &bt, int &tm, int &tn)
{
    const int64_t per_batch = (int64_t)p.tiles_m * p.tiles_n;
    bt = (int)(t / per_batch);
    const int64_t r = t - (int64_t)bt * per_batch;
    const int64_t width = (int64_t)WG_GROUP_M * p.tiles_n;
    const int group = (int)(r / width);
    const int first_m = group * WG_GROUP_M;
    const int rows = min(p.tiles_m - first_m, WG_GROUP_M);
    const int in_group = (int)(r - (int64_t)group * width);
    tm = first_m + in_group % rows;
    tn = in_group / rows;
}

#endif /* DUET_SM90_DEVICE */

/* The tensor maps are 3D (K, rows, batch) with a (128-byte K slice) x rows x 1 box and the
 * 128-byte swizzle; A's box has WG_BM rows, B's WG_BN (B is stored N x K, K-major). */
/* LAYOUT bit 0: A is M-major (a.rs == 1); bit 1: B is N-major (b.cs == 1). An MN-major
 * operand's map is (M or N, K, batch) with 64 x 64 boxes (64 elements = 128 bytes wide, 64 K
 * rows), loaded 2 (A) or 4 (B) boxes per stage, 8 KiB apart; the stage sizes stay the same. */
/* EPI: the fused epilogue of duet_gemm_ex (e; CT is then float and unused, D's dtype is
 * e.d_dtype); the plain kernels (EPI false) never read e. */
template <int KIND, typename CT, int LAYOUT, bool EPI = false>
__global__ void __launch_bounds__(WG_THREADS, 1)
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap tma,
                      const __grid_constant__ CUtensorMap tmb,
                      const __grid_constant__ CUtensorMap tmc, const wg_params p, const wg_epi e)
{
#if DUET_SM90_DEVICE
    typedef typename wg_traits<KIND>::acc_t acc_t;
    constexpr int kStages = wg_config<CT, EPI>::stages;
    constexpr bool TMA_STORE = wg_config<CT, EPI>::tma_store;
    static_assert(!EPI || KIND != WG_I8, "the fused epilogue is f32 math only");
    constexpr bool F8 = wg_is_f8(KIND);
    constexpr int kelems = KIND == WG_TF32 ? 32 : (KIND == WG_I8 || F8 ? 128 : 64);
    constexpr int a_mn = LAYOUT & 1, b_mn = (LAYOUT >> 1) & 1;
    static_assert(!(a_mn || b_mn) || kelems == 64, "MN-major operands are 16-bit only");

    extern __shared__ uint8_t wg_smem_raw[];
    uint8_t *smem = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(wg_smem_raw) + 1023) &
                                                ~static_cast<uintptr_t>(1023));
    uint8_t *sa = smem;
    uint8_t *sb = smem + kStages * WG_A_STAGE_BYTES;
    uint8_t *sc = sb + kStages * WG_B_STAGE_BYTES; /* C tile (TMA_STORE) or staging (EPI) */
    uint64_t *full = reinterpret_cast<uint64_t *>(sc + wg_config<CT, EPI>::c_bytes);
    uint64_t *empty = full + kStages;

    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            sm90_mbar_init(&full[s], 1);
            sm90_mbar_init(&empty[s], 2); /* one arrival per consumer warpgroup */
        }
        sm90_mbar_fence_init();
        sm90_tma_prefetch_map(&tma);
        sm90_tma_prefetch_map(&tmb);
        if ((TMA_STORE || EPI) && p.tma_store) sm90_tma_prefetch_map(&tmc);
    }
    __syncthreads();

    if (wg == 0) {
        /* Producer: 2 x 128 x 232 + 128 x 40 registers fit the SM's 64 Ki. */
        sm90_setmaxnreg_dec<40>();
        if (tid == 0) {
            int s = 0;
            uint32_t phase = 0;
            for (int64_t t = blockIdx.x; t < p.tiles_total; t += gridDim.x) {
                int bt, tm, tn;
                wg_tile_coords(t, p, bt, tm, tn);
                const int ba = p.a_batched ? bt : 0, bb = p.b_batched ? bt : 0;
                for (int kt = 0; kt < p.ktiles; ++kt) {
                    /* A fresh barrier reports its "previous" phase (parity 1) complete. */
                    sm90_mbar_wait(&empty[s], phase ^ 1);
                    sm90_mbar_arrive_expect_tx(&full[s], WG_A_STAGE_BYTES + WG_B_STAGE_BYTES);
                    if (a_mn) {
#pragma unroll
                        for (int q = 0; q < WG_BM / 64; ++q)
                            sm90_tma_load_3d(sa + s * WG_A_STAGE_BYTES + q * 8192, &tma, &full[s],
                                             tm * WG_BM + 64 * q, kt * kelems, ba);
                    } else {
                        sm90_tma_load_3d(sa + s * WG_A_STAGE_BYTES, &tma, &full[s], kt * kelems,
                                         tm * WG_BM, ba);
                    }
                    if (b_mn) {
#pragma unroll
                        for (int q = 0; q < WG_BN / 64; ++q)
                            sm90_tma_load_3d(sb + s * WG_B_STAGE_BYTES + q * 8192, &tmb, &full[s],
                                             tn * WG_BN + 64 * q, kt * kelems, bb);
                    } else {
                        sm90_tma_load_3d(sb + s * WG_B_STAGE_BYTES, &tmb, &full[s], kt * kelems,
                                         tn * WG_BN, bb);
                    }
                    if (++s == kStages) {
                        s = 0;
                        phase ^= 1;
                    }
                }
            }
        }
    } else {
        sm90_setmaxnreg_inc<232>();
        acc_t acc[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = 0;
        const uint32_t a_off = (uint32_t)(wg - 1) * 64 * WG_KBYTES;
        const uint32_t sa_addr = sm90_smem_addr(sa) + a_off, sb_addr = sm90_smem_addr(sb);
        const int warp = tid / 32, lane = tid % 32;
        int s = 0, prev = 0;
        uint32_t phase = 0;
        for (int64_t t = blockIdx.x; t < p.tiles_total; t += gridDim.x) {
            int bt, tm, tn;
            wg_tile_coords(t, p, bt, tm, tn);
            const int epi_row0 = tm * WG_BM + (wg - 1) * 64 + warp * 16 + lane / 4;
            wg_epi_pre pre;
            if constexpr (EPI) {
                if (e.direct) wg_epi_vectors(pre, true, p, e, bt, epi_row0, tn * WG_BN, tid);
            }
            if (F8 && !p.f8_fast) {
                /* 8-bit floats: a stage at a time, each added to acc in f32 once read
                 * (wg_mma_f8_stage), so each stage is released as soon as it is done. */
                if constexpr (F8) {
#pragma unroll
                    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
                    if (!p.blocked) {
                        const float one[2][2] = {{1.0f, 1.0f}, {1.0f, 1.0f}};
#pragma unroll 1
                        for (int kt = 0; kt < p.ktiles; ++kt)
                            wg_f8_step<KIND, false, kStages>(acc, full, empty, s, phase, sa_addr,
                                                             sb_addr, tid, one);
                    } else {
                        /* Block scales: the thread's two rows (rows past m read row m - 1) and
                         * the tile's two column halves (past n: the first). Each stage's are
                         * loaded while the stage before it runs. */
                        const float *sap[2] = {nullptr, nullptr}, *sbp[2] = {nullptr, nullptr};
#pragma unroll
                        for (int r = 0; r < 2; ++r) {
                            const int row = min(epi_row0 + 8 * r, p.m - 1);
                            const int col = tn * WG_BN + 128 * r < p.n ? tn * WG_BN + 128 * r : 0;
                            if (p.sa)
                                sap[r] =
                                    p.sa + bt * p.sa_bs + (int64_t)(row >> p.sa_shift) * p.sa_rs;
                            if (p.sb)
                                sbp[r] =
                                    p.sb + bt * p.sb_bs + (int64_t)(col >> p.sb_shift) * p.sb_rs;
                        }
                        float va[2] = {1.0f, 1.0f}, vb[2] = {1.0f, 1.0f};
                        wg_block_scales(va, vb, sap, sbp, p, 0);
#pragma unroll 1
                        for (int kt = 0; kt < p.ktiles; ++kt) {
                            float sc[2][2];
#pragma unroll
                            for (int h = 0; h < 2; ++h)
#pragma unroll
                                for (int r = 0; r < 2; ++r) sc[h][r] = __fmul_rn(va[r], vb[h]);
                            if (kt + 1 < p.ktiles) wg_block_scales(va, vb, sap, sbp, p, kt + 1);
                            wg_f8_step<KIND, true, kStages>(acc, full, empty, s, phase, sa_addr,
                                                            sb_addr, tid, sc);
                        }
                    }
                }
                if constexpr (EPI) {
                    if (e.direct) wg_epi_vectors(pre, false, p, e, bt, epi_row0, tn * WG_BN, tid);
                }
            } else {
#pragma unroll 1
            for (int kt = 0; kt < p.ktiles; ++kt) {
                sm90_mbar_wait(&full[s], phase);
#pragma unroll
                for (int i = 0; i < 128; ++i) sm90_fence_operand(acc[i]);
                sm90_wgmma_fence();
                const uint32_t a_at = sa_addr + s * WG_A_STAGE_BYTES;
                const uint32_t b_at = sb_addr + s * WG_B_STAGE_BYTES;
                const uint64_t da =
                    a_mn ? sm90_desc_mnmajor_sw128(a_at, 8192) : sm90_desc_kmajor_sw128(a_at);
                const uint64_t db =
                    b_mn ? sm90_desc_mnmajor_sw128(b_at, 8192) : sm90_desc_kmajor_sw128(b_at);
                /* A K step: 32 bytes along a K-major row, 16 rows (2048 bytes) of an MN-major
                 * box; descriptors count in 16-byte units. */
#pragma unroll
                for (int kk = 0; kk < WG_KBYTES / 32; ++kk)
                    wg_mma<KIND, a_mn, b_mn>(acc, da + (a_mn ? 128 : 2) * kk,
                                             db + (b_mn ? 128 : 2) * kk, (kt | kk) != 0);
                sm90_wgmma_commit();
                /* The previous stage's group is done once at most this one is pending. */
                sm90_wgmma_wait<1>();
#pragma unroll
                for (int i = 0; i < 128; ++i) sm90_fence_operand(acc[i]);
                if (kt > 0 && tid == 0) sm90_mbar_arrive(&empty[prev]);
                prev = s;
                if (++s == kStages) {
                    s = 0;
                    phase ^= 1;
                }
            }
            /* The direct store's vectors are loaded while the last MMAs run. */
            if constexpr (EPI) {
                if (e.direct) wg_epi_vectors(pre, false, p, e, bt, epi_row0, tn * WG_BN, tid);
            }
            sm90_wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < 128; ++i) sm90_fence_operand(acc[i]);
            if (tid == 0) sm90_mbar_arrive(&empty[prev]);
            }

            if constexpr (EPI) {
                if (e.direct) {
                    const int parity = (int)(((t - blockIdx.x) / gridDim.x) & 1);
                    wg_epi_direct(acc, pre,
                                  reinterpret_cast<float *>(sc + WG_EPI_STAGE_BYTES) +
                                      ((wg - 1) * 2 + parity) * 2 * WG_BN,
                                  sc + (wg - 1) * (WG_C_TILE_BYTES / 2), &tmc, p, e, bt, tm, tn, wg,
                                  tid);
                    continue;
                }
                /* Two halves of 128 columns: the accumulators of one half into the staging
                 * (fragment layout: rows warp * 16 + lane / 4 (+ 8), column pairs 8 apart),
                 * then the epilogue over it. The barriers keep the previous half's (or tile's)
                 * readers ahead of the writers. */
                float *st = reinterpret_cast<float *>(sc) + (wg - 1) * 64 * WG_EPI_LD;
#pragma unroll
                for (int q = 0; q < WG_BN / WG_EPI_COLS; ++q) {
                    sm90_named_barrier(wg, 128);
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int r = warp * 16 + lane / 4 + 8 * h;
#pragma unroll
                        for (int j = 0; j < WG_EPI_COLS / 8; ++j) {
                            const int jj = q * (WG_EPI_COLS / 8) + j;
                            *reinterpret_cast<float2 *>(st + r * WG_EPI_LD + 8 * j +
                                                        (lane % 4) * 2) =
                                make_float2(acc[4 * jj + 2 * h], acc[4 * jj + 2 * h + 1]);
                        }
                    }
                    sm90_named_barrier(wg, 128);
                    wg_epi_rows(st, p, e, bt, tm * WG_BM + (wg - 1) * 64,
                                tn * WG_BN + q * WG_EPI_COLS, warp, lane);
                }
                continue;
            }

            const int row0 = tm * WG_BM + (wg - 1) * 64 + warp * 16 + lane / 4;
            const int col0 = tn * WG_BN + (lane % 4) * 2;
            if (TMA_STORE && p.tma_store) {
                /* Through shared memory (wg_tma_store_half); only the next epilogue waits for
                 * the store to have read the buffer. */
                uint8_t *half = sc + (wg - 1) * (WG_C_TILE_BYTES / 2);
                if (tid == 0) sm90_bulk_wait_read();
                sm90_named_barrier(wg, 128);
                const float alpha = p.alpha;
                wg_tma_store_half(
                    half, &tmc,
                    [&acc, alpha](int j, int h) {
                        CT v[2] = {wg_from_float<CT>(alpha * acc[4 * j + 2 * h]),
                                   wg_from_float<CT>(alpha * acc[4 * j + 2 * h + 1])};
                        return *reinterpret_cast<const uint32_t *>(v);
                    },
                    bt, tm, tn, wg, tid);
                continue;
            }

            /* Epilogue straight from the accumulator registers. With beta != 0, C is read 8
             * column groups (16 values) at a time before any of them is written, so the
             * loads overlap instead of each store waiting on its own load. */
            CT *cb = static_cast<CT *>(p.c) + (int64_t)bt * p.bsc;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + 8 * h;
                if (row >= p.m) continue;
                CT *crow = cb + (int64_t)row * p.ldc;
#pragma unroll
                for (int j0 = 0; j0 < 32; j0 += 8) {
                    acc_t old[16];
#pragma unroll
                    for (int jj = 0; jj < 16; ++jj) old[jj] = 0;
                    if (!p.beta_zero) {
#pragma unroll
                        for (int jj = 0; jj < 8; ++jj) {
                            const int col = col0 + 8 * (j0 + jj);
                            if (col < p.n) old[2 * jj] = wg_load_c(crow + col);
                            if (col + 1 < p.n) old[2 * jj + 1] = wg_load_c(crow + col + 1);
                        }
                    }
#pragma unroll
                    for (int jj = 0; jj < 8; ++jj) {
                        const int j = j0 + jj, col = col0 + 8 * j;
                        if (col < p.n)
                            wg_store2(crow + col, col + 1 < p.n, acc[4 * j + 2 * h],
                                      acc[4 * j + 2 * h + 1], old[2 * jj], old[2 * jj + 1], p);
                    }
                }
            }
        }
        /* The shared memory must outlive the last TMA store's reads. */
        if ((TMA_STORE || EPI) && p.tma_store && tid == 0) sm90_bulk_wait_read();
    }
#endif /* DUET_SM90_DEVICE */
}

#endif /* DUET_KERNELS_GEMM_WGMMA_CUH */
