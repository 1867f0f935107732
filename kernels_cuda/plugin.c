/* libonyx_cuda.so's entry point: the device count from the CUDA runtime, the CUDA kernel table
 * and the device's memory and queue operations, as the table of kernels_cuda/plugin.h. */
#include "kernels_cuda/plugin.h"

#include "kernels_cuda/cuda_kernels.h"

const kernel *cuda_kernel_table(size_t *count);
void cuda_table_build(void);
bool cuda_host_set(const cuda_host_api *api);

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
    .memory = &cuda_memory_ops,
};

__attribute__((visibility("default"))) const cuda_plugin *onyx_cuda_plugin(const cuda_host_api *host);

/* Called once by the host (backend/cuda_plugin.c loads the plugin under a once-guard). */
const cuda_plugin *onyx_cuda_plugin(const cuda_host_api *host) {
    if (!cuda_host_set(host)) return NULL;
    cuda_table_build();
    return &plugin;
}
