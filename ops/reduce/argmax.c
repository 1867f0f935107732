/* Schemas of ArgMax and ArgMin: the same attributes, types and inference, so one file stamps
 * both version lists. Their inference hands the axis to every device's kernel
 * (core/op_params.h). */
#include "ops/schema.h"

#define ARG_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) | DT_INTS)

static onyx_status arg_infer(infer_ctx *c) {
    dtype_mask m = ARG_TYPES | (c->node->version >= 13 ? DT_BIT(ONYX_BFLOAT16) : 0);
    TRY(infer_dtype_in(c, 0, m));
    const type_info *x = c->in[0];
    bool keep = attr_int(c->node, "keepdims", 1) != 0;
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], ONYX_INT64, -1, NULL);
        return ONYX_OK;
    }
    if (x->rank == 0)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 is a scalar, expected rank >= 1");
    /* v1 takes no negative axis, but accepting one is harmless */
    int axis;
    TRY(infer_kernel_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
    int64_t dims[ONYX_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != axis) dims[r++] = x->dims[i];
        else if (keep) dims[r++] = 1;
    }
    type_set_tensor(&c->out[0], ONYX_INT64, r, dims);
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {{"axis", ATTR_INT}, {"keepdims", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_12[] = {
    {"axis", ATTR_INT}, {"keepdims", ATTR_INT}, {"select_last_index", ATTR_INT}, {NULL, 0}};

#define ARG_SCHEMA(op)                                                                             \
    const op_schema op_##op[] = {{"", #op, 1, 1, 1, 1, 1, attrs_1, arg_infer, OP_GEOMETRY},        \
                                 {"", #op, 11, 1, 1, 1, 1, attrs_1, arg_infer, OP_GEOMETRY},       \
                                 {"", #op, 12, 1, 1, 1, 1, attrs_12, arg_infer, OP_GEOMETRY},      \
                                 {"", #op, 13, 1, 1, 1, 1, attrs_12, arg_infer, OP_GEOMETRY},      \
                                 OP_END};

ARG_SCHEMA(ArgMax)
ARG_SCHEMA(ArgMin)
