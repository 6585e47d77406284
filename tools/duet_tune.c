/* duet_tune.c - duet-tune: times every compiled AUTO GEMM tile shape on device 0 and writes a
 * tuning file (docs/tuning.md). */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp, fdopen */
#include "duet/duet.h"

#include "common/tuning.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * How a candidate is forced: each one is written as a one-row tuning file (large = small = the
 * candidate, split off) named by DUET_TUNING_FILE, and a context created for it, so the tool
 * uses only the public API and the library needs no hook. The list of candidates and the
 * built-in rows come from src/common/tuning.c, compiled into this program (the same source as
 * the library's, so they agree with what the library's loader accepts).
 *
 * Inputs are small integers (|a|, |b| <= 4): every product and partial sum is exact in f32 and
 * f64 for K < 2^20, so every candidate's result must equal the built-in choice's bit for bit,
 * whatever its tile shape, summation order or split; the built-in result is itself checked
 * against a host dot product on sampled elements.
 *
 * Steps, per dtype family (f32, i32, f64; f64 also on DMMA where the device runs it):
 *   1. every candidate shape alone on every size: the large shape is the fastest on the sizes
 *      whose 128 x 128 grid fills the device, the small one the fastest on the others;
 *   2. large_waves (the choice rule: large once its grid has large_waves blocks per SM/CU)
 *      from 1, 2, 4, 8, 16 with the built-in split rule;
 *   3. the tuned row against the built-in row on every size: the file keeps the faster one
 *      (geometric mean of the times), so a tuning file never makes the table slower on the
 *      sizes measured.
 */

typedef struct size3 {
    int64_t m, n, k;
} size3;

typedef struct problem {
    size3 s;
    int large;         /* its 128 x 128 grid fills the device */
    void *a, *b, *ref; /* host: inputs and the built-in row's result */
} problem;

static int g_iters = 10, g_warmup = 3, g_verbose = 1;
static char g_dir[64];
static int g_failures;

static size_t esize(duet_dtype d) { return d == DUET_DTYPE_F64 ? 8 : 4; }
static const char *dname(duet_dtype d)
{
    return d == DUET_DTYPE_F32 ? "f32" : d == DUET_DTYPE_F64 ? "f64" : "i32";
}

static void set_elem(void *p, duet_dtype d, size_t i, int v)
{
    if (d == DUET_DTYPE_F32)
        ((float *)p)[i] = (float)v;
    else if (d == DUET_DTYPE_F64)
        ((double *)p)[i] = (double)v;
    else
        ((int32_t *)p)[i] = v;
}

static double get_elem(const void *p, duet_dtype d, size_t i)
{
    if (d == DUET_DTYPE_F32) return ((const float *)p)[i];
    if (d == DUET_DTYPE_F64) return ((const double *)p)[i];
    return ((const int32_t *)p)[i];
}

/* Element by element (bitwise would tell -0 from +0, which summation order may flip). */
static int same_values(const void *x, const void *y, duet_dtype d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (get_elem(x, d, i) != get_elem(y, d, i)) return 0;
    return 1;
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static int rand_small(void)
{
    g_rng ^= g_rng >> 12, g_rng ^= g_rng << 25, g_rng ^= g_rng >> 27;
    return (int)((g_rng * 0x2545f4914f6cdd1dull) >> 61) - 4; /* -4 .. 3 */
}

static void tile_text(const dt_gemm_tile *t, char *buf, size_t size)
{
    snprintf(buf, size, "%d,%d,%d,%d,%d,%d,%d", t->bm, t->bn, t->bk, t->tm, t->tn, t->threads,
             t->stages);
}

/* Writes a tuning file holding row (or no file: row NULL gives DUET_TUNING_FILE=""). */
static void use_row(const char *arch, const dt_gemm_tuning *row)
{
    if (!row) {
        setenv("DUET_TUNING_FILE", "", 1);
        return;
    }
    char path[128], large[64], small[64];
    snprintf(path, sizeof path, "%s/candidate.txt", g_dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "duet-tune: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    tile_text(&row->large, large, sizeof large);
    tile_text(&row->small, small, sizeof small);
    fprintf(f,
            "duet-tuning 1\n%s %s %s large=%s small=%s large_waves=%d split=%d,%d,%d,%d,%d,%d "
            "edges=%d\n",
            row->engine == DT_GEMM_ENGINE_DMMA ? "gemm.dmma" : "gemm.fma", arch, dname(row->dtype),
            large, small, row->large_waves, row->split.fill, row->split.large_fill, row->split.max,
            row->split.min_k, row->split.min_depth, row->split.tail, row->split.edges);
    fclose(f);
    setenv("DUET_TUNING_FILE", path, 1);
}

typedef struct run_args {
    duet_stream *stream;
    duet_matrix a, b, c;
} run_args;

static duet_status run_gemm(void *user)
{
    run_args *r = (run_args *)user;
    duet_op_options opt = {0};
    return duet_gemm(r->stream, DUET_OP_N, DUET_OP_N, 1.0, &r->a, &r->b, 0.0, &r->c, &opt);
}

/*
 * Times row (NULL: the built-in table) on every problem of dtype; times[i] gets the median
 * milliseconds, or INFINITY when the row did not run as a file row (its engine declined the
 * device) or its result was wrong. want_file: the row must have run from the file. Returns 1
 * when every problem ran and checked.
 */
static int time_row(const char *arch, const dt_gemm_tuning *row, duet_dtype dtype, problem *probs,
                    int nprobs, double *times, int keep_ref)
{
    use_row(arch, row);
    duet_context *ctx = NULL;
    duet_status st = duet_context_create(0, &ctx);
    if (st != DUET_SUCCESS) {
        fprintf(stderr, "duet-tune: duet_context_create: %s\n", duet_last_error());
        exit(1);
    }
    duet_stream *stream = NULL;
    duet_context_default_stream(ctx, &stream);
    int ok = 1;
    for (int i = 0; i < nprobs; i++) {
        problem *p = &probs[i];
        times[i] = INFINITY;
        const size_t es = esize(dtype);
        const size_t na = (size_t)(p->s.m * p->s.k), nb = (size_t)(p->s.k * p->s.n),
                     nc = (size_t)(p->s.m * p->s.n);
        duet_buffer *ba = NULL, *bb = NULL, *bc = NULL;
        if (duet_buffer_create(ctx, na * es, &ba) != DUET_SUCCESS ||
            duet_buffer_create(ctx, nb * es, &bb) != DUET_SUCCESS ||
            duet_buffer_create(ctx, nc * es, &bc) != DUET_SUCCESS) {
            fprintf(stderr, "duet-tune: %s\n", duet_last_error());
            exit(1);
        }
        run_args r;
        r.stream = stream;
        r.a = duet_matrix_make(ba, dtype, DUET_LAYOUT_ROW_MAJOR, p->s.m, p->s.k);
        r.b = duet_matrix_make(bb, dtype, DUET_LAYOUT_ROW_MAJOR, p->s.k, p->s.n);
        r.c = duet_matrix_make(bc, dtype, DUET_LAYOUT_ROW_MAJOR, p->s.m, p->s.n);
        duet_buffer_write(stream, ba, 0, p->a, na * es);
        duet_buffer_write(stream, bb, 0, p->b, nb * es);
        duet_launch_info info;
        duet_op_options opt = {0};
        opt.info = &info;
        st = duet_gemm(stream, DUET_OP_N, DUET_OP_N, 1.0, &r.a, &r.b, 0.0, &r.c, &opt);
        void *c = malloc(nc * es);
        if (!c) exit(1);
        if (st == DUET_SUCCESS) st = duet_buffer_read(stream, bc, 0, c, nc * es);
        int good = st == DUET_SUCCESS;
        if (!good) fprintf(stderr, "duet-tune: duet_gemm: %s\n", duet_last_error());
        if (good && row && strncmp(info.tuning, "file:", 5) != 0) {
            good = 0; /* the library declined the row here (its engine cannot run) */
            if (g_verbose)
                fprintf(stderr, "  (declined on this device: %s ran %s)\n", info.tuning,
                        info.kernel);
        } else if (good && keep_ref) {
            /* The built-in result against the host on sampled elements. */
            for (int t = 0; t < 97; t++) {
                const int64_t ii = (int64_t)((unsigned)rand_small() + 4) * (p->s.m - 1) / 7;
                const int64_t jj = (int64_t)(t * 7919) % p->s.n;
                double ref = 0;
                for (int64_t q = 0; q < p->s.k; q++)
                    ref += get_elem(p->a, dtype, (size_t)(ii * p->s.k + q)) *
                           get_elem(p->b, dtype, (size_t)(q * p->s.n + jj));
                if (get_elem(c, dtype, (size_t)(ii * p->s.n + jj)) != ref) {
                    fprintf(stderr, "duet-tune: the built-in %s result is wrong at (%lld, %lld)\n",
                            dname(dtype), (long long)ii, (long long)jj);
                    g_failures++;
                    good = 0;
                    break;
                }
            }
            memcpy(p->ref, c, nc * es);
        } else if (good && !same_values(c, p->ref, dtype, nc)) {
            fprintf(stderr,
                    "duet-tune: %s on %lldx%lldx%lld: result differs from the built-in "
                    "row's: candidate refused\n",
                    info.kernel, (long long)p->s.m, (long long)p->s.n, (long long)p->s.k);
            g_failures++;
            good = 0;
        }
        free(c);
        if (good) {
            duet_profile_result res;
            st = duet_profile(ctx, stream, run_gemm, &r, g_warmup, g_iters, &res);
            if (st == DUET_SUCCESS)
                times[i] = res.median_ms;
            else
                good = 0;
        }
        if (g_verbose && good)
            fprintf(stderr, "  %-40s %5lldx%lldx%lld  %9.3f ms\n", info.kernel, (long long)p->s.m,
                    (long long)p->s.n, (long long)p->s.k, times[i]);
        else if (g_verbose)
            fprintf(stderr, "  %-40s %5lldx%lldx%lld  skipped\n", "-", (long long)p->s.m,
                    (long long)p->s.n, (long long)p->s.k);
        ok &= good;
        duet_buffer_destroy(ba);
        duet_buffer_destroy(bb);
        duet_buffer_destroy(bc);
    }
    duet_context_destroy(ctx);
    return ok;
}

/* Geometric mean of times[i] over problems with large == want (want -1: all). */
static double score(const double *times, const problem *probs, int n, int want)
{
    double s = 0;
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (want >= 0 && probs[i].large != want) continue;
        if (!isfinite(times[i])) return INFINITY;
        s += log(times[i]);
        count++;
    }
    return count ? exp(s / count) : 0.0;
}

static int parse_sizes(const char *text, size3 *out, int max)
{
    int n = 0;
    while (*text && n < max) {
        long long m, nn, k;
        int used = 0;
        if (sscanf(text, "%lldx%lldx%lld%n", &m, &nn, &k, &used) != 3 || m < 1 || nn < 1 || k < 1 ||
            k >= (1 << 20)) {
            fprintf(stderr, "duet-tune: --sizes wants MxNxK[,MxNxK...] with K < 2^20\n");
            exit(2);
        }
        out[n].m = m, out[n].n = nn, out[n].k = k;
        n++;
        text += used;
        if (*text == ',') text++;
    }
    return n;
}

static void usage(void)
{
    printf("usage: duet-tune [--quick] [--sizes MxNxK,...] [--iters N] [--out FILE] [-q]\n"
           "       duet-tune --version\n"
           "Times every compiled AUTO GEMM tile shape (f32, i32, f64) on device 0 and writes\n"
           "a tuning file for its arch (default: ./duet-tuning-ARCH.txt). docs/tuning.md.\n");
}

int main(int argc, char **argv)
{
    int quick = 0;
    const char *out = NULL, *sizes_text = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "-q") == 0)
            g_verbose = 0;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes_text = argv[++i];
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            g_iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("duet-tune %s\n", duet_version_string());
            return 0;
        } else {
            usage();
            return 2;
        }
    }
    if (g_iters < 1 || g_iters > 1000) g_iters = 10;

    duet_device_props props;
    if (duet_device_get_props(0, &props) != DUET_SUCCESS) {
        fprintf(stderr, "duet-tune: no device: %s\n", duet_last_error());
        return 1;
    }
    char arch[32];
    snprintf(arch, sizeof arch, "%.*s", (int)strcspn(props.arch, ":"), props.arch);
    if (strcmp(arch, "host") == 0) {
        printf("duet-tune: the cpu backend has no tuning table (its blocking is fixed at build "
               "time): nothing to tune\n");
        return 0;
    }

    size3 sizes[32];
    int nsizes;
    if (sizes_text)
        nsizes = parse_sizes(sizes_text, sizes, 32);
    else if (quick)
        nsizes =
            parse_sizes("2048x2048x2048,4096x4096x1024,1024x1024x1024,8192x128x4096", sizes, 32);
    else
        nsizes = parse_sizes("4096x4096x4096,2048x2048x2048,4095x4097x4093,1024x1024x1024,"
                             "512x512x512,8192x128x8192,1024x1024x16384",
                             sizes, 32);
    if (quick && g_iters == 10) g_iters = 5, g_warmup = 2;

    snprintf(g_dir, sizeof g_dir, "/tmp/duet_tune_XXXXXX");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "duet-tune: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    char out_default[96];
    snprintf(out_default, sizeof out_default, "duet-tuning-%s.txt", arch);
    if (!out) out = out_default;

    problem probs[32];
    for (int i = 0; i < nsizes; i++) {
        probs[i].s = sizes[i];
        probs[i].large =
            ((sizes[i].m + 127) / 128) * ((sizes[i].n + 127) / 128) >= props.compute_units;
    }

    char lines[8][512];
    int nlines = 0;
    const duet_dtype dtypes[3] = {DUET_DTYPE_F32, DUET_DTYPE_I32, DUET_DTYPE_F64};
    fprintf(stderr, "duet-tune: %s (%s, %d compute units), %d sizes, %d iterations each\n",
            props.name, arch, props.compute_units, nsizes, g_iters);
    for (int di = 0; di < 3; di++) {
        const duet_dtype dtype = dtypes[di];
        const size_t es = esize(dtype);
        for (int i = 0; i < nsizes; i++) {
            problem *p = &probs[i];
            const size_t na = (size_t)(p->s.m * p->s.k), nb = (size_t)(p->s.k * p->s.n);
            p->a = malloc(na * es);
            p->b = malloc(nb * es);
            p->ref = malloc((size_t)(p->s.m * p->s.n) * es);
            if (!p->a || !p->b || !p->ref) {
                fprintf(stderr, "duet-tune: out of host memory\n");
                return 1;
            }
            for (size_t q = 0; q < na; q++) set_elem(p->a, dtype, q, rand_small());
            for (size_t q = 0; q < nb; q++) set_elem(p->b, dtype, q, rand_small());
        }
        const dt_gemm_tuning *builtin = dt_gemm_tuning_lookup(arch, dtype);
        double base[32], t[32];
        fprintf(stderr, "[%s] built-in row (%s)\n", dname(dtype), builtin->arch);
        if (!time_row(arch, NULL, dtype, probs, nsizes, base, 1)) {
            fprintf(stderr, "duet-tune: the built-in %s row failed: %s not tuned\n", dname(dtype),
                    dname(dtype));
            g_failures++;
            for (int i = 0; i < nsizes; i++) {
                free(probs[i].a);
                free(probs[i].b);
                free(probs[i].ref);
            }
            continue;
        }
        int have_large = 0, have_small = 0;
        for (int i = 0; i < nsizes; i++) {
            have_large |= probs[i].large;
            have_small |= !probs[i].large;
        }
        /* Step 1, per engine. */
        dt_gemm_tuning best = *builtin;
        double best_score = INFINITY;
        const int engines = (dtype == DUET_DTYPE_F64 && strncmp(arch, "sm_", 3) == 0) ? 2 : 1;
        for (int e = 0; e < engines; e++) {
            const dt_gemm_engine engine = e ? DT_GEMM_ENGINE_DMMA : DT_GEMM_ENGINE_FMA;
            dt_gemm_tile cand[32];
            const int nc = dt_gemm_candidates(arch, dtype, engine, cand, 32);
            int li = -1, si = -1;
            double lbest = INFINITY, sbest = INFINITY;
            for (int c = 0; c < nc && c < 32; c++) {
                dt_gemm_tuning row = *builtin;
                row.dtype = dtype;
                row.engine = engine;
                row.large = row.small = cand[c];
                row.large_waves = 1;
                row.split.fill = 1, row.split.large_fill = 0, row.split.max = 1; /* off */
                char txt[64];
                tile_text(&cand[c], txt, sizeof txt);
                fprintf(stderr, "[%s] %s candidate %d/%d: %s\n", dname(dtype), e ? "dmma" : "fma",
                        c + 1, nc, txt);
                time_row(arch, &row, dtype, probs, nsizes, t, 0);
                const double ls = score(t, probs, nsizes, 1), ss = score(t, probs, nsizes, 0);
                if (ls < lbest) lbest = ls, li = c;
                if (ss < sbest) sbest = ss, si = c;
            }
            if (li < 0 && si < 0) continue;
            if (li < 0) li = si;
            if (si < 0) si = li;
            dt_gemm_tuning row = *builtin;
            row.engine = engine;
            /* A class with no size measured keeps the built-in shape (same engine). */
            const int same_engine = engine == builtin->engine;
            row.large = have_large || !same_engine ? cand[li] : builtin->large;
            row.small = have_small || !same_engine ? cand[si] : builtin->small;
            if (engine != builtin->engine) {
                /* The split rule's fill is per engine's small shape: the row of the same
                 * engine from the default rows (or the built-in one) is the closer guess. */
                const dt_gemm_tuning *same =
                    dt_gemm_tuning_lookup(engine == DT_GEMM_ENGINE_DMMA ? "sm_80" : "sm_86", dtype);
                if (same && same->engine == engine) row.split = same->split;
            }
            time_row(arch, &row, dtype, probs, nsizes, t, 0);
            const double sc = score(t, probs, nsizes, -1);
            if (sc < best_score) best_score = sc, best = row;
        }
        /* Step 2: the choice rule. */
        if (memcmp(&best.large, &best.small, sizeof best.large) != 0) {
            static const int waves[] = {1, 2, 4, 8, 16};
            const int nw = quick ? 3 : 5;
            const int quick_waves[] = {1, 4, 16};
            dt_gemm_tuning row = best;
            double wbest = INFINITY;
            for (int w = 0; w < nw; w++) {
                row.large_waves = quick ? quick_waves[w] : waves[w];
                fprintf(stderr, "[%s] large_waves=%d\n", dname(dtype), row.large_waves);
                time_row(arch, &row, dtype, probs, nsizes, t, 0);
                const double sc = score(t, probs, nsizes, -1);
                if (sc < wbest) wbest = sc, best.large_waves = row.large_waves;
            }
        }
        /* Step 3: tuned against built-in, on every size. */
        fprintf(stderr, "[%s] tuned row\n", dname(dtype));
        time_row(arch, &best, dtype, probs, nsizes, t, 0);
        const double tuned = score(t, probs, nsizes, -1), built = score(base, probs, nsizes, -1);
        const int keep_builtin = !(tuned <= built);
        const dt_gemm_tuning *chosen = keep_builtin ? builtin : &best;
        printf("%s: built-in row (%s) against the tuned row, ms:\n", dname(dtype), builtin->arch);
        for (int i = 0; i < nsizes; i++)
            printf("  %6lldx%lldx%lld  built-in %9.3f  tuned %9.3f  (%.3fx)\n",
                   (long long)probs[i].s.m, (long long)probs[i].s.n, (long long)probs[i].s.k,
                   base[i], t[i], base[i] / t[i]);
        printf("  geometric mean: built-in %.3f, tuned %.3f: %s\n", built, tuned,
               keep_builtin ? "the built-in row is kept" : "the tuned row is written");
        char large[64], small[64];
        tile_text(&chosen->large, large, sizeof large);
        tile_text(&chosen->small, small, sizeof small);
        snprintf(lines[nlines++], sizeof lines[0],
                 "# %s: geometric mean over the sizes %.3f ms (built-in row %.3f ms)%s\n"
                 "%s %s %s large=%s small=%s large_waves=%d split=%d,%d,%d,%d,%d,%d edges=%d\n",
                 dname(dtype), keep_builtin ? built : tuned, built,
                 keep_builtin ? ": built-in kept" : "",
                 chosen->engine == DT_GEMM_ENGINE_DMMA ? "gemm.dmma" : "gemm.fma", arch,
                 dname(dtype), large, small, chosen->large_waves, chosen->split.fill,
                 chosen->split.large_fill, chosen->split.max, chosen->split.min_k,
                 chosen->split.min_depth, chosen->split.tail, chosen->split.edges);
        for (int i = 0; i < nsizes; i++) {
            free(probs[i].a);
            free(probs[i].b);
            free(probs[i].ref);
        }
    }
    char path[128];
    snprintf(path, sizeof path, "%s/candidate.txt", g_dir);
    remove(path);
    remove(g_dir);

    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "duet-tune: cannot write %s: %s\n", out, strerror(errno));
        return 1;
    }
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "duet-tuning 1\n# duet-tune%s on %.100s (%s), %s\n", quick ? " --quick" : "",
            props.name, arch, when);
    for (int i = 0; i < nsizes; i++)
        fprintf(f, "# size %lldx%lldx%lld\n", (long long)sizes[i].m, (long long)sizes[i].n,
                (long long)sizes[i].k);
    for (int i = 0; i < nlines; i++) fputs(lines[i], f);
    fclose(f);
    printf("duet-tune: wrote %s%s; use it with DUET_TUNING_FILE=%s or copy it to "
           "~/.config/duet/tuning.txt\n",
           out, g_failures ? " (some candidates failed their check: see above)" : "", out);
    return g_failures ? 3 : 0;
}
