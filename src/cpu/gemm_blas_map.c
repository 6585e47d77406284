/* gemm_blas_map.c - which f32/f64 gemms a row-major CBLAS call can express, and how. */
#include "cpu_internal.h"

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* A rows x cols operand with strides (rs, cs) as a row-major CBLAS operand: stored as it is
 * (trans 0, element (i, j) at i * ld + j) or as its transpose (trans 1, at j * ld + i). The
 * BLAS asks ld >= max(1, stored row length) even where it never steps by ld (one stored row),
 * and there the view's stride may be anything: ld is then the least value it accepts. */
static int map_operand(int64_t rs, int64_t cs, int64_t rows, int64_t cols, int64_t int_max,
                       int *trans, int64_t *ld)
{
    if (cs == 1 && (rows == 1 || rs >= cols)) {
        *trans = 0;
        *ld = rows == 1 ? max64(cols, 1) : rs;
    } else if (rs == 1 && (cols == 1 || cs >= rows)) {
        *trans = 1;
        *ld = cols == 1 ? max64(rows, 1) : cs;
    } else {
        return 0;
    }
    return *ld <= int_max;
}

/* The elements [lo, hi) a batch of count rows x cols matrices spans from its base (strides
 * non-negative, every count >= 1). */
static void span(const dt_view *v, int64_t rows, int64_t cols, int64_t count, size_t elem,
                 uintptr_t *lo, uintptr_t *hi)
{
    const uint64_t last = (uint64_t)(count - 1) * (uint64_t)v->bs +
                          (uint64_t)(rows - 1) * (uint64_t)v->rs +
                          (uint64_t)(cols - 1) * (uint64_t)v->cs;
    *lo = (uintptr_t)v->base;
    *hi = *lo + (uintptr_t)((last + 1) * elem);
}

static int disjoint(uintptr_t lo0, uintptr_t hi0, uintptr_t lo1, uintptr_t hi1)
{
    return hi0 <= lo1 || hi1 <= lo0;
}

int cpu_blas_map(const dt_gemm *g, size_t elem, int64_t int_max, cpu_blas_gemm *call)
{
    const dt_view *const vs[3] = {&g->a, &g->b, &g->c};
    for (int x = 0; x < 3; ++x)
        if (vs[x]->rs < 0 || vs[x]->cs < 0 || vs[x]->bs < 0 || !vs[x]->base) return 0;
    if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1) return 0;
    if (g->m > int_max || g->n > int_max || g->k > int_max) return 0;

    /* C's matrices may not overlap one another, nor A or B: the BLAS takes its operands as
     * distinct arrays, and the batch loop runs the matrices in sequence. */
    uintptr_t clo, chi, lo, hi;
    span(&g->c, g->m, g->n, 1, elem, &clo, &chi);
    const uint64_t one_c = (uint64_t)(chi - clo) / elem;
    if (g->batch > 1 && (uint64_t)g->c.bs < one_c) return 0;
    span(&g->c, g->m, g->n, g->batch, elem, &clo, &chi);
    span(&g->a, g->m, g->k, g->batch, elem, &lo, &hi);
    if (!disjoint(clo, chi, lo, hi)) return 0;
    span(&g->b, g->k, g->n, g->batch, elem, &lo, &hi);
    if (!disjoint(clo, chi, lo, hi)) return 0;

    /* C must be stored by rows; a C stored by columns is C^T = B^T A^T stored by rows. */
    cpu_blas_gemm t;
    int c_trans;
    int64_t ldc;
    if (!map_operand(g->c.rs, g->c.cs, g->m, g->n, int_max, &c_trans, &ldc)) return 0;
    if (!c_trans) {
        t.a = g->a;
        t.b = g->b;
        t.c = g->c;
        t.m = g->m;
        t.n = g->n;
    } else {
        t.a = g->b;
        t.b = g->a;
        t.c = g->c;
        t.a.rs = g->b.cs;
        t.a.cs = g->b.rs;
        t.b.rs = g->a.cs;
        t.b.cs = g->a.rs;
        t.c.rs = g->c.cs;
        t.c.cs = g->c.rs;
        t.m = g->n;
        t.n = g->m;
    }
    t.k = g->k;
    if (!map_operand(t.c.rs, t.c.cs, t.m, t.n, int_max, &c_trans, &t.ldc) || c_trans) return 0;
    if (!map_operand(t.a.rs, t.a.cs, t.m, t.k, int_max, &t.trans_a, &t.lda)) return 0;
    if (!map_operand(t.b.rs, t.b.cs, t.k, t.n, int_max, &t.trans_b, &t.ldb)) return 0;
    *call = t;
    return 1;
}
