/* Schema of LRN: local response normalization across channels (AlexNet, GoogLeNet). */
#include "ops/shape_common.h"

#define LRN_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static onyx_status lrn_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, LRN_TYPES | (c->node->version >= 13 ? DT_BIT(ONYX_BFLOAT16) : 0)));
    if (!node_attr(c->node, "size"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute size is missing");
    int64_t size = attr_int(c->node, "size", 0);
    if (size <= 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute size is %lld, expected > 0",
                          (long long)size);
    const type_info *x = c->in[0];
    if (x->rank >= 0 && x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2 (N x C x ...)",
                          x->rank);
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"alpha", ATTR_FLOAT},
                                  {"beta", ATTR_FLOAT},
                                  {"bias", ATTR_FLOAT},
                                  {"size", ATTR_INT},
                                  {NULL, 0}};

const op_schema op_LRN[] = {
    {"", "LRN", 1, 1, 1, 1, 1, attrs, lrn_infer, 0},
    {"", "LRN", 13, 1, 1, 1, 1, attrs, lrn_infer, 0},
    OP_END,
};
