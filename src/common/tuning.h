/* tuning.h - the AUTO GEMM and in-place transpose tables: data keyed by architecture, default row. */
#ifndef DUET_TUNING_H
#define DUET_TUNING_H

#include "duet/duet.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which kernel family a row selects. */
typedef enum dt_gemm_engine {
    DT_GEMM_ENGINE_FMA = 0, /* one fused multiply-add per lane (kernels/gemm_fast.cuh): every
                               dtype, every device                                             */
    DT_GEMM_ENGINE_DMMA = 1 /* f64 tensor-core mma.sync (kernels/gemm_fast_dmma.cuh): f64 on
                               NVIDIA sm_80 and newer only                                     */
} dt_gemm_engine;

/* One kernel shape. FMA: each of `threads` threads owns a tm x tn block of C.
 * DMMA: each warp of 32 owns a tm x tn block of C (the warp tile).
 * stages: 2 = register-staged double buffer (plain loads, any device); 3 or more = a ring of
 * shared-memory stages filled by cp.async (NVIDIA sm_80+; elsewhere the kernel falls back to
 * the register-staged path). */
typedef struct dt_gemm_tile {
    int bm, bn, bk;
    int tm, tn;
    int threads;
    int stages;
} dt_gemm_tile;

/*
 * Split-K: when the output has too few tiles to fill the device, K is cut into `split` slices
 * of whole bk-deep steps; each slice's block writes its partial tile to the stream's workspace
 * and a reduce kernel sums the slices in slice order and applies alpha and beta (results stay
 * bitwise reproducible: the split depends on the shape and device only, the sum order is fixed).
 * Problems the row sends to its small shape may split; of those sent to the large shape (its
 * grid fills the device) only the rows of an almost empty last round may (`tail`).
 *   fill:       resident blocks per compute unit of the small shape. A problem with at least
 *               fill * compute_units small tiles is not split.
 *   large_fill: resident blocks per compute unit of the large shape, when split problems
 *               should run on it (its tiles pad the output no more than the small ones, and
 *               its rate on a full device is higher: the H100's f32 128 x 128 tile); 0: split
 *               problems stay on the small shape.
 *   max:        most slices (bounds the workspace: split * batch * m * n elements).
 *   min_k:      fewest K per slice (rounded up to whole bk steps): a slice shorter than this
 *               spends more on its prologue, epilogue and the reduction than it gains.
 *   min_depth:  split only when K >= min_depth * sqrt(m * n) (one matrix of the batch): the
 *               partial sums cost split * m * n stores and loads against m * n * K
 *               multiply-adds, so squarish problems (1024^3: the H100 lost 6-13% split) run
 *               unsplit and only deep ones (8192 x 128 x 8192, 64 x 64 x 65536) split.
 *   tail:       for problems the row sends to its large shape, the most their last round
 *               of large_fill * compute_units blocks may fill, in percent, for the rows past
 *               the full rounds (all of them when there is none) to be split off and split
 *               (dt_gemm_tail_plan); 0: never (FMA rows only: the launcher ignores it on
 *               DMMA rows).
 *   edges:      what GEMMs do about the edges of the large tile (FMA rows only), a sum of
 *               DT_GEMM_EDGE_* below; 0: nothing.
 * max <= 1 turns split-K off for the row.
 */
typedef struct dt_gemm_split_rule {
    int fill;
    int large_fill;
    int max;
    int min_k;
    int min_depth;
    int tail;
    int edges;
} dt_gemm_split_rule;

/* edges: the partial last column of large tiles runs as a GEMM of its own (dt_gemm_edge_cols,
 * and dt_gemm_edge_cols_split for problems the split plan runs). */
#define DT_GEMM_EDGE_STRIP 1
/* edges: operands whose rows are not 16-byte aligned are copied into rows that are, when the
 * copy pays (dt_gemm_pack_pays). */
#define DT_GEMM_EDGE_PACK 2

/* One row: the engine and two shapes. `large` is used once its grid has at least large_waves
 * blocks per compute unit, `small` below that (small or skinny problems, whose large-tile grid
 * would leave compute units idle or run too few waves to balance); `split` says when and how
 * far the small shape splits K. */
typedef struct dt_gemm_tuning {
    const char *arch; /* "sm_90", "gfx90a", ...; "default" for the fallback rows */
    duet_dtype dtype;
    dt_gemm_engine engine;
    dt_gemm_tile large;
    dt_gemm_tile small;
    int large_waves;
    dt_gemm_split_rule split;
} dt_gemm_tuning;

/* The row for arch (compared up to a ':' feature suffix, so "gfx90a:sramecc+:xnack-" finds
 * "gfx90a") and dtype; the default row of dtype when the arch is unknown or NULL; NULL only for
 * a dtype GEMM does not support. */
const dt_gemm_tuning *dt_gemm_tuning_lookup(const char *arch, duet_dtype dtype);

/*
 * The number of K slices for an m x n x k GEMM of `batch` matrices run with tile t on
 * compute_units SMs/CUs under rule r (1: no split). Plain arithmetic on its arguments, so the
 * same problem on the same device always splits the same way:
 *   - 1 when the rule is off, when tiles = ceil(m/bm) ceil(n/bn) batch already reach
 *     r->fill * compute_units (one full wave of resident blocks), when K holds fewer than
 *     two slices of r->min_k, or when K < r->min_depth * sqrt(m n);
 *   - otherwise the split s in 2 .. min(r->max, K / min_k, 2 ceil(slots / tiles)) whose grid
 *     tiles * s best fills whole waves of slots = r->fill * compute_units blocks (wave
 *     quantisation: efficiency tiles * s / (ceil(tiles * s / slots) * slots)), the smallest
 *     such s when several are within 1/64 of the best;
 *   - finally rounded so that every slice holds whole bk steps and none is empty
 *     (dt_gemm_split_slice_k).
 */
int dt_gemm_split_k(const dt_gemm_split_rule *r, int64_t m, int64_t n, int64_t k, int64_t batch,
                    const dt_gemm_tile *t, int compute_units);

/* The shape and split for a problem that the row's tile choice sent to its small shape:
 * the large shape with dt_gemm_split_k under fill = large_fill when the rule names one, the
 * large tiles pad m x n no more than the small ones, that split is > 1, and the small shape's
 * split (if any) does not fill its last round of fill * compute_units slots more than 5/4 as
 * well; else the small shape with dt_gemm_split_k under fill (*split = 1: no split). */
const dt_gemm_tile *dt_gemm_split_plan(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t k,
                                       int64_t batch, int compute_units, int *split);

/*
 * The tail of a problem the row sends to its large shape (wave quantisation: T large tiles on
 * S = large_fill * compute_units slots run ceil(T / S) rounds, the last one maybe almost empty).
 * Returns NULL, with *top_rows = 0 and *split = 1, unless all of these hold:
 *   - the rule has tail > 0, large_fill > 0 and max > 1;
 *   - top = the whole rows of large tiles (bm rows of m, all of n, every matrix of the batch)
 *     that fit in the floor(T / S) full rounds, and the tiles of the rows from there on fill
 *     less than tail percent of S (with no full round, top = 0 and the tail is the problem);
 *   - dt_gemm_split_plan splits the rows from top * bm on (*split > 1).
 * Then *top_rows = top * bm: rows [0, *top_rows) run on the large shape unsplit, rows
 * [*top_rows, m) on the returned shape split *split times. Plain arithmetic on its arguments,
 * like the split itself.
 */
const dt_gemm_tile *dt_gemm_tail_plan(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t k,
                                      int64_t batch, int compute_units, int64_t *top_rows,
                                      int *split);

/*
 * The partial last column of large tiles (n not a multiple of bn): the register-staged large
 * tile runs it on its tested k-loop, and on the H100 it cost up to a quarter of the whole GEMM
 * (f32 4096 x 4100 x 4096: 3.45 ms against 2.77 for 4096^3). Returns n_main, the columns
 * [0, n_main) that run as the problem itself, with the rest [n_main, n) as a GEMM of its own
 * (split by the row's rule like any other), when all of these hold; else 0:
 *   - the rule's edges has DT_GEMM_EDGE_STRIP, and n > bn with n % bn != 0;
 *   - the problem's large tiles, ceil(m / bm) ceil(n / bn) batch, fill at most
 *     DT_GEMM_EDGE_ROUNDS rounds of large_fill (or fill) * compute_units slots: past that the
 *     partial column's cost is spread over many rounds and the strip's own cost (it reads all of
 *     A once more) matched it (H100 8192 x 8196 x 4096: 0.963x cuBLAS whole, 0.955x split off);
 *   - vectors (both operands read in 16-byte vectors, after DT_GEMM_EDGE_PACK), or else the
 *     columns left take fewer rounds than the whole: element-wise operands take the tested
 *     k-loop on every tile, so there the strip only pays where it saves a round (2047 x 2049 x
 *     2051: 289 tiles in two rounds of 264, 256 in one, gains; 4095 x 4097 x 4093, four rounds
 *     either way, loses).
 * Then n_main = (n / bn) bn.
 */
#define DT_GEMM_EDGE_ROUNDS 12
int64_t dt_gemm_edge_cols(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t batch,
                          int compute_units, int vectors);

/*
 * Whether copying `elements` elements of operands into 16-byte aligned rows pays before an
 * m x n x k GEMM (one matrix) on the row's large shape: the rule's edges has DT_GEMM_EDGE_PACK,
 * the large tiles fill at least one round of large_fill * compute_units slots, and
 * m n k >= DT_GEMM_PACK_RATIO * elements. A copy moves each element twice at memory speed, and
 * the aligned large tile runs 10-16% faster than the element-wise one on its long k-loop (H100
 * f32: 4096 x 4096 x 4093 3.23 ms on A as it lies, 2.77 ms on A's copy, which took 48 us);
 * 1200 multiply-adds per copied element is where the copies cost about 4% (square problems of
 * about 2500 and more with both operands unaligned, 1250 with one). Above the ratio the copies
 * gained on every shape measured (2560 x 2561 x 2559 to 8191 x 8193 x 8191); below it they lost
 * (2047 x 2049 x 2051, 1024 per element), and so do problems of less than a round of large
 * tiles (2000 x 1030 x 500: its parts then run split, on short k-loops that the copy does not
 * speed up). The measurements are in docs/performance.md.
 */
#define DT_GEMM_PACK_RATIO 1200
int dt_gemm_pack_pays(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t k, int64_t elements,
                      int compute_units);

/*
 * The partial last column of large tiles of a problem the row's split plan runs (one gf_pick_tile
 * sends to the small shape, or with the tail rule one of less than a round of large tiles, which
 * dt_gemm_tail_plan sends whole to the split plan): returns n_main = (n / bn) bn when
 * DT_GEMM_EDGE_STRIP is set, n > bn with n % bn != 0, and dt_gemm_split_plan fills the slots of its
 * last round at least DT_GEMM_EDGE_SPLIT_GAIN thousandths better for the columns [0, n_main) than
 * for the whole (the fill: blocks / whole rounds of slots, as dt_gemm_split_plan weighs its
 * shapes); else 0. The columns [n_main, n) then run as a GEMM of their own. On the H100 (f32,
 * docs/performance.md) the strip gains where it raises the last round's fill by more than the
 * threshold (1023 x 1025 x 1027, 1536 x 1537 x 1535, 600 x 2049 x 1500: 4-13% faster) and
 * loses where the whole already filled its rounds (1025^3, 333 x 777 x 5555: 4-8% slower), the
 * cost of its second launch.
 */
#define DT_GEMM_EDGE_SPLIT_GAIN 30
int64_t dt_gemm_edge_cols_split(const dt_gemm_tuning *row, int64_t m, int64_t n, int64_t k,
                                int64_t batch, int compute_units);

/* K per slice of a split: ceil(ceil(k / bk) / split) * bk (k itself when split <= 1). The
 * slices are [s * slice_k, min(k, (s + 1) * slice_k)) for s < split. */
int64_t dt_gemm_split_slice_k(int64_t k, int bk, int split);

/* The in-place transpose (kernels/transpose_inplace.cuh). square_tile: the tile edge of the
 * square tile-pair swap for 1-, 2-, 4- and 8-byte elements (32 or 64: the sizes compiled in;
 * two tiles of edge x (edge + 1) elements live in static shared memory, so 64 is only for up to
 * 4 bytes). stage_bytes: the scratch one staged phase of the rectangular decomposition targets
 * per group of lines; kept within L2 so that the gather back reads the scratch from L2 (a group
 * never has fewer than one line, so scratch is at most max(stage_bytes, a line)). */
typedef struct dt_transpose_inplace_tuning {
    const char *arch; /* "sm_90", ...; "default" for the fallback row */
    int square_tile[4];
    size_t stage_bytes;
    size_t line_smem_bytes; /* most shared memory a block of the line kernels takes (lines
                               that fit are gathered there, in one launch per phase; above
                               48 KiB the kernel opts in, within the device's limit)      */
    const char *square_kernel[4]; /* the square kernel for 1-, 2-, 4- and 8-byte elements:
                                     "tile" (the element-wide tile-pair swap) or "step"
                                     (stepped addresses); DUET_TRANSPOSE_INPLACE_SQUARE=name
                                     overrides it for every size (docs/environment.md)     */
} dt_transpose_inplace_tuning;

/* The row for arch (as dt_gemm_tuning_lookup matches it), else the default row; never NULL. */
const dt_transpose_inplace_tuning *dt_transpose_inplace_tuning_lookup(const char *arch);


/* ---- tuning files (src/common/tuning_file.c, format in docs/tuning.md) -------------------- */

/* The compiled-in shapes of an engine and dtype for a device of arch (NULL: any NVIDIA
 * device): the shapes that some built-in row of that engine and dtype names (f32 and i32 share
 * theirs), the AMD-only ones only for a "gfx" arch. Writes up to max of them to out (out may
 * be NULL) and returns how many there are. */
int dt_gemm_candidates(const char *arch, duet_dtype dtype, dt_gemm_engine engine,
                       dt_gemm_tile *out, int max);

/* The rows one context took from a tuning file, and why the file was or was not used.
 * Immutable once loaded, so every thread of the context reads it without a lock. */
typedef struct dt_tuning_set dt_tuning_set;

/* Reads the tuning file for a device of arch: DUET_TUNING_FILE when set (empty: no file),
 * else $XDG_CONFIG_HOME/duet/tuning.txt or $HOME/.config/duet/tuning.txt when present. Never
 * fails: a missing or malformed file gives a set with no rows whose source says why (printed
 * to stderr when DUET_TUNING_VERBOSE=1). NULL only when memory runs out (then: built-in). */
dt_tuning_set *dt_tuning_load(const char *arch);
void dt_tuning_free(dt_tuning_set *set);
/* "builtin", "file:PATH (N rows for ARCH)" or "builtin: REASON" (never NULL). */
const char *dt_tuning_source(const dt_tuning_set *set);

/* The file's row for arch and dtype when set has one (*from_file = 1), else the built-in row
 * (dt_gemm_tuning_lookup; *from_file = 0). */
const dt_gemm_tuning *dt_gemm_tuning_select(const dt_tuning_set *set, const char *arch,
                                            duet_dtype dtype, int *from_file);

#ifdef __cplusplus
}
#endif

#endif /* DUET_TUNING_H */
