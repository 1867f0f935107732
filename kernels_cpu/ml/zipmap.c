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
    const int64_t *ints = NULL;
    if (!strings) attr_ints(n, "classlabels_int64s", &ints);
    onyx_value *v = value_new();
    if (!v) return onyx_oom("ZipMap keys");
    onyx_status st = value_alloc_tensor(v, strings ? ONYX_STRING : ONYX_INT64, 1, &count);
    if (st == ONYX_OK && !strings && count) memcpy(v->t.data, ints, (size_t)count * sizeof *ints);
    for (int64_t k = 0; st == ONYX_OK && strings && k < count; k++)
        st = tensor_set_string(&v->t, k, s->strings[k], strlen(s->strings[k]));
    if (st != ONYX_OK) {
        free_value(v);
        return st;
    }
    *out = v;
    return ONYX_OK;
}

/* One row of X as a map appended to y. Its keys are a copy of *keys, or with `take` *keys itself
 * (then *keys becomes NULL once the map has it, whatever follows). */
static onyx_status push_row(onyx_value *y, onyx_value **keys, bool take, const float *row,
                            int64_t cols) {
    onyx_value *own_keys = take ? *keys : value_new(), *values = value_new(), *map = value_new();
    onyx_status st = own_keys && values && map ? ONYX_OK : onyx_oom("ZipMap map");
    if (st == ONYX_OK && !take) {
        st = tensor_copy(&own_keys->t, &(*keys)->t);
        if (st == ONYX_OK) own_keys->kind = ONYX_VALUE_TENSOR;
    }
    if (st == ONYX_OK) st = value_alloc_tensor(values, ONYX_FLOAT, 1, &cols);
    if (st == ONYX_OK) {
        if (cols) memcpy(values->t.data, row, (size_t)cols * sizeof(float));
        st = value_make_map(map, own_keys, values);
    }
    if (st == ONYX_OK) {
        if (take) *keys = NULL;
        own_keys = values = NULL; /* the map has them */
        st = value_seq_push(y, map);
    }
    if (st != ONYX_OK) {
        if (!take) free_value(own_keys);
        free_value(values);
        free_value(map);
    }
    return st;
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
    if (!rows) return ONYX_OK;
    onyx_value *keys = NULL;
    TRY(value_seq_reserve(y, (size_t)rows));
    /* made once: the rows' maps copy it, the last one takes it */
    TRY(label_keys(c->node, cols, &keys));
    onyx_status st = ONYX_OK;
    for (int64_t r = 0; r < rows && st == ONYX_OK; r++)
        st = push_row(y, &keys, r == rows - 1, (const float *)x->data + r * cols, cols);
    free_value(keys); /* NULL once the last row's map has it */
    return st;
}
