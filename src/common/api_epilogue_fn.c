/* api_epilogue_fn.c - user epilogues of duet_gemm_ex compiled at run time (duet.h,
 * duet_epilogue_fn_create): the source, its compilation through the backend's modules, the
 * launch over D. */
#include "backend.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The user's source is compiled with the kernel below appended: one pass over D (grid-stride in
 * all three dimensions, x along D's unit stride) that reads the GEMM's f32 product t and C,
 * calls the user's function and stores D. The loads and stores of f16 and bf16 round as duet's
 * epilogue pass does (kernels/gemm_epilogue.cuh: nearest even, overflow to inf, NaN a NaN; bf16
 * through cvt.rn.bf16.f32 on sm_80+, whose NaN is the canonical one). The dtypes of C and D are
 * arguments (a uniform switch per element in a memory-bound pass), so one compilation serves
 * them all. DUET_EPI_FN names the user's function. The kernel says extern "C", so the module
 * layer leaves the user's source unwrapped (C++ linkage for the function, as written).
 */
static const char k_epi_kernel[] =
    "\n#line 1 \"duet_user_epilogue\"\n"
    "DUET_INLINE float duet_epi_h2f(unsigned short h)\n"
    "{\n"
    "#if DUET_GPU_CUDA\n"
    "    float f;\n"
    "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
    "    return f;\n"
    "#else\n"
    "    _Float16 v;\n"
    "    __builtin_memcpy(&v, &h, 2);\n"
    "    return (float)v;\n"
    "#endif\n"
    "}\n"
    "DUET_INLINE unsigned short duet_epi_f2h(float f)\n"
    "{\n"
    "#if DUET_GPU_CUDA\n"
    "    unsigned short h;\n"
    "    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
    "    return h;\n"
    "#else\n"
    "    const _Float16 v = (_Float16)f;\n"
    "    unsigned short h;\n"
    "    __builtin_memcpy(&h, &v, 2);\n"
    "    return h;\n"
    "#endif\n"
    "}\n"
    "DUET_INLINE unsigned short duet_epi_f2bf(float f)\n"
    "{\n"
    "#if DUET_GPU_CUDA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)\n"
    "    unsigned short h;\n"
    "    asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
    "    return h;\n"
    "#else\n"
    "    unsigned int u = __float_as_uint(f);\n"
    "    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x0040u);\n"
    "    u += 0x7fffu + ((u >> 16) & 1u);\n"
    "    return (unsigned short)(u >> 16);\n"
    "#endif\n"
    "}\n"
    /* dtype codes: duet_dtype's F32 = 0, F16 = 3, BF16 = 4 (checked by the host code). */
    "DUET_INLINE float duet_epi_load(const void *p, long long i, int dt)\n"
    "{\n"
    "    if (dt == 0) return ((const float *)p)[i];\n"
    "    const unsigned short h = ((const unsigned short *)p)[i];\n"
    "    return dt == 4 ? __uint_as_float((unsigned int)h << 16) : duet_epi_h2f(h);\n"
    "}\n"
    "DUET_INLINE void duet_epi_store(void *p, long long i, int dt, float v)\n"
    "{\n"
    "    if (dt == 0) ((float *)p)[i] = v;\n"
    "    else ((unsigned short *)p)[i] = dt == 4 ? duet_epi_f2bf(v) : duet_epi_f2h(v);\n"
    "}\n"
    "extern \"C\" __global__ void duet_user_epilogue(\n"
    "    const float *t, long long t_rs, long long t_cs, long long t_bs,\n"
    "    const void *c, long long c_rs, long long c_cs, long long c_bs, int c_dt, float beta,\n"
    "    void *d, long long d_rs, long long d_cs, long long d_bs, int d_dt,\n"
    "    long long m, long long n, long long batch, long long rows, int turned,\n"
    "    const void *params)\n"
    "{\n"
    "    const long long sy = (long long)gridDim.y * blockDim.y;\n"
    "    const long long sx = (long long)gridDim.x * blockDim.x;\n"
    "    for (long long b = blockIdx.z; b < batch; b += gridDim.z)\n"
    "        for (long long i = (long long)blockIdx.y * blockDim.y + threadIdx.y; i < m; i += sy)\n"
    "            for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n;\n"
    "                 j += sx) {\n"
    "                const float acc = t ? t[b * t_bs + i * t_rs + j * t_cs] : 0.0f;\n"
    "                const long long ci = b * c_bs + i * c_rs + j * c_cs;\n"
    "                const float cv = c ? __fmul_rn(beta, duet_epi_load(c, ci, c_dt)) : 0.0f;\n"
    "                const long long row = turned ? j : i, col = turned ? i : j;\n"
    "                const float x = DUET_EPI_FN(acc, cv, b * rows + row, col, params);\n"
    "                duet_epi_store(d, b * d_bs + i * d_rs + j * d_cs, d_dt, x);\n"
    "            }\n"
    "}\n";

static int is_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

duet_status duet_epilogue_fn_create(duet_context *handle, const char *source, const char *name,
                                    duet_epilogue_fn **fn)
{
    static const char *func = "duet_epilogue_fn_create";
    dt_clear_error();
    dt_context *ctx = (dt_context *)dt_handle_get(handle, DT_CONTEXT);
    if (!ctx)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, func, "ctx is %s",
                       handle ? "not a live handle (destroyed or never created)" : "NULL");
    if (!fn) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "fn is NULL");
    *fn = NULL;
    if (!source || !*source)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "source is %s",
                       source ? "empty" : "NULL");
    if (!name || !*name)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "name is %s", name ? "empty" : "NULL");
    if (strlen(name) >= sizeof(((dt_epilogue_fn *)0)->name))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "name is longer than %zu characters",
                       sizeof(((dt_epilogue_fn *)0)->name) - 1);
    if (!is_identifier(name))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "name \"%s\" is not a C identifier",
                       name);

    /* "#define DUET_EPI_FN name", the user's source from its own line 1, the kernel. */
    const size_t n = strlen(source) + strlen(name) + sizeof k_epi_kernel + 96;
    char *text = (char *)malloc(n);
    if (!text) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func, "cannot allocate the source");
    snprintf(text, n, "#define DUET_EPI_FN %s\n#line 1 \"duet_epilogue_fn.cu\"\n%s\n%s", name,
             source, k_epi_kernel);
    dt_epilogue_fn *f = (dt_epilogue_fn *)calloc(1, sizeof *f);
    if (!f) {
        free(text);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, func, "cannot allocate the epilogue");
    }
    f->ctx = ctx;
    strcpy(f->name, name);
    char *log = NULL;
    duet_status st = be_module_create(ctx, text, NULL, &f->module, &log);
    free(text);
    dt_set_compile_log(log ? log : "");
    free(log);
    if (st != DUET_SUCCESS) {
        free(f);
        return st; /* the backend's message (DUET_ERROR_COMPILE, or UNSUPPORTED on the cpu) */
    }
    st = be_module_get_function(ctx, f->module, "duet_user_epilogue", &f->kernel);
    if (st == DUET_SUCCESS) {
        *fn = (duet_epilogue_fn *)dt_handle_new(DT_EPILOGUE_FN, f, ctx->self);
        if (!*fn) st = dt_fail(DUET_ERROR_OUT_OF_MEMORY, func, "the handle table cannot grow");
    }
    if (st != DUET_SUCCESS) {
        be_module_destroy(ctx, f->module);
        free(f);
    }
    return st;
}

void dt_epilogue_fn_release(dt_epilogue_fn *f)
{
    be_module_destroy(f->ctx, f->module);
    free(f);
}

duet_status duet_epilogue_fn_destroy(duet_epilogue_fn *handle)
{
    dt_clear_error();
    dt_epilogue_fn *f = (dt_epilogue_fn *)dt_handle_get(handle, DT_EPILOGUE_FN);
    if (!f)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, "duet_epilogue_fn_destroy", "fn is %s",
                       handle ? "not a live handle (destroyed or never created)" : "NULL");
    dt_handle_release(handle);
    dt_epilogue_fn_release(f);
    return DUET_SUCCESS;
}

/* One kernel argument of kind K (a duet_arg_kind's suffix) in be_arg's member F. */
#define EPI_ARG(K, F, X)                                                                           \
    {                                                                                              \
        .kind = DUET_ARG_##K, .v = {.F = (X) }                                                     \
    }

duet_status dt_user_epilogue_run(dt_context *ctx, void *stream, const dt_epilogue *e, int turned,
                                 int64_t rows, duet_launch_info *info)
{
    /* Blocks of 256 threads shaped to D's rows (as the epilogue pass's), enough of them to fill
     * the device a few times over; the kernel strides over the rest. */
    uint32_t bx = 32;
    while (bx < 256 && (int64_t)bx < e->n) bx *= 2;
    const uint32_t by = 256 / bx;
    const int64_t cu = ctx->props.compute_units > 0 ? ctx->props.compute_units : 1;
    int64_t gx = (e->n + bx - 1) / bx, gy = (e->m + by - 1) / by, gz = e->batch;
    const int64_t want = 16 * cu;
    if (gx * gy > want) gy = want / gx > 0 ? want / gx : 1;
    if (gx * gy * gz > want) gz = want / (gx * gy) > 0 ? want / (gx * gy) : 1;
    const int64_t *lim = ctx->props.max_grid_dims;
    if (gx > (lim[0] > 0 ? lim[0] : 2147483647)) gx = lim[0] > 0 ? lim[0] : 2147483647;
    if (gy > (lim[1] > 0 ? lim[1] : 65535)) gy = lim[1] > 0 ? lim[1] : 65535;
    if (gz > (lim[2] > 0 ? lim[2] : 65535)) gz = lim[2] > 0 ? lim[2] : 65535;
    duet_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.grid.x = (uint32_t)gx, cfg.grid.y = (uint32_t)gy, cfg.grid.z = (uint32_t)gz;
    cfg.block.x = bx, cfg.block.y = by, cfg.block.z = 1;

    const be_arg args[] = {EPI_ARG(BUFFER, ptr, e->t.on ? e->t.v.base : NULL),
                           EPI_ARG(I64, i64, e->t.v.rs),
                           EPI_ARG(I64, i64, e->t.v.cs),
                           EPI_ARG(I64, i64, e->t.v.bs),
                           EPI_ARG(BUFFER, ptr, e->c.on ? e->c.v.base : NULL),
                           EPI_ARG(I64, i64, e->c.v.rs),
                           EPI_ARG(I64, i64, e->c.v.cs),
                           EPI_ARG(I64, i64, e->c.v.bs),
                           EPI_ARG(I32, i32, (int32_t)e->c.dtype),
                           EPI_ARG(F32, f32, (float)e->beta),
                           EPI_ARG(BUFFER, ptr, e->d.v.base),
                           EPI_ARG(I64, i64, e->d.v.rs),
                           EPI_ARG(I64, i64, e->d.v.cs),
                           EPI_ARG(I64, i64, e->d.v.bs),
                           EPI_ARG(I32, i32, (int32_t)e->d.dtype),
                           EPI_ARG(I64, i64, e->m),
                           EPI_ARG(I64, i64, e->n),
                           EPI_ARG(I64, i64, e->batch),
                           EPI_ARG(I64, i64, rows),
                           EPI_ARG(I32, i32, turned),
                           EPI_ARG(BUFFER, ptr, e->user_params)};
    const duet_status st =
        be_launch(ctx, stream, e->user->kernel, &cfg, args, (int)(sizeof args / sizeof args[0]));
    if (st == DUET_SUCCESS && info) {
        snprintf(info->epilogue, sizeof info->epilogue, "user_epilogue_%.33s", e->user->name);
        info->launches += 1;
    }
    return st;
}
