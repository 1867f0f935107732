/* Schema of Range: start, limit, delta scalars of one numeric type give ceil((limit - start) /
 * delta) elements; v27 adds float16/bfloat16 with a stash_type for the arithmetic. */
#include "ops/shape_common.h"

static onyx_status range_infer(infer_ctx *c) {
    dtype_mask m = DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_INT16) |
                   DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64);
    if (c->node->version >= 27) m |= DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16);
    TRY(infer_dtype_in(c, 0, m));
    TRY(infer_same_dtypes(c, 0, 3));
    for (int i = 0; i < 3; i++) {
        TRY(infer_need_tensor(c, i));
        const type_info *t = c->in[i];
        if (t->rank > 1 || (t->rank == 1 && t->dims[0] >= 0 && t->dims[0] != 1))
            return onyx_error(ONYX_ERR_SHAPE, "input %d is not a scalar", i);
    }
    int64_t n = -1;
    if (ops_value(c, 0) && ops_value(c, 1) && ops_value(c, 2))
        TRY(ops_range_count(ops_value(c, 0), ops_value(c, 1), ops_value(c, 2), &n));
    if (c->node->version >= 27) {
        int64_t stash = attr_int(c->node, "stash_type", 1);
        if (stash != ONYX_FLOAT && stash != ONYX_DOUBLE)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "stash_type %lld is not float or double",
                              (long long)stash);
    }
    type_set_tensor(&c->out[0], c->in[0]->dtype, 1, &n);
    return ONYX_OK;
}

static const attr_spec attrs_27[] = {{"stash_type", ATTR_INT}, {NULL, 0}};

const op_schema op_Range[] = {{"", "Range", 11, 3, 3, 1, 1, NULL, range_infer, 0},
                              {"", "Range", 27, 3, 3, 1, 1, attrs_27, range_infer, 0},
                              OP_END};
