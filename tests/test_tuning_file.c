/* test_tuning_file.c - tuning files: good ones applied, every kind of bad one refused with its
 * reason, the location rules. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp, mkdir */
#include "harness.h"

#include "common/tuning.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Two levels, both on every backend:
 *   - the loader itself (src/common/tuning_file.c, compiled into this program as test_split_rule
 *     compiles tuning.c), for any arch: which rows it keeps and why it refuses a file;
 *   - the public path: duet_context_create reads DUET_TUNING_FILE or the default location,
 *     duet_context_tuning_source says what happened, and on a GPU the AUTO GEMM's launch info
 *     names the row ("file:ARCH"); the cpu backend has no tuning rows and reports "-".
 */

static char g_dir[256];

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

#define SM90_F32                                                                                   \
    "gemm.fma sm_90 f32 large=128,64,16,8,4,256,3 small=128,64,16,8,4,256,2 large_waves=4\n"

/* Loads text as DUET_TUNING_FILE for arch; returns the set (caller frees). */
static dt_tuning_set *load_text(const char *text, const char *arch)
{
    setenv("DUET_TUNING_FILE", write_file("t.txt", text), 1);
    return dt_tuning_load(arch);
}

static void test_good(void)
{
    dt_tuning_set *s = load_text("# a comment line\n\nduet-tuning 1   # version\n" SM90_F32
                                 "gemm.dmma sm_90 f64 large=64,64,16,32,32,128,3 "
                                 "small=64,64,16,32,32,128,3 large_waves=2 split=3,0,8,256,4\n"
                                 "gemm.fma gfx90a f32 large=64,64,16,4,4,256,2 "
                                 "small=64,64,16,4,4,256,2 large_waves=1\n",
                                 "sm_90");
    DT_CHECK(s != NULL, "load returned NULL");
    if (!s) return;
    DT_CHECK(strncmp(dt_tuning_source(s), "file:", 5) == 0 &&
                 strstr(dt_tuning_source(s), "2 rows for sm_90") != NULL,
             "source '%s'", dt_tuning_source(s));
    int from_file = 0;
    const dt_gemm_tuning *r = dt_gemm_tuning_select(s, "sm_90", DUET_DTYPE_F32, &from_file);
    DT_CHECK(from_file && r && r->large.bm == 128 && r->large.bn == 64 && r->large.stages == 3 &&
                 r->small.stages == 2 && r->large_waves == 4 && strcmp(r->arch, "sm_90") == 0,
             "f32 row not taken from the file");
    /* No split= given: the built-in row's rule. */
    const dt_gemm_tuning *b = dt_gemm_tuning_lookup("sm_90", DUET_DTYPE_F32);
    DT_CHECK(r && b && memcmp(&r->split, &b->split, sizeof r->split) == 0, "split rule");
    r = dt_gemm_tuning_select(s, "sm_90", DUET_DTYPE_F64, &from_file);
    DT_CHECK(from_file && r && r->engine == DT_GEMM_ENGINE_DMMA && r->split.max == 8 &&
                 r->large_waves == 2,
             "f64 row not taken from the file");
    /* No i32 row in the file: the built-in one. */
    r = dt_gemm_tuning_select(s, "sm_90", DUET_DTYPE_I32, &from_file);
    DT_CHECK(!from_file && r == dt_gemm_tuning_lookup("sm_90", DUET_DTYPE_I32), "i32 row");
    dt_tuning_free(s);

    /* The same file on another device: its rows are ignored. */
    s = dt_tuning_load("sm_80");
    DT_CHECK(s && strstr(dt_tuning_source(s), "has no rows for sm_80") != NULL &&
                 strncmp(dt_tuning_source(s), "builtin", 7) == 0,
             "source '%s'", s ? dt_tuning_source(s) : "(null)");
    r = dt_gemm_tuning_select(s, "sm_80", DUET_DTYPE_F32, &from_file);
    DT_CHECK(!from_file && r == dt_gemm_tuning_lookup("sm_80", DUET_DTYPE_F32), "sm_80 row");
    dt_tuning_free(s);

    /* A feature suffix on the device's arch matches the plain name; the AMD-only shape is
     * accepted for a gfx arch. */
    s = dt_tuning_load("gfx90a:sramecc+:xnack-");
    r = dt_gemm_tuning_select(s, "gfx90a:sramecc+:xnack-", DUET_DTYPE_F32, &from_file);
    DT_CHECK(from_file && r && r->large.bm == 64 && r->large.tm == 4, "gfx90a row");
    dt_tuning_free(s);

    /* split= with six values sets the tail; with five it keeps the built-in row's tail. */
    s = load_text("duet-tuning 1\n"
                  "gemm.fma sm_90 f32 large=128,128,8,16,8,128,2 small=128,64,16,8,4,256,3 "
                  "large_waves=1 split=3,2,256,128,0,40\n"
                  "gemm.fma sm_90 i32 large=128,128,8,16,8,128,2 small=128,64,16,8,4,256,3 "
                  "large_waves=1 split=3,2,256,128,0\n",
                  "sm_90");
    r = dt_gemm_tuning_select(s, "sm_90", DUET_DTYPE_F32, &from_file);
    DT_CHECK(from_file && r && r->split.tail == 40 && r->split.min_k == 128, "f32 tail 40");
    r = dt_gemm_tuning_select(s, "sm_90", DUET_DTYPE_I32, &from_file);
    b = dt_gemm_tuning_lookup("sm_90", DUET_DTYPE_I32);
    DT_CHECK(from_file && r && b && b->split.tail > 0 && r->split.tail == b->split.tail,
             "i32 tail %d, built-in %d", r ? r->split.tail : -1, b ? b->split.tail : -1);
    dt_tuning_free(s);

    /* edges= sets the edge rules (after split=, which keeps the built-in's otherwise); without
     * it the row keeps the built-in row's. */
    s = load_text("duet-tuning 1\n"
                  "gemm.fma sm_90 f32 large=128,128,8,16,8,128,2 small=128,64,16,8,4,256,3 "
                  "large_waves=1 edges=1 split=3,2,256,128,0,75\n"
                  "gemm.fma sm_90 i32 large=128,128,8,16,8,128,2 small=128,64,16,8,4,256,3 "
                  "large_waves=1 split=3,2,256,128,0\n",
                  "sm_90");
    r = dt_gemm_tuning_select(s, "sm_90", DUET_DTYPE_F32, &from_file);
    DT_CHECK(from_file && r && r->split.edges == DT_GEMM_EDGE_STRIP && r->split.tail == 75,
             "f32 edges %d", r ? r->split.edges : -1);
    r = dt_gemm_tuning_select(s, "sm_90", DUET_DTYPE_I32, &from_file);
    DT_CHECK(from_file && r && b && b->split.edges == DT_GEMM_EDGE_STRIP + DT_GEMM_EDGE_PACK &&
                 r->split.edges == b->split.edges,
             "i32 edges %d, built-in %d", r ? r->split.edges : -1, b ? b->split.edges : -1);
    dt_tuning_free(s);
}

/* Every kind of bad file: the built-in table, the reason in the source. */
static void test_bad(void)
{
    static const struct {
        const char *text, *reason;
    } cases[] = {
        {"", "empty"},
        {"# only a comment\n", "empty"},
        {"duet-tuning 2\n" SM90_F32, "version 2"},
        {"duet-tuning one\n", "first line must be"},
        {SM90_F32, "first line must be"},
        {"duet-tuning 1\ngemm.wmma sm_90 f32 large=1 small=1 large_waves=1\n", "unknown family"},
        {"duet-tuning 1\ntranspose sm_90 f32\n", "unknown family"},
        {"duet-tuning 1\ngemm.fma sm_90 f16 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1\n",
         "dtype 'f16'"},
        /* A shape that no row names (not instantiated). */
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=256,128,8,16,8,256,2 "
         "small=128,64,16,8,4,256,3 large_waves=1\n",
         "256,128,8,16,8,256,2 is not compiled"},
        /* f64 shape for f32, and the AMD-only shape on an NVIDIA arch. */
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=64,64,8,4,4,256,2 "
         "small=128,64,16,8,4,256,3 large_waves=1\n",
         "is not compiled"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=64,64,16,4,4,256,2 "
         "small=128,64,16,8,4,256,3 large_waves=1\n",
         "is not compiled"},
        {"duet-tuning 1\ngemm.dmma sm_90 f32 large=64,64,16,32,32,128,3 "
         "small=64,64,16,32,32,128,3 large_waves=1\n",
         "gemm.dmma runs f64"},
        {"duet-tuning 1\ngemm.dmma gfx90a f64 large=64,64,16,32,32,128,3 "
         "small=64,64,16,32,32,128,3 large_waves=1\n",
         "gemm.dmma runs f64"},
        /* Garbage numbers. */
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3x "
         "small=128,64,16,8,4,256,3 large_waves=1\n",
         "seven integers"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256 "
         "small=128,64,16,8,4,256,3 large_waves=1\n",
         "seven integers"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,-64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1\n",
         "seven integers"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=99999999999999999999,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1\n",
         "seven integers"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=0\n",
         "large_waves=0"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 split=0,0,1,1,1\n",
         "split=0,0,1,1,1"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 split=3,2,256,128,0,101\n",
         "split=3,2,256,128,0,101"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 split=3,2,256,128,0,75,1\n",
         "min_depth[,tail]"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 split=3,2,256,128\n",
         "split=3,2,256,128 is not"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 edges=4\n",
         "edges=4 is not an integer in 0..3"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 edges=-1\n",
         "edges=-1 is not"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 edges=1 edges=1\n",
         "edges given twice"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 split=3,2,256,128,0,\n",
         "split=3,2,256,128,0, is not"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3\n",
         "needs large=, small= and large_waves="},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 large_waves=2\n",
         "given twice"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large=128,64,16,8,4,256,3 "
         "small=128,64,16,8,4,256,3 large_waves=1 colour=blue\n",
         "unknown key"},
        {"duet-tuning 1\ngemm.fma sm_90 f32 large_waves\n", "not key=value"},
        {"duet-tuning 1\ngemm.fma sm_90\n", "needs an arch and a dtype"},
        {"duet-tuning 1\ngemm.fma sm/90 f32 large_waves=1\n", "not an arch name"},
        {"duet-tuning 1\n" SM90_F32 SM90_F32, "a second row for sm_90 f32"},
        /* A bad row for another arch still refuses the file. */
        {"duet-tuning 1\n" SM90_F32 "gemm.fma sm_80 f32 large=1,1,1,1,1,1,1 "
         "small=128,64,16,8,4,256,3 large_waves=1\n",
         "line 3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dt_tuning_set *s = load_text(cases[i].text, "sm_90");
        DT_CHECK(s != NULL, "case %zu: NULL", i);
        if (!s) continue;
        const char *src = dt_tuning_source(s);
        DT_CHECK(strncmp(src, "builtin: ", 9) == 0 && strstr(src, cases[i].reason) != NULL,
                 "case %zu: source '%s', wanted '%s'", i, src, cases[i].reason);
        int from_file = 1;
        const dt_gemm_tuning *r = dt_gemm_tuning_select(s, "sm_90", DUET_DTYPE_F32, &from_file);
        DT_CHECK(!from_file && r == dt_gemm_tuning_lookup("sm_90", DUET_DTYPE_F32),
                 "case %zu: a row of a refused file was used", i);
        dt_tuning_free(s);
    }

    /* An overlong line, a NUL byte, binary junk. */
    char longline[600];
    memset(longline, 'x', sizeof longline);
    memcpy(longline, "duet-tuning 1\n#", 15);
    longline[sizeof longline - 2] = '\n';
    longline[sizeof longline - 1] = '\0';
    dt_tuning_set *s = load_text(longline, "sm_90");
    DT_CHECK(s && strstr(dt_tuning_source(s), "line 2 is longer than") != NULL, "long: '%s'",
             s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);
    {
        const char *path = write_file("nul.txt", "");
        FILE *f = fopen(path, "wb");
        static const char bytes[] = "duet-tuning 1\ngemm.fma\0 sm_90\n\xff\xfe\x01\n";
        if (f) {
            fwrite(bytes, 1, sizeof bytes - 1, f);
            fclose(f);
        }
        setenv("DUET_TUNING_FILE", path, 1);
        s = dt_tuning_load("sm_90");
        DT_CHECK(s && strstr(dt_tuning_source(s), "NUL byte") != NULL, "nul: '%s'",
                 s ? dt_tuning_source(s) : "(null)");
        dt_tuning_free(s);
    }

    /* An endless file. */
    setenv("DUET_TUNING_FILE", "/dev/zero", 1);
    s = dt_tuning_load("sm_90");
    DT_CHECK(s && strstr(dt_tuning_source(s), "longer than") != NULL, "/dev/zero: '%s'",
             s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);

    /* A missing file that the environment names; a directory. */
    setenv("DUET_TUNING_FILE", "/nonexistent/duet/tuning.txt", 1);
    s = dt_tuning_load("sm_90");
    DT_CHECK(s && strstr(dt_tuning_source(s), "cannot open") != NULL, "missing: '%s'",
             s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);
    setenv("DUET_TUNING_FILE", g_dir, 1);
    s = dt_tuning_load("sm_90");
    DT_CHECK(s && strncmp(dt_tuning_source(s), "builtin: ", 9) == 0, "directory: '%s'",
             s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);
    /* Empty: tuning files off, even with a default file present. */
    setenv("DUET_TUNING_FILE", "", 1);
    s = dt_tuning_load("sm_90");
    DT_CHECK(s && strstr(dt_tuning_source(s), "tuning files off") != NULL, "empty: '%s'",
             s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);
}

/* The default location: $XDG_CONFIG_HOME/duet/tuning.txt, else $HOME/.config/duet/tuning.txt;
 * a missing default file is simply "builtin". */
static void test_locations(void)
{
    char dir[600];
    unsetenv("DUET_TUNING_FILE");
    setenv("XDG_CONFIG_HOME", g_dir, 1);
    dt_tuning_set *s = dt_tuning_load("sm_90");
    DT_CHECK(s && strcmp(dt_tuning_source(s), "builtin") == 0, "no default file: '%s'",
             s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);
    snprintf(dir, sizeof dir, "%s/duet", g_dir);
    mkdir(dir, 0700);
    write_file("duet/tuning.txt", "duet-tuning 1\n" SM90_F32);
    s = dt_tuning_load("sm_90");
    DT_CHECK(s && strncmp(dt_tuning_source(s), "file:", 5) == 0 &&
                 strstr(dt_tuning_source(s), "/duet/tuning.txt") != NULL,
             "XDG: '%s'", s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);
    /* A relative XDG_CONFIG_HOME is ignored (the XDG rule): HOME's .config is used. */
    setenv("XDG_CONFIG_HOME", "relative", 1);
    setenv("HOME", g_dir, 1);
    s = dt_tuning_load("sm_90");
    DT_CHECK(s && strcmp(dt_tuning_source(s), "builtin") == 0, "HOME, no file: '%s'",
             s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);
    snprintf(dir, sizeof dir, "%s/.config", g_dir);
    mkdir(dir, 0700);
    snprintf(dir, sizeof dir, "%s/.config/duet", g_dir);
    mkdir(dir, 0700);
    write_file(".config/duet/tuning.txt", "duet-tuning 1\n" SM90_F32);
    s = dt_tuning_load("sm_90");
    DT_CHECK(s && strstr(dt_tuning_source(s), ".config/duet/tuning.txt") != NULL &&
                 strncmp(dt_tuning_source(s), "file:", 5) == 0,
             "HOME: '%s'", s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);
    /* DUET_TUNING_FILE wins over the default location. */
    setenv("DUET_TUNING_FILE", write_file("other.txt", "duet-tuning 1\n"), 1);
    s = dt_tuning_load("sm_90");
    DT_CHECK(s && strstr(dt_tuning_source(s), "other.txt has no rows") != NULL, "env: '%s'",
             s ? dt_tuning_source(s) : "(null)");
    dt_tuning_free(s);
}

/* Through the library: a context reads the file at creation, never fails because of it. */
static void test_context(void)
{
    duet_context *ctx = dt_open_or_skip();
    duet_device_props props;
    DT_OK(duet_context_get_props(ctx, &props));
    DT_OK(duet_context_destroy(ctx));
    char arch[32];
    snprintf(arch, sizeof arch, "%.*s", (int)strcspn(props.arch, ":"), props.arch);

    /* A bad file: the context is created, the source says why. */
    setenv("DUET_TUNING_FILE", write_file("bad.txt", "duet-tuning 9\n"), 1);
    DT_OK(duet_context_create(0, &ctx));
    const char *src = NULL;
    DT_OK(duet_context_tuning_source(ctx, &src));
    DT_CHECK(src && strstr(src, "version 9") != NULL, "source '%s'", src ? src : "(null)");
    DT_FAILS(duet_context_tuning_source(ctx, NULL), DUET_ERROR_INVALID_ARGUMENT, "text");
    DT_FAILS(duet_context_tuning_source(NULL, &src), DUET_ERROR_INVALID_HANDLE, "ctx");
    DT_OK(duet_context_destroy(ctx));

    /* A good file for this device: f32 on the register-staged 128 x 64 x 16 shape, which
     * every GPU build compiles. */
    char text[512];
    snprintf(text, sizeof text,
             "duet-tuning 1\ngemm.fma %s f32 large=128,64,16,8,4,256,2 "
             "small=128,64,16,8,4,256,2 large_waves=1\n",
             arch);
    setenv("DUET_TUNING_FILE", write_file("good.txt", text), 1);
    DT_OK(duet_context_create(0, &ctx));
    DT_OK(duet_context_tuning_source(ctx, &src));
    DT_CHECK(src && strncmp(src, "file:", 5) == 0, "source '%s'", src ? src : "(null)");

    /* An AUTO f32 gemm: right result; the launch info names the row. */
    /* Past the compact small-problem kernel's reach (10 k-steps; gemm_plan.h, DT_TINY_STEPS),
     * which has no tuning row: the tuning table's family runs it. */
    enum { M = 70, N = 90, K = 160 };
    duet_buffer *ba = NULL, *bb = NULL, *bc = NULL;
    DT_OK(duet_buffer_create(ctx, sizeof(float) * M * K, &ba));
    DT_OK(duet_buffer_create(ctx, sizeof(float) * K * N, &bb));
    DT_OK(duet_buffer_create(ctx, sizeof(float) * M * N, &bc));
    static float a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)dt_rand_int(-4, 4);
    for (int i = 0; i < K * N; i++) b[i] = (float)dt_rand_int(-4, 4);
    duet_stream *st = NULL;
    DT_OK(duet_context_default_stream(ctx, &st));
    DT_OK(duet_buffer_write(st, ba, 0, a, sizeof a));
    DT_OK(duet_buffer_write(st, bb, 0, b, sizeof b));
    duet_matrix ma = duet_matrix_make(ba, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, K);
    duet_matrix mb = duet_matrix_make(bb, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, K, N);
    duet_matrix mc = duet_matrix_make(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, N);
    duet_launch_info info;
    memset(&info, 0x5a, sizeof info);
    duet_op_options opt = {0};
    opt.info = &info;
    DT_OK(duet_gemm(st, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, 0.0, &mc, &opt));
    DT_OK(duet_buffer_read(st, bc, 0, c, sizeof c));
    int wrong = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0;
            for (int p = 0; p < K; p++) ref += (double)a[i * K + p] * b[p * N + j];
            wrong += c[i * N + j] != (float)ref;
        }
    DT_CHECK(wrong == 0, "%d wrong elements", wrong);
    DT_CHECK(memchr(info.tuning, '\0', sizeof info.tuning) != NULL, "tuning not terminated");
    if (strcmp(arch, "host") == 0) {
        DT_CHECK(strcmp(info.tuning, "-") == 0, "cpu tuning '%.32s'", info.tuning);
    } else {
        char want[48];
        snprintf(want, sizeof want, "file:%s", arch);
        DT_CHECK(strcmp(info.tuning, want) == 0, "tuning '%.32s', wanted '%s' (kernel %s)",
                 info.tuning, want, info.kernel);
    }
    DT_OK(duet_buffer_destroy(ba));
    DT_OK(duet_buffer_destroy(bb));
    DT_OK(duet_buffer_destroy(bc));
    DT_OK(duet_context_destroy(ctx));

    /* Without a file, a GPU reports the built-in row. */
    setenv("DUET_TUNING_FILE", "", 1);
    DT_OK(duet_context_create(0, &ctx));
    DT_OK(duet_context_tuning_source(ctx, &src));
    DT_CHECK(src && strstr(src, "tuning files off") != NULL, "source '%s'", src ? src : "(null)");
    DT_OK(duet_buffer_create(ctx, sizeof(float) * (M * N + M * K + K * N), &bc));
    DT_OK(duet_context_default_stream(ctx, &st));
    mc = duet_matrix_make(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, N);
    ma = duet_matrix_make(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, M, K);
    ma.offset = (size_t)M * N;
    mb = duet_matrix_make(bc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, K, N);
    mb.offset = (size_t)M * N + (size_t)M * K;
    DT_OK(duet_gemm(st, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, 0.0, &mc, &opt));
    DT_CHECK(strcmp(arch, "host") == 0 ? strcmp(info.tuning, "-") == 0
                                       : strncmp(info.tuning, "builtin:", 8) == 0,
             "tuning '%.32s'", info.tuning);
    DT_OK(duet_buffer_destroy(bc));
    DT_OK(duet_context_destroy(ctx));
}

int main(void)
{
    dt_seed(10);
    snprintf(g_dir, sizeof g_dir, "/tmp/duet_tuning_XXXXXX");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    /* The verbose report goes to stderr: exercised, not checked. */
    setenv("DUET_TUNING_VERBOSE", "1", 1);
    test_good();
    test_bad();
    test_locations();
    test_context();
    static const char *const made[] = {
        "t.txt",        "nul.txt",         "bad.txt", "good.txt",
        "other.txt",    "duet/tuning.txt", "duet",    ".config/duet/tuning.txt",
        ".config/duet", ".config"};
    char path[600];
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", g_dir, made[i]);
        remove(path);
    }
    remove(g_dir);
    return dt_finish("test_tuning_file");
}
