/* gemm_fast_gpu.h - the AUTO GEMM (src/gpu/gemm_fast_gpu.inc), one unit per dtype. */
#ifndef DUET_GPU_GEMM_FAST_GPU_H
#define DUET_GPU_GEMM_FAST_GPU_H

/*
 * gemm_fast_run<T> instantiates every tile shape and operand layout of its dtype, the largest
 * share of the backend's device code. Each dtype is instantiated in a translation unit of its
 * own (src/cuda/gemm_fast_<dtype>.cu, src/hip/gemm_fast_<dtype>.hip) so that a parallel build
 * compiles them side by side; the ops unit (ops_gpu.inc) sees the declarations below and
 * instantiates none. Include after the runtime header.
 *
 * A unit that instantiates one dtype leaves the other dtypes' helpers of gemm_fast_gpu.inc unused
 * (the per-dtype overloads of the launchers, the f64-only tensor-core launcher, the split-K
 * naming helper), which the compilers report as unreferenced static functions; that is
 * expected here, so the report is off for this header alone.
 */
/* A unit compiles the launchers of the dtype it instantiates (it sets GF_COMPILE_<dtype> to 1
 * first); the ops unit compiles none: each launcher instantiates every kernel of its dtype. */
#ifndef GF_COMPILE_F32
#define GF_COMPILE_F32 0
#endif
#ifndef GF_COMPILE_F64
#define GF_COMPILE_F64 0
#endif
#ifndef GF_COMPILE_I32
#define GF_COMPILE_I32 0
#endif
#if defined(DUET_BACKEND_HIP)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-function"
#else
#pragma nv_diag_suppress 177 /* nvcc: function "..." was declared but never referenced */
#pragma GCC diagnostic push  /* the host compiler nvcc runs, gcc or clang */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include "gpu/gemm_fast_gpu.inc"
#if defined(DUET_BACKEND_HIP)
#pragma clang diagnostic pop
#else
#pragma GCC diagnostic pop
#pragma nv_diag_default 177
#endif

/* The instance of one element type (the fast family computes i32 as uint32_t). */
#define DUET_GEMM_FAST_INSTANCE(T)                                                                 \
    duet_status gemm_fast_run<T>(dt_context *, void *, const dt_gemm *, duet_gpu_stream_t,        \
                                 const duet_device_props *, duet_launch_info *)

extern template DUET_GEMM_FAST_INSTANCE(float);
extern template DUET_GEMM_FAST_INSTANCE(double);
extern template DUET_GEMM_FAST_INSTANCE(uint32_t);

#endif /* DUET_GPU_GEMM_FAST_GPU_H */
