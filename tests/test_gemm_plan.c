/* test_gemm_plan.c - the GPU GEMM planner (src/common/gemm_plan.c), on the host. */
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
    /* No mma.sync: the SIMT form; another vendor: the tile families. */
    expect("bf16 4096x16x4096", &g, &t4, DT_SKINNY_KMAJOR, 0, 16, 0);
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
    g = problem(DUET_DTYPE_I8, 4096, 3, 4096, 1, 0);
    expect("i8 m-major", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    g = problem(DUET_DTYPE_BF16, 4096, 3, 4096, 1, 0);
    expect("bf16 m-major n 3", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    expect("bf16 m-major n 3 AMD", &g, &mi, DT_SKINNY_NONE, 0, 0, 0);
    g = problem(DUET_DTYPE_I8, 4096, 9, 4096, 0, 1);
    expect("i8 misaligned n 9", &g, &h100, DT_SKINNY_NONE, 0, 0, 0);
    g = problem(DUET_DTYPE_I8, 4096, 8, 4096, 0, 1);
    expect("i8 misaligned n 8", &g, &h100, DT_SKINNY_KMAJOR, 0, 8, 0);
    /* A's rows off 16 bytes: the SIMT form reads them element by element. */
    g = problem(DUET_DTYPE_BF16, 4096, 5, 4096, 0, 1);
    expect("bf16 misaligned", &g, &h100, DT_SKINNY_KMAJOR, 0, 8, 0);
    g = problem(DUET_DTYPE_BF16, 4096, 5, 700, 0, 0); /* rows of 1400 bytes */
    expect("bf16 k 700", &g, &h100, DT_SKINNY_KMAJOR, 0, 8, 0);
    /* TF32 and 3xTF32 math take the f32 forms: exact f32. */
    g = problem(DUET_DTYPE_F32, 4096, 5, 4096, 0, 0);
    g.math = DUET_MATH_TF32;
    expect("tf32", &g, &h100, DT_SKINNY_KMAJOR, 0, 8, 0);
    g.math = DUET_MATH_3XTF32;
    expect("3xtf32", &g, &h100, DT_SKINNY_KMAJOR, 0, 8, 0);
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
                            /* K-major: B's window is whole chunks, whole chunk pairs when
                             * it is shorter than the slice (the kernel's k-loop turn), within
                             * the slice and within 32 KiB of shared memory (plus the pitch's
                             * pad). */
                            if (p.form != DT_SKINNY_MMAJOR) {
                                const size_t bs = p.form == DT_SKINNY_KMAJOR_MMA ? duet_dtype_size(dts[t])
                                                                                 : (size_t)acc;
                                DT_CHECK(
                                    p.kwindow > 0 && p.kwindow % p.kchunk == 0 &&
                                        p.kwindow <= p.kslice &&
                                        (p.kwindow == p.kslice ||
                                         p.kwindow % (2 * p.kchunk) == 0) &&
                                        (size_t)p.kwindow * bs * (size_t)p.nmax <= 32768,
                                    "%s %s %lldx%lldx%lld: kwindow %lld, kchunk %lld, kslice %lld",
                                    devs[d].arch, duet_dtype_name(dts[t]), (long long)g.m,
                                    (long long)g.n, (long long)g.k, (long long)p.kwindow,
                                    (long long)p.kchunk, (long long)p.kslice);
                            }
                            /* The rule: K-major, as many slices as the grid holds within
                             * one wave of three blocks per unit, two on wave64 (a grid that
                             * fit one wave unsplit still does); M-major, as many as bring it
                             * to four blocks per unit; at most one per chunk, slices of whole
                             * chunks. */
                            const int mm = p.form == DT_SKINNY_MMAJOR;
                            const int64_t blocks = (wide + p.block_rows - 1) / p.block_rows * g.batch;
                            const int64_t target = (mm ? 4 : devs[d].warp_size == 64 ? 2 : 3) *
                                                   (int64_t)devs[d].compute_units;
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


/* ---- dt_gemm_plan_gpu: the family, copies, split and workspace of every AUTO GPU GEMM ---- */

/* Targets: an H200 (sm_90, 132 SMs, 227 KiB of opt-in shared memory, the sm_90a kernels
 * built), an A100-class sm_80, an sm_89, a Turing sm_75 (no mma.sync), and AMD gfx90a (MFMA for
 * f16, bf16, i8), gfx908 (no bf16 MFMA) and gfx1030 (none). Block sizes as the kernels report
 * them on the H100: wgmma 213 KiB, 3xTF32 200 KiB, swizzled 96 KiB. */
enum { T_H200, T_H200_PORTABLE, T_SM80, T_SM89, T_SM75, T_GFX90A, T_GFX908, T_GFX1030, T_COUNT };

static duet_device_props g_devs[T_COUNT];
/* The targets' DUET_GEMM_TINY (gemm_plan.h, DT_TINY_STEPS): 1 as the library runs, 0 where a
 * test names the rules behind it. */
static int g_tiny = 1;

static dt_gemm_target target(int which, size_t room)
{
    static const struct {
        const char *arch;
        int major, minor, units, warp;
        size_t optin;
    } d[T_COUNT] = {
        {"sm_90", 9, 0, 132, 32, 232448}, {"sm_90", 9, 0, 132, 32, 232448},
        {"sm_80", 8, 0, 108, 32, 166912}, {"sm_89", 8, 9, 128, 32, 101376},
        {"sm_75", 7, 5, 40, 32, 65536},   {"gfx90a", 9, 0, 110, 64, 65536},
        {"gfx908", 9, 0, 120, 64, 65536}, {"gfx1030", 10, 3, 40, 32, 65536},
    };
    duet_device_props *p = &g_devs[which];
    *p = device(d[which].arch, d[which].major, d[which].units, d[which].warp);
    p->capability_minor = d[which].minor;
    p->shared_mem_per_block_optin = d[which].optin;
    dt_gemm_target t;
    memset(&t, 0, sizeof t);
    t.props = p;
    t.nvidia = strncmp(d[which].arch, "sm_", 3) == 0;
    t.wgmma = which == T_H200 || which == T_H200_PORTABLE;
    t.portable = which == T_H200_PORTABLE;
    t.wgmma_shared = 218112;
    t.wgmma_x3_shared = 204800;
    t.tcs_shared = t.nvidia ? 98304 : 0;
    t.tc_small = 1;
    t.tiny = g_tiny;
    t.workspace_room = room;
    return t;
}

/* A problem: A row-major (K-major) or column-major, B column-major (K-major) or row-major,
 * C row-major of C's dtype for the dtype; bases on 16-byte boundaries unless `odd`. */
static dt_gemm gpu_problem(duet_dtype dt, duet_math_mode math, int64_t m, int64_t n, int64_t k,
                           int a_col, int b_row, int odd)
{
    dt_gemm g;
    memset(&g, 0, sizeof g);
    g.dtype = dt;
    g.math = math;
    g.c_dtype = dt == DUET_DTYPE_I8 ? DUET_DTYPE_I32 : dt;
    g.m = m, g.n = n, g.k = k, g.batch = 1;
    g.alpha = 1.0;
    const size_t e = duet_dtype_size(dt);
    g.a.base = (void *)(uintptr_t)(1 << 20);
    g.a.rs = a_col ? 1 : k;
    g.a.cs = a_col ? m : 1;
    g.b.base = (void *)(uintptr_t)((2 << 20) + (odd ? e : 0));
    g.b.rs = b_row ? n : 1;
    g.b.cs = b_row ? 1 : k;
    g.c.base = (void *)(uintptr_t)(3 << 20);
    g.c.rs = n, g.c.cs = 1;
    return g;
}

static const char *family_name(dt_gemm_family f)
{
    static const char *const names[] = {"none", "skinny", "wgmma", "wgmma_x3", "tcs",
                                        "tc",   "simt",   "fast",  "tc_small", "tiny"};
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

static dt_gemm_gpu_plan plan_of_t(const dt_gemm *g, int which, size_t room, int small)
{
    dt_gemm_target t = target(which, room);
    t.small = small;
    dt_gemm_gpu_plan pl;
    dt_gemm_plan_gpu(g, &t, &pl);
    return pl;
}

static dt_gemm_gpu_plan plan_of(const dt_gemm *g, int which, size_t room)
{
    const dt_gemm_target t = target(which, room);
    dt_gemm_gpu_plan pl;
    dt_gemm_plan_gpu(g, &t, &pl);
    return pl;
}

#define WANT_S(what, g, which, room, small, fam, packs, split_)                                    \
    do {                                                                                           \
        const dt_gemm_gpu_plan pl_ = plan_of_t(&(g), which, room, small);                          \
        DT_CHECK(pl_.family == (fam) && pl_.pack_a + pl_.pack_b == (packs) &&                      \
                     (split_ < 0 || pl_.split == split_),                                          \
                 "%s on %d: %s, %d copies, split %d (%s); want %s, %d, %d", what, which,           \
                 family_name(pl_.family), pl_.pack_a + pl_.pack_b, pl_.split,                      \
                 pl_.rule ? pl_.rule : "", family_name(fam), packs, split_);                       \
    } while (0)
/* Without the small-problem rule, and with it. */
#define WANT(what, g, which, room, fam, packs, split_)                                            \
    WANT_S(what, g, which, room, 0, fam, packs, split_)
#define WANT_SMALL(what, g, which, fam, packs, split_)                                            \
    WANT_S(what, g, which, SIZE_MAX, 1, fam, packs, split_)

/* The compact small-problem kernel on tiles of side `tile`. */
#define WANT_TINY(what, g_, which, tile_)                                                          \
    do {                                                                                           \
        const dt_gemm gt_ = (g_);                                                                  \
        const dt_gemm_gpu_plan pl_ = plan_of_t(&gt_, which, SIZE_MAX, 1);                          \
        DT_CHECK(pl_.family == DT_GEMM_TINY && pl_.tile == (tile_) && !pl_.pack_a && !pl_.pack_b,  \
                 "%s on %d: %s tile %d (%s); want tiny, tile %d", what, which,                     \
                 family_name(pl_.family), pl_.tile, pl_.rule ? pl_.rule : "", tile_);              \
    } while (0)

static void test_gpu_named(void)
{
    const size_t any = SIZE_MAX;
    const duet_dtype BF = DUET_DTYPE_BF16, F16 = DUET_DTYPE_F16, F32 = DUET_DTYPE_F32,
                     I8 = DUET_DTYPE_I8;
    const duet_math_mode D = DUET_MATH_DEFAULT, TF = DUET_MATH_TF32, X3 = DUET_MATH_3XTF32;
    dt_gemm g;

    /* Large squares on Hopper: wgmma as they lie (16-bit inputs in any layout), on copies when
     * a row is off its 16 bytes or an 8/32-bit operand is not K-major. */
    g = gpu_problem(BF, D, 4096, 4096, 4096, 0, 0, 0);
    WANT("bf16 4096^3 TN", g, T_H200, any, DT_GEMM_WGMMA, 0, 1);
    g = gpu_problem(BF, D, 4096, 4096, 4096, 1, 1, 0);
    WANT("bf16 4096^3 A m-major, B n-major", g, T_H200, any, DT_GEMM_WGMMA, 0, 1);
    g = gpu_problem(BF, D, 4095, 4097, 4093, 0, 0, 0);
    WANT("bf16 4095x4097x4093", g, T_H200, any, DT_GEMM_WGMMA, 2, 1);
    {
        const dt_gemm_gpu_plan pl = plan_of(&g, T_H200, any);
        const size_t a = ((size_t)4095 * 4096 * 2 + 255) & ~(size_t)255,
                     b = ((size_t)4097 * 4096 * 2 + 255) & ~(size_t)255;
        DT_CHECK(pl.ld == 4096 && pl.a_bytes == a && pl.pack_bytes == a + b &&
                     dt_gemm_gpu_plan_workspace(&pl) == a + b,
                 "bf16 4095x4097x4093 copies: ld %lld, %zu + %zu bytes", (long long)pl.ld,
                 pl.a_bytes, pl.pack_bytes);
    }
    g = gpu_problem(I8, D, 4096, 4096, 4096, 0, 1, 0);
    WANT("i8 4096^3 B n-major", g, T_H200, any, DT_GEMM_WGMMA, 2, 1);
    g = gpu_problem(F32, TF, 4096, 4096, 4096, 0, 0, 0);
    WANT("tf32 4096^3 TN", g, T_H200, any, DT_GEMM_WGMMA, 0, 1);
    g = gpu_problem(F32, X3, 4096, 4096, 4096, 0, 0, 0);
    WANT("3xtf32 4096^3 TN", g, T_H200, any, DT_GEMM_WGMMA_X3, 0, 1);
    {
        const dt_gemm_gpu_plan pl = plan_of(&g, T_H200, any);
        DT_CHECK(pl.pack_bytes == 2 * (size_t)4096 * 4096 * 4 && pl.ld == 4096,
                 "3xtf32 B parts: %zu bytes", pl.pack_bytes);
        /* No room for B's parts: the in-kernel split. */
        WANT("3xtf32 4096^3 no room", g, T_H200, 0, DT_GEMM_WGMMA, 0, 1);
    }
    g = gpu_problem(F32, X3, 4096, 4096, 4096, 1, 0, 0);
    WANT("3xtf32 4096^3 A m-major", g, T_H200, any, DT_GEMM_WGMMA_X3, 1, 1);

    /* Below three quarters of a wave of wgmma tiles: the swizzled kernel, split where its
     * tiles leave the SMs idle. */
    g = gpu_problem(BF, D, 1024, 1024, 1024, 0, 0, 0);
    WANT("bf16 1024^3", g, T_H200, any, DT_GEMM_TCS, 0, 1);
    g = gpu_problem(BF, D, 4096, 64, 4096, 0, 0, 0);
    WANT("bf16 4096x64x4096", g, T_H200, any, DT_GEMM_TCS, 0, 8);
    WANT("bf16 4096x64x4096 no room", g, T_H200, 0, DT_GEMM_TCS, 0, 1);
    /* A narrow TF32 C: the swizzled kernel where it reads both operands as they lie, else
     * exact f32 (the memory-bound family up to 8 columns). */
    g = gpu_problem(F32, TF, 4096, 16, 4096, 0, 0, 0);
    WANT("tf32 4096x16x4096 TN (narrow, as they lie)", g, T_H200, any, DT_GEMM_TCS, 0, 8);
    g = gpu_problem(F32, TF, 4096, 16, 4096, 1, 0, 0);
    WANT("tf32 4096x16x4096 A m-major (narrow: exact f32)", g, T_H200, any, DT_GEMM_FAST, 0, 1);
    DT_CHECK(plan_of(&g, T_H200, any).math == DUET_MATH_DEFAULT, "tf32 narrow runs exact f32");
    g = gpu_problem(F32, TF, 4096, 16, 4096, 0, 0, 1);
    WANT("tf32 4096x16x4096 B off 16 bytes (exact f32)", g, T_H200, any, DT_GEMM_FAST, 0, 1);
    g = gpu_problem(F32, X3, 4096, 16, 4096, 0, 0, 0);
    WANT("3xtf32 4096x16x4096 TN (narrow: exact f32)", g, T_H200, any, DT_GEMM_FAST, 0, 1);
    /* Batches: the swizzled kernel does not split them, so only a short k goes there. */
    g = gpu_problem(F32, TF, 2048, 16, 5088, 0, 0, 0);
    g.batch = 2, g.a.bs = 2048 * 5088, g.b.bs = 16 * 5088, g.c.bs = 2048 * 16;
    WANT("tf32 2048x16x5088 batch 2 (exact f32)", g, T_H200, any, DT_GEMM_FAST, 0, 1);
    g = gpu_problem(F32, TF, 16, 214, 384, 0, 0, 0);
    g.batch = 26, g.a.bs = 16 * 384, g.b.bs = 214 * 384, g.c.bs = 16 * 214;
    WANT("tf32 16x214x384 batch 26 (swizzled)", g, T_H200, any, DT_GEMM_TCS, 0, 1);
    g = gpu_problem(F32, TF, 4096, 8, 4096, 0, 0, 0);
    WANT("tf32 4096x8x4096 (narrow: exact f32)", g, T_H200, any, DT_GEMM_SKINNY, 0, 1);
    g = gpu_problem(F32, TF, 4096, 48, 4096, 0, 1, 0);
    WANT("tf32 4096x48x4096 B n-major (C 48 wide: exact f32)", g, T_H200, any, DT_GEMM_FAST, 0, 1);
    WANT("tf32 4096x48x4096 B n-major portable", g, T_H200_PORTABLE, any, DT_GEMM_TCS, 1, 8);
    g = gpu_problem(F32, TF, 4096, 65, 4096, 0, 0, 0);
    WANT("tf32 4096x65x4096", g, T_H200, any, DT_GEMM_TCS, 0, 8);
    g = gpu_problem(F32, X3, 1024, 1024, 1024, 0, 0, 0);
    WANT("3xtf32 1024^3 (below wgmma: exact f32)", g, T_H200, any, DT_GEMM_FAST, 0, 1);
    DT_CHECK(plan_of(&g, T_H200, any).math == DUET_MATH_DEFAULT, "3xtf32 1024^3 runs exact f32");
    WANT("3xtf32 1024^3 sm_80", g, T_SM80, any, DT_GEMM_TC, 0, 1);
    g = gpu_problem(F16, D, 1000, 1000, 1000, 0, 0, 1);
    WANT("f16 1000^3 B off 16 bytes", g, T_H200, any, DT_GEMM_TCS, 1, 1);
    WANT("f16 1000^3 no room", g, T_H200, 0, DT_GEMM_TC, 0, 1);
    g = gpu_problem(F16, D, 1, 7, 64, 1, 1, 0);
    WANT("f16 1x7x64 (B^T m-major)", g, T_H200, any, DT_GEMM_TCS, 2, 1);
    WANT("f16 1x7x64 (B^T m-major) gfx90a", g, T_GFX90A, any, DT_GEMM_TC, 0, 1);
    g = gpu_problem(F16, D, 4096, 12, 256, 1, 1, 0);
    WANT("f16 4096x12x256 (A m-major, 12 columns)", g, T_H200, any, DT_GEMM_TCS, 1, 1);
    g = gpu_problem(F16, D, 33, 70, 64, 1, 1, 0);
    WANT("f16 33x70x64 (rows of 66 and 140 bytes)", g, T_H200, any, DT_GEMM_TCS, 2, 1);

    /* The compact small-problem kernel ahead of every rule (DT_TINY_STEPS), on NVIDIA with the
     * one-launch rules on, on the tile whose blocks spread over the SMs: 33 x 70 x 64 on
     * 16 x 16 tiles (15 of them, 4 k-steps: cost 4), 1000^2 x 6 on 64 x 64 (256 tiles, one
     * wave), f64 2048 x 12 x 12 on 16 x 16 (cost 1), f64 64^3 (16 tiles, 4 k-steps) and
     * 33 x 70 x 128 (cost 8, the bound); past the bound (33 x 70 x 144 and f64 64 x 64 x 144:
     * cost 9) the rules behind it; not on AMD. */
    WANT_TINY("f16 33x70x64", gpu_problem(F16, D, 33, 70, 64, 1, 1, 0), T_H200, 16);
    WANT_TINY("f16 33x70x64 sm_80", gpu_problem(F16, D, 33, 70, 64, 1, 1, 0), T_SM80, 16);
    WANT_TINY("bf16 1000^2 x 6", gpu_problem(BF, D, 1000, 1000, 6, 0, 0, 0), T_H200, 64);
    WANT_TINY("tf32 382x7x1", gpu_problem(F32, TF, 382, 7, 1, 1, 0, 0), T_H200, 16);
    WANT_TINY("3xtf32 382x7x1", gpu_problem(F32, X3, 382, 7, 1, 1, 0, 0), T_H200, 16);
    WANT_TINY("f64 2048x12x12", gpu_problem(DUET_DTYPE_F64, D, 2048, 12, 12, 0, 0, 0), T_H200, 16);
    WANT_TINY("i8 700x300x40", gpu_problem(I8, D, 700, 300, 40, 0, 1, 0), T_H200, 32);
    WANT_TINY("f16 33x70x128 (cost 8)", gpu_problem(F16, D, 33, 70, 128, 1, 1, 0), T_H200, 16);
    WANT_TINY("f64 64^3 (cost 4)", gpu_problem(DUET_DTYPE_F64, D, 64, 64, 64, 0, 0, 0), T_H200, 16);
    /* A batch of 400 15 x 6 matrices: 400 tiles of any side, two waves of 64 x 64 tiles (two
     * blocks an SM) or 32 x 32 (three), one of 16 x 16 (four): the 16 x 16 tile, cost 4. */
    g = gpu_problem(BF, D, 15, 6, 64, 0, 0, 0);
    g.batch = 400;
    g.a.bs = 15 * 64, g.b.bs = 6 * 64, g.c.bs = 15 * 6;
    WANT_TINY("bf16 15x6x64 batch 400", g, T_H200, 16);
    g = gpu_problem(F16, D, 33, 70, 144, 1, 1, 0);
    WANT_SMALL("f16 33x70x144 (cost 9)", g, T_H200, DT_GEMM_TC_SMALL, 0, -1);
    g = gpu_problem(DUET_DTYPE_F64, D, 64, 64, 144, 0, 0, 0);
    WANT_SMALL("f64 64x64x144 (cost 9)", g, T_H200, DT_GEMM_FAST, 0, 1);
    g = gpu_problem(F16, D, 33, 70, 64, 1, 1, 0);
    WANT_SMALL("f16 33x70x64 gfx90a", g, T_GFX90A, DT_GEMM_TC, 0, 1);
    WANT("f16 33x70x64 no small rule", g, T_H200, any, DT_GEMM_TCS, 2, 1);
    {
        dt_gemm_target t = target(T_H200, any);
        t.small = 1;
        t.tiny = 0;
        dt_gemm_gpu_plan pl;
        dt_gemm_plan_gpu(&g, &t, &pl);
        DT_CHECK(pl.family == DT_GEMM_LOWP_SIMT, "f16 33x70x64 with DUET_GEMM_TINY=0: %s",
                 family_name(pl.family));
        t.tiny = 2;
        g = gpu_problem(F16, D, 33, 70, 128, 1, 1, 0);
        dt_gemm_plan_gpu(&g, &t, &pl);
        DT_CHECK(pl.family == DT_GEMM_TINY && pl.tile == 16,
                 "f16 33x70x128 with DUET_GEMM_TINY=all: %s tile %d", family_name(pl.family),
                 pl.tile);
    }

    /* The rules behind it (DUET_GEMM_TINY=0), down to "bf16 4096^3 small". */
    g_tiny = 0;
    /* Small problems in one launch where copies would dominate: 33 x 70 x 64 and 33 x 70 x 128
     * (one wave of 64 x 64 tiles, 4 and 8 k-steps: SIMT), 33 x 70 x 144 (9 SIMT k-steps: the
     * small tensor-core kernel, k over a cluster of 5 on the H200; without clusters its cost is
     * 5: copies),
     * 382 x 7 x 1 TF32 and 16 x 4096 x 60 TF32 (exact f32, as they lie too); 24^3 as it lies
     * stays on the swizzled kernel; 3xTF32 never takes the rule; a narrow C only up to
     * DT_SMALL_STEPS_NARROW. */
    g = gpu_problem(F16, D, 33, 70, 64, 1, 1, 0);
    WANT_SMALL("f16 33x70x64 small", g, T_H200, DT_GEMM_LOWP_SIMT, 0, 1);
    g = gpu_problem(F16, D, 33, 70, 128, 1, 1, 0);
    WANT_SMALL("f16 33x70x128 small", g, T_H200, DT_GEMM_LOWP_SIMT, 0, 1);
    g = gpu_problem(F16, D, 33, 70, 144, 1, 1, 0);
    WANT_SMALL("f16 33x70x144 small", g, T_H200, DT_GEMM_TC_SMALL, 0, 5);
    WANT_SMALL("f16 33x70x144 small sm_80", g, T_SM80, DT_GEMM_TCS, 2, 1);
    WANT_SMALL("f16 33x70x144 small portable", g, T_H200_PORTABLE, DT_GEMM_TCS, 2, 1);
    WANT("f16 33x70x144 no small rule", g, T_H200, any, DT_GEMM_TCS, 2, 1);
    {
        dt_gemm_target t = target(T_H200, any);
        t.small = 1;
        t.tc_small = 0;
        dt_gemm_gpu_plan pl;
        dt_gemm_plan_gpu(&g, &t, &pl);
        DT_CHECK(pl.family == DT_GEMM_TCS, "f16 33x70x144 with DUET_GEMM_TC_SMALL=0: %s",
                 family_name(pl.family));
        t.tc_small = 2;
        g = gpu_problem(F16, D, 33, 70, 64, 1, 1, 0);
        dt_gemm_plan_gpu(&g, &t, &pl);
        DT_CHECK(pl.family == DT_GEMM_TC_SMALL && pl.split == 2,
                 "f16 33x70x64 with DUET_GEMM_TC_SMALL=all: %s split %d", family_name(pl.family),
                 pl.split);
    }
    /* i8 only up to DT_TC_SMALL_STEPS_I8: 6 k-tiles of 64 over 6 blocks (cost 1), 32 over 8
     * (cost 4: copies). */
    g = gpu_problem(I8, D, 33, 70, 333, 1, 1, 0);
    WANT_SMALL("i8 33x70x333 small", g, T_H200, DT_GEMM_TC_SMALL, 0, 6);
    g = gpu_problem(I8, D, 33, 70, 2000, 1, 1, 0);
    WANT_SMALL("i8 33x70x2000 small", g, T_H200, DT_GEMM_TCS, 2, -1);
    g = gpu_problem(BF, D, 129, 3, 77, 0, 0, 1);
    WANT_SMALL("bf16 129x3x77 (narrow, 5 k-steps)", g, T_H200, DT_GEMM_SKINNY, 0, 1);
    g = gpu_problem(BF, D, 129, 3, 47, 0, 0, 1);
    WANT_SMALL("bf16 129x3x47 (narrow, 3 k-steps)", g, T_H200, DT_GEMM_LOWP_SIMT, 0, 1);
    g = gpu_problem(F16, D, 33, 70, 48, 1, 1, 0);
    WANT_SMALL("f16 33x70x48 small", g, T_H200, DT_GEMM_LOWP_SIMT, 0, 1);
    WANT_SMALL("f16 33x70x48 small gfx90a", g, T_GFX90A, DT_GEMM_TC, 0, 1);
    g = gpu_problem(F32, TF, 382, 7, 1, 1, 0, 0);
    WANT_SMALL("tf32 382x7x1 small", g, T_H200, DT_GEMM_FAST, 0, 1);
    g = gpu_problem(F32, TF, 16, 4096, 60, 0, 0, 0);
    WANT_SMALL("tf32 16x4096x60 small (narrow)", g, T_H200, DT_GEMM_FAST, 0, 1);
    g = gpu_problem(F32, X3, 382, 7, 1, 1, 0, 0);
    WANT_SMALL("3xtf32 382x7x1 small", g, T_H200, DT_GEMM_FAST, 0, 1);
    WANT("3xtf32 382x7x1 no small rule", g, T_H200, any, DT_GEMM_SKINNY, 0, 1);

    /* k within one SIMT step (DT_TINY_K): an outer product on the SIMT tiles in one launch;
     * inputs with tensor-core families only up to DT_TINY_K_WAVES waves of 64 x 64 tiles and
     * not where wgmma takes them as they lie; not with the one-launch rules off, nor on AMD. */
    g = gpu_problem(BF, D, 1000, 1000, 6, 0, 0, 0);
    WANT_SMALL("bf16 1000^2 x 6 (tiny k)", g, T_H200, DT_GEMM_LOWP_SIMT, 0, 1);
    WANT("bf16 1000^2 x 6 no small rule", g, T_H200, any, DT_GEMM_TCS, 2, 1);
    g = gpu_problem(BF, D, 3000, 3000, 6, 0, 0, 0);
    WANT_SMALL("bf16 3000^2 x 6 (tiny k, 5 waves)", g, T_H200, DT_GEMM_WGMMA, 2, 1);
    g = gpu_problem(BF, D, 8192, 8192, 8, 0, 0, 0);
    WANT_SMALL("bf16 8192x8192x8 (wgmma as they lie)", g, T_H200, DT_GEMM_WGMMA, 0, 1);
    g = gpu_problem(I8, D, 500, 500, 16, 0, 0, 0);
    WANT_SMALL("i8 500^2 x 16 (tiny k)", g, T_H200, DT_GEMM_LOWP_SIMT, 0, 1);
    WANT_SMALL("i8 500^2 x 16 gfx90a", g, T_GFX90A, DT_GEMM_TC, 0, 1);
    g = gpu_problem(F32, D, 13, 8134, 1, 0, 0, 0);
    WANT_SMALL("f32 13x8134x1 (tiny k)", g, T_H200, DT_GEMM_FAST, 0, 1);
    WANT("f32 13x8134x1 no small rule", g, T_H200, any, DT_GEMM_SKINNY, 0, 1);
    g = gpu_problem(F32, D, 8192, 8192, 12, 0, 0, 0);
    WANT_SMALL("f32 8192^2 x 12 (tiny k)", g, T_H200, DT_GEMM_FAST, 0, 1);
    g = gpu_problem(DUET_DTYPE_F64, D, 2048, 12, 12, 0, 0, 0);
    WANT_SMALL("f64 2048x12x12 (tiny k)", g, T_H200, DT_GEMM_FAST, 0, 1);
    g = gpu_problem(DUET_DTYPE_F64, D, 2048, 4, 12, 0, 0, 0);
    WANT_SMALL("f64 2048x4x12 (tiny k, 4 columns)", g, T_H200, DT_GEMM_SKINNY, 0, 1);
    g = gpu_problem(F32, TF, 300, 300, 12, 0, 0, 0);
    WANT_SMALL("tf32 300^2 x 12 (tiny k)", g, T_H200, DT_GEMM_FAST, 0, 1);
    DT_CHECK(plan_of_t(&g, T_H200, any, 1).math == DUET_MATH_DEFAULT, "tf32 tiny k runs exact f32");
    g = gpu_problem(F32, TF, 4096, 4096, 12, 0, 0, 0);
    WANT_SMALL("tf32 4096^2 x 12 (wgmma as they lie)", g, T_H200, DT_GEMM_WGMMA, 0, 1);
    g = gpu_problem(BF, D, 24, 24, 24, 1, 1, 0);
    WANT_SMALL("bf16 24^3 m-major, n-major small", g, T_H200, DT_GEMM_TCS, 0, 1);
    g = gpu_problem(BF, D, 2048, 40, 414, 0, 1, 0);
    WANT_SMALL("bf16 2048x40x414 small", g, T_H200, DT_GEMM_TC_SMALL, 0, 7);
    WANT("bf16 2048x40x414 no small rule", g, T_H200, any, DT_GEMM_TCS, 1, -1);
    g = gpu_problem(BF, D, 2048, 5, 414, 0, 1, 0);
    WANT_SMALL("bf16 2048x5x414 (narrow)", g, T_H200, DT_GEMM_SKINNY, 0, 1);
    /* A tiny narrow problem on the SIMT K-major form: the one launch of the small rule. */
    g = gpu_problem(F16, D, 4080, 8, 15, 0, 1, 0);
    WANT_SMALL("f16 4080x8x15 (narrow, tiny)", g, T_H200, DT_GEMM_LOWP_SIMT, 0, 1);
    WANT("f16 4080x8x15 (narrow, tiny) no small rule", g, T_H200, any, DT_GEMM_SKINNY, 0, 1);
    g = gpu_problem(BF, D, 4096, 4096, 4096, 0, 0, 0);
    WANT_SMALL("bf16 4096^3 small", g, T_H200, DT_GEMM_WGMMA, 0, 1);
    g_tiny = 1;

    /* The portable path on Hopper, and the other NVIDIA GPUs. */
    g = gpu_problem(BF, D, 4096, 4096, 4096, 0, 0, 0);
    WANT("bf16 4096^3 portable", g, T_H200_PORTABLE, any, DT_GEMM_TCS, 0, 1);
    WANT("bf16 4096^3 sm_80", g, T_SM80, any, DT_GEMM_TCS, 0, 1);
    WANT("bf16 4096^3 sm_75", g, T_SM75, any, DT_GEMM_LOWP_SIMT, 0, 1);
    g = gpu_problem(F32, TF, 4096, 4096, 4096, 0, 0, 0);
    WANT("tf32 sm_75", g, T_SM75, any, DT_GEMM_FAST, 0, 1);
    DT_CHECK(plan_of(&g, T_SM75, any).math == DUET_MATH_DEFAULT, "tf32 on sm_75 runs exact f32");
    g = gpu_problem(F32, X3, 2048, 2048, 2048, 0, 0, 0);
    WANT("3xtf32 sm_80", g, T_SM80, any, DT_GEMM_TC, 0, 1);

    /* AMD: MFMA where the arch has it for the dtype, else SIMT; TF32 is exact f32. */
    g = gpu_problem(BF, D, 2048, 2048, 2048, 0, 0, 0);
    WANT("bf16 gfx90a", g, T_GFX90A, any, DT_GEMM_TC, 0, 1);
    WANT("bf16 gfx908", g, T_GFX908, any, DT_GEMM_LOWP_SIMT, 0, 1);
    g = gpu_problem(F16, D, 2048, 2048, 2048, 0, 0, 1);
    WANT("f16 gfx908", g, T_GFX908, any, DT_GEMM_TC, 0, 1);
    WANT("f16 gfx1030", g, T_GFX1030, any, DT_GEMM_LOWP_SIMT, 0, 1);
    g = gpu_problem(F32, TF, 2048, 2048, 2048, 0, 0, 0);
    WANT("tf32 gfx90a", g, T_GFX90A, any, DT_GEMM_FAST, 0, 1);

    /* Narrow C and the exact dtypes. */
    g = gpu_problem(F32, D, 4096, 4, 4096, 0, 0, 0);
    WANT("f32 n4", g, T_H200, any, DT_GEMM_SKINNY, 0, 1);
    g = gpu_problem(BF, D, 16, 4096, 4096, 0, 0, 0);
    WANT("bf16 m16 (B K-major)", g, T_H200, any, DT_GEMM_SKINNY, 0, 1);
    g = gpu_problem(F32, D, 4096, 4096, 4096, 0, 0, 0);
    WANT("f32 4096^3", g, T_H200, any, DT_GEMM_FAST, 0, 1);
    g = gpu_problem(DUET_DTYPE_F64, D, 64, 64, 64, 0, 0, 0);
    WANT("f64 64^3", g, T_GFX90A, any, DT_GEMM_FAST, 0, 1);
}

/* Every plan over a sweep of targets, dtypes, shapes, layouts, alignments and workspaces:
 * a family that exists on the target and takes the operands as the plan hands them over,
 * copies with 16-byte rows, a split that covers k, and no more workspace than there is. */
static void test_gpu_properties(void)
{
    static const struct {
        duet_dtype dt;
        duet_math_mode math;
    } kinds[] = {{DUET_DTYPE_F16, DUET_MATH_DEFAULT},  {DUET_DTYPE_BF16, DUET_MATH_DEFAULT},
                 {DUET_DTYPE_I8, DUET_MATH_DEFAULT},   {DUET_DTYPE_F32, DUET_MATH_TF32},
                 {DUET_DTYPE_F32, DUET_MATH_3XTF32},   {DUET_DTYPE_F32, DUET_MATH_DEFAULT},
                 {DUET_DTYPE_F64, DUET_MATH_DEFAULT},  {DUET_DTYPE_I32, DUET_MATH_DEFAULT}};
    const int64_t dims[] = {1, 7, 16, 17, 64, 333, 1024, 4099};
    const size_t rooms[] = {SIZE_MAX, 0, 1 << 20};
    int plans = 0;
    for (int w = 0; w < T_COUNT; w++)
        for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
            for (int mi = 0; mi < 8; mi++)
                for (int ni = 0; ni < 8; ni++)
                    for (int kk = 0; kk < 8; kk++)
                        for (int lay = 0; lay < 8; lay++)
                            for (int ri = 0; ri < 6; ri++) {
                                const int64_t m = dims[mi], n = dims[ni], k = dims[kk];
                                dt_gemm g = gpu_problem(kinds[ki].dt, kinds[ki].math, m, n, k,
                                                        lay & 1, (lay >> 1) & 1, (lay >> 2) & 1);
                                dt_gemm_target t = target(w, rooms[ri % 3]);
                                t.small = ri >= 3;
                                dt_gemm_gpu_plan pl;
                                dt_gemm_plan_gpu(&g, &t, &pl);
                                plans++;
                                const size_t elem = duet_dtype_size(g.dtype);
                                const int lowp = g.dtype == DUET_DTYPE_F16 ||
                                                 g.dtype == DUET_DTYPE_BF16 ||
                                                 g.dtype == DUET_DTYPE_I8 ||
                                                 g.math != DUET_MATH_DEFAULT;
                                const int f = pl.family;
                                const int hopper = f == DT_GEMM_WGMMA || f == DT_GEMM_WGMMA_X3;
                                int ok = f != DT_GEMM_FAMILY_NONE;
                                ok = ok && dt_gemm_gpu_plan_workspace(&pl) <= rooms[ri % 3];
                                ok = ok && (!hopper || (t.wgmma && !t.portable && lowp));
                                ok = ok && (f != DT_GEMM_TCS ||
                                            (t.nvidia && t.props->capability_major >= 8 &&
                                             g.math != DUET_MATH_3XTF32));
                                ok = ok && (f != DT_GEMM_FAST || !lowp ||
                                            (g.dtype == DUET_DTYPE_F32 &&
                                             pl.math == DUET_MATH_DEFAULT));
                                ok = ok && (f != DT_GEMM_LOWP_SIMT || g.dtype != DUET_DTYPE_F32);
                                /* SIMT on a device with the instruction: only the one-launch
                                 * rules (a small problem, or k within one SIMT step). */
                                if (f == DT_GEMM_LOWP_SIMT && t.nvidia &&
                                    t.props->capability_major >= 8 &&
                                    !(t.small && k <= DT_TINY_K)) {
                                    const int64_t units = t.props->compute_units;
                                    const int64_t blocks = ((m + 63) / 64) * ((n + 63) / 64);
                                    const int64_t cost =
                                        (blocks + 4 * units - 1) / (4 * units) * ((k + 15) / 16);
                                    ok = ok && t.small && cost <= DT_SMALL_STEPS;
                                }
                                ok = ok && (lowp || f == DT_GEMM_FAST || f == DT_GEMM_SKINNY ||
                                            f == DT_GEMM_TINY);
                                ok = ok && (!(pl.pack_a || pl.pack_b) ||
                                            (pl.ld >= k && (pl.ld * (int64_t)elem) % 16 == 0 &&
                                             (f == DT_GEMM_WGMMA || f == DT_GEMM_WGMMA_X3 ||
                                              f == DT_GEMM_TCS)));
                                ok =
                                    ok &&
                                    (pl.split == 1 ||
                                     (f == DT_GEMM_TCS && g.batch == 1 &&
                                      (pl.split - 1) * pl.kslice < k && pl.split * pl.kslice >= k &&
                                      pl.split_bytes == (size_t)pl.split * m * n * 4) ||
                                     (f == DT_GEMM_TC_SMALL && t.props->capability_major >= 9 &&
                                      !t.portable && pl.split <= DT_TC_SMALL_MAX_SPLIT &&
                                      pl.kslice % (DT_TC_SMALL_KBYTES / (int64_t)elem) == 0 &&
                                      (pl.split - 1) * pl.kslice < k && pl.split * pl.kslice >= k &&
                                      pl.split_bytes == 0));
                                if (f == DT_GEMM_TC_SMALL) {
                                    /* NVIDIA sm_80+, f16/bf16/i8 as they lie, no workspace,
                                     * within the rule's measure (gemm_plan.h). */
                                    const int64_t tiles = ((m + 63) / 64) * ((n + 63) / 64);
                                    const int64_t slots =
                                        DT_TC_SMALL_BLOCKS_PER_UNIT * t.props->compute_units;
                                    const int64_t bk = DT_TC_SMALL_KBYTES / (int64_t)elem;
                                    const int64_t slice = pl.split > 1 ? pl.kslice : k;
                                    const int64_t cost = (tiles * pl.split + slots - 1) / slots *
                                                         ((slice + bk - 1) / bk);
                                    ok = ok && t.nvidia && t.props->capability_major >= 8 &&
                                         t.small &&
                                         (g.dtype == DUET_DTYPE_F16 || g.dtype == DUET_DTYPE_BF16 ||
                                          g.dtype == DUET_DTYPE_I8) &&
                                         !pl.pack_a && !pl.pack_b &&
                                         dt_gemm_gpu_plan_workspace(&pl) == 0 &&
                                         cost <= (g.dtype == DUET_DTYPE_I8 ? DT_TC_SMALL_STEPS_I8
                                                                           : DT_TC_SMALL_STEPS);
                                }
                                {
                                    /* The compact small-problem kernel: NVIDIA with the
                                     * one-launch rules on, as they lie, no workspace, exactly
                                     * where the rule's measure (restated in the tests'
                                     * harness) says, on the tile the measure picked. */
                                    const int tile =
                                        t.nvidia && t.small
                                            ? dt_tiny_rule_fits(g.dtype, m, n, k, 1,
                                                                t.props->compute_units, 0)
                                            : 0;
                                    ok = ok && (f == DT_GEMM_TINY) == (tile != 0);
                                    if (f == DT_GEMM_TINY) {
                                        ok = ok && pl.tile == tile && !pl.pack_a && !pl.pack_b &&
                                             dt_gemm_gpu_plan_workspace(&pl) == 0 &&
                                             pl.math == DUET_MATH_DEFAULT;
                                    }
                                }
                                if (ok && f == DT_GEMM_TCS) {
                                    /* The operands as the kernel gets them. */
                                    const void *pa = pl.pack_a ? (void *)(uintptr_t)4096 : g.a.base;
                                    const void *pb = pl.pack_b ? (void *)(uintptr_t)4096 : g.b.base;
                                    const dt_operand_class ca =
                                        pl.pack_a ? DT_OPERAND_K16
                                                  : dt_operand_class_of(pa, g.a.rs, g.a.cs, 0, 1, elem);
                                    const dt_operand_class cb =
                                        pl.pack_b ? DT_OPERAND_K16
                                                  : dt_operand_class_of(pb, g.b.cs, g.b.rs, 0, 1, elem);
                                    ok = elem == 2 ? ca != DT_OPERAND_ANY && cb != DT_OPERAND_ANY
                                                   : ca == DT_OPERAND_K16 && cb == DT_OPERAND_K16;
                                }
                                if (f == DT_GEMM_SKINNY) {
                                    dt_skinny_plan sp;
                                    ok = ok && dt_gemm_plan_skinny(&g, t.props, &sp) &&
                                         sp.form == pl.skinny.form &&
                                         pl.skinny.workspace <= rooms[ri % 3];
                                }
                                DT_CHECK(ok,
                                         "target %d %s math %d %lld x %lld x %lld layout %d room "
                                         "%zu small %d: %s (%s) copies %d %d ld %lld split %d, %zu bytes",
                                         w, duet_dtype_name(g.dtype), (int)g.math, (long long)m,
                                         (long long)n, (long long)k, lay, rooms[ri % 3], t.small,
                                         family_name(pl.family), pl.rule ? pl.rule : "",
                                         pl.pack_a, pl.pack_b, (long long)pl.ld, pl.split,
                                         dt_gemm_gpu_plan_workspace(&pl));
                            }
    printf("  %d GPU plans checked\n", plans);
}

/* ---- dt_gemm_epilogue_fuses: which plans apply duet_gemm_ex's epilogue in the store ---- */

static void test_epilogue_fuses(void)
{
    dt_epilogue e;
    memset(&e, 0, sizeof e);
    e.math = DUET_DTYPE_F32;
    e.act = DUET_ACT_GELU_TANH;
    e.bias.on = 1;
    e.bias.dtype = DUET_DTYPE_BF16;
    e.bias.v.base = (void *)(uintptr_t)(4 << 20);
    e.bias.v.cs = 1; /* a 1 x n bias: rs == 0 */
    dt_gemm_gpu_plan pl;
    const dt_gemm_target h200 = target(T_H200, SIZE_MAX);
#define FUSES(what, g, t, want)                                                                    \
    DT_CHECK(dt_gemm_epilogue_fuses(&(g), &(t), &pl) == (want), "%s: fuses %d (%s %s)", what,      \
             !(want), family_name(pl.family), pl.rule ? pl.rule : "")
    dt_gemm g = gpu_problem(DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 4096, 4096, 0, 0, 0);
    FUSES("bf16 without an epilogue", g, h200, 0);
    g.epi = &e;
    FUSES("bf16 -> bf16", g, h200, 1);
    DT_CHECK(pl.family == DT_GEMM_WGMMA, "bf16 -> bf16 plans %s", family_name(pl.family));
    g.c_dtype = DUET_DTYPE_F16;
    FUSES("bf16 -> f16 (planned as bf16 C)", g, h200, 1);
    g.c_dtype = DUET_DTYPE_F32;
    FUSES("bf16 -> f32", g, h200, 1);
    g.beta = 1.0;
    FUSES("beta for the GEMM", g, h200, 0);
    g.beta = 0.0;
    e.t.on = 1;
    FUSES("an intermediate product", g, h200, 0);
    e.t.on = 0;
    e.bias.v.rs = 4096;
    FUSES("a bias that is no vector", g, h200, 0);
    e.bias.v.rs = 0;
    e.aux.on = 1;
    e.aux.dtype = DUET_DTYPE_F64;
    FUSES("an f64 aux", g, h200, 0);
    e.aux.on = 0;
    const dt_gemm_target portable = target(T_H200_PORTABLE, SIZE_MAX);
    FUSES("DUET_GEMM_PORTABLE", g, portable, 0);
    const dt_gemm_target a100 = target(T_SM80, SIZE_MAX);
    FUSES("sm_80", g, a100, 0);
    dt_gemm odd = gpu_problem(DUET_DTYPE_F16, DUET_MATH_DEFAULT, 4096, 4096, 4095, 1, 1, 1);
    odd.epi = &e;
    odd.c_dtype = DUET_DTYPE_BF16;
    FUSES("f16 on K-major copies", odd, h200, 1);
    DT_CHECK(pl.pack_a && pl.pack_b, "f16 on copies: %d, %d", pl.pack_a, pl.pack_b);
    const dt_gemm_target tight = target(T_H200, 0);
    FUSES("f16 that needs copies, no room", odd, tight, 0);
    /* A split's reduction (memory-bound family, swizzled kernel) takes any epilogue. */
    dt_gemm narrow = gpu_problem(DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 8, 4096, 0, 0, 0);
    narrow.epi = &e;
    FUSES("narrow C (memory-bound family, split)", narrow, h200, 1);
    DT_CHECK(pl.family == DT_GEMM_SKINNY && pl.skinny.split > 1, "narrow: %s split %d",
             family_name(pl.family), pl.skinny.split);
    FUSES("narrow C on sm_80", narrow, a100, 1);
    FUSES("narrow C, no room for the split", narrow, tight, 0);
    e.bias.v.rs = 4096;
    e.aux.on = 1;
    e.aux.dtype = DUET_DTYPE_F64;
    FUSES("narrow C, a full bias and an f64 aux", narrow, h200, 1);
    e.bias.v.rs = 0;
    e.aux.on = 0;
    narrow.beta = 1.0;
    FUSES("narrow C, beta for the GEMM", narrow, h200, 0);
    narrow.beta = 0.0;
    dt_gemm f64n = gpu_problem(DUET_DTYPE_F64, DUET_MATH_DEFAULT, 16, 3000, 3000, 0, 0, 0);
    f64n.epi = &e;
    FUSES("f64 narrow C (transposed)", f64n, h200, 1);
    dt_gemm unsplit = gpu_problem(DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 65536, 8, 256, 0, 0, 0);
    unsplit.epi = &e;
    FUSES("narrow C in one slice", unsplit, h200, 0);
    dt_gemm tcs = gpu_problem(DUET_DTYPE_BF16, DUET_MATH_DEFAULT, 4096, 64, 4096, 0, 0, 0);
    tcs.epi = &e;
    FUSES("bf16 4096x64x4096 (swizzled, split)", tcs, h200, 1);
    DT_CHECK(pl.family == DT_GEMM_TCS && pl.split > 1, "4096x64: %s split %d",
             family_name(pl.family), pl.split);
    FUSES("bf16 4096x64x4096, no room for the split", tcs, tight, 0);
    dt_gemm tf = gpu_problem(DUET_DTYPE_F32, DUET_MATH_TF32, 4096, 4096, 4096, 0, 0, 0);
    tf.epi = &e;
    tf.c_dtype = DUET_DTYPE_BF16;
    FUSES("TF32 -> bf16", tf, h200, 1);
    tf.math = DUET_MATH_DEFAULT;
    FUSES("exact f32", tf, h200, 0);
    tf.math = DUET_MATH_3XTF32;
    FUSES("3xTF32", tf, h200, 0);
    dt_gemm i8 = gpu_problem(DUET_DTYPE_I8, DUET_MATH_DEFAULT, 4096, 4096, 4096, 0, 0, 0);
    e.math = DUET_DTYPE_I32;
    i8.epi = &e;
    FUSES("i8", i8, h200, 0);
#undef FUSES
}

/* 8-bit float A and B (plan_f8): on NVIDIA sm_89 and newer a narrow C (at most 16 columns, or
 * rows: the transposed problem) whose wide operand is K-major on 16-byte boundaries takes the
 * memory-bound family's mma.sync form (8 or 16 columns, default math, its split within the
 * room); otherwise on the H200 the wgmma kernel at every size, as the operands lie where both
 * are K-major on 16-byte boundaries, else on K-major copies of exactly the ones that are not,
 * within the room; the math mode kept; nowhere else a family (the common layer then decodes
 * them to 16 bits). Named cases, then every target x dtype pair x C x math x shape x layout x
 * room. */
static void test_gpu_f8(void)
{
    const duet_dtype f8[2] = {DUET_DTYPE_F8E4M3, DUET_DTYPE_F8E5M2};
    const duet_dtype cs[4] = {DUET_DTYPE_F32, DUET_DTYPE_BF16, DUET_DTYPE_F16, DUET_DTYPE_I32};
    const int64_t dims[] = {1, 7, 16, 33, 256, 1000, 4096};
    const size_t rooms[] = {SIZE_MAX, 0, 1 << 20};
    dt_gemm g = gpu_problem(DUET_DTYPE_F8E4M3, DUET_MATH_DEFAULT, 8192, 8192, 8192, 0, 0, 0);
    g.b_dtype = DUET_DTYPE_F8E4M3;
    g.c_dtype = DUET_DTYPE_BF16;
    dt_gemm_gpu_plan pl = plan_of(&g, T_H200, SIZE_MAX);
    DT_CHECK(pl.family == DT_GEMM_WGMMA && !pl.pack_a && !pl.pack_b &&
                 dt_gemm_gpu_plan_workspace(&pl) == 0,
             "e4m3 TN 8192^3: %s, copies %d %d", family_name(pl.family), pl.pack_a, pl.pack_b);
    g = gpu_problem(DUET_DTYPE_F8E5M2, DUET_MATH_FAST_ACCUM, 8192, 8192, 8192, 0, 1, 0);
    g.b_dtype = DUET_DTYPE_F8E4M3;
    g.c_dtype = DUET_DTYPE_F32;
    pl = plan_of(&g, T_H200, SIZE_MAX);
    DT_CHECK(pl.family == DT_GEMM_WGMMA && !pl.pack_a && pl.pack_b && pl.ld == 8192 &&
                 pl.pack_bytes == (size_t)8192 * 8192 && pl.math == DUET_MATH_FAST_ACCUM,
             "e5m2 x e4m3 with B N-major: %s, copies %d %d, ld %lld, %zu bytes, math %d",
             family_name(pl.family), pl.pack_a, pl.pack_b, (long long)pl.ld, pl.pack_bytes,
             (int)pl.math);
    g = gpu_problem(DUET_DTYPE_F8E4M3, DUET_MATH_DEFAULT, 1, 1, 1, 0, 0, 0);
    g.b_dtype = DUET_DTYPE_F8E5M2;
    g.c_dtype = DUET_DTYPE_F16;
    pl = plan_of(&g, T_H200, SIZE_MAX);
    DT_CHECK(pl.family == DT_GEMM_WGMMA && pl.pack_a && pl.pack_b && pl.ld == 16,
             "e4m3 x e5m2 1x1x1 (k of 1 byte: off TMA's rows): %s, copies %d %d, ld %lld",
             family_name(pl.family), pl.pack_a, pl.pack_b, (long long)pl.ld);
    int plans = 0;
    for (int w = 0; w < T_COUNT; w++)
        for (int pair = 0; pair < 4; pair++)
            for (int ci = 0; ci < 4; ci++)
                for (int fast = 0; fast < 2; fast++)
                    for (int mi = 0; mi < 7; mi++)
                        for (int ki = 0; ki < 7; ki++)
                            for (int lay = 0; lay < 8; lay++)
                                for (int ri = 0; ri < 3; ri++) {
                                    const int64_t m = dims[mi], n = dims[(mi + ki) % 7],
                                                  k = dims[ki];
                                    g = gpu_problem(f8[pair & 1],
                                                    fast ? DUET_MATH_FAST_ACCUM : DUET_MATH_DEFAULT,
                                                    m, n, k, lay & 1, (lay >> 1) & 1,
                                                    (lay >> 2) & 1);
                                    g.b_dtype = f8[pair >> 1];
                                    g.c_dtype = cs[ci];
                                    pl = plan_of(&g, w, rooms[ri]);
                                    plans++;
                                    const int a_ok = !(lay & 1) && k % 16 == 0;
                                    const int b_ok =
                                        !((lay >> 1) & 1) && k % 16 == 0 && !((lay >> 2) & 1);
                                    const size_t need =
                                        (a_ok ? 0
                                              : ((size_t)m * ((k + 15) / 16 * 16) + 255) / 256 *
                                                    256) +
                                        (b_ok ? 0
                                              : ((size_t)n * ((k + 15) / 16 * 16) + 255) / 256 *
                                                    256);
                                    /* The wide operand: A (n <= m) or B (transposed). */
                                    const int wide_ok =
                                        k % 16 == 0 &&
                                        (n <= m ? !(lay & 1) : !((lay >> 1) & 1) && !(lay & 4));
                                    const int narrow =
                                        (m < n ? m : n) <= 16 && wide_ok && ci < 3 &&
                                        (w == T_H200 || w == T_H200_PORTABLE || w == T_SM89);
                                    const int want =
                                        !narrow && w == T_H200 && ci < 3 && need <= rooms[ri];
                                    int ok = pl.family == (narrow ? DT_GEMM_SKINNY
                                                           : want ? DT_GEMM_WGMMA
                                                                  : DT_GEMM_FAMILY_NONE);
                                    if (narrow)
                                        ok = ok && pl.math == DUET_MATH_DEFAULT &&
                                             pl.skinny.form == DT_SKINNY_KMAJOR_MMA &&
                                             pl.skinny.transpose == (n > m) &&
                                             pl.skinny.nmax == ((m < n ? m : n) <= 8 ? 8 : 16) &&
                                             pl.skinny.workspace <= rooms[ri] &&
                                             dt_gemm_gpu_plan_workspace(&pl) == pl.skinny.workspace;
                                    if (want)
                                        ok = ok && pl.pack_a == !a_ok && pl.pack_b == !b_ok &&
                                             pl.pack_bytes == need && pl.math == g.math &&
                                             pl.split == 1 &&
                                             (!(pl.pack_a || pl.pack_b) ||
                                              (pl.ld >= k && pl.ld % 16 == 0));
                                    DT_CHECK(ok,
                                             "f8 %d x %d -> %d math %d, %lldx%lldx%lld layout %d "
                                             "room %zu on %d: %s, copies %d %d, %zu bytes (%s)",
                                             (int)g.dtype, (int)g.b_dtype, (int)g.c_dtype,
                                             (int)g.math, (long long)m, (long long)n, (long long)k,
                                             lay, rooms[ri], w, family_name(pl.family), pl.pack_a,
                                             pl.pack_b, pl.pack_bytes, pl.rule ? pl.rule : "");
                                }
    printf("  %d FP8 plans checked\n", plans);
    /* The decode shape of an FP8 model, either way round; B N-major on the transposed one. */
    g = gpu_problem(DUET_DTYPE_F8E4M3, DUET_MATH_DEFAULT, 4096, 16, 4096, 0, 1, 0);
    g.b_dtype = DUET_DTYPE_F8E5M2;
    g.c_dtype = DUET_DTYPE_BF16;
    pl = plan_of(&g, T_H200, SIZE_MAX);
    DT_CHECK(pl.family == DT_GEMM_SKINNY && pl.skinny.nmax == 16 && !pl.skinny.transpose &&
                 pl.skinny.split > 1 && pl.skinny.kslice % pl.skinny.kchunk == 0,
             "e4m3 x e5m2 4096 x 16 x 4096: %s, n %d, split %d", family_name(pl.family),
             pl.skinny.nmax, pl.skinny.split);
    g = gpu_problem(DUET_DTYPE_F8E4M3, DUET_MATH_DEFAULT, 16, 4096, 4096, 1, 0, 0);
    g.b_dtype = DUET_DTYPE_F8E5M2;
    g.c_dtype = DUET_DTYPE_BF16;
    pl = plan_of(&g, T_H200, SIZE_MAX);
    DT_CHECK(pl.family == DT_GEMM_SKINNY && pl.skinny.transpose,
             "e4m3 x e5m2 16 x 4096 x 4096, A M-major: %s", family_name(pl.family));
    dt_gemm view;
    dt_gemm_skinny_view(&g, &pl.skinny, &view);
    DT_CHECK(view.dtype == DUET_DTYPE_F8E5M2 && view.b_dtype == DUET_DTYPE_F8E4M3,
             "the transposed view's pair: %d x %d", (int)view.dtype, (int)view.b_dtype);
    g = gpu_problem(DUET_DTYPE_F8E4M3, DUET_MATH_DEFAULT, 16, 4096, 4096, 0, 1, 0);
    g.b_dtype = DUET_DTYPE_F8E4M3;
    g.c_dtype = DUET_DTYPE_BF16;
    pl = plan_of(&g, T_H200, SIZE_MAX);
    DT_CHECK(pl.family == DT_GEMM_WGMMA && pl.pack_b,
             "e4m3 16 x 4096 x 4096, B N-major (the wide operand M-major): %s, copies %d %d",
             family_name(pl.family), pl.pack_a, pl.pack_b);

    /* Block scales (dt_gemm.sa, sb): the narrow form as without them (any grid), else the
     * wgmma kernel, the default math whatever was asked, where B's grid is per 128 columns or
     * per tensor (a grid per column, which a column-major C's turn makes of A's 1 x 128
     * scales, has no family: the common layer then decodes and scales the operands for the
     * f32 GEMM). Every target x shape x layout x room x grid. */
    const float *const sp = (const float *)(uintptr_t)(6 << 20);
    int bplans = 0;
    for (int w = 0; w < T_COUNT; w++)
        for (int mi = 0; mi < 7; mi++)
            for (int ki = 0; ki < 7; ki++)
                for (int lay = 0; lay < 8; lay++)
                    for (int ri = 0; ri < 3; ri++)
                        for (int grid = 0; grid < 4; grid++) {
                            const int64_t m = dims[mi], n = dims[(mi + ki) % 7], k = dims[ki];
                            g = gpu_problem(DUET_DTYPE_F8E4M3, DUET_MATH_FAST_ACCUM, m, n, k,
                                            lay & 1, (lay >> 1) & 1, (lay >> 2) & 1);
                            g.b_dtype = DUET_DTYPE_F8E5M2;
                            g.c_dtype = DUET_DTYPE_BF16;
                            /* grid 0: A per row, B per 128 columns; 1: A absent, B per 128;
                             * 2: A per row, B per tensor; 3: B per column (no kernel). */
                            const dt_scale_grid ga = {
                                grid == 1 ? NULL : sp, grid == 3 ? 0 : 1, m, 0, 0, 7};
                            const dt_scale_grid gb = {sp + 4096, grid == 2 ? 0 : 1, n,
                                                      0,         grid == 3 ? 0 : 7, 7};
                            g.sa = ga;
                            g.sb = gb;
                            pl = plan_of(&g, w, rooms[ri]);
                            bplans++;
                            const int a_ok = !(lay & 1) && k % 16 == 0;
                            const int b_ok = !((lay >> 1) & 1) && k % 16 == 0 && !((lay >> 2) & 1);
                            const size_t need =
                                (a_ok ? 0 : ((size_t)m * ((k + 15) / 16 * 16) + 255) / 256 * 256) +
                                (b_ok ? 0 : ((size_t)n * ((k + 15) / 16 * 16) + 255) / 256 * 256);
                            const int wide_ok =
                                k % 16 == 0 &&
                                (n <= m ? !(lay & 1) : !((lay >> 1) & 1) && !(lay & 4));
                            const int narrow = (m < n ? m : n) <= 16 && wide_ok &&
                                               (w == T_H200 || w == T_H200_PORTABLE || w == T_SM89);
                            const int want =
                                !narrow && w == T_H200 && grid != 3 && need <= rooms[ri];
                            const int ok = narrow ? pl.family == DT_GEMM_SKINNY &&
                                                        pl.math == DUET_MATH_DEFAULT &&
                                                        pl.skinny.form == DT_SKINNY_KMAJOR_MMA
                                           : want ? pl.family == DT_GEMM_WGMMA &&
                                                        pl.math == DUET_MATH_DEFAULT &&
                                                        pl.pack_a == !a_ok && pl.pack_b == !b_ok
                                                  : pl.family == DT_GEMM_FAMILY_NONE;
                            DT_CHECK(ok,
                                     "block-scaled f8 %lldx%lldx%lld layout %d room %zu grid %d "
                                     "on %d: %s math %d (%s)",
                                     (long long)m, (long long)n, (long long)k, lay, rooms[ri], grid,
                                     w, family_name(pl.family), (int)pl.math,
                                     pl.rule ? pl.rule : "");
                        }
    printf("  %d block-scaled FP8 plans checked\n", bplans);
    /* The decode shape with A's 1 x 128 scales: transposed, the grids go with their operands. */
    g = gpu_problem(DUET_DTYPE_F8E4M3, DUET_MATH_DEFAULT, 16, 4096, 4096, 0, 0, 0);
    g.b_dtype = DUET_DTYPE_F8E4M3;
    g.c_dtype = DUET_DTYPE_BF16;
    const dt_scale_grid rows = {sp, 32, 1, 0, 0, 7}, blocks = {sp + 4096, 1, 32, 0, 7, 7};
    g.sa = rows;
    g.sb = blocks;
    pl = plan_of(&g, T_H200, SIZE_MAX);
    dt_gemm tv;
    dt_gemm_skinny_view(&g, &pl.skinny, &tv);
    DT_CHECK(pl.family == DT_GEMM_SKINNY && pl.skinny.transpose && tv.sa.p == blocks.p &&
                 tv.sa.rshift == 7 && tv.sb.p == rows.p && tv.sb.rshift == 0,
             "block-scaled e4m3 16 x 4096 x 4096: %s, transposed %d, view grids %p %p",
             family_name(pl.family), pl.skinny.transpose, (const void *)tv.sa.p,
             (const void *)tv.sb.p);
    memset(&g.sa, 0, sizeof g.sa);
    memset(&g.sb, 0, sizeof g.sb);

    /* The fused epilogue: scales (the row and column scale slots, broadcast), a bias, GELU. */
    dt_epilogue e;
    memset(&e, 0, sizeof e);
    e.math = DUET_DTYPE_F32;
    e.act = DUET_ACT_GELU_TANH;
    e.row_scale.on = e.col_scale.on = 1;
    e.row_scale.dtype = e.col_scale.dtype = DUET_DTYPE_F32;
    e.row_scale.v.base = e.col_scale.v.base = (void *)(uintptr_t)(5 << 20);
    e.bias.on = 1;
    e.bias.dtype = DUET_DTYPE_BF16;
    e.bias.v.base = (void *)(uintptr_t)(4 << 20);
    e.bias.v.cs = 1;
    g = gpu_problem(DUET_DTYPE_F8E4M3, DUET_MATH_DEFAULT, 4096, 4096, 4096, 0, 0, 0);
    g.b_dtype = DUET_DTYPE_F8E5M2;
    g.c_dtype = DUET_DTYPE_BF16;
    g.epi = &e;
    const dt_gemm_target h200 = target(T_H200, SIZE_MAX), a100 = target(T_SM80, SIZE_MAX);
    DT_CHECK(dt_gemm_epilogue_fuses(&g, &h200, &pl) == 1 && pl.family == DT_GEMM_WGMMA,
             "f8 + scales + bias + GELU on the H200: %s", family_name(pl.family));
    DT_CHECK(dt_gemm_epilogue_fuses(&g, &a100, &pl) == 0, "f8 epilogue on sm_80 fuses");
    g.math = DUET_MATH_FAST_ACCUM;
    DT_CHECK(dt_gemm_epilogue_fuses(&g, &h200, &pl) == 1, "f8 FAST_ACCUM epilogue does not fuse");
}

int main(void)
{
    printf("test_gemm_plan (host)\n");
    test_named();
    test_properties();
    test_tile_split();
    test_gpu_named();
    test_gpu_properties();
    test_epilogue_fuses();
    test_gpu_f8();
    return dt_finish("test_gemm_plan");
}
