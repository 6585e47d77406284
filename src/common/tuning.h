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

/* One row: the engine and two shapes. `large` is used once its grid has at least large_waves
 * blocks per compute unit, `small` below that (small or skinny problems, whose large-tile grid
 * would leave compute units idle or run too few waves to balance); split-K is not done. */
typedef struct dt_gemm_tuning {
    const char *arch; /* "sm_90", "gfx90a", ...; "default" for the fallback rows */
    duet_dtype dtype;
    dt_gemm_engine engine;
    dt_gemm_tile large;
    dt_gemm_tile small;
    int large_waves;
} dt_gemm_tuning;

/* The row for arch (compared up to a ':' feature suffix, so "gfx90a:sramecc+:xnack-" finds
 * "gfx90a") and dtype; the default row of dtype when the arch is unknown or NULL; NULL only for
 * a dtype GEMM does not support. */
const dt_gemm_tuning *dt_gemm_tuning_lookup(const char *arch, duet_dtype dtype);

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
} dt_transpose_inplace_tuning;

/* The row for arch (as dt_gemm_tuning_lookup matches it), else the default row; never NULL. */
const dt_transpose_inplace_tuning *dt_transpose_inplace_tuning_lookup(const char *arch);

#ifdef __cplusplus
}
#endif

#endif /* DUET_TUNING_H */
