/* Schemas of Softmax, LogSoftmax and Hardmax: the same versions, attribute and inference (v1 and
 * v11 coerce the input to 2-D at `axis`, v13 works along one axis), so one file stamps all three.
 * Their inference hands the axis to every device's kernel (core/op_params.h). */
#include "ops/schema.h"

#define SM_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static onyx_status softmax_infer(infer_ctx *c) {
    dtype_mask m = SM_TYPES | (c->node->version >= 13 ? DT_BIT(ONYX_BFLOAT16) : 0);
    TRY(infer_dtype_in(c, 0, m));
    int rank = c->in[0]->rank;
    if (rank >= 0) {
        int64_t dflt = c->node->version >= 13 ? -1 : 1;
        int axis;
        TRY(infer_kernel_axis(c, attr_int(c->node, "axis", dflt), rank, &axis));
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {NULL, 0}};

#define SOFTMAX_SCHEMA(op)                                                                         \
    const op_schema op_##op[] = {{"", #op, 1, 1, 1, 1, 1, attrs, softmax_infer, OP_GEOMETRY},      \
                                 {"", #op, 11, 1, 1, 1, 1, attrs, softmax_infer, OP_GEOMETRY},     \
                                 {"", #op, 13, 1, 1, 1, 1, attrs, softmax_infer, OP_GEOMETRY},     \
                                 OP_END};

SOFTMAX_SCHEMA(Softmax)
SOFTMAX_SCHEMA(LogSoftmax)
SOFTMAX_SCHEMA(Hardmax)
