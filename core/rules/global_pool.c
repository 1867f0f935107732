/* Global average pooling written as a mean (torch.onnx's dynamo exporter: aten.mean over H, W):
 *   ReduceMean(x, all axes after 1, keepdims) -> GlobalAveragePool
 * x float, of a rank inference knows; the pooling then stays in the convolutions' opaque layout
 * (core/fuse.c). */
#include "core/rules/rules.h"

/* Whether ReduceMean node n averages its float input over every axis after 1, keeping them. */
static bool spatial_mean(const rewriter *r, const graph_node *n) {
    if (!r->types || n->n_inputs < 1 || n->inputs[0] < 0 || n->n_outputs != 1 ||
        attr_int(n, "keepdims", 1) != 1)
        return false;
    const type_info *t = &r->types[n->inputs[0]];
    if (t->kind != ONYX_VALUE_TENSOR || !dtype_is_float(t->dtype) || t->rank < 3 ||
        t->rank > ONYX_MAX_RANK)
        return false;
    const int64_t *axes;
    int64_t n_axes = rw_reduce_axes(r, n, &axes);
    if (n_axes != t->rank - 2) return false;
    bool seen[ONYX_MAX_RANK] = {false};
    for (int64_t i = 0; i < n_axes; i++) {
        int64_t ax = axes[i] < 0 ? axes[i] + t->rank : axes[i];
        if (ax < 2 || ax >= t->rank || seen[ax]) return false;
        seen[ax] = true;
    }
    return true;
}

onyx_status rule_global_average_pool(rewriter *r, const graph_node *mean) {
    TRY(rw_need_types(r));
    if (!spatial_mean(r, mean)) return ONYX_OK;
    const graph_node *members[] = {mean};
    int x = mean->inputs[0];
    return rw_place(r, mean, members, 1, "GlobalAveragePool", 1, &x, 1, mean->outputs[0], NULL, 0);
}
