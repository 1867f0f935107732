/* Schemas of CumSum and CumProd: the same inputs (x, axis), attributes (exclusive, reverse) and
 * inference, so one file holds both. */
#include "ops/schema.h"

#define CUM_TYPES_11 (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_INT32) |             \
                      DT_BIT(ONYX_INT64) | DT_BIT(ONYX_UINT32) | DT_BIT(ONYX_UINT64))
#define CUM_TYPES_14 (CUM_TYPES_11 | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))

static onyx_status cum_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, c->node->version >= 14 ? CUM_TYPES_14 : CUM_TYPES_11));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    const type_info *a = c->in[1];
    if (a->rank > 1 || (a->rank == 1 && a->dims[0] >= 0 && a->dims[0] != 1))
        return onyx_error(ONYX_ERR_SHAPE, "axis (input 1) must be a scalar or hold one element");
    const tensor *av = c->in_value[1];
    if (av && c->in[0]->rank >= 0) {
        if (av->numel != 1)
            return onyx_error(ONYX_ERR_SHAPE, "axis (input 1) has %lld elements, expected 1",
                              (long long)av->numel);
        int axis;
        TRY(infer_axis(c, tensor_get_i64(av, 0), c->in[0]->rank, &axis));
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"exclusive", ATTR_INT}, {"reverse", ATTR_INT}, {NULL, 0}};

const op_schema op_CumSum[] = {
    {"", "CumSum", 11, 2, 2, 1, 1, attrs, cum_infer, 0},
    {"", "CumSum", 14, 2, 2, 1, 1, attrs, cum_infer, 0},
    OP_END,
};

const op_schema op_CumProd[] = {
    {"", "CumProd", 26, 2, 2, 1, 1, attrs, cum_infer, 0},
    OP_END,
};
