/* Shared pieces of the ai.onnx.ml op schemas. */
#include "ops/ml/common.h"

onyx_status ml_rows_cols(const infer_ctx *c, int input, int64_t *rows, int64_t *cols) {
    const type_info *x = c->in[input];
    *rows = -1;
    *cols = -1;
    if (x->rank < 0) return ONYX_OK;
    if (x->rank > 2)
        return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected 1 ([C]) or 2 ([N, C])",
                          input, x->rank);
    if (x->rank == 0) return onyx_error(ONYX_ERR_SHAPE, "input %d is a scalar, expected [N, C]", input);
    *rows = x->rank == 2 ? x->dims[0] : 1;
    *cols = x->dims[x->rank - 1];
    return ONYX_OK;
}

onyx_status ml_class_labels(const graph_node *n, const char *ints, const char *strings,
                                int64_t *count, onyx_dtype *dt) {
    const graph_attr *i = node_attr(n, ints), *s = node_attr(n, strings);
    if ((i && i->n) && (s && s->n))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "both %s and %s are set", ints, strings);
    if (s && s->n) {
        *count = (int64_t)s->n;
        *dt = ONYX_STRING;
    } else if (i && i->n) {
        *count = (int64_t)i->n;
        *dt = ONYX_INT64;
    } else {
        return onyx_error(ONYX_ERR_INVALID_MODEL, "needs %s or %s", ints, strings);
    }
    return ONYX_OK;
}
