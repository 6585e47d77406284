/* test_elementwise.c - scale, add and fill against host references: dtypes, algorithms, shapes. */
#include "harness.h"

static duet_context *g_ctx;
static duet_device_props g_props;
static int g_quick;

/* Elements of guard band after every buffer's last matrix element. */
#define GUARD 5

/* ---- algorithms -------------------------------------------------------------------------- */

typedef struct algo {
    const char *label;
    duet_algorithm algorithm;
    duet_launch_config launch;
} algo;

#define L(gx, gy, gz, bx, by, bz)                                                                  \
    {                                                                                              \
        {gx, gy, gz}, {bx, by, bz}, 0                                                              \
    }
static const algo g_algos[] = {
    {"auto", DUET_ALGO_AUTO, L(0, 0, 0, 0, 0, 0)},
    {"naive", DUET_ALGO_NAIVE, L(0, 0, 0, 0, 0, 0)},
    {"naive 5x3", DUET_ALGO_NAIVE, L(0, 0, 0, 5, 3, 1)},
    {"naive 16x16", DUET_ALGO_NAIVE, L(0, 0, 0, 16, 16, 1)},
    {"naive 256x1", DUET_ALGO_NAIVE, L(0, 0, 0, 256, 1, 1)},
    {"grid-stride default", DUET_ALGO_GRID_STRIDE, L(0, 0, 0, 0, 0, 0)},
    {"grid-stride 3x2 of 3x2", DUET_ALGO_GRID_STRIDE, L(3, 2, 1, 3, 2, 1)},
    {"grid-stride 6x6 of 6x6", DUET_ALGO_GRID_STRIDE, L(6, 6, 1, 6, 6, 1)},
    {"grid-stride 1 of 1", DUET_ALGO_GRID_STRIDE, L(1, 1, 1, 1, 1, 1)},
    {"grid-stride 7x5x2 of 32x8", DUET_ALGO_GRID_STRIDE, L(7, 5, 2, 32, 8, 1)},
    {"grid-stride 1x3 of 32x8x2", DUET_ALGO_GRID_STRIDE, L(1, 3, 1, 32, 8, 2)},
};
#undef L
#define NALGOS ((int)(sizeof g_algos / sizeof g_algos[0]))

static duet_op_options options_of(const algo *a, duet_launch_info *info)
{
    duet_op_options o;
    memset(&o, 0, sizeof o);
    o.algorithm = a->algorithm;
    o.launch = a->launch;
    o.info = info;
    return o;
}

/* ---- geometry (independent of the library) ---------------------------- */

enum { A = 0, B = 1, C = 2 };

typedef struct ecase {
    int64_t rows, cols, batch; /* batch 0 is read as 1 */
    duet_layout layout[3];
    int64_t pad[3]; /* ld beyond the row length */
    size_t off[3];
    int64_t bpad[3]; /* batch stride beyond one matrix; < 0: broadcast (inputs) */
} ecase;

static duet_matrix make(const ecase *t, int which, duet_dtype dtype, duet_buffer *buf)
{
    duet_matrix m;
    memset(&m, 0, sizeof m);
    m.buffer = buf;
    m.dtype = dtype;
    m.layout = t->layout[which];
    m.rows = t->rows;
    m.cols = t->cols;
    m.ld = (m.layout == DUET_LAYOUT_ROW_MAJOR ? t->cols : t->rows) + t->pad[which];
    m.offset = t->off[which];
    m.batch_count = t->batch;
    m.batch_stride = t->bpad[which] < 0 ? 0 : dt_matrix_extent(&m) + t->bpad[which];
    return m;
}

static void describe(const ecase *t, int n, char *s, size_t cap)
{
    int k = snprintf(s, cap, "%lldx%lld batch %lld:", (long long)t->rows, (long long)t->cols,
                     (long long)t->batch);
    static const char *const names[3] = {"a", "b", "c"};
    for (int w = 3 - n; w < 3 && k > 0 && (size_t)k < cap; w++)
        k += snprintf(s + k, cap - (size_t)k, " %s %s ld+%lld off %zu bs+%lld", names[w],
                      t->layout[w] ? "col" : "row", (long long)t->pad[w], t->off[w],
                      (long long)t->bpad[w]);
}

/* Values exact in every dtype and in every product with the scalars below (floats), or spread
 * over the whole int32 range so that products wrap (i32). */
static void fill_values(void *data, duet_dtype dtype, size_t count, uint64_t salt)
{
    for (size_t e = 0; e < count; e++) {
        if (dtype == DUET_DTYPE_I32) {
            uint32_t u = (uint32_t)((e + salt) * 2654435761u) ^ (uint32_t)(salt << 7);
            int32_t v;
            memcpy(&v, &u, 4);
            memcpy((char *)data + e * 4, &v, 4);
        } else {
            dt_set(data, dtype, e, (double)((int64_t)((e * 37 + salt) % 2001) - 1000));
        }
    }
}

/* Reads element e of an i32 array as uint32 for wrapping arithmetic. */
static uint32_t get_u32(const void *data, size_t e)
{
    uint32_t u;
    memcpy(&u, (const char *)data + e * 4, 4);
    return u;
}

static void put_u32(void *data, size_t e, uint32_t u)
{
    memcpy((char *)data + e * 4, &u, 4);
}

/* The int32 value of an integral double as a uint32 bit pattern (two's complement). */
static uint32_t scalar_u32(double v)
{
    int32_t i = (int32_t)v;
    uint32_t u;
    memcpy(&u, &i, 4);
    return u;
}

/* ---- launch info ------------------------------------------------------------------------- */

static uint32_t cdiv(int64_t n, uint32_t d)
{
    return (uint32_t)((n + d - 1) / d);
}

/* Grids are folded into the device's y limit; the kernels loop over the rest. */
static uint32_t fold_y(uint32_t y)
{
    return (int64_t)y > g_props.max_grid_dims[1] ? (uint32_t)g_props.max_grid_dims[1] : y;
}

static void check_info(const duet_launch_info *info, const algo *a, const duet_matrix *c,
                       const char *what)
{
    int empty = c->rows == 0 || c->cols == 0;
    DT_CHECK(empty ? info->launches == 0 : info->launches >= 1, "%s: launches %d", what,
             info->launches);
    if (empty) return;
    DT_CHECK(info->kernel[0] != '\0', "%s: no kernel name", what);
    if (!strcmp(duet_backend_name(), "cpu"))
        DT_CHECK(!strncmp(info->kernel, "cpu_", 4), "%s: cpu kernel \"%s\"", what, info->kernel);
    if (a->algorithm == DUET_ALGO_AUTO) {
        /* AUTO reports itself when duet's tuned kernels ran, or the seed algorithm it chose. */
        DT_CHECK(info->algorithm == DUET_ALGO_AUTO || info->algorithm == DUET_ALGO_NAIVE ||
                     info->algorithm == DUET_ALGO_GRID_STRIDE,
                 "%s: auto reported %d", what, (int)info->algorithm);
        return;
    }
    DT_CHECK(info->algorithm == a->algorithm, "%s: info algorithm %d", what, (int)info->algorithm);
    const duet_launch_config *g = &info->config;
    DT_OK(duet_launch_config_validate(g_ctx, g));
    if (a->algorithm == DUET_ALGO_NAIVE) {
        uint32_t bx = a->launch.block.x ? a->launch.block.x : 32;
        uint32_t by = a->launch.block.x ? a->launch.block.y : 8;
        DT_CHECK(g->block.x == bx && g->block.y == by, "%s: block %ux%u", what, g->block.x,
                 g->block.y);
        /* x runs along c's unit-stride axis: its columns when c is row-major. */
        if (c->layout == DUET_LAYOUT_ROW_MAJOR) {
            const int64_t nb = dt_matrix_batches(c);
            uint32_t bz = (uint32_t)(nb < g_props.max_grid_dims[2] ? nb : g_props.max_grid_dims[2]);
            DT_CHECK(g->grid.x == cdiv(c->cols, bx) && g->grid.y == fold_y(cdiv(c->rows, by)) &&
                         g->grid.z == bz,
                     "%s: grid %ux%ux%u", what, g->grid.x, g->grid.y, g->grid.z);
        }
    } else if (a->launch.grid.x) {
        DT_CHECK(g->grid.x == a->launch.grid.x && g->grid.y == a->launch.grid.y &&
                     g->grid.z == a->launch.grid.z && g->block.x == a->launch.block.x &&
                     g->block.y == a->launch.block.y && g->block.z == a->launch.block.z,
                 "%s: launched %ux%ux%u of %ux%ux%u", what, g->grid.x, g->grid.y, g->grid.z,
                 g->block.x, g->block.y, g->block.z);
    } else {
        /* docs/internals.md: 256 x 1 threads, 4 blocks per compute unit. */
        DT_CHECK(g->block.x == 256 && g->block.y == 1 && g->block.z == 1 &&
                     (int64_t)g->grid.x * g->grid.y * g->grid.z ==
                         4 * (int64_t)g_props.compute_units,
                 "%s: default launched %ux%ux%u of %ux%ux%u", what, g->grid.x, g->grid.y, g->grid.z,
                 g->block.x, g->block.y, g->block.z);
    }
}

/* ---- one case ---------------------------------------------------------------------------- */

typedef enum ew_op { EW_SCALE, EW_ADD, EW_FILL } ew_op;
/* For add: where c lives. */
typedef enum alias { ALIAS_NONE, ALIAS_A, ALIAS_B } alias;

typedef struct host_buf {
    duet_buffer *buf;
    unsigned char *init; /* what the buffer holds before the op */
    size_t count;
} host_buf;

static int g_shown;

static void report_mismatch(const unsigned char *got, const unsigned char *want,
                            const unsigned char *init, size_t count, duet_dtype dtype,
                            const char *what)
{
    size_t elem = duet_dtype_size(dtype), first = count, bad = 0;
    for (size_t e = 0; e < count; e++)
        if (memcmp(got + e * elem, want + e * elem, elem)) {
            if (first == count) first = e;
            bad++;
        }
    dt_failures++;
    if (g_shown++ < 40)
        fprintf(stderr,
                "%s:%d: %s: %zu of %zu elements wrong, first at %zu: got %g, want %g (%s)\n",
                __FILE__, __LINE__, what, bad, count, first, dt_get(got, dtype, first),
                dt_get(want, dtype, first),
                memcmp(want + first * elem, init + first * elem, elem) ? "inside the output"
                                                                       : "guard or gap");
}

/* Runs op on case t for every algorithm in [a0, a1): the output's whole buffer must hold the
 * reference where the output lives and its old bytes everywhere else. */
static void run_case(ew_op op, const ecase *t, duet_dtype dtype, double alpha, double beta,
                     alias al, int a0, int a1)
{
    size_t elem = duet_dtype_size(dtype);
    host_buf hb[3];
    memset(hb, 0, sizeof hb);
    duet_matrix m[3];
    int first = op == EW_ADD ? A : C;
    int ok = 1;
    for (int w = first; w < 3; w++) {
        if (w == C && al != ALIAS_NONE) break;
        m[w] = make(t, w, dtype, NULL);
        hb[w].count = dt_matrix_span_elems(&m[w]) + GUARD;
        hb[w].init = (unsigned char *)malloc(hb[w].count * elem);
        if (!hb[w].init || duet_buffer_create(g_ctx, hb[w].count * elem, &hb[w].buf)) {
            DT_CHECK(0, "allocation of %zu elements: %s", hb[w].count, duet_last_error());
            ok = 0;
            break;
        }
        m[w].buffer = hb[w].buf;
        if (op == EW_FILL || (op == EW_ADD && w == C))
            dt_fill_sentinel(hb[w].init, dtype, hb[w].count);
        else
            fill_values(hb[w].init, dtype, hb[w].count,
                        (uint64_t)(w * 1000 + t->rows * 7 + t->cols));
    }
    /* c exactly a or b: the same buffer and the same view. */
    host_buf *hc = &hb[C];
    if (ok && op == EW_ADD && al != ALIAS_NONE) {
        int src = al == ALIAS_A ? A : B;
        m[C] = m[src];
        hc = &hb[src];
    }
    unsigned char *want = NULL, *got = NULL;
    if (ok) {
        size_t most = 0;
        for (int w = 0; w < 3; w++) most = hb[w].count > most ? hb[w].count : most;
        want = (unsigned char *)malloc(hc->count * elem);
        got = (unsigned char *)malloc(most * elem);
        ok = want && got;
    }
    if (ok) {
        memcpy(want, hc->init, hc->count * elem);
        const uint32_t ua = scalar_u32(dtype == DUET_DTYPE_I32 ? alpha : 0);
        const uint32_t ub = scalar_u32(dtype == DUET_DTYPE_I32 ? beta : 0);
        for (int64_t b = 0; b < dt_matrix_batches(&m[C]); b++)
            for (int64_t i = 0; i < t->rows; i++)
                for (int64_t j = 0; j < t->cols; j++) {
                    size_t ec = dt_matrix_index(&m[C], b, i, j);
                    if (op == EW_FILL) {
                        dt_set(want, dtype, ec, alpha);
                    } else if (op == EW_SCALE) {
                        if (dtype == DUET_DTYPE_I32)
                            put_u32(want, ec, ua * get_u32(hc->init, ec));
                        else
                            dt_set(want, dtype, ec, alpha * dt_get(hc->init, dtype, ec));
                    } else {
                        size_t ea = dt_matrix_index(&m[A], b, i, j);
                        size_t eb = dt_matrix_index(&m[B], b, i, j);
                        if (dtype == DUET_DTYPE_I32)
                            put_u32(want, ec,
                                    ua * get_u32(hb[A].init, ea) + ub * get_u32(hb[B].init, eb));
                        else
                            dt_set(want, dtype, ec,
                                   alpha * dt_get(hb[A].init, dtype, ea) +
                                       beta * dt_get(hb[B].init, dtype, eb));
                    }
                }
    }
    for (int k = a0; ok && k < a1; k++) {
        const algo *a = &g_algos[k];
        for (int w = first; w < 3; w++)
            if (hb[w].buf)
                DT_OK(duet_buffer_write(NULL, hb[w].buf, 0, hb[w].init, hb[w].count * elem));
        duet_launch_info info;
        memset(&info, 0xA5, sizeof info);
        duet_op_options o = options_of(a, &info);
        duet_status st;
        if (op == EW_SCALE)
            st = duet_scale(NULL, alpha, &m[C], &o);
        else if (op == EW_FILL)
            st = duet_fill(NULL, alpha, &m[C], &o);
        else
            st = duet_add(NULL, alpha, &m[A], beta, &m[B], &m[C], &o);
        char what[400];
        int n = snprintf(what, sizeof what, "%s %s alpha %g beta %g%s [%s] ",
                         op == EW_SCALE  ? "scale"
                         : op == EW_FILL ? "fill"
                                         : "add",
                         duet_dtype_name(dtype), alpha, beta,
                         al == ALIAS_A   ? " c=a"
                         : al == ALIAS_B ? " c=b"
                                         : "",
                         a->label);
        describe(t, op == EW_ADD ? 3 : 1, what + n, sizeof what - (size_t)n);
        dt_checks++;
        if (st != DUET_SUCCESS) {
            dt_failures++;
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, what,
                    duet_status_string(st), duet_last_error());
            continue;
        }
        memset(got, 0, hc->count * elem);
        DT_OK(duet_buffer_read(NULL, hc->buf, 0, got, hc->count * elem));
        dt_checks++;
        if (memcmp(got, want, hc->count * elem) != 0)
            report_mismatch(got, want, hc->init, hc->count, dtype, what);
        /* Inputs stay as they were. */
        for (int w = A; op == EW_ADD && w <= B; w++) {
            if (&hb[w] == hc) continue;
            DT_OK(duet_buffer_read(NULL, hb[w].buf, 0, got, hb[w].count * elem));
            DT_CHECK(memcmp(got, hb[w].init, hb[w].count * elem) == 0, "%s: input %c changed", what,
                     "ab"[w]);
        }
        check_info(&info, a, &m[C], what);
    }
    for (int w = 0; w < 3; w++) {
        if (hb[w].buf) DT_OK(duet_buffer_destroy(hb[w].buf));
        free(hb[w].init);
    }
    free(want);
    free(got);
}

/* ---- case lists -------------------------------------------------------------------------- */

static ecase shape(int64_t rows, int64_t cols, int layouts)
{
    ecase t;
    memset(&t, 0, sizeof t);
    t.rows = rows;
    t.cols = cols;
    t.batch = 1;
    for (int w = 0; w < 3; w++) t.layout[w] = (duet_layout)((layouts >> w) & 1);
    return t;
}

static const duet_dtype g_arith[3] = {DUET_DTYPE_F32, DUET_DTYPE_F64, DUET_DTYPE_I32};

/* Scalars exact on the value range above (floats) and integral (i32); never 1 for scale, so
 * that an untouched element shows. */
static const double g_scale_alpha[3] = {2, -3, 0.5};
static const double g_add_ab[4][2] = {{1, 1}, {2, -3}, {0.5, 4}, {-1, 7}};

static double int_scalar(double v)
{
    return v == 0.5 ? 5 : v;
}

/* Every op, dtype and algorithm on case t (scalars rotated by salt to cover them all). */
static void all_ops(const ecase *t, int salt)
{
    for (int d = 0; d < 3; d++) {
        duet_dtype dt = g_arith[d];
        double sa = g_scale_alpha[(salt + d) % 3];
        const double *ab = g_add_ab[(salt + d) % 4];
        if (dt == DUET_DTYPE_I32) sa = int_scalar(sa);
        double alpha = dt == DUET_DTYPE_I32 ? int_scalar(ab[0]) : ab[0];
        run_case(EW_SCALE, t, dt, sa, 0, ALIAS_NONE, 0, NALGOS);
        run_case(EW_ADD, t, dt, alpha, ab[1], ALIAS_NONE, 0, NALGOS);
    }
    static const struct {
        duet_dtype dtype;
        double value;
    } fills[6] = {{DUET_DTYPE_F32, -2.5},  {DUET_DTYPE_F64, 3.141592653589793},
                  {DUET_DTYPE_I32, -7},    {DUET_DTYPE_F16, 1.5},
                  {DUET_DTYPE_BF16, -3.0}, {DUET_DTYPE_I8, -128}};
    for (int f = 0; f < 6; f++)
        run_case(EW_FILL, t, fills[f].dtype, fills[f].value, 0, ALIAS_NONE, 0, NALGOS);
}

static void test_shapes(void)
{
    const int64_t tiny[][2] = {{0, 5}, {5, 0}, {0, 0}, {1, 1}, {1, 2}, {2, 1}};
    for (size_t s = 0; s < sizeof tiny / sizeof tiny[0]; s++) {
        ecase t = shape(tiny[s][0], tiny[s][1], (int)s);
        t.off[C] = 1;
        all_ops(&t, (int)s);
    }
    static const int64_t quick_sizes[] = {1, 3, 8, 17, 33, 40};
    int n = 0;
    if (g_quick) {
        for (size_t r = 0; r < 6; r++)
            for (size_t c = 0; c < 6; c += 2) {
                ecase t = shape(quick_sizes[r], quick_sizes[c], n);
                t.off[C] = (size_t)(n % 3);
                all_ops(&t, n++);
            }
    } else {
        for (int64_t r = 1; r <= 39; r += 2)
            for (int64_t c = 1; c <= 39; c += 6) {
                ecase t = shape(r, c, n);
                t.off[C] = (size_t)(n % 3);
                all_ops(&t, n++);
            }
        for (int64_t r = 1; r <= 40; r++) {
            ecase t = shape(r, 41 - r, n);
            all_ops(&t, n++);
        }
    }
    static const int64_t edges[] = {31, 32, 33, 63, 64, 65};
    size_t ne = g_quick ? 2 : 6;
    for (size_t r = 0; r < ne; r++)
        for (size_t c = 0; c < ne; c++) {
            ecase t = shape(edges[r], edges[c], n);
            t.off[A] = 1;
            t.off[C] = 2;
            all_ops(&t, n++);
        }
    /* 70000 rows: with 256 x 1 blocks more of them along y than a GPU grid holds, so the grid
     * is folded and the kernels must loop. */
    const int64_t tall[][2] = {{1, 1000}, {70000, 3}, {1000, 1}, {37, 4099}, {2, 3001}};
    for (size_t s = 0; s < (g_quick ? 2u : 5u); s++)
        for (int l = 0; l < 8; l += g_quick ? 7 : 3) {
            ecase t = shape(tall[s][0], tall[s][1], l);
            t.off[B] = 3;
            all_ops(&t, n++);
        }
}

static void test_padded_batched(void)
{
    const int64_t shapes[][2] = {{5, 7}, {33, 17}, {1, 40}, {64, 65}};
    const int64_t pads[][3] = {{1, 0, 0}, {0, 3, 1}, {17, 1, 33}, {0, 0, 5}};
    const size_t offs[][3] = {{3, 0, 5}, {0, 7, 1}, {1, 2, 3}, {31, 0, 17}};
    const int64_t bpads[][3] = {{0, 0, 0}, {5, 7, 3}, {-1, 2, 0}, {1, -1, 11}};
    const int64_t counts[] = {1, 3, 0, 2};
    int n = 0;
    for (size_t s = 0; s < 4; s++)
        for (size_t p = 0; p < 4; p++)
            for (int l = 0; l < 8; l++) {
                if (g_quick ? (l + (int)p + (int)s) % 8 != 0 : (l + (int)p) % 2 != 0) continue;
                ecase t = shape(shapes[s][0], shapes[s][1], l);
                t.batch = counts[(p + s) % 4];
                for (int w = 0; w < 3; w++) {
                    t.pad[w] = pads[p][w];
                    t.off[w] = offs[(p + (size_t)l) % 4][w];
                    t.bpad[w] = bpads[(p + s) % 4][w];
                }
                /* Broadcast (stride 0) is for inputs and only meaningful with a batch. */
                if (t.batch <= 1)
                    for (int w = 0; w < 3; w++)
                        if (t.bpad[w] < 0) t.bpad[w] = 0;
                all_ops(&t, n++);
            }
}

/* More matrices than a GPU grid holds along z: the batch loop must cover the rest. */
static void test_many_batches(void)
{
    ecase t = shape(2, 1, 5);
    t.batch = 70000;
    t.bpad[A] = 1;
    t.bpad[B] = -1;
    t.bpad[C] = 2;
    run_case(EW_ADD, &t, DUET_DTYPE_I32, 3, -1, ALIAS_NONE, 0, NALGOS);
    run_case(EW_SCALE, &t, DUET_DTYPE_F32, -3, 0, ALIAS_NONE, 0, NALGOS);
    run_case(EW_FILL, &t, DUET_DTYPE_I8, 7, 0, ALIAS_NONE, 0, NALGOS);
}

/* add with c being exactly a, exactly b, or a == b == c. */
static void test_in_place(void)
{
    const int64_t shapes[][2] = {{1, 1}, {7, 5}, {33, 64}, {40, 3}};
    for (size_t s = 0; s < 4; s++)
        for (int l = 0; l < 8; l += g_quick ? 3 : 1) {
            ecase t = shape(shapes[s][0], shapes[s][1], l);
            t.pad[A] = (int64_t)s;
            t.off[A] = 2;
            t.off[B] = 1;
            if (s == 2) {
                t.batch = 3;
                t.bpad[A] = 4;
                t.bpad[B] = 1;
            }
            for (int d = 0; d < 3; d++) {
                duet_dtype dt = g_arith[d];
                double alpha = dt == DUET_DTYPE_I32 ? 3 : 0.5;
                run_case(EW_ADD, &t, dt, alpha, -2, ALIAS_A, 0, NALGOS);
                run_case(EW_ADD, &t, dt, alpha, -2, ALIAS_B, 0, NALGOS);
            }
        }

    /* a == b == c: c = (alpha + beta) * a. */
    duet_buffer *buf = NULL;
    float h[6 * 7], o[6 * 7];
    for (int e = 0; e < 42; e++) h[e] = (float)(e - 20);
    DT_OK(duet_buffer_create(g_ctx, sizeof h, &buf));
    DT_OK(duet_buffer_write(NULL, buf, 0, h, sizeof h));
    duet_matrix m = duet_matrix_make(buf, DUET_DTYPE_F32, DUET_LAYOUT_COL_MAJOR, 6, 7);
    DT_OK(duet_add(NULL, 2, &m, 3, &m, &m, NULL));
    DT_OK(duet_buffer_read(NULL, buf, 0, o, sizeof o));
    int bad = 0;
    for (int e = 0; e < 42; e++) bad += o[e] != 5 * h[e];
    DT_CHECK(bad == 0, "a == b == c: %d wrong", bad);

    /* c partly over a (one element on): refused, nothing written. */
    duet_matrix c1 = m;
    c1.offset = 1;
    c1.rows = 5;
    DT_CHECK(duet_add(NULL, 1, &m, 1, &m, &c1, NULL) == DUET_ERROR_INVALID_ARGUMENT,
             "partial overlap accepted");
    duet_matrix a5 = m;
    a5.rows = 5;
    DT_CHECK(duet_add(NULL, 1, &a5, 1, &a5, &c1, NULL) == DUET_ERROR_INVALID_ARGUMENT,
             "shifted view accepted");
    duet_matrix rm = m;
    rm.layout = DUET_LAYOUT_ROW_MAJOR;
    rm.rows = 7;
    rm.cols = 6;
    rm.ld = 6;
    duet_matrix rmt = duet_matrix_make(buf, DUET_DTYPE_F32, DUET_LAYOUT_COL_MAJOR, 7, 6);
    DT_CHECK(duet_add(NULL, 1, &rm, 1, &rm, &rmt, NULL) == DUET_ERROR_INVALID_ARGUMENT,
             "same bytes, other layout, accepted");
    DT_OK(duet_buffer_read(NULL, buf, 0, h, sizeof h));
    DT_CHECK(memcmp(h, o, sizeof h) == 0, "a refused add wrote its output");
    DT_OK(duet_buffer_destroy(buf));
}

/* Every dtype filled with values it holds exactly, edge values included. */
static void test_fill_values(void)
{
    static const struct {
        duet_dtype dtype;
        double value;
    } v[] = {
        {DUET_DTYPE_F32, 0.0},
        {DUET_DTYPE_F32, -0.0},
        {DUET_DTYPE_F32, 16777216.0},
        {DUET_DTYPE_F32, 0.1},
        {DUET_DTYPE_F32, 1.401298464324817e-45},
        {DUET_DTYPE_F32, -3.4028234663852886e38},
        {DUET_DTYPE_F64, -0.1},
        {DUET_DTYPE_F64, 1.7976931348623157e308},
        {DUET_DTYPE_F64, 4.9406564584124654e-324},
        {DUET_DTYPE_I32, -2147483648.0},
        {DUET_DTYPE_I32, 2147483647.0},
        {DUET_DTYPE_I32, 0},
        {DUET_DTYPE_F16, 65504.0},
        {DUET_DTYPE_F16, -2.25},
        {DUET_DTYPE_F16, 6.103515625e-05},
        {DUET_DTYPE_F16, 5.9604644775390625e-08},
        {DUET_DTYPE_F16, -0.0},
        {DUET_DTYPE_BF16, 1.0078125},
        {DUET_DTYPE_BF16, -3.0},
        {DUET_DTYPE_BF16, 256.0},
        {DUET_DTYPE_BF16, 3.3895313892515355e38},
        {DUET_DTYPE_I8, -128},
        {DUET_DTYPE_I8, 127},
        {DUET_DTYPE_I8, -1},
        {DUET_DTYPE_I8, 0},
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        ecase t = shape(9, 13, (int)k);
        t.pad[C] = 2;
        t.off[C] = 3;
        t.batch = 2;
        t.bpad[C] = 1;
        run_case(EW_FILL, &t, v[k].dtype, v[k].value, 0, ALIAS_NONE, 0, NALGOS);
    }
}

/* int32 arithmetic wraps modulo 2^32. */
static void test_i32_wrap(void)
{
    const int32_t x[6] = {INT32_MAX, INT32_MIN, 0x40000000, -1, 123456789, -987654321};
    int32_t o[6];
    duet_buffer *bx = NULL, *by = NULL, *bo = NULL;
    DT_OK(duet_buffer_create(g_ctx, sizeof x, &bx));
    DT_OK(duet_buffer_create(g_ctx, sizeof x, &by));
    DT_OK(duet_buffer_create(g_ctx, sizeof x, &bo));
    duet_matrix mx = duet_matrix_make(bx, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, 2, 3);
    duet_matrix my = duet_matrix_make(by, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, 2, 3);
    duet_matrix mo = duet_matrix_make(bo, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, 2, 3);
    const int32_t ones[6] = {1, 1, 1, 1, 1, 1};
    DT_OK(duet_buffer_write(NULL, bx, 0, x, sizeof x));
    DT_OK(duet_buffer_write(NULL, by, 0, ones, sizeof ones));
    DT_OK(duet_add(NULL, 1, &mx, 1, &my, &mo, NULL));
    DT_OK(duet_buffer_read(NULL, bo, 0, o, sizeof o));
    DT_CHECK(o[0] == INT32_MIN && o[1] == INT32_MIN + 1 && o[3] == 0, "x + 1: %d %d %d", o[0], o[1],
             o[3]);
    DT_OK(duet_add(NULL, -2147483648.0, &mx, 2147483647.0, &my, &mo, NULL));
    DT_OK(duet_buffer_read(NULL, bo, 0, o, sizeof o));
    /* -2^31 * (2^31 - 1) + 2^31 - 1 = -2^62 + 2^32 - 1 = -1 (mod 2^32) */
    DT_CHECK(o[0] == -1, "INT32_MIN * INT32_MAX + INT32_MAX: %d", o[0]);
    DT_CHECK(o[1] == INT32_MAX, "INT32_MIN * INT32_MIN + INT32_MAX: %d", o[1]);
    DT_OK(duet_scale(NULL, 2, &mx, NULL));
    DT_OK(duet_buffer_read(NULL, bx, 0, o, sizeof o));
    DT_CHECK(o[0] == -2 && o[1] == 0 && o[2] == INT32_MIN && o[3] == -2, "2x: %d %d %d %d", o[0],
             o[1], o[2], o[3]);
    DT_OK(duet_buffer_write(NULL, bx, 0, x, sizeof x));
    DT_OK(duet_scale(NULL, -1, &mx, NULL));
    DT_OK(duet_buffer_read(NULL, bx, 0, o, sizeof o));
    DT_CHECK(o[0] == -INT32_MAX && o[1] == INT32_MIN && o[4] == -123456789, "-x: %d %d %d", o[0],
             o[1], o[4]);
    DT_OK(duet_buffer_destroy(bx));
    DT_OK(duet_buffer_destroy(by));
    DT_OK(duet_buffer_destroy(bo));
}

/* The seeds: doubling 256 ones; the DLI 36x36 int32 add with 6x6 blocks; 64x64 int32 add on a
 * 6x6 grid of 6x6 blocks that strides over the data. */
static void test_seeds(void)
{
    duet_buffer *b = NULL;
    double ones[256], got[256];
    for (int i = 0; i < 256; i++) ones[i] = 1.0;
    DT_OK(duet_buffer_create(g_ctx, sizeof ones, &b));
    duet_matrix v = duet_matrix_make(b, DUET_DTYPE_F64, DUET_LAYOUT_ROW_MAJOR, 1, 256);
    duet_launch_config c1;
    DT_OK(duet_launch_config_1d(256, 256, &c1));
    for (int k = 0; k < 3; k++) {
        duet_op_options o;
        duet_launch_info info;
        memset(&o, 0, sizeof o);
        memset(&info, 0, sizeof info);
        o.info = &info;
        o.algorithm = k == 0 ? DUET_ALGO_AUTO : k == 1 ? DUET_ALGO_NAIVE : DUET_ALGO_GRID_STRIDE;
        if (k) o.launch = c1;
        DT_OK(duet_buffer_write(NULL, b, 0, ones, sizeof ones));
        DT_OK(duet_scale(NULL, 2, &v, &o));
        DT_OK(duet_buffer_read(NULL, b, 0, got, sizeof got));
        int bad = 0;
        for (int i = 0; i < 256; i++) bad += got[i] != 2.0;
        DT_CHECK(bad == 0, "256 ones doubled (%s): %d not 2", duet_algorithm_name(o.algorithm),
                 bad);
        if (k)
            DT_CHECK(info.config.grid.x == 1 && info.config.block.x == 256,
                     "one block of 256: grid %u block %u", info.config.grid.x, info.config.block.x);
    }
    DT_OK(duet_buffer_destroy(b));

    const int sizes[2] = {36, 64};
    for (int s = 0; s < 2; s++) {
        const int n = sizes[s];
        int32_t *ha = (int32_t *)malloc((size_t)(n * n) * 4),
                *hb = (int32_t *)malloc((size_t)(n * n) * 4),
                *hc = (int32_t *)malloc((size_t)(n * n) * 4);
        duet_buffer *ba = NULL, *bb = NULL, *bc = NULL;
        if (!ha || !hb || !hc) {
            DT_CHECK(0, "host allocation");
            free(ha);
            free(hb);
            free(hc);
            return;
        }
        for (int e = 0; e < n * n; e++) {
            ha[e] = e;
            hb[e] = 2 * e;
        }
        DT_OK(duet_buffer_create(g_ctx, (size_t)(n * n) * 4, &ba));
        DT_OK(duet_buffer_create(g_ctx, (size_t)(n * n) * 4, &bb));
        DT_OK(duet_buffer_create(g_ctx, (size_t)(n * n) * 4, &bc));
        DT_OK(duet_buffer_write(NULL, ba, 0, ha, (size_t)(n * n) * 4));
        DT_OK(duet_buffer_write(NULL, bb, 0, hb, (size_t)(n * n) * 4));
        duet_matrix ma = duet_matrix_make(ba, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, n, n);
        duet_matrix mb = duet_matrix_make(bb, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, n, n);
        duet_matrix mc = duet_matrix_make(bc, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, n, n);
        duet_op_options o;
        duet_launch_info info;
        memset(&o, 0, sizeof o);
        o.info = &info;
        o.algorithm = n == 36 ? DUET_ALGO_NAIVE : DUET_ALGO_GRID_STRIDE;
        o.launch.block.x = o.launch.block.y = 6;
        o.launch.block.z = 1;
        if (n == 64) {
            o.launch.grid.x = o.launch.grid.y = 6;
            o.launch.grid.z = 1;
        }
        DT_OK(duet_buffer_memset(NULL, bc, 0, 0, (size_t)(n * n) * 4));
        DT_OK(duet_add(NULL, 1, &ma, 1, &mb, &mc, &o));
        DT_OK(duet_buffer_read(NULL, bc, 0, hc, (size_t)(n * n) * 4));
        int bad = 0;
        for (int e = 0; e < n * n; e++) bad += hc[e] != 3 * e;
        DT_CHECK(bad == 0, "%dx%d int32 add: %d wrong", n, n, bad);
        DT_CHECK(info.config.grid.x == 6 && info.config.grid.y == 6 && info.config.block.x == 6 &&
                     info.config.block.y == 6,
                 "%dx%d add launched %ux%u of %ux%u", n, n, info.config.grid.x, info.config.grid.y,
                 info.config.block.x, info.config.block.y);
        DT_OK(duet_buffer_destroy(ba));
        DT_OK(duet_buffer_destroy(bb));
        DT_OK(duet_buffer_destroy(bc));
        free(ha);
        free(hb);
        free(hc);
    }
}

/* TILED has no meaning for elementwise ops: refused, nothing written. */
static void test_unsupported(void)
{
    duet_buffer *b = NULL;
    float h[12], back[12];
    for (int e = 0; e < 12; e++) h[e] = (float)e;
    DT_OK(duet_buffer_create(g_ctx, sizeof h, &b));
    DT_OK(duet_buffer_write(NULL, b, 0, h, sizeof h));
    duet_matrix m = duet_matrix_make(b, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 3, 4);
    const duet_algorithm no[2] = {DUET_ALGO_TILED, DUET_ALGO_TILED_PADDED};
    for (int k = 0; k < 2; k++) {
        duet_op_options o;
        memset(&o, 0, sizeof o);
        o.algorithm = no[k];
        DT_FAILS(duet_scale(NULL, 2, &m, &o), DUET_ERROR_UNSUPPORTED, duet_algorithm_name(no[k]));
        DT_FAILS(duet_fill(NULL, 2, &m, &o), DUET_ERROR_UNSUPPORTED, duet_algorithm_name(no[k]));
        duet_matrix c = m;
        DT_FAILS(duet_add(NULL, 1, &m, 1, &m, &c, &o), DUET_ERROR_UNSUPPORTED,
                 duet_algorithm_name(no[k]));
    }
    DT_OK(duet_buffer_read(NULL, b, 0, back, sizeof back));
    DT_CHECK(memcmp(h, back, sizeof h) == 0, "a refused op wrote its output");
    DT_OK(duet_buffer_destroy(b));
}

/* Ops queued on a stream of the caller's, read back on it. */
static void test_stream(void)
{
    duet_stream *s = NULL;
    duet_buffer *b = NULL;
    DT_OK(duet_stream_create(g_ctx, &s));
    DT_OK(duet_buffer_create(g_ctx, 64 * 8, &b));
    duet_matrix m = duet_matrix_make(b, DUET_DTYPE_F64, DUET_LAYOUT_COL_MAJOR, 8, 8);
    DT_OK(duet_fill(s, 3, &m, NULL));
    DT_OK(duet_scale(s, -2, &m, NULL));
    duet_matrix c = m;
    DT_OK(duet_add(s, 1, &m, 2, &m, &c, NULL));
    double o[64];
    DT_OK(duet_buffer_read_async(s, b, 0, o, sizeof o));
    DT_OK(duet_stream_synchronize(s));
    int bad = 0;
    for (int e = 0; e < 64; e++) bad += o[e] != -18.0;
    DT_CHECK(bad == 0, "fill, scale, add on one stream: %d wrong", bad);
    DT_OK(duet_buffer_destroy(b));
    DT_OK(duet_stream_destroy(s));
}

int main(int argc, char **argv)
{
    g_quick = dt_quick_mode(argc, argv);
    g_ctx = dt_open_or_skip();
    DT_OK(duet_context_get_props(g_ctx, &g_props));
    test_seeds();
    test_i32_wrap();
    test_unsupported();
    test_stream();
    test_fill_values();
    test_in_place();
    test_shapes();
    test_padded_batched();
    test_many_batches();
    DT_OK(duet_context_destroy(g_ctx));
    return dt_finish("test_elementwise");
}
