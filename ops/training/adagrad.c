/* Schema of Adagrad (ai.onnx.preview.training): R, T, X..., G..., H... -> X_new..., H_new... */
#include "ops/training/optimizer.h"

static onyx_status adagrad_infer(infer_ctx *c) {
    static const int outs[] = {0, 2}; /* X, H */
    return ops_optimizer_infer(c, 3, outs, 2);
}

static const attr_spec attrs[] = {{"norm_coefficient", ATTR_FLOAT},
                                  {"decay_factor", ATTR_FLOAT},
                                  {"epsilon", ATTR_FLOAT},
                                  {NULL, 0}};

const op_schema op_Adagrad[] = {{OPS_TRAINING_DOMAIN, "Adagrad", 1, 5, ONYX_VARIADIC, 2,
                                 ONYX_VARIADIC, attrs, adagrad_infer, 0},
                                OP_END};
