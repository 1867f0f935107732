/* Schema of LpNormalization: x divided by its L1 or L2 norm along one axis (handed to the
 * kernels, core/op_params.h). */
#include "ops/schema.h"

#define LP_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static onyx_status lp_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, LP_TYPES | (c->node->version >= 22 ? DT_BIT(ONYX_BFLOAT16) : 0)));
    int64_t p = attr_int(c->node, "p", 2);
    if (p != 1 && p != 2)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute p is %lld, expected 1 or 2",
                          (long long)p);
    if (c->in[0]->rank >= 0) {
        int axis;
        TRY(infer_kernel_axis(c, attr_int(c->node, "axis", -1), c->in[0]->rank, &axis));
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {"p", ATTR_INT}, {NULL, 0}};

const op_schema op_LpNormalization[] = {
    {"", "LpNormalization", 1, 1, 1, 1, 1, attrs, lp_infer, OP_GEOMETRY},
    {"", "LpNormalization", 22, 1, 1, 1, 1, attrs, lp_infer, OP_GEOMETRY},
    OP_END,
};
