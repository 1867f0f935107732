/* Schema of Upsample (v1 height/width scales, v7 scales attribute, v9 scales input; deprecated
 * in v10 in favour of Resize). The plan it computes with is Resize's (ops/signal/resize.c). */
#include "ops/signal/signal_common.h"

static onyx_status upsample_infer(infer_ctx *c) {
    if (c->node->version >= 10)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "Upsample is deprecated from opset 10 on; the model should use Resize");
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    const tensor *scales = NULL;
    if (c->node->version >= 9) {
        TRY(infer_need_tensor(c, 1));
        TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_FLOAT)));
        scales = c->in_value ? c->in_value[1] : NULL;
        if (!scales) {
            type_set_tensor(&c->out[0], x->dtype, x->rank, NULL);
            return ONYX_OK;
        }
    }
    if (x->rank < 0) {
        ops_resize_plan p;
        TRY(ops_resize_attrs(c->node, &p));
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        return ONYX_OK;
    }
    ops_resize_plan p;
    TRY(ops_resize_plan_make(c->node, x->rank, x->dims, NULL, scales, NULL, &p));
    type_set_tensor(&c->out[0], x->dtype, x->rank, p.out_dims);
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {
    {"mode", ATTR_STRING}, {"height_scale", ATTR_FLOAT}, {"width_scale", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs_7[] = {{"mode", ATTR_STRING}, {"scales", ATTR_FLOATS}, {NULL, 0}};
static const attr_spec attrs_9[] = {{"mode", ATTR_STRING}, {NULL, 0}};

const op_schema op_Upsample[] = {{"", "Upsample", 1, 1, 1, 1, 1, attrs_1, upsample_infer, 0},
                                 {"", "Upsample", 7, 1, 1, 1, 1, attrs_7, upsample_infer, 0},
                                 {"", "Upsample", 9, 2, 2, 1, 1, attrs_9, upsample_infer, 0},
                                 {"", "Upsample", 10, 2, 2, 1, 1, attrs_9, upsample_infer, 0},
                                 OP_END};
