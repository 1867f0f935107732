/* Schemas of Add, Sub, Mul and Div: the same versions, attributes, types and broadcasting
 * inference, so one file stamps all four version lists. */
#include "ops/elementwise/infer_elementwise.h"

static onyx_status arith_infer(infer_ctx *c) {
    return infer_ew_nary(c, DT_NUMERIC, ONYX_UNDEFINED);
}

static const attr_spec attrs_1[] = {
    {"axis", ATTR_INT}, {"broadcast", ATTR_INT}, {"consumed_inputs", ATTR_INTS}, {NULL, 0}};
static const attr_spec attrs_6[] = {{"axis", ATTR_INT}, {"broadcast", ATTR_INT}, {NULL, 0}};

#define ARITH_SCHEMA(op)                                                                           \
    const op_schema op_##op[] = {{"", #op, 1, 2, 2, 1, 1, attrs_1, arith_infer, 0},                \
                                 {"", #op, 6, 2, 2, 1, 1, attrs_6, arith_infer, 0},                \
                                 {"", #op, 7, 2, 2, 1, 1, NULL, arith_infer, 0},                   \
                                 {"", #op, 13, 2, 2, 1, 1, NULL, arith_infer, 0},                  \
                                 {"", #op, 14, 2, 2, 1, 1, NULL, arith_infer, 0},                  \
                                 OP_END};

ARITH_SCHEMA(Add)
ARITH_SCHEMA(Sub)
ARITH_SCHEMA(Mul)
ARITH_SCHEMA(Div)
