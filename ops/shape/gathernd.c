/* Schema of GatherND: index tuples of length m (the last indices dim) pick slices of data after
 * batch_dims shared leading dims (v12). */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status gather_nd_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    const type_info *x = c->in[0], *idx = c->in[1];
    int64_t b = c->node->version >= 12 ? attr_int(c->node, "batch_dims", 0) : 0;
    if (x->rank < 0 || idx->rank < 0 || idx->dims[idx->rank > 0 ? idx->rank - 1 : 0] < 0) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        return ONYX_OK;
    }
    int r = x->rank, q = idx->rank;
    if (r < 1 || q < 1)
        return onyx_error(ONYX_ERR_SHAPE, "data and indices need rank >= 1, got %d and %d", r, q);
    if (b < 0 || b >= q || b >= r)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "batch_dims %" PRId64 " must be below both ranks %d and %d", b, r, q);
    int64_t m = idx->dims[q - 1];
    if (m > r - b)
        return onyx_error(ONYX_ERR_SHAPE,
                          "index tuples have %" PRId64 " entries, more than the %" PRId64
                          " dims after batch_dims",
                          m, r - b);
    for (int k = 0; k < b; k++)
        if (x->dims[k] >= 0 && idx->dims[k] >= 0 && x->dims[k] != idx->dims[k])
            return onyx_error(ONYX_ERR_SHAPE,
                              "batch dim %d is %" PRId64 " in data but %" PRId64 " in indices", k,
                              x->dims[k], idx->dims[k]);
    int out_r = q - 1 + r - (int)b - (int)m;
    if (out_r > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "output rank %d exceeds %d", out_r, ONYX_MAX_RANK);
    int64_t dims[ONYX_MAX_RANK];
    int n = 0;
    for (int k = 0; k < q - 1; k++) dims[n++] = idx->dims[k];
    for (int k = (int)(b + m); k < r; k++) dims[n++] = x->dims[k];
    type_set_tensor(&c->out[0], x->dtype, n, dims);
    return ONYX_OK;
}

static const attr_spec attrs_12[] = {{"batch_dims", ATTR_INT}, {NULL, 0}};

const op_schema op_GatherND[] = {{"", "GatherND", 11, 2, 2, 1, 1, NULL, gather_nd_infer, 0},
                                 {"", "GatherND", 12, 2, 2, 1, 1, attrs_12, gather_nd_infer, 0},
                                 {"", "GatherND", 13, 2, 2, 1, 1, attrs_12, gather_nd_infer, 0},
                                 OP_END};
