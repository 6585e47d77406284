/* api_launch.c - launch configurations: ceil-div helpers, grid folding, limit validation. */
#include "backend.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* No CUDA or HIP device takes more than 2^31 - 1 blocks along any grid axis. */
#define DT_GRID_AXIS_MAX INT64_C(2147483647)

static duet_status config_2d(int64_t nx, int64_t ny, uint32_t bx, uint32_t by,
                             duet_launch_config *config, const char *fn)
{
    if (!config) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "config is NULL");
    if (nx < 0 || ny < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s (%lld) is negative",
                       nx < 0 ? "nx" : "ny", (long long)(nx < 0 ? nx : ny));
    if (bx == 0 || by == 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "%s (threads per block) is 0",
                       bx == 0 ? "bx" : "by");
    int64_t gx = dt_ceil_div(nx, bx), gy = dt_ceil_div(ny, by);
    if (gx > DT_GRID_AXIS_MAX || gy > DT_GRID_AXIS_MAX)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                       "%s (%lld) needs %lld blocks of %u threads, more than a grid dimension "
                       "holds (%lld)",
                       gx > gy ? "nx" : "ny", (long long)(gx > gy ? nx : ny),
                       (long long)(gx > gy ? gx : gy), gx > gy ? bx : by,
                       (long long)DT_GRID_AXIS_MAX);
    config->grid.x = (uint32_t)gx;
    config->grid.y = (uint32_t)gy;
    config->grid.z = 1;
    config->block.x = bx;
    config->block.y = by;
    config->block.z = 1;
    config->shared_bytes = 0;
    return DUET_SUCCESS;
}

duet_status duet_launch_config_1d(int64_t n, uint32_t threads_per_block,
                                  duet_launch_config *config)
{
    dt_clear_error();
    duet_status st = config_2d(n, 1, threads_per_block, 1, config, "duet_launch_config_1d");
    if (st != DUET_SUCCESS) {
        /* The 1D form has one n and one block size: name them as the caller wrote them. */
        char msg[1024]; /* a copy: dt_fail rewrites the message this is read from */
        snprintf(msg, sizeof msg, "%s", duet_last_error());
        if (strstr(msg, "bx (threads per block)"))
            return dt_fail(st, "duet_launch_config_1d", "threads_per_block is 0");
        if (strstr(msg, "nx ("))
            return dt_fail(st, "duet_launch_config_1d", "n %s", strstr(msg, "nx (") + 3);
    }
    return st;
}

duet_status duet_launch_config_2d(int64_t nx, int64_t ny, uint32_t bx, uint32_t by,
                                  duet_launch_config *config)
{
    dt_clear_error();
    return config_2d(nx, ny, bx, by, config, "duet_launch_config_2d");
}

duet_status dt_validate_config(const duet_device_props *p, const duet_launch_config *c,
                               const char *func)
{
    static const char axis[3] = {'x', 'y', 'z'};
    const uint32_t block[3] = {c->block.x, c->block.y, c->block.z};
    const uint32_t grid[3] = {c->grid.x, c->grid.y, c->grid.z};
    for (int i = 0; i < 3; i++) {
        if (block[i] == 0)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "block.%c is 0", axis[i]);
        if (grid[i] == 0)
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "grid.%c is 0", axis[i]);
    }
    for (int i = 0; i < 3; i++)
        if ((int64_t)block[i] > p->max_block_dims[i])
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                           "block.%c (%u) is over the device's max_block_dims[%d] (%d)", axis[i],
                           block[i], i, p->max_block_dims[i]);
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads > (uint64_t)p->max_threads_per_block)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "block (%u x %u x %u = %llu threads) is over the device's "
                       "max_threads_per_block (%d)",
                       block[0], block[1], block[2], (unsigned long long)threads,
                       p->max_threads_per_block);
    for (int i = 0; i < 3; i++)
        if ((int64_t)grid[i] > p->max_grid_dims[i])
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                           "grid.%c (%u) is over the device's max_grid_dims[%d] (%lld)", axis[i],
                           grid[i], i, (long long)p->max_grid_dims[i]);
    if (c->shared_bytes > p->shared_mem_per_block_optin)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "shared_bytes (%zu) is over the device's shared memory per block (%zu)",
                       c->shared_bytes, p->shared_mem_per_block_optin);
    return DUET_SUCCESS;
}

duet_status duet_launch_config_validate(const duet_context *handle,
                                        const duet_launch_config *config)
{
    static const char *fn = "duet_launch_config_validate";
    dt_clear_error();
    dt_context *ctx = (dt_context *)dt_handle_get(handle, DT_CONTEXT);
    if (!ctx)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, fn, "ctx is %s",
                       handle ? "not a live handle (destroyed or never created)" : "NULL");
    if (!config) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "config is NULL");
    return dt_validate_config(&ctx->props, config, fn);
}

void dt_fold_grid(const duet_device_props *props, duet_dim3 *grid)
{
    /* Kernels loop over y and z with a gridDim stride, so clamping loses no work. */
    if ((int64_t)grid->y > props->max_grid_dims[1]) grid->y = (uint32_t)props->max_grid_dims[1];
    if ((int64_t)grid->z > props->max_grid_dims[2]) grid->z = (uint32_t)props->max_grid_dims[2];
}
