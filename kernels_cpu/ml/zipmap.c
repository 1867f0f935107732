/* CPU kernel of ai.onnx.ml ZipMap: one map (class label → score) per row of X. */
#include <string.h>

#include <stdlib.h>

#include "kernels_cpu/cpu_kernels.h"

static void free_value(onyx_value *v) {
    if (!v) return;
    value_clear(v);
    free(v);
}

/* A new 1-D tensor value holding the node's class labels. */
static onyx_status label_keys(const graph_node *n, int64_t count, onyx_value **out) {
    const graph_attr *s = node_attr(n, "classlabels_strings");
    bool strings = s && s->n;
    onyx_value *v = value_new();
    if (!v) return onyx_oom("ZipMap keys");
    onyx_status st = value_alloc_tensor(v, strings ? ONYX_STRING : ONYX_INT64, 1, &count);
    for (int64_t k = 0; st == ONYX_OK && k < count; k++) {
        if (strings) {
            st = tensor_set_string(&v->t, k, s->strings[k], strlen(s->strings[k]));
        } else {
            const int64_t *ints;
            attr_ints(n, "classlabels_int64s", &ints);
            ((int64_t *)v->t.data)[k] = ints[k];
        }
    }
    if (st != ONYX_OK) {
        free_value(v);
        return st;
    }
    *out = v;
    return ONYX_OK;
}

onyx_status cpu_zipmap_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    onyx_value *y = c->out[0];
    int64_t cols = x->rank ? x->dims[x->rank - 1] : 1, rows = cols ? x->numel / cols : 0;
    const graph_attr *s = node_attr(c->node, "classlabels_strings");
    int64_t labels = s && s->n ? (int64_t)s->n : (int64_t)attr_ints(c->node, "classlabels_int64s", NULL);
    if (labels != cols)
        return onyx_error(ONYX_ERR_SHAPE, "X has %lld columns for %lld class labels", (long long)cols,
                          (long long)labels);
    TRY(value_make_sequence(y, NULL));
    for (int64_t r = 0; r < rows; r++) {
        onyx_value *keys = NULL, *values = value_new(), *map = value_new();
        onyx_status st = values && map ? label_keys(c->node, cols, &keys) : onyx_oom("ZipMap map");
        if (st == ONYX_OK) st = value_alloc_tensor(values, ONYX_FLOAT, 1, &cols);
        if (st == ONYX_OK) {
            memcpy(values->t.data, (const float *)x->data + r * cols, (size_t)cols * sizeof(float));
            st = value_make_map(map, keys, values);
        }
        if (st == ONYX_OK) {
            keys = values = NULL; /* the map has them */
            st = value_seq_push(y, map);
        }
        if (st != ONYX_OK) {
            free_value(keys);
            free_value(values);
            free_value(map);
            return st;
        }
    }
    return ONYX_OK;
}
