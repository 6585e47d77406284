/* tuning.c - the AUTO GEMM tile table per architecture and dtype, and its lookup. */
#include "tuning.h"

#include <stddef.h>
#include <string.h>

/*
 * How to read a row: {arch, dtype, engine, large, small, large_waves}, each shape written as
 * {bm, bn, bk, tm, tn, threads, stages} (see tuning.h). The launcher (kernels/gemm_fast.cuh)
 * instantiates only the shapes listed in its GF_*_SHAPES lists; a row naming any other shape
 * falls back to the default row of its dtype, so every shape named here must be in those lists
 * (tests/ and the bench report the kernel actually used in duet_launch_info).
 *
 * sm_90 rows are measured on an H100 80GB HBM3 (docs/performance.md, 2026-11-21, against
 * cublasGemmEx with default math):
 *   f32 large: 128 x 128 x 8 with 128 threads of 16 x 8 outputs, register-staged. 128 FMAs per
 *     six 16-byte shared loads keeps the FMA pipes fed at 2 blocks (8 warps) per SM; it beat
 *     256 threads of 8 x 8 (64 FMAs per four loads, 16 warps per SM) by 2-3% and the same shape
 *     on a 4-stage cp.async ring by 3-4% (0.79-0.80x cuBLAS at 2048-8192).
 *   f32 small: 128 x 64 x 16, 256 threads of 8 x 4, 3-stage cp.async ring: at 1024^3 (64 large
 *     tiles for 132 SMs) 0.79x cuBLAS, against 0.70x for 64 x 64 tiles; also best on the
 *     skinny 8192 x 128 x 8192 shapes (0.57x: cuBLAS splits K there, duet does not).
 *   f64: DMMA tensor cores (the FMA kernel reaches only 0.33-0.36x of cuBLAS DGEMM: the H100's
 *     f64 FMA rate is half its DMMA rate). 128 x 128 x 16 blocks of eight 64 x 32 warp tiles win
 *     only with many waves (8192^3: 0.76x, against 0.70x); below 16 blocks per SM the 64 x 64
 *     blocks of four 32 x 32 warp tiles, three per SM, win (4096^3: 0.67x against 0.60x).
 *   i32 runs the f32 shapes (IMAD runs at half the FFMA rate; there is no cuBLAS i32 GEMM to
 *     measure against).
 * sm_80, sm_86 and sm_89 rows copy the sm_90 choice (same SIMT structure, cp.async available),
 * unmeasured; sm_86/sm_89 keep f64 on the FMA path (their f64 units run at 1/64 rate and their
 * DMMA is no faster). sm_70 has no cp.async: register-staged shapes only.
 *
 * AMD rows (gfx908, gfx90a, gfx940, gfx942, gfx1030, gfx1100) were chosen by the compiler's resource
 * report (scripts/hip-resources.sh, docs/hip-resources.md), not measured on hardware: the
 * shapes below were the largest found to compile with no scratch (no register spills) for
 * every operand layout. The f32 large shape spills for i32 on gfx90a (336 bytes of scratch per
 * lane) and gfx940 (316 bytes), so these rows run f32 and i32 on 64 x 64 x 16 tiles of 4 x 4
 * outputs per thread (256 threads) and f64 on 64 x 64 x 8 tiles of 4 x 4, for both the large
 * and the small problem. 128 x 128 x 8 with 8 x 8 per thread (256 threads) also compiles
 * without scratch, on CDNA only, and is not compiled in yet. gfx1030 (RDNA2, wave32) takes
 * the same shapes: there the f32/i32 large shape spills 1164-1352 bytes per lane and the
 * 128 x 64 x 16 two-stage shape 464-524, while 64 x 64 x 16 compiles to 243-253 VGPRs and no
 * scratch. The hardware notes that follow were the first choice's reasoning.
 *
 * The first AMD rows were chosen from the documented hardware, not measured: every CDNA/RDNA2 CU gives a
 * workgroup 64 KiB of LDS and each SIMD 512 32-bit VGPRs per lane (gfx908: 256 arch + 256
 * acc; gfx90a/gfx940: unified; RDNA2 in wave32: up to 256 per wave of a 1024-entry file).
 * There is no cp.async on AMD, so every AMD row is register-staged (2 stages). The f32 large
 * shape needs about 250 VGPRs per lane (128 accumulators): two waves per SIMD fit a 512-entry
 * file, and its 17 KiB of LDS lets three blocks (six 64-lane waves) share a gfx9 CU; the small
 * shape needs about 100 VGPRs and 25 KiB (two blocks, eight waves per CU). f64
 * halves the values per register: 8 x 4 per thread keeps 64 accumulator VGPRs (full-rate FP64
 * on gfx90a/gfx940). RDNA2 runs f64 at 1/16 rate, so its f64 shape only needs to be correct.
 */

#define T_(bm, bn, bk, tm, tn, th, st) {bm, bn, bk, tm, tn, th, st}

/* Shapes shared by many rows. */
#define F32_LARGE T_(128, 128, 8, 16, 8, 128, 2)
#define F32_SMALL_RING T_(128, 64, 16, 8, 4, 256, 3)
#define F32_SMALL_REG T_(128, 64, 16, 8, 4, 256, 2)
#define F64_LARGE_REG T_(128, 64, 8, 8, 4, 256, 2)
#define F64_SMALL_REG T_(64, 64, 8, 4, 4, 256, 2)
#define AMD_F32 T_(64, 64, 16, 4, 4, 256, 2)
#define DMMA_LARGE T_(128, 128, 16, 64, 32, 256, 3)
#define DMMA_SMALL T_(64, 64, 16, 32, 32, 128, 3)

#define FMA DT_GEMM_ENGINE_FMA
#define DMMA DT_GEMM_ENGINE_DMMA

static const dt_gemm_tuning g_gemm_table[] = {
    /* Volta: no cp.async, no f64 tensor cores. */
    {"sm_70", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_REG, 1},
    {"sm_70", DUET_DTYPE_F64, FMA, F64_LARGE_REG, F64_SMALL_REG, 1},
    {"sm_70", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_REG, 1},
    /* A100: cp.async; DMMA m8n8k4 for f64. */
    {"sm_80", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_RING, 1},
    {"sm_80", DUET_DTYPE_F64, DMMA, DMMA_LARGE, DMMA_SMALL, 16},
    {"sm_80", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_RING, 1},
    /* GA10x and Ada: cp.async, f64 at 1/64 rate on plain units. */
    {"sm_86", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_RING, 1},
    {"sm_86", DUET_DTYPE_F64, FMA, F64_LARGE_REG, F64_SMALL_REG, 1},
    {"sm_86", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_RING, 1},
    {"sm_89", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_RING, 1},
    {"sm_89", DUET_DTYPE_F64, FMA, F64_LARGE_REG, F64_SMALL_REG, 1},
    {"sm_89", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_RING, 1},
    /* H100 / H200: measured (see above). DMMA uses the sm_90 m16n8k8 shape. */
    {"sm_90", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_RING, 1},
    {"sm_90", DUET_DTYPE_F64, DMMA, DMMA_LARGE, DMMA_SMALL, 16},
    {"sm_90", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_RING, 1},
    /* AMD (see the note above): register-staged, 2 stages, shapes free of scratch by the
     * compiler's resource report. */
    {"gfx908", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx908", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1},
    {"gfx908", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx90a", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx90a", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1},
    {"gfx90a", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx940", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx940", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1},
    {"gfx940", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx942", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx942", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1},
    {"gfx942", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx1100", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx1100", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1},
    {"gfx1100", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx1030", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1},
    {"gfx1030", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1},
    {"gfx1030", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1},
    /* Any other device: register-staged shapes (no cp.async needed), under 48 KiB of shared
     * memory. */
    {"default", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_REG, 1},
    {"default", DUET_DTYPE_F64, FMA, F64_LARGE_REG, F64_SMALL_REG, 1},
    {"default", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_REG, 1},
};

/* a equals key up to the end of a or up to a ':' feature suffix of a. */
static int arch_matches(const char *a, const char *key)
{
    size_t n = strcspn(a, ":");
    return strlen(key) == n && strncmp(a, key, n) == 0;
}

static const dt_gemm_tuning *lookup_uncached(const char *arch, duet_dtype dtype)
{
    const size_t rows = sizeof g_gemm_table / sizeof g_gemm_table[0];
    const dt_gemm_tuning *fallback = NULL, *amd = NULL;
    for (size_t i = 0; i < rows; i++) {
        const dt_gemm_tuning *t = &g_gemm_table[i];
        if (t->dtype != dtype) continue;
        if (arch && arch_matches(arch, t->arch)) return t;
        if (strcmp(t->arch, "default") == 0) fallback = t;
        if (strcmp(t->arch, "gfx90a") == 0) amd = t;
    }
    /* An AMD GPU without a row of its own takes gfx90a's: the default row's large tile is an
     * NVIDIA shape that spills to scratch on CDNA (docs/hip-resources.md). */
    if (arch && strncmp(arch, "gfx", 3) == 0 && amd) return amd;
    return fallback;
}

/* Every AUTO gemm asks this with its context's arch: the answer is cached per thread (the
 * table is constant), since the table walk's string comparisons cost as much host time as the
 * rest of a small gemm's planning. */
const dt_gemm_tuning *dt_gemm_tuning_lookup(const char *arch, duet_dtype dtype)
{
    static _Thread_local char last_arch[32];
    static _Thread_local int last_dtype = -1, last_null;
    static _Thread_local const dt_gemm_tuning *last_row;
    if (last_dtype == (int)dtype && (arch ? !last_null && strcmp(arch, last_arch) == 0 : last_null))
        return last_row;
    const dt_gemm_tuning *row = lookup_uncached(arch, dtype);
    if (!arch || strlen(arch) < sizeof last_arch) {
        last_null = arch == NULL;
        if (arch) strcpy(last_arch, arch);
        last_dtype = (int)dtype;
        last_row = row;
    }
    return row;
}
