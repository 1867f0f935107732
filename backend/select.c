/* Kernel selection in one device's table (the executor walks the session's devices in order). */
#include "backend/backend.h"

#include <string.h>

#include "kernels_cpu/cpu_kernels.h"


static const kernel *device_table(device_kind device, size_t *count) {
    switch (device) {
    case DEVICE_CPU: return cpu_kernel_table(count);
    case DEVICE_CUDA: return cuda_kernel_table(count);
    case DEVICE_TEST: return test_kernel_table(count);
    }
    *count = 0;
    return NULL;
}

static bool same_domain(const char *a, const char *b) {
    if (strcmp(a, "ai.onnx") == 0) a = "";
    if (strcmp(b, "ai.onnx") == 0) b = "";
    return strcmp(a, b) == 0;
}

/* The dtype that picks a kernel: input 0's (omitted or unknown: any). */
static onyx_dtype key_dtype(int n_in, const type_info *const *in_type) {
    if (n_in == 0 || !in_type[0]) return ONYX_UNDEFINED;
    const type_info *t = in_type[0];
    return t->kind == ONYX_VALUE_TENSOR ? t->dtype : ONYX_UNDEFINED;
}

static const kernel *find(const graph_node *node, onyx_dtype dtype, device_kind device,
                          bool any_dtype) {
    size_t count;
    const kernel *table = device_table(device, &count);
    for (size_t i = 0; i < count; i++) {
        const kernel *k = &table[i];
        if (strcmp(k->op_type, node->op_type) != 0 || !same_domain(k->domain, node->domain))
            continue;
        if (node->version < k->since_min || node->version > k->since_max) continue;
        if (!any_dtype && dtype != ONYX_UNDEFINED && k->dtypes && !dtype_in(dtype, k->dtypes))
            continue;
        return k;
    }
    return NULL;
}

const kernel *backend_select(const graph_node *node, int n_in, const type_info *const *in_type,
                             device_kind device) {
    onyx_dtype dtype = key_dtype(n_in, in_type);
    const kernel *k = find(node, dtype, device, false);
    if (k) return k;
    if (find(node, dtype, device, true))
        onyx_error(ONYX_ERR_UNSUPPORTED, "no %s kernel for %s input type %s", device_name(device),
                   node->op_type, onyx_dtype_name(dtype));
    else
        onyx_error(ONYX_ERR_UNSUPPORTED, "no %s kernel for op %s%s%s version %d",
                   device_name(device), node->domain, *node->domain ? "." : "", node->op_type,
                   node->version);
    return NULL;
}

bool backend_has_kernel(const graph_node *node, const exec_env *env) {
    for (int i = 0; i < env->n_priority; i++)
        if (find(node, ONYX_UNDEFINED, env->priority[i], true)) return true;
    return false;
}
