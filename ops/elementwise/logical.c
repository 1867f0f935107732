/* Schemas of And, Or, Xor (broadcast bool pairs) and Not: the same bool typing, one file. */
#include "ops/elementwise/infer_elementwise.h"

static onyx_status binary_infer(infer_ctx *c) {
    return infer_ew_nary(c, DT_BIT(ONYX_BOOL), ONYX_BOOL);
}
static onyx_status not_infer(infer_ctx *c) { return infer_ew_unary(c, DT_BIT(ONYX_BOOL)); }

static const attr_spec attrs_1[] = {{"axis", ATTR_INT}, {"broadcast", ATTR_INT}, {NULL, 0}};

#define V(op, since, attrs) {"", #op, since, 2, 2, 1, 1, attrs, binary_infer, 0}

const op_schema op_And[] = {V(And, 1, attrs_1), V(And, 7, NULL), OP_END};
const op_schema op_Or[] = {V(Or, 1, attrs_1), V(Or, 7, NULL), OP_END};
const op_schema op_Xor[] = {V(Xor, 1, attrs_1), V(Xor, 7, NULL), OP_END};
const op_schema op_Not[] = {{"", "Not", 1, 1, 1, 1, 1, NULL, not_infer, 0}, OP_END};
