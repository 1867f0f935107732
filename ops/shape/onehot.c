/* Schema of OneHot: a new axis of size depth where the index's position holds values[1] and the
 * rest values[0]. */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status onehot_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_NUMERIC));
    TRY(infer_dtype_in(c, 1, DT_NUMERIC));
    TRY(infer_need_tensor(c, 2));
    const type_info *idx = c->in[0], *vals = c->in[2];
    if (vals->rank >= 0 && (vals->rank != 1 || (vals->dims[0] >= 0 && vals->dims[0] != 2)))
        return onyx_error(ONYX_ERR_SHAPE, "values must be a 1-D tensor of 2 elements");
    if (idx->rank < 0) {
        type_set_tensor(&c->out[0], vals->dtype, -1, NULL);
        return ONYX_OK;
    }
    int r = idx->rank + 1, axis;
    if (r > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, ONYX_MAX_RANK);
    TRY(infer_axis(c, attr_int(c->node, "axis", -1), r, &axis));
    int64_t depth = -1;
    const tensor *d = ops_value(c, 1);
    if (d) {
        if (d->numel != 1)
            return onyx_error(ONYX_ERR_SHAPE, "depth has %" PRId64 " elements, expected 1",
                              d->numel);
        depth = tensor_get_i64(d, 0);
        if (depth < 1)
            return onyx_error(ONYX_ERR_SHAPE, "depth %" PRId64 " is not positive", depth);
    }
    int64_t dims[ONYX_MAX_RANK];
    for (int k = 0, j = 0; k < r; k++) dims[k] = k == axis ? depth : idx->dims[j++];
    type_set_tensor(&c->out[0], vals->dtype, r, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {NULL, 0}};

/* 28 only adds bfloat16 to the value types, which every version here already copies. */
const op_schema op_OneHot[] = {{"", "OneHot", 9, 3, 3, 1, 1, attrs, onehot_infer, 0},
                               {"", "OneHot", 11, 3, 3, 1, 1, attrs, onehot_infer, 0},
                               {"", "OneHot", 28, 3, 3, 1, 1, attrs, onehot_infer, 0},
                               OP_END};
