/* What every CUDA kernel file shares (C and CUDA C++): the run context's queue with its stream
 * and library handles, device scratch, status conversion from the CUDA libraries, and how a
 * family hands its kernel entries to the table (kernels_cuda/table.c). */
#ifndef ONYX_KERNELS_CUDA_CUDA_KERNELS_H
#define ONYX_KERNELS_CUDA_CUDA_KERNELS_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/kernel.h"

/* One per run context (device_ops.queue_create): the stream every kernel of the run queues its
 * work on, and the library handles bound to it, made on first use. */
typedef struct cuda_queue {
    cudaStream_t stream;
    cublasHandle_t blas;
    void *blas_workspace;
    cublasLtHandle_t lt;
    cudnnHandle_t dnn;
    void *scratch; /* device memory for kernel scratch, grown on demand */
    size_t scratch_size;
    void *staging; /* pinned host memory for copies, grown on demand */
    size_t staging_size;
    cudaEvent_t staged; /* recorded after the last copy that reads staging */
} cuda_queue;

/* The queue of a kernel's run; NULL outside a run (never for CUDA kernels). */
static inline cuda_queue *cuda_queue_of(const kernel_call *c) { return (cuda_queue *)c->queue; }

/* The call's stream (kernels launch on it, never on the default stream). */
static inline cudaStream_t cuda_stream(const kernel_call *c) { return cuda_queue_of(c)->stream; }

/* Device working memory for this call: at least `bytes`, 256-byte aligned, valid for the work
 * the call queues (the next call on the queue reuses it, in stream order). */
onyx_status cuda_scratch(const kernel_call *c, size_t bytes, void **out);

/* The queue's library handles, bound to its stream. */
onyx_status cuda_blas(const kernel_call *c, cublasHandle_t *out);
onyx_status cuda_blas_lt(const kernel_call *c, cublasLtHandle_t *out);
onyx_status cuda_dnn(const kernel_call *c, cudnnHandle_t *out);

/* ONYX_OK, or ONYX_ERR_RUNTIME (ONYX_ERR_NO_MEMORY for allocation failures) with a message
 * naming `what` and the library's own words. */
onyx_status cuda_status(cudaError_t e, const char *what);
onyx_status cublas_status(cublasStatus_t s, const char *what);
onyx_status cudnn_status(cudnnStatus_t s, const char *what);
/* After a kernel launch: the launch's error, if any. */
onyx_status cuda_launched(const char *what);

/* Device memory ops (kernels_cuda/queue.c). */
extern const device_ops cuda_memory_ops;

/* A family's kernel entries (kernels_cuda/families.h lists the families). */
#define CUDA_FAMILY(name) const kernel *cuda_family_##name(size_t *count);
#include "kernels_cuda/families.h"
#undef CUDA_FAMILY

#ifdef __cplusplus
}
#endif

#endif
