/* Schema of com.microsoft QLinearConcat: (tensor, scale, zero point) triples after Y's scale and
 * zero point, joined along `axis` with each input requantized to Y's parameters. */
#include <inttypes.h>

#include "ops/contrib_quant/cq_infer.h"

static onyx_status qconcat_infer(infer_ctx *c) {
    if (c->n_in < 5 || (c->n_in - 2) % 3 != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%d inputs, expected Y_scale, Y_zero_point "
                          "and one or more (tensor, scale, zero point) triples", c->n_in);
    if (!node_attr(c->node, "axis"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute axis is missing");
    TRY(cq_infer_scale(c, 0, "Y_scale"));
    TRY(cq_infer_zero_point(c, 1, ONYX_UNDEFINED, false, "Y_zero_point"));
    onyx_dtype t = c->in[1]->dtype;
    int rank = -1, ref = -1;
    for (int i = 2; i < c->n_in; i += 3) {
        TRY(cq_infer_quantized(c, i, t, "input tensor"));
        if (t == ONYX_UNDEFINED) t = c->in[i]->dtype;
        TRY(cq_infer_scale(c, i + 1, "input scale"));
        TRY(cq_infer_zero_point(c, i + 2, t, false, "input zero point"));
        int r = c->in[i]->rank;
        if (r < 0) continue;
        if (rank >= 0 && r != rank)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected %d like input %d",
                              i, r, rank, ref);
        rank = r;
        ref = i;
    }
    if (rank < 0) {
        type_set_tensor(&c->out[0], t, -1, NULL);
        return ONYX_OK;
    }
    if (rank == 0) return onyx_error(ONYX_ERR_SHAPE, "cannot concatenate scalars");
    int axis;
    TRY(infer_axis(c, attr_int(c->node, "axis", 0), rank, &axis));
    int64_t dims[ONYX_MAX_RANK];
    for (int k = 0; k < rank; k++) dims[k] = k == axis ? 0 : -1;
    for (int i = 2; i < c->n_in; i += 3) {
        const type_info *x = c->in[i];
        if (x->rank < 0) {
            dims[axis] = -1;
            continue;
        }
        for (int k = 0; k < rank; k++) {
            int64_t d = x->dims[k];
            if (k == axis) {
                if (d < 0 || dims[axis] < 0) dims[axis] = -1;
                else if (d > INT64_MAX - dims[axis])
                    return onyx_error(ONYX_ERR_SHAPE, "concatenated size overflows");
                else dims[axis] += d;
            } else if (d >= 0) {
                if (dims[k] >= 0 && dims[k] != d)
                    return onyx_error(ONYX_ERR_SHAPE, "input %d has size %" PRId64 " on axis %d, "
                                      "expected %" PRId64, i, d, k, dims[k]);
                dims[k] = d;
            }
        }
    }
    type_set_tensor(&c->out[0], t, rank, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {NULL, 0}};

const op_schema op_QLinearConcat[] = {
    {"com.microsoft", "QLinearConcat", 1, 5, ONYX_VARIADIC, 1, 1, attrs, qconcat_infer, 0},
    OP_END,
};
