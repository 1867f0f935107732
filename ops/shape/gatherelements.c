/* Schema of GatherElements: data and indices of one rank; the output has the indices' shape. */
#include "ops/shape_common.h"

static onyx_status gather_elements_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 1, OPS_DT_INDEX));
    const type_info *x = c->in[0], *idx = c->in[1];
    if (x->rank >= 0 && idx->rank >= 0) {
        if (x->rank != idx->rank)
            return onyx_error(ONYX_ERR_SHAPE, "indices have rank %d, expected %d like data",
                              idx->rank, x->rank);
        int axis;
        TRY(infer_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
        /* off the axis an index row reads data at its own position */
        for (int k = 0; k < x->rank; k++)
            if (k != axis && x->dims[k] >= 0 && idx->dims[k] > x->dims[k])
                return onyx_error(ONYX_ERR_SHAPE, "indices dim %d is %lld, larger than data's %lld",
                                  k, (long long)idx->dims[k], (long long)x->dims[k]);
    }
    type_set_tensor(&c->out[0], x->dtype, idx->rank, idx->rank >= 0 ? idx->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {NULL, 0}};

const op_schema op_GatherElements[] = {
    {"", "GatherElements", 11, 2, 2, 1, 1, attrs, gather_elements_infer, 0},
    {"", "GatherElements", 13, 2, 2, 1, 1, attrs, gather_elements_infer, 0},
    OP_END};
