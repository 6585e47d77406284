/* gemm_plan.c - GEMM planning in plain C: the memory-bound family's plan and the tile families'
 * split-K (gemm_plan.h). */
#include "gemm_plan.h"

#include <stdint.h>
#include <string.h>

/* The grid the split aims at, in blocks of four warps per SM or compute unit. K-major: one
 * wave of the three blocks its launch bound keeps resident (enough loads in flight, no second,
 * partial wave). M-major: at least four (its blocks are light, and more of them in flight
 * measured faster than one wave of three). */
#define SKINNY_KMAJOR_BLOCKS_PER_UNIT 3
#define SKINNY_MMAJOR_BLOCKS_PER_UNIT 4

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

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
}

/* The K-major kernels' chunk (the k of A a lane holds at once: four steps of 16 bytes, two
 * for SIMT with 16 columns) and window (the k of B a block keeps in 32 KiB of shared memory,
 * bs bytes an element, a whole number of chunks), mirroring kernels/gemm_skinny.cuh's
 * sk_kmajor_shape. */
static int64_t kmajor_chunk(size_t elem, int mma, int nmax)
{
    return (!mma && nmax >= 16 ? 2 : 4) * 4 * (16 / (int64_t)elem);
}
static int64_t kmajor_window(size_t elem, int mma, int bs, int nmax)
{
    const int64_t ch = kmajor_chunk(elem, mma, nmax);
    return 32768 / ((int64_t)nmax * bs) / ch * ch;
}

int dt_gemm_plan_skinny(const dt_gemm *g, const duet_device_props *props, dt_skinny_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1) return 0;
    const duet_dtype dt = g->dtype;
    const int lowp = dt == DUET_DTYPE_F16 || dt == DUET_DTYPE_BF16 || dt == DUET_DTYPE_I8;
    if (!lowp && dt != DUET_DTYPE_F32 && dt != DUET_DTYPE_F64 && dt != DUET_DTYPE_I32) return 0;
    /* TF32 and 3xTF32 keep the tensor-core families (see below). */
    if (g->math != DUET_MATH_DEFAULT) return 0;

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
     * - the SIMT forms for f32, f64 and i32 with at most 16 columns: n multiply-adds per
     *   element of A stay within the FMA rate at 4 and 8 bytes an element.
     * 16-bit inputs otherwise (SIMT: the FMA rate, not memory, would bound them), TF32 and
     * 3xTF32 keep the tile families. */
    if (nvidia && props->capability_major >= 8 && kvec && lowp && v.n <= DT_SKINNY_MAX_N_MMA) {
        plan->form = DT_SKINNY_KMAJOR_MMA;
        plan->nmax = v.n <= 8 ? 8 : 16;
    } else if (!lowp && v.n <= DT_SKINNY_MAX_N_SIMT && (kmajor || mmajor)) {
        plan->form = kmajor ? DT_SKINNY_KMAJOR : DT_SKINNY_MMAJOR;
        plan->nmax = v.n <= 4 ? 4 : v.n <= 8 ? 8 : 16;
    } else {
        plan->form = DT_SKINNY_NONE;
        return 0;
    }

    const int acc = dt == DUET_DTYPE_F64 ? 8 : 4;
    plan->threads = 4 * warp;
    if (plan->form == DT_SKINNY_MMAJOR) {
        const int lv = elem >= 4 ? (int)(8 / elem) : (int)(4 / elem);
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
    }

    /* Split K into slices of whole chunks: K-major as many as keep the grid within one wave,
     * M-major as many as bring it to its target. */
    const int64_t blocks = cdiv(v.m, plan->block_rows) * v.batch;
    const int64_t units = props->compute_units > 0 ? props->compute_units : 1;
    const int mmajor_form = plan->form == DT_SKINNY_MMAJOR;
    const int64_t target = (mmajor_form ? SKINNY_MMAJOR_BLOCKS_PER_UNIT : SKINNY_KMAJOR_BLOCKS_PER_UNIT) * units;
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
