/* The core functions that CUDA kernels call, and the host's geometry readers (ops/ over
 * geometry/), as the plugin's own symbols: each forwards to libonyx through the host table given
 * at load (kernels_cuda/plugin.h), so that kernels are written against the core's and ops'
 * headers as the CPU's are, resolve a node's geometry as the CPU does, and errors land in the
 * caller's thread-local message. */
#include <stdarg.h>
#include <stdio.h>

#include "core/exec_frame.h"
#include "core/exec_run.h"
#include "core/kernel.h"
#include "kernels_cuda/cuda_kernels.h"
#include "kernels_cuda/plugin.h"

static const cuda_host_api *host;

bool cuda_host_set(const cuda_host_api *api) {
    if (!api || api->abi != CUDA_PLUGIN_ABI) return false;
    host = api;
    return true;
}

onyx_status onyx_verror(onyx_status status, const char *fmt, va_list ap) {
    return host->verror(status, fmt, ap);
}

onyx_status onyx_error(onyx_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    host->verror(status, fmt, ap);
    va_end(ap);
    return status;
}

onyx_status onyx_error_prefix(onyx_status status, const char *fmt, ...) {
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    return host->error_prefix_message(status, prefix);
}

onyx_status onyx_oom(const char *what) {
    return onyx_error(ONYX_ERR_NO_MEMORY, "out of memory allocating %s", what);
}

const graph_attr *node_attr(const graph_node *n, const char *name) {
    return host->node_attr(n, name);
}

int64_t attr_int(const graph_node *n, const char *name, int64_t dflt) {
    return host->attr_int(n, name, dflt);
}

float attr_float(const graph_node *n, const char *name, float dflt) {
    return host->attr_float(n, name, dflt);
}

const char *attr_string(const graph_node *n, const char *name, const char *dflt) {
    return host->attr_string(n, name, dflt);
}

size_t attr_ints(const graph_node *n, const char *name, const int64_t **out) {
    return host->attr_ints(n, name, out);
}

size_t attr_floats(const graph_node *n, const char *name, const float **out) {
    return host->attr_floats(n, name, out);
}

size_t dtype_size(onyx_dtype d) { return host->dtype_size(d); }

onyx_status kernel_scratch(const kernel_call *c, size_t bytes, void **out) {
    return host->kernel_scratch(c, bytes, out);
}

onyx_status kernel_shared(const kernel_prep *p, const void *key, size_t key_size,
                          onyx_status (*make)(void *ctx, void **obj), void (*release)(void *obj),
                          void *ctx, void **out) {
    return host->kernel_shared(p, key, key_size, make, release, ctx, out);
}

onyx_status kernel_check_run(const kernel_call *c, int64_t iterations) {
    return host->kernel_check_run(c, iterations);
}

void onyx_error_clear(void) { host->error_clear(); }

/* ---- the host's geometry readers (ops/ over geometry/) */

onyx_status ops_read_ints(const tensor *t, int input, int64_t *out, size_t cap, size_t *n) {
    return host->read_ints(t, input, out, cap, n);
}

onyx_status node_transpose_perm(const graph_node *n, int rank, int64_t *perm) {
    return host->transpose_perm(n, rank, perm);
}
