/* Schema of TopK: the k largest (or smallest) elements along an axis and their indices; k is an
 * attribute in v1 and input 1 from v10. */
#include "ops/schema.h"

#define TOPK_TYPES_1 (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static onyx_status topk_infer(infer_ctx *c) {
    int v = c->node->version;
    dtype_mask m = TOPK_TYPES_1 | (v >= 11 ? DT_INTS : 0) | (v >= 24 ? DT_BIT(ONYX_BFLOAT16) : 0);
    TRY(infer_dtype_in(c, 0, m));
    const type_info *x = c->in[0];
    int64_t k = -1;
    if (v < 10) {
        k = attr_int(c->node, "k", -1);
        if (k < 0) return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute k is missing or negative");
    } else {
        TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
        const tensor *kv = c->in_value[1];
        if (kv) {
            if (kv->numel != 1 || kv->rank > 1)
                return onyx_error(ONYX_ERR_SHAPE, "K (input 1) has %lld elements, expected one",
                                  (long long)kv->numel);
            k = tensor_get_i64(kv, 0);
            if (k < 0) return onyx_error(ONYX_ERR_SHAPE, "K is %lld, expected >= 0", (long long)k);
        }
    }
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        if (c->n_out > 1) type_set_tensor(&c->out[1], ONYX_INT64, -1, NULL);
        return ONYX_OK;
    }
    int axis;
    TRY(infer_axis(c, attr_int(c->node, "axis", -1), x->rank, &axis));
    if (k >= 0 && x->dims[axis] >= 0 && k > x->dims[axis])
        return onyx_error(ONYX_ERR_SHAPE, "K is %lld, larger than axis %d's size %lld",
                          (long long)k, axis, (long long)x->dims[axis]);
    int64_t dims[ONYX_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i == axis ? k : x->dims[i];
    type_set_tensor(&c->out[0], x->dtype, x->rank, dims);
    if (c->n_out > 1) type_set_tensor(&c->out[1], ONYX_INT64, x->rank, dims);
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {{"axis", ATTR_INT}, {"k", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_10[] = {{"axis", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_11[] = {
    {"axis", ATTR_INT}, {"largest", ATTR_INT}, {"sorted", ATTR_INT}, {NULL, 0}};

const op_schema op_TopK[] = {
    {"", "TopK", 1, 1, 1, 2, 2, attrs_1, topk_infer, 0},
    {"", "TopK", 10, 2, 2, 2, 2, attrs_10, topk_infer, 0},
    {"", "TopK", 11, 2, 2, 2, 2, attrs_11, topk_infer, 0},
    {"", "TopK", 24, 2, 2, 2, 2, attrs_11, topk_infer, 0},
    OP_END,
};
