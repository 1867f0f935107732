/* ConcatFromSequence: concatenates a sequence's tensors along an axis, or stacks them along a new
 * one (new_axis = 1). */
#include "ops/control/infer.h"

static const attr_spec concat_seq_attrs[] = {
    {"axis", ATTR_INT},
    {"new_axis", ATTR_INT},
    {NULL, ATTR_UNDEFINED},
};

static onyx_status concat_seq_infer(infer_ctx *c) {
    const type_info *elem;
    TRY(infer_ctl_need_seq(c, 0, &elem));
    int64_t new_axis = attr_int(c->node, "new_axis", 0);
    if (new_axis != 0 && new_axis != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "new_axis is %lld, expected 0 or 1",
                          (long long)new_axis);
    if (!node_attr(c->node, "axis"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute axis is missing");
    if (!elem || elem->kind != ONYX_VALUE_TENSOR) {
        if (elem)
            return onyx_error(ONYX_ERR_SHAPE, "input 0 must be a sequence of tensors");
        type_set_tensor(&c->out[0], ONYX_UNDEFINED, -1, NULL);
        return ONYX_OK;
    }
    int r = elem->rank;
    if (r < 0 || r + (int)new_axis > ONYX_MAX_RANK) {
        type_set_tensor(&c->out[0], elem->dtype, -1, NULL);
        return ONYX_OK;
    }
    int axis;
    TRY(infer_axis(c, attr_int(c->node, "axis", 0), r + (int)new_axis, &axis));
    int64_t dims[ONYX_MAX_RANK];
    int k = 0;
    for (int d = 0; d < r + (int)new_axis; d++) {
        if (d == axis) dims[k++] = -1; /* the element count is only known at run time */
        else dims[k++] = elem->dims[new_axis && d > axis ? d - 1 : d];
    }
    type_set_tensor(&c->out[0], elem->dtype, k, dims);
    return ONYX_OK;
}

const op_schema op_ConcatFromSequence[] = {
    {"", "ConcatFromSequence", 11, 1, 1, 1, 1, concat_seq_attrs, concat_seq_infer, 0},
    OP_END,
};
