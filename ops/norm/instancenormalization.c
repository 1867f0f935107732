/* Schema of InstanceNormalization: x normalized per (instance, channel) over its spatial dims,
 * then scaled and shifted per channel. */
#include "ops/shape_common.h"

#define IN_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static onyx_status in_infer(infer_ctx *c) {
    dtype_mask m = IN_TYPES | (c->node->version >= 22 ? DT_BIT(ONYX_BFLOAT16) : 0);
    for (int i = 0; i < 3; i++) TRY(infer_dtype_in(c, i, m));
    TRY(infer_same_dtypes(c, 0, 3));
    const type_info *x = c->in[0];
    if (x->rank >= 0 && x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2 (N x C x ...)",
                          x->rank);
    for (int i = 1; i < 3; i++) {
        const type_info *p = c->in[i];
        if (p->rank < 0) continue;
        if (p->rank != 1)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected 1 ([C])", i, p->rank);
        if (x->rank >= 0 && x->dims[1] >= 0 && p->dims[0] >= 0 && p->dims[0] != x->dims[1])
            return onyx_error(ONYX_ERR_SHAPE, "input %d has %lld elements, expected C = %lld", i,
                              (long long)p->dims[0], (long long)x->dims[1]);
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs_1[] = {
    {"epsilon", ATTR_FLOAT}, {"consumed_inputs", ATTR_INTS}, {NULL, 0}};
static const attr_spec attrs_6[] = {{"epsilon", ATTR_FLOAT}, {NULL, 0}};

const op_schema op_InstanceNormalization[] = {
    {"", "InstanceNormalization", 1, 3, 3, 1, 1, attrs_1, in_infer, 0},
    {"", "InstanceNormalization", 6, 3, 3, 1, 1, attrs_6, in_infer, 0},
    {"", "InstanceNormalization", 22, 3, 3, 1, 1, attrs_6, in_infer, 0},
    OP_END,
};
