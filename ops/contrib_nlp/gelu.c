/* Schemas of the com.microsoft GELU family: Gelu (erf), BiasGelu (erf of input + bias), FastGelu
 * (tanh approximation, optional bias) and QuickGelu (x * sigmoid(alpha x)). One file because they
 * share one rule: the output is the input's type and shape, a bias is 1-D over the last axis. */
#include "ops/contrib_nlp/contrib_nlp.h"

static onyx_status gelu_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CNLP_TD));
    if (cnlp_has(c, 1)) {
        TRY(cnlp_same_dtype(c, 0, 1));
        const type_info *x = c->in[0], *b = c->in[1];
        int64_t h = x->rank > 0 ? x->dims[x->rank - 1] : -1;
        if (x->rank == 0)
            return onyx_error(ONYX_ERR_SHAPE, "input is a scalar, expected rank >= 1");
        if (b->rank >= 0 && (b->rank != 1 || !cnlp_agree(b->dims[0], h))) {
            char s[160];
            return onyx_error(ONYX_ERR_SHAPE,
                              "bias has shape %s, expected [%lld] (the input's "
                              "last dim)",
                              shape_str(b->rank, b->dims, s, sizeof s), (long long)h);
        }
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec quick_attrs[] = {{"alpha", ATTR_FLOAT}, {NULL, 0}};

const op_schema op_MsGelu[] = {
    {CNLP_MS, "Gelu", 1, 1, 1, 1, 1, NULL, gelu_infer, 0},
    OP_END,
};
const op_schema op_MsBiasGelu[] = {
    {CNLP_MS, "BiasGelu", 1, 2, 2, 1, 1, NULL, gelu_infer, 0},
    OP_END,
};
const op_schema op_MsFastGelu[] = {
    {CNLP_MS, "FastGelu", 1, 1, 2, 1, 1, NULL, gelu_infer, 0},
    OP_END,
};
const op_schema op_MsQuickGelu[] = {
    {CNLP_MS, "QuickGelu", 1, 1, 1, 1, 1, quick_attrs, gelu_infer, 0},
    OP_END,
};
