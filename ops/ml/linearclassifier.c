/* Schema of ai.onnx.ml LinearClassifier: scores Z = X · coefficientsᵀ + intercepts per class (two
 * columns for a single coefficient row with two labels), labels Y by argmax (or threshold). */
#include "ops/ml/common.h"

static onyx_status linclass_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    int64_t rows, cols, labels;
    onyx_dtype label_dt;
    TRY(ml_rows_cols(c, 0, &rows, &cols));
    TRY(ml_class_labels(c->node, "classlabels_ints", "classlabels_strings", &labels, &label_dt));
    size_t nc = attr_floats(c->node, "coefficients", NULL), ni = attr_floats(c->node, "intercepts", NULL);
    if (nc == 0) return onyx_error(ONYX_ERR_INVALID_MODEL, "coefficients is empty");
    int64_t classes = cols > 0 ? (int64_t)nc / cols : -1;
    if (cols > 0 && (int64_t)nc % cols)
        return onyx_error(ONYX_ERR_SHAPE, "%zu coefficients do not split into rows of %lld columns", nc,
                          (long long)cols);
    if (classes > 0 && ni && (int64_t)ni != classes)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%zu intercepts for %lld classes", ni, (long long)classes);
    type_set_tensor(&c->out[0], label_dt, 1, &rows);
    if (c->n_out > 1) {
        int64_t dims[2] = {rows, classes == 1 && labels == 2 ? 2 : classes};
        type_set_tensor(&c->out[1], ONYX_FLOAT, 2, dims);
    }
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"classlabels_ints", ATTR_INTS}, {"classlabels_strings", ATTR_STRINGS},
                                  {"coefficients", ATTR_FLOATS},    {"intercepts", ATTR_FLOATS},
                                  {"multi_class", ATTR_INT},        {"post_transform", ATTR_STRING},
                                  {NULL, 0}};

const op_schema op_LinearClassifier[] = {
    {ML_DOMAIN, "LinearClassifier", 1, 1, 1, 1, 2, attrs, linclass_infer, 0}, OP_END};
