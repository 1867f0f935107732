/* Schema of DFT: the discrete Fourier transform of [..., L, ..., 1|2] (real or complex in the
 * last dim) along one axis; v17 takes the axis as an attribute, v20 as an optional input. */
#include "ops/signal/signal_common.h"

#include <inttypes.h>

onyx_status ops_dft_plan_make(const graph_node *n, int rank, const int64_t *dims,
                              const tensor *dft_length, const tensor *axis, ops_dft_plan *p) {
    if (rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected at least 2", rank);
    int64_t last = dims[rank - 1];
    if (last != 1 && last != 2 && last >= 0)
        return onyx_error(ONYX_ERR_SHAPE,
                          "input's last dim is %" PRId64 ", expected 1 (real) or 2 (complex)", last);
    int64_t a;
    if (n->version < 20) {
        a = attr_int(n, "axis", 1);
    } else if (axis && axis->numel > 0) {
        TRY(ops_scalar_int(axis, "axis", &a));
    } else {
        a = -2;
    }
    if (a < -(int64_t)rank || a >= rank || a == rank - 1 || a == -1)
        return onyx_error(ONYX_ERR_SHAPE,
                          "axis %" PRId64 " is out of range for rank %d (the last dim holds the "
                          "real/imaginary parts)",
                          a, rank);
    p->axis = (int)(a < 0 ? a + rank : a);
    p->inverse = attr_int(n, "inverse", 0) != 0;
    p->onesided = attr_int(n, "onesided", 0) != 0;
    p->real_in = last == 1;
    int64_t L = dims[p->axis];
    if (dft_length && dft_length->numel > 0) {
        TRY(ops_scalar_int(dft_length, "dft_length", &p->length));
        if (p->length < 1 || p->length > ((int64_t)1 << 40))
            return onyx_error(ONYX_ERR_SHAPE, "dft_length is %" PRId64 ", expected > 0",
                              p->length);
    } else if (L < 0) {
        p->length = -1;
    } else {
        p->length = p->inverse && p->onesided ? 2 * (L - 1) : L;
        if (p->length < 1)
            return onyx_error(ONYX_ERR_SHAPE, "axis %d has %" PRId64 " elements: nothing to transform",
                              p->axis, L);
    }
    for (int i = 0; i < rank; i++) p->out_dims[i] = dims[i];
    if (p->length < 0) p->out_dims[p->axis] = -1;
    else p->out_dims[p->axis] = p->onesided && !p->inverse ? p->length / 2 + 1 : p->length;
    p->out_dims[rank - 1] = p->onesided && p->inverse ? 1 : 2;
    return ONYX_OK;
}

static onyx_status dft_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 0, DT_FLOATS));
    const type_info *x = c->in[0];
    bool has_len = c->n_in > 1 && c->in[1], has_axis = c->n_in > 2 && c->in[2];
    if (has_len) TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    if (has_axis) TRY(infer_dtype_in(c, 2, DT_BIT(ONYX_INT64)));
    const tensor *len = has_len && c->in_value ? c->in_value[1] : NULL;
    const tensor *ax = has_axis && c->in_value ? c->in_value[2] : NULL;
    if (x->rank < 0 || (has_len && !len) || (has_axis && !ax)) {
        type_set_tensor(&c->out[0], x->dtype, x->rank, NULL);
        return ONYX_OK;
    }
    ops_dft_plan p;
    TRY(ops_dft_plan_make(c->node, x->rank, x->dims, len, ax, &p));
    type_set_tensor(&c->out[0], x->dtype, x->rank, p.out_dims);
    return ONYX_OK;
}

static const attr_spec attrs_17[] = {
    {"axis", ATTR_INT}, {"inverse", ATTR_INT}, {"onesided", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_20[] = {{"inverse", ATTR_INT}, {"onesided", ATTR_INT}, {NULL, 0}};

const op_schema op_DFT[] = {{"", "DFT", 17, 1, 2, 1, 1, attrs_17, dft_infer, 0},
                            {"", "DFT", 20, 1, 3, 1, 1, attrs_20, dft_infer, 0},
                            OP_END};
