/* Schemas of the unary activations (Relu, LeakyRelu, Elu, Selu, Celu, Gelu, HardSigmoid,
 * HardSwish, Mish, Softplus, Softsign, Swish, ThresholdedRelu, Shrink, Sigmoid, Tanh). They all
 * map a tensor to one of the same type and shape and differ only in attributes and allowed
 * types, so one file holds them with one inference. */
#include "ops/schema.h"

#include <string.h>

#define F3 (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))
#define F4 (F3 | DT_BIT(ONYX_BFLOAT16))

/* Element types per (op, since_version); versions not listed take F4. */
static const struct {
    const char *op;
    int since;
    dtype_mask types;
} act_types[] = {
    {"Relu", 1, F3},        {"Relu", 6, F3},          {"Relu", 14, F4 | DT_SINTS},
    {"LeakyRelu", 1, F3},   {"LeakyRelu", 6, F3},     {"Elu", 1, F3},
    {"Elu", 6, F3},         {"Selu", 1, F3},          {"Selu", 6, F3},
    {"Celu", 12, DT_BIT(ONYX_FLOAT)},                 {"HardSigmoid", 1, F3},
    {"HardSigmoid", 6, F3}, {"HardSwish", 14, F3},    {"Mish", 18, F3},
    {"Softplus", 1, F3},    {"Softsign", 1, F3},      {"ThresholdedRelu", 10, F3},
    {"Shrink", 9, F3 | DT_INTS},                      {"Sigmoid", 1, F3},
    {"Sigmoid", 6, F3},     {"Tanh", 1, F3},          {"Tanh", 6, F3},
};

static onyx_status act_infer(infer_ctx *c) {
    dtype_mask m = F4;
    for (size_t i = 0; i < sizeof act_types / sizeof act_types[0]; i++)
        if (act_types[i].since == c->node->version && strcmp(act_types[i].op, c->node->op_type) == 0)
            m = act_types[i].types;
    TRY(infer_dtype_in(c, 0, m));
    if (strcmp(c->node->op_type, "Gelu") == 0) {
        const char *a = attr_string(c->node, "approximate", "none");
        if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute approximate is '%s', expected "
                              "'none' or 'tanh'", a);
    }
    if (strcmp(c->node->op_type, "Celu") == 0 && attr_float(c->node, "alpha", 1.0f) == 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute alpha is 0, expected non-zero");
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec a_none[] = {{NULL, 0}};
static const attr_spec a_consumed[] = {{"consumed_inputs", ATTR_INTS}, {NULL, 0}};
static const attr_spec a_alpha[] = {{"alpha", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec a_alpha_c[] = {{"alpha", ATTR_FLOAT}, {"consumed_inputs", ATTR_INTS},
                                      {NULL, 0}};
static const attr_spec a_selu[] = {{"alpha", ATTR_FLOAT}, {"gamma", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec a_selu_c[] = {{"alpha", ATTR_FLOAT}, {"gamma", ATTR_FLOAT},
                                     {"consumed_inputs", ATTR_INTS}, {NULL, 0}};
static const attr_spec a_hsig[] = {{"alpha", ATTR_FLOAT}, {"beta", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec a_hsig_c[] = {{"alpha", ATTR_FLOAT}, {"beta", ATTR_FLOAT},
                                     {"consumed_inputs", ATTR_INTS}, {NULL, 0}};
static const attr_spec a_gelu[] = {{"approximate", ATTR_STRING}, {NULL, 0}};
static const attr_spec a_shrink[] = {{"bias", ATTR_FLOAT}, {"lambd", ATTR_FLOAT}, {NULL, 0}};

#define ACT(op, v, attrs) {"", #op, v, 1, 1, 1, 1, attrs, act_infer, 0}

const op_schema op_Relu[] = {ACT(Relu, 1, a_consumed), ACT(Relu, 6, a_none), ACT(Relu, 13, a_none),
                             ACT(Relu, 14, a_none), OP_END};
const op_schema op_LeakyRelu[] = {ACT(LeakyRelu, 1, a_alpha_c), ACT(LeakyRelu, 6, a_alpha),
                                  ACT(LeakyRelu, 16, a_alpha), OP_END};
const op_schema op_Elu[] = {ACT(Elu, 1, a_alpha_c), ACT(Elu, 6, a_alpha), ACT(Elu, 22, a_alpha),
                            OP_END};
const op_schema op_Selu[] = {ACT(Selu, 1, a_selu_c), ACT(Selu, 6, a_selu), ACT(Selu, 22, a_selu),
                             OP_END};
const op_schema op_Celu[] = {ACT(Celu, 12, a_alpha), ACT(Celu, 28, a_alpha), OP_END};
const op_schema op_Gelu[] = {ACT(Gelu, 20, a_gelu), OP_END};
const op_schema op_HardSigmoid[] = {ACT(HardSigmoid, 1, a_hsig_c), ACT(HardSigmoid, 6, a_hsig),
                                    ACT(HardSigmoid, 22, a_hsig), OP_END};
const op_schema op_HardSwish[] = {ACT(HardSwish, 14, a_none), ACT(HardSwish, 22, a_none), OP_END};
const op_schema op_Mish[] = {ACT(Mish, 18, a_none), ACT(Mish, 22, a_none), OP_END};
const op_schema op_Softplus[] = {ACT(Softplus, 1, a_none), ACT(Softplus, 22, a_none), OP_END};
const op_schema op_Softsign[] = {ACT(Softsign, 1, a_none), ACT(Softsign, 22, a_none), OP_END};
const op_schema op_Swish[] = {ACT(Swish, 24, a_alpha), OP_END};
const op_schema op_ThresholdedRelu[] = {ACT(ThresholdedRelu, 10, a_alpha),
                                        ACT(ThresholdedRelu, 22, a_alpha), OP_END};
const op_schema op_Shrink[] = {ACT(Shrink, 9, a_shrink), OP_END};
const op_schema op_Sigmoid[] = {ACT(Sigmoid, 1, a_consumed), ACT(Sigmoid, 6, a_none),
                                ACT(Sigmoid, 13, a_none), OP_END};
const op_schema op_Tanh[] = {ACT(Tanh, 1, a_consumed), ACT(Tanh, 6, a_none), ACT(Tanh, 13, a_none),
                             OP_END};
