/* main.c - a program outside duet's tree: checks the installed header and library agree and work.
 */
#include <duet/duet.h>

#include <stdio.h>

int main(void)
{
    if (duet_version() != DUET_VERSION) {
        fprintf(stderr, "consumer: header is version %d, library is %d\n", DUET_VERSION,
                duet_version());
        return 1;
    }
    printf("consumer: duet %s\n", duet_version_string());

    duet_context *ctx = NULL;
    duet_status s = duet_context_create(0, &ctx);
    if (s == DUET_ERROR_NO_DEVICE) {
        printf("consumer: no %s device, skipped: %s\n", duet_backend_name(), duet_last_error());
        return 77;
    }
    if (s != DUET_SUCCESS) {
        fprintf(stderr, "consumer: duet_context_create: %s\n", duet_last_error());
        return 1;
    }

    /* C(2x2) = A(2x3) * B(3x2), all row-major: [[1 2 3] [4 5 6]] * [[7 8] [9 10] [11 12]]. */
    const float a[6] = {1, 2, 3, 4, 5, 6};
    const float b[6] = {7, 8, 9, 10, 11, 12};
    const float want[4] = {58, 64, 139, 154};
    float c[4] = {0};
    duet_buffer *da = NULL, *db = NULL, *dc = NULL;
    int ok = duet_buffer_create(ctx, sizeof a, &da) == DUET_SUCCESS &&
             duet_buffer_create(ctx, sizeof b, &db) == DUET_SUCCESS &&
             duet_buffer_create(ctx, sizeof c, &dc) == DUET_SUCCESS &&
             duet_buffer_write(NULL, da, 0, a, sizeof a) == DUET_SUCCESS &&
             duet_buffer_write(NULL, db, 0, b, sizeof b) == DUET_SUCCESS;
    if (ok) {
        duet_matrix ma = duet_matrix_make(da, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 3);
        duet_matrix mb = duet_matrix_make(db, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 3, 2);
        duet_matrix mc = duet_matrix_make(dc, DUET_DTYPE_F32, DUET_LAYOUT_ROW_MAJOR, 2, 2);
        ok = duet_gemm(NULL, DUET_OP_N, DUET_OP_N, 1.0, &ma, &mb, 0.0, &mc, NULL) == DUET_SUCCESS &&
             duet_buffer_read(NULL, dc, 0, c, sizeof c) == DUET_SUCCESS;
    }
    if (!ok) fprintf(stderr, "consumer: %s\n", duet_last_error());
    for (int i = 0; ok && i < 4; i++) {
        if (c[i] != want[i]) {
            fprintf(stderr, "consumer: C[%d] = %g, expected %g\n", i, c[i], want[i]);
            ok = 0;
        }
    }
    duet_context_destroy(ctx);
    printf("consumer: gemm 2x3 * 3x2 %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
