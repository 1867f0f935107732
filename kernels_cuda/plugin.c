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

static const cuda_plugin plugin = {
    .abi = CUDA_PLUGIN_ABI,
    .device_count = device_count,
    .kernel_table = cuda_kernel_table,
};

__attribute__((visibility("default"))) const cuda_plugin *onyx_cuda_plugin(void);

const cuda_plugin *onyx_cuda_plugin(void) { return &plugin; }
