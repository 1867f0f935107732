/* Schema of Pow: base and exponent may have different types since opset 12; the result has the
 * base's type. */
#include "ops/elementwise/infer_elementwise.h"

#define POW_BASE (DT_FLOATS | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64))

static onyx_status pow_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 1));
    TRY(infer_dtype_in(c, 0, POW_BASE));
    if (c->node->version < 12) TRY(infer_same_dtypes(c, 0, 2));
    else TRY(infer_dtype_in(c, 1, DT_NUMERIC));
    return infer_ew_shape(c, c->in[0]->dtype);
}

static const attr_spec attrs_1[] = {{"axis", ATTR_INT}, {"broadcast", ATTR_INT}, {NULL, 0}};

const op_schema op_Pow[] = {{"", "Pow", 1, 2, 2, 1, 1, attrs_1, pow_infer, 0},
                            {"", "Pow", 7, 2, 2, 1, 1, NULL, pow_infer, 0},
                            {"", "Pow", 12, 2, 2, 1, 1, NULL, pow_infer, 0},
                            {"", "Pow", 13, 2, 2, 1, 1, NULL, pow_infer, 0},
                            {"", "Pow", 15, 2, 2, 1, 1, NULL, pow_infer, 0},
                            OP_END};
