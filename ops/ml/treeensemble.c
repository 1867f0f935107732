/* Schema of ai.onnx.ml TreeEnsemble (v5): X [N, F] float/double/float16 → Y [N, n_targets] in X's
 * type. The trees themselves are checked when the kernel compiles them (kernels_cpu/ml/tree.c). */
#include "ops/ml/common.h"

static onyx_status treeensemble_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16)));
    int64_t rows, cols;
    TRY(ml_rows_cols(c, 0, &rows, &cols));
    int64_t targets = attr_int(c->node, "n_targets", -1);
    if (!node_attr(c->node, "n_targets") || targets < 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "n_targets must be set and positive");
    int64_t dims[2] = {rows, targets};
    type_set_tensor(&c->out[0], c->in[0]->dtype, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"aggregate_function", ATTR_INT}, {"post_transform", ATTR_INT}, {"tree_roots", ATTR_INTS},
    {"nodes_hitrates", ATTR_TENSOR}, {"nodes_missing_value_tracks_true", ATTR_INTS},
    {"nodes_modes", ATTR_TENSOR}, {"leaf_weights", ATTR_TENSOR}, {"leaf_targetids", ATTR_INTS},
    {"nodes_falsenodeids", ATTR_INTS}, {"n_targets", ATTR_INT}, {"nodes_trueleafs", ATTR_INTS},
    {"nodes_featureids", ATTR_INTS}, {"nodes_splits", ATTR_TENSOR}, {"nodes_falseleafs", ATTR_INTS},
    {"nodes_truenodeids", ATTR_INTS}, {"membership_values", ATTR_TENSOR}, {NULL, 0}};

const op_schema op_TreeEnsemble[] = {
    {ML_DOMAIN, "TreeEnsemble", 5, 1, 1, 1, 1, attrs, treeensemble_infer, 0}, OP_END};
