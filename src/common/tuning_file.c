/* tuning_file.c - tuning files: read, validated and kept per context; rows consulted before the
 * built-in table. */
#include "tuning.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The format (docs/tuning.md):
 *
 *     duet-tuning 1
 *     # comment
 *     gemm.fma  sm_90 f32 large=128,128,8,16,8,128,2 small=128,64,16,8,4,256,3 large_waves=1
 *     gemm.dmma sm_90 f64 large=... small=... large_waves=16 split=3,0,256,256,4
 *     gemm.fma  sm_90 i32 large=... small=... large_waves=1 split=3,2,256,128,0,75 edges=3
 *
 * A file is used whole or not at all: one malformed line and the context keeps the built-in
 * table (a half-applied file would be a table nobody measured). Rows for another arch are
 * checked and skipped, so one file can serve several machines.
 */

#define TF_VERSION    1
#define TF_LINE_MAX   255  /* characters, without the newline */
#define TF_LINES_MAX  4096 /* a tuning file is a few dozen lines: more is not one */
#define TF_ROWS_MAX   64   /* rows kept for one arch: a few per dtype is all there is */
#define TF_SOURCE_MAX 512

struct dt_tuning_set {
    char source[TF_SOURCE_MAX];
    int rows;
    char arch[TF_ROWS_MAX][32];
    dt_gemm_tuning row[TF_ROWS_MAX];
};

/* a equals key up to a ':' feature suffix of a (the built-in table's rule). */
static int arch_is(const char *a, const char *key)
{
    size_t n = strcspn(a, ":");
    return strlen(key) == n && strncmp(a, key, n) == 0;
}

static void set_source(dt_tuning_set *set, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(set->source, sizeof set->source, fmt, ap);
    va_end(ap);
}

/* A whole non-negative decimal in [lo, hi] from s up to end; 0 on anything else. */
static int parse_int(const char *s, const char *end, long lo, long hi, int *out)
{
    if (s == end || end - s > 9) return 0;
    long v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9') return 0;
        v = 10 * v + (*p - '0');
    }
    if (v < lo || v > hi) return 0;
    *out = (int)v;
    return 1;
}

/* n comma-separated integers in [lo, hi] (value of a key=...). */
static int parse_list(const char *s, int n, long lo, long hi, int *out)
{
    for (int i = 0; i < n; i++) {
        const char *end = s + strcspn(s, ",");
        if (!parse_int(s, end, lo, hi, &out[i])) return 0;
        if (i + 1 < n && *end != ',') return 0;
        if (i + 1 == n && *end != '\0') return 0;
        s = end + 1;
    }
    return 1;
}

static int count_commas(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == ',';
    return n;
}

static int parse_tile(const char *s, dt_gemm_tile *t)
{
    int v[7];
    if (!parse_list(s, 7, 1, 1024, v)) return 0;
    t->bm = v[0], t->bn = v[1], t->bk = v[2], t->tm = v[3], t->tn = v[4];
    t->threads = v[5], t->stages = v[6];
    return 1;
}

static int tile_compiled(const char *arch, duet_dtype dtype, dt_gemm_engine engine,
                         const dt_gemm_tile *t)
{
    dt_gemm_tile c[32];
    const int n = dt_gemm_candidates(arch, dtype, engine, c, 32);
    for (int i = 0; i < n && i < 32; i++)
        if (c[i].bm == t->bm && c[i].bn == t->bn && c[i].bk == t->bk && c[i].tm == t->tm &&
            c[i].tn == t->tn && c[i].threads == t->threads && c[i].stages == t->stages)
            return 1;
    return 0;
}

static int arch_token_ok(const char *a)
{
    const size_t n = strlen(a);
    if (n == 0 || n >= 32) return 0;
    for (size_t i = 0; i < n; i++) {
        const char c = a[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

/* Splits line (modified) into at most max whitespace-separated words; returns the count, or
 * max + 1 when there are more. */
static int split_words(char *line, char **w, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (!*p) return n;
        if (n == max) return max + 1;
        w[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r') p++;
        if (*p) *p++ = '\0';
    }
}

static const char *tile_str(const dt_gemm_tile *t, char *buf, size_t size)
{
    snprintf(buf, size, "%d,%d,%d,%d,%d,%d,%d", t->bm, t->bn, t->bk, t->tm, t->tn, t->threads,
             t->stages);
    return buf;
}

/* One row line (words w[0..n)); on error writes why to err and returns 0. Keeps the row when
 * it is for arch. */
static int parse_row(dt_tuning_set *set, const char *arch, char **w, int n, char *err,
                     size_t err_size)
{
    dt_gemm_engine engine;
    if (strcmp(w[0], "gemm.fma") == 0)
        engine = DT_GEMM_ENGINE_FMA;
    else if (strcmp(w[0], "gemm.dmma") == 0)
        engine = DT_GEMM_ENGINE_DMMA;
    else {
        snprintf(err, err_size, "unknown family '%.40s' (gemm.fma, gemm.dmma)", w[0]);
        return 0;
    }
    if (n < 3) {
        snprintf(err, err_size, "%s needs an arch and a dtype", w[0]);
        return 0;
    }
    if (!arch_token_ok(w[1])) {
        snprintf(err, err_size, "arch '%.40s' is not an arch name", w[1]);
        return 0;
    }
    duet_dtype dtype;
    if (strcmp(w[2], "f32") == 0)
        dtype = DUET_DTYPE_F32;
    else if (strcmp(w[2], "f64") == 0)
        dtype = DUET_DTYPE_F64;
    else if (strcmp(w[2], "i32") == 0)
        dtype = DUET_DTYPE_I32;
    else {
        snprintf(err, err_size, "dtype '%.40s' has no AUTO GEMM table (f32, f64, i32)", w[2]);
        return 0;
    }
    if (engine == DT_GEMM_ENGINE_DMMA &&
        (dtype != DUET_DTYPE_F64 || strncmp(w[1], "sm_", 3) != 0)) {
        snprintf(err, err_size, "gemm.dmma runs f64 on NVIDIA sm_80 and newer only");
        return 0;
    }
    /* The split rule defaults to the built-in row's for this arch. */
    const dt_gemm_tuning *builtin = dt_gemm_tuning_lookup(w[1], dtype);
    dt_gemm_tuning row;
    memset(&row, 0, sizeof row);
    row.dtype = dtype;
    row.engine = engine;
    if (builtin) row.split = builtin->split;
    int have_large = 0, have_small = 0, have_waves = 0, have_split = 0, have_edges = 0;
    for (int i = 3; i < n; i++) {
        char *eq = strchr(w[i], '=');
        if (!eq) {
            snprintf(err, err_size, "'%.40s' is not key=value", w[i]);
            return 0;
        }
        *eq = '\0';
        const char *key = w[i], *val = eq + 1;
        int ok = 1, *have = NULL;
        if (strcmp(key, "large") == 0) {
            have = &have_large;
            ok = parse_tile(val, &row.large);
        } else if (strcmp(key, "small") == 0) {
            have = &have_small;
            ok = parse_tile(val, &row.small);
        } else if (strcmp(key, "large_waves") == 0) {
            have = &have_waves;
            ok = parse_int(val, val + strlen(val), 1, 1024, &row.large_waves);
        } else if (strcmp(key, "split") == 0) {
            /* Five values keep the built-in row's tail (files written before it existed). */
            int v[6];
            have = &have_split;
            const int count = 1 + count_commas(val);
            ok = (count == 5 || count == 6) && parse_list(val, count, 0, 1 << 24, v);
            if (ok) {
                row.split.fill = v[0], row.split.large_fill = v[1], row.split.max = v[2];
                row.split.min_k = v[3], row.split.min_depth = v[4];
                if (count == 6) row.split.tail = v[5];
                ok = v[0] >= 1 && v[0] <= 64 && v[1] <= 64 && v[2] <= 4096 && v[4] <= 1024 &&
                     (count == 5 || v[5] <= 100);
            }
        } else if (strcmp(key, "edges") == 0) {
            have = &have_edges;
            ok = parse_int(val, val + strlen(val), 0, DT_GEMM_EDGE_STRIP + DT_GEMM_EDGE_PACK,
                           &row.split.edges);
        } else {
            snprintf(err, err_size, "unknown key '%.40s' (large, small, large_waves, split, edges)",
                     key);
            return 0;
        }
        if (*have) {
            snprintf(err, err_size, "%s given twice", key);
            return 0;
        }
        *have = 1;
        if (!ok) {
            snprintf(err, err_size, "%s=%.60s is not %s", key, val,
                     have == &have_split   ? "fill,large_fill,max,min_k,min_depth[,tail] in range"
                     : have == &have_waves ? "an integer in 1..1024"
                     : have == &have_edges ? "an integer in 0..3"
                                           : "seven integers bm,bn,bk,tm,tn,threads,stages");
            return 0;
        }
    }
    if (!have_large || !have_small || !have_waves) {
        snprintf(err, err_size, "%s needs large=, small= and large_waves=", w[0]);
        return 0;
    }
    const dt_gemm_tile *tiles[2] = {&row.large, &row.small};
    for (int j = 0; j < 2; j++)
        if (!tile_compiled(w[1], dtype, engine, tiles[j])) {
            char b[64];
            snprintf(err, err_size, "%s %s shape %s is not compiled into this library", w[0], w[2],
                     tile_str(tiles[j], b, sizeof b));
            return 0;
        }
    if (!arch || !arch_is(arch, w[1])) return 1; /* valid, for another device */
    for (int r = 0; r < set->rows; r++)
        if (set->row[r].dtype == dtype) {
            snprintf(err, err_size, "a second row for %s %s", w[1], w[2]);
            return 0;
        }
    if (set->rows == TF_ROWS_MAX) {
        snprintf(err, err_size, "more than %d rows for %s", TF_ROWS_MAX, w[1]);
        return 0;
    }
    snprintf(set->arch[set->rows], sizeof set->arch[0], "%s", w[1]);
    row.arch = set->arch[set->rows];
    set->row[set->rows++] = row;
    return 1;
}

/* Reads f; 1 when every line is valid (rows for arch kept), else 0 with err set. */
static int parse_file(dt_tuning_set *set, const char *arch, FILE *f, char *err, size_t err_size)
{
    char line[TF_LINE_MAX + 1];
    int lineno = 0, seen_version = 0;
    char why[256];
    for (;;) {
        /* One line by hand: fgets could not tell a NUL byte from the line's end. */
        size_t len = 0;
        int c, nul = 0, any = 0;
        while ((c = getc(f)) != EOF && c != '\n') {
            any = 1;
            if (c == '\0') nul = 1;
            if (len == TF_LINE_MAX) { /* stop reading: the file may be endless (/dev/zero) */
                len++;
                break;
            }
            line[len++] = (char)c;
        }
        if (c == EOF && !any) break;
        if (++lineno > TF_LINES_MAX) {
            snprintf(err, err_size, "more than %d lines", TF_LINES_MAX);
            return 0;
        }
        if (len > TF_LINE_MAX) {
            snprintf(err, err_size, "line %d is longer than %d characters", lineno, TF_LINE_MAX);
            return 0;
        }
        line[len] = '\0';
        if (nul) {
            snprintf(err, err_size, "line %d holds a NUL byte", lineno);
            return 0;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *w[16];
        const int n = split_words(line, w, 15);
        if (n == 0) continue;
        if (n > 15) {
            snprintf(err, err_size, "line %d has too many words", lineno);
            return 0;
        }
        if (!seen_version) {
            int v = 0;
            if (n != 2 || strcmp(w[0], "duet-tuning") != 0 ||
                !parse_int(w[1], w[1] + strlen(w[1]), 0, 1000000, &v)) {
                snprintf(err, err_size, "line %d: the first line must be 'duet-tuning %d'", lineno,
                         TF_VERSION);
                return 0;
            }
            if (v != TF_VERSION) {
                snprintf(err, err_size, "line %d: version %d (this library reads version %d)",
                         lineno, v, TF_VERSION);
                return 0;
            }
            seen_version = 1;
            continue;
        }
        if (!parse_row(set, arch, w, n, why, sizeof why)) {
            snprintf(err, err_size, "line %d: %s", lineno, why);
            return 0;
        }
    }
    if (ferror(f)) {
        snprintf(err, err_size, "read error");
        return 0;
    }
    if (!seen_version) {
        snprintf(err, err_size, "empty (no 'duet-tuning %d' line)", TF_VERSION);
        return 0;
    }
    return 1;
}

static int verbose(void)
{
    const char *v = getenv("DUET_TUNING_VERBOSE");
    return v && strcmp(v, "1") == 0;
}

dt_tuning_set *dt_tuning_load(const char *arch)
{
    dt_tuning_set *set = (dt_tuning_set *)calloc(1, sizeof *set);
    if (!set) return NULL;
    snprintf(set->source, sizeof set->source, "builtin");
    char path[1024];
    int named = 0; /* the environment named the file: its absence is worth reporting */
    const char *env = getenv("DUET_TUNING_FILE");
    if (env) {
        if (!*env) {
            set_source(set, "builtin: DUET_TUNING_FILE is empty (tuning files off)");
            return set;
        }
        if (strlen(env) >= sizeof path) {
            set_source(set, "builtin: DUET_TUNING_FILE is longer than %zu characters",
                       sizeof path - 1);
            if (verbose()) fprintf(stderr, "duet: %s\n", set->source);
            return set;
        }
        snprintf(path, sizeof path, "%s", env);
        named = 1;
    } else {
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        int n = -1;
        if (xdg && xdg[0] == '/')
            n = snprintf(path, sizeof path, "%s/duet/tuning.txt", xdg);
        else if (home && home[0])
            n = snprintf(path, sizeof path, "%s/.config/duet/tuning.txt", home);
        if (n < 0 || (size_t)n >= sizeof path) return set;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        if (named) {
            set_source(set, "builtin: %.400s: cannot open (%s)", path, strerror(errno));
            if (verbose()) fprintf(stderr, "duet: tuning file %s\n", set->source + 9);
        }
        return set;
    }
    char err[300];
    const int ok = parse_file(set, arch, f, err, sizeof err);
    fclose(f);
    if (!ok) {
        set->rows = 0;
        set_source(set, "builtin: %.400s %s", path, err);
        if (verbose())
            fprintf(stderr, "duet: tuning file %.400s %s; the built-in table is used\n", path, err);
    } else if (set->rows == 0) {
        set_source(set, "builtin: %.400s has no rows for %.31s", path, arch ? arch : "?");
    } else {
        set_source(set, "file:%.400s (%d rows for %.31s)", path, set->rows, arch);
    }
    return set;
}

void dt_tuning_free(dt_tuning_set *set) { free(set); }

const char *dt_tuning_source(const dt_tuning_set *set) { return set ? set->source : "builtin"; }

const dt_gemm_tuning *dt_gemm_tuning_select(const dt_tuning_set *set, const char *arch,
                                            duet_dtype dtype, int *from_file)
{
    *from_file = 0;
    for (int r = 0; set && r < set->rows; r++)
        if (set->row[r].dtype == dtype) {
            *from_file = 1;
            return &set->row[r];
        }
    return dt_gemm_tuning_lookup(arch, dtype);
}
