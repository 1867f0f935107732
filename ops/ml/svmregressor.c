/* Schema of ai.onnx.ml SVMRegressor: X [N, F] → Y [N, 1] float (regression, or ±1 for one-class
 * anomaly detection). */
#include "ops/ml/svm.h"

static onyx_status svmreg_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    svm_layout l;
    int64_t rows;
    TRY(ml_svm_regressor_layout(c->node, &l));
    TRY(ml_svm_check_x(c, &l, &rows));
    int64_t dims[2] = {rows, 1};
    type_set_tensor(&c->out[0], ONYX_FLOAT, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"coefficients", ATTR_FLOATS}, {"kernel_params", ATTR_FLOATS}, {"kernel_type", ATTR_STRING},
    {"n_supports", ATTR_INT},      {"one_class", ATTR_INT},        {"post_transform", ATTR_STRING},
    {"rho", ATTR_FLOATS},          {"support_vectors", ATTR_FLOATS}, {NULL, 0}};

const op_schema op_SVMRegressor[] = {{ML_DOMAIN, "SVMRegressor", 1, 1, 1, 1, 1, attrs, svmreg_infer, 0}, OP_END};
