/* Schema of BatchNormalization: per-channel affine normalization with given statistics
 * (inference), or with the batch's statistics plus updated running ones (training outputs).
 * v1-v7 may normalize per activation (spatial=0); v15 lets scale/bias and mean/var differ in type.
 */
#include "ops/shape_common.h"

#define BN_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

/* Input i (a parameter) must be a tensor of `count` elements shaped like param_dims: [C] for
 * spatial, X's dims after the batch otherwise (a flat [C*D] is accepted too). */
static onyx_status check_param(infer_ctx *c, int i, const type_info *x, bool spatial) {
    const type_info *p = c->in[i];
    if (p->rank < 0 || x->rank < 0) return ONYX_OK;
    int64_t want = 1;
    bool known = true;
    for (int d = 1; d < (spatial ? 2 : x->rank); d++) {
        if (x->dims[d] < 0)
            known = false;
        else
            want *= x->dims[d];
    }
    int64_t got = 1;
    for (int d = 0; d < p->rank; d++) {
        if (p->dims[d] < 0) return ONYX_OK;
        got *= p->dims[d];
    }
    if (spatial && p->rank != 1)
        return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected 1 ([C])", i, p->rank);
    if (known && got != want)
        return onyx_error(ONYX_ERR_SHAPE, "input %d has %lld elements, expected %lld (%s)", i,
                          (long long)got, (long long)want, spatial ? "C" : "C x D1 x ...");
    return ONYX_OK;
}

static onyx_status bn_infer(infer_ctx *c) {
    int v = c->node->version;
    dtype_mask m = BN_TYPES | (v >= 14 ? DT_BIT(ONYX_BFLOAT16) : 0);
    for (int i = 0; i < 5; i++) TRY(infer_dtype_in(c, i, m));
    if (v < 14) {
        TRY(infer_same_dtypes(c, 0, 5));
    } else {
        /* v14: T for X/scale/B, U for mean/var; v15: scale/B (T1) free too */
        if (v == 14) TRY(infer_same_dtypes(c, 0, 3));
        TRY(infer_same_dtypes(c, 1, 2));
        TRY(infer_same_dtypes(c, 3, 2));
    }
    const type_info *x = c->in[0];
    if (x->rank >= 0 && x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2 (N x C x ...)",
                          x->rank);
    bool spatial = v >= 9 || attr_int(c->node, "spatial", 1) != 0;
    for (int i = 1; i < 5; i++) TRY(check_param(c, i, x, spatial));
    if (v >= 14) {
        int64_t tm = attr_int(c->node, "training_mode", 0);
        if (tm != 0 && tm != 1)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "attribute training_mode is %lld, expected 0 or 1", (long long)tm);
    }
    TRY(infer_same_as_input(c, 0, 0));
    /* running (and, before v14, saved) statistics: shaped and typed like input mean */
    for (int o = 1; o < c->n_out; o++) {
        TRY(infer_same_as_input(c, o, 3));
        if (v < 14 && x->dtype != ONYX_UNDEFINED) c->out[o].dtype = x->dtype;
    }
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {{"epsilon", ATTR_FLOAT},        {"momentum", ATTR_FLOAT},
                                    {"is_test", ATTR_INT},          {"spatial", ATTR_INT},
                                    {"consumed_inputs", ATTR_INTS}, {NULL, 0}};
static const attr_spec attrs_6[] = {{"epsilon", ATTR_FLOAT}, {"momentum", ATTR_FLOAT},
                                    {"is_test", ATTR_INT},   {"spatial", ATTR_INT},
                                    {NULL, 0}};
static const attr_spec attrs_7[] = {
    {"epsilon", ATTR_FLOAT}, {"momentum", ATTR_FLOAT}, {"spatial", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_9[] = {{"epsilon", ATTR_FLOAT}, {"momentum", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs_14[] = {
    {"epsilon", ATTR_FLOAT}, {"momentum", ATTR_FLOAT}, {"training_mode", ATTR_INT}, {NULL, 0}};

const op_schema op_BatchNormalization[] = {
    {"", "BatchNormalization", 1, 5, 5, 1, 5, attrs_1, bn_infer, 0},
    {"", "BatchNormalization", 6, 5, 5, 1, 5, attrs_6, bn_infer, 0},
    {"", "BatchNormalization", 7, 5, 5, 1, 5, attrs_7, bn_infer, 0},
    {"", "BatchNormalization", 9, 5, 5, 1, 5, attrs_9, bn_infer, 0},
    {"", "BatchNormalization", 14, 5, 5, 1, 3, attrs_14, bn_infer, 0},
    {"", "BatchNormalization", 15, 5, 5, 1, 3, attrs_14, bn_infer, 0},
    OP_END,
};
