/* tuning.c - the AUTO GEMM tile table per architecture and dtype, the in-place transpose table. */
#include "tuning.h"

#include <stddef.h>
#include <string.h>

/*
 * How to read a row: {arch, dtype, engine, large, small, large_waves}, each shape written as
 * {bm, bn, bk, tm, tn, threads, stages} (see tuning.h). The launcher (src/gpu/gemm_fast_gpu.inc)
 * instantiates only the shapes listed in its GF_*_SHAPES lists; a row naming any other shape
 * falls back to the default row of its dtype, so every shape named here must be in those lists
 * (tests/ and the bench report the kernel actually used in duet_launch_info).
 *
 * sm_90 rows are measured on an H100 80GB HBM3 against cublasGemmEx with default math (the
 * numbers are in docs/performance.md):
 *   f32 large: 128 x 128 x 8 with 128 threads of 16 x 8 outputs, register-staged. 128 FMAs per
 *     six 16-byte shared loads keeps the FMA pipes fed at 2 blocks (8 warps) per SM; it beats
 *     256 threads of 8 x 8 (64 FMAs per four loads, 16 warps per SM) and the same shape on a
 *     4-stage cp.async ring by a few percent.
 *   f32 small: 128 x 64 x 16, 256 threads of 8 x 4, 3-stage cp.async ring: where the large
 *     tiles cannot fill the SMs (1024^3: 64 large tiles for 132 SMs) it beats 64 x 64 tiles,
 *     and it is the best unsplit shape for skinny problems (8192 x 128 x 8192).
 *   f64: DMMA tensor cores (the H100's f64 FMA rate is half its DMMA rate, so an FMA kernel
 *     stays near a third of cuBLAS DGEMM). 128 x 64 x 16 blocks of four 64 x 32 warp tiles,
 *     two per SM, win from two waves up over 64 x 64 x 16 and over 128 x 128 x 16 blocks of
 *     eight warps; below that the 64 x 64 blocks of four 32 x 32 warp tiles, three per SM,
 *     fill the device sooner. sm_80 keeps 128 x 128 x 16 (its m8n8k4 mma, unmeasured).
 *   i32 runs the f32 shapes (IMAD runs at half the FFMA rate; there is no cuBLAS i32 GEMM to
 *     measure against).
 *   split-K (every row): the small shape splits K when its tiles do not fill one wave of
 *     resident blocks (8192 x 128 x 8192, 64 x 64 x 65536, 1024 x 1024 x 16384 ...); the rule
 *     is dt_gemm_split_k below, its numbers the SPLIT_* rows.
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
#define DMMA_LARGE_SM90 T_(128, 64, 16, 64, 32, 128, 3)

/* Split-K rules {fill, large_fill, max, min_k, min_depth, tail, edges} (tuning.h). fill is the
 * small shape's resident blocks per SM/CU: 3 for the cp.async rings (f32 128 x 64 x 16 and DMMA 64
 * x 64 x 16 are capped for three by __launch_bounds__), 2 for the register-staged shapes. NVIDIA's
 * f32/i32 rows split on the large 128 x 128 x 8 shape (2 blocks per SM): on a full H100 it runs at
 * 0.80x cuBLAS where the small one runs at 0.63-0.65x (docs/performance.md), so a split that fills
 * the device with large tiles beats one that fills it with small ones. sm_90's f64 row splits on
 * its large 128 x 64 DMMA shape too (two blocks per SM), but only where both operands are read in
 * 16-byte runs (src/gpu/gemm_fast_gpu.inc): there the large-shape split beats the small-shape one
 * on skinny and deep problems (8192 x 128 x 8192, 256 x 256 x 32768, 1024 x 1024 x 16384),
 * while unaligned shapes lose on it and stay on the small one. sm_80's f64 row splits on its
 * small DMMA shape (its large one holds one block per SM; unmeasured). A max of 256 slices of
 * at least 256 K lets a 64 x 64 output with K = 65536 run about 250 blocks (one tile alone would
 * leave all but one SM idle); the partial sums then take 256 * 64 * 64 elements of workspace.
 * min_depth 4 (K >= 4 sqrt(m n)): deep shapes gain or hold from a split, while squarish ones of
 * 512^3-1024^3 lose on the small shape's split. The sm_90 f32 and i32 rows do not bound the
 * depth and take slices of 128 (SPLIT_RING_LARGE_SM90): with the pairwise reduction and the
 * large shape, every squarish problem that leaves SMs idle gains from a split (384^3 to 1152^3,
 * odd and deep shapes alike), and the deep shapes keep theirs. f64 and the other archs keep
 * the bound (unmeasured).
 * The same rows split the tail of large-shape problems (tail 75, dt_gemm_tail_plan): the full
 * rounds run as they are and the rest on its own split plan. A rest that fills under half a
 * round gains most, up to 75% of a round it still gains, above that the extra launch costs more
 * than the idle SMs; with no full round the whole problem splits. The f64 DMMA row keeps tail 0:
 * it gained on some shapes and lost on others. The sm_90 f32 and i32 rows also copy unaligned
 * operands and split off the partial last column of large tiles (edges 3, tuning.h). The
 * measurements behind each rule are in docs/performance.md. */
/* clang-format off */
#define SPLIT_RING {3, 0, 256, 256, 4, 0, 0}
#define SPLIT_RING_LARGE {3, 2, 256, 256, 4, 0, 0}
#define SPLIT_RING_LARGE_SM90 {3, 2, 256, 128, 0, 75, DT_GEMM_EDGE_STRIP + DT_GEMM_EDGE_PACK}
#define SPLIT_REG {2, 0, 256, 256, 4, 0, 0}
#define SPLIT_REG_LARGE {2, 2, 256, 256, 4, 0, 0}
/* clang-format on */

#define FMA DT_GEMM_ENGINE_FMA
#define DMMA DT_GEMM_ENGINE_DMMA

static const dt_gemm_tuning g_gemm_table[] = {
    /* Volta: no cp.async, no f64 tensor cores. */
    {"sm_70", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_REG, 1, SPLIT_REG_LARGE},
    {"sm_70", DUET_DTYPE_F64, FMA, F64_LARGE_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"sm_70", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_REG, 1, SPLIT_REG_LARGE},
    /* A100: cp.async; DMMA m8n8k4 for f64. */
    {"sm_80", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_RING, 1, SPLIT_RING_LARGE},
    {"sm_80", DUET_DTYPE_F64, DMMA, DMMA_LARGE, DMMA_SMALL, 16, SPLIT_RING},
    {"sm_80", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_RING, 1, SPLIT_RING_LARGE},
    /* GA10x and Ada: cp.async, f64 at 1/64 rate on plain units. */
    {"sm_86", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_RING, 1, SPLIT_RING_LARGE},
    {"sm_86", DUET_DTYPE_F64, FMA, F64_LARGE_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"sm_86", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_RING, 1, SPLIT_RING_LARGE},
    {"sm_89", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_RING, 1, SPLIT_RING_LARGE},
    {"sm_89", DUET_DTYPE_F64, FMA, F64_LARGE_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"sm_89", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_RING, 1, SPLIT_RING_LARGE},
    /* H100 / H200: measured (see above). DMMA uses the sm_90 m16n8k8 shape. */
    {"sm_90", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_RING, 1, SPLIT_RING_LARGE_SM90},
    {"sm_90", DUET_DTYPE_F64, DMMA, DMMA_LARGE_SM90, DMMA_SMALL, 2, SPLIT_RING_LARGE},
    {"sm_90", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_RING, 1, SPLIT_RING_LARGE_SM90},
    /* AMD (see the note above): register-staged, 2 stages, shapes free of scratch by the
     * compiler's resource report. */
    {"gfx908", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx908", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"gfx908", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx90a", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx90a", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"gfx90a", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx940", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx940", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"gfx940", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx942", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx942", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"gfx942", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx1100", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx1100", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"gfx1100", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx1030", DUET_DTYPE_F32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    {"gfx1030", DUET_DTYPE_F64, FMA, F64_SMALL_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"gfx1030", DUET_DTYPE_I32, FMA, AMD_F32, AMD_F32, 1, SPLIT_REG},
    /* Any other device: register-staged shapes (no cp.async needed), under 48 KiB of shared
     * memory. */
    {"default", DUET_DTYPE_F32, FMA, F32_LARGE, F32_SMALL_REG, 1, SPLIT_REG_LARGE},
    {"default", DUET_DTYPE_F64, FMA, F64_LARGE_REG, F64_SMALL_REG, 1, SPLIT_REG},
    {"default", DUET_DTYPE_I32, FMA, F32_LARGE, F32_SMALL_REG, 1, SPLIT_REG_LARGE},
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

static int same_tile(const dt_gemm_tile *a, const dt_gemm_tile *b)
{
    return a->bm == b->bm && a->bn == b->bn && a->bk == b->bk && a->tm == b->tm &&
           a->tn == b->tn && a->threads == b->threads && a->stages == b->stages;
}

/* The launcher (src/gpu/gemm_fast_gpu.inc) compiles exactly the shapes the rows name, per engine
 * and dtype (i32 shares f32's list) and the AMD rows' own shapes for HIP only: so the rows
 * themselves are the list of what a tuning file may select. */
int dt_gemm_candidates(const char *arch, duet_dtype dtype, dt_gemm_engine engine,
                       dt_gemm_tile *out, int max)
{
    const size_t rows = sizeof g_gemm_table / sizeof g_gemm_table[0];
    const duet_dtype key = dtype == DUET_DTYPE_I32 ? DUET_DTYPE_F32 : dtype;
    const int amd = arch && strncmp(arch, "gfx", 3) == 0;
    dt_gemm_tile seen[2 * sizeof g_gemm_table / sizeof g_gemm_table[0]];
    int count = 0;
    for (size_t i = 0; i < rows; i++) {
        const dt_gemm_tuning *t = &g_gemm_table[i];
        const duet_dtype d = t->dtype == DUET_DTYPE_I32 ? DUET_DTYPE_F32 : t->dtype;
        if (d != key || t->engine != engine) continue;
        if (!amd && strncmp(t->arch, "gfx", 3) == 0) continue;
        const dt_gemm_tile *both[2] = {&t->large, &t->small};
        for (int j = 0; j < 2; j++) {
            int dup = 0;
            for (int c = 0; c < count && !dup; c++) dup = same_tile(&seen[c], both[j]);
            if (!dup) seen[count++] = *both[j];
        }
    }
    for (int c = 0; out && c < count && c < max; c++) out[c] = seen[c];
    return count;
}

/* ---- split-K ------------------------------------------------------------------------------- */

static int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t dt_gemm_split_slice_k(int64_t k, int bk, int split)
{
    if (split <= 1 || k <= 0 || bk <= 0) return k;
    return ceil_div64(ceil_div64(k, bk), split) * bk;
}

int dt_gemm_split_k(const dt_gemm_split_rule *r, int64_t m, int64_t n, int64_t k, int64_t batch,
                    const dt_gemm_tile *t, int compute_units)
{
    if (!r || !t || r->max <= 1 || r->fill < 1 || compute_units < 1 || m <= 0 || n <= 0 ||
        k <= 0 || t->bm <= 0 || t->bn <= 0 || t->bk <= 0)
        return 1;
    if (batch < 1) batch = 1;
    const int64_t slots = (int64_t)r->fill * compute_units;
    const int64_t tiles = ceil_div64(m, t->bm) * ceil_div64(n, t->bn) * batch;
    if (tiles >= slots) return 1;
    /* Deep enough: K^2 >= min_depth^2 m n, in double (exact for these magnitudes' purpose:
     * the same inputs always compare the same way). */
    const double depth = r->min_depth > 0 ? (double)r->min_depth : 0.0;
    if ((double)k * (double)k < depth * depth * (double)m * (double)n) return 1;
    /* Whole bk steps per slice, at least min_k of K each. */
    const int64_t steps = ceil_div64(k, t->bk);
    const int64_t min_steps = r->min_k > t->bk ? ceil_div64(r->min_k, t->bk) : 1;
    int64_t cap = k / (min_steps * t->bk);
    if (cap > r->max) cap = r->max;
    /* Beyond two waves' worth the grid only gets longer, not fuller. */
    const int64_t wave_cap = 2 * ceil_div64(slots, tiles);
    if (cap > wave_cap) cap = wave_cap;
    if (cap < 2) return 1;
    /* Efficiency e(s) = tiles s / (ceil(tiles s / slots) slots), compared as exact fractions
     * scaled by 64 so that "within 1/64 of the best" needs no floating point. */
    int64_t best_num = 0, best_den = 1;
    for (int64_t s = 2; s <= cap; s++) {
        const int64_t num = tiles * s, den = ceil_div64(num, slots) * slots;
        if (num * best_den > best_num * den) {
            best_num = num;
            best_den = den;
        }
    }
    int64_t split = cap;
    for (int64_t s = 2; s <= cap; s++) {
        const int64_t num = tiles * s, den = ceil_div64(num, slots) * slots;
        /* num / den >= best - best / 64  <=>  64 num best_den >= 63 best_num den */
        if (64 * num * best_den >= 63 * best_num * den) {
            split = s;
            break;
        }
    }
    /* Equal slices of whole steps; dropping slices that would be empty. */
    const int64_t per = ceil_div64(steps, split);
    split = ceil_div64(steps, per);
    return (int)split;
}

static int64_t padded_area(int64_t m, int64_t n, const dt_gemm_tile *t)
{
    return ceil_div64(m, t->bm) * t->bm * ceil_div64(n, t->bn) * t->bn;
}

/* Fraction of the slots a split fills in its last round, as num / den. */
static void split_fill(int64_t m, int64_t n, int64_t batch, const dt_gemm_tile *t, int split,
                       int64_t slots, int64_t *num, int64_t *den)
{
    *num = ceil_div64(m, t->bm) * ceil_div64(n, t->bn) * (batch < 1 ? 1 : batch) * split;
    *den = ceil_div64(*num, slots) * slots;
}

const dt_gemm_tile *dt_gemm_split_plan(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t k,
                                       int64_t batch, int compute_units, int *split)
{
    int small = 0; /* the small shape's split, once computed */
    if (row->split.large_fill > 0 &&
        padded_area(m, n, &row->large) <= padded_area(m, n, &row->small)) {
        dt_gemm_split_rule large = row->split;
        large.fill = row->split.large_fill;
        const int s = dt_gemm_split_k(&large, m, n, k, batch, &row->large, compute_units);
        /* The large shape, unless the small one's split fills its slots more than 5/4 as
         * well: where min_k caps both splits at the same count, the small shape's tiles are
         * twice as many (H100 f32 512^3: large split 4, 64 blocks for 264 slots, 23.0 us;
         * small split 4, 128 for 396, 15.2 us; 768^3, 82% against 91% filled: large 33.5 us,
         * small 35.5 us). */
        if (s > 1) {
            small = dt_gemm_split_k(&row->split, m, n, k, batch, &row->small, compute_units);
            int64_t ln, ld, sn, sd;
            split_fill(m, n, batch, &row->large, s, (int64_t)large.fill * compute_units, &ln,
                       &ld);
            split_fill(m, n, batch, &row->small, small, (int64_t)row->split.fill * compute_units,
                       &sn, &sd);
            if (small <= 1 || 4 * sn * ld <= 5 * ln * sd) {
                *split = s;
                return &row->large;
            }
        }
    }
    *split = small ? small
                   : dt_gemm_split_k(&row->split, m, n, k, batch, &row->small, compute_units);
    return &row->small;
}

const dt_gemm_tile *dt_gemm_tail_plan(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t k,
                                      int64_t batch, int compute_units, int64_t *top_rows,
                                      int *split)
{
    *top_rows = 0;
    *split = 1;
    const dt_gemm_split_rule *r = &row->split;
    if (r->tail <= 0 || r->large_fill <= 0 || r->max <= 1 || compute_units < 1 || m <= 0 ||
        n <= 0 || k <= 0 || row->large.bm <= 0 || row->large.bn <= 0)
        return NULL;
    if (batch < 1) batch = 1;
    const int64_t slots = (int64_t)r->large_fill * compute_units;
    const int64_t tile_rows = ceil_div64(m, row->large.bm);
    const int64_t row_tiles = ceil_div64(n, row->large.bn) * batch;
    const int64_t tiles = tile_rows * row_tiles;
    /* The whole rows of tiles that the full rounds hold. */
    const int64_t top = tiles / slots * slots / row_tiles;
    if (top >= tile_rows) return NULL;
    if (100 * (tiles - top * row_tiles) >= (int64_t)r->tail * slots) return NULL;
    const int64_t rows = top * row->large.bm;
    int s = 1;
    const dt_gemm_tile *t = dt_gemm_split_plan(row, m - rows, n, k, batch, compute_units, &s);
    if (s <= 1) return NULL;
    *top_rows = rows;
    *split = s;
    return t;
}

int64_t dt_gemm_edge_cols(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t batch,
                          int compute_units, int vectors)
{
    const dt_gemm_split_rule *r = &row->split;
    const int64_t bm = row->large.bm, bn = row->large.bn;
    if (!(r->edges & DT_GEMM_EDGE_STRIP) || bm <= 0 || bn <= 0 || compute_units < 1 || m <= 0 ||
        n <= bn || n % bn == 0)
        return 0;
    if (batch < 1) batch = 1;
    const int64_t per_cu = r->large_fill > 0 ? r->large_fill : (r->fill > 0 ? r->fill : 1);
    const int64_t slots = per_cu * compute_units;
    /* tiles <= ROUNDS * slots, without forming a product that could overflow */
    const int64_t rows = ceil_div64(m, bm), cols = ceil_div64(n, bn);
    if (rows > DT_GEMM_EDGE_ROUNDS * slots / cols / batch) return 0;
    if (!vectors) {
        /* Element-wise operands: only when the columns left take fewer rounds. */
        const int64_t tiles = rows * cols * batch, left = rows * (cols - 1) * batch;
        if (ceil_div64(left, slots) >= ceil_div64(tiles, slots)) return 0;
    }
    return n / bn * bn;
}

/* How well a problem's split plan fills the slots of its last round, in thousandths. */
static int64_t plan_fill(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t k, int64_t batch,
                         int compute_units)
{
    int s = 1;
    const dt_gemm_tile *t = dt_gemm_split_plan(row, m, n, k, batch, compute_units, &s);
    const int64_t per = t == &row->large ? row->split.large_fill : row->split.fill;
    int64_t num, den;
    split_fill(m, n, batch, t, s, (per > 0 ? per : 1) * compute_units, &num, &den);
    return den > 0 ? 1000 * num / den : 0;
}

int64_t dt_gemm_edge_cols_split(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t k,
                                int64_t batch, int compute_units)
{
    const dt_gemm_split_rule *r = &row->split;
    const int64_t bn = row->large.bn;
    if (!(r->edges & DT_GEMM_EDGE_STRIP) || bn <= 0 || row->large.bm <= 0 || row->small.bm <= 0 ||
        row->small.bn <= 0 || r->max <= 1 || compute_units < 1 || m <= 0 || k <= 0 || n <= bn ||
        n % bn == 0 || m > (INT64_C(1) << 24) || n > (INT64_C(1) << 24) ||
        batch > (INT64_C(1) << 24))
        return 0;
    if (batch < 1) batch = 1;
    const int64_t n_main = n / bn * bn;
    if (plan_fill(row, m, n_main, k, batch, compute_units) <
        plan_fill(row, m, n, k, batch, compute_units) + DT_GEMM_EDGE_SPLIT_GAIN)
        return 0;
    return n_main;
}

int dt_gemm_pack_pays(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t k, int64_t elements,
                      int compute_units)
{
    const dt_gemm_split_rule *r = &row->split;
    if (!(r->edges & DT_GEMM_EDGE_PACK) || m <= 0 || n <= 0 || k <= 0 || elements <= 0 ||
        compute_units < 1 || row->large.bm <= 0 || row->large.bn <= 0)
        return 0;
    /* At least one full round of large tiles (without a product that could overflow). */
    const int64_t per_cu = r->large_fill > 0 ? r->large_fill : (r->fill > 0 ? r->fill : 1);
    const int64_t rows = ceil_div64(m, row->large.bm), cols = ceil_div64(n, row->large.bn);
    if (rows < ceil_div64(per_cu * compute_units, cols)) return 0;
    return (double)m * (double)n * (double)k >= (double)DT_GEMM_PACK_RATIO * (double)elements;
}

/*
 * In-place transpose rows: {arch, square tile edge for 1/2/4/8-byte elements, stage bytes, line
 * shared memory, square kernel for 1/2/4/8-byte elements}.
 * Measured on the H100 for 4 and 8 bytes (duet-bench --only transpose-inplace, 16384^2;
 * docs/performance.md): 4-byte tiles of 64 are well ahead of tiles of 32; 8-byte tiles of 32
 * come close to a copy. Otherwise chosen from the hardware: a 64 x 64 tile pair of 4-byte elements is 33 KB
 * of shared memory (two tiles with the +1 column), room for six blocks of 256 threads on an
 * H100 SM (228 KB), though the element-wide kernel's 78 registers (nvcc 13) keep three
 * resident; each thread has 16 loads in flight per tile; 8-byte elements keep
 * 32 x 32 (a 64-edge pair would pass the 48 KB of static shared memory). The stage target is
 * a third of L2 (H100: 50 MB; MI200: 8 MB per GCD), so the gather back hits L2 while the next
 * group streams in. The line kernels may take up to 100 KB of shared memory on sm_90 (80 KB on
 * sm_80): a 16384-element row of 4 bytes (64 KB) is then gathered in shared memory in one
 * launch, two such blocks per SM, instead of staged through L2. The same budget bounds a band
 * of the super-element path (src/common/transpose_inplace_plan.h): 16384 x 8192 of 4 bytes has
 * bands of 64 KB; of 8 bytes, 128 KB, past it (those take C2R). The default row is the
 * conservative choice for any other device. Square kernels, measured on the H100 the same way
 * (DUET_TRANSPOSE_INPLACE_SQUARE=tile|step): for 4 bytes "step" (the same swap with each
 * thread's addresses formed once per pair and stepped, no bounds tests in full pairs) is
 * clearly faster than "tile", for 8 bytes they tie. sm_90 takes "step" for 4 bytes; 1 and 2
 * bytes and sm_80 are unmeasured, so they keep "tile".
 */
static const dt_transpose_inplace_tuning g_transpose_inplace_table[] = {
    {"sm_80", {64, 64, 64, 32}, (size_t)12 << 20, (size_t)80 << 10,
     {"tile", "tile", "tile", "tile"}},
    {"sm_90", {64, 64, 64, 32}, (size_t)16 << 20, (size_t)100 << 10,
     {"tile", "tile", "step", "tile"}},
    {"gfx90a", {64, 64, 32, 32}, (size_t)2 << 20, (size_t)48 << 10,
     {"tile", "tile", "tile", "tile"}},
    {"gfx942", {64, 64, 32, 32}, (size_t)2 << 20, (size_t)48 << 10,
     {"tile", "tile", "tile", "tile"}},
    {"default", {32, 32, 32, 32}, (size_t)2 << 20, (size_t)48 << 10,
     {"tile", "tile", "tile", "tile"}},
};

const dt_transpose_inplace_tuning *dt_transpose_inplace_tuning_lookup(const char *arch)
{
    const size_t rows = sizeof g_transpose_inplace_table / sizeof g_transpose_inplace_table[0];
    for (size_t i = 0; arch && i < rows; i++)
        if (arch_matches(arch, g_transpose_inplace_table[i].arch))
            return &g_transpose_inplace_table[i];
    return &g_transpose_inplace_table[rows - 1];
}
