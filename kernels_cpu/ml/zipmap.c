/* CPU kernel of ai.onnx.ml ZipMap: one map (class label → score) per row of X, all made at once
 * (value_make_map_rows: one allocation for the batch, the labels stored once). */
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"

onyx_status cpu_zipmap_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    int64_t cols = x->rank ? x->dims[x->rank - 1] : 1, rows = cols ? x->numel / cols : 0;
    const graph_attr *s = node_attr(c->node, "classlabels_strings");
    bool strings = s && s->n;
    const int64_t *ints = NULL;
    int64_t labels = strings ? (int64_t)s->n : (int64_t)attr_ints(c->node, "classlabels_int64s", &ints);
    if (labels != cols)
        return onyx_error(ONYX_ERR_SHAPE, "X has %lld columns for %lld class labels", (long long)cols,
                          (long long)labels);
    /* the node's labels, borrowed as a tensor: value_make_map_rows copies them */
    tensor keys = {0};
    TRY(tensor_set_shape(&keys, strings ? ONYX_STRING : ONYX_INT64, 1, &labels));
    keys.data = strings ? (void *)s->strings : (void *)ints;
    void *values;
    TRY(value_make_map_rows(c->out[0], &keys, ONYX_FLOAT, rows, &values));
    if (rows && cols) memcpy(values, x->data, (size_t)(rows * cols) * sizeof(float));
    return ONYX_OK;
}
