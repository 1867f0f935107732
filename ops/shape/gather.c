/* Schema of Gather: slices of data along `axis` picked by an index tensor, whose shape replaces
 * that axis. */
#include "ops/shape_common.h"

static onyx_status gather_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 1, OPS_DT_INDEX));
    const type_info *x = c->in[0], *idx = c->in[1];
    if (x->rank < 0 || idx->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        return ONYX_OK;
    }
    int axis;
    TRY(infer_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
    int r = x->rank - 1 + idx->rank;
    if (r > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, ONYX_MAX_RANK);
    int64_t dims[ONYX_MAX_RANK];
    int k = 0;
    for (int i = 0; i < axis; i++) dims[k++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) dims[k++] = idx->dims[i];
    for (int i = axis + 1; i < x->rank; i++) dims[k++] = x->dims[i];
    type_set_tensor(&c->out[0], x->dtype, r, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {NULL, 0}};

#define GATHER_V(v)                                                                                \
    { "", "Gather", v, 2, 2, 1, 1, attrs, gather_infer, 0 }
const op_schema op_Gather[] = {GATHER_V(1), GATHER_V(11), GATHER_V(13), OP_END};
