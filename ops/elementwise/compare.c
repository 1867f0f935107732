/* Schemas of Equal, Less, LessOrEqual, Greater and GreaterOrEqual: two same-typed broadcast
 * inputs, a bool output, so one file stamps all five version lists. */
#include "ops/elementwise/infer_elementwise.h"

static onyx_status equal_infer(infer_ctx *c) {
    dtype_mask m = DT_NUMERIC | DT_BIT(ONYX_BOOL);
    if (c->node->version >= 19) m |= DT_BIT(ONYX_STRING);
    return infer_ew_nary(c, m, ONYX_BOOL);
}
static onyx_status order_infer(infer_ctx *c) { return infer_ew_nary(c, DT_NUMERIC, ONYX_BOOL); }

static const attr_spec attrs_1[] = {{"axis", ATTR_INT}, {"broadcast", ATTR_INT}, {NULL, 0}};

#define V(op, since, attrs, infer) {"", #op, since, 2, 2, 1, 1, attrs, infer, 0}

const op_schema op_Equal[] = {V(Equal, 1, attrs_1, equal_infer), V(Equal, 7, NULL, equal_infer),
                              V(Equal, 11, NULL, equal_infer), V(Equal, 13, NULL, equal_infer),
                              V(Equal, 19, NULL, equal_infer), OP_END};
const op_schema op_Less[] = {V(Less, 1, attrs_1, order_infer), V(Less, 7, NULL, order_infer),
                             V(Less, 9, NULL, order_infer), V(Less, 13, NULL, order_infer),
                             OP_END};
const op_schema op_Greater[] = {V(Greater, 1, attrs_1, order_infer),
                                V(Greater, 7, NULL, order_infer), V(Greater, 9, NULL, order_infer),
                                V(Greater, 13, NULL, order_infer), OP_END};
const op_schema op_LessOrEqual[] = {V(LessOrEqual, 12, NULL, order_infer),
                                    V(LessOrEqual, 16, NULL, order_infer), OP_END};
const op_schema op_GreaterOrEqual[] = {V(GreaterOrEqual, 12, NULL, order_infer),
                                       V(GreaterOrEqual, 16, NULL, order_infer), OP_END};
