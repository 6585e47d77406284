/* transpose_inplace_plan.h - the super-element path of the rectangular in-place transpose: when it applies, its band permutations. */
#ifndef DUET_TRANSPOSE_INPLACE_PLAN_H
#define DUET_TRANSPOSE_INPLACE_PLAN_H

#include <stddef.h>
#include <stdint.h>

/*
 * A reduction of the packed rectangular in-place transpose to the square one, over
 * "super-elements" (the C2R decomposition of Catanzaro, Keller and Garland, PPoPP 2014, stays
 * for the shapes this does not take). The stored source A is m lines of n elements (ld == n);
 * with c = gcd(m, n), m = a c and n = b c, A is a c x c grid of super-elements, each an a x b
 * block: super-element (P, Q) is A[a P + alpha][b Q + beta], alpha < a, beta < b. The result
 * A^T (n lines of m) is a c x c grid of b x a blocks, and its block (Q, P) holds
 * A^T[b Q + beta][a P + alpha] = A[a P + alpha][b Q + beta]: the b x a transpose of A's block
 * (P, Q). So A^T is the c x c transpose of the grid, each block transposed on its way. Three
 * steps, each a permutation closed over its own storage (one in-place pass each):
 *
 *  1. lines to blocks (only when a > 1): band P of A (its a lines aP .. aP + a - 1, a n = c w
 *     elements, w = a b, contiguous) becomes c consecutive blocks of w elements, block Q
 *     holding A's block (P, Q) stored as its b x a transpose: the element at band offset
 *     alpha n + b Q + beta goes to Q w + beta a + alpha. Afterwards the storage is a c x c
 *     row-major matrix of w-element super-elements, (P, Q) at (P c + Q) w, holding A^T's block
 *     (Q, P) row-major. When a == 1 the band is one line whose block Q (b elements from b Q)
 *     already lies at Q w in this order: the step is the identity.
 *  2. square: the c x c in-place transpose of the super-elements (the tile-pair swap of the
 *     square path with every element w elements long). Super-element (Q, P), at (Q c + P) w,
 *     now holds A^T's block (Q, P) row-major: A^T[b Q + beta][a P + alpha] at offset
 *     (Q c + P) w + beta a + alpha.
 *  3. blocks to lines (only when b > 1): band Q (offset Q c w = Q b m, b m elements) holds c
 *     blocks of b x a, and must become the b lines b Q .. b Q + b - 1 of A^T: the element at
 *     band offset P w + beta a + alpha goes to beta m + a P + alpha. When b == 1 that is the
 *     identity, as in step 1.
 *
 * Both band steps are written as gathers in destination order: the destination offset d of a
 * band, read as the digits d = (d2 n1 + d1) n0 + d0 (radices n2 x n1 x n0 = len), takes the
 * element at source offset d2 s2 + d1 s1 + d0 s0 of the band:
 *   step 1: d = Q w + beta a + alpha, digits (Q, beta, alpha) in (c, b, a); source
 *           alpha n + Q b + beta: s2 = b, s1 = 1, s0 = n.
 *   step 3: d = beta m + P a + alpha, digits (beta, P, alpha) in (b, c, a); source
 *           P w + beta a + alpha: s2 = a, s1 = w, s0 = 1.
 *
 * Each step reads and writes the matrix once (a band is moved whole through on-chip memory),
 * so the transpose costs two passes when a or b is 1 and three otherwise, against the C2R
 * path's three gathers, each a pass at best. It applies when c >= DT_IP_SUPER_MIN_C and a
 * band of either step fits the backend's on-chip budget (GPU shared memory, cpu L2): below
 * c = 32 the square step is a single partial tile pair, the bands are a c-th of the whole
 * matrix, and there are too few of them (c per matrix) to spread over a GPU, while the C2R
 * path's line kernels already do small matrices in three launches.
 */

enum { DT_IP_SUPER_MIN_C = 32 };

/* A band permutation (the comment above): destination digits in n2 x n1 x n0, source strides. */
typedef struct dt_ip_band {
    int64_t len;        /* elements of one band: n2 n1 n0 */
    int64_t n2, n1, n0; /* d = (d2 n1 + d1) n0 + d0 */
    int64_t s2, s1, s0; /* takes the element at d2 s2 + d1 s1 + d0 s0 */
} dt_ip_band;

typedef struct dt_ip_super {
    int64_t m, n;          /* the source: m lines of n elements */
    int64_t c, a, b, w;    /* c = gcd(m, n), m = a c, n = b c, w = a b */
    dt_ip_band to_blocks;  /* step 1 (run when a > 1): c bands of a n per matrix */
    dt_ip_band to_lines;   /* step 3 (run when b > 1): c bands of b m per matrix */
} dt_ip_super;

static inline int64_t dt_ip_gcd(int64_t x, int64_t y)
{
    while (y) {
        const int64_t r = x % y;
        x = y;
        y = r;
    }
    return x;
}

/* 1 when the in-place transpose of m lines of n elements (m != n, packed) of elem bytes takes
 * the super-element path on a backend whose band may take up to band_bytes; fills *s then. */
static inline int dt_ip_super_plan(int64_t m, int64_t n, size_t elem, size_t band_bytes,
                                   dt_ip_super *s)
{
    if (m <= 0 || n <= 0 || m == n) return 0;
    const int64_t c = dt_ip_gcd(m, n), a = m / c, b = n / c;
    if (c < DT_IP_SUPER_MIN_C) return 0;
    const int64_t longest = (a * n > b * m ? a * n : b * m) * (int64_t)elem;
    if ((uint64_t)longest > (uint64_t)band_bytes) return 0;
    s->m = m;
    s->n = n;
    s->c = c;
    s->a = a;
    s->b = b;
    s->w = a * b;
    s->to_blocks.len = a * n;
    s->to_blocks.n2 = c;
    s->to_blocks.n1 = b;
    s->to_blocks.n0 = a;
    s->to_blocks.s2 = b;
    s->to_blocks.s1 = 1;
    s->to_blocks.s0 = n;
    s->to_lines.len = b * m;
    s->to_lines.n2 = b;
    s->to_lines.n1 = c;
    s->to_lines.n0 = a;
    s->to_lines.s2 = a;
    s->to_lines.s1 = a * b;
    s->to_lines.s0 = 1;
    return 1;
}

#endif /* DUET_TRANSPOSE_INPLACE_PLAN_H */
