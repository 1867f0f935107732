/* Schemas of ScatterElements and its deprecated twin Scatter (v9, v11): one inference (the
 * output is data; indices and updates share a shape of data's rank), so one file stamps both. */
#include "ops/shape_common.h"

static onyx_status scatter_elements_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 1, OPS_DT_INDEX));
    TRY(infer_need_tensor(c, 2));
    onyx_dtype dx = c->in[0]->dtype, du = c->in[2]->dtype;
    if (dx != du && dx != ONYX_UNDEFINED && du != ONYX_UNDEFINED)
        return onyx_error(ONYX_ERR_SHAPE, "updates have type %s, expected %s like data",
                          onyx_dtype_name(c->in[2]->dtype), onyx_dtype_name(c->in[0]->dtype));
    const type_info *x = c->in[0], *idx = c->in[1], *upd = c->in[2];
    if (x->rank >= 0 && idx->rank >= 0) {
        if (idx->rank != x->rank)
            return onyx_error(ONYX_ERR_SHAPE, "indices have rank %d, expected %d like data",
                              idx->rank, x->rank);
        int axis;
        TRY(infer_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
    }
    if (idx->rank >= 0 && upd->rank >= 0 &&
        !shape_equal(idx->rank, idx->dims, upd->rank, upd->dims)) {
        bool unknown = idx->rank == upd->rank;
        for (int k = 0; unknown && k < idx->rank; k++)
            unknown = idx->dims[k] == upd->dims[k] || idx->dims[k] < 0 || upd->dims[k] < 0;
        if (!unknown) {
            char a[160], b[160];
            return onyx_error(ONYX_ERR_SHAPE, "updates have shape %s, expected %s like indices",
                              shape_str(upd->rank, upd->dims, a, sizeof a),
                              shape_str(idx->rank, idx->dims, b, sizeof b));
        }
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_16[] = {{"axis", ATTR_INT}, {"reduction", ATTR_STRING}, {NULL, 0}};

#define SE_V(op, v, a)                                                                             \
    { "", op, v, 3, 3, 1, 1, a, scatter_elements_infer, 0 }
const op_schema op_ScatterElements[] = {
    SE_V("ScatterElements", 11, attrs), SE_V("ScatterElements", 13, attrs),
    SE_V("ScatterElements", 16, attrs_16), SE_V("ScatterElements", 18, attrs_16), OP_END};

const op_schema op_Scatter[] = {SE_V("Scatter", 9, attrs), SE_V("Scatter", 11, attrs), OP_END};
