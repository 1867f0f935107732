/* libonyx_cuda.so's entry point: the device count from the CUDA runtime and the CUDA kernel
 * table, as the table of kernels_cuda/plugin.h. */
#include "kernels_cuda/plugin.h"

#include <cuda_runtime_api.h>

const kernel *cuda_kernel_table(size_t *count);

static int device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver or no device: not usable, and not sticky */
        return 0;
    }
    return n;
}

/* Device memory through the runtime API. Copies are synchronous (the copy steps run in the
 * executor's order); a failure leaves the destination as it was and is reported by the next
 * kernel that checks the stream's error. */
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

static void cuda_to_host(void *dst, const void *src, size_t bytes) {
    cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
}

static void cuda_from_host(void *dst, const void *src, size_t bytes) {
    cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
}

static const device_ops memory = {
    .kind = DEVICE_CUDA,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .to_host = cuda_to_host,
    .from_host = cuda_from_host,
};

static const cuda_plugin plugin = {
    .abi = CUDA_PLUGIN_ABI,
    .device_count = device_count,
    .kernel_table = cuda_kernel_table,
    .memory = &memory,
};

__attribute__((visibility("default"))) const cuda_plugin *onyx_cuda_plugin(void);

const cuda_plugin *onyx_cuda_plugin(void) { return &plugin; }
