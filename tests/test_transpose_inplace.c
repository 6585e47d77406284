/* test_transpose_inplace.c - duet_transpose with in and out the same storage: every shape. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "harness.h"

static duet_context *g_ctx;
static int g_quick;
/* While set: the last character a GPU square kernel's name must end in (the kernel the
 * DUET_TRANSPOSE_INPLACE_SQUARE value under test picks). */
static char g_square_suffix;

/* Elements of guard band before and after the matrices in their buffer. */
#define GUARD 9

/* One dtype per element size: the op moves bytes, never converts. */
static const duet_dtype g_dtypes[] = {DUET_DTYPE_I8, DUET_DTYPE_F16, DUET_DTYPE_F32, DUET_DTYPE_F64};
#define NDTYPES ((int)(sizeof g_dtypes / sizeof g_dtypes[0]))

/* An in-place case: in is rows x cols of layout `layout` with ld = its line length + pad (pad
 * only for square ones), batch matrices batch_stride = extent + bpad apart; out is the same
 * storage, cols x rows of layout lout (same layout: a real transpose; the other one: the
 * storage already holds in^T). */
typedef struct icase {
    int64_t rows, cols;
    duet_layout layout, lout;
    int64_t pad, batch, bpad;
    int64_t off; /* elements before the first matrix (0: GUARD); 16 keeps every base 16-byte aligned */
} icase;

static int64_t line_len(duet_layout layout, int64_t rows, int64_t cols)
{
    return layout == DUET_LAYOUT_ROW_MAJOR ? cols : rows;
}

static void describe(const icase *c, duet_dtype dt, char *s, size_t n)
{
    snprintf(s, n, "%s %lldx%lld %s->%s ld+%lld batch %lld (+%lld) offset %lld",
             duet_dtype_name(dt), (long long)c->rows, (long long)c->cols,
             c->layout ? "col" : "row", c->lout ? "col" : "row", (long long)c->pad,
             (long long)c->batch, (long long)c->bpad, (long long)(c->off ? c->off : GUARD));
}

/* The two descriptors of a case over buffer buf starting at element GUARD. */
static void make_pair(const icase *c, duet_dtype dt, duet_buffer *buf, duet_matrix *in,
                      duet_matrix *out)
{
    memset(in, 0, sizeof *in);
    in->buffer = buf;
    in->dtype = dt;
    in->layout = c->layout;
    in->rows = c->rows;
    in->cols = c->cols;
    in->ld = line_len(c->layout, c->rows, c->cols) + c->pad;
    in->offset = c->off ? c->off : GUARD;
    in->batch_count = c->batch;
    in->batch_stride = dt_matrix_extent(in) + c->bpad;
    *out = *in;
    out->layout = c->lout;
    out->rows = c->cols;
    out->cols = c->rows;
    if (c->lout == c->layout && c->rows != c->cols)
        out->ld = line_len(c->lout, out->rows, out->cols); /* packed result */
}

static void fill_random(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(dt_rand_u64() >> 56);
}

/* The host transpose: expect = orig with out(b, j, i) = orig's in(b, i, j). */
static void host_transpose(const duet_matrix *in, const duet_matrix *out, size_t elem,
                           const unsigned char *orig, unsigned char *expect, size_t bytes)
{
    memcpy(expect, orig, bytes);
    for (int64_t b = 0; b < dt_matrix_batches(in); b++)
        for (int64_t i = 0; i < in->rows; i++)
            for (int64_t j = 0; j < in->cols; j++)
                memcpy(expect + dt_matrix_index(out, b, j, i) * elem,
                       orig + dt_matrix_index(in, b, i, j) * elem, elem);
}

static int first_diff(const unsigned char *x, const unsigned char *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return (int)(i > 0x7fffffff ? 0x7fffffff : i);
    return -1;
}

/* Runs the case both ways (in -> out, then out -> in) and checks every byte of the buffer. */
static void run_case(const icase *c, duet_dtype dt)
{
    const size_t elem = duet_dtype_size(dt);
    duet_matrix in, out;
    make_pair(c, dt, NULL, &in, &out);
    const size_t elems = dt_matrix_span_elems(&in) + GUARD, bytes = elems * elem;
    char what[160];
    describe(c, dt, what, sizeof what);
    unsigned char *orig = malloc(bytes), *expect = malloc(bytes), *got = malloc(bytes);
    if (!orig || !expect || !got) {
        DT_CHECK(0, "%s: host allocation of %zu bytes failed", what, bytes);
        free(orig), free(expect), free(got);
        return;
    }
    fill_random(orig, bytes);
    duet_buffer *buf = NULL;
    DT_OK(duet_buffer_create(g_ctx, bytes, &buf));
    if (!buf) {
        free(orig), free(expect), free(got);
        return;
    }
    make_pair(c, dt, buf, &in, &out);
    DT_OK(duet_buffer_write(NULL, buf, 0, orig, bytes));
    duet_launch_info info;
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.info = &info;
    DT_OK(duet_transpose(NULL, &in, &out, &opt));
    DT_OK(duet_buffer_read(NULL, buf, 0, got, bytes));
    host_transpose(&in, &out, elem, orig, expect, bytes);
    int d = first_diff(got, expect, bytes);
    DT_CHECK(d < 0, "%s: byte %d is %d, expected %d (kernel %s)", what, d, d < 0 ? 0 : got[d],
             d < 0 ? 0 : expect[d], info.kernel);
    /* What ran: a kernel unless the storage already held in^T; scratch only for rectangles. */
    const int64_t p = line_len(c->layout, c->cols, c->rows), q = line_len(c->layout, c->rows, c->cols);
    const int identity = c->layout != c->lout || p == 1 || q == 1;
    DT_CHECK(identity ? info.launches == 0 : info.launches >= 1 && info.kernel[0] != '\0',
             "%s: launch info %s, %d launches", what, info.kernel, info.launches);
    /* Scratch: none for a square; O(max(rows, cols)) per matrix for a rectangle (the GPUs need
     * none while whole lines fit in shared memory; the cpu takes a column group per thread). */
    const size_t most = ((size_t)16 << 20) + (size_t)2048 * (size_t)(p > q ? p : q) * elem;
    DT_CHECK(identity || p == q ? info.workspace_bytes == 0 : info.workspace_bytes <= most,
             "%s: workspace_bytes %zu", what, info.workspace_bytes);
    DT_CHECK(info.algorithm == DUET_ALGO_AUTO, "%s: algorithm %s", what,
             duet_algorithm_name(info.algorithm));
    /* A GPU names the square kernel "transpose_inplace_square<edge><kind>_<size>b". */
    if (g_square_suffix && strncmp(info.kernel, "transpose_inplace_square", 24) == 0) {
        const char *size = strrchr(info.kernel, '_');
        /* '0': the tile kernel, whose name ends in its edge (a digit). */
        const int ok = size != NULL && (g_square_suffix == '0'
                                            ? size[-1] >= '0' && size[-1] <= '9'
                                            : size[-1] == g_square_suffix);
        DT_CHECK(ok, "%s: ran %s, not the '%c' kernel", what, info.kernel, g_square_suffix);
    }
    /* The rectangular path: super-elements when c = gcd >= 32 and a band (m n / c elements)
     * fits every backend's budget (48 KiB: the smallest, a GPU's default shared memory), C2R
     * when c < 32; in between it is the backend's choice (docs/internals.md). */
    if (!identity && p != q) {
        int64_t g = p, h = q;
        while (h) {
            const int64_t r = g % h;
            g = h;
            h = r;
        }
        const int64_t band_bytes = p * q / g * (int64_t)elem;
        if (g >= 32 && band_bytes <= 48 * 1024)
            DT_CHECK(strstr(info.kernel, "_super") != NULL,
                     "%s: c = %lld, band %lld bytes: ran %s, not the super-element path", what,
                     (long long)g, (long long)band_bytes, info.kernel);
        if (g < 32)
            DT_CHECK(strstr(info.kernel, "_c2r") != NULL, "%s: c = %lld: ran %s, not C2R", what,
                     (long long)g, info.kernel);
    }
    /* Transposing back restores the original. */
    DT_OK(duet_transpose(NULL, &out, &in, NULL));
    DT_OK(duet_buffer_read(NULL, buf, 0, got, bytes));
    d = first_diff(got, orig, bytes);
    DT_CHECK(d < 0, "%s: transposed twice, byte %d differs from the original", what, d);
    DT_OK(duet_buffer_destroy(buf));
    free(orig), free(expect), free(got);
}

static void run_all_dtypes(icase c)
{
    for (int d = 0; d < NDTYPES; d++) run_case(&c, g_dtypes[d]);
}

static icase shape(int64_t rows, int64_t cols, duet_layout layout)
{
    icase c;
    memset(&c, 0, sizeof c);
    c.rows = rows;
    c.cols = cols;
    c.layout = c.lout = layout;
    c.batch = 1;
    return c;
}

static void test_shapes(void)
{
    /* Every shape 1..40 x 1..40 (quick: a spread of them), both layouts. */
    static const int64_t quick_dims[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 32, 33, 40};
    const int nq = (int)(sizeof quick_dims / sizeof quick_dims[0]);
    for (int l = 0; l < 2; l++) {
        const duet_layout layout = (duet_layout)l;
        for (int64_t r = 1; r <= 40; r++) {
            if (g_quick && r > nq) break;
            for (int64_t c = 1; c <= 40; c++) {
                if (g_quick && c > nq) break;
                const int64_t rr = g_quick ? quick_dims[r - 1] : r;
                const int64_t cc = g_quick ? quick_dims[c - 1] : c;
                run_all_dtypes(shape(rr, cc, layout));
            }
        }
    }
    /* Primes, powers of two, n x (n + 1), 1 x n and n x 1, tall-skinny and short-wide. */
    static const int64_t big[][2] = {
        {97, 89},    {101, 103},  {127, 131},  {251, 241},  {64, 64},   {128, 256},
        {256, 128},  {512, 512},  {1024, 512}, {100, 101},  {255, 256}, {1000, 1001},
        {1, 1000},   {1000, 1},   {1, 4097},   {4097, 1},   {1000, 999}, {96, 160},
        {100000, 3}, {3, 100000}, {65536, 2},  {5, 70001},  {1031, 1031}, {2048, 2048},
    };
    const int nbig = (int)(sizeof big / sizeof big[0]);
    for (int k = 0; k < nbig; k++) {
        /* The quick set keeps the long-line shapes: they take the staged GPU path. */
        if (g_quick && (big[k][0] * big[k][1] > 400000 || (k % 2 && k < 12))) continue;
        for (int l = 0; l < 2; l++) run_all_dtypes(shape(big[k][0], big[k][1], (duet_layout)l));
    }
}

static void test_padding_batches_layouts(void)
{
    static const struct {
        int64_t rows, cols, pad, batch, bpad;
    } cs[] = {
        {33, 33, 7, 1, 0},  {64, 64, 6, 1, 0},  {5, 5, 1, 3, 2},    {16, 16, 0, 3, 0},
        {40, 40, 24, 2, 5}, {5, 7, 0, 4, 0},    {12, 18, 0, 5, 3},  {1, 9, 0, 3, 1},
        {9, 1, 0, 2, 0},    {31, 64, 0, 3, 11}, {100, 3, 0, 7, 0},  {257, 33, 0, 2, 1},
        {1, 1, 0, 4, 0},    {1, 1, 5, 3, 2},    {70, 70, 0, 3, 0},  {48, 48, 80, 2, 0},
    };
    const int n = (int)(sizeof cs / sizeof cs[0]);
    for (int k = 0; k < n; k++)
        for (int l = 0; l < 2; l++) {
            icase c = shape(cs[k].rows, cs[k].cols, (duet_layout)l);
            c.pad = cs[k].pad;
            c.batch = cs[k].batch;
            c.bpad = cs[k].bpad;
            run_all_dtypes(c);
            /* The other layout for out: the storage is already in^T (ld kept). */
            c.lout = (duet_layout)!l;
            run_all_dtypes(c);
        }
}

/* Rectangles with c = gcd(rows, cols) >= 32 (the super-element path: band permute, square
 * transpose of super-elements, band permute), the shapes just below it (C2R), and both with
 * a 16-byte aligned base (super-elements moved as whole words, vector band loads on the GPU)
 * and a misaligned one (element by element), batches with aligned and odd strides. */
static void test_super_elements(void)
{
    static const int64_t dims[][2] = {
        {64, 32},   {32, 64},   {96, 64},   {64, 96},   {99, 66},   {141, 94},  {192, 128},
        {300, 200}, {64, 128},  {66, 33},   {80, 40},   {94, 47},   {200, 100}, {400, 200},
        {128, 32},  {160, 96},  {165, 99},  {1280, 32}, {32, 1280}, {62, 31},   {93, 62},
        {31, 62},   {124, 62},  {2048, 64}, {64, 2048}, {400, 100}, {385, 35},  {1024, 512},
        /* Bands of 64 KB for 8-byte elements (m n / c = 8192): past 48 KiB, a GPU kernel that
         * opts in to more shared memory, or C2R where the device has no more. */
        {8192, 32}, {32, 8192}, {4096, 64},
    };
    const int nd = (int)(sizeof dims / sizeof dims[0]);
    for (int k = 0; k < nd; k++) {
        if (g_quick && k % 3 == 2) continue;
        for (int l = 0; l < 2; l++)
            for (int al = 0; al < 2; al++) {
                icase c = shape(dims[k][0], dims[k][1], (duet_layout)l);
                c.off = al ? 16 : 0;
                run_all_dtypes(c);
            }
    }
    /* Ratio 2 : 1 over a range of c (odd c included: every band and tile edge partial). */
    for (int64_t cc = 32; cc <= 200; cc += g_quick ? 29 : 7)
        for (int l = 0; l < 2; l++) {
            icase c = shape(2 * cc, cc, (duet_layout)l);
            c.off = cc % 2 ? 0 : 16;
            run_all_dtypes(c);
            c = shape(cc, 2 * cc, (duet_layout)l);
            c.off = cc % 2 ? 16 : 0;
            run_all_dtypes(c);
        }
    /* Squares with every row 16-byte aligned, full and edge tile pairs. */
    static const int64_t sq[][3] = {{64, 0, 1}, {128, 0, 2}, {192, 16, 1}, {200, 8, 2}, {96, 32, 1}};
    for (int k = 0; k < (int)(sizeof sq / sizeof sq[0]); k++)
        for (int l = 0; l < 2; l++) {
            icase c = shape(sq[k][0], sq[k][0], (duet_layout)l);
            c.pad = sq[k][1];
            c.batch = sq[k][2];
            c.off = 16;
            run_all_dtypes(c);
        }
    /* Batches: packed and padded strides, aligned and not. */
    static const struct {
        int64_t rows, cols, batch, bpad, off;
    } bs[] = {
        {64, 32, 3, 0, 16}, {32, 64, 3, 0, 16}, {96, 64, 2, 4, 16}, {64, 96, 4, 3, 0},
        {66, 33, 3, 1, 16}, {99, 66, 2, 0, 0},  {64, 128, 5, 16, 16}, {62, 31, 3, 0, 16},
    };
    const int nb = (int)(sizeof bs / sizeof bs[0]);
    for (int k = 0; k < nb; k++)
        for (int l = 0; l < 2; l++) {
            icase c = shape(bs[k].rows, bs[k].cols, (duet_layout)l);
            c.batch = bs[k].batch;
            c.bpad = bs[k].bpad;
            c.off = bs[k].off;
            run_all_dtypes(c);
        }
}

/* Each square kernel a tuning row may name, forced by DUET_TRANSPOSE_INPLACE_SQUARE for every
 * element size (the GPU backends; the cpu backend ignores it and runs the cases once more):
 * full and edge tile pairs of both tile edges, padded ld, batches with aligned and odd strides,
 * 16-byte aligned bases and not, and the super-element rectangles whose step 2 is the square
 * kernel. */
static void test_square_kernels(void)
{
    static const struct {
        const char *name;
        char suffix; /* the last character of the kernel's name before "_<size>b" */
    } kinds[] = {{"tile", '0'}, {"step", 's'}};
    static const struct {
        int64_t n, pad, batch, bpad, off;
    } sq[] = {
        {64, 0, 1, 0, 16},    {96, 32, 2, 32, 16},  {128, 0, 3, 0, 16}, {130, 0, 2, 3, 16},
        {200, 8, 2, 8, 16},   {256, 0, 2, 0, 16},   {256, 0, 2, 0, 0},  {257, 3, 1, 0, 16},
        {300, 20, 3, 20, 16}, {384, 128, 1, 0, 16}, {520, 0, 1, 0, 16}, {33, 0, 3, 0, 16},
    };
    static const int64_t rect[][2] = {{64, 32}, {96, 64}, {400, 200}, {2048, 64}};
    const char *saved = getenv("DUET_TRANSPOSE_INPLACE_SQUARE");
    char *keep = saved ? strdup(saved) : NULL;
    for (int kk = 0; kk < (int)(sizeof kinds / sizeof kinds[0]); kk++) {
        setenv("DUET_TRANSPOSE_INPLACE_SQUARE", kinds[kk].name, 1);
        g_square_suffix = kinds[kk].suffix;
        for (int k = 0; k < (int)(sizeof sq / sizeof sq[0]); k++) {
            if (g_quick && k % 2) continue;
            for (int l = 0; l < 2; l++) {
                icase c = shape(sq[k].n, sq[k].n, (duet_layout)l);
                c.pad = sq[k].pad;
                c.batch = sq[k].batch;
                c.bpad = sq[k].bpad;
                c.off = sq[k].off;
                run_all_dtypes(c);
            }
        }
        for (int k = 0; k < (int)(sizeof rect / sizeof rect[0]); k++)
            for (int al = 0; al < 2; al++) {
                icase c = shape(rect[k][0], rect[k][1], DUET_LAYOUT_ROW_MAJOR);
                c.off = al ? 16 : 0;
                run_all_dtypes(c);
            }
    }
    g_square_suffix = 0;
    if (keep)
        setenv("DUET_TRANSPOSE_INPLACE_SQUARE", keep, 1);
    else
        unsetenv("DUET_TRANSPOSE_INPLACE_SQUARE");
    free(keep);
}

/* A rejected call leaves every byte of the buffer as it was. */
static void expect_rejected(const duet_matrix *in, duet_matrix *out,
                            const duet_op_options *opt, duet_status want, const char *word,
                            duet_buffer *buf, const unsigned char *orig, size_t bytes,
                            unsigned char *got, const char *what)
{
    DT_FAILS(duet_transpose(NULL, in, out, opt), want, word);
    DT_OK(duet_buffer_read(NULL, buf, 0, got, bytes));
    DT_CHECK(first_diff(got, orig, bytes) < 0, "%s: a rejected call wrote to the buffer", what);
}

static void test_bad_inputs(void)
{
    const duet_dtype dt = DUET_DTYPE_F32;
    const size_t bytes = 4096 * 4;
    unsigned char *orig = malloc(bytes), *got = malloc(bytes);
    duet_buffer *buf = NULL;
    DT_OK(duet_buffer_create(g_ctx, bytes, &buf));
    if (!orig || !got || !buf) {
        DT_CHECK(0, "allocation failed");
        free(orig), free(got);
        return;
    }
    fill_random(orig, bytes);
    DT_OK(duet_buffer_write(NULL, buf, 0, orig, bytes));
    duet_matrix in, out;

    /* Partial overlap: out one element further on. */
    icase c = shape(6, 10, DUET_LAYOUT_ROW_MAJOR);
    make_pair(&c, dt, buf, &in, &out);
    out.offset += 1;
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "offset", buf, orig, bytes, got,
                    "partial overlap");
    out.offset = in.offset + 30;
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "overlap", buf, orig, bytes,
                    got, "partial overlap by 30");

    /* A rectangle with a padded ld, in or out. */
    make_pair(&c, dt, buf, &in, &out);
    in.ld = 11;
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "in.ld", buf, orig, bytes, got,
                    "padded rectangular in");
    make_pair(&c, dt, buf, &in, &out);
    out.ld = 7;
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "out.ld", buf, orig, bytes, got,
                    "padded rectangular out");
    c = shape(6, 10, DUET_LAYOUT_COL_MAJOR);
    make_pair(&c, dt, buf, &in, &out);
    in.ld = 8;
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "in.ld", buf, orig, bytes, got,
                    "padded rectangular col-major in");

    /* A square keeps its ld. */
    c = shape(8, 8, DUET_LAYOUT_ROW_MAJOR);
    c.pad = 3;
    make_pair(&c, dt, buf, &in, &out);
    out.ld = 8;
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "out.ld", buf, orig, bytes, got,
                    "square with another out.ld");

    /* Other layout for out with another ld. */
    c = shape(8, 5, DUET_LAYOUT_ROW_MAJOR);
    c.lout = DUET_LAYOUT_COL_MAJOR;
    make_pair(&c, dt, buf, &in, &out);
    out.ld = 9;
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "out.ld", buf, orig, bytes, got,
                    "layout change with another ld");

    /* Batch strides: mismatched, or too small for one matrix. */
    c = shape(4, 6, DUET_LAYOUT_ROW_MAJOR);
    c.batch = 3;
    make_pair(&c, dt, buf, &in, &out);
    out.batch_stride += 1;
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "batch_stride", buf, orig,
                    bytes, got, "mismatched batch strides");
    make_pair(&c, dt, buf, &in, &out);
    in.batch_stride = out.batch_stride = 20;
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "batch_stride", buf, orig,
                    bytes, got, "batch stride below the extent");
    make_pair(&c, dt, buf, &in, &out);
    in.batch_stride = 0; /* a broadcast in cannot be the storage of a batch of outputs */
    expect_rejected(&in, &out, NULL, DUET_ERROR_INVALID_ARGUMENT, "batch_stride", buf, orig,
                    bytes, got, "broadcast in");

    /* Seed algorithms do not run in place; the message points at auto. */
    c = shape(8, 8, DUET_LAYOUT_ROW_MAJOR);
    make_pair(&c, dt, buf, &in, &out);
    const duet_algorithm algos[] = {DUET_ALGO_NAIVE, DUET_ALGO_TILED, DUET_ALGO_TILED_PADDED,
                                    DUET_ALGO_GRID_STRIDE};
    for (int k = 0; k < 4; k++) {
        duet_op_options opt;
        memset(&opt, 0, sizeof opt);
        opt.algorithm = algos[k];
        expect_rejected(&in, &out, &opt, DUET_ERROR_UNSUPPORTED, "auto", buf, orig, bytes, got,
                        duet_algorithm_name(algos[k]));
    }

    /* Distinct storage keeps the out-of-place AUTO path (no scratch, no in-place kernel). */
    c = shape(6, 10, DUET_LAYOUT_ROW_MAJOR);
    make_pair(&c, dt, buf, &in, &out);
    out.offset = in.offset + 60;
    duet_launch_info info;
    duet_op_options opt;
    memset(&opt, 0, sizeof opt);
    opt.info = &info;
    DT_OK(duet_transpose(NULL, &in, &out, &opt));
    DT_CHECK(strstr(info.kernel, "inplace") == NULL && info.workspace_bytes == 0,
             "distinct in and out ran %s with %zu workspace bytes", info.kernel,
             info.workspace_bytes);

    DT_OK(duet_buffer_destroy(buf));
    free(orig), free(got);
}

int main(int argc, char **argv)
{
    g_quick = dt_quick_mode(argc, argv);
    g_ctx = dt_open_or_skip();
    dt_seed(0x1ace2014);
    test_bad_inputs();
    test_padding_batches_layouts();
    test_super_elements();
    test_square_kernels();
    test_shapes();
    DT_OK(duet_context_destroy(g_ctx));
    return dt_finish("test_transpose_inplace");
}
