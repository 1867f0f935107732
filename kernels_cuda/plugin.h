/* The interface between libonyx and its CUDA part, libonyx_cuda.so: the main library loads the
 * CUDA part at run time (backend/cuda_plugin.c), so that one build serves machines with and
 * without CUDA and libonyx itself needs no CUDA library. The plugin exports one function,
 * onyx_cuda_plugin, returning this table; ABI changes bump CUDA_PLUGIN_ABI. */
#ifndef ONYX_KERNELS_CUDA_PLUGIN_H
#define ONYX_KERNELS_CUDA_PLUGIN_H

#include <stddef.h>

#include "core/kernel.h"

#define CUDA_PLUGIN_ABI 2
#define CUDA_PLUGIN_SYMBOL "onyx_cuda_plugin"

typedef struct cuda_plugin {
    int abi; /* CUDA_PLUGIN_ABI of the build that made the plugin */
    /* Usable GPUs on this machine (0 without a driver or a device). */
    int (*device_count)(void);
    /* The CUDA kernel table. */
    const kernel *(*kernel_table)(size_t *count);
    /* Device memory of the current GPU (cudaMalloc, cudaMemcpy): the planner's arenas and copy
     * steps use it (core/device.h). */
    const device_ops *memory;
} cuda_plugin;

typedef const cuda_plugin *(*cuda_plugin_entry)(void);

#endif
