/* duet_dlpack.h - DLPack tensors as duet matrices and duet matrices as DLPack tensors (optional). */
#ifndef DUET_DUET_DLPACK_H
#define DUET_DUET_DLPACK_H

/*
 * Kept out of duet.h so that duet.h stays free of foreign types. Present in an installation
 * only when duet was built with DLPack's header (<dlpack/dlpack.h>, e.g. Debian's
 * libdlpack-dev); the functions below exist in exactly those builds.
 */
#include <duet/duet.h>
#include <dlpack/dlpack.h>

/* dlpack.h before 0.8 has no versioned tensor. Its layout, fixed by DLPack 1.0, is given here
 * so that duet's versioned functions exist whatever dlpack.h the build found. */
#if !defined(DLPACK_MAJOR_VERSION)
typedef struct DLPackVersion {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#endif /* no DLPACK_MAJOR_VERSION */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Import: a rank-2 ([rows, cols]) or rank-3 ([batch, rows, cols]) tensor as a duet_matrix over
 * a new non-owning buffer of ctx (see duet_buffer_wrap). On success duet owns the managed
 * tensor: destroying matrix->buffer, or its context, calls the tensor's deleter (if not NULL),
 * from whichever thread destroys it. On failure nothing is written, the deleter is not called
 * and the tensor stays the caller's.
 *
 *   dtype     (lanes 1) float 32 -> F32, float 64 -> F64, float 16 -> F16, bfloat 16 -> BF16,
 *             int 32 -> I32, int 8 -> I8; anything else is DUET_ERROR_UNSUPPORTED
 *   device    cpu backend: kDLCPU, kDLCUDAHost, kDLROCMHost with device_id 0; cuda: kDLCUDA,
 *             kDLCUDAManaged; hip: kDLROCM. Another type is DUET_ERROR_UNSUPPORTED; a
 *             device_id other than the context's device is DUET_ERROR_INVALID_ARGUMENT.
 *   strides   NULL (compact row-major) or in elements, never negative. The last dimension
 *             with stride 1 gives DUET_LAYOUT_ROW_MAJOR and ld = strides[ndim-2]; else the
 *             row dimension with stride 1 gives DUET_LAYOUT_COL_MAJOR and ld =
 *             strides[ndim-1]; neither is DUET_ERROR_UNSUPPORTED (an inner stride that is not
 *             1). The stride of a dimension of size 1 is ignored. Rank 3: batch_stride =
 *             strides[0].
 *   byte_offset  a multiple of the element size (else DUET_ERROR_UNSUPPORTED); the matrix's
 *             offset is byte_offset / element size, the buffer starts at data.
 *   other     ndim other than 2 or 3, and a batch of 0 matrices, are DUET_ERROR_UNSUPPORTED
 *             (duet reads batch_count 0 as 1); negative shapes, NULL data
 *             with elements, NULL shape, an ld smaller than the row (column) length are
 *             DUET_ERROR_INVALID_ARGUMENT. Versioned tensors need version.major == 1
 *             (DUET_ERROR_UNSUPPORTED).
 *   read-only A versioned tensor flagged DLPACK_FLAG_BITMASK_READ_ONLY gives a read-only
 *             buffer: every call that writes a buffer (an op's output, duet_buffer_write and
 *             _async, duet_buffer_copy and _copy_peer's dst, duet_buffer_memset, a group
 *             gemm's device C) refuses it with DUET_ERROR_INVALID_ARGUMENT naming the argument
 *             and the flag. duet_launch cannot know what a kernel writes: a read-only buffer
 *             passed to one must only be read, as must duet_buffer_device_ptr's address.
 *   once      A managed tensor is imported once: importing it again while the buffer of its
 *             first import is alive is DUET_ERROR_INVALID_ARGUMENT (the deleter would run once
 *             per buffer). After that buffer is destroyed the deleter has run and the tensor
 *             is gone.
 * Each message names the field, e.g. "duet_matrix_from_dlpack: tensor->dl_tensor.strides[1]
 * (2) ...".
 */
DUET_API duet_status duet_matrix_from_dlpack(duet_context *ctx, DLManagedTensor *tensor,
                                             duet_matrix *matrix);
DUET_API duet_status duet_matrix_from_dlpack_versioned(duet_context *ctx,
                                                       DLManagedTensorVersioned *tensor,
                                                       duet_matrix *matrix);

/*
 * Export: a new managed tensor viewing matrix's memory (rank 2, or rank 3 when batch_count >
 * 1), data = the buffer's device address, byte_offset = offset * element size, strides in
 * elements, the context's device. Its deleter frees only the tensor's own descriptor (from any
 * thread, also after the context is gone); the memory stays the buffer's, so the buffer must
 * outlive every use of the tensor. The matrix is checked as the ops check it
 * (DUET_ERROR_INVALID_ARGUMENT / DUET_ERROR_INVALID_HANDLE). Versioned tensors carry version
 * 1.0 and DLPACK_FLAG_BITMASK_READ_ONLY where the buffer is read-only (no flags otherwise); a
 * read-only buffer has no unversioned export (DUET_ERROR_INVALID_ARGUMENT: that tensor has
 * no flags to say so).
 */
DUET_API duet_status duet_matrix_to_dlpack(const duet_matrix *matrix, DLManagedTensor **tensor);
DUET_API duet_status duet_matrix_to_dlpack_versioned(const duet_matrix *matrix,
                                                     DLManagedTensorVersioned **tensor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DUET_DUET_DLPACK_H */
