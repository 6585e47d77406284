/* wgmma_sm90.cuh - Hopper (sm_90a) instruction wrappers: wgmma, its fences and shared-memory
 * descriptors, TMA tensor loads, mbarriers and setmaxnreg, as inline PTX.
 *
 * Everything here exists only in a device pass for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL): the
 * instructions are architecture-specific (the "a" target), so every other pass, the host pass
 * included, sees nothing and DUET_SM90_DEVICE is 0. Kernels over these wrappers put their
 * bodies under the same condition. */
#ifndef DUET_KERNELS_WGMMA_SM90_CUH
#define DUET_KERNELS_WGMMA_SM90_CUH

#include <stdint.h>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define DUET_SM90_DEVICE 1
#else
#define DUET_SM90_DEVICE 0
#endif

#if DUET_SM90_DEVICE

#define DUET_SM90_INLINE __device__ __forceinline__

/* ---- shared memory, descriptors ---------------------------------------------------------- */

DUET_SM90_INLINE uint32_t sm90_smem_addr(const void *p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/* wgmma descriptor of a K-major operand tile in shared memory written by TMA with the 128-byte
 * swizzle: rows of 128 bytes, groups of 8 rows (1024 bytes, the swizzle's period) one after
 * the other, so the stride-dimension offset is 1024 bytes; the leading-dimension offset is
 * unused for swizzled K-major layouts (1 by convention). The tile must start 1024-byte
 * aligned; stepping along K inside the 128-byte row adds the byte offset to the start address
 * (the hardware applies the swizzle to the final address). */
DUET_SM90_INLINE uint64_t sm90_desc_kmajor_sw128(uint32_t smem_addr)
{
    uint64_t d = 0;
    d |= (uint64_t)((smem_addr & 0x3FFFF) >> 4);
    d |= (uint64_t)1 << 16;
    d |= (uint64_t)(1024 >> 4) << 32;
    d |= (uint64_t)1 << 62; /* swizzle mode 1: 128B */
    return d;
}

/* wgmma descriptor of an MN-major operand tile written by TMA as 64-element (128-byte) wide
 * boxes in the 128-byte swizzle: each box holds K rows of 128 bytes, so 8-row K groups are
 * 1024 bytes apart (stride-dimension offset) and the boxes along M or N mn_stride bytes apart
 * (leading-dimension offset). Stepping along K adds 128 bytes per K row to the start. */
DUET_SM90_INLINE uint64_t sm90_desc_mnmajor_sw128(uint32_t smem_addr, uint32_t mn_stride)
{
    uint64_t d = 0;
    d |= (uint64_t)((smem_addr & 0x3FFFF) >> 4);
    d |= (uint64_t)((mn_stride & 0x3FFFF) >> 4) << 16;
    d |= (uint64_t)(1024 >> 4) << 32;
    d |= (uint64_t)1 << 62; /* swizzle mode 1: 128B */
    return d;
}

/* ---- wgmma fences and groups ------------------------------------------------------------- */

/* Orders this thread's register and shared-memory accesses before the next wgmma reads them. */
DUET_SM90_INLINE void sm90_wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
DUET_SM90_INLINE void sm90_wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> DUET_SM90_INLINE void sm90_wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* Keeps the compiler from moving accumulator reads or writes across wgmma issue and wait:
 * the asm outputs of a wgmma are written asynchronously, which the compiler cannot see. */
DUET_SM90_INLINE void sm90_fence_operand(float &r) { asm volatile("" : "+f"(r)::"memory"); }
DUET_SM90_INLINE void sm90_fence_operand(int32_t &r) { asm volatile("" : "+r"(r)::"memory"); }

/* ---- mbarriers --------------------------------------------------------------------------- */

DUET_SM90_INLINE void sm90_mbar_init(uint64_t *bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(sm90_smem_addr(bar)), "r"(count)
                 : "memory");
}
/* Makes the initialised barriers visible to the async proxy (TMA) before first use. */
DUET_SM90_INLINE void sm90_mbar_fence_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

DUET_SM90_INLINE void sm90_mbar_arrive(uint64_t *bar)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(
                     sm90_smem_addr(bar))
                 : "memory");
}
/* One arrival that also expects bytes of TMA transactions on the barrier's current phase. */
DUET_SM90_INLINE void sm90_mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes)
{
    asm volatile(
        "{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(
            sm90_smem_addr(bar)),
        "r"(bytes)
        : "memory");
}
/* Waits until the phase of the given parity has completed. */
DUET_SM90_INLINE void sm90_mbar_wait(uint64_t *bar, uint32_t parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "WAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=;\n"
                 "}\n" ::"r"(sm90_smem_addr(bar)),
                 "r"(parity)
                 : "memory");
}

/* ---- TMA --------------------------------------------------------------------------------- */

DUET_SM90_INLINE void sm90_tma_prefetch_map(const void *map)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
/* Loads the box at (c0, c1, c2) of a 3D tensor map into shared memory; completion is counted
 * in bytes on bar. Out-of-range elements arrive as zeros. */
DUET_SM90_INLINE void sm90_tma_load_3d(void *dst, const void *map, uint64_t *bar, int c0, int c1,
                                       int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(sm90_smem_addr(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2),
                 "r"(sm90_smem_addr(bar))
                 : "memory");
}

/* Stores a box of shared memory to the 3D tensor map at (c0, c1, c2) as one bulk group (the
 * issuing thread's); out-of-range elements are not written. */
DUET_SM90_INLINE void sm90_tma_store_3d(const void *map, const void *src, int c0, int c1, int c2)
{
    asm volatile(
        "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
            reinterpret_cast<uint64_t>(map)),
        "r"(c0), "r"(c1), "r"(c2), "r"(sm90_smem_addr(src))
        : "memory");
}
DUET_SM90_INLINE void sm90_bulk_commit()
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
/* Waits until this thread's bulk groups have finished reading shared memory. */
DUET_SM90_INLINE void sm90_bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
/* Makes this thread's ordinary shared-memory stores visible to the async proxy (TMA). */
DUET_SM90_INLINE void sm90_fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
/* A barrier among `threads` threads on hardware barrier id (1..15; 0 is __syncthreads). */
DUET_SM90_INLINE void sm90_named_barrier(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* ---- registers --------------------------------------------------------------------------- */

/* Hands registers between warpgroups (every warp of the warpgroup executes it). */
template <int N> DUET_SM90_INLINE void sm90_setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> DUET_SM90_INLINE void sm90_setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* ---- wgmma m64n256, both operands from shared memory ------------------------------------- */
/* d holds the warpgroup's 64 x 256 accumulator tile, 128 values per thread: value 4*j + 2*h + e
 * of thread t is row 16*(t/32) + (t%32)/4 + 8*h, column 8*j + 2*(t%4) + e. scale_d == 0
 * discards d's old contents (d = A*B). The 16-bit forms take the transpose bits (0: K-major). */

#define DUET_SM90_D128                                                                             \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                       \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "             \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "             \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "             \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "   \
    "%127"

#define DUET_SM90_F32_OPS(d)                                                                       \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),            \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), \
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), \
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),          \
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),        \
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),        \
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),        \
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

#define DUET_SM90_S32_OPS(d)                                                                       \
    "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),            \
        "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]),    \
        "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), \
        "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), \
        "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), \
        "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), \
        "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), \
        "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), \
        "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), \
        "+r"(d[63]), "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), \
        "+r"(d[70]), "+r"(d[71]), "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), \
        "+r"(d[77]), "+r"(d[78]), "+r"(d[79]), "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), \
        "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), \
        "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]), "+r"(d[97]), \
        "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]),          \
        "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]),        \
        "+r"(d[110]), "+r"(d[111]), "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]),        \
        "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), "+r"(d[120]), "+r"(d[121]),        \
        "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])

template <int TA, int TB>
DUET_SM90_INLINE void sm90_wgmma_m64n256k16_bf16(float *d, uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" DUET_SM90_D128 "},"
                 " %128, %129, p, 1, 1, %131, %132;\n}\n"
                 : DUET_SM90_F32_OPS(d)
                 : "l"(da), "l"(db), "r"(scale_d), "n"(TA), "n"(TB));
}

template <int TA, int TB>
DUET_SM90_INLINE void sm90_wgmma_m64n256k16_f16(float *d, uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" DUET_SM90_D128 "},"
                 " %128, %129, p, 1, 1, %131, %132;\n}\n"
                 : DUET_SM90_F32_OPS(d)
                 : "l"(da), "l"(db), "r"(scale_d), "n"(TA), "n"(TB));
}

/* TF32 reads the upper 19 bits of each f32 (K-major only). */
DUET_SM90_INLINE void sm90_wgmma_m64n256k8_tf32(float *d, uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" DUET_SM90_D128 "},"
                 " %128, %129, p, 1, 1;\n}\n"
                 : DUET_SM90_F32_OPS(d)
                 : "l"(da), "l"(db), "r"(scale_d));
}

/* s8 x s8 -> s32, wrapping (no .satfinite), K-major only. */
DUET_SM90_INLINE void sm90_wgmma_m64n256k32_s8(int32_t *d, uint64_t da, uint64_t db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {" DUET_SM90_D128 "},"
                 " %128, %129, p;\n}\n"
                 : DUET_SM90_S32_OPS(d)
                 : "l"(da), "l"(db), "r"(scale_d));
}

/* ---- wgmma m64n128, A from registers ---------------------------------------------------- */
/* d holds the warpgroup's 64 x 128 accumulator tile (same mapping as above, j < 16). a holds
 * the thread's four TF32 values of the 64 x 8 A tile: a[v] is row 16*(t/32) + (t%32)/4 +
 * 8*(v%2), column (t%4) + 4*(v/2). The registers must keep their values until the wgmma has
 * completed (wgmma.wait_group). */

#define DUET_SM90_D64 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

#define DUET_SM90_F32_OPS64(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

DUET_SM90_INLINE void sm90_wgmma_m64n128k8_tf32_rs(float *d, const uint32_t *a, uint64_t db,
                                                  int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" DUET_SM90_D64 "},"
                 " {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : DUET_SM90_F32_OPS64(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}
DUET_SM90_INLINE void sm90_fence_operand(uint32_t &r) { asm volatile("" : "+r"(r)::"memory"); }

/* 8-bit floats (K-major only): m64n128k32 with f32 results; EA, EB: 0 e4m3, 1 e5m2. d holds
 * the warpgroup's 64 x 128 tile as above. The tensor core adds the 32 products and d's old
 * value with about 13 fraction bits (its FP8 accumulation), so long sums are added in f32
 * outside the instruction (gemm_wgmma.cuh). */
#define DUET_SM90_F8_MMA(ta, tb)                                                                   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                      \
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32." ta "." tb " {" DUET_SM90_D64 "},"  \
                 " %64, %65, p, 1, 1;\n}\n"                                                        \
                 : DUET_SM90_F32_OPS64(d)                                                          \
                 : "l"(da), "l"(db), "r"(scale_d))
template <int EA, int EB>
DUET_SM90_INLINE void sm90_wgmma_m64n128k32_f8(float *d, uint64_t da, uint64_t db, int scale_d)
{
    if constexpr (EA == 0 && EB == 0)
        DUET_SM90_F8_MMA("e4m3", "e4m3");
    else if constexpr (EA == 0)
        DUET_SM90_F8_MMA("e4m3", "e5m2");
    else if constexpr (EB == 0)
        DUET_SM90_F8_MMA("e5m2", "e4m3");
    else
        DUET_SM90_F8_MMA("e5m2", "e5m2");
}
#undef DUET_SM90_F8_MMA

#endif /* DUET_SM90_DEVICE */

#endif /* DUET_KERNELS_WGMMA_SM90_CUH */
