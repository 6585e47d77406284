/* tuning.c - the AUTO GEMM tile table per architecture and dtype, and its lookup. */
#include "tuning.h"

#include <stddef.h>
#include <string.h>

/*
 * How to read a row: {arch, dtype, engine, large, small}, each shape written as
 * {bm, bn, bk, tm, tn, threads, stages} (see tuning.h). The launcher (kernels/gemm_fast.cuh)
 * instantiates only the shapes listed in its GF_*_SHAPES lists; a row naming any other shape
 * falls back to the default row of its dtype, so every shape named here must be in those lists
 * (tests/ and the bench report the kernel actually used in duet_launch_info).
 *
 * NVIDIA rows were measured on an H100 (docs/performance.md). The FMA shapes: 256 threads with
 * an 8 x 8 block of C each is the classic SIMT SGEMM balance (64 FMAs per four 16-byte
 * shared loads); 4-stage cp.async rings on sm_80+ hide the L2 latency that a 2-deep register
 * stage cannot at one block per scheduler. f64 on sm_80/sm_90 runs on the DMMA tensor cores:
 * a 128 x 128 block of eight warps, each a 64 x 32 warp tile (64 accumulators per thread).
 * sm_86 and sm_89 have f64 units at 1/64 rate and no fast DMMA: they keep the FMA path.
 *
 * AMD rows were chosen from the documented hardware, not measured: every CDNA/RDNA2 CU has
 * 64 KiB of LDS per workgroup and 512 (gfx908: 256 arch + 256 acc; gfx90a/gfx940: unified)
 * 32-bit VGPRs per lane on each SIMD (RDNA2 in wave32: up to 256 per wave of a 1024-entry
 * file). An 8 x 8 f32 thread tile needs about 110 VGPRs, so four 64-lane waves fit per SIMD;
 * its 128 x 128 x 8 tile in two stages takes 16.9 KiB of LDS, three blocks per CU. There is no
 * cp.async on AMD, so every AMD row uses the 2-stage register-staged pipeline. f64 halves the
 * registers per value: 8 x 4 (gfx9, full-rate FP64 on gfx90a/gfx940) keeps 64 accumulator
 * VGPRs. RDNA2 runs f64 at 1/16 rate, so its f64 shape only needs to be correct and small.
 */

#define T_(bm, bn, bk, tm, tn, th, st) {bm, bn, bk, tm, tn, th, st}

/* Shapes shared by many rows. */
#define F32_LARGE_RING T_(128, 128, 8, 8, 8, 256, 4)
#define F32_SMALL_RING T_(64, 64, 16, 4, 4, 256, 4)
#define F32_LARGE_REG T_(128, 128, 8, 8, 8, 256, 2)
#define F32_SMALL_REG T_(64, 64, 16, 4, 4, 256, 2)
#define F64_LARGE_REG T_(128, 64, 8, 8, 4, 256, 2)
#define F64_SMALL_REG T_(64, 64, 8, 4, 4, 256, 2)
#define F64_LARGE_RING T_(128, 64, 8, 8, 4, 256, 3)
#define F64_SMALL_RING T_(64, 64, 8, 4, 4, 256, 4)
#define DMMA_LARGE T_(128, 128, 16, 64, 32, 256, 3)
#define DMMA_SMALL T_(64, 64, 16, 32, 32, 128, 3)

static const dt_gemm_tuning g_gemm_table[] = {
    /* Volta: no cp.async, no f64 tensor cores. */
    {"sm_70", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    {"sm_70", DUET_DTYPE_F64, DT_GEMM_ENGINE_FMA, F64_LARGE_REG, F64_SMALL_REG},
    {"sm_70", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    /* A100: cp.async rings; DMMA m8n8k4 for f64. */
    {"sm_80", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_RING, F32_SMALL_RING},
    {"sm_80", DUET_DTYPE_F64, DT_GEMM_ENGINE_DMMA, DMMA_LARGE, DMMA_SMALL},
    {"sm_80", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_RING, F32_SMALL_RING},
    /* GA10x and Ada: cp.async, f64 at 1/64 rate on plain units. */
    {"sm_86", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_RING, F32_SMALL_RING},
    {"sm_86", DUET_DTYPE_F64, DT_GEMM_ENGINE_FMA, F64_LARGE_RING, F64_SMALL_RING},
    {"sm_86", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_RING, F32_SMALL_RING},
    {"sm_89", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_RING, F32_SMALL_RING},
    {"sm_89", DUET_DTYPE_F64, DT_GEMM_ENGINE_FMA, F64_LARGE_RING, F64_SMALL_RING},
    {"sm_89", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_RING, F32_SMALL_RING},
    /* H100 / H200: measured, docs/performance.md. DMMA uses the sm_90 m16n8k8 shape. */
    {"sm_90", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_RING, F32_SMALL_RING},
    {"sm_90", DUET_DTYPE_F64, DT_GEMM_ENGINE_DMMA, DMMA_LARGE, DMMA_SMALL},
    {"sm_90", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_RING, F32_SMALL_RING},
    /* AMD (see the note above): register-staged, 2 stages. */
    {"gfx908", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    {"gfx908", DUET_DTYPE_F64, DT_GEMM_ENGINE_FMA, F64_LARGE_REG, F64_SMALL_REG},
    {"gfx908", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    {"gfx90a", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    {"gfx90a", DUET_DTYPE_F64, DT_GEMM_ENGINE_FMA, F64_LARGE_REG, F64_SMALL_REG},
    {"gfx90a", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    {"gfx940", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    {"gfx940", DUET_DTYPE_F64, DT_GEMM_ENGINE_FMA, F64_LARGE_REG, F64_SMALL_REG},
    {"gfx940", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    {"gfx1030", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    {"gfx1030", DUET_DTYPE_F64, DT_GEMM_ENGINE_FMA, F64_SMALL_REG, F64_SMALL_REG},
    {"gfx1030", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    /* Any other device: shapes that fit 48 KiB of shared memory and need no cp.async. */
    {"default", DUET_DTYPE_F32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
    {"default", DUET_DTYPE_F64, DT_GEMM_ENGINE_FMA, F64_LARGE_REG, F64_SMALL_REG},
    {"default", DUET_DTYPE_I32, DT_GEMM_ENGINE_FMA, F32_LARGE_REG, F32_SMALL_REG},
};

/* a equals key up to the end of a or up to a ':' feature suffix of a. */
static int arch_matches(const char *a, const char *key)
{
    size_t n = strcspn(a, ":");
    return strlen(key) == n && strncmp(a, key, n) == 0;
}

const dt_gemm_tuning *dt_gemm_tuning_lookup(const char *arch, duet_dtype dtype)
{
    const size_t rows = sizeof g_gemm_table / sizeof g_gemm_table[0];
    const dt_gemm_tuning *fallback = NULL;
    for (size_t i = 0; i < rows; i++) {
        const dt_gemm_tuning *t = &g_gemm_table[i];
        if (t->dtype != dtype) continue;
        if (arch && arch_matches(arch, t->arch)) return t;
        if (strcmp(t->arch, "default") == 0) fallback = t;
    }
    return fallback;
}
