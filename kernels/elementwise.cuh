/* elementwise.cuh - scale, add and fill kernels: naive, grid-stride and auto. */
#ifndef DUET_KERNELS_ELEMENTWISE_CUH
#define DUET_KERNELS_ELEMENTWISE_CUH

#include "kernel_util.cuh"

#include <stdio.h>
#include <string.h>

/* Scale and add compute in duet_arith<T> (T: float, double, int32_t). Fill moves a bit
 * pattern the host made from the value, so T is the unsigned integer of the element's size
 * and one kernel serves every dtype (f16, bf16 and i8 included). */
template <typename T, int KIND, bool ARITH = (KIND != DT_EW_FILL)> struct duet_ew_args {
    typedef typename duet_arith<T>::acc_t acc_t;
    int64_t rows, cols, batch;
    acc_t alpha, beta;
    T fill;
    duet_view<const T> a, b;
    duet_view<T> c;
};

template <typename T, int KIND> struct duet_ew_args<T, KIND, false> {
    typedef T acc_t;
    int64_t rows, cols, batch;
    acc_t alpha, beta;
    T fill;
    duet_view<const T> a, b;
    duet_view<T> c;
};

/* One element; add reads a and b before it writes c, so c may be exactly a or b. */
template <typename T, int KIND>
DUET_INLINE T ew_compute(const duet_ew_args<T, KIND> &e, T c, T a, T b)
{
    if constexpr (KIND == DT_EW_FILL) {
        return e.fill;
    } else if constexpr (KIND == DT_EW_SCALE) {
        return duet_arith<T>::to_elem(e.alpha * duet_arith<T>::from_elem(c));
    } else {
        return duet_arith<T>::to_elem(e.alpha * duet_arith<T>::from_elem(a) +
                                      e.beta * duet_arith<T>::from_elem(b));
    }
}

/* Element (bz, i, j) through the strided views: reads only what KIND needs. */
template <typename T, int KIND>
DUET_INLINE void ew_at(const duet_ew_args<T, KIND> &e, int64_t bz, int64_t i, int64_t j)
{
    T *c = e.c.at(bz, i, j);
    const T cv = KIND == DT_EW_SCALE ? *c : T(0);
    const T av = KIND == DT_EW_ADD ? *e.a.at(bz, i, j) : T(0);
    const T bv = KIND == DT_EW_ADD ? *e.b.at(bz, i, j) : T(0);
    *c = ew_compute<T, KIND>(e, cv, av, bv);
}

/* ---- NAIVE: one thread per element (2D grid, batch along z) ------------------------------- */

template <typename T, int KIND> DUET_GLOBAL void ew_naive_kernel(const duet_ew_args<T, KIND> e)
{
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= e.cols) return;
    for (int64_t bz = (int64_t)blockIdx.z * blockDim.z + threadIdx.z; bz < e.batch;
         bz += (int64_t)gridDim.z * blockDim.z)
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < e.rows;
             i += (int64_t)gridDim.y * blockDim.y)
            ew_at(e, bz, i, j);
}

template <typename T, int KIND>
static inline duet_gpu_error_t ew_naive_launch(const duet_ew_args<T, KIND> &e,
                                               const duet_launch_config &cfg,
                                               duet_gpu_stream_t stream)
{
    ew_naive_kernel<T, KIND><<<duet_dim3_of(cfg.grid), duet_dim3_of(cfg.block), 0, stream>>>(e);
    return duet_gpu_get_last_error();
}

/* ---- GRID_STRIDE: the DLI `add_matrix_stride` loops, batch along z ------------------------- */

template <typename T, int KIND>
DUET_GLOBAL void ew_grid_stride_kernel(const duet_ew_args<T, KIND> e)
{
    const int64_t sz = (int64_t)gridDim.z * blockDim.z;
    const int64_t stride_i = (int64_t)gridDim.y * blockDim.y;
    const int64_t stride_j = (int64_t)gridDim.x * blockDim.x;
    for (int64_t bz = (int64_t)blockIdx.z * blockDim.z + threadIdx.z; bz < e.batch; bz += sz)
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < e.rows; i += stride_i)
            for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < e.cols;
                 j += stride_j)
                ew_at(e, bz, i, j);
}

template <typename T, int KIND>
static inline duet_gpu_error_t ew_grid_stride_launch(const duet_ew_args<T, KIND> &e,
                                                     const duet_launch_config &cfg,
                                                     duet_gpu_stream_t stream)
{
    ew_grid_stride_kernel<T, KIND>
        <<<duet_dim3_of(cfg.grid), duet_dim3_of(cfg.block), 0, stream>>>(e);
    return duet_gpu_get_last_error();
}

/* ---- AUTO: 16-byte vectors over rows (one long row when the operands are packed) ----------- */

/* Threads per block and 16-byte vectors per thread per trip by architecture: data, not code.
 * The vectors per trip are compiled in (EW_AUTO_UNROLL); the table picks the block size. */
enum { EW_AUTO_UNROLL = 4, EW_AUTO_MAX_THREADS = 256, EW_AUTO_MIN_BLOCKS = 4 };
/* add streams two inputs: two vectors of each per trip keep as many loads in flight as four of
 * scale, within the 64 registers that 4 resident blocks of 256 threads leave. */
static constexpr DUET_HOST_DEVICE int ew_auto_unroll(int kind)
{
    return kind == DT_EW_ADD ? EW_AUTO_UNROLL / 2 : EW_AUTO_UNROLL;
}
struct ew_tune_row {
    const char *arch;
    int threads; /* a multiple of 64 (whole wavefronts on wave64 GPUs too), <= EW_AUTO_MAX_THREADS
                  */
};
static const ew_tune_row ew_tune_table[] = {
    {"default", 256},
    /* H100: at least 4 resident blocks of 256 threads (the launch bounds), 4 vectors of 16 bytes
     * each: 64 KB or more in flight per SM, above latency x bandwidth per SM (~25 KB). */
    {"sm_90", 256},
};

static inline int ew_auto_threads(const duet_device_props *props)
{
    int threads = ew_tune_table[0].threads;
    for (size_t r = 1; r < sizeof ew_tune_table / sizeof ew_tune_table[0]; ++r)
        if (props && strcmp(props->arch, ew_tune_table[r].arch) == 0)
            threads = ew_tune_table[r].threads;
    return threads > 0 && threads <= EW_AUTO_MAX_THREADS && threads % 64 == 0 ? threads
                                                                              : EW_AUTO_MAX_THREADS;
}

/* With vec, every row start of every operand is 16-byte aligned and cs == 1: each trip moves
 * EW_AUTO_UNROLL vectors per thread, loaded before any is stored, and a scalar tail finishes
 * rows that are not a whole number of vectors. Without vec the same loops run per element
 * through the strides, so the kernel is correct for any views. */
template <typename T, int KIND>
DUET_GLOBAL void DUET_LAUNCH_BOUNDS(EW_AUTO_MAX_THREADS, EW_AUTO_MIN_BLOCKS)
    ew_auto_kernel(const duet_ew_args<T, KIND> e, int vec)
{
    enum { N = 16 / sizeof(T), UNROLL = ew_auto_unroll(KIND) };
    typedef duet_pack16<T> pack;
    const int64_t sy = (int64_t)gridDim.y * blockDim.y;
    const int64_t gx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t sx = (int64_t)gridDim.x * blockDim.x;
    for (int64_t bz = blockIdx.z; bz < e.batch; bz += gridDim.z) {
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < e.rows; i += sy) {
            if (!vec) {
                for (int64_t j = gx; j < e.cols; j += sx) ew_at(e, bz, i, j);
                continue;
            }
            duet_vec16_t *c = reinterpret_cast<duet_vec16_t *>(e.c.at(bz, i, 0));
            const duet_vec16_t *a =
                KIND == DT_EW_ADD ? reinterpret_cast<const duet_vec16_t *>(e.a.at(bz, i, 0)) : 0;
            const duet_vec16_t *b =
                KIND == DT_EW_ADD ? reinterpret_cast<const duet_vec16_t *>(e.b.at(bz, i, 0)) : 0;
            const int64_t nvec = e.cols / N;
            const int64_t chunk = (int64_t)blockDim.x * UNROLL;
            for (int64_t base = (int64_t)blockIdx.x * chunk + threadIdx.x; base < nvec;
                 base += (int64_t)gridDim.x * chunk) {
                pack pc[UNROLL], pa[UNROLL], pb[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    const int64_t v = base + (int64_t)u * blockDim.x;
                    if (v < nvec) {
                        if (KIND == DT_EW_SCALE) pc[u].v = c[v];
                        if (KIND == DT_EW_ADD) {
                            pa[u].v = a[v];
                            pb[u].v = b[v];
                        }
                    }
                }
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    const int64_t v = base + (int64_t)u * blockDim.x;
                    if (v < nvec) {
                        pack r;
#pragma unroll
                        for (int k = 0; k < N; ++k)
                            r.e[k] = ew_compute<T, KIND>(e, KIND == DT_EW_SCALE ? pc[u].e[k] : T(0),
                                                         KIND == DT_EW_ADD ? pa[u].e[k] : T(0),
                                                         KIND == DT_EW_ADD ? pb[u].e[k] : T(0));
                        c[v] = r.v;
                    }
                }
            }
            for (int64_t j = nvec * N + gx; j < e.cols; j += sx) ew_at(e, bz, i, j);
        }
    }
}

/* Swaps the two axes of every view: the op is the same, but j becomes c's unit-stride axis. */
static inline void ew_swap_axes(dt_elementwise *e)
{
    int64_t s = e->rows;
    e->rows = e->cols;
    e->cols = s;
    dt_view *v[3] = {&e->a, &e->b, &e->c};
    for (int k = 0; k < 3; ++k) {
        s = v[k]->rs;
        v[k]->rs = v[k]->cs;
        v[k]->cs = s;
    }
}

/* Merges rows, then batches, that follow each other in memory in every operand KIND uses,
 * so a packed problem becomes one long row (the grid-stride 1D case). */
static inline void ew_flatten(dt_elementwise *e, bool uses_ab)
{
    dt_view *v[3] = {&e->c, &e->a, &e->b};
    const int nv = uses_ab ? 3 : 1;
    bool ok = e->rows > 1;
    for (int k = 0; k < nv; ++k) ok = ok && v[k]->cs == 1 && v[k]->rs == e->cols;
    if (ok) {
        e->cols *= e->rows;
        e->rows = 1;
        for (int k = 0; k < nv; ++k) v[k]->rs = e->cols;
    }
    ok = e->rows == 1 && e->batch > 1;
    for (int k = 0; k < nv; ++k) ok = ok && v[k]->cs == 1 && v[k]->bs == e->cols;
    if (ok) {
        e->cols *= e->batch;
        e->batch = 1;
        for (int k = 0; k < nv; ++k) v[k]->rs = v[k]->bs = e->cols;
    }
}

/* Builds AUTO's launch and runs it. args is filled from the normalised problem. */
template <typename T, int KIND>
static inline duet_gpu_error_t
ew_auto_launch(const dt_elementwise *orig, duet_ew_args<T, KIND> args,
               const duet_device_props *props, duet_gpu_stream_t stream, duet_auto_result *res)
{
    const size_t elem = sizeof(T);
    const bool uses_ab = KIND == DT_EW_ADD;
    dt_elementwise e = *orig;
    if (e.c.cs != 1 && e.c.rs == 1) ew_swap_axes(&e);
    ew_flatten(&e, uses_ab);
    /* Strides of an axis of extent 1 never move the address: they cannot break alignment. */
    const bool r1 = e.rows > 1, b1 = e.batch > 1;
    bool vec = e.c.cs == 1 && duet_aligned16(e.c.base, elem, r1 ? e.c.rs : 0, b1 ? e.c.bs : 0);
    if (uses_ab)
        vec = vec && e.a.cs == 1 && e.b.cs == 1 &&
              duet_aligned16(e.a.base, elem, r1 ? e.a.rs : 0, b1 ? e.a.bs : 0) &&
              duet_aligned16(e.b.base, elem, r1 ? e.b.rs : 0, b1 ? e.b.bs : 0);
    args.rows = e.rows;
    args.cols = e.cols;
    args.batch = e.batch;
    args.a = duet_cview_of<T>(e.a);
    args.b = duet_cview_of<T>(e.b);
    args.c = duet_view_of<T>(e.c);

    const int threads = ew_auto_threads(props);
    const int64_t work = vec ? dt_ceil_div(e.cols, (int64_t)(16 / elem)) : e.cols;
    uint32_t bx = (uint32_t)threads;
    while (bx > 32 && (int64_t)bx / 2 >= work) bx /= 2; /* short rows: several rows a block */
    duet_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.block.x = bx;
    cfg.block.y = (uint32_t)threads / bx;
    cfg.block.z = 1;
    cfg.grid.x = duet_clamp_u32(dt_ceil_div(work, (int64_t)bx * (vec ? ew_auto_unroll(KIND) : 1)));
    cfg.grid.y = duet_clamp_u32(dt_ceil_div(e.rows, cfg.block.y));
    cfg.grid.z = duet_clamp_u32(e.batch);
    dt_fold_grid(props, &cfg.grid);
    ew_auto_kernel<T, KIND>
        <<<duet_dim3_of(cfg.grid), duet_dim3_of(cfg.block), 0, stream>>>(args, vec ? 1 : 0);
    res->tile = 0;
    res->cfg = cfg;
    res->algo = DUET_ALGO_AUTO; /* a tuned kernel reports AUTO */
    /* A constant copy, not snprintf: this runs on every call (see docs/performance.md). */
    const char *name = KIND == DT_EW_SCALE ? "scale_auto"
                       : KIND == DT_EW_ADD ? "add_auto"
                                           : "fill_auto";
    memcpy(res->kernel, name, strlen(name) + 1);
    return duet_gpu_get_last_error();
}

#endif /* DUET_KERNELS_ELEMENTWISE_CUH */
