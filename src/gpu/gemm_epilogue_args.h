/* gemm_epilogue_args.h - duet_gemm_ex's epilogue (dt_epilogue) as the kernels' ge_args. */
#ifndef DUET_GEMM_EPILOGUE_ARGS_H
#define DUET_GEMM_EPILOGUE_ARGS_H

#include "common/internal.h"

#include "gemm_epilogue.cuh"

#include <string.h>

static inline ge_operand gpu_ge_operand(const dt_epi_operand &o)
{
    ge_operand g;
    memset(&g, 0, sizeof g);
    if (!o.on) return g;
    g.p = (unsigned char *)o.v.base;
    g.rs = o.v.rs;
    g.cs = o.v.cs;
    g.bs = o.v.bs;
    g.dtype = (int)o.dtype;
    return g;
}

/* e's operands and scalars; turned: seen transposed (dt_epilogue_turn), as a kernel that
 * solves C^T = B^T A^T indexes them. */
static inline ge_args gpu_ge_args(const dt_epilogue *e, bool turned)
{
    dt_epilogue v = *e;
    if (turned) dt_epilogue_turn(&v);
    ge_args p;
    memset(&p, 0, sizeof p);
    p.m = v.m, p.n = v.n, p.batch = v.batch;
    p.t = gpu_ge_operand(v.t);
    p.c = gpu_ge_operand(v.c);
    p.bias = gpu_ge_operand(v.bias);
    p.row_scale = gpu_ge_operand(v.row_scale);
    p.col_scale = gpu_ge_operand(v.col_scale);
    p.residual = gpu_ge_operand(v.residual);
    p.aux = gpu_ge_operand(v.aux);
    p.d = gpu_ge_operand(v.d);
    p.act = (int)v.act;
    p.lo = v.lo, p.hi = v.hi, p.beta = v.beta;
    return p;
}

#endif /* DUET_GEMM_EPILOGUE_ARGS_H */
