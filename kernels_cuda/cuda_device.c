/* CUDA runtime glue: how many usable GPUs this machine has. Built only when nvcc is found. */
#include <cuda_runtime_api.h>

int cuda_device_count(void);

int cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver or no device: not usable, and not sticky */
        return 0;
    }
    return n;
}
