/* lab_check.h - the lab programs' checks: a failed CUDA, cuBLAS or duet call prints where and exits 2. */
#ifndef DUET_LAB_CHECK_H
#define DUET_LAB_CHECK_H

#include <duet/duet.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)
#define CB(x)                                                                                      \
    do {                                                                                           \
        cublasStatus_t s_ = (x);                                                                   \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #x, (int)s_);     \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)
#define DK(x)                                                                                      \
    do {                                                                                           \
        duet_status d_ = (x);                                                                      \
        if (d_ != DUET_SUCCESS) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, duet_last_error());        \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

#endif /* DUET_LAB_CHECK_H */
