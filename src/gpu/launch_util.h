/* launch_util.h - the GPU launchers' host helpers: kernel arguments from a problem, results. */
#ifndef DUET_GPU_LAUNCH_UTIL_H
#define DUET_GPU_LAUNCH_UTIL_H

/*
 * kernels/ holds device code only; what turns a normalised problem of src/common (dt_view,
 * dt_gemm, dt_copy2d) into the kernels' argument structs, and what a launcher reports back,
 * lives here, beside the launchers that use it. Include after the runtime header.
 */
#include "common/internal.h"
#include "kernel_util.cuh"

#include <stdint.h>
#include <string.h>

#include <type_traits>

/* A view of src/common as the kernels take it. */
template <typename T> static inline duet_view<T> duet_view_of(const dt_view &v)
{
    duet_view<T> r;
    r.p = static_cast<T *>(v.base);
    r.rs = v.rs;
    r.cs = v.cs;
    r.bs = v.bs;
    return r;
}

template <typename T> static inline duet_view<const T> duet_cview_of(const dt_view &v)
{
    duet_view<const T> r;
    r.p = static_cast<const T *>(v.base);
    r.rs = v.rs;
    r.cs = v.cs;
    r.bs = v.bs;
    return r;
}

/* double -> float without the undefined behaviour of converting a value beyond float's range:
 * from the halfway point above FLT_MAX on, round-to-nearest gives infinity. */
static inline float duet_float_of(double v)
{
    const double overflow = 3.4028235677973366e38; /* FLT_MAX + 2^103 */
    if (v >= overflow) return __builtin_huge_valf();
    if (v <= -overflow) return -__builtin_huge_valf();
    return (float)v;
}

/* alpha or beta as duet_arith<T> computes with it: i32 goes through int32_t first, so that -1
 * becomes 0xffffffff. */
template <typename T> static inline typename duet_arith<T>::acc_t duet_scalar_of(double v)
{
    if constexpr (std::is_same<T, float>::value)
        return duet_float_of(v);
    else if constexpr (std::is_same<T, int32_t>::value)
        return (uint32_t)(int32_t)v;
    else
        return v;
}

/* g as the simple GEMM kernels take it. */
template <typename T> static inline duet_gemm_args<T> duet_gemm_args_of(const dt_gemm *g)
{
    duet_gemm_args<T> r;
    r.m = g->m;
    r.n = g->n;
    r.k = g->k;
    r.batch = g->batch;
    r.alpha = duet_scalar_of<T>(g->alpha);
    r.beta = duet_scalar_of<T>(g->beta);
    r.beta_zero = g->beta == 0.0;
    r.a = duet_cview_of<T>(g->a);
    r.b = duet_cview_of<T>(g->b);
    r.c = duet_view_of<T>(g->c);
    return r;
}

/* True when every byte address p + k*stride*elem (for the strides given) is a multiple of
 * `bytes`: rows starting at such addresses all start on that boundary. Host side. */
static inline bool duet_aligned(const void *p, size_t elem, int64_t s1, int64_t s2, unsigned bytes)
{
    return ((uintptr_t)p % bytes) == 0 && ((uint64_t)s1 * elem) % bytes == 0 &&
           ((uint64_t)s2 * elem) % bytes == 0;
}

/* The condition for 16-byte vector access along such rows. */
static inline bool duet_aligned16(const void *p, size_t elem, int64_t s1, int64_t s2)
{
    return duet_aligned(p, elem, s1, s2, 16u);
}

/* What an AUTO launcher chose, for duet_launch_info. */
struct duet_auto_result {
    char kernel[48]; /* without the dtype or element-size suffix */
    int tile;
    duet_launch_config cfg;
    duet_algorithm algo; /* for launch info: AUTO (a tuned kernel ran) or the seed algorithm */
};

static inline dim3 duet_dim3_of(const duet_dim3 &d) { return dim3(d.x, d.y, d.z); }

/* A grid dimension for a count of blocks: at least 1, at most 2^31 - 1 (grid x's limit; y and
 * z are folded into the device's limits by dt_fold_grid afterwards). */
static inline uint32_t duet_clamp_u32(int64_t v)
{
    if (v < 1) return 1;
    return v > 0x7fffffff ? 0x7fffffffu : (uint32_t)v;
}

#if defined(DUET_RUNTIME_CUDA_H) || defined(DUET_RUNTIME_HIP_H)
/* The status of a failed kernel launch: DUET_ERROR_DEVICE_LOST when the error poisoned the
 * context, else DUET_ERROR_LAUNCH_FAILED (inside the backend, whose runtime header classifies
 * errors; the lab includes the launchers with the basic names only). */
static inline duet_status duet_launch_status(duet_gpu_error_t e)
{
    return duet_gpu_error_class(e) == DUET_GPU_CLASS_STICKY ? DUET_ERROR_DEVICE_LOST
                                                            : DUET_ERROR_LAUNCH_FAILED;
}
#endif /* the backend's runtime header */

/* The grid of a persistent tile kernel that walks `tiles` tiles along x and `batch` matrices
 * along z with strides of gridDim: each within the device's limits (z also within 65535). */
static inline dim3 duet_tile_grid(int64_t tiles, int64_t batch, const duet_device_props *props)
{
    int64_t gx = tiles, gz = batch;
    if (props->max_grid_dims[0] > 0 && gx > props->max_grid_dims[0]) gx = props->max_grid_dims[0];
    if (gz > 65535) gz = 65535;
    if (props->max_grid_dims[2] > 0 && gz > props->max_grid_dims[2]) gz = props->max_grid_dims[2];
    return dim3((unsigned)(gx < 1 ? 1 : gx), 1, (unsigned)(gz < 1 ? 1 : gz));
}

#endif /* DUET_GPU_LAUNCH_UTIL_H */
