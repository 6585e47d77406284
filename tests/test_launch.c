/* test_launch.c - launch-config helpers (ceil-div, limits) and validation against device props. */
#include "harness.h"

#include <ctype.h>

static duet_context *g_ctx;
static duet_device_props g_props;

static int g_quick;

/* Whole word, so that a limit of "64" is not found inside "1064". */
static int has_word(const char *msg, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(msg, word); p; p = strstr(p + 1, word)) {
        int before = p > msg && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
        int after = isalnum((unsigned char)p[n]) || p[n] == '_';
        if (!before && !after) return 1;
    }
    return 0;
}

/* A failing call with the status, the function named first and each word of words (separated
 * by spaces) present as a whole word. */
#define FAILS_WITH(call, want, fname, words)                                                       \
    check_fails((call), (want), (fname), (words), #call, __LINE__)

static void check_fails(duet_status got, duet_status want, const char *fname, const char *words,
                        const char *text, int line)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", duet_last_error());
    dt_checks++;
    if (got != want) {
        dt_failures++;
        fprintf(stderr, "%s:%d: %s -> %s, wanted %s (\"%s\")\n", __FILE__, line, text,
                duet_status_string(got), duet_status_string(want), msg);
        return;
    }
    size_t fl = strlen(fname);
    if (strncmp(msg, fname, fl) != 0 || msg[fl] != ':') {
        dt_failures++;
        fprintf(stderr, "%s:%d: %s: message \"%s\" does not open with \"%s: \"\n", __FILE__, line,
                text, msg, fname);
        return;
    }
    char w[64];
    for (const char *p = words; *p;) {
        size_t n = strcspn(p, " ");
        if (n > 0 && n < sizeof w) {
            memcpy(w, p, n);
            w[n] = '\0';
            if (!has_word(msg, w)) {
                dt_failures++;
                fprintf(stderr, "%s:%d: %s: message \"%s\" does not name \"%s\"\n", __FILE__, line,
                        text, msg, w);
                return;
            }
        }
        p += n;
        if (*p) p++;
    }
}

static const char *num(long long v)
{
    static char bufs[4][32];
    static int k;
    k = (k + 1) % 4;
    snprintf(bufs[k], sizeof bufs[k], "%lld", v);
    return bufs[k];
}

static int64_t ref_ceil(int64_t n, int64_t d)
{
    return n / d + (n % d != 0);
}

static duet_launch_config poisoned(void)
{
    duet_launch_config c;
    memset(&c, 0xA5, sizeof c);
    return c;
}

static int same_config(const duet_launch_config *a, const duet_launch_config *b)
{
    return a->grid.x == b->grid.x && a->grid.y == b->grid.y && a->grid.z == b->grid.z &&
           a->block.x == b->block.x && a->block.y == b->block.y && a->block.z == b->block.z &&
           a->shared_bytes == b->shared_bytes;
}

/* ---- 1D and 2D helpers ------------------------------------------------------------------- */

static void check_1d(int64_t n, uint32_t tpb, uint32_t grid, int line)
{
    duet_launch_config c = poisoned();
    duet_status st = duet_launch_config_1d(n, tpb, &c);
    dt_checks++;
    if (st != DUET_SUCCESS || c.grid.x != grid || c.grid.y != 1 || c.grid.z != 1 ||
        c.block.x != tpb || c.block.y != 1 || c.block.z != 1 || c.shared_bytes != 0) {
        dt_failures++;
        fprintf(stderr,
                "%s:%d: 1d(n=%lld, tpb=%u) -> %s grid %ux%ux%u block %ux%ux%u shared %zu, "
                "wanted grid %ux1x1 block %ux1x1 (%s)\n",
                __FILE__, line, (long long)n, tpb, duet_status_string(st), c.grid.x, c.grid.y,
                c.grid.z, c.block.x, c.block.y, c.block.z, c.shared_bytes, grid, tpb,
                duet_last_error());
    }
}

static void check_2d(int64_t nx, int64_t ny, uint32_t bx, uint32_t by, uint32_t gx, uint32_t gy,
                     int line)
{
    duet_launch_config c = poisoned();
    duet_status st = duet_launch_config_2d(nx, ny, bx, by, &c);
    dt_checks++;
    if (st != DUET_SUCCESS || c.grid.x != gx || c.grid.y != gy || c.grid.z != 1 ||
        c.block.x != bx || c.block.y != by || c.block.z != 1 || c.shared_bytes != 0) {
        dt_failures++;
        fprintf(stderr,
                "%s:%d: 2d(%lld, %lld, %u, %u) -> %s grid %ux%ux%u block %ux%ux%u, wanted grid "
                "%ux%ux1 block %ux%ux1 (%s)\n",
                __FILE__, line, (long long)nx, (long long)ny, bx, by, duet_status_string(st),
                c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, gx, gy, bx, by,
                duet_last_error());
    }
}

static void test_config_1d(void)
{
    /* The seeds: 256 ones doubled with 256 threads per block is one block. */
    check_1d(256, 256, 1, __LINE__);
    check_1d(257, 256, 2, __LINE__);
    check_1d(255, 256, 1, __LINE__);
    check_1d(1, 1, 1, __LINE__);
    check_1d(1, 1024, 1, __LINE__);
    check_1d(1000, 3, 334, __LINE__);
    /* n == 0: the documented grid.x = ceil(0 / tpb) = 0, an empty grid. */
    check_1d(0, 256, 0, __LINE__);
    /* The largest grid.x any device takes (2^31 - 1 blocks) still fits. */
    check_1d(INT32_MAX, 1, INT32_MAX, __LINE__);
    check_1d((int64_t)INT32_MAX * 1024, 1024, INT32_MAX, __LINE__);
    check_1d(INT64_C(1) << 40, UINT32_MAX, (uint32_t)ref_ceil(INT64_C(1) << 40, UINT32_MAX),
             __LINE__);

    const int64_t ns_full[] = {1,    2,    3,     7,     31,    32,      33,           63,
                               64,   65,   255,   256,   257,   1000,    1023,         1024,
                               1025, 4099, 65535, 65536, 65537, 1 << 20, (1 << 20) + 1};
    const uint32_t tpbs[] = {1, 2, 3, 5, 32, 64, 96, 128, 255, 256, 512, 1000, 1024};
    size_t nn = sizeof ns_full / sizeof ns_full[0];
    if (g_quick) nn = 12;
    for (size_t i = 0; i < nn; i++)
        for (size_t t = 0; t < sizeof tpbs / sizeof tpbs[0]; t++)
            check_1d(ns_full[i], tpbs[t], (uint32_t)ref_ceil(ns_full[i], tpbs[t]), __LINE__);

    duet_launch_config c = poisoned(), keep = c;
    FAILS_WITH(duet_launch_config_1d(256, 0, &c), DUET_ERROR_INVALID_ARGUMENT,
               "duet_launch_config_1d", "threads_per_block");
    FAILS_WITH(duet_launch_config_1d(-1, 256, &c), DUET_ERROR_INVALID_ARGUMENT,
               "duet_launch_config_1d", "n");
    FAILS_WITH(duet_launch_config_1d(INT64_MIN, 256, &c), DUET_ERROR_INVALID_ARGUMENT,
               "duet_launch_config_1d", "n");
    FAILS_WITH(duet_launch_config_1d(256, 256, NULL), DUET_ERROR_INVALID_ARGUMENT,
               "duet_launch_config_1d", "config");
    /* More than 2^31 - 1 blocks: no device launches that many along x. */
    FAILS_WITH(duet_launch_config_1d((int64_t)INT32_MAX + 1, 1, &c), DUET_ERROR_INVALID_ARGUMENT,
               "duet_launch_config_1d", "n");
    FAILS_WITH(duet_launch_config_1d((int64_t)INT32_MAX * 256 + 1, 256, &c),
               DUET_ERROR_INVALID_ARGUMENT, "duet_launch_config_1d", "n");
    FAILS_WITH(duet_launch_config_1d(INT64_C(1) << 32, 1, &c), DUET_ERROR_INVALID_ARGUMENT,
               "duet_launch_config_1d", "n");
    /* ceil-div near INT64_MAX must not overflow on the way. */
    FAILS_WITH(duet_launch_config_1d(INT64_MAX, 1, &c), DUET_ERROR_INVALID_ARGUMENT,
               "duet_launch_config_1d", "n");
    FAILS_WITH(duet_launch_config_1d(INT64_MAX, 1024, &c), DUET_ERROR_INVALID_ARGUMENT,
               "duet_launch_config_1d", "n");
    FAILS_WITH(duet_launch_config_1d(INT64_MAX - 1, UINT32_MAX, &c), DUET_ERROR_INVALID_ARGUMENT,
               "duet_launch_config_1d", "n");
    DT_CHECK(same_config(&c, &keep), "a failing call wrote the config");
}

static void test_config_2d(void)
{
    /* The seeds: 4x4 with TPB = 3 is 2 x 2 blocks; the 5x23 @ 23x7 product (C is 5 x 7) with
     * TPB = 32 is one block; the DLI 36x36 add is 6 x 6 blocks of 6 x 6. */
    check_2d(4, 4, 3, 3, 2, 2, __LINE__);
    check_2d(7, 5, 32, 32, 1, 1, __LINE__);
    check_2d(23, 23, 32, 32, 1, 1, __LINE__);
    check_2d(23, 5, 3, 3, 8, 2, __LINE__);
    check_2d(5, 23, 3, 3, 2, 8, __LINE__);
    check_2d(23, 5, 4, 4, 6, 2, __LINE__);
    check_2d(36, 36, 6, 6, 6, 6, __LINE__);
    check_2d(22, 24, 16, 16, 2, 2, __LINE__);
    check_2d(16384, 16384, 32, 32, 512, 512, __LINE__);
    check_2d(8192, 8192, 32, 8, 256, 1024, __LINE__);
    check_2d(0, 5, 16, 16, 0, 1, __LINE__);
    check_2d(5, 0, 16, 16, 1, 0, __LINE__);
    check_2d(1, 1, 1, 1, 1, 1, __LINE__);
    check_2d(INT32_MAX, 1, 1, 1, INT32_MAX, 1, __LINE__);

    const int64_t ns[] = {1, 2, 3, 5, 8, 17, 31, 32, 33, 100, 4099};
    const uint32_t bs[] = {1, 3, 8, 16, 32};
    size_t nn = sizeof ns / sizeof ns[0];
    if (g_quick) nn = 6;
    for (size_t i = 0; i < nn; i++)
        for (size_t j = 0; j < nn; j++)
            for (size_t p = 0; p < 5; p++)
                for (size_t q = 0; q < 5; q++)
                    check_2d(ns[i], ns[j], bs[p], bs[q], (uint32_t)ref_ceil(ns[i], bs[p]),
                             (uint32_t)ref_ceil(ns[j], bs[q]), __LINE__);

    duet_launch_config c = poisoned(), keep = c;
    const char *f = "duet_launch_config_2d";
    FAILS_WITH(duet_launch_config_2d(4, 4, 0, 3, &c), DUET_ERROR_INVALID_ARGUMENT, f, "bx");
    FAILS_WITH(duet_launch_config_2d(4, 4, 3, 0, &c), DUET_ERROR_INVALID_ARGUMENT, f, "by");
    FAILS_WITH(duet_launch_config_2d(-1, 4, 3, 3, &c), DUET_ERROR_INVALID_ARGUMENT, f, "nx");
    FAILS_WITH(duet_launch_config_2d(4, -1, 3, 3, &c), DUET_ERROR_INVALID_ARGUMENT, f, "ny");
    FAILS_WITH(duet_launch_config_2d(4, 4, 3, 3, NULL), DUET_ERROR_INVALID_ARGUMENT, f, "config");
    FAILS_WITH(duet_launch_config_2d((int64_t)INT32_MAX + 1, 4, 1, 1, &c),
               DUET_ERROR_INVALID_ARGUMENT, f, "nx");
    FAILS_WITH(duet_launch_config_2d(4, INT64_C(1) << 40, 1, 1, &c), DUET_ERROR_INVALID_ARGUMENT, f,
               "ny");
    FAILS_WITH(duet_launch_config_2d(INT64_MAX, 4, 32, 8, &c), DUET_ERROR_INVALID_ARGUMENT, f,
               "nx");
    FAILS_WITH(duet_launch_config_2d(4, INT64_MAX, 32, 8, &c), DUET_ERROR_INVALID_ARGUMENT, f,
               "ny");
    DT_CHECK(same_config(&c, &keep), "a failing call wrote the config");
}

/* ---- device properties and validation ---------------------------------------------------- */

static int terminated(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

static void test_props(void)
{
    const duet_device_props *p = &g_props;
    const char *be = duet_backend_name();
    DT_CHECK(terminated(p->name, sizeof p->name) && p->name[0], "name empty or unterminated");
    DT_CHECK(terminated(p->arch, sizeof p->arch) && p->arch[0], "arch empty or unterminated");
    DT_CHECK(p->warp_size == 32 || p->warp_size == 64, "warp_size %d", p->warp_size);
    DT_CHECK(p->compute_units >= 1, "compute_units %d", p->compute_units);
    DT_CHECK(p->max_threads_per_block >= p->warp_size &&
                 p->max_threads_per_block % p->warp_size == 0,
             "max_threads_per_block %d, warp %d", p->max_threads_per_block, p->warp_size);
    for (int i = 0; i < 3; i++) {
        DT_CHECK(p->max_block_dims[i] >= 1 && p->max_block_dims[i] <= p->max_threads_per_block,
                 "max_block_dims[%d] %d", i, p->max_block_dims[i]);
        DT_CHECK(p->max_grid_dims[i] >= 1 && p->max_grid_dims[i] <= (int64_t)UINT32_MAX,
                 "max_grid_dims[%d] %lld", i, (long long)p->max_grid_dims[i]);
    }
    /* Every backend takes a 1D grid of 2^31 - 1 blocks and 1024-thread blocks along x. */
    DT_CHECK(p->max_grid_dims[0] >= INT32_MAX, "max_grid_dims[0] %lld",
             (long long)p->max_grid_dims[0]);
    DT_CHECK(p->max_grid_dims[1] >= 65535 && p->max_grid_dims[2] >= 65535,
             "max_grid_dims y %lld z %lld", (long long)p->max_grid_dims[1],
             (long long)p->max_grid_dims[2]);
    DT_CHECK(p->max_threads_per_block >= 256, "max_threads_per_block %d", p->max_threads_per_block);
    DT_CHECK(p->shared_mem_per_block >= 16384, "shared_mem_per_block %zu", p->shared_mem_per_block);
    DT_CHECK(p->shared_mem_per_block_optin >= p->shared_mem_per_block, "optin %zu < default %zu",
             p->shared_mem_per_block_optin, p->shared_mem_per_block);
    DT_CHECK(p->global_mem_bytes > 0, "global_mem_bytes 0");
    if (!strcmp(be, "cpu")) {
        DT_CHECK(!strcmp(p->arch, "host"), "cpu arch \"%s\"", p->arch);
        DT_CHECK(p->capability_major == 0 && p->capability_minor == 0, "cpu capability %d.%d",
                 p->capability_major, p->capability_minor);
    } else if (!strcmp(be, "cuda")) {
        DT_CHECK(!strncmp(p->arch, "sm_", 3), "cuda arch \"%s\"", p->arch);
        DT_CHECK(p->warp_size == 32, "cuda warp %d", p->warp_size);
        DT_CHECK(p->capability_major >= 3, "cuda capability %d.%d", p->capability_major,
                 p->capability_minor);
        char want[32];
        snprintf(want, sizeof want, "sm_%d%d", p->capability_major, p->capability_minor);
        DT_CHECK(!strncmp(p->arch, want, strlen(want)), "arch \"%s\" capability %d.%d", p->arch,
                 p->capability_major, p->capability_minor);
    } else if (!strcmp(be, "hip")) {
        DT_CHECK(!strncmp(p->arch, "gfx", 3), "hip arch \"%s\"", p->arch);
        DT_CHECK(p->capability_major >= 1, "hip gfx major %d", p->capability_major);
    }

    /* The device's and the context's views agree. */
    duet_device_props d;
    memset(&d, 0, sizeof d);
    DT_OK(duet_device_get_props(0, &d));
    DT_CHECK(!strcmp(d.name, p->name) && !strcmp(d.arch, p->arch), "names differ");
    DT_CHECK(d.warp_size == p->warp_size && d.max_threads_per_block == p->max_threads_per_block &&
                 d.compute_units == p->compute_units &&
                 d.shared_mem_per_block_optin == p->shared_mem_per_block_optin &&
                 d.max_grid_dims[0] == p->max_grid_dims[0] &&
                 d.max_block_dims[2] == p->max_block_dims[2],
             "device and context props differ");
}

static duet_launch_config cfg(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                              uint32_t bz, size_t shared)
{
    duet_launch_config c;
    c.grid.x = gx;
    c.grid.y = gy;
    c.grid.z = gz;
    c.block.x = bx;
    c.block.y = by;
    c.block.z = bz;
    c.shared_bytes = shared;
    return c;
}

/* Sets one axis of a dim3 (0: x, 1: y, 2: z). */
static void set_axis(duet_dim3 *d, int axis, uint32_t v)
{
    if (axis == 0)
        d->x = v;
    else if (axis == 1)
        d->y = v;
    else
        d->z = v;
}

static void test_validate(void)
{
    const duet_device_props *p = &g_props;
    const char *f = "duet_launch_config_validate";
    duet_launch_config c = cfg(1, 1, 1, 1, 1, 1, 0);
    DT_OK(duet_launch_config_validate(g_ctx, &c));
    FAILS_WITH(duet_launch_config_validate(NULL, &c), DUET_ERROR_INVALID_HANDLE, f, "ctx");
    FAILS_WITH(duet_launch_config_validate((const duet_context *)(uintptr_t)0x1234, &c),
               DUET_ERROR_INVALID_HANDLE, f, "ctx");
    FAILS_WITH(duet_launch_config_validate(g_ctx, NULL), DUET_ERROR_INVALID_ARGUMENT, f, "config");

    /* Exactly at every limit passes. */
    uint32_t mt = (uint32_t)p->max_threads_per_block;
    if (mt <= (uint32_t)p->max_block_dims[0]) {
        c = cfg(1, 1, 1, mt, 1, 1, 0);
        DT_OK(duet_launch_config_validate(g_ctx, &c));
    }
    c = cfg((uint32_t)p->max_grid_dims[0], (uint32_t)p->max_grid_dims[1],
            (uint32_t)p->max_grid_dims[2], 32, 8, 1, p->shared_mem_per_block_optin);
    DT_OK(duet_launch_config_validate(g_ctx, &c));
    c = cfg(1, 1, 1, 1, 1, (uint32_t)p->max_block_dims[2], 0);
    DT_OK(duet_launch_config_validate(g_ctx, &c));
    c = cfg(1, 1, 1, 1, (uint32_t)p->max_block_dims[1], 1, 0);
    DT_OK(duet_launch_config_validate(g_ctx, &c));
    c = cfg(2, 2, 1, 3, 3, 1, 0);
    DT_OK(duet_launch_config_validate(g_ctx, &c));

    /* Zero dimensions, one at a time. */
    const char *grid_word[3] = {"grid.x", "grid.y", "grid.z"};
    const char *block_word[3] = {"block.x", "block.y", "block.z"};
    for (int i = 0; i < 3; i++) {
        c = cfg(2, 2, 2, 4, 4, 2, 0);
        set_axis(&c.grid, i, 0);
        FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
                   grid_word[i]);
        c = cfg(2, 2, 2, 4, 4, 2, 0);
        set_axis(&c.block, i, 0);
        FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
                   block_word[i]);
    }

    /* Each block axis one past its limit (the others 1), named with the limit's value. */
    for (int i = 0; i < 3; i++) {
        c = cfg(1, 1, 1, 1, 1, 1, 0);
        set_axis(&c.block, i, (uint32_t)p->max_block_dims[i] + 1);
        FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
                   num(p->max_block_dims[i]));
    }
    /* Threads over the limit with every axis inside its own: 33 x 33 = 1089 on a 1024 device. */
    for (uint32_t bx = 1; bx <= (uint32_t)p->max_block_dims[0]; bx *= 2) {
        uint32_t by = mt / bx + 1;
        if (by > (uint32_t)p->max_block_dims[1]) continue;
        c = cfg(1, 1, 1, bx, by, 1, 0);
        FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
                   num(p->max_threads_per_block));
    }
    if (33 * 33 > p->max_threads_per_block && p->max_block_dims[1] >= 33) {
        c = cfg(1, 1, 1, 33, 33, 1, 0);
        FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
                   num(p->max_threads_per_block));
    }
    if (p->max_block_dims[2] >= 2 && mt / 2 + 1 <= (uint32_t)p->max_block_dims[0]) {
        c = cfg(1, 1, 1, mt / 2 + 1, 1, 2, 0);
        FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
                   num(p->max_threads_per_block));
    }
    /* Threads whose product overflows 32 bits. */
    c = cfg(1, 1, 1, 65536, 65536, 2, 0);
    FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f, "block");
    c = cfg(1, 1, 1, UINT32_MAX, UINT32_MAX, UINT32_MAX, 0);
    FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f, "block");

    /* Each grid axis one past its limit. */
    for (int i = 0; i < 3; i++) {
        if (p->max_grid_dims[i] >= (int64_t)UINT32_MAX) continue;
        c = cfg(1, 1, 1, 32, 1, 1, 0);
        set_axis(&c.grid, i, (uint32_t)p->max_grid_dims[i] + 1);
        FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
                   num(p->max_grid_dims[i]));
        set_axis(&c.grid, i, UINT32_MAX);
        FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
                   grid_word[i]);
    }

    /* Shared memory: the opt-in maximum passes, one byte more does not. */
    c = cfg(1, 1, 1, 32, 1, 1, p->shared_mem_per_block_optin);
    DT_OK(duet_launch_config_validate(g_ctx, &c));
    c.shared_bytes = p->shared_mem_per_block_optin + 1;
    FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
               "shared_bytes");
    FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
               num((long long)p->shared_mem_per_block_optin));
    c.shared_bytes = SIZE_MAX;
    FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f,
               "shared_bytes");

    /* What the helpers build for ordinary sizes is launchable. */
    const int64_t ns[] = {1, 256, 257, 1 << 20};
    for (int i = 0; i < 4; i++) {
        DT_OK(duet_launch_config_1d(ns[i], 256, &c));
        DT_OK(duet_launch_config_validate(g_ctx, &c));
        DT_OK(duet_launch_config_2d(ns[i], 37, 32, 8, &c));
        DT_OK(duet_launch_config_validate(g_ctx, &c));
    }
    /* An empty 1D config is not launchable, and validation says so. */
    DT_OK(duet_launch_config_1d(0, 256, &c));
    FAILS_WITH(duet_launch_config_validate(g_ctx, &c), DUET_ERROR_INVALID_ARGUMENT, f, "grid.x");
    DT_CHECK(duet_last_error()[0] != '\0', "no message");
    DT_OK(duet_launch_config_validate(g_ctx, &(duet_launch_config){{1, 1, 1}, {1, 1, 1}, 0}));
    DT_CHECK(!strcmp(duet_last_error(), ""), "message after success: \"%s\"", duet_last_error());
}

int main(int argc, char **argv)
{
    g_quick = dt_quick_mode(argc, argv);
    g_ctx = dt_open_or_skip();
    DT_OK(duet_context_get_props(g_ctx, &g_props));
    test_config_1d();
    test_config_2d();
    test_props();
    test_validate();
    DT_OK(duet_context_destroy(g_ctx));
    return dt_finish("test_launch");
}
