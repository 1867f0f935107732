/* Schema of Momentum (ai.onnx.preview.training): R, T, X..., G..., V... -> X_new..., V_new...,
 * standard or Nesterov. */
#include <string.h>

#include "ops/training/optimizer.h"

static onyx_status momentum_infer(infer_ctx *c) {
    static const char *const required[] = {"alpha", "beta", "norm_coefficient", "mode"};
    for (int i = 0; i < 4; i++)
        if (!node_attr(c->node, required[i]))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute '%s' is required", required[i]);
    const char *mode = attr_string(c->node, "mode", "");
    if (strcmp(mode, "standard") != 0 && strcmp(mode, "nesterov") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "mode is '%s', expected standard or nesterov",
                          mode);
    static const int outs[] = {0, 2}; /* X, V */
    return ops_optimizer_infer(c, 3, outs, 2);
}

static const attr_spec attrs[] = {{"alpha", ATTR_FLOAT},
                                  {"beta", ATTR_FLOAT},
                                  {"mode", ATTR_STRING},
                                  {"norm_coefficient", ATTR_FLOAT},
                                  {NULL, 0}};

const op_schema op_Momentum[] = {{OPS_TRAINING_DOMAIN, "Momentum", 1, 5, ONYX_VARIADIC, 2,
                                  ONYX_VARIADIC, attrs, momentum_infer, 0},
                                 OP_END};
