/* gemm_wgmma.cu - host side of the Hopper GEMM: coverage checks, tensor maps, the launch. */
#include "cuda/gemm_wgmma.h"
#include "cuda/gemm_wgmma_launch.h"
#include "cuda/gemm_wgmma_x3.h"
#include "cuda/tma_map.h"

#include "common/gemm_plan.h"
#include "cuda/runtime_cuda.h"
#include "compat.h"
#include "gemm_wgmma.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <mutex>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuTensorMapEncodeTiled through the runtime's driver entry point, so that duet does not
 * link libcuda; looked up once. */
static PFN_cuTensorMapEncodeTiled_v12000 encode_fn()
{
    static std::once_flag once;
    static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
    std::call_once(once, [] {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
        const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                               cudaEnableDefault, &q);
#else
        const cudaError_t e =
            cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &q);
#endif
        if (e == cudaSuccess && q == cudaDriverEntryPointSuccess)
            fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
        else
            (void)cudaGetLastError();
    });
    return fn;
}

bool duet_tma_encode_operand(CUtensorMap *map, CUtensorMapDataType type, size_t elem, void *base,
                             int64_t inner, int64_t outer, int64_t ld, int64_t batch,
                             int64_t batch_stride, int box_inner, int box_outer)
{
    PFN_cuTensorMapEncodeTiled_v12000 fn = encode_fn();
    if (!fn) return false;
    const bool batched = batch > 1 && batch_stride != 0;
    cuuint64_t dims[3] = {(cuuint64_t)inner, (cuuint64_t)outer, (cuuint64_t)(batched ? batch : 1)};
    cuuint64_t strides[2] = {(cuuint64_t)(ld * (int64_t)elem),
                             (cuuint64_t)((batched ? batch_stride : ld * outer) * (int64_t)elem)};
    cuuint32_t box[3] = {(cuuint32_t)box_inner, (cuuint32_t)box_outer, 1};
    cuuint32_t estr[3] = {1, 1, 1};
    return fn(map, type, 3, base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

namespace {

/* The 3xTF32 kernel (gemm_wgmma_x3.cu): f32 inputs split into two TF32 parts, 128 x 128 tiles. */
constexpr int WG_X3 = 4;

/* The planner (src/common/gemm_plan.c) sizes grids and copies with these shapes. */
static_assert(WG_BM == DT_WGMMA_BM && WG_BN == DT_WGMMA_BN && WG_KBYTES == DT_WGMMA_KBYTES &&
                  GEMM_WGMMA_X3_BN == DT_WGMMA_X3_BN,
              "the planner's wgmma tiles differ from the kernel's");

bool aligned16(const void *p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }
bool stride16(int64_t stride, size_t elem) { return ((stride * (int64_t)elem) & 15) == 0; }

/* A 3D (N, M, batch) map of a 16-bit C with rows of 16-byte multiples, for the TMA-store
 * epilogue: 64 x 64 boxes (128-byte rows) in the 128-byte swizzle. */
bool encode_c(CUtensorMap *map, CUtensorMapDataType type, void *base, int64_t m, int64_t n,
              int64_t ldc, int64_t batch, int64_t batch_stride)
{
    PFN_cuTensorMapEncodeTiled_v12000 fn = encode_fn();
    if (!fn) return false;
    cuuint64_t dims[3] = {(cuuint64_t)n, (cuuint64_t)m, (cuuint64_t)batch};
    cuuint64_t strides[2] = {(cuuint64_t)(ldc * 2),
                             (cuuint64_t)((batch > 1 ? batch_stride : ldc * m) * 2)};
    cuuint32_t box[3] = {64, 64, 1};
    cuuint32_t estr[3] = {1, 1, 1};
    return fn(map, type, 3, base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool f32_math_dtype(duet_dtype d)
{
    return d == DUET_DTYPE_F32 || d == DUET_DTYPE_F16 || d == DUET_DTYPE_BF16;
}

/* An epilogue operand as the kernel reads it; absent: p NULL. */
ge_operand epi_operand(const dt_epi_operand &o)
{
    ge_operand g;
    memset(&g, 0, sizeof g);
    if (!o.on) return g;
    g.p = static_cast<unsigned char *>(o.v.base);
    g.rs = o.v.rs;
    g.cs = o.v.cs;
    g.bs = o.v.bs;
    g.dtype = (int)o.dtype;
    return g;
}

/* g->epi as the fused store takes it (dt_gemm_epilogue_fuses made the same checks), or false. */
bool epi_params(const dt_gemm *g, wg_epi *e)
{
    const dt_epilogue *x = g->epi;
    memset(e, 0, sizeof *e);
    if (x->math != DUET_DTYPE_F32 || x->t.on || !f32_math_dtype(g->c_dtype) ||
        x->d.v.base != g->c.base)
        return false;
    const dt_epi_operand *ops[6] = {&x->c,         &x->bias,     &x->row_scale,
                                    &x->col_scale, &x->residual, &x->aux};
    for (int i = 0; i < 6; i++)
        if (ops[i]->on && !f32_math_dtype(ops[i]->dtype)) return false;
    if ((x->row_scale.on && x->row_scale.v.cs != 0) ||
        (x->col_scale.on && x->col_scale.v.rs != 0) ||
        (x->bias.on && x->bias.v.rs != 0 && x->bias.v.cs != 0))
        return false;
    e->c = epi_operand(x->c);
    e->bias = epi_operand(x->bias);
    e->row_scale = epi_operand(x->row_scale);
    e->col_scale = epi_operand(x->col_scale);
    e->residual = epi_operand(x->residual);
    e->aux = epi_operand(x->aux);
    e->act = (int)x->act;
    e->d_dtype = (int)g->c_dtype;
    e->direct = !x->c.on && !x->residual.on && !x->aux.on;
    e->lo = (float)x->lo;
    e->hi = (float)x->hi;
    e->beta = (float)x->beta;
    return true;
}

} /* namespace */


/* Launches g. The planner (dt_gemm_plan_gpu) chose this path; the checks below repeat the
 * structural ones it made, so that a plan that disagrees with the kernel fails here with
 * DUET_ERROR_UNSUPPORTED instead of launching on operands TMA cannot read. */
static duet_status wg_run(const dt_gemm *g, cudaStream_t stream, const duet_device_props *props,
                          duet_launch_info *info, const void *b_small = nullptr)
{
    if (!props || props->capability_major != 9 || props->capability_minor != 0)
        return DUET_ERROR_UNSUPPORTED;
    if (props->shared_mem_per_block_optin < (size_t)wg_config<float>::shared_bytes ||
        props->shared_mem_per_block_optin < (size_t)wg_config<__half>::shared_bytes)
        return DUET_ERROR_UNSUPPORTED;
    /* duet_gemm_ex's epilogue in the store: f32 math (16-bit, TF32 or 8-bit float inputs), D
     * f32/f16/bf16. */
    const bool fused = g->epi != nullptr;
    wg_epi e;
    memset(&e, 0, sizeof e);
    if (fused && (b_small || g->beta != 0.0 || !epi_params(g, &e) ||
                  props->shared_mem_per_block_optin < (size_t)wg_config<float, true>::shared_bytes))
        return DUET_ERROR_UNSUPPORTED;

    int kind;
    size_t elem;
    CUtensorMapDataType type;
    const char *in_name;
    switch (g->dtype) {
    case DUET_DTYPE_BF16:
    case DUET_DTYPE_F16:
        if (!fused && g->c_dtype != g->dtype && g->c_dtype != DUET_DTYPE_F32)
            return DUET_ERROR_UNSUPPORTED;
        kind = g->dtype == DUET_DTYPE_BF16 ? WG_BF16 : WG_F16;
        elem = 2;
        type = g->dtype == DUET_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                           : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        in_name = g->dtype == DUET_DTYPE_BF16 ? "bf16" : "f16";
        break;
    case DUET_DTYPE_F32:
        if (!fused && g->c_dtype != DUET_DTYPE_F32) return DUET_ERROR_UNSUPPORTED;
        if (fused && g->math != DUET_MATH_TF32) return DUET_ERROR_UNSUPPORTED;
        if (g->math == DUET_MATH_TF32) {
            kind = WG_TF32;
            in_name = "tf32";
        } else if (g->math == DUET_MATH_3XTF32) {
            if (props->shared_mem_per_block_optin < gemm_wgmma_x3_shared_bytes())
                return DUET_ERROR_UNSUPPORTED;
            kind = WG_X3;
            in_name = "3xtf32";
        } else {
            return DUET_ERROR_UNSUPPORTED;
        }
        elem = 4;
        type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; /* the wgmma reads the upper 19 bits */
        break;
    case DUET_DTYPE_I8:
        if (fused || g->c_dtype != DUET_DTYPE_I32) return DUET_ERROR_UNSUPPORTED;
        kind = WG_I8;
        elem = 1;
        type = CU_TENSOR_MAP_DATA_TYPE_UINT8; /* bits only; the wgmma reads them as s8 */
        in_name = "i8";
        break;
    case DUET_DTYPE_F8E4M3:
    case DUET_DTYPE_F8E5M2: {
        if (!f32_math_dtype(g->c_dtype) ||
            (g->b_dtype != DUET_DTYPE_F8E4M3 && g->b_dtype != DUET_DTYPE_F8E5M2))
            return DUET_ERROR_UNSUPPORTED;
        const bool a5 = g->dtype == DUET_DTYPE_F8E5M2, b5 = g->b_dtype == DUET_DTYPE_F8E5M2;
        static const char *const names[4] = {"e4m3", "e4m3e5m2", "e5m2e4m3", "e5m2"};
        kind = a5 ? (b5 ? WG_F8_55 : WG_F8_54) : (b5 ? WG_F8_45 : WG_F8_44);
        elem = 1;
        type = CU_TENSOR_MAP_DATA_TYPE_UINT8; /* bits only; the wgmma decodes them */
        in_name = names[2 * a5 + b5];
        break;
    }
    default: return DUET_ERROR_UNSUPPORTED;
    }

    /* Coverage: C rows contiguous, TMA's 16-byte rules, int32 coordinates; A and B K-major,
     * or for 16-bit inputs also MN-major (K-major preferred when both strides are 1). */
    const int64_t m = g->m, n = g->n, k = g->k, batch = g->batch;
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return DUET_ERROR_UNSUPPORTED;
    if (m > INT32_MAX - WG_BN || n > INT32_MAX - WG_BN || k > INT32_MAX - 256 || batch > INT32_MAX)
        return DUET_ERROR_UNSUPPORTED;
    if (g->c.cs != 1) return DUET_ERROR_UNSUPPORTED;
    const bool mn_ok = elem == 2;
    const bool a_mn = g->a.cs != 1;
    const bool b_mn = g->b.rs != 1;
    if ((a_mn && (!mn_ok || g->a.rs != 1)) || (b_mn && (!mn_ok || g->b.cs != 1)))
        return DUET_ERROR_UNSUPPORTED;
    const int64_t lda = a_mn ? g->a.cs : g->a.rs, ldb = b_mn ? g->b.rs : g->b.cs;
    if (!aligned16(g->a.base) || !aligned16(g->b.base) || !stride16(lda, elem) ||
        !stride16(ldb, elem) ||
        (batch > 1 && (!stride16(g->a.bs, elem) || !stride16(g->b.bs, elem))))
        return DUET_ERROR_UNSUPPORTED;
    const int sms = props->compute_units > 0 ? props->compute_units : 1;
    const int bn = kind == WG_X3 ? GEMM_WGMMA_X3_BN : WG_BN;

    CUtensorMap ta, tb;
    const int kbox = (int)(WG_KBYTES / elem);
    const bool maps_ok =
        (a_mn ? duet_tma_encode_operand(&ta, type, elem, g->a.base, m, k, lda, batch, g->a.bs,
                                        64, 64)
              : duet_tma_encode_operand(&ta, type, elem, g->a.base, k, m, lda, batch, g->a.bs,
                                        kbox, WG_BM)) &&
        (b_mn ? duet_tma_encode_operand(&tb, type, elem, g->b.base, n, k, ldb, batch, g->b.bs,
                                        64, 64)
              : duet_tma_encode_operand(&tb, type, elem, g->b.base, k, n, ldb, batch, g->b.bs,
                                        kbox, bn));
    CUtensorMap tbs;
    if (maps_ok && b_small && kind == WG_X3 &&
        !duet_tma_encode_operand(&tbs, type, elem, const_cast<void *>(b_small), k, n, ldb, batch,
                                 g->b.bs, kbox, bn))
        return DUET_ERROR_UNSUPPORTED;
    if (!maps_ok) return DUET_ERROR_UNSUPPORTED;
    const int layout = (a_mn ? 1 : 0) | (b_mn ? 2 : 0);

    wg_params p;
    memset(&p, 0, sizeof p);
    p.c = g->c.base;
    p.ldc = g->c.rs;
    p.bsc = g->c.bs;
    p.m = (int)m;
    p.n = (int)n;
    p.ktiles = (int)dt_ceil_div(k * (int64_t)elem, WG_KBYTES);
    p.tiles_m = (int)dt_ceil_div(m, WG_BM);
    p.tiles_n = (int)dt_ceil_div(n, bn);
    p.tiles_total = (int64_t)p.tiles_m * p.tiles_n * batch;
    p.a_batched = batch > 1 && g->a.bs != 0;
    p.b_batched = batch > 1 && g->b.bs != 0;
    p.beta_zero = g->beta == 0.0;
    p.alpha = (float)g->alpha;
    p.beta = (float)g->beta;
    /* Integral alpha and beta: their int32 values' uint32 images multiply modulo 2^32. */
    p.ialpha = (uint32_t)(int32_t)g->alpha;
    p.ibeta = (uint32_t)(int32_t)g->beta;
    /* Block scales: one per stage of k (128 values of an 8-bit float), A's rows at any
     * granularity, B's per 128 columns or per tensor (dt_gemm_wgmma_takes_block_scales); summing
     * in the tensor core only (FAST_ACCUM) has no place to apply them: the default math. */
    p.blocked = wg_is_f8(kind) && (g->sa.p || g->sb.p);
    if (p.blocked) {
        const dt_scale_grid &ga = g->sa, &gb = g->sb;
        if (!dt_gemm_wgmma_takes_block_scales(g)) return DUET_ERROR_UNSUPPORTED;
        p.sa = ga.p;
        p.sa_rs = ga.rs, p.sa_ks = ga.cs, p.sa_bs = ga.bs, p.sa_shift = ga.rshift;
        p.sb = gb.p;
        p.sb_rs = gb.rs, p.sb_ks = gb.cs, p.sb_bs = gb.bs, p.sb_shift = gb.p ? gb.rshift : 0;
    }
    p.f8_fast = wg_is_f8(kind) && g->math == DUET_MATH_FAST_ACCUM && !p.blocked;

    /* 16-bit C (or D of a direct fused epilogue), beta == 0 (C unread), TMA's 16-byte rules on
     * C: the shared-memory epilogue. */
    CUtensorMap tc;
    memset(&tc, 0, sizeof tc);
    const size_t celem = g->c_dtype == DUET_DTYPE_F32 || g->c_dtype == DUET_DTYPE_I32 ? 4 : 2;
    /* n % 8 too: the TMA store writes a row's last 16-byte chunk whole (seen on the H100: a
     * row of 70 bf16 wrote the 2 padding elements of ldc 72). */
    if ((!fused || e.direct) && celem == 2 && p.beta_zero && n % 8 == 0 && aligned16(g->c.base) &&
        stride16(g->c.rs, 2) && (batch == 1 || (g->c.bs != 0 && stride16(g->c.bs, 2))))
        p.tma_store = encode_c(&tc,
                               g->c_dtype == DUET_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                               g->c.base, m, n, g->c.rs, batch, g->c.bs);

    const int grid = (int)(p.tiles_total < sms ? p.tiles_total : sms);

    const duet_dtype cd = g->c_dtype;
    cudaError_t err = cudaErrorInvalidValue;
    size_t shared = 0;
    switch (fused ? -1 : wg_is_f8(kind) ? -2 : kind) {
    case -1:
        err = wg_is_f8(kind)
                  ? gemm_wgmma_f8_epi_launch(kind, ta, tb, tc, p, e, grid, stream, &shared)
                  : gemm_wgmma_epi_launch(kind, layout, ta, tb, tc, p, e, grid, stream, &shared);
        break;
    case -2: err = gemm_wgmma_f8_launch(kind, cd, ta, tb, tc, p, e, grid, stream, &shared); break;
    case WG_BF16:
        err = cd == DUET_DTYPE_F32
                  ? launch_layout<WG_BF16, float>(layout, ta, tb, tc, p, e, grid, stream, &shared)
                  : launch_layout<WG_BF16, __nv_bfloat16>(layout, ta, tb, tc, p, e, grid, stream,
                                                          &shared);
        break;
    case WG_F16:
        err = cd == DUET_DTYPE_F32
                  ? launch_layout<WG_F16, float>(layout, ta, tb, tc, p, e, grid, stream, &shared)
                  : launch_layout<WG_F16, __half>(layout, ta, tb, tc, p, e, grid, stream, &shared);
        break;
    case WG_TF32:
        err = launch_layout<WG_TF32, float>(0, ta, tb, tc, p, e, grid, stream, &shared);
        break;
    case WG_I8:
        err = launch_layout<WG_I8, int32_t>(0, ta, tb, tc, p, e, grid, stream, &shared);
        break;
    case WG_X3:
        err = gemm_wgmma_x3_launch(ta, tb, b_small ? &tbs : nullptr, p, grid, stream, &shared);
        break;
    default: break;
    }

    char name[64];
    /* The operands' contiguous dimensions: A's (k or m), then B's (k or n). */
    static const char *const layout_names[4] = {"kk", "mk", "kn", "mn"};
    snprintf(name, sizeof name, "gemm_wgmma_%dx%dx%d_%s_%s_%s%s%s", WG_BM, bn,
             (int)(WG_KBYTES / elem), in_name, duet_dtype_name(cd), layout_names[layout],
             fused ? "_epi" : "", p.blocked ? "_blockscaled" : "");
    if (err != cudaSuccess) {
        const duet_status status = duet_gpu_error_class(err) == DUET_GPU_CLASS_STICKY
                                       ? DUET_ERROR_DEVICE_LOST
                                       : DUET_ERROR_LAUNCH_FAILED;
        return dt_fail(status, "duet_gemm", "launch of %s<<<(%d,1,1), %d, %zu>>>: %s", name, grid,
                       WG_THREADS, shared, cudaGetErrorString(err));
    }

    dt_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.algo = DUET_ALGO_AUTO;
    plan.tile = WG_BM;
    plan.cfg.grid.x = (uint32_t)grid;
    plan.cfg.grid.y = 1;
    plan.cfg.grid.z = 1;
    plan.cfg.block.x = WG_THREADS;
    plan.cfg.block.y = 1;
    plan.cfg.block.z = 1;
    plan.cfg.shared_bytes = shared;
    dt_fill_info(info, name, &plan, 1);
    if (info && kind == WG_TF32) info->math = DUET_MATH_TF32;
    if (info && kind == WG_X3) info->math = DUET_MATH_3XTF32;
    if (info && p.f8_fast) info->math = DUET_MATH_FAST_ACCUM;
    return DUET_SUCCESS;
}

duet_status gemm_wgmma_run(const dt_gemm *g, cudaStream_t stream, const duet_device_props *props,
                           duet_launch_info *info)
{
    return wg_run(g, stream, props, info);
}

duet_status gemm_wgmma_run_x3_split(const dt_gemm *g, const void *b_small, cudaStream_t stream,
                                    const duet_device_props *props, duet_launch_info *info)
{
    if (g->dtype != DUET_DTYPE_F32 || g->math != DUET_MATH_3XTF32) return DUET_ERROR_UNSUPPORTED;
    return wg_run(g, stream, props, info, b_small);
}

size_t gemm_wgmma_shared_bytes(void)
{
    const size_t f = (size_t)wg_config<float>::shared_bytes,
                 h = (size_t)wg_config<__half>::shared_bytes,
                 e = (size_t)wg_config<float, true>::shared_bytes;
    const size_t fh = f > h ? f : h;
    return fh > e ? fh : e;
}

bool gemm_wgmma_ready(void) { return encode_fn() != nullptr; }
