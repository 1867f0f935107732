/* Schemas of the one-input math functions (Neg, Abs, Sqrt, Exp, trig, ...): each keeps its
 * input's type and shape and differs only in versions and allowed types, so one macro stamps
 * them all. */
#include "ops/elementwise/infer_elementwise.h"

static const attr_spec attrs_1[] = {{"consumed_inputs", ATTR_INTS}, {NULL, 0}};

/* The allowed input types, by kind: flt (float types), sgn (floats and signed ints), num (all). */
static onyx_status infer_flt(infer_ctx *c) { return infer_ew_unary(c, DT_FLOATS); }
static onyx_status infer_sgn(infer_ctx *c) { return infer_ew_unary(c, DT_FLOATS | DT_SINTS); }
static onyx_status infer_num(infer_ctx *c) { return infer_ew_unary(c, DT_NUMERIC); }

#define V(op, since, attrs, kind) {"", #op, since, 1, 1, 1, 1, attrs, infer_##kind, 0}

/* versions 1 (consumed_inputs), 6, 13 */
#define UNARY_1_6_13(op, kind)                                                                     \
    const op_schema op_##op[] = {V(op, 1, attrs_1, kind), V(op, 6, NULL, kind),                    \
                                 V(op, 13, NULL, kind), OP_END};
/* two versions without attributes */
#define UNARY_2(op, a, b, kind)                                                                    \
    const op_schema op_##op[] = {V(op, a, NULL, kind), V(op, b, NULL, kind), OP_END};

UNARY_1_6_13(Neg, sgn)
UNARY_1_6_13(Abs, num)
UNARY_1_6_13(Reciprocal, flt)
UNARY_1_6_13(Sqrt, flt)
UNARY_1_6_13(Exp, flt)
UNARY_1_6_13(Log, flt)
UNARY_1_6_13(Floor, flt)
UNARY_1_6_13(Ceil, flt)
UNARY_2(Round, 11, 22, flt)
UNARY_2(Sign, 9, 13, num)
/* Erf-9 also takes integers (computed in double, truncated back) */
UNARY_2(Erf, 9, 13, num)
UNARY_2(Sin, 7, 22, flt)
UNARY_2(Cos, 7, 22, flt)
UNARY_2(Tan, 7, 22, flt)
UNARY_2(Asin, 7, 22, flt)
UNARY_2(Acos, 7, 22, flt)
UNARY_2(Atan, 7, 22, flt)
UNARY_2(Sinh, 9, 22, flt)
UNARY_2(Cosh, 9, 22, flt)
UNARY_2(Asinh, 9, 22, flt)
UNARY_2(Acosh, 9, 22, flt)
UNARY_2(Atanh, 9, 22, flt)
