/* transpose_inplace_gpu.h - the in-place transpose's host entry, built in its own GPU unit. */
#ifndef DUET_TRANSPOSE_INPLACE_GPU_H
#define DUET_TRANSPOSE_INPLACE_GPU_H

#include "common/internal.h"

/* What the in-place launcher did, for duet_launch_info and for an error message. */
struct gpu_inplace_result {
    char kernel[48];         /* the family ("transpose_inplace_square64"), or the failing kernel */
    int tile;                /* the square tile edge, 0 for the rectangular phases            */
    int launches;            /* kernels launched (all on one stream, no host synchronisation) */
    duet_launch_config cfg;  /* of the last (or the failing) launch                           */
};

/* Workspace bytes the in-place transpose t needs on a device of props (0: none). */
size_t gpu_transpose_inplace_scratch(const dt_copy2d *t, const duet_device_props *props);

/* Queues the in-place transpose t on stream with scratch of at least
 * gpu_transpose_inplace_scratch(t, props) bytes. Returns the first launch error (0 = success:
 * DUET_GPU_SUCCESS) and fills *res; the caller reports the error with res->kernel. */
int gpu_transpose_inplace_run(const dt_copy2d *t, const duet_device_props *props, void *stream,
                              void *scratch, gpu_inplace_result *res);

#endif /* DUET_TRANSPOSE_INPLACE_GPU_H */
