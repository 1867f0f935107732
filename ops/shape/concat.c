/* Schema of Concat: inputs of one rank and type joined along `axis` (required from v4, negative
 * from v11); the other dims must agree. */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status concat_infer(infer_ctx *c) {
    int rank = -1, ref = -1;
    for (int i = 0; i < c->n_in; i++) {
        TRY(infer_need_tensor(c, i));
        if (c->in[i]->rank < 0) continue;
        if (rank >= 0 && c->in[i]->rank != rank)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected %d like input %d", i,
                              c->in[i]->rank, rank, ref);
        rank = c->in[i]->rank;
        ref = i;
    }
    TRY(infer_same_dtypes(c, 0, c->n_in));
    onyx_dtype dt = ONYX_UNDEFINED; /* the first input whose type is known */
    for (int i = 0; i < c->n_in && dt == ONYX_UNDEFINED; i++) dt = c->in[i]->dtype;
    if (c->node->version >= 4 && !node_attr(c->node, "axis"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute axis is missing");
    if (rank < 0) {
        type_set_tensor(&c->out[0], dt, -1, NULL);
        return ONYX_OK;
    }
    if (rank == 0) return onyx_error(ONYX_ERR_SHAPE, "cannot concatenate scalars");
    int axis;
    TRY(infer_axis(c, attr_int(c->node, "axis", 1), rank, &axis));
    int64_t dims[ONYX_MAX_RANK];
    for (int k = 0; k < rank; k++) dims[k] = k == axis ? 0 : -1;
    for (int i = 0; i < c->n_in; i++) {
        const type_info *t = c->in[i];
        if (t->rank < 0) {
            dims[axis] = -1;
            continue;
        }
        for (int k = 0; k < rank; k++) {
            int64_t d = t->dims[k];
            if (k == axis) {
                if (d < 0 || dims[axis] < 0)
                    dims[axis] = -1;
                else if (d > INT64_MAX - dims[axis])
                    return onyx_error(ONYX_ERR_SHAPE, "concatenated size overflows");
                else
                    dims[axis] += d;
            } else if (d >= 0) {
                if (dims[k] >= 0 && dims[k] != d)
                    return onyx_error(ONYX_ERR_SHAPE,
                                      "input %d has size %" PRId64 " on axis %d, expected %" PRId64,
                                      i, d, k, dims[k]);
                dims[k] = d;
            }
        }
    }
    type_set_tensor(&c->out[0], dt, rank, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {NULL, 0}};

#define CONCAT_V(v)                                                                                \
    { "", "Concat", v, 1, ONYX_VARIADIC, 1, 1, attrs, concat_infer, 0 }
const op_schema op_Concat[] = {CONCAT_V(1), CONCAT_V(4), CONCAT_V(11), CONCAT_V(13), OP_END};
