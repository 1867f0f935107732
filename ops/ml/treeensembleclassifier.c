/* Schema of ai.onnx.ml TreeEnsembleClassifier (v1, v3, v5): X [N, F] → labels Y [N] (int64 or
 * string, from classlabels_*) and float scores Z [N, classes] (two columns when there is a single
 * class label: the binary case). Trees are checked by the kernel's compile. */
#include "ops/ml/common.h"

static onyx_status classifier_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    int64_t rows, cols, classes;
    onyx_dtype label_dt;
    TRY(ml_rows_cols(c, 0, &rows, &cols));
    TRY(ml_class_labels(c->node, "classlabels_int64s", "classlabels_strings", &classes, &label_dt));
    type_set_tensor(&c->out[0], label_dt, 1, &rows);
    if (c->n_out > 1) {
        int64_t dims[2] = {rows, classes == 1 ? 2 : classes};
        type_set_tensor(&c->out[1], ONYX_FLOAT, 2, dims);
    }
    return ONYX_OK;
}

#define CLASSIFIER_ATTRS                                                                           \
    {"base_values", ATTR_FLOATS}, {"class_ids", ATTR_INTS}, {"class_nodeids", ATTR_INTS},          \
        {"class_treeids", ATTR_INTS}, {"class_weights", ATTR_FLOATS},                              \
        {"classlabels_int64s", ATTR_INTS}, {"classlabels_strings", ATTR_STRINGS},                  \
        {"nodes_falsenodeids", ATTR_INTS}, {"nodes_featureids", ATTR_INTS},                        \
        {"nodes_hitrates", ATTR_FLOATS}, {"nodes_missing_value_tracks_true", ATTR_INTS},           \
        {"nodes_modes", ATTR_STRINGS}, {"nodes_nodeids", ATTR_INTS}, {"nodes_treeids", ATTR_INTS}, \
        {"nodes_truenodeids", ATTR_INTS}, {"nodes_values", ATTR_FLOATS}, {"post_transform", ATTR_STRING}

static const attr_spec attrs_v1[] = {CLASSIFIER_ATTRS, {NULL, 0}};
static const attr_spec attrs_v3[] = {CLASSIFIER_ATTRS,
                                     {"base_values_as_tensor", ATTR_TENSOR},
                                     {"class_weights_as_tensor", ATTR_TENSOR},
                                     {"nodes_hitrates_as_tensor", ATTR_TENSOR},
                                     {"nodes_values_as_tensor", ATTR_TENSOR},
                                     {NULL, 0}};

const op_schema op_TreeEnsembleClassifier[] = {
    {ML_DOMAIN, "TreeEnsembleClassifier", 1, 1, 1, 1, 2, attrs_v1, classifier_infer, 0},
    {ML_DOMAIN, "TreeEnsembleClassifier", 3, 1, 1, 1, 2, attrs_v3, classifier_infer, 0},
    {ML_DOMAIN, "TreeEnsembleClassifier", 5, 1, 1, 1, 2, attrs_v3, classifier_infer, 0},
    OP_END};
