/* elementwise.cuh - scale, add and fill kernels: naive, grid-stride and auto. */
#ifndef DUET_KERNELS_ELEMENTWISE_CUH
#define DUET_KERNELS_ELEMENTWISE_CUH

#include "kernel_util.cuh"

/* The op, as the kernels' KIND template argument (src/gpu/elementwise_gpu.inc checks that these
 * are dt_ew_kind's values). */
enum { EW_SCALE = 0, EW_ADD = 1, EW_FILL = 2 };

/* Scale and add compute in duet_arith<T> (T: float, double, int32_t). Fill moves a bit
 * pattern the host made from the value, so T is the unsigned integer of the element's size
 * and one kernel serves every dtype (f16, bf16 and i8 included). */
template <typename T, int KIND, bool ARITH = (KIND != EW_FILL)> struct duet_ew_args {
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
    if constexpr (KIND == EW_FILL) {
        return e.fill;
    } else if constexpr (KIND == EW_SCALE) {
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
    const T cv = KIND == EW_SCALE ? *c : T(0);
    const T av = KIND == EW_ADD ? *e.a.at(bz, i, j) : T(0);
    const T bv = KIND == EW_ADD ? *e.b.at(bz, i, j) : T(0);
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

/* ---- AUTO: 16-byte vectors over rows (one long row when the operands are packed) ----------- */

/* The 16-byte vectors per thread per trip are compiled in (EW_AUTO_UNROLL); the threads per
 * block come from the launcher's table by architecture (src/gpu/elementwise_gpu.inc), at most
 * EW_AUTO_MAX_THREADS. */
enum { EW_AUTO_UNROLL = 4, EW_AUTO_MAX_THREADS = 256, EW_AUTO_MIN_BLOCKS = 4 };
/* add streams two inputs: two vectors of each per trip keep as many loads in flight as four of
 * scale, within the 64 registers that 4 resident blocks of 256 threads leave. */
static constexpr DUET_HOST_DEVICE int ew_auto_unroll(int kind)
{
    return kind == EW_ADD ? EW_AUTO_UNROLL / 2 : EW_AUTO_UNROLL;
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
                KIND == EW_ADD ? reinterpret_cast<const duet_vec16_t *>(e.a.at(bz, i, 0)) : 0;
            const duet_vec16_t *b =
                KIND == EW_ADD ? reinterpret_cast<const duet_vec16_t *>(e.b.at(bz, i, 0)) : 0;
            const int64_t nvec = e.cols / N;
            const int64_t chunk = (int64_t)blockDim.x * UNROLL;
            for (int64_t base = (int64_t)blockIdx.x * chunk + threadIdx.x; base < nvec;
                 base += (int64_t)gridDim.x * chunk) {
                pack pc[UNROLL], pa[UNROLL], pb[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    const int64_t v = base + (int64_t)u * blockDim.x;
                    if (v < nvec) {
                        if (KIND == EW_SCALE) pc[u].v = c[v];
                        if (KIND == EW_ADD) {
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
                            r.e[k] = ew_compute<T, KIND>(e, KIND == EW_SCALE ? pc[u].e[k] : T(0),
                                                         KIND == EW_ADD ? pa[u].e[k] : T(0),
                                                         KIND == EW_ADD ? pb[u].e[k] : T(0));
                        c[v] = r.v;
                    }
                }
            }
            for (int64_t j = nvec * N + gx; j < e.cols; j += sx) ew_at(e, bz, i, j);
        }
    }
}

#endif /* DUET_KERNELS_ELEMENTWISE_CUH */
