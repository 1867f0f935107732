/* Schema of Adam (ai.onnx.preview.training): R, T, X..., G..., V..., H... -> X_new..., V_new...,
 * H_new... */
#include "ops/training/optimizer.h"

static onyx_status adam_infer(infer_ctx *c) {
    static const int outs[] = {0, 2, 3}; /* X, V, H */
    return ops_optimizer_infer(c, 4, outs, 3);
}

static const attr_spec attrs[] = {{"alpha", ATTR_FLOAT},
                                  {"beta", ATTR_FLOAT},
                                  {"epsilon", ATTR_FLOAT},
                                  {"norm_coefficient", ATTR_FLOAT},
                                  {"norm_coefficient_post", ATTR_FLOAT},
                                  {NULL, 0}};

const op_schema op_Adam[] = {
    {OPS_TRAINING_DOMAIN, "Adam", 1, 6, ONYX_VARIADIC, 3, ONYX_VARIADIC, attrs, adam_infer, 0},
    OP_END};
