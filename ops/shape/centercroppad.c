/* Schema of CenterCropPad: the listed axes (default all) cropped or zero-padded to the target
 * sizes of the shape input, centred (odd differences put the extra element at the end). */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status center_crop_pad_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 1, OPS_DT_INDEX));
    const type_info *x = c->in[0];
    const tensor *sv = ops_value(c, 1);
    if (x->rank < 0 || !sv) {
        type_set_tensor(&c->out[0], x->dtype, x->rank, NULL);
        return ONYX_OK;
    }
    int64_t target[ONYX_MAX_RANK], dims[ONYX_MAX_RANK];
    int axes[ONYX_MAX_RANK];
    size_t n;
    TRY(ops_read_ints(sv, 1, target, ONYX_MAX_RANK, &n));
    const int64_t *a;
    size_t na = attr_ints(c->node, "axes", &a);
    if (node_attr(c->node, "axes")) {
        if (na != n) return onyx_error(ONYX_ERR_SHAPE, "shape has %zu values for %zu axes", n, na);
        TRY(ops_norm_axes(a, na, x->rank, axes, "axes"));
    } else {
        if (n != (size_t)x->rank)
            return onyx_error(ONYX_ERR_SHAPE, "shape has %zu values, expected the rank %d", n,
                              x->rank);
        for (int k = 0; k < x->rank; k++) axes[k] = k;
    }
    for (int k = 0; k < x->rank; k++) dims[k] = x->dims[k];
    for (size_t i = 0; i < n; i++) {
        if (target[i] < 0)
            return onyx_error(ONYX_ERR_SHAPE, "shape[%zu] = %" PRId64 " is negative", i, target[i]);
        dims[axes[i]] = target[i];
    }
    type_set_tensor(&c->out[0], x->dtype, x->rank, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"axes", ATTR_INTS}, {NULL, 0}};

const op_schema op_CenterCropPad[] = {
    {"", "CenterCropPad", 18, 2, 2, 1, 1, attrs, center_crop_pad_infer, 0}, OP_END};
