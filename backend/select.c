/* Kernel selection: walk the requested device's table, then fall back to the CPU's. */
#include "backend/backend.h"

#include <string.h>

#include "kernels_cpu/cpu_kernels.h"

#ifdef ONYX_WITH_CUDA
const kernel *cuda_kernel_table(size_t *count);
#endif

static const kernel *device_table(device_kind device, size_t *count) {
#ifdef ONYX_WITH_CUDA
    if (device == DEVICE_CUDA) return cuda_kernel_table(count);
#endif
    if (device == DEVICE_CPU) return cpu_kernel_table(count);
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
    if (!k && device != DEVICE_CPU) k = find(node, dtype, DEVICE_CPU, false);
    if (k) return k;
    if (find(node, dtype, DEVICE_CPU, true))
        onyx_error(ONYX_ERR_UNSUPPORTED, "no kernel for %s input type %s", node->op_type,
                   onyx_dtype_name(dtype));
    else
        onyx_error(ONYX_ERR_UNSUPPORTED, "no kernel for op %s%s%s version %d", node->domain,
                   *node->domain ? "." : "", node->op_type, node->version);
    return NULL;
}

bool backend_has_kernel(const graph_node *node, device_kind device) {
    return find(node, ONYX_UNDEFINED, device, true) || find(node, ONYX_UNDEFINED, DEVICE_CPU, true);
}
