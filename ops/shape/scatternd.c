/* Schema of ScatterND: data with slices replaced (or reduced, v16/v18) at index tuples; updates
 * have shape indices.shape[:-1] + data.shape[m:]. */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status scatter_nd_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    TRY(infer_need_tensor(c, 2));
    const type_info *x = c->in[0], *idx = c->in[1], *upd = c->in[2];
    if (upd->dtype != x->dtype && upd->dtype != ONYX_UNDEFINED && x->dtype != ONYX_UNDEFINED)
        return onyx_error(ONYX_ERR_SHAPE, "updates have type %s, expected %s like data",
                          onyx_dtype_name(upd->dtype), onyx_dtype_name(x->dtype));
    if (x->rank >= 0 && idx->rank >= 0) {
        if (x->rank < 1 || idx->rank < 1)
            return onyx_error(ONYX_ERR_SHAPE, "data and indices need rank >= 1");
        int64_t m = idx->dims[idx->rank - 1];
        if (m > x->rank)
            return onyx_error(ONYX_ERR_SHAPE, "index tuples have %" PRId64 " entries, data rank %d",
                              m, x->rank);
        if (m >= 0 && upd->rank >= 0 && upd->rank != idx->rank - 1 + x->rank - m)
            return onyx_error(ONYX_ERR_SHAPE, "updates have rank %d, expected %" PRId64, upd->rank,
                              idx->rank - 1 + x->rank - m);
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs_16[] = {{"reduction", ATTR_STRING}, {NULL, 0}};

const op_schema op_ScatterND[] = {{"", "ScatterND", 11, 3, 3, 1, 1, NULL, scatter_nd_infer, 0},
                                  {"", "ScatterND", 13, 3, 3, 1, 1, NULL, scatter_nd_infer, 0},
                                  {"", "ScatterND", 16, 3, 3, 1, 1, attrs_16, scatter_nd_infer, 0},
                                  {"", "ScatterND", 18, 3, 3, 1, 1, attrs_16, scatter_nd_infer, 0},
                                  OP_END};
