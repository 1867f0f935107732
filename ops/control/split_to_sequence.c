/* SplitToSequence: splits a tensor along an axis into a sequence of parts (of size 1 without
 * `split`, of size `split` for a scalar, or of the listed sizes). */
#include "ops/control/infer.h"

static const attr_spec split_seq_attrs[] = {
    {"axis", ATTR_INT},
    {"keepdims", ATTR_INT},
    {NULL, ATTR_UNDEFINED},
};

static onyx_status split_seq_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    bool has_split = c->n_in > 1 && c->in[1];
    if (has_split) {
        TRY(infer_need_tensor(c, 1));
        if (c->in[1]->dtype != ONYX_UNDEFINED)
            TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
        if (c->in[1]->rank > 1)
            return onyx_error(ONYX_ERR_SHAPE, "input 1 (split) has rank %d, expected 0 or 1",
                              c->in[1]->rank);
    }
    int64_t keepdims = attr_int(c->node, "keepdims", 1);
    if (keepdims != 0 && keepdims != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "keepdims is %lld, expected 0 or 1",
                          (long long)keepdims);
    type_info elem;
    type_init(&elem);
    if (x->rank < 0) {
        type_set_tensor(&elem, x->dtype, -1, NULL);
    } else {
        int axis;
        TRY(infer_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
        int64_t dims[ONYX_MAX_RANK];
        int r = 0;
        int64_t part = -1;
        if (!has_split) {
            part = 1;
        } else if (c->n_in > 1 && c->in_value && c->in_value[1] && c->in_value[1]->rank == 0) {
            int64_t s = tensor_get_i64(c->in_value[1], 0);
            if (s <= 0)
                return onyx_error(ONYX_ERR_SHAPE, "split is %lld, expected a positive size",
                                  (long long)s);
            /* equal parts only when the size divides the axis */
            if (x->dims[axis] >= 0 && x->dims[axis] % s == 0) part = s;
        }
        for (int k = 0; k < x->rank; k++) {
            if (k == axis) {
                if (!has_split && !keepdims) continue;
                dims[r++] = part;
            } else {
                dims[r++] = x->dims[k];
            }
        }
        type_set_tensor(&elem, x->dtype, r, dims);
    }
    return infer_ctl_container(&c->out[0], ONYX_VALUE_SEQUENCE, &elem);
}

#define SPLIT_SEQ_V(v) {"", "SplitToSequence", v, 1, 2, 1, 1, split_seq_attrs, split_seq_infer, 0}
const op_schema op_SplitToSequence[] = {SPLIT_SEQ_V(11), SPLIT_SEQ_V(24), OP_END};
