/* Schema of Compress: the slices (along axis, or of the flattened input) where a bool condition
 * is true; the selected count is known only with the condition's value. */
#include "ops/shape_common.h"

static onyx_status compress_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_BOOL)));
    const type_info *x = c->in[0], *cond = c->in[1];
    if (cond->rank > 1)
        return onyx_error(ONYX_ERR_SHAPE, "condition has rank %d, expected 1", cond->rank);
    int64_t count = -1;
    const tensor *cv = ops_value(c, 1);
    if (cv) {
        count = 0;
        for (int64_t i = 0; i < cv->numel; i++) count += ((const uint8_t *)cv->data)[i] != 0;
    }
    if (!node_attr(c->node, "axis")) {
        type_set_tensor(&c->out[0], x->dtype, 1, &count);
        return ONYX_OK;
    }
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        return ONYX_OK;
    }
    int axis;
    TRY(infer_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
    type_set_tensor(&c->out[0], x->dtype, x->rank, x->dims);
    c->out[0].dims[axis] = count;
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {NULL, 0}};

/* 28 only adds bfloat16 to the input types, which every version here already moves. */
const op_schema op_Compress[] = {{"", "Compress", 9, 2, 2, 1, 1, attrs, compress_infer, 0},
                                 {"", "Compress", 11, 2, 2, 1, 1, attrs, compress_infer, 0},
                                 {"", "Compress", 28, 2, 2, 1, 1, attrs, compress_infer, 0},
                                 OP_END};
