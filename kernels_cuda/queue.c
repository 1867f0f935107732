/* Device memory, copies and run queues of the CUDA device (core/device.h): a queue is a stream
 * of its own per run context, with cuBLAS, cuBLASLt and cuDNN handles bound to it on first use,
 * device scratch and pinned staging for host copies, all kept for the context's later runs. */
#include <stdlib.h>
#include <string.h>

#include "kernels_cuda/cuda_kernels.h"

/* Pinned staging is used for copies up to this size; larger ones go straight from pageable
 * memory (the driver stages them itself), so that a context pins no more than this. */
#define STAGING_CAP ((size_t)64 << 20)

/* cuBLAS's workspace per queue: what it recommends on Hopper. */
#define BLAS_WORKSPACE ((size_t)32 << 20)

onyx_status cuda_status(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return ONYX_OK;
    (void)cudaGetLastError(); /* clear it unless sticky */
    return onyx_error(e == cudaErrorMemoryAllocation ? ONYX_ERR_NO_MEMORY : ONYX_ERR_RUNTIME,
                      "CUDA: %s: %s", what, cudaGetErrorString(e));
}

onyx_status cuda_launched(const char *what) { return cuda_status(cudaGetLastError(), what); }

onyx_status cublas_status(cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) return ONYX_OK;
    return onyx_error(s == CUBLAS_STATUS_ALLOC_FAILED ? ONYX_ERR_NO_MEMORY : ONYX_ERR_RUNTIME,
                      "cuBLAS: %s: %s", what, cublasGetStatusString(s));
}

onyx_status cudnn_status(cudnnStatus_t s, const char *what) {
    if (s == CUDNN_STATUS_SUCCESS) return ONYX_OK;
    return onyx_error(s == CUDNN_STATUS_ALLOC_FAILED ? ONYX_ERR_NO_MEMORY : ONYX_ERR_RUNTIME,
                      "cuDNN: %s: %s", what, cudnnGetErrorString(s));
}

/* ------------------------------------------------------------------ memory */

static void *cuda_alloc(size_t bytes) {
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

static void cuda_free(void *p) {
    if (p) cudaFree(p);
}

/* ------------------------------------------------------------------ queues */

static void queue_destroy(void *queue) {
    cuda_queue *q = queue;
    if (!q) return;
    if (q->stream) cudaStreamSynchronize(q->stream);
    if (q->dnn) cudnnDestroy(q->dnn);
    if (q->lt) cublasLtDestroy(q->lt);
    if (q->blas) cublasDestroy(q->blas);
    if (q->blas_workspace) cudaFree(q->blas_workspace);
    if (q->scratch) cudaFree(q->scratch);
    if (q->staging) cudaFreeHost(q->staging);
    if (q->staged) cudaEventDestroy(q->staged);
    if (q->stream) cudaStreamDestroy(q->stream);
    free(q);
}

static onyx_status queue_create(void **out) {
    cuda_queue *q = calloc(1, sizeof *q);
    if (!q) return onyx_oom("CUDA queue");
    onyx_status st = cuda_status(cudaStreamCreateWithFlags(&q->stream, cudaStreamNonBlocking),
                                 "creating a stream");
    if (st == ONYX_OK)
        st = cuda_status(cudaEventCreateWithFlags(&q->staged, cudaEventDisableTiming),
                         "creating an event");
    if (st != ONYX_OK) {
        queue_destroy(q);
        return st;
    }
    *out = q;
    return ONYX_OK;
}

static onyx_status queue_finish(void *queue) {
    cuda_queue *q = queue;
    return cuda_status(cudaStreamSynchronize(q->stream), "running the queued kernels");
}

onyx_status cuda_scratch(const kernel_call *c, size_t bytes, void **out) {
    cuda_queue *q = cuda_queue_of(c);
    if (bytes > q->scratch_size) {
        /* a graph replays fixed addresses: growing inside a capture fails it (the executor then
         * runs those steps one by one); the uncaptured first run has grown it already */
        enum cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(q->stream, &capturing) == cudaSuccess &&
            capturing != cudaStreamCaptureStatusNone)
            return onyx_error(ONYX_ERR_RUNTIME, "CUDA: scratch grows during a graph capture");
        size_t size = (bytes + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
        void *grown = NULL;
        /* the old region may still be read by queued work: freed in stream order */
        if (q->scratch) TRY(cuda_status(cudaFreeAsync(q->scratch, q->stream), "freeing scratch"));
        q->scratch = NULL;
        q->scratch_size = 0;
        TRY(cuda_status(cudaMallocAsync(&grown, size, q->stream), "device scratch"));
        q->scratch = grown;
        q->scratch_size = size;
    }
    *out = q->scratch;
    return ONYX_OK;
}

onyx_status cuda_blas(const kernel_call *c, cublasHandle_t *out) {
    cuda_queue *q = cuda_queue_of(c);
    if (!q->blas) {
        cublasHandle_t h;
        TRY(cublas_status(cublasCreate(&h), "creating a handle"));
        cublasStatus_t s = cublasSetStream(h, q->stream);
        if (s != CUBLAS_STATUS_SUCCESS) {
            cublasDestroy(h);
            return cublas_status(s, "binding the handle to the stream");
        }
        /* a workspace of its own, so that cuBLAS allocates nothing inside graph captures */
        void *ws = NULL;
        if (cudaMalloc(&ws, BLAS_WORKSPACE) != cudaSuccess ||
            cublasSetWorkspace(h, ws, BLAS_WORKSPACE) != CUBLAS_STATUS_SUCCESS) {
            (void)cudaGetLastError();
            if (ws) cudaFree(ws);
            cublasDestroy(h);
            return onyx_error(ONYX_ERR_NO_MEMORY, "cuBLAS: no memory for its workspace");
        }
        q->blas = h;
        q->blas_workspace = ws;
    }
    *out = q->blas;
    return ONYX_OK;
}

onyx_status cuda_blas_lt(const kernel_call *c, cublasLtHandle_t *out) {
    cuda_queue *q = cuda_queue_of(c);
    if (!q->lt) TRY(cublas_status(cublasLtCreate(&q->lt), "creating a cuBLASLt handle"));
    *out = q->lt;
    return ONYX_OK;
}

onyx_status cuda_dnn(const kernel_call *c, cudnnHandle_t *out) {
    cuda_queue *q = cuda_queue_of(c);
    if (!q->dnn) {
        cudnnHandle_t h;
        TRY(cudnn_status(cudnnCreate(&h), "creating a handle"));
        cudnnStatus_t s = cudnnSetStream(h, q->stream);
        if (s != CUDNN_STATUS_SUCCESS) {
            cudnnDestroy(h);
            return cudnn_status(s, "binding the handle to the stream");
        }
        q->dnn = h;
    }
    *out = q->dnn;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ copies */

/* The queue's pinned staging, at least `bytes`, once the copies that read it are done; NULL
 * (copy from pageable memory instead) when larger than STAGING_CAP or when pinning fails. */
static void *staging(cuda_queue *q, size_t bytes) {
    if (bytes > STAGING_CAP) return NULL;
    if (cudaEventSynchronize(q->staged) != cudaSuccess) return NULL;
    if (bytes > q->staging_size) {
        size_t size = bytes < ((size_t)1 << 20) ? (size_t)1 << 20 : bytes;
        void *grown = NULL;
        if (cudaHostAlloc(&grown, size, cudaHostAllocDefault) != cudaSuccess) {
            (void)cudaGetLastError();
            return NULL;
        }
        if (q->staging) cudaFreeHost(q->staging);
        q->staging = grown;
        q->staging_size = size;
    }
    return q->staging;
}

static onyx_status to_host(void *queue, void *dst, const void *src, size_t bytes) {
    cuda_queue *q = queue;
    if (!q) return cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "copy to host");
    void *pinned = staging(q, bytes);
    if (!pinned) {
        TRY(cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, q->stream),
                        "copy to host"));
        return cuda_status(cudaStreamSynchronize(q->stream), "copy to host");
    }
    TRY(cuda_status(cudaMemcpyAsync(pinned, src, bytes, cudaMemcpyDeviceToHost, q->stream),
                    "copy to host"));
    TRY(cuda_status(cudaStreamSynchronize(q->stream), "copy to host"));
    memcpy(dst, pinned, bytes);
    return ONYX_OK;
}

static onyx_status from_host(void *queue, void *dst, const void *src, size_t bytes) {
    cuda_queue *q = queue;
    if (!q) return cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "copy to device");
    void *pinned = staging(q, bytes);
    if (!pinned) /* from pageable memory: returns once the source may be reused */
        return cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, q->stream),
                           "copy to device");
    memcpy(pinned, src, bytes);
    TRY(cuda_status(cudaMemcpyAsync(dst, pinned, bytes, cudaMemcpyHostToDevice, q->stream),
                    "copy to device"));
    return cuda_status(cudaEventRecord(q->staged, q->stream), "copy to device");
}

/* ------------------------------------------------------------------ graphs */

static onyx_status capture_begin(void *queue) {
    cuda_queue *q = queue;
    /* thread-local: other threads' runs (and their allocations) go on during the capture */
    return cuda_status(cudaStreamBeginCapture(q->stream, cudaStreamCaptureModeThreadLocal),
                       "beginning a graph capture");
}

static onyx_status capture_end(void *queue, void **out) {
    cuda_queue *q = queue;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    onyx_status st = cuda_status(cudaStreamEndCapture(q->stream, &graph), "ending a graph capture");
    if (st == ONYX_OK && out)
        st = cuda_status(cudaGraphInstantiate(&exec, graph, 0), "instantiating a graph");
    if (graph) cudaGraphDestroy(graph);
    if (st == ONYX_OK && out) *out = exec;
    return st;
}

static onyx_status graph_launch(void *queue, void *graph) {
    cuda_queue *q = queue;
    return cuda_status(cudaGraphLaunch((cudaGraphExec_t)graph, q->stream), "launching a graph");
}

static void graph_free(void *graph) {
    if (graph) cudaGraphExecDestroy((cudaGraphExec_t)graph);
}

static onyx_status device_copy(void *queue, void *dst, const void *src, size_t bytes) {
    cuda_queue *q = queue;
    if (!q) return cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "device copy");
    return cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, q->stream),
                       "device copy");
}

const device_ops cuda_memory_ops = {
    .kind = DEVICE_CUDA,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .to_host = to_host,
    .from_host = from_host,
    .copy = device_copy,
    .queue_create = queue_create,
    .queue_destroy = queue_destroy,
    .queue_finish = queue_finish,
    .capture_begin = capture_begin,
    .capture_end = capture_end,
    .graph_launch = graph_launch,
    .graph_free = graph_free,
};
