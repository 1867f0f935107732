/* Schemas of com.microsoft QLinearSigmoid, QLinearLeakyRelu and QLinearSoftmax: functions of one
 * quantized tensor requantized to Y's scale and zero point, keeping X's shape. */
#include "ops/contrib_quant/cq_infer.h"

static onyx_status qact_infer(infer_ctx *c) {
    TRY(cq_infer_quantized(c, 0, ONYX_UNDEFINED, "X"));
    onyx_dtype t = c->in[0]->dtype;
    TRY(cq_infer_scale(c, 1, "X_scale"));
    TRY(cq_infer_zero_point(c, 2, t, true, "X_zero_point"));
    TRY(cq_infer_scale(c, 3, "Y_scale"));
    TRY(cq_infer_zero_point(c, 4, t, true, "Y_zero_point"));
    return infer_same_as_input(c, 0, 0);
}

/* opset (required) picks the Softmax semantics: before 13 over the flattened dims [axis, rank)
 * (axis defaults to 1), from 13 along axis alone (default -1). */
static onyx_status qsoftmax_infer(infer_ctx *c) {
    TRY(qact_infer(c));
    if (!node_attr(c->node, "opset"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute opset is missing (it picks the "
                          "Softmax semantics of that opset)");
    int64_t opset = attr_int(c->node, "opset", 13);
    if (opset < 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute opset is %lld, expected >= 1",
                          (long long)opset);
    int rank = c->in[0]->rank;
    if (rank < 0) return ONYX_OK;
    if (rank == 0) return onyx_error(ONYX_ERR_SHAPE, "input 0 (X) is a scalar, expected rank >= 1");
    int axis;
    return infer_axis(c, attr_int(c->node, "axis", opset < 13 ? 1 : -1), rank, &axis);
}

static const attr_spec leaky_attrs[] = {{"alpha", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec softmax_attrs[] = {{"axis", ATTR_INT}, {"opset", ATTR_INT}, {NULL, 0}};

const op_schema op_QLinearSigmoid[] = {
    {"com.microsoft", "QLinearSigmoid", 1, 4, 5, 1, 1, NULL, qact_infer, 0},
    OP_END,
};

const op_schema op_QLinearLeakyRelu[] = {
    {"com.microsoft", "QLinearLeakyRelu", 1, 4, 5, 1, 1, leaky_attrs, qact_infer, 0},
    OP_END,
};

const op_schema op_QLinearSoftmax[] = {
    {"com.microsoft", "QLinearSoftmax", 1, 4, 5, 1, 1, softmax_attrs, qsoftmax_infer, 0},
    OP_END,
};
