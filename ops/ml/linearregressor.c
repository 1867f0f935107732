/* Schema of ai.onnx.ml LinearRegressor: Y [N, targets] = X [N, C] · coefficientsᵀ + intercepts,
 * float output. */
#include "ops/ml/common.h"

static onyx_status linreg_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    int64_t rows, cols, targets = attr_int(c->node, "targets", 1);
    TRY(ml_rows_cols(c, 0, &rows, &cols));
    size_t nc = attr_floats(c->node, "coefficients", NULL), ni = attr_floats(c->node, "intercepts", NULL);
    if (targets < 1 || nc % (size_t)targets || (ni && ni != (size_t)targets))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%zu coefficients and %zu intercepts for %lld targets",
                          nc, ni, (long long)targets);
    if (cols >= 0 && (int64_t)nc / targets != cols) /* (nc % targets is 0 here) */
        return onyx_error(ONYX_ERR_SHAPE, "X has %lld columns but there are %zu coefficients for %lld "
                          "targets", (long long)cols, nc, (long long)targets);
    int64_t dims[2] = {rows, targets};
    type_set_tensor(&c->out[0], ONYX_FLOAT, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"coefficients", ATTR_FLOATS}, {"intercepts", ATTR_FLOATS},
                                  {"post_transform", ATTR_STRING}, {"targets", ATTR_INT}, {NULL, 0}};

const op_schema op_LinearRegressor[] = {
    {ML_DOMAIN, "LinearRegressor", 1, 1, 1, 1, 1, attrs, linreg_infer, 0}, OP_END};
