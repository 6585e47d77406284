/* test_transpose.c - out = in^T for every element size, algorithm, shape, layout, ld and batch. */
#include "harness.h"

static duet_context *g_ctx;
static duet_device_props g_props;
static int g_quick;

/* Elements of guard band written after every output's footprint. */
#define GUARD 7

static const duet_dtype g_dtypes[] = {DUET_DTYPE_I8,  DUET_DTYPE_F16, DUET_DTYPE_BF16,
                                      DUET_DTYPE_F32, DUET_DTYPE_I32, DUET_DTYPE_F64};
#define NDTYPES ((int)(sizeof g_dtypes / sizeof g_dtypes[0]))

/* ---- algorithms -------------------------------------------------------------------------- */

typedef struct algo {
    const char *label;
    duet_algorithm algorithm;
    int tile;
    duet_launch_config launch;
} algo;

#define L(gx, gy, gz, bx, by, bz)                                                                  \
    {                                                                                              \
        {gx, gy, gz}, {bx, by, bz}, 0                                                              \
    }
static const algo g_algos[] = {
    {"auto", DUET_ALGO_AUTO, 0, L(0, 0, 0, 0, 0, 0)},
    {"naive", DUET_ALGO_NAIVE, 0, L(0, 0, 0, 0, 0, 0)},
    {"naive 16x4", DUET_ALGO_NAIVE, 0, L(0, 0, 0, 16, 4, 1)},
    {"naive 5x3", DUET_ALGO_NAIVE, 0, L(0, 0, 0, 5, 3, 1)},
    {"tiled default", DUET_ALGO_TILED, 0, L(0, 0, 0, 0, 0, 0)},
    {"tiled 1", DUET_ALGO_TILED, 1, L(0, 0, 0, 0, 0, 0)},
    {"tiled 3", DUET_ALGO_TILED, 3, L(0, 0, 0, 0, 0, 0)},
    {"tiled 16", DUET_ALGO_TILED, 16, L(0, 0, 0, 0, 0, 0)},
    {"tiled 32", DUET_ALGO_TILED, 32, L(0, 0, 0, 0, 0, 0)},
    {"tiled padded", DUET_ALGO_TILED_PADDED, 0, L(0, 0, 0, 0, 0, 0)},
    {"grid-stride default", DUET_ALGO_GRID_STRIDE, 0, L(0, 0, 0, 0, 0, 0)},
    {"grid-stride 3x2 of 3x2", DUET_ALGO_GRID_STRIDE, 0, L(3, 2, 1, 3, 2, 1)},
    {"grid-stride 1 of 1", DUET_ALGO_GRID_STRIDE, 0, L(1, 1, 1, 1, 1, 1)},
    {"grid-stride 7x5x2 of 32x8", DUET_ALGO_GRID_STRIDE, 0, L(7, 5, 2, 32, 8, 1)},
    {"grid-stride 1x3 of 32x8x2", DUET_ALGO_GRID_STRIDE, 0, L(1, 3, 1, 32, 8, 2)},
};
#undef L
#define NALGOS ((int)(sizeof g_algos / sizeof g_algos[0]))

/* ---- matrix geometry (independent of the library) --------------------- */

typedef struct tcase {
    int64_t rows, cols; /* in's shape; out is cols x rows */
    duet_layout lin, lout;
    int64_t pad_in, pad_out; /* ld beyond the row length */
    size_t off_in, off_out;
    int64_t batch;             /* 0 is read as 1 */
    int64_t bpad_in, bpad_out; /* batch stride beyond one matrix; bpad_in < 0: broadcast in */
} tcase;

static int64_t row_len(duet_layout layout, int64_t rows, int64_t cols)
{
    return layout == DUET_LAYOUT_ROW_MAJOR ? cols : rows;
}

static void describe(const tcase *t, char *s, size_t n)
{
    snprintf(s, n,
             "in %lldx%lld %s ld+%lld off %zu -> out %s ld+%lld off %zu, batch %lld "
             "(stride +%lld/+%lld)",
             (long long)t->rows, (long long)t->cols, t->lin ? "col" : "row", (long long)t->pad_in,
             t->off_in, t->lout ? "col" : "row", (long long)t->pad_out, t->off_out,
             (long long)t->batch, (long long)t->bpad_in, (long long)t->bpad_out);
}

static void make_matrices(const tcase *t, duet_dtype dtype, duet_buffer *bi, duet_buffer *bo,
                          duet_matrix *in, duet_matrix *out)
{
    memset(in, 0, sizeof *in);
    memset(out, 0, sizeof *out);
    in->buffer = bi;
    in->dtype = dtype;
    in->layout = t->lin;
    in->rows = t->rows;
    in->cols = t->cols;
    in->ld = row_len(t->lin, t->rows, t->cols) + t->pad_in;
    in->offset = t->off_in;
    in->batch_count = t->batch;
    in->batch_stride = t->bpad_in < 0 ? 0 : dt_matrix_extent(in) + t->bpad_in;
    out->buffer = bo;
    out->dtype = dtype;
    out->layout = t->lout;
    out->rows = t->cols;
    out->cols = t->rows;
    out->ld = row_len(t->lout, t->cols, t->rows) + t->pad_out;
    out->offset = t->off_out;
    out->batch_count = t->batch;
    out->batch_stride = dt_matrix_extent(out) + t->bpad_out;
}

/* Distinct small integers, exact in every dtype, so that a misplaced element shows. */
static void fill_pattern(void *data, duet_dtype dtype, size_t count, uint64_t salt)
{
    int64_t mod;
    switch (dtype) {
    case DUET_DTYPE_I8:
        mod = 251;
        break;
    case DUET_DTYPE_BF16:
        mod = 251;
        break;
    case DUET_DTYPE_F16:
        mod = 2039;
        break;
    case DUET_DTYPE_F64:
        mod = INT64_C(1000000007);
        break;
    default:
        mod = (1 << 24) - 3;
        break;
    }
    for (size_t e = 0; e < count; e++)
        dt_set(data, dtype, e, (double)((int64_t)((e + salt) % (uint64_t)mod) - mod / 2));
}

/* ---- the launch info against docs/internals.md's table ----------------------------------- */

static uint32_t cdiv(int64_t n, uint32_t d)
{
    return (uint32_t)((n + d - 1) / d);
}

/* Grids are folded into the device's y limit; the kernels loop over the rest. */
static uint32_t fold_y(uint32_t y)
{
    return (int64_t)y > g_props.max_grid_dims[1] ? (uint32_t)g_props.max_grid_dims[1] : y;
}

static void check_info(const duet_launch_info *info, const algo *a, const duet_matrix *out,
                       size_t elem, const char *what)
{
    int empty = out->rows == 0 || out->cols == 0;
    DT_CHECK(empty ? info->launches == 0 : info->launches >= 1, "%s: launches %d", what,
             info->launches);
    if (empty) return;
    DT_CHECK(info->kernel[0] != '\0', "%s: no kernel name", what);
    if (!strcmp(duet_backend_name(), "cpu"))
        DT_CHECK(!strncmp(info->kernel, "cpu_", 4), "%s: cpu kernel \"%s\"", what, info->kernel);
    if (a->algorithm == DUET_ALGO_AUTO) {
        /* AUTO reports itself when duet's tuned kernels ran, or the seed algorithm it chose. */
        DT_CHECK(info->algorithm >= DUET_ALGO_AUTO && info->algorithm <= DUET_ALGO_GRID_STRIDE,
                 "%s: auto reported %d", what, (int)info->algorithm);
        return;
    }
    DT_CHECK(info->algorithm == a->algorithm, "%s: info algorithm %d", what, (int)info->algorithm);
    const duet_launch_config *c = &info->config;
    DT_OK(duet_launch_config_validate(g_ctx, c));
    /* Grids are described for out's unit-stride axis along x: row-major outs only. */
    int rowmajor = out->layout == DUET_LAYOUT_ROW_MAJOR;
    const int64_t nb = dt_matrix_batches(out);
    uint32_t bz = (uint32_t)(nb < g_props.max_grid_dims[2] ? nb : g_props.max_grid_dims[2]);
    if (a->algorithm == DUET_ALGO_TILED) {
        /* duet.h: "TILED: 1..32 (0: 16)" for every op (docs/internals.md says 32 for
         * transpose; the public header is the contract). */
        int t = a->tile ? a->tile : 32; /* transpose's default tile is the seeds' 32x32 */
        DT_CHECK(info->tile == t, "%s: info tile %d", what, info->tile);
        DT_CHECK(c->block.x == (uint32_t)t && c->block.y == (uint32_t)t && c->block.z == 1,
                 "%s: block %ux%ux%u", what, c->block.x, c->block.y, c->block.z);
        DT_CHECK(c->shared_bytes == (size_t)t * (size_t)t * elem, "%s: shared %zu", what,
                 c->shared_bytes);
        if (rowmajor)
            DT_CHECK(c->grid.x == cdiv(out->cols, (uint32_t)t) &&
                         c->grid.y == fold_y(cdiv(out->rows, (uint32_t)t)) && c->grid.z == bz,
                     "%s: grid %ux%ux%u", what, c->grid.x, c->grid.y, c->grid.z);
    } else if (a->algorithm == DUET_ALGO_TILED_PADDED) {
        DT_CHECK(c->block.x == 32 && c->block.y == 8 && c->block.z == 1, "%s: block %ux%ux%u", what,
                 c->block.x, c->block.y, c->block.z);
        DT_CHECK(c->shared_bytes == 32 * 33 * elem, "%s: shared %zu", what, c->shared_bytes);
        if (rowmajor)
            DT_CHECK(c->grid.x == cdiv(out->cols, 32) && c->grid.y == fold_y(cdiv(out->rows, 32)) &&
                         c->grid.z == bz,
                     "%s: grid %ux%ux%u", what, c->grid.x, c->grid.y, c->grid.z);
    } else if (a->algorithm == DUET_ALGO_NAIVE) {
        uint32_t bx = a->launch.block.x ? a->launch.block.x : 32;
        uint32_t by = a->launch.block.x ? a->launch.block.y : 8;
        DT_CHECK(c->block.x == bx && c->block.y == by, "%s: block %ux%u", what, c->block.x,
                 c->block.y);
        if (rowmajor)
            DT_CHECK(c->grid.x == cdiv(out->cols, bx) && c->grid.y == fold_y(cdiv(out->rows, by)) &&
                         c->grid.z == bz,
                     "%s: grid %ux%ux%u", what, c->grid.x, c->grid.y, c->grid.z);
    } else if (a->algorithm == DUET_ALGO_GRID_STRIDE) {
        if (a->launch.grid.x) {
            DT_CHECK(c->grid.x == a->launch.grid.x && c->grid.y == a->launch.grid.y &&
                         c->grid.z == a->launch.grid.z && c->block.x == a->launch.block.x &&
                         c->block.y == a->launch.block.y && c->block.z == a->launch.block.z,
                     "%s: launched %ux%ux%u of %ux%ux%u", what, c->grid.x, c->grid.y, c->grid.z,
                     c->block.x, c->block.y, c->block.z);
        } else {
            DT_CHECK(c->block.x == 32 && c->block.y == 8 && c->grid.x == 64 && c->grid.y == 64,
                     "%s: default launched %ux%u of %ux%u", what, c->grid.x, c->grid.y, c->block.x,
                     c->block.y);
        }
    }
}

/* ---- one case ---------------------------------------------------------------------------- */

static int g_case_failures_shown;

/* Runs every algorithm in [a0, a1) on case t for dtype and compares out's whole buffer with the
 * expected bytes: the transpose where out lives, the sentinel everywhere else. */
static void run_case(const tcase *t, duet_dtype dtype, int a0, int a1)
{
    size_t elem = duet_dtype_size(dtype);
    duet_matrix in, out;
    make_matrices(t, dtype, NULL, NULL, &in, &out);
    size_t n_in = dt_matrix_span_elems(&in) + 3, n_out = dt_matrix_span_elems(&out) + GUARD;
    unsigned char *hin = (unsigned char *)malloc(n_in * elem);
    unsigned char *want = (unsigned char *)malloc(n_out * elem);
    unsigned char *sent = (unsigned char *)malloc(n_out * elem);
    unsigned char *got = (unsigned char *)malloc(n_out * elem);
    duet_buffer *bi = NULL, *bo = NULL;
    if (!hin || !want || !sent || !got) {
        DT_CHECK(0, "host allocation of %zu + %zu elements", n_in, n_out);
        goto done;
    }
    DT_OK(duet_buffer_create(g_ctx, n_in * elem, &bi));
    DT_OK(duet_buffer_create(g_ctx, n_out * elem, &bo));
    if (!bi || !bo) goto done;
    make_matrices(t, dtype, bi, bo, &in, &out);

    fill_pattern(hin, dtype, n_in, (uint64_t)(t->rows * 131 + t->cols));
    dt_fill_sentinel(sent, dtype, n_out);
    memcpy(want, sent, n_out * elem);
    for (int64_t b = 0; b < dt_matrix_batches(&out); b++)
        for (int64_t i = 0; i < out.rows; i++)
            for (int64_t j = 0; j < out.cols; j++)
                memcpy(want + dt_matrix_index(&out, b, i, j) * elem,
                       hin + dt_matrix_index(&in, b, j, i) * elem, elem);
    DT_OK(duet_buffer_write(NULL, bi, 0, hin, n_in * elem));

    for (int k = a0; k < a1; k++) {
        const algo *a = &g_algos[k];
        duet_op_options o;
        duet_launch_info info;
        memset(&o, 0, sizeof o);
        memset(&info, 0xA5, sizeof info);
        o.algorithm = a->algorithm;
        o.tile = a->tile;
        o.launch = a->launch;
        o.info = &info;
        DT_OK(duet_buffer_write(NULL, bo, 0, sent, n_out * elem));
        duet_status st = duet_transpose(NULL, &in, &out, &o);
        char what[256];
        describe(t, what, sizeof what);
        size_t wl = strlen(what);
        snprintf(what + wl, sizeof what - wl, " %s [%s]", duet_dtype_name(dtype), a->label);
        dt_checks++;
        if (st != DUET_SUCCESS) {
            dt_failures++;
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, what,
                    duet_status_string(st), duet_last_error());
            continue;
        }
        memset(got, 0, n_out * elem);
        DT_OK(duet_buffer_read(NULL, bo, 0, got, n_out * elem));
        dt_checks++;
        if (memcmp(got, want, n_out * elem) != 0) {
            dt_failures++;
            size_t e = 0;
            while (e < n_out && !memcmp(got + e * elem, want + e * elem, elem)) e++;
            size_t bad = 0;
            for (size_t f = e; f < n_out; f++)
                bad += memcmp(got + f * elem, want + f * elem, elem) != 0;
            if (g_case_failures_shown++ < 40)
                fprintf(stderr,
                        "%s:%d: %s: %zu of %zu elements wrong, first at %zu: got %g, want %g "
                        "(%s)\n",
                        __FILE__, __LINE__, what, bad, n_out, e, dt_get(got, dtype, e),
                        dt_get(want, dtype, e),
                        memcmp(want + e * elem, sent + e * elem, elem) ? "inside out"
                                                                       : "guard or gap");
        }
        check_info(&info, a, &out, elem, what);
    }
done:
    if (bi) DT_OK(duet_buffer_destroy(bi));
    if (bo) DT_OK(duet_buffer_destroy(bo));
    free(hin);
    free(want);
    free(sent);
    free(got);
}

static tcase plain(int64_t rows, int64_t cols, int layouts)
{
    tcase t;
    memset(&t, 0, sizeof t);
    t.rows = rows;
    t.cols = cols;
    t.lin = (duet_layout)(layouts & 1);
    t.lout = (duet_layout)((layouts >> 1) & 1);
    t.batch = 1;
    return t;
}

static void all_dtypes(const tcase *t, int a0, int a1)
{
    for (int d = 0; d < NDTYPES; d++) run_case(t, g_dtypes[d], a0, a1);
}

/* ---- groups ------------------------------------------------------------------------------ */

static void test_empty_and_tiny(void)
{
    const int64_t shapes[][2] = {{0, 5}, {5, 0}, {0, 0}, {1, 1}, {1, 2}, {2, 1}, {2, 2}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int l = 0; l < 4; l++) {
            tcase t = plain(shapes[s][0], shapes[s][1], l);
            t.off_out = 2;
            all_dtypes(&t, 0, NALGOS);
        }
    /* An empty matrix needs no ld and no buffer room beyond its offset. */
    tcase t = plain(0, 7, 0);
    t.pad_in = -7;
    t.off_in = 0;
    run_case(&t, DUET_DTYPE_F32, 0, NALGOS);
}

static void test_odd_sizes(void)
{
    /* Quick: a spread of sizes; full: every odd pair up to 39 and every size 1..40. */
    static const int64_t quick_sizes[] = {1, 3, 5, 9, 17, 33, 40};
    int n = 0;
    if (g_quick) {
        for (size_t r = 0; r < 7; r++)
            for (size_t c = 0; c < 7; c++) {
                tcase t = plain(quick_sizes[r], quick_sizes[c], n++ & 3);
                t.off_out = (size_t)(n % 3);
                all_dtypes(&t, 0, NALGOS);
            }
        return;
    }
    for (int64_t r = 1; r <= 39; r += 2)
        for (int64_t c = 1; c <= 39; c += 2) {
            tcase t = plain(r, c, n++ & 3);
            t.off_out = (size_t)(n % 3);
            all_dtypes(&t, 0, NALGOS);
        }
    for (int64_t r = 1; r <= 40; r++) {
        tcase t = plain(r, 41 - r, n++ & 3);
        all_dtypes(&t, 0, NALGOS);
    }
}

static void test_tile_edges(void)
{
    static const int64_t edges[] = {31, 32, 33, 63, 64, 65};
    size_t ne = g_quick ? 3 : 6;
    for (size_t r = 0; r < ne; r++)
        for (size_t c = 0; c < ne; c++)
            for (int l = 0; l < 4; l++) {
                tcase t = plain(edges[r], edges[c], l);
                t.off_in = 1;
                t.off_out = 3;
                if (g_quick) {
                    run_case(&t, DUET_DTYPE_F32, 0, NALGOS);
                    run_case(&t, DUET_DTYPE_I8, 0, NALGOS);
                } else {
                    all_dtypes(&t, 0, NALGOS);
                }
            }
}

static void test_tall_wide(void)
{
    /* {3, 70000}: out has 70000 rows, more blocks along y than a GPU grid holds with tile 1,
     * so the grid is folded and the kernels must loop. */
    const int64_t shapes[][2] = {{1, 1000},  {1000, 1},  {3, 70000},
                                 {37, 4099}, {4099, 37}, {2, 3001}};
    size_t ns = g_quick ? 3 : 6;
    for (size_t s = 0; s < ns; s++)
        for (int l = 0; l < 4; l += g_quick ? 3 : 1) {
            tcase t = plain(shapes[s][0], shapes[s][1], l);
            t.off_out = 5;
            if (g_quick) {
                run_case(&t, DUET_DTYPE_F32, 0, NALGOS);
                run_case(&t, DUET_DTYPE_F16, 0, NALGOS);
            } else {
                all_dtypes(&t, 0, NALGOS);
            }
        }
}

static void test_padded_offsets(void)
{
    const int64_t pads[][2] = {{1, 0}, {0, 1}, {3, 17}, {32, 1}, {1, 33}};
    const size_t offs[][2] = {{0, 0}, {3, 5}, {1, 0}, {0, 7}, {17, 31}};
    const int64_t shapes[][2] = {{5, 7}, {33, 17}, {64, 65}, {1, 9}};
    for (size_t s = 0; s < 4; s++)
        for (size_t p = 0; p < 5; p++)
            for (int l = 0; l < 4; l++) {
                tcase t = plain(shapes[s][0], shapes[s][1], l);
                t.pad_in = pads[p][0];
                t.pad_out = pads[p][1];
                t.off_in = offs[p][0];
                t.off_out = offs[p][1];
                if (g_quick && (p + (size_t)l) % 3 != 0) continue;
                all_dtypes(&t, 0, NALGOS);
            }
}

static void test_batches(void)
{
    const int64_t shapes[][2] = {{5, 7}, {33, 31}, {1, 40}, {64, 64}};
    const int64_t bpads[][2] = {{0, 0}, {5, 7}, {-1, 3}, {-1, 0}, {13, 0}};
    const int64_t counts[] = {3, 2, 0, 5};
    for (size_t s = 0; s < 4; s++)
        for (size_t p = 0; p < 5; p++)
            for (int l = 0; l < 4; l++) {
                if (g_quick && (p + (size_t)l + s) % 4 != 0) continue;
                tcase t = plain(shapes[s][0], shapes[s][1], l);
                t.batch = counts[(p + (size_t)l) % 4];
                t.bpad_in = t.batch == 0 && bpads[p][0] < 0 ? 0 : bpads[p][0];
                t.bpad_out = bpads[p][1];
                t.pad_in = (int64_t)p % 2;
                t.pad_out = (int64_t)(p + 1) % 3;
                t.off_in = p;
                t.off_out = 2 * p + 1;
                all_dtypes(&t, 0, NALGOS);
            }
}

/* Matrices of over 4 MiB: on the cpu backend these are written with non-temporal stores in
 * whole 64-byte blocks (1-byte ones in tiles of 512 x 512 staged through the stream's
 * workspace) when out's rows are 16-byte aligned (so some shapes pad out's rows to a multiple
 * of 16 elements), with the plain blocked walk when they are not (off_out), and with edge
 * strips below and beside the last whole block (odd shapes). AUTO only: the other algorithms
 * are the small cases' business. */
static void test_large(void)
{
    /* rows, cols, pad_out, off_out, batch, bpad_out, layouts, pad_in */
    static const int64_t cases[][8] = {
        {2112, 2080, 0, 0, 1, 0, 0, 0},   /* whole blocks down, a 32-column last band */
        {2061, 2083, 3, 0, 1, 0, 0, 0},   /* out's ld 2064: edges on both sides */
        {2083, 2061, 3, 0, 1, 0, 3, 0},   /* the same, both column-major */
        {1030, 2050, 10, 0, 2, 10, 0, 0}, /* two matrices 2132000 elements apart, out's ld 1040 */
        {2061, 2083, 3, 1, 1, 0, 0, 0},   /* out one element off: no streaming */
        {2248, 2101, 8, 0, 1, 0, 0, 0},   /* out's ld 2256: a last band of 200 columns of 1-byte
                                             elements (3 blocks of a 512-byte band and 8 beside) */
        {2245, 2185, 11, 0, 1, 0, 0, 3},  /* 1-byte last tiles partial both ways (3 x 2 blocks
                                             and edges), out's ld 2256 (rows 16 bytes off a
                                             line), in's ld 2188 (4 bytes off a 16) */
    };
    enum { NCASES = sizeof cases / sizeof cases[0] };
    static const duet_dtype quick_dtypes[] = {DUET_DTYPE_I8, DUET_DTYPE_F64};
    for (size_t c = 0; c < NCASES; c++) {
        if (g_quick && c != 1 && c != NCASES - 1) continue;
        tcase t = plain(cases[c][0], cases[c][1], (int)cases[c][6]);
        t.pad_out = cases[c][2];
        t.off_out = (size_t)cases[c][3];
        t.batch = cases[c][4];
        t.bpad_out = cases[c][5];
        t.pad_in = cases[c][7];
        if (g_quick)
            for (size_t d = 0; d < 2; d++) run_case(&t, quick_dtypes[d], 0, 1);
        else
            all_dtypes(&t, 0, 1);
    }
}

/* More matrices than a GPU grid holds along z: the batch loop must cover the rest. */
static void test_many_batches(void)
{
    tcase t = plain(1, 2, 0);
    t.batch = 70000;
    t.bpad_out = 1;
    run_case(&t, DUET_DTYPE_F32, 0, NALGOS);
    if (!g_quick) run_case(&t, DUET_DTYPE_I8, 0, NALGOS);
}

/* The seeds' transpose: an arange int32 matrix (the DLI notebook's size x size). */
static void test_seed_arange(void)
{
    const int64_t n = g_quick ? 256 : 1024;
    duet_buffer *bi = NULL, *bo = NULL;
    int32_t *h = (int32_t *)malloc((size_t)(n * n) * sizeof *h);
    int32_t *o = (int32_t *)malloc((size_t)(n * n) * sizeof *o);
    if (!h || !o) {
        DT_CHECK(0, "host allocation");
        free(h);
        free(o);
        return;
    }
    for (int64_t e = 0; e < n * n; e++) h[e] = (int32_t)e;
    DT_OK(duet_buffer_create(g_ctx, (size_t)(n * n) * 4, &bi));
    DT_OK(duet_buffer_create(g_ctx, (size_t)(n * n) * 4, &bo));
    DT_OK(duet_buffer_write(NULL, bi, 0, h, (size_t)(n * n) * 4));
    duet_matrix in = duet_matrix_make(bi, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, n, n);
    duet_matrix out = duet_matrix_make(bo, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, n, n);
    /* The notebook's three kernels: naive 32x32, tiled 32x32, and the padded 32x8 tile. */
    duet_op_options opts[4];
    memset(opts, 0, sizeof opts);
    opts[0].algorithm = DUET_ALGO_NAIVE;
    opts[0].launch.block.x = 32;
    opts[0].launch.block.y = 32;
    opts[0].launch.block.z = 1;
    opts[1].algorithm = DUET_ALGO_TILED;
    opts[1].tile = 32;
    opts[2].algorithm = DUET_ALGO_TILED_PADDED;
    opts[3].algorithm = DUET_ALGO_AUTO;
    for (int k = 0; k < 4; k++) {
        DT_OK(duet_buffer_memset(NULL, bo, 0, 0xEE, (size_t)(n * n) * 4));
        DT_OK(duet_transpose(NULL, &in, &out, &opts[k]));
        DT_OK(duet_buffer_read(NULL, bo, 0, o, (size_t)(n * n) * 4));
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                if (o[i * n + j] != (int32_t)(j * n + i)) {
                    if (first < 0) first = i * n + j;
                    bad++;
                }
        DT_CHECK(bad == 0, "arange %lldx%lld algorithm %s: %lld wrong, first at %lld", (long long)n,
                 (long long)n, duet_algorithm_name(opts[k].algorithm), (long long)bad,
                 (long long)first);
        /* The notebook's printed corners. */
        DT_CHECK(o[1] == n && o[n] == 1 && o[n * n - 1] == n * n - 1, "corners %d %d %d", o[1],
                 o[n], o[n * n - 1]);
    }
    /* A small one written out: [[0 1 2] [3 4 5]]^T = [[0 3] [1 4] [2 5]]. */
    duet_matrix i23 = duet_matrix_make(bi, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, 2, 3);
    duet_matrix o32 = duet_matrix_make(bo, DUET_DTYPE_I32, DUET_LAYOUT_ROW_MAJOR, 3, 2);
    DT_OK(duet_transpose(NULL, &i23, &o32, NULL));
    int32_t six[6] = {0};
    DT_OK(duet_buffer_read(NULL, bo, 0, six, sizeof six));
    DT_CHECK(six[0] == 0 && six[1] == 3 && six[2] == 1 && six[3] == 4 && six[4] == 2 && six[5] == 5,
             "2x3 arange: %d %d %d %d %d %d", six[0], six[1], six[2], six[3], six[4], six[5]);
    DT_OK(duet_buffer_destroy(bi));
    DT_OK(duet_buffer_destroy(bo));
    free(h);
    free(o);
}

/* Row-major in to column-major out of the same shape transposed is a plain copy of the bytes;
 * the same call twice gives the same bytes. */
static void test_copy_and_determinism(void)
{
    const int64_t r = 37, c = g_quick ? 515 : 4099;
    const size_t n = (size_t)(r * c);
    for (int d = 0; d < NDTYPES; d++) {
        duet_dtype dt = g_dtypes[d];
        size_t elem = duet_dtype_size(dt);
        unsigned char *h = (unsigned char *)malloc(n * elem);
        unsigned char *o1 = (unsigned char *)malloc(n * elem);
        unsigned char *o2 = (unsigned char *)malloc(n * elem);
        duet_buffer *bi = NULL, *bo = NULL;
        if (!h || !o1 || !o2) {
            DT_CHECK(0, "host allocation");
            free(h);
            free(o1);
            free(o2);
            return;
        }
        fill_pattern(h, dt, n, 12345);
        DT_OK(duet_buffer_create(g_ctx, n * elem, &bi));
        DT_OK(duet_buffer_create(g_ctx, n * elem, &bo));
        DT_OK(duet_buffer_write(NULL, bi, 0, h, n * elem));
        duet_matrix in = duet_matrix_make(bi, dt, DUET_LAYOUT_ROW_MAJOR, r, c);
        duet_matrix out = duet_matrix_make(bo, dt, DUET_LAYOUT_COL_MAJOR, c, r);
        for (int k = 0; k < NALGOS; k++) {
            duet_op_options o;
            memset(&o, 0, sizeof o);
            o.algorithm = g_algos[k].algorithm;
            o.tile = g_algos[k].tile;
            o.launch = g_algos[k].launch;
            DT_OK(duet_buffer_memset(NULL, bo, 0, 0, n * elem));
            DT_OK(duet_transpose(NULL, &in, &out, &o));
            DT_OK(duet_buffer_read(NULL, bo, 0, o1, n * elem));
            DT_CHECK(memcmp(o1, h, n * elem) == 0, "row->col copy %s [%s] differs",
                     duet_dtype_name(dt), g_algos[k].label);
        }
        /* A real transpose, twice, bitwise equal. */
        out.layout = DUET_LAYOUT_ROW_MAJOR;
        out.ld = r;
        DT_OK(duet_transpose(NULL, &in, &out, NULL));
        DT_OK(duet_buffer_read(NULL, bo, 0, o1, n * elem));
        DT_OK(duet_buffer_memset(NULL, bo, 0, 0x33, n * elem));
        DT_OK(duet_transpose(NULL, &in, &out, NULL));
        DT_OK(duet_buffer_read(NULL, bo, 0, o2, n * elem));
        DT_CHECK(memcmp(o1, o2, n * elem) == 0, "two identical transposes differ (%s)",
                 duet_dtype_name(dt));
        DT_OK(duet_buffer_destroy(bi));
        DT_OK(duet_buffer_destroy(bo));
        free(h);
        free(o1);
        free(o2);
    }
}

/* A stream of the caller's, and an info pointer left NULL. */
static void test_streams(void)
{
    duet_stream *s = NULL;
    DT_OK(duet_stream_create(g_ctx, &s));
    duet_buffer *bi = NULL, *bo = NULL;
    float h[6 * 9], o[9 * 6];
    for (int e = 0; e < 54; e++) h[e] = (float)e;
    DT_OK(duet_buffer_create(g_ctx, sizeof h, &bi));
    DT_OK(duet_buffer_create(g_ctx, sizeof o, &bo));
    DT_OK(duet_buffer_write_async(s, bi, 0, h, sizeof h));
    duet_matrix in = duet_matrix_make(bi, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 6, 9);
    duet_matrix out = duet_matrix_make(bo, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 9, 6);
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.algorithm = DUET_ALGO_TILED;
    opt.tile = 4;
    DT_OK(duet_transpose(s, &in, &out, &opt));
    DT_OK(duet_buffer_read_async(s, bo, 0, o, sizeof o));
    DT_OK(duet_stream_synchronize(s));
    int bad = 0;
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 6; j++) bad += o[i * 6 + j] != h[j * 9 + i];
    DT_CHECK(bad == 0, "transpose on a stream: %d wrong", bad);
    DT_OK(duet_buffer_destroy(bi));
    DT_OK(duet_buffer_destroy(bo));
    DT_OK(duet_stream_destroy(s));
}

int main(int argc, char **argv)
{
    g_quick = dt_quick_mode(argc, argv);
    g_ctx = dt_open_or_skip();
    DT_OK(duet_context_get_props(g_ctx, &g_props));
    test_empty_and_tiny();
    test_seed_arange();
    test_copy_and_determinism();
    test_streams();
    test_odd_sizes();
    test_tile_edges();
    test_tall_wide();
    test_padded_offsets();
    test_batches();
    test_many_batches();
    test_large();
    DT_OK(duet_context_destroy(g_ctx));
    return dt_finish("test_transpose");
}
