/* Schema of com.microsoft QLinearWhere: Where(condition, X, Y) of two quantized tensors, each
 * requantized to Z's scale and zero point, broadcast numpy-style over the three. */
#include "ops/contrib_quant/cq_infer.h"

static onyx_status qwhere_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_BOOL)));
    TRY(cq_infer_zero_point(c, 8, ONYX_UNDEFINED, false, "z_zero_point"));
    onyx_dtype t = c->in[8]->dtype;
    TRY(cq_infer_quantized(c, 1, t, "X"));
    TRY(cq_infer_scale(c, 2, "x_scale"));
    TRY(cq_infer_zero_point(c, 3, t, false, "x_zero_point"));
    TRY(cq_infer_quantized(c, 4, t, "Y"));
    TRY(cq_infer_scale(c, 5, "y_scale"));
    TRY(cq_infer_zero_point(c, 6, t, false, "y_zero_point"));
    TRY(cq_infer_scale(c, 7, "z_scale"));
    const type_info *v3[3] = {c->in[0], c->in[1], c->in[4]};
    infer_ctx v = *c;
    v.in = v3;
    v.n_in = 3;
    v.in_value = NULL;
    int rank;
    int64_t dims[ONYX_MAX_RANK];
    onyx_status st = infer_broadcast(&v, 0, 3, &rank, dims);
    if (st != ONYX_OK) return onyx_error_prefix(st, "condition, X and Y (inputs 0, 1 and 4)");
    type_set_tensor(&c->out[0], t, rank, rank >= 0 ? dims : NULL);
    return ONYX_OK;
}

const op_schema op_QLinearWhere[] = {
    {"com.microsoft", "QLinearWhere", 1, 9, 9, 1, 1, NULL, qwhere_infer, 0},
    OP_END,
};
