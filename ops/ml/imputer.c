/* Schema of ai.onnx.ml Imputer: replaces `replaced_value_*` (NaN by default for floats) in each
 * column of X [N, C] by that column's imputed value (one value = every column). */
#include "ops/ml/common.h"

static onyx_status imputer_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    int64_t rows, cols;
    TRY(ml_rows_cols(c, 0, &rows, &cols));
    const float *f;
    const int64_t *i;
    size_t nf = attr_floats(c->node, "imputed_value_floats", &f);
    size_t ni = attr_ints(c->node, "imputed_value_int64s", &i);
    onyx_dtype dt = c->in[0]->dtype;
    bool is_float = dt == ONYX_FLOAT || dt == ONYX_DOUBLE;
    size_t n = is_float ? nf : ni;
    if (n == 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s input needs imputed_value_%s", onyx_dtype_name(dt),
                          is_float ? "floats" : "int64s");
    if (n != 1 && cols >= 0 && (int64_t)n != cols)
        return onyx_error(ONYX_ERR_SHAPE, "%zu imputed values for %lld columns (expected 1 or %lld)",
                          n, (long long)cols, (long long)cols);
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"imputed_value_floats", ATTR_FLOATS}, {"imputed_value_int64s", ATTR_INTS},
                                  {"replaced_value_float", ATTR_FLOAT}, {"replaced_value_int64", ATTR_INT},
                                  {NULL, 0}};

const op_schema op_Imputer[] = {{ML_DOMAIN, "Imputer", 1, 1, 1, 1, 1, attrs, imputer_infer, 0}, OP_END};
