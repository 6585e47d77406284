/* bench_pattern.h - the operand pattern and C samples of dist-bench and duet-group-bench. */
#ifndef DUET_BENCH_PATTERN_H
#define DUET_BENCH_PATTERN_H

#include <stdint.h>
#include <string.h>

/* A hash of element (i, j) of operand `which` (0: A, 1: B): the pattern's bits. */
static inline uint64_t bench_pattern_hash(int which, int64_t i, int64_t j)
{
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ (uint64_t)j * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)(which + 1) * 0x165667B19E3779F9ull;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h;
}

/* The 24-bit pattern value in [-0.5, 0.5) of a hash, never 0. */
static inline double bench_pattern_24(uint64_t h)
{
    const double v = (double)(h >> 40) / 16777216.0 - 0.5;
    return v == 0.0 ? 0.25 : v;
}

/* v rounded to bf16 (to nearest even), as a double. */
static inline double bench_round_bf16(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    memcpy(&f, &u, 4);
    return f;
}

/* The q-th (0..15) checked element of an n x n C. */
static inline void bench_sample(int q, int64_t n, int64_t *i, int64_t *j)
{
    *i = (int64_t)((uint64_t)(q * 7 + 3) * (uint64_t)n / 113) % n;
    *j = (int64_t)((uint64_t)(q * 11 + 5) * (uint64_t)n / 127) % n;
}

#endif /* DUET_BENCH_PATTERN_H */
