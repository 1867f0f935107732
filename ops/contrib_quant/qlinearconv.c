/* Schema of com.microsoft QLinearConv: ONNX's QLinearConv whose X and Y may be NHWC
 * (channels_last), as onnxruntime's NHWC transformer writes it; W stays [M, C/group, k...]. */
#include "ops/conv/conv.h"
#include "ops/contrib_quant/cq_infer.h"

/* dims [N, spatial..., C] as [N, C, spatial...] (to_nchw) or back */
static void move_channels(int rank, const int64_t *in, int64_t *out, bool to_nchw) {
    out[0] = in[0];
    if (to_nchw) {
        out[1] = in[rank - 1];
        for (int i = 1; i < rank - 1; i++) out[i + 1] = in[i];
    } else {
        out[rank - 1] = in[1];
        for (int i = 2; i < rank; i++) out[i - 1] = in[i];
    }
}

static onyx_status qconv_infer(infer_ctx *c) {
    for (int i = 0; i <= 7; i++)
        if (!cq_has(c, i))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d is required", i);
    TRY(cq_infer_quantized(c, 0, ONYX_UNDEFINED, "x"));
    TRY(cq_infer_quantized(c, 3, ONYX_UNDEFINED, "w"));
    int64_t cl = attr_int(c->node, "channels_last", 0);
    if (cl != 0 && cl != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute channels_last is %lld, expected 0 "
                          "or 1", (long long)cl);
    const type_info *x = c->in[0], *w = c->in[3];
    onyx_dtype yt = c->in[7]->dtype;
    if (x->rank < 0 || w->rank < 0) {
        type_set_tensor(&c->out[0], yt, x->rank >= 0 ? x->rank : w->rank, NULL);
    } else {
        if (x->rank < 3)
            return onyx_error(ONYX_ERR_SHAPE, "input 0 (x) has rank %d, expected at least 3",
                              x->rank);
        int64_t xd[ONYX_MAX_RANK], yd[ONYX_MAX_RANK], out[ONYX_MAX_RANK];
        if (cl) move_channels(x->rank, x->dims, xd, true);
        else for (int i = 0; i < x->rank; i++) xd[i] = x->dims[i];
        geom_window g;
        TRY(conv_geometry(c->node, false, x->rank, xd, w->rank, w->dims, &g));
        geom_window_out_dims(&g, yd);
        infer_set_window(c, &g); /* X's dims in NCHW order, whatever its layout */
        if (cl) move_channels(g.nsp + 2, yd, out, false);
        else for (int i = 0; i < g.nsp + 2; i++) out[i] = yd[i];
        type_set_tensor(&c->out[0], yt, g.nsp + 2, out);
    }
    int64_t m = w->rank >= 1 ? w->dims[0] : -1;
    TRY(cq_infer_scale(c, 1, "x_scale"));
    TRY(cq_infer_zero_point(c, 2, x->dtype, false, "x_zero_point"));
    TRY(conv_check_qparam(c, 4, "w_scale", DT_BIT(ONYX_FLOAT), m));
    TRY(conv_check_qparam(c, 5, "w_zero_point",
                          w->dtype != ONYX_UNDEFINED ? DT_BIT(w->dtype) : CQ_T8, m));
    TRY(cq_infer_scale(c, 6, "y_scale"));
    TRY(cq_infer_zero_point(c, 7, x->dtype, false, "y_zero_point"));
    if (cq_has(c, 8)) {
        TRY(infer_dtype_in(c, 8, DT_BIT(ONYX_INT32)));
        const type_info *b = c->in[8];
        if (b->rank >= 0 && (b->rank != 1 || (b->dims[0] >= 0 && m >= 0 && b->dims[0] != m)))
            return onyx_error(ONYX_ERR_SHAPE, "input 8 (B) must be 1-D with M = %lld values",
                              (long long)m);
    }
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"auto_pad", ATTR_STRING}, {"dilations", ATTR_INTS}, {"group", ATTR_INT},
    {"kernel_shape", ATTR_INTS}, {"pads", ATTR_INTS}, {"strides", ATTR_INTS},
    {"channels_last", ATTR_INT}, {NULL, 0}};

/* named apart from ai.onnx's op_QLinearConv; the registry matches on domain and op_type */
const op_schema op_MsQLinearConv[] = {
    {"com.microsoft", "QLinearConv", 1, 8, 9, 1, 1, attrs, qconv_infer, OP_GEOMETRY},
    OP_END,
};
