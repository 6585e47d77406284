/* call_count.c - calls one tiny op N times: the driver of lab/callgrind-overhead.sh. */
/*
 * Usage: call_count OP N, OP one of fill scale add add_same gemm
 * transpose. Each call is the 8 x 8 f32
 * op of `duet-bench --overhead` (gemm 8 x 8 x 8, AUTO, default stream). Under callgrind the
 * inclusive instruction count of duet_<op> divided by N is what one call costs on the host.
 */
#include <duet/duet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(x)                                                                                      \
    do {                                                                                           \
        if ((x) != DUET_SUCCESS) {                                                                 \
            fprintf(stderr, "%s failed: %s\n", #x, duet_last_error());                            \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: call_count fill|scale|add|add_same|gemm|transpose N\n");
        return 2;
    }
    const char *op = argv[1];
    const int n = atoi(argv[2]);
    duet_context *ctx;
    OK(duet_context_create(0, &ctx));
    duet_buffer *buf[4];
    duet_matrix m[4];
    for (int i = 0; i < 4; i++) {
        OK(duet_buffer_create(ctx, 64 * sizeof(float), &buf[i]));
        m[i] = duet_matrix_make(buf[i], DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 8, 8);
        OK(duet_fill(NULL, 1.0, &m[i], NULL));
    }
    for (int i = 0; i < n; i++) {
        if (!strcmp(op, "fill")) OK(duet_fill(NULL, 1.0, &m[2], NULL));
        else if (!strcmp(op, "scale")) OK(duet_scale(NULL, 1.0, &m[2], NULL));
        else if (!strcmp(op, "add")) OK(duet_add(NULL, 1.0, &m[0], 1.0, &m[1], &m[2], NULL));
        else if (!strcmp(op, "add_same")) /* a, b and c one buffer: c = c + c in place */
            OK(duet_add(NULL, 1.0, &m[2], 1.0, &m[2], &m[2], NULL));
        else if (!strcmp(op, "gemm"))
            OK(duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &m[0], &m[1], 0.0, &m[2], NULL));
        else if (!strcmp(op, "transpose")) OK(duet_transpose(NULL, &m[0], &m[3], NULL));
        else {
            fprintf(stderr, "call_count: unknown op %s\n", op);
            return 2;
        }
    }
    for (int i = 0; i < 4; i++) OK(duet_buffer_destroy(buf[i]));
    OK(duet_context_destroy(ctx));
    return 0;
}
