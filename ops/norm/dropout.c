/* Schema of Dropout: a copy of x at inference; in training mode (v1/v6 is_test=0, v12+ the
 * training_mode input) elements are zeroed with probability ratio and the rest scaled by
 * 1/(1-ratio). The optional mask output is T before v10, bool from v10. */
#include "ops/shape_common.h"

#define DROP_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))
#define DROP_F8                                                                                    \
    (DT_BIT(ONYX_FLOAT8E4M3FN) | DT_BIT(ONYX_FLOAT8E4M3FNUZ) | DT_BIT(ONYX_FLOAT8E5M2) |           \
     DT_BIT(ONYX_FLOAT8E5M2FNUZ))

static onyx_status drop_infer(infer_ctx *c) {
    int v = c->node->version;
    dtype_mask m = DROP_TYPES | (v >= 13 ? DT_BIT(ONYX_BFLOAT16) : 0) | (v >= 22 ? DROP_F8 : 0);
    TRY(infer_dtype_in(c, 0, m));
    if (v >= 12) {
        if (c->n_in > 1 && c->in[1]) {
            TRY(infer_dtype_in(c, 1, v >= 22 ? m : DROP_TYPES));
            if (c->in[1]->rank > 0 && !(c->in[1]->rank == 1 && c->in[1]->dims[0] == 1))
                return onyx_error(ONYX_ERR_SHAPE, "input 1 (ratio) has rank %d, expected a scalar",
                                  c->in[1]->rank);
        }
        if (c->n_in > 2 && c->in[2]) {
            TRY(infer_dtype_in(c, 2, DT_BIT(ONYX_BOOL)));
            if (c->in[2]->rank > 0 && !(c->in[2]->rank == 1 && c->in[2]->dims[0] == 1))
                return onyx_error(ONYX_ERR_SHAPE,
                                  "input 2 (training_mode) has rank %d, expected a scalar",
                                  c->in[2]->rank);
        }
        const graph_attr *seed = node_attr(c->node, "seed");
        if (seed && (seed->i < 0 || seed->i > (int64_t)UINT32_MAX))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute seed is %lld, expected 0..2^32-1",
                              (long long)seed->i);
    } else if (attr_int(c->node, "is_test", 0) == 0) {
        float r = attr_float(c->node, "ratio", 0.5f);
        if (!(r >= 0 && r < 1))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute ratio is %g, expected [0, 1)",
                              (double)r);
    }
    TRY(infer_same_as_input(c, 0, 0));
    if (c->n_out > 1) {
        TRY(infer_same_as_input(c, 1, 0));
        if (v >= 10) c->out[1].dtype = ONYX_BOOL;
    }
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {
    {"is_test", ATTR_INT}, {"ratio", ATTR_FLOAT}, {"consumed_inputs", ATTR_INTS}, {NULL, 0}};
static const attr_spec attrs_6[] = {{"is_test", ATTR_INT}, {"ratio", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs_7[] = {{"ratio", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs_12[] = {{"seed", ATTR_INT}, {NULL, 0}};

const op_schema op_Dropout[] = {
    {"", "Dropout", 1, 1, 1, 1, 2, attrs_1, drop_infer, OP_NONDETERMINISTIC},
    {"", "Dropout", 6, 1, 1, 1, 2, attrs_6, drop_infer, OP_NONDETERMINISTIC},
    {"", "Dropout", 7, 1, 1, 1, 2, attrs_7, drop_infer, 0},
    {"", "Dropout", 10, 1, 1, 1, 2, attrs_7, drop_infer, 0},
    {"", "Dropout", 12, 1, 3, 1, 2, attrs_12, drop_infer, OP_NONDETERMINISTIC},
    {"", "Dropout", 13, 1, 3, 1, 2, attrs_12, drop_infer, OP_NONDETERMINISTIC},
    {"", "Dropout", 22, 1, 3, 1, 2, attrs_12, drop_infer, OP_NONDETERMINISTIC},
    OP_END,
};
