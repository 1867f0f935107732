/* Schema of DynamicQuantizeLinear: uint8 quantization of a float tensor with the scale and zero
 * point computed from its range (which always includes 0). */
#include "ops/schema.h"

static onyx_status dql_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_FLOAT)));
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], ONYX_UINT8, x->rank, x->rank >= 0 ? x->dims : NULL);
    type_set_tensor(&c->out[1], ONYX_FLOAT, 0, NULL);
    type_set_tensor(&c->out[2], ONYX_UINT8, 0, NULL);
    return ONYX_OK;
}

const op_schema op_DynamicQuantizeLinear[] = {
    {"", "DynamicQuantizeLinear", 11, 1, 1, 3, 3, NULL, dql_infer, 0},
    OP_END,
};
