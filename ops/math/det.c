/* Schema of Det: determinants of the square matrices in the last two dims ([..., M, M] to
 * [...]). */
#include "ops/schema.h"

static onyx_status det_infer(infer_ctx *c) {
    dtype_mask m = DT_FLOATS;
    if (c->node->version < 22) m &= ~DT_BIT(ONYX_BFLOAT16);
    TRY(infer_dtype_in(c, 0, m));
    const type_info *x = c->in[0];
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        return ONYX_OK;
    }
    if (x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected at least 2", x->rank);
    int64_t a = x->dims[x->rank - 2], b = x->dims[x->rank - 1];
    if (a >= 0 && b >= 0 && a != b)
        return onyx_error(ONYX_ERR_SHAPE, "matrices are %lldx%lld, expected square", (long long)a,
                          (long long)b);
    type_set_tensor(&c->out[0], x->dtype, x->rank - 2, x->dims);
    return ONYX_OK;
}

const op_schema op_Det[] = {{"", "Det", 11, 1, 1, 1, 1, NULL, det_infer, 0},
                            {"", "Det", 22, 1, 1, 1, 1, NULL, det_infer, 0},
                            OP_END};
