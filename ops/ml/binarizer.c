/* Schema of ai.onnx.ml Binarizer: 1 where X > threshold, else 0, in X's type and shape. */
#include "ops/ml/common.h"

static onyx_status binarizer_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC));
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"threshold", ATTR_FLOAT}, {NULL, 0}};

const op_schema op_Binarizer[] = {{ML_DOMAIN, "Binarizer", 1, 1, 1, 1, 1, attrs, binarizer_infer, 0},
                                  OP_END};
