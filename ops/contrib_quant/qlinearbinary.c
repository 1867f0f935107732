/* Schemas of com.microsoft QLinearAdd and QLinearMul: numpy-broadcast add / multiply of two
 * quantized tensors of one 8-bit type, requantized to C's per-tensor scale and zero point. */
#include "ops/contrib_quant/cq_infer.h"

static onyx_status qbin_infer(infer_ctx *c) {
    TRY(cq_infer_quantized(c, 0, ONYX_UNDEFINED, "A"));
    onyx_dtype t = c->in[0]->dtype;
    TRY(cq_infer_quantized(c, 3, t, "B"));
    if (t == ONYX_UNDEFINED) t = c->in[3]->dtype;
    TRY(cq_infer_scale(c, 1, "A_scale"));
    TRY(cq_infer_zero_point(c, 2, t, true, "A_zero_point"));
    TRY(cq_infer_scale(c, 4, "B_scale"));
    TRY(cq_infer_zero_point(c, 5, t, true, "B_zero_point"));
    TRY(cq_infer_scale(c, 6, "C_scale"));
    TRY(cq_infer_zero_point(c, 7, t, true, "C_zero_point"));
    /* A and B are inputs 0 and 3: broadcast them through a view holding only those two */
    const type_info *ab[2] = {c->in[0], c->in[3]};
    infer_ctx v = *c;
    v.in = ab;
    v.n_in = 2;
    v.in_value = NULL;
    int rank;
    int64_t dims[ONYX_MAX_RANK];
    onyx_status st = infer_broadcast(&v, 0, 2, &rank, dims);
    if (st != ONYX_OK) return onyx_error_prefix(st, "A and B (inputs 0 and 3)");
    type_set_tensor(&c->out[0], t, rank, rank >= 0 ? dims : NULL);
    return ONYX_OK;
}

const op_schema op_QLinearAdd[] = {
    {"com.microsoft", "QLinearAdd", 1, 7, 8, 1, 1, NULL, qbin_infer, 0},
    OP_END,
};

const op_schema op_QLinearMul[] = {
    {"com.microsoft", "QLinearMul", 1, 7, 8, 1, 1, NULL, qbin_infer, 0},
    OP_END,
};
