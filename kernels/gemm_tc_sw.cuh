/* gemm_tc_sw.cuh - NVIDIA's mma.sync GEMM on swizzled 128-byte shared rows (f16, bf16, tf32, i8).
 */
#ifndef DUET_KERNELS_GEMM_TC_SW_CUH
#define DUET_KERNELS_GEMM_TC_SW_CUH

#include "gemm_tc.cuh"

/*
 * The portable tensor-core GEMM of NVIDIA sm_80+ for operands that cp.async can copy as they lie
 * (gemm_tc.cuh keeps the register-staged loaders, 3xTF32 and AMD). A block computes BM x BN of
 * C with 64 x 64 warp tiles (4 x 8 atoms of m16n8: 128 accumulators per lane).
 *
 * Shared memory: one stage of an operand is BX x 128 bytes, in rows of 128 bytes split into
 * eight 16-byte chunks, and chunk c of row r is stored at chunk position c ^ (r & 7):
 *   - k-major (the operand contiguous along k, TC_LOAD_ASYNC): BX rows of x, each 128 bytes of
 *     k (64 f16/bf16, 32 tf32, 128 i8 values: four atom k-steps of 8 words);
 *   - x-major (16-bit operand contiguous along m or n, TC_LOAD_ASYNC_MN): 64 rows of k, each BX
 *     elements (BX / 8 chunks; the XOR acts on the chunk index's low three bits), whose
 *     fragments ldmatrix.trans delivers in k-major order.
 * Eight rows that one ldmatrix phase reads at one logical chunk, and the eight chunks that eight
 * neighbouring threads' cp.async write, then fall in eight distinct bank groups, with no pad.
 * gemm_tc.cuh's padded 80-byte rows of 64 bytes of k take twice the write wavefronts, and
 * twice the barriers and copy issues per mma: on the H100 (bf16 > f32, A and B k-major, 4096^3)
 * this layout runs at nearly twice its speed.
 *
 * A lane's ldmatrix address in a stage is a per-lane offset plus a constant. Because of the XOR,
 * the per-lane part differs between the four k-steps of a k-major tile (a chunk 2s + h becomes
 * (2s + h) ^ (r & 7)) and between the atoms of an x-major one, so each operand keeps four such
 * offsets in registers, made once per kernel; everything else is an immediate.
 *
 * k-loop: STAGES - 1 tiles in flight by cp.async; fragments double-buffered across the four
 * k-steps (the ldmatrix of step s + 1, or of the next tile's step 0, issued before the mma of
 * step s); one barrier per tile, before step 3's loads of the next stage: past it every warp
 * has finished reading the stage that step 0 of the next tile refills. Out-of-range chunks
 * past k are zero-filled by cp.async (source size 0 or the valid bytes), in the one partial
 * k-tile, which is copied first; rows past m or n are not copied at all (see tcs_copy::issue).
 * A tile wholly inside m and n runs a copy of the loop with no per-chunk test.
 */

#define TCS_W 64 /* warp tile, both ways */

/* The cp.async copy of one operand's tile: state made once per output tile, then per k-tile
 * an add and, at the matrix's edges only, a test per chunk. MN: x-major (16-bit only). */
template <int KIND, int BX, int THREADS, bool MN> struct tcs_copy {
    static constexpr int ELEM = tc_kind<KIND>::ELEM;
    static constexpr int BK = 128 / ELEM;             /* k of a tile (k-major rows are 128 bytes) */
    static constexpr int RUNS = MN ? BX * 2 / 16 : 8; /* 16-byte chunks per shared row */
    static constexpr int ROWS = THREADS / RUNS;       /* rows per pass of the block */
    static constexpr int PASSES = (MN ? 64 : BX) / ROWS;
    static_assert(!MN || ELEM == 2, "x-major tiles are for 16-bit inputs");
    static_assert(ROWS % 8 == 0 && PASSES * ROWS == (MN ? 64 : BX),
                  "whole passes whose rows keep the swizzle phase of the first");

    const unsigned char *src; /* the thread's first chunk at k-tile 0 */
    int64_t step;             /* bytes between the thread's passes */
    int64_t tile;             /* x-major: bytes between k-tiles (k-major: 128) */
    uint32_t dst;             /* byte offset of the first chunk in a stage */
    int row0;                 /* the thread's first row in the tile */
    int cb;                   /* x-major: valid bytes of the thread's chunk along x;
                                 k-major: the chunk's byte offset along k */
    uint32_t xok;             /* k-major: bit i set when pass i's row is inside the matrix */

    /* base: element (x 0, k 0) of the block's tile; sx, sk: element strides; xrem: rows of x
     * left from the block's first. */
    DUET_INLINE void init(const unsigned char *base, int64_t sx, int64_t sk, int64_t xrem, int tid)
    {
        row0 = tid / RUNS;
        const int c = tid % RUNS;
        dst = (uint32_t)(row0 * RUNS * 16 + (((c & ~7) | ((c ^ row0) & 7)) << 4));
        if constexpr (MN) {
            src = base + ((int64_t)row0 * sk + (int64_t)c * 8) * 2;
            step = (int64_t)ROWS * sk * 2;
            tile = (int64_t)BK * sk * 2;
            const int64_t v = xrem - (int64_t)c * 8;
            cb = v <= 0 ? 0 : v >= 8 ? 16 : (int)v * 2;
            xok = 0;
        } else {
            src = base + ((int64_t)row0 * sx + (int64_t)c * (16 / ELEM)) * ELEM;
            step = (int64_t)ROWS * sx * ELEM;
            tile = 128;
            xok = 0;
#pragma unroll
            for (int i = 0; i < PASSES; ++i)
                if (row0 + i * ROWS < xrem) xok |= 1u << i;
            cb = c * 16;
        }
    }

    /* Global k-tile g, wholly inside k, into the stage at shared address s. EDGE: the block's
     * tile crosses the matrix's edge along x (uniform across the block); rows (k-major) or
     * chunks (x-major) wholly past it are not copied, and an x-major chunk that straddles it
     * copies its valid part (the rest zero-filled). What the skipped rows of the stage hold
     * does not matter: a row of A past m (of B past n) only meets rows (columns) of C past the
     * matrix, which the epilogue never stores. */
    template <bool EDGE> DUET_INLINE void issue(uint32_t s, int64_t g) const
    {
        const unsigned char *q = src + g * (MN ? tile : 128);
        s += dst;
#pragma unroll
        for (int i = 0; i < PASSES; ++i) {
            if (!EDGE)
                tc_cp_async16(s + i * ROWS * RUNS * 16, q, 16);
            else if (MN ? cb > 0 : ((xok >> i) & 1u) != 0)
                tc_cp_async16(s + i * ROWS * RUNS * 16, q, MN ? cb : 16);
            q += step;
        }
    }

    /* Global k-tile g, of any extent, tested along x and k: the one partial k-tile, copied
     * before the pipelined loop starts. */
    DUET_INLINE void issue_any(uint32_t s, int64_t g, int64_t k, const unsigned char *safe) const
    {
        const unsigned char *q = src + g * (MN ? tile : 128);
        s += dst;
        if constexpr (MN) {
            int64_t krows = k - g * BK - row0; /* k-rows left from the thread's first */
#pragma unroll
            for (int i = 0; i < PASSES; ++i) {
                const int b = krows > 0 ? cb : 0;
                tc_cp_async16(s + i * ROWS * RUNS * 16, b ? (const void *)q : (const void *)safe,
                              b);
                q += step;
                krows -= ROWS;
            }
        } else {
            const int64_t left = k * ELEM - cb - g * 128;
            const int kb = left <= 0 ? 0 : left >= 16 ? 16 : (int)left;
#pragma unroll
            for (int i = 0; i < PASSES; ++i) {
                const int b = (xok >> i) & 1u ? kb : 0;
                tc_cp_async16(s + i * ROWS * RUNS * 16, b ? (const void *)q : (const void *)safe,
                              b);
                q += step;
            }
        }
    }
};

/* alpha (a0, a1) into two neighbouring elements of C (beta 0), one aligned store. */
DUET_INLINE void tcs_put2(const tc_args &p, unsigned char *c, float a0, float a1)
{
    const float v0 = p.alpha * a0, v1 = p.alpha * a1;
    if (p.c_dtype == DUET_DTYPE_F32) {
        *reinterpret_cast<float2 *>(c) = make_float2(v0, v1);
    } else {
        const bool half = p.c_dtype == DUET_DTYPE_F16;
        const uint32_t w0 = half ? duet_f32_to_f16(v0) : duet_f32_to_bf16(v0);
        const uint32_t w1 = half ? duet_f32_to_f16(v1) : duet_f32_to_bf16(v1);
        *reinterpret_cast<uint32_t *>(c) = w0 | (w1 << 16);
    }
}

DUET_INLINE void tcs_put2(const tc_args &p, unsigned char *c, int32_t a0, int32_t a1)
{
    *reinterpret_cast<uint2 *>(c) = make_uint2(p.ialpha * (uint32_t)a0, p.ialpha * (uint32_t)a1);
}

/* Stores four neighbouring elements of C (columns n .. n + 3 of one row, unit column stride,
 * aligned to four elements): alpha acc + beta C, rounded once to C's dtype. */
DUET_INLINE void tcs_store4(const tc_args &p, unsigned char *c, const float *acc)
{
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = p.alpha * acc[e];
    if (p.c_dtype == DUET_DTYPE_F32) {
        float4 *q = reinterpret_cast<float4 *>(c);
        if (!p.beta_zero) {
            const float4 o = *q;
            v[0] = fmaf(p.beta, o.x, v[0]);
            v[1] = fmaf(p.beta, o.y, v[1]);
            v[2] = fmaf(p.beta, o.z, v[2]);
            v[3] = fmaf(p.beta, o.w, v[3]);
        }
        *q = make_float4(v[0], v[1], v[2], v[3]);
        return;
    }
    const bool half = p.c_dtype == DUET_DTYPE_F16;
    uint2 *q = reinterpret_cast<uint2 *>(c);
    if (!p.beta_zero) {
        const uint2 o = *q;
        const uint32_t w[2] = {o.x, o.y};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const uint16_t x = (uint16_t)(w[e / 2] >> (16 * (e % 2)));
            v[e] = fmaf(p.beta, half ? duet_f16_to_f32(x) : duet_bf16_to_f32(x), v[e]);
        }
    }
    uint32_t w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) w[e] = half ? duet_f32_to_f16(v[e]) : duet_f32_to_bf16(v[e]);
    *q = make_uint2(w[0] | (w[1] << 16), w[2] | (w[3] << 16));
}

DUET_INLINE void tcs_store4(const tc_args &p, unsigned char *c, const int32_t *acc)
{
    uint4 *q = reinterpret_cast<uint4 *>(c);
    uint32_t v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = p.ialpha * (uint32_t)acc[e];
    if (!p.beta_zero) {
        const uint4 o = *q;
        v[0] += p.ibeta * o.x;
        v[1] += p.ibeta * o.y;
        v[2] += p.ibeta * o.z;
        v[3] += p.ibeta * o.w;
    }
    *q = make_uint4(v[0], v[1], v[2], v[3]);
}

template <int KIND, int BM, int BN, int STAGES, int LA, int LB>
DUET_GLOBAL void GF_LAUNCH_BOUNDS((BM / TCS_W) * (BN / TCS_W) * DUET_WARP_SIZE, 1)
    gemm_tcs_kernel(const tc_args p)
{
    typedef duet_mma_atom<KIND> atom;
    typedef typename atom::acc_t acc_t;
    constexpr int THREADS = (BM / TCS_W) * (BN / TCS_W) * DUET_WARP_SIZE;
    constexpr int AI = TCS_W / 16, AJ = TCS_W / 8;
    constexpr int SA = BM * 128, SB = BN * 128; /* bytes of one stage */
    constexpr bool AMN = LA == TC_LOAD_ASYNC_MN, BMN = LB == TC_LOAD_ASYNC_MN;
    typedef tcs_copy<KIND, BM, THREADS, AMN> CopyA;
    typedef tcs_copy<KIND, BN, THREADS, BMN> CopyB;
    constexpr int BK = CopyA::BK;
    static_assert(LA != TC_LOAD_REG && LB != TC_LOAD_REG, "both operands by cp.async");
    static_assert(STAGES >= 3, "two tiles in flight while one is read");
    constexpr int CP = BN + 8; /* pitch of the epilogue's C tile, in elements */
    static_assert(BM * CP * 4 <= STAGES * (SA + SB), "the C tile fits in the stages");

    if (!atom::available) return; /* never launched: the launcher checks the device */

    extern __shared__ __align__(128) unsigned char tcs_smem[];
    const uint32_t sA = (uint32_t)__cvta_generic_to_shared(tcs_smem);
    const uint32_t sB = sA + STAGES * SA;

    const int tid = threadIdx.x, lane = tid % DUET_WARP_SIZE, warp = tid / DUET_WARP_SIZE;
    const int wm = warp % (BM / TCS_W), wn = warp / (BM / TCS_W);

    /* Per-lane fragment offsets (bytes in a stage; see the comment at the top). A k-major: rows
     * wm 64 + lane % 16, chunk 2s + lane / 16 for step s; x-major: k-rows lane % 8 + 8 ((lane
     * / 16) & 1), chunk 2i + (lane / 8) & 1 for atom i. B (two n-atoms per ldmatrix.x4)
     * k-major: rows wn 64 + lane % 8 + 8 ((lane / 16) & 1), chunk 2s + (lane / 8) & 1;
     * x-major: k-rows lane % 8 + 8 ((lane / 8) & 1), chunk j + (lane / 16) & 1. */
    uint32_t aoff[4], boff[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        if constexpr (AMN) {
            const int kr = (lane & 7) + ((lane >> 4) & 1) * 8, h = (lane >> 3) & 1;
            aoff[q] = (uint32_t)(kr * BM * 2 + (wm * 8 + ((2 * q + h) ^ (kr & 7))) * 16);
        } else {
            const int r = wm * TCS_W + (lane & 15), h = lane >> 4;
            aoff[q] = (uint32_t)(r * 128 + (((2 * q + h) ^ (r & 7)) << 4));
        }
        if constexpr (BMN) {
            const int kr = (lane & 7) + ((lane >> 3) & 1) * 8, h = (lane >> 4) & 1;
            boff[q] = (uint32_t)(kr * BN * 2 + (wn * 8 + ((2 * q + h) ^ (kr & 7))) * 16);
        } else {
            const int r = wn * TCS_W + (lane & 7) + ((lane >> 4) & 1) * 8, h = (lane >> 3) & 1;
            boff[q] = (uint32_t)(r * 128 + (((2 * q + h) ^ (r & 7)) << 4));
        }
    }
    /* Fragments of step s from stage st: A atom i, B atoms j and j + 1. */
    auto a_addr = [&](int st, int i, int s) -> uint32_t {
        if constexpr (AMN)
            return sA + (uint32_t)(st * SA + s * 16 * BM * 2) + aoff[i];
        else
            return sA + (uint32_t)(st * SA + i * 16 * 128) + aoff[s];
    };
    auto b_addr = [&](int st, int j, int s) -> uint32_t {
        if constexpr (BMN)
            return sB + (uint32_t)(st * SB + s * 16 * BN * 2) + boff[j / 2];
        else
            return sB + (uint32_t)(st * SB + j * 8 * 128) + boff[s];
    };

    const int64_t tiles = p.tiles_m * p.tiles_n;

    for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
        const int64_t kz = p.k_last > 0 && bz == p.batch - 1 ? p.k_last : p.k;
        const int64_t kt_count = (kz + BK - 1) / BK;
        const int64_t k_whole = kz / BK;            /* k-tiles wholly inside k */
        const int res = kt_count > k_whole ? 1 : 0; /* one partial k-tile, taken first */
        for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int64_t tm, tn;
            gf_tile_coords(tile, p.tiles_m, p.tiles_n, &tm, &tn);
            const int64_t m0 = tm * BM, n0 = tn * BN;
            const int64_t mrem = p.m - m0, nrem = p.n - n0;
            CopyA ca;
            CopyB cb;
            ca.init(p.a.base + (bz * p.a.bs + m0 * p.a.sx) * CopyA::ELEM, p.a.sx, p.a.sk, mrem,
                    tid);
            cb.init(p.b.base + (bz * p.b.bs + n0 * p.b.sx) * CopyB::ELEM, p.b.sx, p.b.sk, nrem,
                    tid);
            acc_t acc[AI][AJ][4];
#pragma unroll
            for (int i = 0; i < AI; ++i)
#pragma unroll
                for (int j = 0; j < AJ; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[i][j][e] = acc_t(0);

            /* The pipelined loop, once per kind of tile (EDGE: the tile crosses m or n). Logical
             * k-tile t is global k-tile t, except where k leaves a partial last k-tile: that one
             * is taken first (t = 0, copied with every test), and t >= 1 is global t - 1, so
             * the loop's copies are all of whole k-tiles. */
            auto mainloop = [&](auto edge) {
                constexpr bool EDGE = decltype(edge)::value != 0;
                uint32_t fa[2][AI][4], fb[2][AJ][2];
                auto load = [&](int buf, int st, int s) {
#pragma unroll
                    for (int i = 0; i < AI; ++i)
                        atom::template load_a_at<AMN>(fa[buf][i], a_addr(st, i, s));
#pragma unroll
                    for (int j = 0; j < AJ; j += 2)
                        atom::template load_b2_at<BMN>(fb[buf][j], fb[buf][j + 1],
                                                       b_addr(st, j, s));
                };
                auto issue = [&](int64_t t, int st) {
                    if (res && t == 0) {
                        ca.issue_any(sA + (uint32_t)(st * SA), k_whole, kz, p.a.base);
                        cb.issue_any(sB + (uint32_t)(st * SB), k_whole, kz, p.b.base);
                    } else {
                        ca.template issue<EDGE>(sA + (uint32_t)(st * SA), t - res);
                        cb.template issue<EDGE>(sB + (uint32_t)(st * SB), t - res);
                    }
                };
#pragma unroll
                for (int s = 0; s < STAGES - 1; ++s) {
                    if (s < kt_count) issue(s, s);
                    gf_copy_commit();
                }
                gf_copy_wait<STAGES - 2>();
                duet_barrier();
                int rst = 0, wst = STAGES - 1; /* the stage read, the stage refilled next */
                if (kt_count > 0) load(0, 0, 0);
                for (int64_t kt = 0; kt < kt_count; ++kt) {
#pragma unroll
                    for (int s = 0; s < 4; ++s) {
                        if (s == 3) {
                            gf_copy_wait<STAGES - 2>();
                            duet_barrier();
                            rst = rst + 1 == STAGES ? 0 : rst + 1;
                        }
                        /* The next step's fragments (at step 3: the next stage's step 0; past
                         * the last k-tile they are loaded and never used). */
                        load((s + 1) & 1, rst, (s + 1) & 3);
                        if (s == 0) {
                            /* Tile kt + STAGES - 1 (t >= 2: whole) into the stage tile kt - 1
                             * used: every warp passed step 3's barrier of tile kt - 1. */
                            const int64_t nt = kt + STAGES - 1;
                            if (nt < kt_count) {
                                ca.template issue<EDGE>(sA + (uint32_t)(wst * SA), nt - res);
                                cb.template issue<EDGE>(sB + (uint32_t)(wst * SB), nt - res);
                            }
                            gf_copy_commit();
                            wst = wst + 1 == STAGES ? 0 : wst + 1;
                        }
                        if constexpr (KIND == DUET_MMA_TF32) {
                            /* f32 words to tf32 (round to nearest) in registers, at their use. */
#pragma unroll
                            for (int i = 0; i < AI; ++i)
#pragma unroll
                                for (int r = 0; r < 4; ++r)
                                    fa[s & 1][i][r] = duet_f32_to_tf32(fa[s & 1][i][r]);
#pragma unroll
                            for (int j = 0; j < AJ; ++j)
#pragma unroll
                                for (int r = 0; r < 2; ++r)
                                    fb[s & 1][j][r] = duet_f32_to_tf32(fb[s & 1][j][r]);
                        }
#pragma unroll
                        for (int i = 0; i < AI; ++i)
#pragma unroll
                            for (int j = 0; j < AJ; ++j)
                                atom::mma(acc[i][j], fa[s & 1][i], fb[s & 1][j]);
                    }
                }
            };
            if (mrem >= BM && nrem >= BN)
                mainloop(tc_int<0>());
            else
                mainloop(tc_int<1>());
            gf_copy_wait<0>();
            duet_barrier(); /* every warp is done with the stages: C's tile goes there */
            const int es = p.c_dtype == DUET_DTYPE_F16 || p.c_dtype == DUET_DTYPE_BF16 ? 2 : 4;
#ifndef TCS_DIRECT_EPILOGUE
#define TCS_DIRECT_EPILOGUE 1
#endif
            if (TCS_DIRECT_EPILOGUE && p.beta_zero && p.c_cs == 1 && mrem >= BM && nrem >= BN &&
                p.c_rs % 2 == 0 && (p.batch <= 1 || p.c_bs % 2 == 0) &&
                ((uintptr_t)p.c & (uintptr_t)(2 * es - 1)) == 0) {
                /* The common case straight from the registers: beta 0, a tile inside C, rows of
                 * unit stride, pairs aligned: each lane's c0, c1 (c2, c3) are one 2-element
                 * store, as the atom lays them out (no barrier, no shared memory). */
                const int g = lane >> 2, t = lane & 3;
                unsigned char *const cw =
                    p.c +
                    (bz * p.c_bs + (m0 + wm * TCS_W + g) * p.c_rs + n0 + wn * TCS_W + 2 * t) * es;
#pragma unroll
                for (int i = 0; i < AI; ++i)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
#pragma unroll
                        for (int j = 0; j < AJ; ++j)
                            tcs_put2(p, cw + ((int64_t)(i * 16 + h * 8) * p.c_rs + j * 8) * es,
                                     acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                continue;
            }

            /* Otherwise through shared memory: each warp writes its accumulators into a BM x CP
             * tile (c0, c1 and c2, c3 are columns 2t, 2t + 1 of rows g and g + 8), then every
             * thread stores four neighbouring columns at a time. C is then read and written in
             * whole rows, and the code is one rolled loop instead of 128 unrolled stores for each
             * dtype of C (which, as a first version's 20,000 instructions of epilogue, cost more
             * than the k-loop). CP = BN + 8: the 8-byte writes of a half-warp fall in distinct
             * banks. */
            acc_t *ct = reinterpret_cast<acc_t *>(tcs_smem);
            {
                const int g = lane >> 2, t = lane & 3;
#pragma unroll
                for (int i = 0; i < AI; ++i)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
#pragma unroll
                        for (int j = 0; j < AJ; ++j) {
                            acc_t *q = ct + (wm * TCS_W + i * 16 + g + h * 8) * CP + wn * TCS_W +
                                       j * 8 + 2 * t;
                            q[0] = acc[i][j][2 * h];
                            q[1] = acc[i][j][2 * h + 1];
                        }
            }
            duet_barrier();
            const bool vec = p.c_cs == 1 && p.c_rs % 4 == 0 && (p.batch <= 1 || p.c_bs % 4 == 0) &&
                             ((uintptr_t)p.c & (uintptr_t)(4 * es - 1)) == 0;
            unsigned char *const c0 = p.c + (bz * p.c_bs + m0 * p.c_rs + n0 * p.c_cs) * es;
            for (int u = tid; u < BM * BN / 4; u += THREADS) {
                const int r = u / (BN / 4), c = (u % (BN / 4)) * 4;
                if (r >= mrem) break; /* r grows with u */
                const acc_t *q = ct + r * CP + c;
                unsigned char *row = c0 + (int64_t)r * p.c_rs * es;
                if (vec && c + 4 <= nrem) {
                    tcs_store4(p, row + c * es, q);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        if (c + e < nrem) tc_store(p, row + (int64_t)(c + e) * p.c_cs * es, q[e]);
                }
            }
            duet_barrier(); /* the next tile's prologue refills the stages */
        }
    }
}

/* Shared bytes of one launch. */
template <int BM, int BN, int STAGES> constexpr int tcs_shared_bytes()
{
    return STAGES * (BM + BN) * 128;
}

#endif /* DUET_KERNELS_GEMM_TC_SW_CUH */
