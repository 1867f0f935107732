/* The interface between libonyx and its CUDA part, libonyx_cuda.so: the main library loads the
 * CUDA part at run time (backend/cuda_plugin.c), so that one build serves machines with and
 * without CUDA and libonyx itself needs no CUDA library. The plugin exports one function,
 * onyx_cuda_plugin, which takes the host's table of the core functions that kernels call (the
 * plugin's copies of those names forward to it: kernels_cuda/host.c) and returns the plugin's
 * table. ABI changes bump CUDA_PLUGIN_ABI. */
#ifndef ONYX_KERNELS_CUDA_PLUGIN_H
#define ONYX_KERNELS_CUDA_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>

#include "core/kernel.h"
#include "ops/shape_common.h"

#define CUDA_PLUGIN_ABI 7
#define CUDA_PLUGIN_SYMBOL "onyx_cuda_plugin"

/* What the plugin's kernels use of libonyx: errors go into the caller's thread-local message,
 * attributes are read as the core parses them, scratch and shared data come from the run
 * context and the rep, and a node's geometry is resolved by the host: conv and pool windows,
 * slices, pads, depth/space blocks, the products' batches, the axes of reductions,
 * softmaxes and normalizations and the attention geometry by the node's schema (or the fusion
 * pass) once per plan, handed to every device's
 * kernel (kernel_prep.params and kernel_call.params, core/op_params.h); permutations by the
 * host's own readers (ops/ over geometry/) called from here. The GPU runs a node with the very
 * shapes the CPU would. The plugin compiles geometry/ in as well, for the rules it applies to
 * plain dims (broadcasts, the movement ops' axes). */
typedef struct cuda_host_api {
    int abi;
    onyx_status (*verror)(onyx_status status, const char *fmt, va_list ap);
    onyx_status (*error_prefix_message)(onyx_status status, const char *prefix);
    const graph_attr *(*node_attr)(const graph_node *n, const char *name);
    int64_t (*attr_int)(const graph_node *n, const char *name, int64_t dflt);
    float (*attr_float)(const graph_node *n, const char *name, float dflt);
    const char *(*attr_string)(const graph_node *n, const char *name, const char *dflt);
    size_t (*attr_ints)(const graph_node *n, const char *name, const int64_t **out);
    size_t (*attr_floats)(const graph_node *n, const char *name, const float **out);
    size_t (*dtype_size)(onyx_dtype d);
    onyx_status (*kernel_scratch)(const kernel_call *c, size_t bytes, void **out);
    onyx_status (*kernel_shared)(const kernel_prep *p, const void *key, size_t key_size,
                                 onyx_status (*make)(void *ctx, void **obj),
                                 void (*release)(void *obj), void *ctx, void **out);
    onyx_status (*kernel_check_run)(const kernel_call *c, int64_t iterations);
    void (*error_clear)(void);
    onyx_status (*read_ints)(const tensor *t, int input, int64_t *out, size_t cap, size_t *n);
    onyx_status (*transpose_perm)(const graph_node *n, int rank, int64_t *perm);
} cuda_host_api;

typedef struct cuda_plugin {
    int abi; /* CUDA_PLUGIN_ABI of the build that made the plugin */
    /* Usable GPUs on this machine (0 without a driver or a device). */
    int (*device_count)(void);
    /* The CUDA kernel table. */
    const kernel *(*kernel_table)(size_t *count);
    /* Device memory, copies and queues (a stream with its cuBLAS and cuDNN handles per run
     * context) of the current GPU: core/device.h. */
    const device_ops *memory;
} cuda_plugin;

typedef const cuda_plugin *(*cuda_plugin_entry)(const cuda_host_api *host);

#endif
