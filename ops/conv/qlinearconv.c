/* Schema of QLinearConv: an 8-bit convolution with zero points, scales and requantization. */
#include "ops/conv/conv.h"

static onyx_status qlinearconv_infer(infer_ctx *c) {
    geom_window g;
    TRY(conv_infer_quant(c, 3, ONYX_UNDEFINED, &g));
    onyx_dtype xt = c->in[0]->dtype;
    int64_t m = g.m >= 0 ? g.m : -1;
    TRY(conv_check_qparam(c, 1, "x_scale", DT_BIT(ONYX_FLOAT), 0));
    TRY(conv_check_qparam(c, 2, "x_zero_point", DT_BIT(xt), 0));
    TRY(conv_check_qparam(c, 4, "w_scale", DT_BIT(ONYX_FLOAT), m));
    TRY(conv_check_qparam(c, 5, "w_zero_point", DT_BIT(c->in[3]->dtype), m));
    TRY(conv_check_qparam(c, 6, "y_scale", DT_BIT(ONYX_FLOAT), 0));
    TRY(conv_check_qparam(c, 7, "y_zero_point", CONV_Q8, 0));
    for (int i = 1; i <= 7; i++)
        if (i != 3 && (i >= c->n_in || !c->in[i]))
            return onyx_error(ONYX_ERR_SHAPE, "input %d is missing", i);
    if (c->n_in > 8 && c->in[8]) {
        TRY(infer_need_tensor(c, 8));
        const type_info *b = c->in[8];
        if (b->dtype != ONYX_INT32)
            return onyx_error(ONYX_ERR_SHAPE, "B has type %s, expected int32",
                              onyx_dtype_name(b->dtype));
        if (b->rank >= 0 && (b->rank != 1 || (b->dims[0] >= 0 && m >= 0 && b->dims[0] != m)))
            return onyx_error(ONYX_ERR_SHAPE, "B must be 1-D with %lld values", (long long)m);
    }
    c->out[0].dtype = c->in[7]->dtype;
    return ONYX_OK;
}

static const attr_spec qconv_attrs[] = {
    {"auto_pad", ATTR_STRING}, {"dilations", ATTR_INTS}, {"group", ATTR_INT},
    {"kernel_shape", ATTR_INTS}, {"pads", ATTR_INTS}, {"strides", ATTR_INTS}, {NULL, 0}};

const op_schema op_QLinearConv[] = {
    {"", "QLinearConv", 10, 8, 9, 1, 1, qconv_attrs, qlinearconv_infer, OP_GEOMETRY},
    OP_END,
};
