/* seed_util.h - what the seed programs share: opening the device, numpy-style printing, random data, checks and timers. */
#ifndef DUET_SEED_UTIL_H
#define DUET_SEED_UTIL_H

#include <duet/duet.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What CTest reads as "skipped" (SKIP_RETURN_CODE 77): the backend cannot run the program. */
#define SEED_SKIP 77

/* A call that must succeed; anything else ends the program with its message (exit 1). */
#define SEED_OK(call)                                                                        \
    do {                                                                                     \
        duet_status seed_s_ = (call);                                                        \
        if (seed_s_ != DUET_SUCCESS) {                                                       \
            fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,              \
                    duet_status_string(seed_s_), duet_last_error());                         \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* Device 0 of the built backend, or exit 77 with the reason when there is none. */
static inline duet_context *seed_open(const char *program)
{
    int count = 0;
    duet_status s = duet_device_count(&count);
    if (s == DUET_ERROR_NO_DEVICE || (s == DUET_SUCCESS && count < 1)) {
        printf("%s: skipped: no device for the %s backend: %s\n", program, duet_backend_name(),
               duet_last_error());
        exit(SEED_SKIP);
    }
    SEED_OK(s);
    duet_context *ctx = NULL;
    s = duet_context_create(0, &ctx);
    if (s == DUET_ERROR_NO_DEVICE) {
        printf("%s: skipped: device 0 of the %s backend cannot be opened: %s\n", program,
               duet_backend_name(), duet_last_error());
        exit(SEED_SKIP);
    }
    SEED_OK(s);
    duet_device_props p;
    SEED_OK(duet_context_get_props(ctx, &p));
    printf("# %s on the %s backend: %s (%s)\n", program, duet_backend_name(), p.name, p.arch);
    return ctx;
}

/* Creates a module from source; on a backend without runtime compilation (cpu) returns NULL
 * after saying so, and the caller skips what needs it. Any other failure ends the program. */
static inline duet_module *seed_module(duet_context *ctx, const char *source)
{
    duet_module *m = NULL;
    duet_status s = duet_module_create(ctx, source, NULL, &m);
    if (s == DUET_ERROR_UNSUPPORTED) {
        printf("skipped: the %s backend has no runtime compilation (%s)\n", duet_backend_name(),
               duet_last_error());
        return NULL;
    }
    if (s != DUET_SUCCESS) {
        fprintf(stderr, "duet_module_create -> %s: %s\n%s\n", duet_status_string(s),
                duet_last_error(), duet_last_compile_log());
        exit(1);
    }
    return m;
}

static inline double seed_now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- deterministic random numbers (xorshift64*), like numpy's random and randn ------------- */

static uint64_t seed_rng_state = 0x2545F4914F6CDD1Dull;

static inline double seed_random(void) /* uniform in [0, 1) */
{
    seed_rng_state ^= seed_rng_state >> 12;
    seed_rng_state ^= seed_rng_state << 25;
    seed_rng_state ^= seed_rng_state >> 27;
    return (double)((seed_rng_state * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

static inline double seed_randn(void) /* standard normal (Box-Muller) */
{
    double u1 = seed_random(), u2 = seed_random();
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- numpy-style printing ------------------------------------------------------------------ */

/* print(array) as numpy writes it: 75 columns, arrays over 1000 elements summarised to their
 * first and last 3 rows and columns, integral floats as "6.", others with up to 8 decimals and
 * the points aligned. */
#define SEED_WIDTH 75
#define SEED_WORD 48

typedef struct seed_words {
    int64_t idx[7];
    int n;   /* shown indices */
    int gap; /* "..." after the third */
} seed_words;

static inline void seed_pick(int64_t len, int summarise, seed_words *w)
{
    w->gap = summarise && len > 6;
    w->n = 0;
    if (w->gap) {
        for (int i = 0; i < 3; i++) w->idx[w->n++] = i;
        for (int i = 3; i > 0; i--) w->idx[w->n++] = len - i;
    } else {
        for (int64_t i = 0; i < len && i < 7; i++) w->idx[w->n++] = i;
    }
}

/* Appends word to the row being laid out, wrapping like numpy's _extendLine. */
static inline void seed_extend(char *s, char *line, const char *word, size_t width,
                               const char *indent)
{
    if (strlen(line) + strlen(word) > width) {
        size_t n = strlen(line);
        while (n > 0 && line[n - 1] == ' ') line[--n] = '\0';
        strcat(s, line);
        strcat(s, "\n");
        strcpy(line, indent);
    }
    strcat(line, word);
}

typedef double (*seed_getter)(const void *data, int64_t index);
static inline double seed_get_f64(const void *data, int64_t i) { return ((const double *)data)[i]; }
static inline double seed_get_i32(const void *data, int64_t i)
{
    return ((const int32_t *)data)[i];
}

/* data is row-major rows x cols, read through get; ndim 1 prints a vector (rows must be 1).
 * Only the shown elements are read, so a summarised matrix may be of any size. */
static inline void seed_print_any(const void *data, seed_getter get, int64_t rows, int64_t cols,
                                  int ndim, int is_int)
{
    const int summarise = rows * cols > 1000;
    seed_words r, c;
    seed_pick(rows, summarise, &r);
    seed_pick(cols, summarise, &c);
    if (!summarise) r.n = c.n = 0; /* every index, in order */
    const int64_t nr = r.n ? r.n : rows, nc = c.n ? c.n : cols;
#define SEED_AT(i, j) get(data, (r.n ? r.idx[i] : (i)) * cols + (c.n ? c.idx[j] : (j)))
    int integral = 1;
    for (int64_t i = 0; i < nr; i++)
        for (int64_t j = 0; j < nc; j++) {
            double v = SEED_AT(i, j);
            if (!is_int && (v != floor(v) || fabs(v) >= 1e16)) integral = 0;
        }
    /* Widths of the integer part and the fraction, over the shown values. */
    size_t wi = 0, wf = 0;
    char buf[SEED_WORD];
    for (int64_t i = 0; i < nr; i++)
        for (int64_t j = 0; j < nc; j++) {
            double v = SEED_AT(i, j);
            if (is_int || integral) {
                snprintf(buf, sizeof buf, "%.0f", v);
                if (strlen(buf) > wi) wi = strlen(buf);
            } else {
                snprintf(buf, sizeof buf, "%.8f", v);
                size_t n = strlen(buf);
                while (buf[n - 1] == '0') buf[--n] = '\0';
                char *dot = strchr(buf, '.');
                size_t ip = (size_t)(dot - buf), fp = n - ip - 1;
                if (ip > wi) wi = ip;
                if (fp > wf) wf = fp;
            }
        }
    /* Enough for any shown array: at most 7 x 7 words, or a full row of 1000 words. */
    size_t cap = (size_t)(nr + 2) * ((size_t)nc + 4) * (wi + wf + 8) + 4096;
    char *out = (char *)malloc(cap), *s = (char *)malloc(cap);
    char line[4 * SEED_WIDTH];
    if (!out || !s) exit(1);
    const char *indent = ndim == 1 ? " " : "  ";
    const size_t width = ndim == 1 ? SEED_WIDTH - 1 : SEED_WIDTH - 2;
    out[0] = '\0';
    for (int64_t i = 0; i < nr; i++) {
        s[0] = '\0';
        strcpy(line, indent);
        for (int64_t j = 0; j < nc; j++) {
            double v = SEED_AT(i, j);
            char word[SEED_WORD];
            if (is_int) {
                snprintf(word, sizeof word, "%*.0f", (int)wi, v);
            } else if (integral) {
                snprintf(word, sizeof word, "%*.0f.", (int)wi, v);
            } else {
                snprintf(buf, sizeof buf, "%.8f", v);
                size_t n = strlen(buf);
                while (buf[n - 1] == '0') buf[--n] = '\0';
                char *dot = strchr(buf, '.');
                *dot = '\0';
                snprintf(word, sizeof word, "%*s.%-*s", (int)wi, buf, (int)wf, dot + 1);
            }
            seed_extend(s, line, word, width, indent);
            if (j + 1 < nc) strcat(line, " ");
            if (c.gap && j == 2) {
                seed_extend(s, line, "...", width, indent);
                strcat(line, " ");
            }
        }
        strcat(s, line);
        /* Each row is "[" + its text without the indent + "]". */
        if (ndim == 1) {
            strcat(out, "[");
            strcat(out, s + strlen(indent));
            strcat(out, "]");
        } else {
            strcat(out, i == 0 ? "[[" : "\n [");
            strcat(out, s + strlen(indent));
            strcat(out, "]");
            if (r.gap && i == 2) strcat(out, "\n ...");
        }
    }
    if (ndim != 1) strcat(out, "]");
    puts(out);
    free(out);
    free(s);
#undef SEED_AT
}

static inline void seed_print(const double *data, int64_t rows, int64_t cols, int ndim,
                              int is_int)
{
    seed_print_any(data, seed_get_f64, rows, cols, ndim, is_int);
}

/* ---- checks ---------------------------------------------------------------------------------- */

/* Counts elements where |got - want| > atol + rtol * |want| (numpy's isclose); prints the first
 * few. */
static inline int64_t seed_mismatches(const char *what, const double *got, const double *want,
                                      int64_t n, double rtol, double atol)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        if (!(d <= atol + rtol * fabs(want[i]))) {
            if (bad < 3)
                fprintf(stderr, "%s: element %lld is %.9g, want %.9g\n", what, (long long)i,
                        got[i], want[i]);
            bad++;
        }
    }
    if (bad)
        fprintf(stderr, "%s: %lld of %lld elements differ\n", what, (long long)bad,
                (long long)n);
    return bad;
}

/* Host C = A * B in double, row-major (the reference the programs check against). */
static inline void seed_host_matmul(const double *a, const double *b, double *c, int64_t m,
                                    int64_t k, int64_t n)
{
    for (int64_t i = 0; i < m * n; i++) c[i] = 0.0;
    /* i-k-j order: the inner loop runs along rows of B and C, which the compiler vectorizes. */
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++) {
            const double aip = a[i * k + p];
            for (int64_t j = 0; j < n; j++) c[i * n + j] += aip * b[p * n + j];
        }
}

/* A device matrix of dtype filled from doubles (NULL: left unwritten). */
static inline duet_matrix seed_matrix(duet_context *ctx, duet_dtype dtype, int64_t rows,
                                      int64_t cols, const double *values)
{
    duet_buffer *buf = NULL;
    const size_t n = (size_t)(rows * cols), es = duet_dtype_size(dtype);
    SEED_OK(duet_buffer_create(ctx, n * es, &buf));
    if (values) {
        unsigned char *h = (unsigned char *)malloc(n * es + 1);
        if (!h) exit(1);
        for (size_t i = 0; i < n; i++) {
            if (dtype == DUET_DTYPE_F32) ((float *)h)[i] = (float)values[i];
            else if (dtype == DUET_DTYPE_F64) ((double *)h)[i] = values[i];
            else ((int32_t *)h)[i] = (int32_t)values[i];
        }
        SEED_OK(duet_buffer_write(NULL, buf, 0, h, n * es));
        free(h);
    }
    return duet_matrix_make(buf, dtype, DUET_LAYOUT_ROW_MAJOR, rows, cols);
}

/* The matrix's elements as doubles, row-major (caller frees). */
static inline double *seed_read(const duet_matrix *m)
{
    const size_t n = (size_t)(m->rows * m->cols), es = duet_dtype_size(m->dtype);
    unsigned char *h = (unsigned char *)malloc(n * es + 1);
    double *out = (double *)malloc(n * sizeof *out + 1);
    if (!h || !out) exit(1);
    SEED_OK(duet_buffer_read(NULL, m->buffer, 0, h, n * es));
    for (size_t i = 0; i < n; i++) {
        if (m->dtype == DUET_DTYPE_F32) out[i] = ((float *)h)[i];
        else if (m->dtype == DUET_DTYPE_F64) out[i] = ((double *)h)[i];
        else out[i] = ((int32_t *)h)[i];
    }
    free(h);
    return out;
}

static inline void seed_free(duet_matrix *m)
{
    if (m->buffer) SEED_OK(duet_buffer_destroy(m->buffer));
    m->buffer = NULL;
}

/* Options for an algorithm: tile for TILED, block for NAIVE, grid and block for GRID_STRIDE;
 * info (may be NULL) receives what was launched. */
static inline duet_op_options seed_options(duet_algorithm algo, int tile, uint32_t bx,
                                           uint32_t by, uint32_t gx, uint32_t gy,
                                           duet_launch_info *info)
{
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.algorithm = algo;
    o.tile = tile;
    o.launch.block.x = bx;
    o.launch.block.y = by;
    o.launch.block.z = bx ? 1 : 0;
    o.launch.grid.x = gx;
    o.launch.grid.y = gy;
    o.launch.grid.z = gx ? 1 : 0;
    o.info = info;
    return o;
}

/* "kernel gemm_tiled_f64, grid 2x2, block 3x3" for the line that says what ran. */
static inline const char *seed_info(const duet_launch_info *info)
{
    static char text[160];
    snprintf(text, sizeof text, "kernel %s, grid %ux%u, block %ux%u", info->kernel,
             info->config.grid.x, info->config.grid.y, info->config.block.x,
             info->config.block.y);
    return text;
}

#endif /* DUET_SEED_UTIL_H */
