/* test_gemm_plan.c - the memory-bound family's plan and the tile split-K (src/common/gemm_plan.c), on the host. */
#include "harness.h"

#include "common/gemm_plan.h"

#include <string.h>

/*
 * dt_gemm_plan_skinny is plain C: which problems it takes, in which form, and how it splits K
 * are checked here for an H100 (sm_90, 132 SMs), an A100-class sm_80, a Turing sm_75 (no
 * mma.sync form) and a wave64 AMD gfx90a, over named shapes and a sweep of the properties
 * every plan must have. The sweep's k values are multiples of 8 or odd, so 16-bit rows are
 * sometimes on 16-byte boundaries and sometimes not.
 */

static duet_device_props device(const char *arch, int major, int units, int warp)
{
    duet_device_props p;
    memset(&p, 0, sizeof p);
    snprintf(p.arch, sizeof p.arch, "%s", arch);
    p.capability_major = major;
    p.compute_units = units;
    p.warp_size = warp;
    p.max_grid_dims[0] = 2147483647;
    p.max_grid_dims[1] = 65535;
    p.max_grid_dims[2] = 65535;
    return p;
}

/* A problem with A row-major (k-contiguous) or column-major, B and C row-major, operands on
 * 16-byte boundaries (base 4096) unless misaligned. */
static dt_gemm problem(duet_dtype dt, int64_t m, int64_t n, int64_t k, int a_col, int misaligned)
{
    dt_gemm g;
    memset(&g, 0, sizeof g);
    g.dtype = dt;
    g.c_dtype = dt == DUET_DTYPE_I8 ? DUET_DTYPE_I32 : dt;
    g.m = m, g.n = n, g.k = k, g.batch = 1;
    g.alpha = 1.0;
    const size_t e = duet_dtype_size(dt);
    g.a.base = (void *)(uintptr_t)(4096 + (misaligned ? e : 0));
    g.a.rs = a_col ? 1 : k;
    g.a.cs = a_col ? m : 1;
    g.b.base = (void *)(uintptr_t)8192;
    g.b.rs = n, g.b.cs = 1;
    g.c.base = (void *)(uintptr_t)16384;
    g.c.rs = n, g.c.cs = 1;
    return g;
}

static void expect(const char *what, const dt_gemm *g, const duet_device_props *p, dt_skinny_form form,
                   int transpose, int nmax, int split)
{
    dt_skinny_plan pl;
    const int took = dt_gemm_plan_skinny(g, p, &pl);
    DT_CHECK(took == (form != DT_SKINNY_NONE) && pl.form == form,
             "%s on %s: form %d (took %d), want %d", what, p->arch, (int)pl.form, took, (int)form);
    if (form == DT_SKINNY_NONE) return;
    DT_CHECK(pl.transpose == transpose && pl.nmax == nmax,
             "%s on %s: transpose %d nmax %d, want %d %d", what, p->arch, pl.transpose, pl.nmax,
             transpose, nmax);
    if (split > 0)
        DT_CHECK(pl.split == split, "%s on %s: split %d, want %d", what, p->arch, pl.split, split);
}

static void test_named(void)
{
    const duet_device_props h100 = device("sm_90", 9, 132, 32);
    const duet_device_props a100 = device("sm_80", 8, 108, 32);
    const duet_device_props t4 = device("sm_75", 7, 40, 32);
    const duet_device_props mi = device("gfx90a", 9, 110, 64);

    /* Decode: 16 tokens x 4096 x 4096, weights k-contiguous. 64 row blocks of 64 in one wave
     * of 396 on 132 SMs: 6 slices of 768 k (six chunks of 128). */
    dt_gemm g = problem(DUET_DTYPE_BF16, 4096, 16, 4096, 0, 0);
    expect("bf16 4096x16x4096", &g, &h100, DT_SKINNY_KMAJOR_MMA, 0, 16, 6);
    expect("bf16 4096x16x4096", &g, &a100, DT_SKINNY_KMAJOR_MMA, 0, 16, 0);
    /* No mma.sync, or another vendor: 16-bit inputs keep the tile families. */
    expect("bf16 4096x16x4096", &g, &t4, DT_SKINNY_NONE, 0, 0, 0);
    expect("bf16 4096x16x4096", &g, &mi, DT_SKINNY_NONE, 0, 0, 0);
    /* The narrow side first: solved transposed, B^T is the long operand (k-contiguous when B
     * is column-major). */
    g = problem(DUET_DTYPE_BF16, 16, 4096, 4096, 0, 0);
    g.b.rs = 1, g.b.cs = 4096;
    expect("bf16 16x4096x4096 (B col)", &g, &h100, DT_SKINNY_KMAJOR_MMA, 1, 16, 6);
    g.b.rs = 4096, g.b.cs = 1;
    expect("bf16 16x4096x4096 (B row)", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    /* At most 16 columns, 8 or 16 in the kernel. */
    g = problem(DUET_DTYPE_I8, 4096, 5, 4096, 0, 0);
    expect("i8 n 5", &g, &h100, DT_SKINNY_KMAJOR_MMA, 0, 8, 0);
    g = problem(DUET_DTYPE_F16, 4096, 17, 4096, 0, 0);
    expect("f16 n 17", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    g = problem(DUET_DTYPE_F16, 4096, 16, 4096, 1, 0);
    expect("f16 m-major", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    g = problem(DUET_DTYPE_BF16, 4096, 5, 4096, 0, 1);
    expect("bf16 misaligned", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    g = problem(DUET_DTYPE_BF16, 4096, 5, 700, 0, 0); /* rows of 1400 bytes */
    expect("bf16 k 700", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    /* Math modes keep the tensor-core families. */
    g = problem(DUET_DTYPE_F32, 4096, 5, 4096, 0, 0);
    g.math = DUET_MATH_TF32;
    expect("tf32", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    g.math = DUET_MATH_3XTF32;
    expect("3xtf32", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    /* f32, f64, i32: SIMT, 4 / 8 / 16 columns, both vendors, any architecture. */
    g = problem(DUET_DTYPE_F64, 8192, 1, 8192, 0, 0);
    expect("f64 gemv", &g, &h100, DT_SKINNY_KMAJOR, 0, 4, 0);
    expect("f64 gemv", &g, &mi, DT_SKINNY_KMAJOR, 0, 4, 0);
    expect("f64 gemv", &g, &t4, DT_SKINNY_KMAJOR, 0, 4, 0);
    g = problem(DUET_DTYPE_F32, 8192, 16, 8192, 1, 0);
    expect("f32 m-major n 16", &g, &h100, DT_SKINNY_MMAJOR, 0, 16, 0);
    g = problem(DUET_DTYPE_F32, 8192, 7, 8192, 0, 1);
    expect("f32 misaligned n 7", &g, &h100, DT_SKINNY_KMAJOR, 0, 8, 0);
    g = problem(DUET_DTYPE_I32, 100, 17, 100, 0, 0);
    expect("i32 n 17", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    g = problem(DUET_DTYPE_F32, 4096, 4096, 4096, 0, 0);
    expect("f32 square", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    /* Nothing to multiply: not this family's business. */
    g = problem(DUET_DTYPE_F32, 100, 4, 0, 0, 0);
    expect("k 0", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
}

/* Every plan: slices cover K exactly once in whole chunks, the workspace holds them, and the
 * grid has the blocks the rule wants unless K ran out of chunks. */
static void test_properties(void)
{
    const duet_device_props devs[] = {device("sm_90", 9, 132, 32), device("sm_80", 8, 108, 32),
                                      device("gfx90a", 9, 110, 64), device("sm_75", 7, 1, 32)};
    static const duet_dtype dts[] = {DUET_DTYPE_F32, DUET_DTYPE_F64, DUET_DTYPE_I32,
                                     DUET_DTYPE_F16, DUET_DTYPE_BF16, DUET_DTYPE_I8};
    static const int64_t sizes[] = {1, 2, 5, 16, 17, 64, 100, 1000, 4096, 5001, 65536};
    int plans = 0;
    for (int d = 0; d < 4; d++)
        for (int t = 0; t < 6; t++)
            for (int i = 0; i < 11; i++)
                for (int j = 0; j < 11; j++)
                    for (int l = 0; l < 11; l++)
                        for (int ac = 0; ac < 2; ac++) {
                            dt_gemm g = problem(dts[t], sizes[i], sizes[j], sizes[l], ac, 0);
                            g.batch = (i + j) % 3 == 0 ? 7 : 1;
                            dt_skinny_plan p;
                            if (!dt_gemm_plan_skinny(&g, &devs[d], &p)) continue;
                            plans++;
                            const int64_t narrow = g.m < g.n ? g.m : g.n;
                            const int64_t wide = g.m < g.n ? g.n : g.m;
                            const int acc = dts[t] == DUET_DTYPE_F64 ? 8 : 4;
                            DT_CHECK(narrow <= p.nmax && p.nmax <= 16 && p.transpose == (g.n > g.m) &&
                                         p.kslice > 0 && p.kslice % p.kchunk == 0 &&
                                         (int64_t)p.split * p.kslice >= g.k &&
                                         (int64_t)(p.split - 1) * p.kslice < g.k &&
                                         p.workspace == (p.split > 1 ? (size_t)p.split * (size_t)g.batch *
                                                                           (size_t)g.m * (size_t)g.n *
                                                                           (size_t)acc
                                                                     : 0) &&
                                         p.threads == 4 * devs[d].warp_size,
                                     "%s %s %lldx%lldx%lld: plan form %d nmax %d split %d kslice %lld "
                                     "kchunk %lld ws %zu",
                                     devs[d].arch, duet_dtype_name(dts[t]), (long long)g.m,
                                     (long long)g.n, (long long)g.k, (int)p.form, p.nmax, p.split,
                                     (long long)p.kslice, (long long)p.kchunk, p.workspace);
                            /* K-major: B's window is whole chunks, within the slice and
                             * within 32 KiB of shared memory (plus the pitch's pad). */
                            if (p.form != DT_SKINNY_MMAJOR) {
                                const size_t bs = p.form == DT_SKINNY_KMAJOR_MMA ? duet_dtype_size(dts[t])
                                                                                 : (size_t)acc;
                                DT_CHECK(p.kwindow > 0 && p.kwindow % p.kchunk == 0 && p.kwindow <= p.kslice &&
                                             (size_t)p.kwindow * bs * (size_t)p.nmax <= 32768,
                                         "%s %s %lldx%lldx%lld: kwindow %lld, kchunk %lld, kslice %lld",
                                         devs[d].arch, duet_dtype_name(dts[t]), (long long)g.m,
                                         (long long)g.n, (long long)g.k, (long long)p.kwindow,
                                         (long long)p.kchunk, (long long)p.kslice);
                            }
                            /* The rule: K-major, as many slices as the grid holds within
                             * one wave of three blocks per unit (a grid that fit one wave
                             * unsplit still does); M-major, as many as bring it to four
                             * blocks per unit; at most one per chunk, slices of whole chunks. */
                            const int mm = p.form == DT_SKINNY_MMAJOR;
                            const int64_t blocks = (wide + p.block_rows - 1) / p.block_rows * g.batch;
                            const int64_t target = (mm ? 4 : 3) * (int64_t)devs[d].compute_units;
                            const int64_t chunks = (g.k + p.kchunk - 1) / p.kchunk;
                            int64_t want = blocks >= target ? 1 : mm ? (target + blocks - 1) / blocks : target / blocks;
                            if (want > chunks) want = chunks;
                            DT_CHECK(mm || blocks > target || blocks * p.split <= target,
                                     "%s %s %lldx%lldx%lld: %lld blocks x %d slices past one wave of %lld",
                                     devs[d].arch, duet_dtype_name(dts[t]), (long long)g.m, (long long)g.n,
                                     (long long)g.k, (long long)blocks, p.split, (long long)target);
                            DT_CHECK(p.kslice == (chunks + want - 1) / want * p.kchunk,
                                     "%s %s %lldx%lldx%lld: %lld blocks, kslice %lld for %lld "
                                     "slices of %lld chunks",
                                     devs[d].arch, duet_dtype_name(dts[t]), (long long)g.m,
                                     (long long)g.n, (long long)g.k, (long long)blocks,
                                     (long long)p.kslice, (long long)want, (long long)chunks);
                        }
    DT_CHECK(plans > 1000, "only %d plans in the sweep", plans);
    printf("  %d plans checked\n", plans);
}

/* dt_gemm_tile_split: the H200's (132 SMs, two 128 x 128 blocks each: 264 slots) choices on
 * the shapes measured, then the properties over a sweep: slices cover k exactly, whole k-tiles
 * but the last, one wave, enough k-tiles a slice, the partial sums' traffic within half the
 * operands', no split where the tiles fill half the slots. */
static void test_tile_split(void)
{
    int64_t ks;
#define SPLIT(m, n, k, bk, elem, slots) dt_gemm_tile_split(m, n, k, 128, 128, bk, elem, 4, slots, &ks)
    /* 4096 x 64 x 4096 bf16: 32 tiles, 64 k-tiles of 64 -> 8 slices (one wave). */
    DT_CHECK(SPLIT(4096, 64, 4096, 64, 2, 264) == 8 && ks == 512, "4096x64x4096: %lld", (long long)ks);
    /* TF32 4096 x 16 x 4096: 128 k-tiles of 32 -> 8 slices. */
    DT_CHECK(SPLIT(4096, 16, 4096, 32, 4, 264) == 8 && ks == 512, "tf32 4096x16x4096: %lld",
             (long long)ks);
    /* 8192 x 16 x 700 bf16: 64 tiles, 11 k-tiles -> 2 slices of 6 and 5 k-tiles. */
    DT_CHECK(SPLIT(8192, 16, 700, 64, 2, 264) == 2 && ks == 384, "8192x16x700: %lld", (long long)ks);
    /* 1000^3 f16: C as large as the operands: whole (split, it ran 31 us against 24). */
    DT_CHECK(SPLIT(1000, 1000, 1000, 64, 2, 264) == 1 && ks == 1000, "1000^3 split");
    /* k of 7 k-tiles: too short to split. */
    DT_CHECK(SPLIT(256, 256, 448, 64, 2, 264) == 1 && ks == 448, "k 448 split");
    /* 132 tiles fill half the slots: not split. */
    DT_CHECK(SPLIT(128 * 132, 16, 65536, 64, 2, 264) == 1, "132 tiles split");
    DT_CHECK(SPLIT(0, 16, 4096, 64, 2, 264) == 1 && SPLIT(16, 16, 0, 64, 2, 264) == 1,
             "empty problems split");
#undef SPLIT

    int n = 0;
    const int64_t slots_list[] = {108, 216, 264};
    const int64_t dims[] = {1, 16, 64, 100, 128, 129, 500, 1000, 2048, 4096, 8192};
    for (int si = 0; si < 3; si++)
        for (int mi = 0; mi < 11; mi++)
            for (int ni = 0; ni < 11; ni++)
                for (int64_t k = 1; k <= 70000; k = k * 3 / 2 + 7)
                    for (size_t elem = 1; elem <= 4; elem *= 2) {
                        const int64_t slots = slots_list[si], m = dims[mi], nn = dims[ni];
                        const int64_t bk = 128 / (int64_t)elem;
                        const int split = dt_gemm_tile_split(m, nn, k, 128, 128, bk, elem, 4, slots, &ks);
                        n++;
                        if (split == 1) {
                            DT_CHECK(ks == k, "unsplit kslice %lld != k %lld", (long long)ks,
                                     (long long)k);
                            continue;
                        }
                        const int64_t tiles = ((m + 127) / 128) * ((nn + 127) / 128);
                        const int ok = ks % bk == 0 && (split - 1) * ks < k && split * ks >= k &&
                                       tiles * split <= slots && 2 * tiles < slots &&
                                       ks / bk >= DT_TILE_SPLIT_MIN_KTILES &&
                                       4.0 * split * m * nn * 4 <= (double)(m + nn) * k * elem;
                        DT_CHECK(ok, "%lld x %lld x %lld elem %zu slots %lld: split %d kslice %lld",
                                 (long long)m, (long long)nn, (long long)k, elem, (long long)slots,
                                 split, (long long)ks);
                    }
    printf("  %d tile splits checked\n", n);
}

int main(void)
{
    printf("test_gemm_plan (host)\n");
    test_named();
    test_properties();
    test_tile_split();
    return dt_finish("test_gemm_plan");
}
