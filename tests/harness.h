/* harness.h - the conformance suite's checking helpers: checks, skips, random data, guards. */
#ifndef DUET_TESTS_HARNESS_H
#define DUET_TESTS_HARNESS_H

#include "duet/duet.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit code that CTest reads as "skipped" (SKIP_RETURN_CODE 77). */
#define DT_SKIP 77

/* Counts of checks in this test program; a test exits non-zero if any check failed. */
extern int dt_checks;
extern int dt_failures;

#define DT_CHECK(cond, ...)                                                                  \
    do {                                                                                     \
        dt_checks++;                                                                         \
        if (!(cond)) {                                                                       \
            dt_failures++;                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fprintf(stderr, "\n");                                                           \
        }                                                                                    \
    } while (0)

/* A call that must succeed; prints duet_last_error() when it does not. */
#define DT_OK(call)                                                                          \
    do {                                                                                     \
        duet_status dt_s_ = (call);                                                          \
        dt_checks++;                                                                         \
        if (dt_s_ != DUET_SUCCESS) {                                                         \
            dt_failures++;                                                                   \
            fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,              \
                    duet_status_string(dt_s_), duet_last_error());                           \
        }                                                                                    \
    } while (0)

/* A call that must fail with status want and leave a message containing the word `arg`. */
#define DT_FAILS(call, want, arg)                                                            \
    do {                                                                                     \
        duet_status dt_s_ = (call);                                                          \
        dt_checks++;                                                                         \
        if (dt_s_ != (want)) {                                                               \
            dt_failures++;                                                                   \
            fprintf(stderr, "%s:%d: %s -> %s, wanted %s (%s)\n", __FILE__, __LINE__, #call,  \
                    duet_status_string(dt_s_), duet_status_string(want), duet_last_error()); \
        } else if ((arg) != NULL && strstr(duet_last_error(), (arg)) == NULL) {              \
            dt_failures++;                                                                   \
            fprintf(stderr, "%s:%d: %s: message \"%s\" does not name \"%s\"\n", __FILE__,      \
                    __LINE__, #call, duet_last_error(), (const char *)(arg));                \
        }                                                                                    \
    } while (0)

/* Opens device 0 of the built backend or exits with DT_SKIP (never a silent pass). */
duet_context *dt_open_or_skip(void);
/* Prints "<name>: N checks, N failed" and returns the exit code (0 or 1). */
int dt_finish(const char *name);

/* Deterministic random numbers (xorshift64*), seeded per test. */
void dt_seed(uint64_t seed);
uint64_t dt_rand_u64(void);
/* Uniform in [lo, hi). */
double dt_rand_uniform(double lo, double hi);
/* Uniform integer in [lo, hi]. */
int64_t dt_rand_int(int64_t lo, int64_t hi);

/* One matrix's elements from its first to its last (ld included, offset and batch not). */
int64_t dt_matrix_extent(const duet_matrix *m);
/* The batch count as the library reads it: 0 and 1 both mean one matrix. */
int64_t dt_matrix_batches(const duet_matrix *m);
/* Host storage for a matrix descriptor's whole footprint (batch, ld, offset included). */
size_t dt_matrix_span_elems(const duet_matrix *m);
/* Element index of (b, i, j) in a matrix's buffer (offset included). */
size_t dt_matrix_index(const duet_matrix *m, int64_t b, int64_t i, int64_t j);

/* Reads and writes one element of any dtype as double (f16/bf16 converted exactly). */
double dt_get(const void *data, duet_dtype dtype, size_t index);
void dt_set(void *data, duet_dtype dtype, size_t index, double value);

/* OCP 8-bit floats (dtype f8e4m3 or f8e5m2), by definition rather than by bit tricks: decode
 * gives the exact value (NaN for NaN codes, +-inf for e5m2's infinities); encode rounds v to the
 * nearest finite value, ties to the even code, searching all codes. saturate: a value beyond the
 * largest finite one (or +-inf) gives +-max; else e5m2 gives +-inf and e4m3 NaN (S.1111.111).
 * NaN gives S.1111.111 (e4m3) or S.11111.10 (e5m2). dt_get and dt_set use them (saturating). */
double dt_f8_decode(unsigned code, duet_dtype dtype);
unsigned dt_f8_encode(double v, duet_dtype dtype, int saturate);

/* The sentinel written around and between outputs; NaN-boxed for floats, 0x5A5A5A5A for int. */
void dt_fill_sentinel(void *data, duet_dtype dtype, size_t count);
int dt_is_sentinel(const void *data, duet_dtype dtype, size_t index);

/* Reference GEMM on host data in double (floats) or wrapping uint32 (i32), independent of
 * every backend: c = alpha * op(a) * op(b) + beta * c over the descriptors' element indices.
 * beta == 0 ignores c's old contents. */
void dt_ref_gemm(duet_op op_a, duet_op op_b, double alpha, const duet_matrix *a,
                 const void *a_data, const duet_matrix *b, const void *b_data, double beta,
                 const duet_matrix *c, void *c_data);

/* As dt_ref_gemm, and also (each may be NULL) the result before rounding to c's dtype and the
 * error gauge |alpha| * sum |a||b| + |beta| |c| (0 where beta == 0), both packed as
 * [(b * c->rows + i) * c->cols + j]. Floats accumulate in long double (f64) or double (f32),
 * so the reference error stays far below the bound being checked. */
void dt_ref_gemm_ex(duet_op op_a, duet_op op_b, double alpha, const duet_matrix *a,
                    const void *a_data, const duet_matrix *b, const void *b_data, double beta,
                    const duet_matrix *c, void *c_data, double *result, double *gauge);

/* Non-zero when the reduced size set is asked for: an argument "--quick" or the environment
 * variable DUET_TEST_QUICK set to anything but "" or "0". */
int dt_quick_mode(int argc, char **argv);

/* Whether the GPU planner's compact small-problem rule (src/common/gemm_plan.h, DT_TINY_STEPS;
 * `all`: DUET_GEMM_TINY=all's wider bound) takes an AUTO GEMM of inputs `in`, m x n x k x batch,
 * on a device of `sms` SMs, by the rule's measure alone: the side of the tile it picks (16, 32
 * or 64), 0 when it does not take the problem. The measure restated, so that a test can say
 * which family must run; test_gemm_plan checks that it agrees with the planner. */
int dt_tiny_rule_fits(duet_dtype in, int64_t m, int64_t n, int64_t k, int64_t batch, int sms,
                      int all);
/* dt_tiny_rule_fits where the rule is on: the CUDA backend, DUET_GEMM_TINY not "0" ("all"
 * widens the bound), DUET_GEMM_NO_SMALL not "1", DUET_GEMM_HOPPER_ALL unset. */
int dt_tiny_rule_takes(duet_dtype in, int64_t m, int64_t n, int64_t k, int64_t batch, int sms);

/* Standard normal numbers (Box-Muller), like numpy's randn. */
double dt_rand_normal(void);

#endif /* DUET_TESTS_HARNESS_H */
