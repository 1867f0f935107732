/* Schema of ai.onnx.ml TreeEnsembleRegressor (v1, v3 with *_as_tensor doubles, v5 without the
 * float lists): X [N, F] → float Y [N, n_targets]. Trees are checked by the kernel's compile. */
#include "ops/ml/common.h"

static onyx_status regressor_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    int64_t rows, cols;
    TRY(ml_rows_cols(c, 0, &rows, &cols));
    int64_t targets = attr_int(c->node, "n_targets", 1);
    if (targets < 1) return onyx_error(ONYX_ERR_INVALID_MODEL, "n_targets is %lld", (long long)targets);
    int64_t dims[2] = {rows, targets};
    type_set_tensor(&c->out[0], ONYX_FLOAT, 2, dims);
    return ONYX_OK;
}

#define REGRESSOR_ATTRS                                                                            \
    {"aggregate_function", ATTR_STRING}, {"base_values", ATTR_FLOATS}, {"n_targets", ATTR_INT},   \
        {"nodes_falsenodeids", ATTR_INTS}, {"nodes_featureids", ATTR_INTS},                        \
        {"nodes_hitrates", ATTR_FLOATS}, {"nodes_missing_value_tracks_true", ATTR_INTS},           \
        {"nodes_modes", ATTR_STRINGS}, {"nodes_nodeids", ATTR_INTS}, {"nodes_treeids", ATTR_INTS}, \
        {"nodes_truenodeids", ATTR_INTS}, {"nodes_values", ATTR_FLOATS},                           \
        {"post_transform", ATTR_STRING}, {"target_ids", ATTR_INTS}, {"target_nodeids", ATTR_INTS}, \
        {"target_treeids", ATTR_INTS}, {"target_weights", ATTR_FLOATS}

static const attr_spec attrs_v1[] = {REGRESSOR_ATTRS, {NULL, 0}};
static const attr_spec attrs_v3[] = {REGRESSOR_ATTRS,
                                     {"base_values_as_tensor", ATTR_TENSOR},
                                     {"nodes_hitrates_as_tensor", ATTR_TENSOR},
                                     {"nodes_values_as_tensor", ATTR_TENSOR},
                                     {"target_weights_as_tensor", ATTR_TENSOR},
                                     {NULL, 0}};

const op_schema op_TreeEnsembleRegressor[] = {
    {ML_DOMAIN, "TreeEnsembleRegressor", 1, 1, 1, 1, 1, attrs_v1, regressor_infer, 0},
    {ML_DOMAIN, "TreeEnsembleRegressor", 3, 1, 1, 1, 1, attrs_v3, regressor_infer, 0},
    {ML_DOMAIN, "TreeEnsembleRegressor", 5, 1, 1, 1, 1, attrs_v3, regressor_infer, 0},
    OP_END};
