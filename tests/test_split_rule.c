/* test_split_rule.c - the split-K rule of the tuning data (src/common/tuning.c), on the host. */
#include "harness.h"

#include "common/tuning.h"

/*
 * dt_gemm_split_k is plain C, so its choices can be checked without a device: the H100's
 * shapes (132 SMs) against the values worked out by hand in docs/performance.md, and the
 * properties every choice must have, over a sweep of shapes, tiles and device sizes.
 */

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Expected plans on an H100 (132 SMs) with the sm_90 rows: f32 splits on the 128 x 128 x 8
 * shape (2 blocks per SM: 264 slots) unless its tiles pad the output more than the small
 * 128 x 64 x 16 ones; f64 likewise on the DMMA 128 x 64 x 16 shape (2 per SM: 264 slots)
 * rather than 64 x 64 x 16 (3 per SM: 396 slots). The rule sees no operand; the launcher
 * withholds the large f64 shape from unaligned operands (src/gpu/gemm_fast_gpu.inc). */
static void test_h100_shapes(void)
{
    static const struct {
        int64_t m, n, k, batch;
        int f64;
        int want_bm, want_bn, want;
    } cases[] = {
        /* 64 large tiles: 4 slices give 256 of 264 slots (97%). */
        {8192, 128, 8192, 1, 0, 128, 128, 4},
        {128, 8192, 8192, 1, 0, 128, 128, 4},
        {1024, 1024, 16384, 1, 0, 128, 128, 4},
        /* 4 large tiles: 66 slices would fill 264 slots; 65 are within 1/64 of that, and
         * 4096 steps of 8 in slices of 64 steps make 64. */
        {256, 256, 32768, 1, 0, 128, 128, 64},
        /* A 64 x 64 output pads a 128 x 128 tile 4x, a 128 x 64 one 2x: the small shape. One
         * tile: as many slices of >= 256 as fill the device, at most 256 (4096 steps of 16 in
         * 252 slices of 17 steps: 241 non-empty slices). */
        {64, 64, 65536, 1, 0, 128, 64, 241},
        /* f64, 128 tiles of 128 x 64: 2 slices, 256 blocks of 264 slots (97%). */
        {8192, 128, 8192, 1, 1, 128, 64, 2},
        {128, 8192, 8192, 1, 1, 128, 64, 2},
        {1024, 1024, 16384, 1, 1, 128, 64, 2},
        /* A 64 x 64 output pads a 128 x 64 tile 2x: the small shape. */
        {64, 64, 65536, 1, 1, 64, 64, 241},
        /* 8 tiles: 33 slices give 264 of 264 slots. */
        {256, 256, 32768, 1, 1, 128, 64, 33},
        /* Enough tiles already: no split. */
        {4096, 4096, 4096, 1, 1, 64, 64, 1},
        {1024, 1024, 16384, 4, 1, 64, 64, 1},
        /* f32 (sm_90: no depth bound, slices of >= 128): squarish problems split too. 64
         * large tiles: 4 slices fill 256 of 264 slots. */
        {1024, 1024, 1024, 1, 0, 128, 128, 4},
        {1000, 1000, 1000, 1, 0, 128, 128, 4},
        {1024, 1024, 4095, 1, 0, 128, 128, 4},
        /* 16 large tiles in 4 slices of 128 fill 64 of 264 slots (24%); 32 small tiles in 4
         * fill 128 of 396 (32%), more than 5/4 as well: the small shape. */
        {512, 512, 512, 1, 0, 128, 64, 4},
        /* 136 small tiles (large ones would pad n more) in 5 slices: 680 of 792 slots. */
        {1023, 1025, 1027, 1, 0, 128, 64, 5},
        /* f64 keeps K >= 4 sqrt(m n) and slices of >= 256. */
        {1024, 1024, 1024, 1, 1, 64, 64, 1},
        {512, 512, 512, 1, 1, 64, 64, 1},
        {64, 64, 511, 1, 1, 64, 64, 1},
        {64, 64, 512, 1, 1, 64, 64, 2},
        /* f32: too little K for two slices of 128; 511 = 32 steps of 16 in 3 slices. */
        {64, 64, 255, 1, 0, 128, 64, 1},
        {64, 64, 511, 1, 0, 128, 64, 3},
        /* Batches count as tiles: 3 x 1 tile. */
        {64, 64, 4096, 3, 0, 128, 64, 32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const dt_gemm_tuning *row =
            dt_gemm_tuning_lookup("sm_90", cases[i].f64 ? DUET_DTYPE_F64 : DUET_DTYPE_F32);
        int got = 0;
        const dt_gemm_tile *t =
            dt_gemm_split_plan(row, cases[i].m, cases[i].n, cases[i].k, cases[i].batch, 132, &got);
        DT_CHECK(got == cases[i].want && t->bm == cases[i].want_bm && t->bn == cases[i].want_bn,
                 "%lldx%lldx%lld batch %lld %s: %dx%d split %d, want %dx%d split %d",
                 (long long)cases[i].m, (long long)cases[i].n, (long long)cases[i].k,
                 (long long)cases[i].batch, cases[i].f64 ? "f64" : "f32", t->bm, t->bn, got,
                 cases[i].want_bm, cases[i].want_bn, cases[i].want);
    }
}

/* Properties of any choice. */
static void test_properties(void)
{
    static const dt_gemm_tile tiles[] = {{128, 64, 16, 8, 4, 256, 3},
                                         {64, 64, 16, 32, 32, 128, 3},
                                         {64, 64, 8, 4, 4, 256, 2},
                                         {128, 128, 8, 16, 8, 128, 2}};
    static const dt_gemm_split_rule rules[] = {{3, 0, 256, 256, 4, 0, 0},
                                               {2, 2, 256, 256, 0, 0, 0},
                                               {1, 0, 8, 64, 1, 0, 0},
                                               {4, 0, 1, 64, 4, 0, 0}};
    static const int units[] = {1, 7, 80, 108, 132, 304};
    static const int64_t dims[] = {1, 5, 63, 64, 65, 128, 300, 1000, 4097};
    static const int64_t ks[] = {0, 1, 15, 255, 256, 511, 512, 513, 1000, 4099, 65536, 1 << 22};
    long cases = 0;
    int reported = 0;
    for (size_t ti = 0; ti < sizeof tiles / sizeof tiles[0]; ti++)
        for (size_t ri = 0; ri < sizeof rules / sizeof rules[0]; ri++)
            for (size_t ui = 0; ui < sizeof units / sizeof units[0]; ui++)
                for (size_t mi = 0; mi < sizeof dims / sizeof dims[0]; mi++)
                    for (size_t ni = 0; ni < sizeof dims / sizeof dims[0]; ni += 2)
                        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                            for (int64_t batch = 1; batch <= 9; batch += 4) {
                                const dt_gemm_tile *t = &tiles[ti];
                                const dt_gemm_split_rule *r = &rules[ri];
                                const int64_t m = dims[mi], n = dims[ni], k = ks[ki];
                                const int s = dt_gemm_split_k(r, m, n, k, batch, t, units[ui]);
                                const int again = dt_gemm_split_k(r, m, n, k, batch, t, units[ui]);
                                const int64_t tl = cdiv(m, t->bm) * cdiv(n, t->bn) * batch;
                                const int64_t slice = dt_gemm_split_slice_k(k, t->bk, s);
                                int ok = s >= 1 && s == again;
                                /* never more than the rule allows */
                                if (s > 1) {
                                    ok = ok && (r->max > 1 && s <= r->max);
                                    /* only when the tiles do not fill the device */
                                    ok = ok && tl < (int64_t)r->fill * units[ui];
                                    /* only deep problems */
                                    ok = ok && (double)k * k >=
                                                   (double)r->min_depth * r->min_depth * m * n;
                                    /* whole steps of at least min_k, none empty */
                                    ok = ok && slice % t->bk == 0 && slice >= r->min_k;
                                    ok = ok && (int64_t)(s - 1) * slice < k &&
                                         (int64_t)s * slice >= k;
                                } else {
                                    ok = ok && slice == k;
                                }
                                cases++;
                                if (!ok && reported++ < 5)
                                    fprintf(stderr,
                                            "  tile %dx%dx%d rule {%d,%d,%d} units %d: "
                                            "%lldx%lldx%lld batch %lld -> split %d slice %lld\n",
                                            t->bm, t->bn, t->bk, r->fill, r->max, r->min_k,
                                            units[ui], (long long)m, (long long)n, (long long)k,
                                            (long long)batch, s, (long long)slice);
                                DT_CHECK(ok, "split rule property (case %ld)", cases);
                            }
    printf("  %-32s %5ld cases\n", "split rule properties", cases);
}

/* Expected tails on an H100 (132 SMs, 264 slots of the 128 x 128 f32 shape; tail 75%): the
 * rows of the full rounds, then the plan of the rest (the shapes measured in tuning.c). */
static void test_h100_tails(void)
{
    static const struct {
        int64_t m, n, k, batch;
        duet_dtype dtype;
        int64_t want_top;
        int want_bn, want; /* the rest's shape (bn: 128 large, 64 small) and split; 0: none */
    } cases[] = {
        /* 576 tiles: 2 rounds hold 22 rows of 24 (528); 48 tiles (18%) left, split. */
        {3001, 2999, 3003, 1, DUET_DTYPE_F32, 2816, 64, 4},
        {3072, 3072, 3072, 1, DUET_DTYPE_F32, 2816, 128, 11},
        {3072, 3072, 3072, 1, DUET_DTYPE_I32, 2816, 128, 11},
        /* 272 tiles: 15 rows of 17 (255) in one round; 17 tiles left. */
        {2047, 2049, 2051, 1, DUET_DTYPE_F32, 1920, 64, 12},
        /* 324 tiles: 14 rows of 18 (252); 72 left (27%). */
        {2304, 2304, 2304, 1, DUET_DTYPE_F32, 1792, 128, 7},
        /* 1600 tiles: 6 rounds hold 39 rows of 40; one row of 9 rows of m left. */
        {5001, 4999, 5003, 1, DUET_DTYPE_F32, 4992, 64, 5},
        /* 1122 tiles: 4 rounds hold 32 rows of 33 (1056); 66 left (25%). */
        {4225, 4223, 4227, 1, DUET_DTYPE_F32, 4096, 128, 4},
        /* A batch of 3 counts as 3 x 12 tiles per row: 7 rows (252) in one round; the rest's
         * 72 small tiles in 2 slices fill 36% of 396 slots, its 36 large ones 27% of 264. */
        {1024, 1500, 300, 3, DUET_DTYPE_F32, 896, 64, 2},
        /* No full round, under 75% of one: the whole problem splits. */
        {1536, 1536, 1536, 1, DUET_DTYPE_F32, 0, 128, 3},
        {1792, 1792, 1792, 1, DUET_DTYPE_F32, 0, 128, 4},
        {1536, 2048, 4096, 1, DUET_DTYPE_F32, 0, 128, 4},
        /* None: 225 and 256 tiles fill 85% and 97% of one round; 4 full rounds exactly; 240
         * tiles left of 2352 (91%); a rest the plan would not split (K of one slice). */
        {1920, 1920, 1920, 1, DUET_DTYPE_F32, 0, 0, 0},
        {2048, 2048, 2048, 1, DUET_DTYPE_F32, 0, 0, 0},
        {4095, 4097, 4093, 1, DUET_DTYPE_F32, 0, 0, 0},
        {6200, 6100, 2000, 1, DUET_DTYPE_F32, 0, 0, 0},
        {3001, 2999, 200, 1, DUET_DTYPE_F32, 0, 0, 0},
        /* f64 keeps tail 0. */
        {3001, 2999, 3003, 1, DUET_DTYPE_F64, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const dt_gemm_tuning *row = dt_gemm_tuning_lookup("sm_90", cases[i].dtype);
        int64_t top = -1;
        int got = -1;
        const dt_gemm_tile *t = dt_gemm_tail_plan(row, cases[i].m, cases[i].n, cases[i].k,
                                                  cases[i].batch, 132, &top, &got);
        const int ok = cases[i].want
                           ? t && t->bn == cases[i].want_bn && got == cases[i].want &&
                                 top == cases[i].want_top
                           : !t && got == 1 && top == 0;
        DT_CHECK(ok, "%lldx%lldx%lld batch %lld %s: tail %s top %lld split %d, want bn %d top %lld "
                 "split %d",
                 (long long)cases[i].m, (long long)cases[i].n, (long long)cases[i].k,
                 (long long)cases[i].batch, duet_dtype_name(cases[i].dtype),
                 t ? (t->bn == 128 ? "large" : "small") : "none", (long long)top, got,
                 cases[i].want_bn, (long long)cases[i].want_top, cases[i].want);
    }
}

/* Properties of every tail plan: whole rows of large tiles within the full rounds, a rest under
 * tail percent of a round, and the rest's own split plan. */
static void test_tail_properties(void)
{
    dt_gemm_tuning rows[2];
    rows[0] = *dt_gemm_tuning_lookup("sm_90", DUET_DTYPE_F32);
    rows[1] = rows[0];
    rows[1].split.tail = 100;
    rows[1].split.min_k = 256;
    static const int units[] = {1, 7, 108, 132};
    static const int64_t dims[] = {1, 127, 129, 1000, 2047, 3001, 4096, 9000};
    static const int64_t ks[] = {1, 255, 256, 300, 3003};
    long cases = 0, tails = 0;
    for (int ri = 0; ri < 2; ri++)
        for (size_t ui = 0; ui < sizeof units / sizeof units[0]; ui++)
            for (size_t mi = 0; mi < sizeof dims / sizeof dims[0]; mi++)
                for (size_t ni = 0; ni < sizeof dims / sizeof dims[0]; ni++)
                    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                        for (int64_t batch = 1; batch <= 5; batch += 4) {
                            const dt_gemm_tuning *row = &rows[ri];
                            const int64_t m = dims[mi], n = dims[ni], k = ks[ki];
                            int64_t top = -1, top2 = -1;
                            int s = -1, s2 = -1;
                            const dt_gemm_tile *t =
                                dt_gemm_tail_plan(row, m, n, k, batch, units[ui], &top, &s);
                            const dt_gemm_tile *t2 =
                                dt_gemm_tail_plan(row, m, n, k, batch, units[ui], &top2, &s2);
                            int ok = t == t2 && top == top2 && s == s2;
                            if (!t) {
                                ok = ok && top == 0 && s == 1;
                            } else {
                                const int bm = row->large.bm;
                                const int64_t slots = (int64_t)row->split.large_fill * units[ui];
                                const int64_t rt = cdiv(n, row->large.bn) * batch;
                                const int64_t tiles = cdiv(m, bm) * rt;
                                const int64_t rest = tiles - top / bm * rt;
                                int ps = 0;
                                const dt_gemm_tile *pt = dt_gemm_split_plan(
                                    row, m - top, n, k, batch, units[ui], &ps);
                                ok = ok && top % bm == 0 && top >= 0 && top < m;
                                ok = ok && top / bm * rt <= tiles / slots * slots;
                                ok = ok && 100 * rest < (int64_t)row->split.tail * slots;
                                ok = ok && s > 1 && s == ps && t == pt;
                                tails++;
                            }
                            cases++;
                            DT_CHECK(ok, "tail property: rule %d units %d %lldx%lldx%lld batch "
                                     "%lld -> top %lld split %d",
                                     ri, units[ui], (long long)m, (long long)n, (long long)k,
                                     (long long)batch, (long long)top, s);
                        }
    DT_CHECK(tails > 0, "no tail planned in %ld cases", cases);
    printf("  %-32s %5ld cases, %ld tails\n", "tail plan properties", cases, tails);
}

/* Every GPU row of the table has a rule that splits a 64 x 64 output with long K (the
 * conformance test relies on it) and none splits past 256. */
/* The edges of large-shape problems on the H100 rows (dt_gemm_edge_cols, dt_gemm_pack_pays). */
static void test_h100_edges(void)
{
    static const struct {
        int64_t m, n, batch;
        int vectors;
        int64_t want; /* n_main; 0: no strip */
    } strips[] = {
        /* Read in vectors: every partial last column within 12 rounds of 264 slots. */
        {2048, 2052, 1, 1, 2048},
        {4096, 4100, 1, 1, 4096},
        {4096, 4223, 1, 1, 4096},
        {4000, 4000, 1, 1, 3968},
        {4095, 4097, 1, 1, 4096}, /* its operands copied first */
        {6144, 6148, 1, 1, 6144}, /* 2352 tiles, 8.9 rounds */
        {1024, 1500, 3, 1, 1408},
        /* None: n a multiple of 128, n <= 128, past 12 rounds (4160 tiles of 3168 slots). */
        {4096, 4096, 1, 1, 0},
        {4096, 128, 1, 1, 0},
        {100, 100, 1, 1, 0},
        {8192, 8196, 1, 1, 0},
        {8191, 8193, 1, 1, 0},
        /* Element-wise: only where the columns left take fewer rounds (289 tiles -> 256: two
         * rounds -> one; 272 -> 255 the same; 1056 -> 1024 four either way; a batch of 3 x 8 x 12
         * = 288 -> 264). */
        {2047, 2049, 1, 0, 2048},
        {2049, 2047, 1, 0, 1920},
        {1024, 1500, 3, 0, 1408},
        {4095, 4097, 1, 0, 0},
        {3500, 3501, 1, 0, 0},
        {2560, 2561, 1, 0, 0},
    };
    const dt_gemm_tuning *f32 = dt_gemm_tuning_lookup("sm_90", DUET_DTYPE_F32);
    const dt_gemm_tuning *i32 = dt_gemm_tuning_lookup("sm_90", DUET_DTYPE_I32);
    const dt_gemm_tuning *f64 = dt_gemm_tuning_lookup("sm_90", DUET_DTYPE_F64);
    const dt_gemm_tuning *a100 = dt_gemm_tuning_lookup("sm_80", DUET_DTYPE_F32);
    for (size_t i = 0; i < sizeof strips / sizeof strips[0]; i++) {
        const int64_t got = dt_gemm_edge_cols(f32, strips[i].m, strips[i].n, strips[i].batch, 132,
                                              strips[i].vectors);
        DT_CHECK(got == strips[i].want,
                 "sm_90 f32 %lld x %lld (batch %lld, vectors %d): n_main %lld, want %lld",
                 (long long)strips[i].m, (long long)strips[i].n, (long long)strips[i].batch,
                 strips[i].vectors, (long long)got, (long long)strips[i].want);
        DT_CHECK(dt_gemm_edge_cols(i32, strips[i].m, strips[i].n, strips[i].batch, 132,
                                   strips[i].vectors) == strips[i].want,
                 "sm_90 i32 %lld x %lld: not the f32 row's strip", (long long)strips[i].m,
                 (long long)strips[i].n);
        /* Rows without the edge rules: never. */
        DT_CHECK(dt_gemm_edge_cols(f64, strips[i].m, strips[i].n, strips[i].batch, 132, 1) == 0 &&
                     dt_gemm_edge_cols(a100, strips[i].m, strips[i].n, strips[i].batch, 108, 1) ==
                         0,
                 "%lld x %lld: a row without edges split a column off", (long long)strips[i].m,
                 (long long)strips[i].n);
    }
    /* Property: n_main is 0 or the whole tile columns below n, and only with a partial one. */
    for (int64_t m = 1; m <= 9000; m += 997)
        for (int64_t n = 1; n <= 9000; n += 61)
            for (int v = 0; v < 2; v++) {
                const int64_t got = dt_gemm_edge_cols(f32, m, n, 1, 132, v);
                DT_CHECK(got == 0 || (got == n / 128 * 128 && n % 128 != 0 && got > 0),
                         "%lld x %lld: n_main %lld", (long long)m, (long long)n, (long long)got);
                if (v == 0 && got)
                    DT_CHECK(dt_gemm_edge_cols(f32, m, n, 1, 132, 1) == got,
                             "%lld x %lld: element-wise strip without the vector one", (long long)m,
                             (long long)n);
            }

    static const struct {
        int64_t m, n, k, elements;
        int want;
    } packs[] = {
        /* 1200 multiply-adds per copied element or more. */
        {4095, 4097, 4093, 4095LL * 4093 + 4093LL * 4097, 1},
        {2560, 2561, 2559, 2560LL * 2559 + 2559LL * 2561, 1},
        {4096, 4096, 4093, 4096LL * 4093, 1},
        {2047, 2049, 2051, 2047LL * 2051 + 2051LL * 2049, 0},
        {2047, 2049, 300, 300LL * 2049, 1},
        {2049, 2047, 300, 300LL * 2049 + 300LL * 2047, 0},
        {1000, 1000, 1000, 1000000, 0},
        {4095, 4097, 4093, 0, 0},
        /* 144 large tiles, less than a round of 264: never (2000 per element). */
        {2000, 1030, 500, 500LL * 1030, 0},
        {3840, 1030, 500, 500LL * 1030, 1},
    };
    for (size_t i = 0; i < sizeof packs / sizeof packs[0]; i++) {
        DT_CHECK(dt_gemm_pack_pays(f32, packs[i].m, packs[i].n, packs[i].k, packs[i].elements,
                                   132) == packs[i].want,
                 "sm_90 f32 %lld x %lld x %lld, %lld elements: pays %d", (long long)packs[i].m,
                 (long long)packs[i].n, (long long)packs[i].k, (long long)packs[i].elements,
                 !packs[i].want);
        DT_CHECK(dt_gemm_pack_pays(f64, packs[i].m, packs[i].n, packs[i].k, packs[i].elements,
                                   132) == 0 &&
                     dt_gemm_pack_pays(a100, packs[i].m, packs[i].n, packs[i].k, packs[i].elements,
                                       108) == 0,
                 "a row without edges packs");
    }

    /* Problems on the split plan: the strip where the plan fills its rounds 3% better without
     * the last column (1023 x 1025 x 1027: 858 -> 969 thousandths), not where the whole
     * already fills them (1025^3, 333 x 777 x 5555) or the columns left fill them worse. */
    static const struct {
        int64_t m, n, k, batch, want;
    } splits[] = {
        {1023, 1025, 1027, 1, 1024}, {1024, 1028, 1024, 1, 1024}, {700, 900, 3000, 1, 896},
        {1536, 1537, 1535, 1, 1536}, {600, 2049, 1500, 1, 2048},  {640, 1030, 1000, 2, 1024},
        {1025, 1025, 1025, 1, 0},    {333, 777, 5555, 1, 0},      {513, 769, 4097, 1, 0},
        {127, 129, 16383, 1, 0},     {1000, 1001, 1000, 1, 0},    {8191, 131, 8189, 1, 0},
        {1000, 1000, 1000, 1, 0},    {512, 512, 512, 1, 0},       {64, 100, 1000, 1, 0},
    };
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        const int64_t got = dt_gemm_edge_cols_split(f32, splits[i].m, splits[i].n, splits[i].k,
                                                    splits[i].batch, 132);
        DT_CHECK(got == splits[i].want,
                 "sm_90 f32 split %lld x %lld x %lld: n_main %lld, want %lld",
                 (long long)splits[i].m, (long long)splits[i].n, (long long)splits[i].k,
                 (long long)got, (long long)splits[i].want);
        DT_CHECK(dt_gemm_edge_cols_split(f64, splits[i].m, splits[i].n, splits[i].k,
                                         splits[i].batch, 132) == 0,
                 "f64 split-plan strip");
    }
    for (int64_t m = 1; m <= 3000; m += 331)
        for (int64_t n = 1; n <= 3000; n += 97)
            for (int64_t k = 1; k <= 20000; k += 4999) {
                const int64_t got = dt_gemm_edge_cols_split(f32, m, n, k, 1, 132);
                DT_CHECK(got == 0 || (got == n / 128 * 128 && n % 128 != 0 && got > 0),
                         "split %lld x %lld x %lld: n_main %lld", (long long)m, (long long)n,
                         (long long)k, (long long)got);
            }

    /* Overflow-free at the extremes. */
    DT_CHECK(dt_gemm_pack_pays(f32, INT64_MAX / 2, INT64_MAX / 2, INT64_MAX / 2, 1, 132) == 1 &&
                 dt_gemm_edge_cols_split(f32, INT64_MAX / 2, 1000, 1000, 1, 132) == 0 &&
                 dt_gemm_edge_cols_split(f32, 1000, 1000, 1000, INT64_MAX / 2, 132) == 0 &&
                 dt_gemm_edge_cols(f32, INT64_MAX / 2, 1000, 1, 132, 1) == 0 &&
                 dt_gemm_edge_cols(f32, 1000, INT64_MAX / 2, INT64_MAX / 2, 132, 1) == 0,
             "edge rules at the int64 extremes");
}

static void test_table_rows(void)
{
    static const char *const arches[] = {"sm_70",  "sm_80",   "sm_86",   "sm_89",
                                         "sm_90",  "gfx908",  "gfx90a",  "gfx940",
                                         "gfx942", "gfx1030", "gfx1100", NULL};
    static const duet_dtype dts[] = {DUET_DTYPE_F32, DUET_DTYPE_F64, DUET_DTYPE_I32};
    for (int a = 0; a < 12; a++)
        for (int d = 0; d < 3; d++) {
            const dt_gemm_tuning *row = dt_gemm_tuning_lookup(arches[a], dts[d]);
            DT_CHECK(row != NULL, "no row for %s", arches[a] ? arches[a] : "default");
            if (!row) continue;
            int s = 0;
            const dt_gemm_tile *t = dt_gemm_split_plan(row, 64, 64, 4096, 1, 132, &s);
            DT_CHECK(t == &row->small || t == &row->large, "%s: plan shape", row->arch);
            DT_CHECK(s >= 2, "%s %s: 64x64x4096 splits %d", row->arch, duet_dtype_name(dts[d]), s);
            DT_CHECK(row->split.max <= 256 && row->split.min_k >= 64 && row->split.fill >= 1,
                     "%s %s: rule {%d, %d, %d}", row->arch, duet_dtype_name(dts[d]),
                     row->split.fill, row->split.max, row->split.min_k);
        }
}

int main(void)
{
    printf("test_split_rule (host only)\n");
    test_h100_shapes();
    test_h100_tails();
    test_properties();
    test_tail_properties();
    test_h100_edges();
    test_table_rows();
    return dt_finish("test_split_rule");
}
