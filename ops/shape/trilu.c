/* Schema of Trilu: the upper or lower triangle (offset by k) of each matrix of the input. */
#include "ops/shape_common.h"

static onyx_status trilu_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    if (c->in[0]->rank >= 0 && c->in[0]->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected >= 2", c->in[0]->rank);
    if (ops_has_input(c, 1)) {
        TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
        if (c->in[1]->rank > 0)
            return onyx_error(ONYX_ERR_SHAPE, "k has rank %d, expected a scalar", c->in[1]->rank);
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"upper", ATTR_INT}, {NULL, 0}};

const op_schema op_Trilu[] = {{"", "Trilu", 14, 1, 2, 1, 1, attrs, trilu_infer, 0}, OP_END};
