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

/* e's operands and scalars; turned: seen transposed (m and n, and every operand's row and
 * column strides, swapped), as a kernel that solves C^T = B^T A^T indexes them. */
static inline ge_args gpu_ge_args(const dt_epilogue *e, bool turned)
{
    ge_args p;
    memset(&p, 0, sizeof p);
    p.m = e->m, p.n = e->n, p.batch = e->batch;
    p.t = gpu_ge_operand(e->t);
    p.c = gpu_ge_operand(e->c);
    p.bias = gpu_ge_operand(e->bias);
    p.row_scale = gpu_ge_operand(e->row_scale);
    p.col_scale = gpu_ge_operand(e->col_scale);
    p.residual = gpu_ge_operand(e->residual);
    p.aux = gpu_ge_operand(e->aux);
    p.d = gpu_ge_operand(e->d);
    p.act = (int)e->act;
    p.lo = e->lo, p.hi = e->hi, p.beta = e->beta;
    if (turned) {
        const int64_t m = p.m;
        p.m = p.n, p.n = m;
        ge_operand *all[8] = {&p.t,         &p.c,        &p.bias, &p.row_scale,
                              &p.col_scale, &p.residual, &p.aux,  &p.d};
        for (int i = 0; i < 8; i++) {
            const int64_t rs = all[i]->rs;
            all[i]->rs = all[i]->cs, all[i]->cs = rs;
        }
    }
    return p;
}

#endif /* DUET_GEMM_EPILOGUE_ARGS_H */
