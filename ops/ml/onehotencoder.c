/* Schema of ai.onnx.ml OneHotEncoder: X [..] of categories → float [.., number of categories]. */
#include "ops/ml/common.h"

static onyx_status ohe_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC | DT_BIT(ONYX_STRING)));
    const type_info *x = c->in[0];
    bool strings = x->dtype == ONYX_STRING;
    size_t n = strings ? node_attr(c->node, "cats_strings") ? node_attr(c->node, "cats_strings")->n : 0
                       : attr_ints(c->node, "cats_int64s", NULL);
    if (n == 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s input needs a non-empty cats_%s",
                          onyx_dtype_name(x->dtype), strings ? "strings" : "int64s");
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], ONYX_FLOAT, -1, NULL);
        return ONYX_OK;
    }
    if (x->rank + 1 > ONYX_MAX_RANK) return onyx_error(ONYX_ERR_SHAPE, "input rank %d too large", x->rank);
    int64_t dims[ONYX_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = x->dims[i];
    dims[x->rank] = (int64_t)n;
    type_set_tensor(&c->out[0], ONYX_FLOAT, x->rank + 1, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"cats_int64s", ATTR_INTS}, {"cats_strings", ATTR_STRINGS},
                                  {"zeros", ATTR_INT}, {NULL, 0}};

const op_schema op_OneHotEncoder[] = {
    {ML_DOMAIN, "OneHotEncoder", 1, 1, 1, 1, 1, attrs, ohe_infer, 0}, OP_END};
