/* gemm_plan.c - GEMM planning in plain C: the memory-bound family's plan and the tile families'
 * split-K (gemm_plan.h). */
#include "gemm_plan.h"

#include <stdint.h>
#include <string.h>

/* The grid the split aims at, in blocks of four warps per SM or compute unit. K-major: one
 * wave of the blocks its launch bound keeps resident (kernels/gemm_skinny.cuh,
 * SK_KMAJOR_BLOCKS: three, two on 64-lane wavefronts; enough loads in flight, no second,
 * partial wave). M-major: at least four (its blocks are light, and more of them in flight
 * measured faster than one wave of three). */
#define SKINNY_KMAJOR_BLOCKS_PER_UNIT 3
#define SKINNY_KMAJOR_BLOCKS_PER_UNIT_WAVE64 2
#define SKINNY_MMAJOR_BLOCKS_PER_UNIT 4

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int is_16bit(duet_dtype d) { return d == DUET_DTYPE_F16 || d == DUET_DTYPE_BF16; }
static int is_f8(duet_dtype d) { return d == DUET_DTYPE_F8E4M3 || d == DUET_DTYPE_F8E5M2; }

static int aligned(const void *p, int64_t stride_elems, int64_t batch_stride, int64_t batch,
                   size_t elem, size_t to)
{
    if ((uintptr_t)p % to != 0) return 0;
    if (((uint64_t)stride_elems * elem) % to != 0) return 0;
    if (batch > 1 && ((uint64_t)batch_stride * elem) % to != 0) return 0;
    return 1;
}

void dt_gemm_skinny_view(const dt_gemm *g, const dt_skinny_plan *plan, dt_gemm *out)
{
    *out = *g;
    if (!plan->transpose) return;
    out->m = g->n;
    out->n = g->m;
    out->a.base = g->b.base;
    out->a.rs = g->b.cs;
    out->a.cs = g->b.rs;
    out->a.bs = g->b.bs;
    out->b.base = g->a.base;
    out->b.rs = g->a.cs;
    out->b.cs = g->a.rs;
    out->b.bs = g->a.bs;
    out->c.rs = g->c.cs;
    out->c.cs = g->c.rs;
    if (is_f8(g->dtype)) {
        out->dtype = g->b_dtype; /* the 8-bit floats' pair swaps with the operands */
        out->b_dtype = g->dtype;
    }
    out->sa = g->sb; /* block scales go with their operands */
    out->sb = g->sa;
}

/* The K-major kernels' chunk (the k of A a lane holds in one of its two register buffers: four
 * steps of 16 bytes, two for SIMT with 16 columns) and window (the k of B a block keeps in 32
 * KiB of shared memory, bs bytes an element, a whole number of chunk pairs), mirroring
 * kernels/gemm_skinny.cuh's sk_kmajor_shape. */
static int64_t kmajor_chunk(size_t elem, int mma, int nmax)
{
    return (!mma && nmax >= 16 ? 2 : 4) * 4 * (16 / (int64_t)elem);
}
static int64_t kmajor_window(size_t elem, int mma, int bs, int nmax)
{
    const int64_t ch = kmajor_chunk(elem, mma, nmax);
    return 32768 / ((int64_t)nmax * bs) / (2 * ch) * (2 * ch);
}

int dt_gemm_plan_skinny(const dt_gemm *g, const duet_device_props *props, dt_skinny_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1) return 0;
    const duet_dtype dt = g->dtype;
    const int f8 = is_f8(dt);
    const int lowp = dt == DUET_DTYPE_F16 || dt == DUET_DTYPE_BF16 || dt == DUET_DTYPE_I8;
    if (!f8 && !lowp && dt != DUET_DTYPE_F32 && dt != DUET_DTYPE_F64 && dt != DUET_DTYPE_I32)
        return 0;
    /* f32 with a TF32 or 3xTF32 math mode runs here as exact f32 on the 4- and 8-column
     * forms: a narrow C is bound by reading A, so the tensor cores would only add copies and
     * rounding. The 16-column forms ran slower than the f32 tile family on the same problems
     * (0.35-0.95 of its speed), which plan_lowp gives those. (The 8-bit floats' FAST_ACCUM
     * is met by their exact-per-instruction sums.) */
    if (!f8 && g->math != DUET_MATH_DEFAULT && (g->m < g->n ? g->m : g->n) > 8) return 0;

    plan->transpose = g->n > g->m;
    dt_gemm v;
    dt_gemm_skinny_view(g, plan, &v);
    if (v.n > DT_SKINNY_MAX_N_MMA && v.n > DT_SKINNY_MAX_N_SIMT) return 0;

    const size_t elem = duet_dtype_size(dt);
    const int warp = props->warp_size > 0 ? props->warp_size : 32;
    const int nvidia = strncmp(props->arch, "sm_", 3) == 0;
    const int kmajor = v.a.cs == 1 && v.k > 1;
    const int mmajor = v.a.rs == 1 && !kmajor;
    const int kvec = kmajor && aligned(v.a.base, v.a.rs, v.a.bs, v.batch, elem, 16);

    /* The family takes what it runs faster than the tile families (docs/performance.md has
     * the measurements):
     * - the mma.sync form (sm_80+) for f16, bf16 and i8 with A's rows on 16-byte boundaries
     *   and at most 16 columns; wider, the 128-wide tiles waste less than the staging of B
     *   costs here;
     * - the SIMT forms for f32, f64 and i32 with at most 16 columns, A K-major or M-major: n
     *   multiply-adds per element of A stay within the FMA rate at 4 and 8 bytes an element;
     * - on NVIDIA, the SIMT K-major form for f16 and bf16 with at most 16 columns and i8 with
     *   at most 8 where the mma.sync form does not take A (rows off 16 bytes; sm_75). On AMD
     *   16-bit instances of 8 and 16 columns spill to scratch (docs/hip-resources.md) and
     *   nothing was measured, so 16-bit and i8 keep the tile families there. On the H200
     *   it ran 2048 x 5 x 414 bf16 in 18.9 us against 36.7 with A copied for the tile
     *   families, 229 x 7 x 3510 in 18.9 against 38.4; i8 with 16 columns lost (FMA-bound).
     * - 16-bit and i8 A M-major: none (the tile families); on the H200's shape sweep a SIMT
     *   M-major form for f16/bf16 (8 bytes of A a lane) reached a median 0.76 of their speed.
     * f32 in a TF32 math mode takes the f32 forms up to 8 columns (exact f32).
     * - the 8-bit floats (e4m3, e5m2, either for A and B): the mma.sync form, which their
     *   instructions need (sm_89+), where it takes A; else the Hopper FP8 kernel
     *   (plan_f8). On the H200 the 128 x 256 FP8 tiles ran 16 x 4096 x 4096 at 0.32x cuBLASLt
     *   (docs/performance.md's FP8 section has this family's numbers). */
    const int f8_mma = nvidia && (props->capability_major > 8 ||
                                  (props->capability_major == 8 && props->capability_minor >= 9));
    if (f8 && !(f8_mma && kvec && v.n <= DT_SKINNY_MAX_N_MMA &&
                (g->c_dtype == DUET_DTYPE_F32 || is_16bit(g->c_dtype))))
        return 0;
    if (f8 ||
        (nvidia && props->capability_major >= 8 && kvec && lowp && v.n <= DT_SKINNY_MAX_N_MMA)) {
        plan->form = DT_SKINNY_KMAJOR_MMA;
        plan->nmax = v.n <= 8 ? 8 : 16;
    } else if (!lowp && v.n <= DT_SKINNY_MAX_N_SIMT && (kmajor || mmajor)) {
        plan->form = kmajor ? DT_SKINNY_KMAJOR : DT_SKINNY_MMAJOR;
        plan->nmax = v.n <= 4 ? 4 : v.n <= 8 ? 8 : 16;
    } else if (nvidia && lowp && kmajor &&
               v.n <= (dt == DUET_DTYPE_I8 ? 8 : DT_SKINNY_MAX_N_SIMT)) {
        plan->form = DT_SKINNY_KMAJOR;
        plan->nmax = v.n <= 4 ? 4 : v.n <= 8 ? 8 : 16;
    } else {
        plan->form = DT_SKINNY_NONE;
        return 0;
    }

    const int acc = dt == DUET_DTYPE_F64 ? 8 : 4;
    plan->threads = 4 * warp;
    if (plan->form == DT_SKINNY_MMAJOR) {
        const int lv = (int)(8 / elem); /* sk_mmajor_shape's LV: 8 bytes a lane */
        plan->block_rows = lv * warp;
        plan->kchunk = 64;
        plan->a_vec = aligned(v.a.base, v.a.cs, v.a.bs, v.batch, elem, (size_t)lv * elem);
    } else {
        plan->block_rows = 2 * warp;
        const int mma = plan->form == DT_SKINNY_KMAJOR_MMA;
        plan->kchunk = kmajor_chunk(elem, mma, plan->nmax);
        plan->kwindow = kmajor_window(elem, mma, mma ? (int)elem : acc, plan->nmax);
        plan->a_vec = kvec;
        plan->b_vec = v.b.rs == 1 && aligned(v.b.base, v.b.cs, v.b.bs, v.batch, elem, 16);
        plan->b_nvec = v.b.cs == 1 && aligned(v.b.base, v.b.rs, v.b.bs, v.batch, elem, 16);
    }

    /* Split K into slices of whole chunks: K-major as many as keep the grid within one wave,
     * M-major as many as bring it to its target. */
    const int64_t blocks = cdiv(v.m, plan->block_rows) * v.batch;
    const int64_t units = props->compute_units > 0 ? props->compute_units : 1;
    const int mmajor_form = plan->form == DT_SKINNY_MMAJOR;
    const int64_t kmajor_blocks = warp == 64 ? SKINNY_KMAJOR_BLOCKS_PER_UNIT_WAVE64 : SKINNY_KMAJOR_BLOCKS_PER_UNIT;
    const int64_t target = (mmajor_form ? SKINNY_MMAJOR_BLOCKS_PER_UNIT : kmajor_blocks) * units;
    int64_t split = blocks >= target ? 1 : mmajor_form ? cdiv(target, blocks) : target / blocks;
    const int64_t chunks = cdiv(v.k, plan->kchunk);
    if (split > chunks) split = chunks;
    plan->kslice = cdiv(chunks, split) * plan->kchunk;
    plan->split = (int)cdiv(v.k, plan->kslice);
    if (plan->kwindow > plan->kslice) plan->kwindow = plan->kslice;
    plan->workspace =
        plan->split > 1 ? (size_t)plan->split * (size_t)v.batch * (size_t)v.m * (size_t)v.n * (size_t)acc : 0;
    return 1;
}

int dt_gemm_tile_split(int64_t m, int64_t n, int64_t k, int64_t bm, int64_t bn, int64_t bk,
                       size_t elem, size_t acc, int64_t slots, int64_t *kslice)
{
    *kslice = k;
    if (m < 1 || n < 1 || k < 1 || bm < 1 || bn < 1 || bk < 1 || slots < 2) return 1;
    const int64_t tiles = cdiv(m, bm) * cdiv(n, bn);
    if (2 * tiles >= slots) return 1;
    const int64_t ktiles = cdiv(k, bk);
    int64_t split = slots / tiles;
    if (split > ktiles / DT_TILE_SPLIT_MIN_KTILES) split = ktiles / DT_TILE_SPLIT_MIN_KTILES;
    /* 2 x split x m x n x acc <= (m + n) x k x elem / 2, in doubles (no overflow). */
    const double operands = (double)(m + n) * (double)k * (double)elem;
    const double per_slice = 4.0 * (double)m * (double)n * (double)acc;
    const int64_t by_traffic = (int64_t)(operands / per_slice);
    if (split > by_traffic) split = by_traffic;
    if (split < 2) return 1;
    const int64_t ks = cdiv(ktiles, split) * bk;
    split = cdiv(k, ks);
    if (split < 2) return 1;
    *kslice = ks;
    return (int)split;
}

/* ---- the GPU backends' plan (gemm_plan.h: dt_gemm_plan_gpu) ---------------------------------- */

static size_t round256(size_t bytes) { return (bytes + 255) & ~(size_t)255; }
/* k rounded up to whole 16-byte rows of elem-byte elements (k >= 1). */
static int64_t ld16(int64_t k, size_t elem)
{
    const int64_t per = 16 / (int64_t)elem;
    return cdiv(k < 1 ? 1 : k, per) * per;
}

dt_operand_class dt_operand_class_of(const void *base, int64_t sx, int64_t sk, int64_t bs,
                                     int64_t batch, size_t elem)
{
    if (sk == 1 && aligned(base, sx, bs, batch, elem, 16)) return DT_OPERAND_K16;
    if (sx == 1 && aligned(base, sk, bs, batch, elem, 16)) return DT_OPERAND_X16;
    return DT_OPERAND_ANY;
}

/* Whether the Hopper kernels take g as its operands lie (gemm_wgmma.cu launches what this
 * accepts): capability 9.0 with the shared memory of a block; bf16/f16 -> same or f32, TF32 and
 * 3xTF32 -> f32, i8 -> i32, 8-bit floats (e4m3, e5m2, mixed) -> f32, f16 or bf16; int32
 * coordinates; C's rows contiguous; A and B K-major, or for 16-bit inputs also MN-major, on
 * TMA's 16-byte boundaries; and enough tiles to fill DT_WGMMA_MIN_WAVE_QUARTERS quarters of the
 * SMs (unless hopper_all, or for 8-bit floats, which no other family multiplies). */
static int wgmma_covers(const dt_gemm *g, const dt_gemm_target *t)
{
    const duet_device_props *props = t->props;
    if (!t->wgmma || t->portable || props->capability_major != 9 || props->capability_minor != 0)
        return 0;
    if (props->shared_mem_per_block_optin < t->wgmma_shared) return 0;
    const int x3 = g->dtype == DUET_DTYPE_F32 && g->math == DUET_MATH_3XTF32;
    switch (g->dtype) {
    case DUET_DTYPE_BF16:
    case DUET_DTYPE_F16:
        if (g->c_dtype != g->dtype && g->c_dtype != DUET_DTYPE_F32) return 0;
        break;
    case DUET_DTYPE_F32:
        if (g->c_dtype != DUET_DTYPE_F32 || g->math == DUET_MATH_DEFAULT) return 0;
        if (x3 && props->shared_mem_per_block_optin < t->wgmma_x3_shared) return 0;
        break;
    case DUET_DTYPE_I8:
        if (g->c_dtype != DUET_DTYPE_I32) return 0;
        break;
    case DUET_DTYPE_F8E4M3:
    case DUET_DTYPE_F8E5M2:
        if (!is_f8(g->b_dtype) || (g->c_dtype != DUET_DTYPE_F32 && !is_16bit(g->c_dtype))) return 0;
        break;
    default: return 0;
    }
    const int64_t m = g->m, n = g->n, k = g->k, batch = g->batch;
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0;
    if (m > INT32_MAX - DT_WGMMA_BN || n > INT32_MAX - DT_WGMMA_BN || k > INT32_MAX - 256 ||
        batch > INT32_MAX)
        return 0;
    if (g->c.cs != 1) return 0;
    const size_t elem = duet_dtype_size(g->dtype);
    const int a_mn = g->a.cs != 1, b_mn = g->b.rs != 1;
    if ((a_mn && (elem != 2 || g->a.rs != 1)) || (b_mn && (elem != 2 || g->b.cs != 1))) return 0;
    const int64_t lda = a_mn ? g->a.cs : g->a.rs, ldb = b_mn ? g->b.rs : g->b.cs;
    if (!aligned(g->a.base, lda, g->a.bs, batch, elem, 16) ||
        !aligned(g->b.base, ldb, g->b.bs, batch, elem, 16))
        return 0;
    const int64_t sms = props->compute_units > 0 ? props->compute_units : 1;
    const int64_t tiles =
        cdiv(m, DT_WGMMA_BM) * cdiv(n, x3 ? DT_WGMMA_X3_BN : DT_WGMMA_BN) * batch;
    return t->hopper_all || is_f8(g->dtype) ||
           tiles * 4 >= (int64_t)DT_WGMMA_MIN_WAVE_QUARTERS * sms;
}

/* A base on 16-byte boundaries standing for a packed copy: only its alignment is read. */
static void *packed_base(void)
{
    static _Alignas(16) const unsigned char probe[16] = {0};
    return (void *)probe;
}

/* g with A (B) replaced by a K-major copy with rows of ld elements. */
static void as_packed(const dt_gemm *g, int pack_a, int pack_b, int64_t ld, dt_gemm *out)
{
    *out = *g;
    if (pack_a) {
        out->a.base = packed_base();
        out->a.rs = ld;
        out->a.cs = 1;
        out->a.bs = g->batch > 1 && g->a.bs != 0 ? g->m * ld : 0;
    }
    if (pack_b) {
        out->b.base = packed_base();
        out->b.rs = 1;
        out->b.cs = ld;
        out->b.bs = g->batch > 1 && g->b.bs != 0 ? g->n * ld : 0;
    }
}

/* Bytes of a packed copy of an operand of `rows` rows (batched unless its batch stride is 0). */
static size_t packed_bytes(const dt_gemm *g, int64_t rows, int64_t bs, int64_t ld, size_t elem)
{
    const int64_t b = g->batch > 1 && bs != 0 ? g->batch : 1;
    return round256((size_t)(b * rows * ld) * elem);
}

/* Whether the device has the matrix instruction for g's inputs (gemm_tc.cuh's atoms). */
static int tc_device_has(const dt_gemm *g, const dt_gemm_target *t)
{
    if (t->nvidia) return t->props->capability_major >= 8;
    const char *a = t->props->arch;
    const int gfx94 = strncmp(a, "gfx94", 5) == 0, gfx90a = strncmp(a, "gfx90a", 6) == 0,
              gfx908 = strncmp(a, "gfx908", 6) == 0;
    switch (g->dtype) {
    case DUET_DTYPE_F16:
    case DUET_DTYPE_I8: return gfx908 || gfx90a || gfx94;
    case DUET_DTYPE_BF16: return gfx90a || gfx94;
    default: return 0; /* TF32: exact f32 on AMD */
    }
}

/* The classes of g's A and B (B as n x k). */
static void operand_classes(const dt_gemm *g, size_t elem, dt_operand_class *ca,
                            dt_operand_class *cb)
{
    *ca = dt_operand_class_of(g->a.base, g->a.rs, g->a.cs, g->a.bs, g->batch, elem);
    *cb = dt_operand_class_of(g->b.base, g->b.cs, g->b.rs, g->b.bs, g->batch, elem);
}

/* plan runs `family` on K-major copies of A (pack_a) and/or B (pack_b), rows of ld elements,
 * A's copy first in the workspace. */
static void on_copies(dt_gemm_gpu_plan *plan, dt_gemm_family family, int pack_a, int pack_b,
                      int64_t ld, size_t a_bytes, size_t b_bytes, const char *rule)
{
    plan->family = family;
    plan->pack_a = pack_a;
    plan->pack_b = pack_b;
    plan->ld = ld;
    plan->a_bytes = a_bytes;
    plan->pack_bytes = a_bytes + b_bytes;
    plan->rule = rule;
}

/* Whether the swizzled kernel copies an operand of class c with cp.async as it lies: 16-bit
 * inputs in 16-byte runs along k or along m/n, TF32 and i8 along k only. */
static int tcs_takes(const dt_gemm *g, dt_operand_class c)
{
    return is_16bit(g->dtype) ? c != DT_OPERAND_ANY : c == DT_OPERAND_K16;
}

/* Whether the swizzled kernel takes both of g's operands as they lie. */
static int tcs_covers(const dt_gemm *g, size_t elem)
{
    dt_operand_class ca, cb;
    operand_classes(g, elem, &ca, &cb);
    return g->k >= 1 && tcs_takes(g, ca) && tcs_takes(g, cb);
}

/* The swizzled kernel's split-K (dt_gemm_tile_split on its tiles, with the blocks its shared
 * memory keeps resident); batches are not split. */
static void tcs_split(const dt_gemm *g, const dt_gemm_target *t, size_t elem,
                      dt_gemm_gpu_plan *plan)
{
    plan->split = 1;
    plan->kslice = g->k;
    plan->split_bytes = 0;
    if (g->batch > 1) return;
    const duet_device_props *props = t->props;
    const int64_t per_unit = t->tcs_shared > 0 && props->shared_mem_per_block_optin >= t->tcs_shared
                                 ? (int64_t)(props->shared_mem_per_block_optin / t->tcs_shared)
                                 : 1;
    const int64_t slots = per_unit * (props->compute_units > 0 ? props->compute_units : 1);
    int64_t kslice;
    const int split = dt_gemm_tile_split(g->m, g->n, g->k, DT_TCS_BM, DT_TCS_BN,
                                         DT_TCS_KBYTES / (int64_t)elem, elem, 4, slots, &kslice);
    if (split < 2) return;
    plan->split = split;
    plan->kslice = kslice;
    plan->split_bytes = (size_t)split * (size_t)g->m * (size_t)g->n * 4u;
}

/* The small-problem rule's measure (gemm_plan.h, DT_SMALL_STEPS); INT64_MAX where the rule is
 * off or does not apply (AMD, empty problems). */
static int64_t small_cost(const dt_gemm *g, const dt_gemm_target *t)
{
    if (!t->nvidia || !t->small || g->m < 1 || g->n < 1 || g->k < 1) return INT64_MAX;
    const int64_t units = t->props->compute_units > 0 ? t->props->compute_units : 1;
    const int64_t blocks = cdiv(g->m, DT_SMALL_TILE) * cdiv(g->n, DT_SMALL_TILE) * g->batch;
    return cdiv(blocks, DT_SMALL_BLOCKS_PER_UNIT * units) * cdiv(g->k, DT_SMALL_BK);
}

/* The small tensor-core rule's measure (gemm_plan.h, DT_TC_SMALL_STEPS) and its cluster
 * split (*split blocks of *kslice); INT64_MAX where the kernel does not take g. */
static int64_t tc_small_cost(const dt_gemm *g, const dt_gemm_target *t, int *split, int64_t *kslice)
{
    *split = 1;
    *kslice = g->k;
    if (!t->nvidia || !t->small || !t->tc_small || t->props->capability_major < 8) return INT64_MAX;
    if (!is_16bit(g->dtype) && g->dtype != DUET_DTYPE_I8) return INT64_MAX;
    if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1) return INT64_MAX;
    /* Beyond these the measure is far past any bound (and int64 arithmetic stays exact). */
    if (g->m > INT32_MAX || g->n > INT32_MAX || g->k > INT32_MAX || g->batch > INT32_MAX)
        return INT64_MAX;
    const int64_t tiles_mn = cdiv(g->m, DT_TC_SMALL_TILE) * cdiv(g->n, DT_TC_SMALL_TILE);
    if (tiles_mn > INT32_MAX / g->batch) return INT64_MAX;
    const int64_t tiles = tiles_mn * g->batch;
    const int64_t bk = DT_TC_SMALL_KBYTES / (int64_t)duet_dtype_size(g->dtype);
    const int64_t ktiles = cdiv(g->k, bk);
    const int64_t units = t->props->compute_units > 0 ? t->props->compute_units : 1;
    const int64_t slots = DT_TC_SMALL_BLOCKS_PER_UNIT * units;
    int64_t s = 1;
    if (t->props->capability_major >= 9 && !t->portable && tiles < slots) {
        s = slots / tiles;
        if (s > DT_TC_SMALL_MAX_SPLIT) s = DT_TC_SMALL_MAX_SPLIT;
        if (s > ktiles) s = ktiles;
    }
    const int64_t ks = cdiv(ktiles, s) * bk;
    s = cdiv(g->k, ks);
    if (s > 1) {
        *split = (int)s;
        *kslice = ks;
    }
    return cdiv(tiles * s, slots) * cdiv(ks < g->k ? ks : g->k, bk);
}

/* Plans g on the small tensor-core kernel when its measure is within bound. */
static int tc_small_rule(const dt_gemm *g, const dt_gemm_target *t, int64_t bound,
                         dt_gemm_gpu_plan *plan)
{
    int split;
    int64_t kslice;
    if (tc_small_cost(g, t, &split, &kslice) > bound) return 0;
    plan->family = DT_GEMM_TC_SMALL;
    plan->split = split;
    plan->kslice = kslice;
    plan->rule = "small problem on tensor cores: one launch, k split over a cluster";
    return 1;
}

/* The compact small-problem kernel's measure (gemm_plan.h, DT_TINY_STEPS) and its tile side
 * (*tile); INT64_MAX where the rule is off or g is out of its reach. */
static int64_t tiny_cost(const dt_gemm *g, const dt_gemm_target *t, int *tile)
{
    *tile = 0;
    /* DUET_GEMM_HOPPER_ALL puts wgmma ahead of it (that knob's purpose). */
    if (!t->nvidia || !t->small || !t->tiny || t->hopper_all) return INT64_MAX;
    if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1) return INT64_MAX;
    if (g->m > INT32_MAX || g->n > INT32_MAX || g->k > INT32_MAX || g->batch > INT32_MAX)
        return INT64_MAX;
    switch (g->dtype) {
    case DUET_DTYPE_F32:
    case DUET_DTYPE_F64:
    case DUET_DTYPE_F16:
    case DUET_DTYPE_BF16:
    case DUET_DTYPE_I8:
    case DUET_DTYPE_I32: break;
    default: return INT64_MAX;
    }
    const int64_t units = t->props->compute_units > 0 ? t->props->compute_units : 1;
    /* The largest micro-tile whose tiles number at least the SMs (else the smallest), or a
     * smaller one where that takes fewer waves (a batch of many tiny matrices, most of a large
     * tile empty). */
    int64_t waves[5] = {0, 0, 0, 0, 0};
    int tm = 1;
    for (int x = 4; x >= 1; x /= 2) {
        const int64_t tiles_mn = cdiv(g->m, 16 * x) * cdiv(g->n, 16 * x);
        if (tiles_mn > INT32_MAX / g->batch) return INT64_MAX;
        const int64_t tiles = tiles_mn * g->batch;
        waves[x] = cdiv(tiles, dt_tiny_blocks_per_unit(x) * units);
        if (tm == 1 && x > 1 && tiles >= units) tm = x;
    }
    for (int x = tm / 2; x >= 1; x /= 2)
        if (waves[x] < waves[tm]) tm = x;
    *tile = 16 * tm;
    return waves[tm] * cdiv(g->k, DT_TINY_BK);
}

/* Puts g on the compact small-problem kernel when its measure is within bound. */
static int tiny_rule(const dt_gemm *g, const dt_gemm_target *t, int64_t bound,
                     dt_gemm_gpu_plan *plan)
{
    int tile;
    if (tiny_cost(g, t, &tile) > bound) return 0;
    plan->family = DT_GEMM_TINY;
    plan->math = DUET_MATH_DEFAULT;
    plan->tile = tile;
    plan->rule = "small problem: compact SIMT kernel in one launch";
    return 1;
}

/* Whether an f16, bf16 or i8 problem runs on the SIMT kernel by the small-problem rule: its
 * cost within `bound` and operands the swizzled kernel would need copied. */
static int small_simt(const dt_gemm *g, const dt_gemm_target *t, int64_t bound)
{
    if (!is_16bit(g->dtype) && g->dtype != DUET_DTYPE_I8) return 0;
    if (small_cost(g, t) > bound) return 0;
    return !(tc_device_has(g, t) && tcs_covers(g, duet_dtype_size(g->dtype)));
}

/* The narrower side of C (after the memory-bound family's transposition it is its n). */
static int64_t narrow_side(const dt_gemm *g) { return g->m < g->n ? g->m : g->n; }

/* Whether f32 with a TF32 or 3xTF32 math mode runs as exact f32 on the f32 tile family before
 * any tensor-core family is tried (DT_EXACT_F32_NARROW): a C at most that narrow, on NVIDIA,
 * outside the portable mode, unless it is TF32 whose operands the swizzled kernel reads as they
 * lie (sm_80+), in one batch (where that kernel splits k) or with k at most
 * DT_EXACT_F32_NARROW_BATCH_K. */
static int exact_f32_first(const dt_gemm *g, const dt_gemm_target *t)
{
    if (g->dtype != DUET_DTYPE_F32 || g->math == DUET_MATH_DEFAULT || !t->nvidia || t->portable ||
        g->m < 1 || g->n < 1 || narrow_side(g) > DT_EXACT_F32_NARROW)
        return 0;
    const int tcs_as_they_lie = g->math == DUET_MATH_TF32 && t->props->capability_major >= 8 &&
                                tcs_covers(g, 4) &&
                                (g->batch == 1 || g->k <= DT_EXACT_F32_NARROW_BATCH_K);
    return !tcs_as_they_lie;
}

/* The low-precision inputs (f16, bf16, i8) and f32 with a TF32 math mode, in order:
 *   0. NVIDIA: f32 (TF32, 3xTF32) with a C at most DT_EXACT_F32_NARROW wide as exact f32;
 *   1. Hopper: 3xTF32 on a split B; wgmma as the operands lie; wgmma on K-major copies;
 *      3xTF32 that wgmma does not take as exact f32;
 *   2. NVIDIA sm_80+: the swizzled kernel on K-major copies of the operands it cannot copy
 *      as they lie (at every size: the register-staged kernel's fixed cost, tens of
 *      microseconds a call on the H200, is more than the copies'), split-K where it pays;
 *   3. as they lie: the swizzled kernel (split where it pays), else the register-staged one
 *      where the device has the instruction, else SIMT (f16, bf16, i8) or exact f32 (TF32). */
static void plan_lowp(const dt_gemm *g, const dt_gemm_target *t, dt_gemm_gpu_plan *plan)
{
    const size_t elem = duet_dtype_size(g->dtype);
    const size_t room = t->workspace_room;
    const int x3 = g->dtype == DUET_DTYPE_F32 && g->math == DUET_MATH_3XTF32;
    dt_gemm p;

    if (exact_f32_first(g, t)) {
        plan->family = DT_GEMM_FAST;
        plan->math = DUET_MATH_DEFAULT;
        plan->rule = "TF32 with a narrow C: exact f32 in one launch";
        return;
    }
    if (x3 && !t->x3_inkernel) {
        const int64_t ldk = ld16(g->k, 4);
        as_packed(g, 0, 1, ldk, &p);
        int pack_a = 0;
        int ok = wgmma_covers(&p, t);
        if (!ok) {
            as_packed(g, 1, 1, ldk, &p);
            ok = wgmma_covers(&p, t);
            pack_a = 1;
        }
        const size_t a_bytes = pack_a ? packed_bytes(g, g->m, g->a.bs, ldk, 4) : 0;
        const size_t part = packed_bytes(g, g->n, g->b.bs, ldk, 4);
        if (ok && a_bytes + 2 * part <= room) {
            plan->family = DT_GEMM_WGMMA_X3;
            plan->pack_a = pack_a;
            plan->ld = ldk;
            plan->a_bytes = a_bytes;
            plan->pack_bytes = a_bytes + 2 * part;
            plan->rule = "3xTF32 on Hopper: B split once into TF32 parts";
            return;
        }
    }
    if (wgmma_covers(g, t)) {
        plan->family = DT_GEMM_WGMMA;
        plan->rule = "Hopper wgmma on the operands as they lie";
        return;
    }
    /* A small problem whose operands would need copies (DT_TC_SMALL_STEPS): one launch on the
     * small tensor-core kernel, unless the SIMT kernel's one-launch rule takes it. */
    if (!x3 && !small_simt(g, t, DT_SMALL_STEPS) && !(tc_device_has(g, t) && tcs_covers(g, elem)) &&
        tc_small_rule(g, t, g->dtype == DUET_DTYPE_I8 ? DT_TC_SMALL_STEPS_I8 : DT_TC_SMALL_STEPS,
                      plan))
        return;
    if (g->k >= 1) {
        const int64_t ld = ld16(g->k, elem);
        as_packed(g, 1, 1, ld, &p);
        const size_t a_bytes = packed_bytes(g, g->m, g->a.bs, ld, elem);
        const size_t b_bytes = packed_bytes(g, g->n, g->b.bs, ld, elem);
        if (wgmma_covers(&p, t) && a_bytes + b_bytes <= room) {
            on_copies(plan, DT_GEMM_WGMMA, 1, 1, ld, a_bytes, b_bytes,
                      "Hopper wgmma on K-major copies (alignment or layout)");
            return;
        }
    }

    if (x3 && t->nvidia && t->wgmma && !t->portable && t->props->capability_major == 9) {
        /* Hopper without wgmma for the problem: the mma.sync kernel's three TF32 products
         * cost more than one exact f32 product on the SIMT tiles. */
        plan->family = DT_GEMM_FAST;
        plan->math = DUET_MATH_DEFAULT;
        plan->rule = "3xTF32 below the Hopper kernels' size: exact f32";
        return;
    }
    if (g->dtype == DUET_DTYPE_F32 && !x3 && small_cost(g, t) <= DT_SMALL_STEPS_TF32) {
        plan->family = DT_GEMM_FAST;
        plan->math = DUET_MATH_DEFAULT;
        plan->rule = "small TF32 problem: exact f32 in one launch";
        return;
    }
    if (small_simt(g, t, DT_SMALL_STEPS)) {
        plan->family = DT_GEMM_LOWP_SIMT;
        plan->rule = "small problem that needs copies: SIMT in one launch";
        return;
    }
    const int tc = tc_device_has(g, t);
    const int swizzled = t->nvidia && tc && !x3; /* the swizzled kernel exists for g's dtype */
    const int covered = swizzled && tcs_covers(g, elem);
    if (swizzled && !covered && !t->no_pack && g->m >= 1 && g->n >= 1 && g->k >= 1) {
        dt_operand_class ca, cb;
        operand_classes(g, elem, &ca, &cb);
        const int pack_a = !tcs_takes(g, ca), pack_b = !tcs_takes(g, cb);
        const int64_t ld = ld16(g->k, elem);
        const size_t a_bytes = pack_a ? packed_bytes(g, g->m, g->a.bs, ld, elem) : 0;
        const size_t b_bytes = pack_b ? packed_bytes(g, g->n, g->b.bs, ld, elem) : 0;
        dt_gemm_gpu_plan q = *plan;
        tcs_split(g, t, elem, &q);
        if (a_bytes + b_bytes + q.split_bytes <= room) {
            *plan = q;
            on_copies(plan, DT_GEMM_TCS, pack_a, pack_b, ld, a_bytes, b_bytes,
                      "swizzled mma.sync on K-major copies");
            return;
        }
    }
    if (covered) {
        plan->family = DT_GEMM_TCS;
        tcs_split(g, t, elem, plan);
        if (plan->split_bytes > room) {
            plan->split = 1;
            plan->kslice = g->k;
            plan->split_bytes = 0;
        }
        plan->rule = "swizzled mma.sync on the operands as they lie";
        return;
    }
    if (tc) {
        plan->family = DT_GEMM_TC;
        plan->rule = "register-staged tensor-core kernel";
        return;
    }
    if (g->dtype == DUET_DTYPE_F32) {
        plan->family = DT_GEMM_FAST;
        plan->math = DUET_MATH_DEFAULT;
        plan->rule = "no TF32 instructions: exact f32";
        return;
    }
    plan->family = DT_GEMM_LOWP_SIMT;
    plan->rule = "no matrix instructions for the dtype: SIMT";
}

/* plan runs on the memory-bound family as plan->skinny says, in one slice if the split's
 * partial sums do not fit in the workspace (one slice needs none). */
static void skinny_in_room(const dt_gemm *g, const dt_gemm_target *t, dt_gemm_gpu_plan *plan)
{
    dt_skinny_plan *s = &plan->skinny;
    if (s->split > 1 && s->workspace > t->workspace_room) {
        s->split = 1;
        s->kslice = cdiv(g->k, s->kchunk) * s->kchunk;
        s->workspace = 0;
    }
    plan->family = DT_GEMM_SKINNY;
    plan->math = DUET_MATH_DEFAULT;
}

/* gemm_plan.h. */
int dt_gemm_wgmma_takes_block_scales(const dt_gemm *g)
{
    const dt_scale_grid *a = &g->sa, *b = &g->sb;
    if (a->p && (a->cshift != 7 || a->rshift < 0 || a->rshift > 30)) return 0;
    if (b->p && (b->cshift != 7 || (b->rshift != 7 && b->rs != 0))) return 0;
    return 1;
}

/* 8-bit float A and B: the memory-bound family's mma.sync form for a narrow C where it takes A
 * (K-major on 16-byte boundaries, sm_89+), else the Hopper kernel with FP8 instructions, which read
 * K-major operands only, on the operands as they lie or on K-major copies of those that are not (or
 * are off TMA's 16-byte boundaries), at any size. No other family multiplies them: without the
 * Hopper kernel (or its workspace) the plan has no family, and the common layer decodes A and B to
 * 16 bits for the 16-bit plan. */
static void plan_f8(const dt_gemm *g, const dt_gemm_target *t, dt_gemm_gpu_plan *plan)
{
    const int blocked = g->sa.p || g->sb.p;
    /* Block scales: the narrow kernel multiplies each step's sums (64 values of k, inside one
     * block) by the row's and the column's scales, any grid; the Hopper kernel each stage's
     * sums (128 values of k) by A's scale of the row and B's of the column, B's one per 128
     * columns (a tile half) or per tensor, with the default math's promotion. */
    const int k128 = (!g->sa.p || g->sa.cshift == 7) && (!g->sb.p || g->sb.cshift == 7);
    if (k128 && dt_gemm_plan_skinny(g, t->props, &plan->skinny)) {
        skinny_in_room(g, t, plan);
        plan->rule = blocked ? "narrow C of block-scaled 8-bit floats: memory-bound mma.sync, A "
                               "read once"
                             : "narrow C of 8-bit floats: memory-bound mma.sync, A read once";
        return;
    }
    if (blocked && !dt_gemm_wgmma_takes_block_scales(g)) return;
    plan->math = blocked ? DUET_MATH_DEFAULT : g->math; /* the kernel does DEFAULT or FAST_ACCUM */
    if (wgmma_covers(g, t)) {
        plan->family = DT_GEMM_WGMMA;
        plan->rule = "Hopper FP8 wgmma on the operands as they lie";
        return;
    }
    if (g->k < 1) return;
    const int64_t ld = ld16(g->k, 1);
    dt_operand_class ca, cb;
    operand_classes(g, 1, &ca, &cb);
    const int pack_a = ca != DT_OPERAND_K16, pack_b = cb != DT_OPERAND_K16;
    dt_gemm p;
    as_packed(g, pack_a, pack_b, ld, &p);
    const size_t a_bytes = pack_a ? packed_bytes(g, g->m, g->a.bs, ld, 1) : 0;
    const size_t b_bytes = pack_b ? packed_bytes(g, g->n, g->b.bs, ld, 1) : 0;
    if (wgmma_covers(&p, t) && a_bytes + b_bytes <= t->workspace_room)
        on_copies(plan, DT_GEMM_WGMMA, pack_a, pack_b, ld, a_bytes, b_bytes,
                  "Hopper FP8 wgmma on K-major copies (alignment or layout)");
}

/* Whether g's k fits in one step of the SIMT tile kernels (DT_TINY_K), on NVIDIA with the
 * one-launch rules on: C is then an outer product of thin operands, bound by writing C. f32
 * with default math and i32 always take the rule (their tile family would run them anyway),
 * f64 unless C is at most 4 wide (the memory-bound family's 4-column forms ran those as fast
 * or faster); inputs with a tensor-core family only up to DT_TINY_K_WAVES waves of 64 x 64
 * tiles, and not where wgmma takes the operands as they lie. */
static int tiny_k(const dt_gemm *g, const dt_gemm_target *t)
{
    if (!t->nvidia || !t->small || g->m < 1 || g->n < 1 || g->k < 1 || g->k > DT_TINY_K) return 0;
    switch (g->dtype) {
    case DUET_DTYPE_F64: return narrow_side(g) > 4;
    case DUET_DTYPE_I32: return 1;
    case DUET_DTYPE_F32:
        if (g->math == DUET_MATH_DEFAULT) return 1;
        break;
    case DUET_DTYPE_F16:
    case DUET_DTYPE_BF16:
    case DUET_DTYPE_I8: break;
    default: return 0;
    }
    return small_cost(g, t) <= DT_TINY_K_WAVES && !wgmma_covers(g, t);
}

void dt_gemm_plan_gpu(const dt_gemm *g, const dt_gemm_target *t, dt_gemm_gpu_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->math = g->math;
    plan->split = 1;
    plan->kslice = g->k;
    if (is_f8(g->dtype)) {
        plan_f8(g, t, plan);
        return;
    }
    if (t->tc_small == 2 && tc_small_rule(g, t, DT_TC_SMALL_STEPS_ALL, plan)) return;
    if (tiny_rule(g, t, t->tiny == 2 ? DT_TINY_STEPS_ALL : DT_TINY_STEPS, plan)) return;
    if (tiny_k(g, t)) {
        plan->math = DUET_MATH_DEFAULT;
        if (g->dtype == DUET_DTYPE_F16 || g->dtype == DUET_DTYPE_BF16 ||
            g->dtype == DUET_DTYPE_I8) {
            plan->family = DT_GEMM_LOWP_SIMT;
        } else {
            plan->family = DT_GEMM_FAST;
        }
        plan->rule = "k of one SIMT step: an outer product, in one launch on SIMT tiles";
        return;
    }
    /* A narrow C (the narrow side <= 16) is a matter of reading A once; a tiny one on the
     * SIMT K-major or M-major form of 16-bit or i8 inputs runs faster on the small-problem
     * rule's one launch (8 x 4080 x 15 f16: 7.4 us against 10.4), up to DT_SMALL_STEPS_NARROW. */
    const int skinny = dt_gemm_plan_skinny(g, t->props, &plan->skinny);
    if (skinny &&
        (plan->skinny.form == DT_SKINNY_KMAJOR || plan->skinny.form == DT_SKINNY_MMAJOR) &&
        small_simt(g, t, DT_SMALL_STEPS_NARROW)) {
        memset(&plan->skinny, 0, sizeof plan->skinny);
        plan->family = DT_GEMM_LOWP_SIMT;
        plan->rule = "small problem that needs copies: SIMT in one launch";
        return;
    }
    if (skinny) {
        skinny_in_room(g, t, plan);
        plan->rule = "narrow C: memory-bound, A read once";
        return;
    }
    switch (g->dtype) {
    case DUET_DTYPE_F16:
    case DUET_DTYPE_BF16:
    case DUET_DTYPE_I8: plan_lowp(g, t, plan); return;
    case DUET_DTYPE_F32:
        if (g->math != DUET_MATH_DEFAULT) {
            plan_lowp(g, t, plan);
            return;
        }
        break;
    case DUET_DTYPE_F64:
    case DUET_DTYPE_I32: break;
    default: plan->family = DT_GEMM_FAMILY_NONE; return;
    }
    plan->family = DT_GEMM_FAST;
    plan->rule = "f32, f64, i32: the tuning table's tiles";
}

/* ---- duet_gemm_ex's epilogue in the GEMM's store ---- */

static int f32_math_dtype(duet_dtype d)
{
    return d == DUET_DTYPE_F32 || d == DUET_DTYPE_F16 || d == DUET_DTYPE_BF16;
}

int dt_gemm_epilogue_fuses(const dt_gemm *g, const dt_gemm_target *t, dt_gemm_gpu_plan *plan)
{
    const dt_epilogue *e = g->epi;
    dt_gemm v = *g;
    v.epi = NULL;
    /* The plain kernels' C of D's width: the planner's coverage rules are about them. */
    v.c_dtype = is_f8(g->dtype)                              ? g->c_dtype
                : is_16bit(g->dtype) && is_16bit(g->c_dtype) ? g->dtype
                                                             : DUET_DTYPE_F32;
    dt_gemm_plan_gpu(&v, t, plan);
    if (!e) return 0;
    /* A split's reduction (the memory-bound family's, and the swizzled tensor-core kernel's,
     * which is the same kernel) reads the partial sums once and can write D through every step
     * of the pass, with any operands it takes. */
    if (plan->family == DT_GEMM_SKINNY) return plan->skinny.split > 1 && !e->t.on && g->beta == 0.0;
    if (plan->family == DT_GEMM_TCS)
        return plan->split > 1 && g->batch <= 1 && !e->t.on && g->beta == 0.0;
    if (plan->family != DT_GEMM_WGMMA) return 0;
    const int inputs = is_16bit(g->dtype) || is_f8(g->dtype) ||
                       (g->dtype == DUET_DTYPE_F32 && g->math == DUET_MATH_TF32);
    if (!inputs || plan->math != g->math || e->math != DUET_DTYPE_F32 || e->t.on ||
        g->beta != 0.0 || !f32_math_dtype(g->c_dtype) || g->c.cs != 1)
        return 0;
    const dt_epi_operand *ops[6] = {&e->c,         &e->bias,     &e->row_scale,
                                    &e->col_scale, &e->residual, &e->aux};
    for (int i = 0; i < 6; i++)
        if (ops[i]->on && !f32_math_dtype(ops[i]->dtype)) return 0;
    if ((e->row_scale.on && e->row_scale.v.cs != 0) ||
        (e->col_scale.on && e->col_scale.v.rs != 0) ||
        (e->bias.on && e->bias.v.rs != 0 && e->bias.v.cs != 0))
        return 0;
    return 1;
}
