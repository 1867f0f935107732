/* Schema of ai.onnx.ml Scaler: (X - offset) * scale per column (one value = every column), float
 * output. */
#include "ops/ml/common.h"

static onyx_status scaler_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], ONYX_FLOAT, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"offset", ATTR_FLOATS}, {"scale", ATTR_FLOATS}, {NULL, 0}};

const op_schema op_Scaler[] = {{ML_DOMAIN, "Scaler", 1, 1, 1, 1, 1, attrs, scaler_infer, 0}, OP_END};
