/* gemm_fast_dmma.cuh - the AUTO f64 GEMM on NVIDIA's DMMA tensor cores (mma.sync, sm_80+). */
#ifndef DUET_KERNELS_GEMM_FAST_DMMA_CUH
#define DUET_KERNELS_GEMM_FAST_DMMA_CUH

#include "gemm_fast_tile.cuh"

/*
 * NVIDIA-only fast path. On an H100 the f64 tensor cores run at twice the rate of the f64 FMA
 * units (about 67 against 34 TFLOP/s), and cuBLAS DGEMM uses them, so an FMA kernel cannot
 * pass half of cuBLAS. Each warp issues mma.sync on 16x8 (sm_90: m16n8k4/k8/k16) or 8x8
 * (sm_80: m8n8k4) blocks; the inputs are the same k-major shared tiles the FMA kernel uses
 * (gemm_fast_tile.cuh), filled by a cp.async ring.
 *
 * mma.sync is defined over exactly 32 lanes; that is an instruction fact here, not a warp-size
 * assumption (this file is never compiled as HIP: the launcher calls it only when
 * DUET_GPU_CUDA).
 *
 * Fragment layout (PTX ISA, mma .f64), g = lane / 4, t = lane % 4:
 *   m16n8kK: a[i] = A(g + 8 (i % 2), t + 4 (i / 2)), b[i] = B(t + 4 i, g),
 *            c[i] = C(g + 8 (i / 2), 2 t + i % 2)
 *   m8n8k4:  a[0] = A(g, t), b[0] = B(t, g), c[i] = C(g, 2 t + i)
 * Rows g and g + 8 of a 16-row block are mapped to the tile's rows 2g and 2g + 1 (the same
 * permutation on A and C leaves the product unchanged): a thread's two A values at one k are
 * then adjacent in the k-major tile and arrive in one 16-byte shared load, and its two C rows
 * are adjacent in the epilogue.
 */

#define GF_MMA_LANES 32

#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#define DUET_GEMM_DMMA_SM80 1
#else
#define DUET_GEMM_DMMA_SM80 0
#endif /* sm_80+ */
#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define DUET_GEMM_DMMA_SM90 1
#else
#define DUET_GEMM_DMMA_SM90 0
#endif /* sm_90+ */

/* One warp-wide f64 mma: D = A * B + D. NA, NB, NC: doubles per lane of each fragment. */
template <int AM, int AK>
struct gf_dmma;

template <>
struct gf_dmma<8, 4> {
    static constexpr int NA = 1, NB = 1, NC = 2;
    DUET_INLINE static void run(double (&d)[NC], const double (&a)[NA], const double (&b)[NB])
    {
#if DUET_GEMM_DMMA_SM80
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, "
                     "{%0,%1};\n"
                     : "+d"(d[0]), "+d"(d[1])
                     : "d"(a[0]), "d"(b[0]));
#endif /* DUET_GEMM_DMMA_SM80 */
    }
};

template <>
struct gf_dmma<16, 4> {
    static constexpr int NA = 2, NB = 1, NC = 4;
    DUET_INLINE static void run(double (&d)[NC], const double (&a)[NA], const double (&b)[NB])
    {
#if DUET_GEMM_DMMA_SM90
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, "
                     "{%6}, {%0,%1,%2,%3};\n"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(a[0]), "d"(a[1]), "d"(b[0]));
#endif /* DUET_GEMM_DMMA_SM90 */
    }
};

template <>
struct gf_dmma<16, 8> {
    static constexpr int NA = 4, NB = 2, NC = 4;
    DUET_INLINE static void run(double (&d)[NC], const double (&a)[NA], const double (&b)[NB])
    {
#if DUET_GEMM_DMMA_SM90
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#endif /* DUET_GEMM_DMMA_SM90 */
    }
};

template <>
struct gf_dmma<16, 16> {
    static constexpr int NA = 8, NB = 4, NC = 4;
    DUET_INLINE static void run(double (&d)[NC], const double (&a)[NA], const double (&b)[NB])
    {
#if DUET_GEMM_DMMA_SM90
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]),
                       "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#endif /* DUET_GEMM_DMMA_SM90 */
    }
};

/*
 * The x-by-k tile. An operand contiguous along k is copied as it lies, s[x * PK + k], two
 * doubles per cp.async when its rows start 16-byte aligned (GF_K_VEC), one otherwise (GF_K_ONE),
 * instead of being transposed into the k-by-x tile of gemm_fast_tile.cuh one 8-byte cp.async
 * per element: for an aligned row-major A (the common case) that halves the copies and their
 * address arithmetic, and either way the tile can take the mma role that suits it (below). Its
 * fragments are read along k, which needs the k order below.
 *
 * k order: the values of k that one lane feeds an mma (t + 4 q, q < AK / 4, PTX's fragment
 * layout) are read from the consecutive stored k = t (AK / 4) + q. The same relabelling on A
 * and on B pairs every product as before, only in another order inside the k-slice, so each
 * lane's A values at one row (and B values at one column) are adjacent in an x-by-k tile: one
 * 16-byte load. For AK = 4 it is the identity.
 *
 * Pitches, in doubles, chosen so that the 16-byte fragment loads meet no bank conflict: the
 * eight lanes of a quarter warp read 64 bytes from each of two rows, which must fall in the two
 * halves of the 128 banks-wide line. A's rows 2g (the row permutation above) are two apart:
 * 2 PK * 8 = 64 mod 128, PK = 4 mod 8. B's rows g are one apart: PK = 8 mod 16.
 */
DUET_HOST_DEVICE constexpr int gf_dmma_pitch_xk(bool p_role, int bk) { return bk + (p_role ? 4 : 8); }

/* Padding of a k-by-x tile. Read as the mma's A operand with the k order above (AK = 8), a
 * quarter warp's 16-byte loads hit the rows 2t, t < 4, at 16 g bytes: their starts must be 32
 * bytes apart mod 128, so 16 (BX + pad) = 32 mod 128, pad = 2 (BX a multiple of 8); GF_PAD (4)
 * would put rows 0 and 4 on the same banks. As the mma's B operand (8-byte loads, rows 2t)
 * GF_PAD already spreads them. */
DUET_HOST_DEVICE constexpr int gf_dmma_kpad(bool p_role, int am, int ak)
{
    return p_role && am == 16 && ak == 8 ? 2 : GF_PAD;
}

/*
 * Roles. The mma's A operand (16 rows, "P") wants a lane's values at rows g and g + 8 of one k
 * in adjacent registers, its B operand ("Q") the values at k = 2t and 2t + 1 of one column. An
 * x-by-k tile holds the latter side by side, a k-by-x tile (with the row permutation 2g, 2g+1)
 * the former. So when A is x-by-k and B k-by-x (row-major A and B, the common case) the kernel
 * swaps roles and computes the warp tile of C's transpose: B's tile feeds P, A's tile feeds Q,
 * and every fragment is one 16-byte load straight into the registers the mma reads (the other
 * way, the compiler had to shuffle the A fragments: 219 register moves per 32 mma in the SASS).
 */
DUET_HOST_DEVICE constexpr bool gf_dmma_swap(bool axk, bool bxk) { return axk && !bxk; }

/* Doubles of one stage of one operand's tile, given its layout and role. */
DUET_HOST_DEVICE constexpr int gf_dmma_stage(bool xk, bool p_role, int bx, int bk, int am, int ak)
{
    return xk ? bx * gf_dmma_pitch_xk(p_role, bk) : bk * (bx + gf_dmma_kpad(p_role, am, ak));
}

/* Whether an operand of layout l takes the x-by-k tile: contiguous along k (16-byte vectors or,
 * rows unaligned, single doubles), and the 16 x 8 x 8 mma (sm_90; the sm_80 8 x 8 x 4 mma keeps
 * the k-by-x tile). */
constexpr bool gf_dmma_xk(int l, int am, int ak)
{
    return (l == 3 /* GF_K_VEC */ || l == 2 /* GF_K_ONE */) && am == 16 && ak == 8;
}

/* Dynamic shared memory of one launch (the rings pass the 48 KiB of static shared memory). */
template <int BM, int BN, int BK, int STAGES, int AM, int AK, bool AXK, bool BXK>
constexpr size_t gf_dmma_smem_bytes()
{
    return (size_t)STAGES *
           (gf_dmma_stage(AXK, !gf_dmma_swap(AXK, BXK), BM, BK, AM, AK) +
            gf_dmma_stage(BXK, gf_dmma_swap(AXK, BXK), BN, BK, AM, AK)) *
           sizeof(double);
}

/*
 * Loads a BX x BK tile of an operand contiguous along k into s[x * PK + k]: V = 2 doubles per
 * cp.async when every row starts 16-byte aligned (GF_K_VEC), else V = 1 (GF_K_ONE). Thread t
 * copies vectors t, t + THREADS, ...: vector i is at k = V (i % CN), x = i / CN, so a warp's
 * lanes cover whole row runs. Out-of-range elements are stored as zero (as in gf_loader); a
 * vector cut by k's end goes element by element, so nothing past the matrix is addressed.
 */
template <int BX, int BK, int PK, int THREADS, int V>
struct gf_loader_xk {
    static constexpr int CN = BK / V;
    static constexpr int COUNT = BX * CN / THREADS;
    static constexpr int OSTEP = THREADS / CN;
    static_assert(V == 1 || V == 2, "one double or one 16-byte vector");
    static_assert((BX * CN) % THREADS == 0 && THREADS % CN == 0, "whole vectors per thread");

    int x0, k0;

    DUET_DEVICE explicit gf_loader_xk(int tid) : x0(tid / CN), k0((tid % CN) * V) {}

    /* base points at element (x = 0, k = 0) of the tile; sx: the stride between x (k's is 1). */
    DUET_DEVICE void copy_async(double *s, const double *base, int64_t sx, int64_t xrem,
                                int64_t krem, bool interior) const
    {
        const double *p = base + (int64_t)x0 * sx + k0;
        const int64_t step = (int64_t)OSTEP * sx;
        if (interior) {
#pragma unroll
            for (int r = 0; r < COUNT; ++r, p += step)
                gf_copy_async<8 * V>(s + (x0 + r * OSTEP) * PK + k0, p, 8 * V);
            return;
        }
#pragma unroll
        for (int r = 0; r < COUNT; ++r, p += step) {
            const int x = x0 + r * OSTEP;
            double *d = s + x * PK + k0;
            const int64_t lim = x < xrem ? krem - k0 : 0;
            if (V == 2 && lim >= 2) {
                gf_copy_async<16>(d, p, 16);
            } else {
                gf_copy_async<8>(d, lim >= 1 ? (const void *)p : (const void *)base,
                                 lim >= 1 ? 8 : 0);
                if (V == 2) gf_copy_async<8>(d + 1, base, 0);
            }
        }
    }
};

/*
 * C = alpha A B + beta C in f64, one BM x BN tile of C per block iteration, (BM/WM) x (BN/WN)
 * warps each owning a WM x WN warp tile, STAGES-deep cp.async ring of BK-deep slices.
 */
/* A 64 x 32 warp tile holds 64 accumulators per thread and gets the whole register file (one
 * block per SM); smaller warp tiles are capped for three blocks per SM. */
template <int WM, int WN>
DUET_HOST_DEVICE constexpr int gf_dmma_min_blocks()
{
    return WM * WN >= 2048 ? 1 : 3;
}

template <int BM, int BN, int BK, int WM, int WN, int THREADS, int STAGES, int AM, int AK,
          bool AXC, int AV, bool BXC, int BV>
DUET_GLOBAL void GF_LAUNCH_BOUNDS(THREADS, (gf_dmma_min_blocks<WM, WN>()))
    gemm_fast_dmma_kernel(const gf_args<double> p)
{
#if DUET_GEMM_DMMA_SM80
    using MMA = gf_dmma<AM, AK>;
    constexpr int WARPS_N = BN / WN;
    /* x-by-k tiles for operands contiguous along k (above), k-by-x tiles otherwise. */
    constexpr bool AXK = !AXC && AM == 16 && AK == 8, BXK = !BXC && AM == 16 && AK == 8;
    constexpr bool SWAP = gf_dmma_swap(AXK, BXK); /* B's tile feeds the mma's A operand */
    constexpr int APITCH = BM + gf_dmma_kpad(!SWAP, AM, AK), BPITCH = BN + gf_dmma_kpad(SWAP, AM, AK);
    constexpr int APK = gf_dmma_pitch_xk(!SWAP, BK), BPK = gf_dmma_pitch_xk(SWAP, BK);
    constexpr int ASTAGE = gf_dmma_stage(AXK, !SWAP, BM, BK, AM, AK);
    constexpr int BSTAGE = gf_dmma_stage(BXK, SWAP, BN, BK, AM, AK);
    /* The P (mma A) and Q (mma B) operands: layout, pitches, and the warp tile along each. */
    constexpr bool PXK = SWAP ? BXK : AXK, QXK = SWAP ? AXK : BXK;
    constexpr int PPITCH = SWAP ? BPITCH : APITCH, QPITCH = SWAP ? APITCH : BPITCH;
    constexpr int PPK = SWAP ? BPK : APK, QPK = SWAP ? APK : BPK;
    constexpr int PW = SWAP ? WN : WM, QW = SWAP ? WM : WN;
    constexpr int MT = PW / AM, NT = QW / 8;
    constexpr int KQ = AK / 4; /* k values per lane and fragment (the k order above) */
    constexpr int KSTEPS = BK / AK;
    /* Whether a slice's first fragments load across the barrier, during the slice before's
     * last mma (see the k-loop): where fragments load straight into the mma's registers (SWAP)
     * and the warp tile has the register file to itself. Elsewhere the second set of fragments
     * spills or slows the loop (measured on sm_90, docs/performance.md), and the barrier stays
     * at the start of each slice. */
    constexpr bool PREFETCH = gf_dmma_min_blocks<WM, WN>() == 1 && gf_dmma_swap(AXK, BXK);
    static_assert((BM / WM) * (BN / WN) * GF_MMA_LANES == THREADS, "one warp per warp tile");
    static_assert(PW % AM == 0 && QW % 8 == 0 && BK % AK == 0, "warp tile holds whole mma blocks");
    static_assert(STAGES >= 2, "a ring needs two stages at least");
    static_assert(KSTEPS % 2 == 0, "a slice starts on the first of the two fragment buffers");

    extern __shared__ __align__(16) unsigned char gf_dmma_smem[];
    double *As = reinterpret_cast<double *>(gf_dmma_smem);
    double *Bs = As + STAGES * ASTAGE;

    /* An x-by-k operand takes gf_loader_xk; the unused loader is a one-element stand-in. */
    using LA = gf_loader<double, BM, BK, THREADS, AXC, AXK ? 1 : AV, APITCH - BM>;
    using LB = gf_loader<double, BN, BK, THREADS, BXC, BXK ? 1 : BV, BPITCH - BN>;
    using LAX = gf_loader_xk<BM, BK, APK, THREADS, AV>;
    using LBX = gf_loader_xk<BN, BK, BPK, THREADS, BV>;
    const int tid = threadIdx.x;
    const LA la(tid);
    const LB lb(tid);
    const LAX lax(tid);
    const LBX lbx(tid);
    const int warp = tid / GF_MMA_LANES, lane = tid % GF_MMA_LANES;
    const int g = lane / 4, t = lane % 4;
    const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
    const int wp = SWAP ? wn : wm, wq = SWAP ? wm : wn; /* the warp tile's P and Q offsets */
    const int64_t tiles = p.tiles_m * p.tiles_n;
    int64_t k_begin, k_len;
    gf_slice(p, &k_begin, &k_len);
    const int64_t kt_count = (k_len + BK - 1) / BK;
    const int64_t k_whole = k_len / BK;          /* slices wholly inside k */
    const int res = kt_count > k_whole ? 1 : 0; /* one partial slice, taken first */

    for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
        for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int64_t tm, tn;
            gf_tile_coords(tile, p.tiles_m, p.tiles_n, &tm, &tn);
            const int64_t m0 = tm * BM, n0 = tn * BN;
            const int64_t mrem = p.m - m0, nrem = p.n - n0;
            const double *a = p.a.base + bz * p.a.bs + m0 * p.a.rs + k_begin * p.a.cs;
            const double *b = p.b.base + bz * p.b.bs + n0 * p.b.cs + k_begin * p.b.rs;
            const bool a_full = mrem >= BM, b_full = nrem >= BN;

            /* Global k-slice gk into a stage; a_in (b_in): A's (B's) tile lies inside the matrix
             * along x and this slice along k, so its copies need no test. */
            auto copy_slice = [&](int64_t gk, int stage, bool a_in, bool b_in) {
                const int64_t k0 = gk * BK, krem = k_len - k0;
                if constexpr (AXK)
                    lax.copy_async(As + stage * ASTAGE, a + k0, p.a.rs, mrem, krem, a_in);
                else
                    la.copy_async(As + stage * ASTAGE, a + k0 * p.a.cs, p.a.rs, p.a.cs, mrem,
                                  krem, a_in);
                if constexpr (BXK)
                    lbx.copy_async(Bs + stage * BSTAGE, b + k0, p.b.cs, nrem, krem, b_in);
                else
                    lb.copy_async(Bs + stage * BSTAGE, b + k0 * p.b.rs, p.b.cs, p.b.rs, nrem,
                                  krem, b_in);
            };

            double acc[MT][NT][MMA::NC];
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
#pragma unroll
                    for (int e = 0; e < MMA::NC; ++e) acc[i][j][e] = 0.0;

            /* The k-loop, once per kind of tile (EDGE: the tile crosses m or n). Logical slice t
             * is global slice t, but for a k that leaves a partial last slice: that one is
             * copied first (t = 0, with every test) and t >= 1 is global t - 1, so the loop's
             * copies are of whole slices, and inside m and n need no test at all.
             *
             * The copies of a slice are issued after the first k-step's mma, not before them.
             * ptxas spaces one warp's DMMAs 32 cycles apart and fills the gaps with whatever
             * independent instructions follow in the same block; issued first, the copies' address
             * arithmetic ran alone between the barrier and the first mma, idling the tensor pipe
             * unless the SM's other warps covered it (FP64 pipe 79% busy on 4096^3). For the same
             * reason neither loop branches around its copies: past the last slice they copy the
             * last slice again, into the stage that nobody reads. */
            auto kloop = [&](auto edge) {
                constexpr bool EDGE = decltype(edge)::value != 0;
#pragma unroll
                for (int s = 0; s < STAGES - 1; ++s) {
                    if (s < kt_count) {
                        if (res && s == 0)
                            copy_slice(k_whole, 0, false, false);
                        else
                            copy_slice(s - res, s, !EDGE || a_full, !EDGE || b_full);
                    }
                    gf_copy_commit();
                }
                /* Fragments of one k-step; with PREFETCH double-buffered: those of k-step s load
                 * while the mma of k-step s - 1 run, across slices too. */
                double af[2][MT][MMA::NA], bf[2][NT][MMA::NB];
                auto load = [&](int stage, int kk, double (&fa)[MT][MMA::NA],
                                double (&fb)[NT][MMA::NB]) {
                    const double *ps = SWAP ? Bs + stage * BSTAGE : As + stage * ASTAGE;
                    const double *qs = SWAP ? As + stage * ASTAGE : Bs + stage * BSTAGE;
#pragma unroll
                    for (int i = 0; i < MT; ++i) {
                        const int row = wp + i * AM;
                        if constexpr (PXK) {
                            /* rows 2g and 2g + 1, stored k = 2t and 2t + 1 (KQ = 2) */
                            const gf_vec<double> v0 = gf_load16(ps + (row + 2 * g) * PPK + kk + 2 * t);
                            const gf_vec<double> v1 =
                                gf_load16(ps + (row + 2 * g + 1) * PPK + kk + 2 * t);
                            fa[i][0] = v0.e[0];
                            fa[i][1] = v1.e[0];
                            fa[i][2] = v0.e[1];
                            fa[i][3] = v1.e[1];
                        } else if (AM == 16) {
#pragma unroll
                            for (int q = 0; q < MMA::NA / 2; ++q) {
                                const gf_vec<double> v =
                                    gf_load16(ps + (kk + t * KQ + q) * PPITCH + row + 2 * g);
                                fa[i][2 * q] = v.e[0];
                                fa[i][2 * q + 1] = v.e[1];
                            }
                        } else {
#pragma unroll
                            for (int q = 0; q < MMA::NA; ++q)
                                fa[i][q] = ps[(kk + t * KQ + q) * PPITCH + row + g];
                        }
                    }
#pragma unroll
                    for (int j = 0; j < NT; ++j) {
                        if constexpr (QXK) {
                            const gf_vec<double> v = gf_load16(qs + (wq + j * 8 + g) * QPK + kk + 2 * t);
                            fb[j][0] = v.e[0];
                            fb[j][1] = v.e[1];
                        } else {
#pragma unroll
                            for (int q = 0; q < MMA::NB; ++q)
                                fb[j][q] = qs[(kk + t * KQ + q) * QPITCH + wq + j * 8 + g];
                        }
                    }
                };
                /* One barrier per slice. It publishes a slice (every thread's copies of it
                 * waited for), and it retires the stage that the copies issued after it
                 * overwrite: the slice before's, whose fragments were all loaded before it.
                 * Without PREFETCH it opens each slice; with it, it comes before the last
                 * k-step's mma, so the next slice's first fragments load while those run. */
                auto publish = [&]() {
                    gf_copy_wait<STAGES - 2>();
                    duet_barrier();
                };
                if constexpr (PREFETCH) {
                    publish();
                    load(0, 0, af[0], bf[0]);
                }
                int read_stage = 0, write_stage = STAGES - 1;
                for (int64_t kt = 0; kt < kt_count; ++kt) {
                    const int rs = read_stage, ws = write_stage;
                    read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
                    write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
#pragma unroll
                    for (int s = 0; s < KSTEPS; ++s) {
                        const int h = s & 1;
                        if (!PREFETCH) {
                            if (s == 0) publish();
                            load(rs, s * AK, af[h], bf[h]);
                        } else if (s + 1 < KSTEPS) {
                            load(rs, (s + 1) * AK, af[h ^ 1], bf[h ^ 1]);
                        } else {
                            publish();
                            /* past the last slice: a stage of no use, read and never used */
                            load(read_stage, 0, af[h ^ 1], bf[h ^ 1]);
                        }
#pragma unroll
                        for (int i = 0; i < MT; ++i)
#pragma unroll
                            for (int j = 0; j < NT; ++j) MMA::run(acc[i][j], af[h][i], bf[h][j]);
                        if (s == 0) {
                            /* Past the last slice, the last slice again (see above). */
                            const int64_t nk = kt + STAGES - 1, last = kt_count - 1;
                            const int64_t t = nk < last ? nk : last;
                            if constexpr (!EDGE) {
                                copy_slice(t - res, ws, true, true);
                            } else {
                                const bool part = res && t == 0; /* the partial slice: tested */
                                copy_slice(part ? k_whole : t - res, ws, a_full && !part,
                                           b_full && !part);
                            }
                            gf_copy_commit();
                        }
                    }
                }
            };
            /* The interior loop copies whole slices only, so it needs one. */
            if (a_full && b_full && k_whole >= 1)
                kloop(gf_int<0>());
            else
                kloop(gf_int<1>());
            gf_copy_wait<0>();

            /* Epilogue: each thread holds pairs of adjacent mma columns (2t, 2t + 1): columns of
             * C, or with SWAP rows of C (the mma computed C's transpose). */
            double *cb = p.c + (int64_t)blockIdx.y * p.c_ss + bz * p.c_bs;
            auto put = [&](int64_t gm, int64_t gn, double v) {
                if (gm < p.m && gn < p.n) {
                    double *q = cb + gm * p.c_rs + gn * p.c_cs;
                    *q = p.beta_zero ? v : fma(p.beta, *q, v);
                }
            };
#pragma unroll
            for (int i = 0; i < MT; ++i) {
#pragma unroll
                for (int h = 0; h < AM / 8; ++h) {
                    const int prow = wp + i * AM + (AM == 16 ? 2 * g + h : g);
                    if constexpr (SWAP) {
                        const int64_t gn = n0 + prow;
#pragma unroll
                        for (int j = 0; j < NT; ++j) {
                            const int64_t gm = m0 + wq + j * 8 + 2 * t;
                            put(gm, gn, p.alpha * acc[i][j][2 * h]);
                            put(gm + 1, gn, p.alpha * acc[i][j][2 * h + 1]);
                        }
                        continue;
                    }
                    const int64_t gm = m0 + prow;
                    if (gm >= p.m) continue;
                    double *crow = cb + gm * p.c_rs;
#pragma unroll
                    for (int j = 0; j < NT; ++j) {
                        const int64_t gn = n0 + wq + j * 8 + 2 * t;
                        const double v0 = p.alpha * acc[i][j][2 * h];
                        const double v1 = p.alpha * acc[i][j][2 * h + 1];
                        if (p.c_vec && gn + 2 <= p.n) {
                            gf_vec<double> o;
                            o.e[0] = v0;
                            o.e[1] = v1;
                            if (!p.beta_zero) {
                                const gf_vec<double> old = gf_load16(crow + gn);
                                o.e[0] = fma(p.beta, old.e[0], v0);
                                o.e[1] = fma(p.beta, old.e[1], v1);
                            }
                            gf_store16(crow + gn, o);
                        } else {
                            put(gm, gn, v0);
                            put(gm, gn + 1, v1);
                        }
                    }
                }
            }
            /* The next tile's first copies overwrite the ring. */
            duet_barrier();
        }
    }
#endif /* DUET_GEMM_DMMA_SM80 */
}

#endif /* DUET_KERNELS_GEMM_FAST_DMMA_CUH */
