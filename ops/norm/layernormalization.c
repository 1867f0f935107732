/* Schemas of LayerNormalization and RMSNormalization: x normalized over its trailing axes
 * [axis, rank), then scaled (and for LayerNorm shifted) by tensors broadcast to x. They share
 * this file because they share inference: the same axis (handed to the kernels,
 * core/op_params.h), stash_type and scale rules. */
#include "ops/shape_common.h"

/* stash_type: the precision of the statistics (1 float, 11 double, 16 bfloat16) */
static onyx_status check_stash(infer_ctx *c) {
    int64_t st = attr_int(c->node, "stash_type", 1);
    if (st != ONYX_FLOAT && st != ONYX_DOUBLE && st != ONYX_BFLOAT16)
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "stash_type %lld is not supported (expected 1 float, "
                          "11 double or 16 bfloat16)",
                          (long long)st);
    return ONYX_OK;
}

/* Input i must broadcast unidirectionally to x (its dims 1 or x's, right-aligned). */
static onyx_status check_bcast(infer_ctx *c, int i) {
    const type_info *x = c->in[0], *p = c->in[i];
    if (p->rank < 0 || x->rank < 0) return ONYX_OK;
    char a[160], b[160];
    if (p->rank > x->rank)
        return onyx_error(ONYX_ERR_SHAPE, "input %d has shape %s, which does not broadcast to X %s",
                          i, shape_str(p->rank, p->dims, a, sizeof a),
                          shape_str(x->rank, x->dims, b, sizeof b));
    for (int d = 0; d < p->rank; d++) {
        int64_t pd = p->dims[d], xd = x->dims[x->rank - p->rank + d];
        if (pd >= 0 && xd >= 0 && pd != 1 && pd != xd)
            return onyx_error(
                ONYX_ERR_SHAPE, "input %d has shape %s, which does not broadcast to X %s", i,
                shape_str(p->rank, p->dims, a, sizeof a), shape_str(x->rank, x->dims, b, sizeof b));
    }
    return ONYX_OK;
}

static onyx_status norm_common(infer_ctx *c, int n_params, int *axis) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_need_tensor(c, 1)); /* the scale */
    const type_info *x = c->in[0];
    for (int i = 0; i < n_params; i++)
        if (i < c->n_in && c->in[i]) TRY(infer_dtype_in(c, i, DT_FLOATS));
    TRY(check_stash(c));
    *axis = -1;
    if (x->rank < 0) return ONYX_OK;
    if (x->rank == 0) return onyx_error(ONYX_ERR_SHAPE, "input 0 is a scalar, expected rank >= 1");
    TRY(infer_kernel_axis(c, attr_int(c->node, "axis", -1), x->rank, axis));
    for (int i = 1; i < n_params; i++)
        if (i < c->n_in && c->in[i]) TRY(check_bcast(c, i));
    return ONYX_OK;
}

static onyx_status ln_infer(infer_ctx *c) {
    int axis;
    TRY(norm_common(c, 3, &axis));
    TRY(infer_same_dtypes(c, 0, 3));
    TRY(infer_same_as_input(c, 0, 0));
    const type_info *x = c->in[0];
    onyx_dtype st = (onyx_dtype)attr_int(c->node, "stash_type", 1);
    for (int o = 1; o < c->n_out && o < 3; o++) {
        if (x->rank < 0) {
            type_set_tensor(&c->out[o], st, -1, NULL);
            continue;
        }
        int64_t dims[ONYX_MAX_RANK];
        for (int d = 0; d < x->rank; d++) dims[d] = d < axis ? x->dims[d] : 1;
        type_set_tensor(&c->out[o], st, x->rank, dims);
    }
    return ONYX_OK;
}

static onyx_status rms_infer(infer_ctx *c) {
    int axis;
    TRY(norm_common(c, 2, &axis));
    TRY(infer_same_as_input(c, 0, 0));
    /* Y has the scale's type (V) */
    if (c->in[1]->dtype != ONYX_UNDEFINED) c->out[0].dtype = c->in[1]->dtype;
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"axis", ATTR_INT}, {"epsilon", ATTR_FLOAT}, {"stash_type", ATTR_INT}, {NULL, 0}};

const op_schema op_LayerNormalization[] = {
    {"", "LayerNormalization", 17, 2, 3, 1, 3, attrs, ln_infer, OP_GEOMETRY},
    OP_END,
};

const op_schema op_RMSNormalization[] = {
    {"", "RMSNormalization", 23, 2, 2, 1, 1, attrs, rms_infer, OP_GEOMETRY},
    OP_END,
};
