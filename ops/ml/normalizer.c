/* Schema of ai.onnx.ml Normalizer: each row divided by its MAX, L1 or L2 norm; float output. */
#include <string.h>

#include "ops/ml/common.h"

static onyx_status normalizer_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    int64_t rows, cols;
    TRY(ml_rows_cols(c, 0, &rows, &cols));
    const char *norm = attr_string(c->node, "norm", "MAX");
    if (strcmp(norm, "MAX") && strcmp(norm, "L1") && strcmp(norm, "L2"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "norm '%s' is not MAX, L1 or L2", norm);
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], ONYX_FLOAT, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"norm", ATTR_STRING}, {NULL, 0}};

const op_schema op_Normalizer[] = {
    {ML_DOMAIN, "Normalizer", 1, 1, 1, 1, 1, attrs, normalizer_infer, 0}, OP_END};
