/* Schemas of IsInf and IsNaN: a float (or, since opset 20, float8) tensor in, a bool tensor of
 * the same shape out. */
#include "ops/elementwise/infer_elementwise.h"

#define CLASSIFY_TYPES (DT_FLOATS | DT_BIT(ONYX_FLOAT8E4M3FN) | DT_BIT(ONYX_FLOAT8E4M3FNUZ) |      \
                        DT_BIT(ONYX_FLOAT8E5M2) | DT_BIT(ONYX_FLOAT8E5M2FNUZ))

static onyx_status classify_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CLASSIFY_TYPES));
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], ONYX_BOOL, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec isinf_attrs[] = {
    {"detect_negative", ATTR_INT}, {"detect_positive", ATTR_INT}, {NULL, 0}};

const op_schema op_IsInf[] = {{"", "IsInf", 10, 1, 1, 1, 1, isinf_attrs, classify_infer, 0},
                              {"", "IsInf", 20, 1, 1, 1, 1, isinf_attrs, classify_infer, 0},
                              OP_END};

const op_schema op_IsNaN[] = {{"", "IsNaN", 9, 1, 1, 1, 1, NULL, classify_infer, 0},
                              {"", "IsNaN", 13, 1, 1, 1, 1, NULL, classify_infer, 0},
                              {"", "IsNaN", 20, 1, 1, 1, 1, NULL, classify_infer, 0},
                              OP_END};
