/* Schemas of Min, Max, Mean and Sum: any number of same-typed inputs, broadcast together (equal
 * shapes before opset 8, which broadcasting accepts too), so one macro stamps all four. */
#include "ops/elementwise/infer_elementwise.h"

static onyx_status minmax_infer(infer_ctx *c) {
    return infer_ew_nary(c, c->node->version >= 12 ? DT_NUMERIC : DT_FLOATS, ONYX_UNDEFINED);
}
static onyx_status sum_infer(infer_ctx *c) { return infer_ew_nary(c, DT_FLOATS, ONYX_UNDEFINED); }

static const attr_spec attrs_1[] = {{"consumed_inputs", ATTR_INTS}, {NULL, 0}};

#define V(op, since, attrs, infer) {"", #op, since, 1, ONYX_VARIADIC, 1, 1, attrs, infer, 0}

const op_schema op_Min[] = {V(Min, 1, attrs_1, minmax_infer), V(Min, 6, NULL, minmax_infer),
                            V(Min, 8, NULL, minmax_infer), V(Min, 12, NULL, minmax_infer),
                            V(Min, 13, NULL, minmax_infer), OP_END};
const op_schema op_Max[] = {V(Max, 1, attrs_1, minmax_infer), V(Max, 6, NULL, minmax_infer),
                            V(Max, 8, NULL, minmax_infer), V(Max, 12, NULL, minmax_infer),
                            V(Max, 13, NULL, minmax_infer), OP_END};
const op_schema op_Mean[] = {V(Mean, 1, attrs_1, sum_infer), V(Mean, 6, NULL, sum_infer),
                             V(Mean, 8, NULL, sum_infer), V(Mean, 13, NULL, sum_infer), OP_END};
const op_schema op_Sum[] = {V(Sum, 1, attrs_1, sum_infer), V(Sum, 6, NULL, sum_infer),
                            V(Sum, 8, NULL, sum_infer), V(Sum, 13, NULL, sum_infer), OP_END};
