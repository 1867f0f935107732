/* Schema of EyeLike: a matrix of the input's shape (dtype attribute or the input's type) with
 * ones on diagonal k. */
#include "ops/shape_common.h"

static onyx_status eyelike_infer(infer_ctx *c) {
    dtype_mask m = DT_NUMERIC | DT_BIT(ONYX_BOOL);
    if (c->node->version < 22) m &= ~DT_BIT(ONYX_BFLOAT16);
    TRY(infer_dtype_in(c, 0, m));
    const type_info *x = c->in[0];
    if (x->rank >= 0 && x->rank != 2)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected 2", x->rank);
    onyx_dtype dt = x->dtype;
    if (node_attr(c->node, "dtype")) {
        int64_t d = attr_int(c->node, "dtype", 0);
        if (d != (int)d || !dtype_valid((int)d) || !dtype_in((onyx_dtype)d, m))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "dtype %lld is not a valid output type",
                              (long long)d);
        dt = (onyx_dtype)d;
    }
    type_set_tensor(&c->out[0], dt, 2, x->rank == 2 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"dtype", ATTR_INT}, {"k", ATTR_INT}, {NULL, 0}};

const op_schema op_EyeLike[] = {{"", "EyeLike", 9, 1, 1, 1, 1, attrs, eyelike_infer, 0},
                                {"", "EyeLike", 22, 1, 1, 1, 1, attrs, eyelike_infer, 0},
                                OP_END};
