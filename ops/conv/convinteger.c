/* Schema of ConvInteger, and the checks of quantized convolution inputs that QLinearConv shares. */
#include "ops/conv/conv.h"

/* A zero point or scale: a scalar or a 1-D tensor of one value, or (per output channel, when
 * `per_channel` > 0) of that many values. */
onyx_status conv_check_qparam(infer_ctx *c, int i, const char *what, dtype_mask types,
                                int64_t per_channel) {
    if (i >= c->n_in || !c->in[i]) return ONYX_OK;
    TRY(infer_need_tensor(c, i));
    const type_info *t = c->in[i];
    if (!dtype_in(t->dtype, types))
        return onyx_error(ONYX_ERR_SHAPE, "%s (input %d) has type %s, which is not allowed", what,
                          i, onyx_dtype_name(t->dtype));
    if (t->rank > 1)
        return onyx_error(ONYX_ERR_SHAPE, "%s (input %d) has rank %d, expected a scalar or 1-D",
                          what, i, t->rank);
    if (t->rank == 1 && t->dims[0] >= 0 && t->dims[0] != 1 &&
        (per_channel == 0 || (per_channel > 0 && t->dims[0] != per_channel)))
        return onyx_error(ONYX_ERR_SHAPE, "%s (input %d) has %lld values, expected 1%s", what, i,
                          (long long)t->dims[0], per_channel ? " or one per output channel" : "");
    return ONYX_OK;
}

/* Geometry from x (input 0) and w (input w_index), handed to the kernels; writes Y's type with
 * dtype `out`. */
onyx_status conv_infer_quant(infer_ctx *c, int w_index, onyx_dtype out, geom_window *g) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_need_tensor(c, w_index));
    TRY(infer_dtype_in(c, 0, CONV_Q8));
    TRY(infer_dtype_in(c, w_index, CONV_Q8));
    const type_info *x = c->in[0], *w = c->in[w_index];
    TRY(conv_geometry(c->node, false, x->rank, x->dims, w->rank, w->dims, g));
    int64_t dims[ONYX_MAX_RANK];
    geom_window_out_dims(g, dims);
    type_set_tensor(&c->out[0], out, g->nsp + 2, dims);
    infer_set_window(c, g);
    return ONYX_OK;
}

static onyx_status convinteger_infer(infer_ctx *c) {
    geom_window g;
    TRY(conv_infer_quant(c, 1, ONYX_INT32, &g));
    TRY(conv_check_qparam(c, 2, "x_zero_point", DT_BIT(c->in[0]->dtype), 0));
    return conv_check_qparam(c, 3, "w_zero_point", DT_BIT(c->in[1]->dtype), g.m >= 0 ? g.m : -1);
}

static const attr_spec qconv_attrs[] = {
    {"auto_pad", ATTR_STRING}, {"dilations", ATTR_INTS}, {"group", ATTR_INT},
    {"kernel_shape", ATTR_INTS}, {"pads", ATTR_INTS}, {"strides", ATTR_INTS}, {NULL, 0}};

const op_schema op_ConvInteger[] = {
    {"", "ConvInteger", 10, 2, 4, 1, 1, qconv_attrs, convinteger_infer, OP_GEOMETRY},
    OP_END,
};
