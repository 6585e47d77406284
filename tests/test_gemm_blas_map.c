/* test_gemm_blas_map.c - which gemms the cpu backend hands a CBLAS, and how (gemm_blas_map.c). */
#include "harness.h"

#include "cpu/cpu_internal.h"

#include <limits.h>

/*
 * cpu_blas_map is plain C, so it is checked on the host whatever the backend and whether or not
 * a BLAS was found: every call it accepts is run through a row-major gemm written here the way
 * the CBLAS defines it (transposes, leading dimensions) and compared exactly with the same
 * product taken straight from the strided views; every layout a CBLAS cannot express, and
 * every size past the BLAS's integers, must be refused (duet's own kernel then runs).
 */

/* cblas_dgemm(CblasRowMajor, ...) by its definition, integer-valued data (exact sums). */
static void row_major_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                           const double *a, int64_t lda, const double *b, int64_t ldb, double beta,
                           double *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t p = 0; p < k; ++p)
                s +=
                    (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
            double *y = c + i * ldc + j;
            *y = beta == 0 ? alpha * s : alpha * s + beta * *y;
        }
}

/* The product as dt_gemm describes it, element (b, i, j) at b * bs + i * rs + j * cs. */
static void view_gemm(const dt_gemm *g)
{
    for (int64_t x = 0; x < g->batch; ++x)
        for (int64_t i = 0; i < g->m; ++i)
            for (int64_t j = 0; j < g->n; ++j) {
                double s = 0;
                for (int64_t p = 0; p < g->k; ++p)
                    s += ((const double *)g->a.base)[x * g->a.bs + i * g->a.rs + p * g->a.cs] *
                         ((const double *)g->b.base)[x * g->b.bs + p * g->b.rs + j * g->b.cs];
                double *y = (double *)g->c.base + x * g->c.bs + i * g->c.rs + j * g->c.cs;
                *y = g->beta == 0 ? g->alpha * s : g->alpha * s + g->beta * *y;
            }
}

/* One operand's strides for a layout: 0 row-major, 1 column-major, with ld = len + pad. */
static void layout_strides(int col_major, int64_t rows, int64_t cols, int64_t pad, int64_t *rs,
                           int64_t *cs)
{
    *rs = col_major ? 1 : cols + pad;
    *cs = col_major ? rows + pad : 1;
}

static int64_t extent(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    return (rows - 1) * rs + (cols - 1) * cs + 1;
}

/* Every accepted layout gives the product of the views, exactly, C's padding untouched. */
static void test_layouts_compute(void)
{
    static const int64_t dims[] = {1, 2, 3, 7};
    static const int64_t pads[] = {0, 3};
    dt_seed(7);
    int accepted = 0, total = 0;
    for (int lay = 0; lay < 8; ++lay)
        for (size_t im = 0; im < 4; ++im)
            for (size_t in = 0; in < 4; ++in)
                for (size_t ik = 0; ik < 4; ++ik)
                    for (size_t ip = 0; ip < 2; ++ip) {
                        const int64_t m = dims[im], n = dims[in], k = dims[ik], pad = pads[ip];
                        const int64_t batch = 1 + (int64_t)(lay % 3 == 0);
                        dt_gemm g;
                        memset(&g, 0, sizeof g);
                        g.dtype = g.c_dtype = DUET_DTYPE_F64;
                        g.m = m;
                        g.n = n;
                        g.k = k;
                        g.batch = batch;
                        g.alpha = 2;
                        g.beta = lay & 1 ? 0 : -1;
                        layout_strides(lay & 1, m, k, pad, &g.a.rs, &g.a.cs);
                        layout_strides(lay >> 1 & 1, k, n, pad, &g.b.rs, &g.b.cs);
                        layout_strides(lay >> 2 & 1, m, n, pad, &g.c.rs, &g.c.cs);
                        const int64_t ea = extent(m, k, g.a.rs, g.a.cs);
                        const int64_t eb = extent(k, n, g.b.rs, g.b.cs);
                        const int64_t ec = extent(m, n, g.c.rs, g.c.cs);
                        /* A is broadcast (batch stride 0) in the batched cases. */
                        g.a.bs = 0;
                        g.b.bs = eb + 1;
                        g.c.bs = ec + 2;
                        const int64_t na = ea, nb = batch * g.b.bs, nc = batch * g.c.bs;
                        double *a = malloc((size_t)na * sizeof *a);
                        double *b = malloc((size_t)nb * sizeof *b);
                        double *c0 = malloc((size_t)nc * sizeof *c0);
                        double *c1 = malloc((size_t)nc * sizeof *c1);
                        for (int64_t x = 0; x < na; ++x) a[x] = (double)dt_rand_int(-4, 4);
                        for (int64_t x = 0; x < nb; ++x) b[x] = (double)dt_rand_int(-4, 4);
                        for (int64_t x = 0; x < nc; ++x) c0[x] = c1[x] = (double)dt_rand_int(-9, 9);
                        g.a.base = a;
                        g.b.base = b;
                        g.c.base = c0;
                        cpu_blas_gemm call;
                        ++total;
                        if (cpu_blas_map(&g, sizeof(double), INT_MAX, &call)) {
                            ++accepted;
                            for (int64_t x = 0; x < batch; ++x) {
                                /* The call's views are g's (or swapped): rebase on c1. */
                                const double *ab = (const double *)call.a.base + x * call.a.bs;
                                const double *bb = (const double *)call.b.base + x * call.b.bs;
                                double *cb = c1 + x * call.c.bs;
                                DT_CHECK(call.c.base == c0, "C's base moved");
                                row_major_gemm(call.trans_a, call.trans_b, call.m, call.n, call.k,
                                               g.alpha, ab, call.lda, bb, call.ldb, g.beta, cb,
                                               call.ldc);
                            }
                            view_gemm(&g);
                            int same = 1;
                            for (int64_t x = 0; x < nc; ++x) same &= c0[x] == c1[x];
                            DT_CHECK(same,
                                     "layout %d (A %s, B %s, C %s) %lldx%lldx%lld pad %lld batch "
                                     "%lld: the mapped call (ta %d tb %d lda %lld ldb %lld ldc "
                                     "%lld) differs",
                                     lay, lay & 1 ? "col" : "row", lay & 2 ? "col" : "row",
                                     lay & 4 ? "col" : "row", (long long)m, (long long)n,
                                     (long long)k, (long long)pad, (long long)batch, call.trans_a,
                                     call.trans_b, (long long)call.lda, (long long)call.ldb,
                                     (long long)call.ldc);
                            DT_CHECK(call.lda >= (call.trans_a ? call.m : call.k) &&
                                         call.ldb >= (call.trans_b ? call.k : call.n) &&
                                         call.ldc >= call.n && call.lda >= 1 && call.ldb >= 1,
                                     "layout %d: leading dimensions %lld %lld %lld below what the "
                                     "BLAS accepts",
                                     lay, (long long)call.lda, (long long)call.ldb,
                                     (long long)call.ldc);
                        }
                        free(a);
                        free(b);
                        free(c0);
                        free(c1);
                    }
    /* Unit-stride operands with leading dimensions at least their rows are always expressible. */
    DT_CHECK(accepted == total, "%d of %d row/column-major layouts went to the BLAS", accepted,
             total);
}

/* A small valid problem (4 x 5 x 6, row-major, packed) to take apart in the refusal cases. */
static double store_a[64], store_b[64], store_c[64], store_big[1024];

static dt_gemm base_problem(void)
{
    dt_gemm g;
    memset(&g, 0, sizeof g);
    g.dtype = g.c_dtype = DUET_DTYPE_F32;
    g.m = 4;
    g.n = 5;
    g.k = 6;
    g.batch = 1;
    g.alpha = 1;
    g.a = (dt_view){store_a, 6, 1, 0};
    g.b = (dt_view){store_b, 5, 1, 0};
    g.c = (dt_view){store_c, 5, 1, 0};
    return g;
}

static int maps(const dt_gemm *g, int64_t int_max)
{
    cpu_blas_gemm call;
    return cpu_blas_map(g, sizeof(float), int_max, &call);
}

static void test_refusals(void)
{
    dt_gemm g = base_problem();
    DT_CHECK(maps(&g, INT_MAX), "the plain problem is refused");

    /* No unit stride: every other element of a row. */
    g = base_problem();
    g.a.cs = 2;
    g.a.rs = 12;
    DT_CHECK(!maps(&g, INT_MAX), "A with strides (12, 2) accepted");
    g = base_problem();
    g.b.rs = 10;
    g.b.cs = 2;
    DT_CHECK(!maps(&g, INT_MAX), "B with strides (10, 2) accepted");
    g = base_problem();
    g.c.rs = 3;
    g.c.cs = 2;
    DT_CHECK(!maps(&g, INT_MAX), "C with strides (3, 2) accepted");

    /* Zero strides where the BLAS would step by them: every row of A the same row. */
    g = base_problem();
    g.a.rs = 0;
    DT_CHECK(!maps(&g, INT_MAX), "A with row stride 0 accepted");
    g = base_problem();
    g.b.cs = 0;
    g.b.rs = 1;
    DT_CHECK(!maps(&g, INT_MAX), "B with strides (1, 0) accepted");
    /* ... but a stride the BLAS never steps by (one row of A) may be anything. */
    g = base_problem();
    g.m = 1;
    g.a.rs = 0;
    cpu_blas_gemm call;
    DT_CHECK(cpu_blas_map(&g, sizeof(float), INT_MAX, &call) && call.lda == 6 && !call.trans_a,
             "one row of A with row stride 0: lda %lld", (long long)call.lda);

    /* Leading dimension below the row length (rows overlap). */
    g = base_problem();
    g.a.rs = 5;
    DT_CHECK(!maps(&g, INT_MAX), "A with ld 5 < k 6 accepted");
    g = base_problem();
    g.c.rs = 4;
    DT_CHECK(!maps(&g, INT_MAX), "C with ld 4 < n 5 accepted");

    /* Negative strides. */
    g = base_problem();
    g.a.base = store_a + 18;
    g.a.rs = -6;
    DT_CHECK(!maps(&g, INT_MAX), "A with a negative row stride accepted");
    g = base_problem();
    g.b.bs = -1;
    DT_CHECK(!maps(&g, INT_MAX), "B with a negative batch stride accepted");

    /* Past the BLAS's integers: sizes and leading dimensions (int_max stands in for
     * INT_MAX, so that no buffer of 2^31 elements is needed), then INT_MAX itself. */
    g = base_problem();
    DT_CHECK(maps(&g, 6), "every value <= int_max 6 refused");
    DT_CHECK(!maps(&g, 5), "k 6 > int_max 5 accepted");
    g = base_problem();
    g.a = (dt_view){store_big, 100, 1, 0};
    DT_CHECK(maps(&g, 100) && !maps(&g, 99), "lda 100 against int_max 99 and 100");
    g = base_problem();
    g.c = (dt_view){store_big, 100, 1, 0};
    DT_CHECK(maps(&g, 100) && !maps(&g, 99), "ldc 100 against int_max 99 and 100");
    g = base_problem();
    g.b = (dt_view){store_big, 1, 100, 0}; /* column-major B, ld 100 */
    DT_CHECK(maps(&g, 100) && !maps(&g, 99), "ldb 100 against int_max 99 and 100");
    /* Sizes are refused before any span is formed: no storage of that size is needed. */
    g = base_problem();
    g.m = (int64_t)INT_MAX + 1;
    g.c.rs = 5;
    DT_CHECK(!maps(&g, INT_MAX), "m = INT_MAX + 1 accepted");
    g = base_problem();
    g.n = (int64_t)INT_MAX + 1;
    g.b.rs = g.n;
    g.c.rs = g.n;
    DT_CHECK(!maps(&g, INT_MAX), "n = INT_MAX + 1 accepted");

    /* C overlapping A or B, and C's batch matrices overlapping one another. */
    g = base_problem();
    g.c.base = store_a + 10;
    DT_CHECK(!maps(&g, INT_MAX), "C inside A accepted");
    g = base_problem();
    g.c.base = store_b;
    DT_CHECK(!maps(&g, INT_MAX), "C on B accepted");
    g = base_problem();
    g.batch = 2;
    g.c.bs = 19; /* one matrix spans 20 elements */
    DT_CHECK(!maps(&g, INT_MAX), "C's batch matrices overlapping accepted");
    g.c.bs = 20;
    DT_CHECK(maps(&g, INT_MAX), "C's batch matrices just apart refused");
    g = base_problem();
    g.batch = 2;
    g.c.bs = 0;
    DT_CHECK(!maps(&g, INT_MAX), "C with batch stride 0 accepted");

    /* A and B may be one matrix (C = A A^T): read-only aliasing is fine for a BLAS. */
    g = base_problem();
    g.n = 4;
    g.c.rs = 4;
    g.b = (dt_view){store_a, 1, 6, 0};
    DT_CHECK(cpu_blas_map(&g, sizeof(float), INT_MAX, &call) && call.trans_b == 1 && call.ldb == 6,
             "C = A A^T refused or mis-mapped");

    /* Empty or negative sizes never reach the BLAS. */
    g = base_problem();
    g.k = 0;
    DT_CHECK(!maps(&g, INT_MAX), "k = 0 accepted");
    g = base_problem();
    g.m = 0;
    DT_CHECK(!maps(&g, INT_MAX), "m = 0 accepted");
}

/* The problem turned around for a C stored by columns: A and B swap and transpose. */
static void test_column_major_c(void)
{
    dt_gemm g = base_problem();
    g.c = (dt_view){store_c, 1, 4, 0}; /* 4 x 5, column-major, ld 4 */
    cpu_blas_gemm call;
    DT_CHECK(cpu_blas_map(&g, sizeof(float), INT_MAX, &call), "column-major C refused");
    DT_CHECK(call.m == 5 && call.n == 4 && call.k == 6 && call.ldc == 4 &&
                 call.a.base == (void *)store_b && call.b.base == (void *)store_a &&
                 call.trans_a == 1 && call.lda == 5 && call.trans_b == 1 && call.ldb == 6,
             "column-major C: m %lld n %lld ldc %lld ta %d lda %lld tb %d ldb %lld",
             (long long)call.m, (long long)call.n, (long long)call.ldc, call.trans_a,
             (long long)call.lda, call.trans_b, (long long)call.ldb);
    /* One row of C with both strides 1: stored by rows, ldc the row length. */
    g = base_problem();
    g.m = 1;
    g.c = (dt_view){store_c, 1, 1, 0};
    DT_CHECK(cpu_blas_map(&g, sizeof(float), INT_MAX, &call) && call.ldc == 5 && call.m == 1,
             "1 x 5 C with strides (1, 1): ldc %lld", (long long)call.ldc);
}

int main(void)
{
    printf("test_gemm_blas_map (host only)\n");
    test_layouts_compute();
    test_refusals();
    test_column_major_c();
    return dt_finish("test_gemm_blas_map");
}
