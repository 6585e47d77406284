/* dist_main.c - a program outside duet's tree using an installed duet::dist (one rank, 1x1 grid).
 */
#include <duet/duet_dist.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    duet_context *ctx = NULL;
    duet_status s = duet_context_create(0, &ctx);
    if (s == DUET_ERROR_NO_DEVICE) {
        printf("consumer-dist: no %s device, skipped\n", duet_backend_name());
        MPI_Finalize();
        return 77;
    }
    int ok = s == DUET_SUCCESS;
    duet_dist_grid *grid = NULL;
    ok = ok && duet_dist_grid_create(MPI_COMM_WORLD, 1, 1, ctx, NULL, &grid) == DUET_SUCCESS;

    /* C(2x2) = A(2x3) * B(3x2) in 2x2 blocks, column-major locals: on a 1x1 grid the local
     * matrices are the whole matrices. */
    const double a[6] = {1, 4, 2, 5, 3, 6}, b[6] = {7, 9, 11, 8, 10, 12};
    const double want[4] = {58, 139, 64, 154};
    double c[4] = {0};
    duet_buffer *da = NULL, *db = NULL, *dc = NULL;
    ok = ok && duet_buffer_create(ctx, sizeof a, &da) == DUET_SUCCESS &&
         duet_buffer_create(ctx, sizeof b, &db) == DUET_SUCCESS &&
         duet_buffer_create(ctx, sizeof c, &dc) == DUET_SUCCESS &&
         duet_buffer_write(NULL, da, 0, a, sizeof a) == DUET_SUCCESS &&
         duet_buffer_write(NULL, db, 0, b, sizeof b) == DUET_SUCCESS;
    duet_dist_desc A = {2, 3, 2, 2, 0, 0, 2, DUET_DTYPE_F64, DUET_LAYOUT_COL_MAJOR, 0};
    duet_dist_desc B = {3, 2, 2, 2, 0, 0, 3, DUET_DTYPE_F64, DUET_LAYOUT_COL_MAJOR, 0};
    duet_dist_desc C = {2, 2, 2, 2, 0, 0, 2, DUET_DTYPE_F64, DUET_LAYOUT_COL_MAJOR, 0};
    ok = ok &&
         duet_dist_gemm(grid, DUET_OP_N, DUET_OP_N, 1.0, &A, da, &B, db, 0.0, &C, dc, NULL) ==
             DUET_SUCCESS &&
         duet_buffer_read(NULL, dc, 0, c, sizeof c) == DUET_SUCCESS;
    if (!ok) fprintf(stderr, "consumer-dist: %s %s\n", duet_dist_last_error(), duet_last_error());
    for (int i = 0; ok && i < 4; i++) ok = c[i] == want[i];
    if (grid) duet_dist_grid_destroy(grid);
    if (ctx) duet_context_destroy(ctx);
    printf("consumer-dist: distributed gemm on a 1x1 grid %s\n", ok ? "ok" : "FAILED");
    MPI_Finalize();
    return ok ? 0 : 1;
}
