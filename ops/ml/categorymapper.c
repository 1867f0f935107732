/* Schema of ai.onnx.ml CategoryMapper: strings → int64 or int64 → strings through the parallel
 * lists cats_strings / cats_int64s (unknown inputs to default_int64 / default_string). Same shape. */
#include "ops/ml/common.h"

static onyx_status categorymapper_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_STRING) | DT_BIT(ONYX_INT64)));
    size_t ni = attr_ints(c->node, "cats_int64s", NULL);
    const graph_attr *s = node_attr(c->node, "cats_strings");
    size_t ns = s ? s->n : 0;
    if (ni != ns)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "cats_int64s has %zu entries but cats_strings has %zu", ni, ns);
    TRY(infer_same_as_input(c, 0, 0));
    if (c->in[0]->dtype != ONYX_UNDEFINED)
        c->out[0].dtype = c->in[0]->dtype == ONYX_STRING ? ONYX_INT64 : ONYX_STRING;
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"cats_int64s", ATTR_INTS},     {"cats_strings", ATTR_STRINGS},
                                  {"default_int64", ATTR_INT},    {"default_string", ATTR_STRING},
                                  {NULL, 0}};

const op_schema op_CategoryMapper[] = {
    {ML_DOMAIN, "CategoryMapper", 1, 1, 1, 1, 1, attrs, categorymapper_infer, 0}, OP_END};
