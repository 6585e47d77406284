/* gemm_lowp_simt.cuh - f16, bf16 and i8 GEMM on plain FMA/IMAD lanes, for GPUs without matrix units. */
#ifndef DUET_KERNELS_GEMM_LOWP_SIMT_CUH
#define DUET_KERNELS_GEMM_LOWP_SIMT_CUH

#include "gemm_tc.cuh"

/*
 * The fallback of the tensor-core kernel where the device has no matrix instruction for the
 * input kind (RDNA, gfx908's bf16, NVIDIA before sm_80): inputs converted on load to f32 (or
 * to 32-bit integers for i8) in shared tiles, a 64 x 64 tile of C per block of 256 threads,
 * 4 x 4 outputs per thread, the same epilogue as gemm_tc.cuh, the next k step's operands
 * prefetched into registers. On NVIDIA GPUs with matrix units it also runs small problems in
 * one launch (src/common/gemm_plan.h, DT_SMALL_STEPS).
 */

#define LS_TILE 64
#define LS_BK 16
#define LS_PER (LS_TILE * LS_BK / 256) /* elements of each operand a thread loads a step */

template <int KIND> struct ls_acc {
    typedef float type;
};
template <> struct ls_acc<DUET_MMA_I8> {
    typedef uint32_t type;
};

template <int KIND>
DUET_INLINE typename ls_acc<KIND>::type ls_value(const unsigned char *p)
{
    if (KIND == DUET_MMA_F16) return duet_f16_to_f32(*reinterpret_cast<const uint16_t *>(p));
    if (KIND == DUET_MMA_BF16) return duet_bf16_to_f32(*reinterpret_cast<const uint16_t *>(p));
    return (typename ls_acc<KIND>::type)(int32_t)(int8_t)*p;
}

DUET_INLINE void ls_store(const tc_args &p, unsigned char *c, float acc) { tc_store_float(p, c, acc); }
DUET_INLINE void ls_store(const tc_args &p, unsigned char *c, uint32_t acc)
{
    tc_store_int(p, c, (int32_t)acc);
}

template <int KIND>
DUET_GLOBAL void __launch_bounds__(256) gemm_lowp_simt_kernel(const tc_args p)
{
    typedef typename ls_acc<KIND>::type acc_t;
    constexpr int ELEM = tc_kind<KIND>::ELEM;
    __shared__ acc_t As[LS_BK][LS_TILE + 1];
    __shared__ acc_t Bs[LS_BK][LS_TILE + 1];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int64_t tiles = p.tiles_m * p.tiles_n;
    const int c_elem = p.c_dtype == DUET_DTYPE_F16 || p.c_dtype == DUET_DTYPE_BF16 ? 2 : 4;

    for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
        for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int64_t tm, tn;
            gf_tile_coords(tile, p.tiles_m, p.tiles_n, &tm, &tn);
            const int64_t m0 = tm * LS_TILE, n0 = tn * LS_TILE;
            acc_t acc[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = acc_t(0);
            /* The next step's operands are read into registers while the current step
             * multiplies: all of a step's loads are in flight at once, and their latency
             * overlaps the arithmetic (stored to shared memory only after the barrier that
             * ends the previous step's reads). */
            acc_t ra[LS_PER], rb[LS_PER];
            auto fetch = [&](int64_t k0) {
#pragma unroll
                for (int u = 0; u < LS_PER; ++u) {
                    const int i = tid + u * 256;
                    const int x = i % LS_TILE, kk = i / LS_TILE;
                    const int64_t k = k0 + kk, gm = m0 + x, gn = n0 + x;
                    ra[u] = gm < p.m && k < p.k
                                ? ls_value<KIND>(p.a.base +
                                                 (bz * p.a.bs + gm * p.a.sx + k * p.a.sk) * ELEM)
                                : acc_t(0);
                    rb[u] = gn < p.n && k < p.k
                                ? ls_value<KIND>(p.b.base +
                                                 (bz * p.b.bs + gn * p.b.sx + k * p.b.sk) * ELEM)
                                : acc_t(0);
                }
            };
            fetch(0);
            for (int64_t k0 = 0; k0 < p.k; k0 += LS_BK) {
#pragma unroll
                for (int u = 0; u < LS_PER; ++u) {
                    const int i = tid + u * 256;
                    As[i / LS_TILE][i % LS_TILE] = ra[u];
                    Bs[i / LS_TILE][i % LS_TILE] = rb[u];
                }
                duet_barrier();
                if (k0 + LS_BK < p.k) fetch(k0 + LS_BK);
#pragma unroll
                for (int kk = 0; kk < LS_BK; ++kk) {
                    acc_t a[4], b[4];
#pragma unroll
                    for (int r = 0; r < 4; ++r) {
                        a[r] = As[kk][ty + 16 * r];
                        b[r] = Bs[kk][tx + 16 * r];
                    }
#pragma unroll
                    for (int i = 0; i < 4; ++i)
#pragma unroll
                        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
                }
                duet_barrier();
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int64_t gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
                    if (gm < p.m && gn < p.n)
                        ls_store(p, p.c + (bz * p.c_bs + gm * p.c_rs + gn * p.c_cs) * c_elem,
                                 acc[i][j]);
                }
        }
    }
}

#endif /* DUET_KERNELS_GEMM_LOWP_SIMT_CUH */
