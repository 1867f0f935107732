/* The CUDA device's entry (core/device_registry.h): loads libonyx_cuda.so (kernels_cuda/plugin.h)
 * the first time CUDA is asked about. Looked for in $ONYX_CUDA_LIB, then beside the library or
 * program that holds this code, then on the loader's search path. Without it, or without a GPU,
 * CUDA is simply not usable. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/exec_frame.h"
#include "kernels_cuda/plugin.h"

#define PLUGIN_FILE "libonyx_cuda.so"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const cuda_plugin *loaded;
static int loaded_devices;

static onyx_status error_prefix_message(onyx_status status, const char *prefix) {
    return onyx_error_prefix(status, "%s", prefix);
}

/* What the plugin's kernels call of the core (kernels_cuda/host.c). */
static const cuda_host_api host_api = {
    .abi = CUDA_PLUGIN_ABI,
    .verror = onyx_verror,
    .error_prefix_message = error_prefix_message,
    .node_attr = node_attr,
    .attr_int = attr_int,
    .attr_float = attr_float,
    .attr_string = attr_string,
    .attr_ints = attr_ints,
    .attr_floats = attr_floats,
    .dtype_size = dtype_size,
    .kernel_scratch = kernel_scratch,
    .kernel_shared = kernel_shared,
    .kernel_check_run = kernel_check_run,
    .error_clear = onyx_error_clear,
    .read_ints = ops_read_ints,
    .transpose_perm = node_transpose_perm,
};

static const cuda_plugin *try_open(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return NULL;
    cuda_plugin_entry entry = (cuda_plugin_entry)dlsym(h, CUDA_PLUGIN_SYMBOL);
    const cuda_plugin *p = entry ? entry(&host_api) : NULL;
    if (!p || p->abi != CUDA_PLUGIN_ABI) {
        dlclose(h);
        return NULL;
    }
    return p; /* kept loaded for the life of the process */
}

static void load(void) {
    const cuda_plugin *p = NULL;
    const char *env = getenv("ONYX_CUDA_LIB");
    if (env && *env) p = try_open(env);
    Dl_info info;
    if (!p && dladdr((void *)&load, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        char path[PATH_MAX];
        if (slash && (size_t)(slash - info.dli_fname) + sizeof PLUGIN_FILE + 1 < sizeof path) {
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                     PLUGIN_FILE);
            p = try_open(path);
        }
    }
    if (!p) p = try_open(PLUGIN_FILE);
    if (p) {
        loaded = p;
        loaded_devices = p->device_count();
    }
}

static int cuda_device_count(void) {
    pthread_once(&once, load);
    return loaded_devices;
}

static const device_ops *cuda_device_ops(void) {
    pthread_once(&once, load);
    return loaded ? loaded->memory : NULL;
}

static const kernel *cuda_kernel_table(size_t *count) {
    pthread_once(&once, load);
    if (!loaded) {
        *count = 0;
        return NULL;
    }
    return loaded->kernel_table(count);
}

static bool cuda_usable(int index) { return index >= 0 && index < cuda_device_count(); }

static const device_ops *cuda_memory(int index) {
    return cuda_usable(index) ? cuda_device_ops() : NULL;
}

/* Loaded only when a session or a value asks for CUDA; float16 computes in float16 there. */
const device_entry cuda_device_entry = {
    .kind = DEVICE_CUDA,
    .name = "CUDA",
    .indexed = true,
    .on_demand = true,
    .usable = cuda_usable,
    .memory = cuda_memory,
    .kernels = cuda_kernel_table,
};
