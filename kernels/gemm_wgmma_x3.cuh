/* gemm_wgmma_x3.cuh - the Hopper (sm_90a) 3xTF32 GEMM: f32 accuracy from three TF32 wgmma passes.
 */
#ifndef DUET_KERNELS_GEMM_WGMMA_X3_CUH
#define DUET_KERNELS_GEMM_WGMMA_X3_CUH

#include "gemm_wgmma.cuh"

/* Design (beside gemm_wgmma.cuh's, whose producer, tile order and epilogue it shares):
 * - Each f32 input x is split into big = tf32(x) and small = tf32(x - big) (round to nearest);
 *   C = sum big_a*big_b + big_a*small_b + small_a*big_b drops only small*small (~2^-22 of the
 *   product). A wgmma reads TF32 operands as they sit in memory, so the split values must exist
 *   before it runs:
 *   - A is taken from registers (wgmma's register-A form): each consumer thread loads its four
 *     values per 8-wide K step from the stage (the 128-byte swizzle undone in the address) and
 *     splits them in registers. Two fragment sets, so the next stage's are built while the
 *     tensor cores still read this stage's.
 *   - B must come from shared memory, so its split parts must be there: normally B is split
 *     once for the whole GEMM by a pre-pass (gemm_x3_split_kernel: big and small arrays in
 *     the stream's workspace, K-major) and TMA loads both parts into each stage (PRE). Without
 *     workspace, the producer warpgroup's warps 1-3 split each landed stage in place (big) and
 *     into a second buffer of the same layout (small), elementwise, blind to the swizzle, and
 *     release it through a "ready" mbarrier. That fallback runs at 0.7x the speed of PRE on the
 *     H100, and at PRE's speed when its split only copies (same loads and stores, no cvt): the
 *     split's arithmetic, redone for every tile row that reads a B tile, is what costs
 *     (docs/performance.md).
 * - The tensor cores' f32 accumulation truncates. Each stage (32 values of k) is summed on them
 *   from zero into tacc, small products first, and added to the running sum acc with an
 *   ordinary round-to-nearest f32 add, so truncation only ever acts on short partial sums (the
 *   portable kernel does the same per 16). Two 64 x 128 accumulators per thread (128
 *   registers) are why the block tile is 128 x 128, not gemm_wgmma.cuh's 128 x 256.
 * - Stage: A 128 x 32 f32 (16 KiB), B big 128 x 32 (16 KiB), B small (16 KiB); four stages,
 *   195 KiB with the barriers. 168 registers at entry (setmaxnreg: 40 producer, 232 consumer),
 *   no spills. */

#define X3_BN            128
#define X3_STAGES        4
#define X3_B_STAGE_BYTES (X3_BN * WG_KBYTES)
#define X3_SHARED_BYTES                                                                            \
    (X3_STAGES * (WG_A_STAGE_BYTES + 2 * X3_B_STAGE_BYTES) + 3 * X3_STAGES * 8 + 1024)
#define X3_SPLIT_THREADS 96 /* the producer warpgroup's warps 1-3 split B */

#if DUET_SM90_DEVICE

template <int N> struct x3_int {
    static constexpr int value = N;
};

/* big = tf32(x), small = tf32(x - big); an infinite or NaN x has small 0, so that inf inputs
 * give inf products as in exact f32 instead of inf - inf. */
DUET_SM90_INLINE void x3_split(float x, uint32_t &big, uint32_t &small)
{
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(big) : "f"(x));
    const float r = x - __uint_as_float(big);
    uint32_t s;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(s) : "f"(r));
    small = (big & 0x7f800000u) == 0x7f800000u ? 0u : s;
}

#endif /* DUET_SM90_DEVICE */

/* A and B K-major (TF32 wgmma reads nothing else); C f32 with unit column stride. PRE: B comes
 * split already (tmb maps its big parts, tmbs its small ones: gemm_x3_split_kernel below) and
 * the producer only loads; otherwise tmb maps B and the producer's warps 1-3 split it in
 * shared memory (the fallback when no workspace is available; 1.7x slower on the H100). */
template <bool PRE>
__global__ void __launch_bounds__(WG_THREADS, 1)
    gemm_wgmma_x3_kernel(const __grid_constant__ CUtensorMap tma,
                         const __grid_constant__ CUtensorMap tmb,
                         const __grid_constant__ CUtensorMap tmbs, const wg_params p)
{
#if DUET_SM90_DEVICE
    extern __shared__ uint8_t x3_smem_raw[];
    uint8_t *smem = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(x3_smem_raw) + 1023) &
                                                ~static_cast<uintptr_t>(1023));
    uint8_t *sa = smem;
    uint8_t *sb = sa + X3_STAGES * WG_A_STAGE_BYTES;
    uint8_t *sbs = sb + X3_STAGES * X3_B_STAGE_BYTES; /* B's small parts */
    uint64_t *full = reinterpret_cast<uint64_t *>(sbs + X3_STAGES * X3_B_STAGE_BYTES);
    uint64_t *ready = full + X3_STAGES; /* B split (the producer's warps 1-3 arrive) */
    uint64_t *empty = ready + X3_STAGES;

    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < X3_STAGES; ++s) {
            sm90_mbar_init(&full[s], 1);
            sm90_mbar_init(&ready[s], X3_SPLIT_THREADS);
            sm90_mbar_init(&empty[s], 2); /* one arrival per consumer warpgroup */
        }
        sm90_mbar_fence_init();
        sm90_tma_prefetch_map(&tma);
        sm90_tma_prefetch_map(&tmb);
        if (PRE) sm90_tma_prefetch_map(&tmbs);
    }
    __syncthreads();

    if (wg == 0) {
        sm90_setmaxnreg_dec<40>();
        if (tid == 0) {
            /* Warp 0, one thread: the TMA loads. */
            int s = 0;
            uint32_t phase = 0;
            for (int64_t t = blockIdx.x; t < p.tiles_total; t += gridDim.x) {
                int bt, tm, tn;
                wg_tile_coords(t, p, bt, tm, tn);
                const int ba = p.a_batched ? bt : 0, bb = p.b_batched ? bt : 0;
                for (int kt = 0; kt < p.ktiles; ++kt) {
                    sm90_mbar_wait(&empty[s], phase ^ 1);
                    sm90_mbar_arrive_expect_tx(&full[s],
                                               WG_A_STAGE_BYTES + (PRE ? 2 : 1) * X3_B_STAGE_BYTES);
                    sm90_tma_load_3d(sa + s * WG_A_STAGE_BYTES, &tma, &full[s], kt * 32, tm * WG_BM,
                                     ba);
                    sm90_tma_load_3d(sb + s * X3_B_STAGE_BYTES, &tmb, &full[s], kt * 32, tn * X3_BN,
                                     bb);
                    if (PRE)
                        sm90_tma_load_3d(sbs + s * X3_B_STAGE_BYTES, &tmbs, &full[s], kt * 32,
                                         tn * X3_BN, bb);
                    if (++s == X3_STAGES) {
                        s = 0;
                        phase ^= 1;
                    }
                }
            }
        } else if (!PRE && tid >= 32) {
            /* Warps 1-3: split each landed stage's B, big in place and small beside it (an
             * elementwise pass, blind to the swizzled layout), then release it to the
             * consumers. The fence orders these generic-proxy stores before the wgmmas' reads
             * (async proxy) that the ready barrier lets start. */
            const int ct = tid - 32;
            int s = 0;
            uint32_t phase = 0;
            const int64_t stages_total =
                ((p.tiles_total - blockIdx.x + gridDim.x - 1) / gridDim.x) * p.ktiles;
            for (int64_t q = 0; q < stages_total; ++q) {
                sm90_mbar_wait(&full[s], phase);
                {
                    float4 *big = reinterpret_cast<float4 *>(sb + s * X3_B_STAGE_BYTES);
                    float4 *small = reinterpret_cast<float4 *>(sbs + s * X3_B_STAGE_BYTES);
#pragma unroll 2
                    for (int i = ct; i < X3_B_STAGE_BYTES / 16; i += X3_SPLIT_THREADS) {
                        const float4 x = big[i];
                        uint32_t b0, b1, b2, b3, s0, s1, s2, s3;
                        x3_split(x.x, b0, s0);
                        x3_split(x.y, b1, s1);
                        x3_split(x.z, b2, s2);
                        x3_split(x.w, b3, s3);
                        big[i] = make_float4(__uint_as_float(b0), __uint_as_float(b1),
                                             __uint_as_float(b2), __uint_as_float(b3));
                        small[i] = make_float4(__uint_as_float(s0), __uint_as_float(s1),
                                               __uint_as_float(s2), __uint_as_float(s3));
                    }
                    sm90_fence_proxy_async();
                }
                sm90_mbar_arrive(&ready[s]);
                if (++s == X3_STAGES) {
                    s = 0;
                    phase ^= 1;
                }
            }
        }
    } else {
        sm90_setmaxnreg_inc<232>();
        const int c = wg - 1; /* this consumer's 64 rows of the block tile */
        const int warp = tid / 32, lane = tid % 32, g = lane / 4, t4 = lane % 4;
        float acc[64], tacc[64];
        uint32_t fa[2][2][4][4]; /* [set][big, small][K step][value] */
        const uint32_t sb_addr = sm90_smem_addr(sb), sbs_addr = sm90_smem_addr(sbs);
        /* Row 16 warp + g of this consumer's rows, word t4: the A fragment's first value. Row
         * r's 16-byte chunk q sits at chunk q ^ (r % 8), and r % 8 == g here. */
        const int a_row = (c * 64 + warp * 16 + g) * WG_KBYTES + t4 * 4;

        /* Fragments of stage st into set SET: value v of K step kk is row + 8 (v % 2), column
         * 8 kk + t4 + 4 (v / 2), i.e. chunk 2 kk + v / 2. */
        auto load_a = [&](auto set_c, int st) {
            constexpr int SET = decltype(set_c)::value;
            const uint8_t *base = sa + st * WG_A_STAGE_BYTES + a_row;
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
#pragma unroll
                for (int v = 0; v < 4; ++v) {
                    const float x = *reinterpret_cast<const float *>(
                        base + (v % 2) * 8 * WG_KBYTES + (((2 * kk + v / 2) ^ g) << 4));
                    x3_split(x, fa[SET][0][kk][v], fa[SET][1][kk][v]);
                }
        };

        int s = 0;
        uint32_t phase = 0;
        /* One stage: its 12 wgmmas issued, the next stage's A fragments built while they run,
         * then the stage's sum added to acc. SET: the fragment set this stage's A is in. */
        auto step = [&](auto set_c, int kt) {
            constexpr int SET = decltype(set_c)::value;
#pragma unroll
            for (int i = 0; i < 64; ++i) sm90_fence_operand(tacc[i]);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
#pragma unroll
                for (int v = 0; v < 4; ++v) {
                    sm90_fence_operand(fa[SET][0][kk][v]);
                    sm90_fence_operand(fa[SET][1][kk][v]);
                }
            sm90_wgmma_fence();
            const uint64_t db = sm90_desc_kmajor_sw128(sb_addr + s * X3_B_STAGE_BYTES);
            const uint64_t ds = sm90_desc_kmajor_sw128(sbs_addr + s * X3_B_STAGE_BYTES);
            /* Small products first, then big*big, into a sum that starts from zero. */
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
                sm90_wgmma_m64n128k8_tf32_rs(tacc, fa[SET][1][kk], db + 2 * kk, kk != 0);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
                sm90_wgmma_m64n128k8_tf32_rs(tacc, fa[SET][0][kk], ds + 2 * kk, 1);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
                sm90_wgmma_m64n128k8_tf32_rs(tacc, fa[SET][0][kk], db + 2 * kk, 1);
            sm90_wgmma_commit();

            const bool next = kt + 1 < p.ktiles;
            int sn = s + 1;
            uint32_t pn = phase;
            if (sn == X3_STAGES) {
                sn = 0;
                pn ^= 1;
            }
            if (next) {
                sm90_mbar_wait(PRE ? &full[sn] : &ready[sn], pn);
                load_a(x3_int<SET ^ 1>(), sn);
            }
            sm90_wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < 64; ++i) sm90_fence_operand(tacc[i]);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
#pragma unroll
                for (int v = 0; v < 4; ++v) {
                    sm90_fence_operand(fa[SET][0][kk][v]);
                    sm90_fence_operand(fa[SET][1][kk][v]);
                }
#pragma unroll
            for (int i = 0; i < 64; ++i) acc[i] += tacc[i];
            if (tid == 0) sm90_mbar_arrive(&empty[s]);
            s = sn;
            phase = pn;
        };

        for (int64_t t = blockIdx.x; t < p.tiles_total; t += gridDim.x) {
            int bt, tm, tn;
            wg_tile_coords(t, p, bt, tm, tn);
#pragma unroll
            for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
            sm90_mbar_wait(PRE ? &full[s] : &ready[s], phase);
            load_a(x3_int<0>(), s);
#pragma unroll 1
            for (int kt = 0; kt < p.ktiles; kt += 2) {
                step(x3_int<0>(), kt);
                if (kt + 1 < p.ktiles) step(x3_int<1>(), kt + 1);
            }

            /* Epilogue straight from registers (gemm_wgmma.cuh's, 16 column groups). */
            const int row0 = tm * WG_BM + c * 64 + warp * 16 + g;
            const int col0 = tn * X3_BN + t4 * 2;
            float *cb = static_cast<float *>(p.c) + (int64_t)bt * p.bsc;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + 8 * h;
                if (row >= p.m) continue;
                float *crow = cb + (int64_t)row * p.ldc;
#pragma unroll
                for (int j0 = 0; j0 < 16; j0 += 8) {
                    float old[16];
#pragma unroll
                    for (int jj = 0; jj < 16; ++jj) old[jj] = 0.0f;
                    if (!p.beta_zero) {
#pragma unroll
                        for (int jj = 0; jj < 8; ++jj) {
                            const int col = col0 + 8 * (j0 + jj);
                            if (col < p.n) old[2 * jj] = crow[col];
                            if (col + 1 < p.n) old[2 * jj + 1] = crow[col + 1];
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
    }
#endif /* DUET_SM90_DEVICE */
}

/* The pre-pass: B (k x n, element (kk, j) of batch bt at bt bs + kk rs + j cs) split into big
 * and small arrays, n rows of ld floats each (K-major, what TMA then loads as it is), per batch
 * n ld apart. 32 x 32 tiles through shared memory so that both the reads (along whichever of k
 * and n is contiguous) and the writes (along k) are coalesced. Block 32 x 8. */
__global__ void __launch_bounds__(256)
    gemm_x3_split_kernel(const float *__restrict__ src, int64_t rs, int64_t cs, int64_t bs,
                         int64_t k, int64_t n, float *__restrict__ big, float *__restrict__ small,
                         int64_t ld, int k_contiguous)
{
#if DUET_SM90_DEVICE
    __shared__ float tile[32][33]; /* [j][kk] */
    const int64_t k0 = (int64_t)blockIdx.x * 32, j0 = (int64_t)blockIdx.y * 32;
    const int64_t bt = blockIdx.z;
    const float *sb = src + bt * bs;
    const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int r = ty + 8 * i;
        /* k contiguous: lanes walk k; otherwise lanes walk n. */
        const int64_t kk = k0 + (k_contiguous ? tx : r), j = j0 + (k_contiguous ? r : tx);
        if (kk < k && j < n) {
            const float x = sb[kk * rs + j * cs];
            if (k_contiguous)
                tile[r][tx] = x;
            else
                tile[tx][r] = x;
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int r = ty + 8 * i;
        const int64_t j = j0 + r, kk = k0 + tx;
        if (kk < k && j < n) {
            uint32_t b, sm;
            x3_split(tile[r][tx], b, sm);
            const int64_t at = (bt * n + j) * ld + kk;
            big[at] = __uint_as_float(b);
            small[at] = __uint_as_float(sm);
        }
    }
#endif /* DUET_SM90_DEVICE */
}

#endif /* DUET_KERNELS_GEMM_WGMMA_X3_CUH */
