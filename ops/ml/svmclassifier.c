/* Schema of ai.onnx.ml SVMClassifier: X [N, F] → labels Y [N] (int64 or string) and float scores
 * Z [N, width], width from the model's layout (ops/ml/svm.c). */
#include "ops/ml/svm.h"

static onyx_status svmclass_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    svm_layout l;
    int64_t rows;
    TRY(ml_svm_classifier_layout(c->node, &l));
    TRY(ml_svm_check_x(c, &l, &rows));
    type_set_tensor(&c->out[0], l.strings ? ONYX_STRING : ONYX_INT64, 1, &rows);
    if (c->n_out > 1) {
        int64_t dims[2] = {rows, l.width};
        type_set_tensor(&c->out[1], ONYX_FLOAT, 2, dims);
    }
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"classlabels_ints", ATTR_INTS}, {"classlabels_strings", ATTR_STRINGS}, {"coefficients", ATTR_FLOATS},
    {"kernel_params", ATTR_FLOATS},  {"kernel_type", ATTR_STRING},          {"post_transform", ATTR_STRING},
    {"prob_a", ATTR_FLOATS},         {"prob_b", ATTR_FLOATS},               {"rho", ATTR_FLOATS},
    {"support_vectors", ATTR_FLOATS}, {"vectors_per_class", ATTR_INTS},     {NULL, 0}};

const op_schema op_SVMClassifier[] = {
    {ML_DOMAIN, "SVMClassifier", 1, 1, 1, 1, 2, attrs, svmclass_infer, 0}, OP_END};
