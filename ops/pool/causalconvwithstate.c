/* Schema of CausalConvWithState: a stateful causal depthwise 1-D convolution (Mamba-style) that
 * also returns the last k-1 input positions as the next call's state. */
#include <string.h>

#include "ops/shape_common.h"

#define CCWS_T (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))

static onyx_status ccws_infer(infer_ctx *c) {
    for (int i = 0; i < 4; i++)
        if (i < 2 || ops_has_input(c, i)) TRY(infer_dtype_in(c, i, CCWS_T));
    TRY(infer_same_dtypes(c, 0, 4));
    const char *act = attr_string(c->node, "activation", "none");
    if (strcmp(act, "none") && strcmp(act, "silu") && strcmp(act, "swish"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute activation is '%s', expected none, "
                          "silu or swish", act);
    const type_info *x = c->in[0], *w = c->in[1];
    int64_t xd[3] = {-1, -1, -1}, k = -1;
    if (x->kind == ONYX_VALUE_TENSOR && x->rank >= 0) {
        if (x->rank != 3)
            return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected 3 (batch, channels, "
                              "length)", x->rank);
        memcpy(xd, x->dims, sizeof xd);
    }
    if (w->kind == ONYX_VALUE_TENSOR && w->rank >= 0) {
        if (w->rank != 3 || (w->dims[1] >= 0 && w->dims[1] != 1))
            return onyx_error(ONYX_ERR_SHAPE, "input 1 (weight) must be (channels, 1, k)");
        if (xd[1] >= 0 && w->dims[0] >= 0 && w->dims[0] != xd[1])
            return onyx_error(ONYX_ERR_SHAPE, "weight has %lld channels, input %lld",
                              (long long)w->dims[0], (long long)xd[1]);
        if (w->dims[2] == 0)
            return onyx_error(ONYX_ERR_SHAPE, "weight has kernel size 0, expected >= 1");
        k = w->dims[2];
        if (xd[1] < 0) xd[1] = w->dims[0];
    }
    const type_info *b = ops_has_input(c, 2) ? c->in[2] : NULL;
    if (b && b->kind == ONYX_VALUE_TENSOR && b->rank >= 0 &&
        (b->rank != 1 || (xd[1] >= 0 && b->dims[0] >= 0 && b->dims[0] != xd[1])))
        return onyx_error(ONYX_ERR_SHAPE, "input 2 (bias) must be (channels)");
    const type_info *ps = ops_has_input(c, 3) ? c->in[3] : NULL;
    if (ps && ps->kind == ONYX_VALUE_TENSOR && ps->rank >= 0) {
        int64_t want[3] = {xd[0], xd[1], k >= 1 ? k - 1 : -1};
        bool bad = ps->rank != 3;
        for (int i = 0; !bad && i < 3; i++)
            bad = want[i] >= 0 && ps->dims[i] >= 0 && ps->dims[i] != want[i];
        if (bad) {
            char a[128], e[128];
            return onyx_error(ONYX_ERR_SHAPE, "input 3 (past_state) has shape %s, expected %s",
                              shape_str(ps->rank, ps->dims, a, sizeof a),
                              shape_str(3, want, e, sizeof e));
        }
    }
    type_set_tensor(&c->out[0], x->dtype, 3, xd);
    if (c->n_out > 1) {
        int64_t sd[3] = {xd[0], xd[1], k >= 1 ? k - 1 : -1};
        type_set_tensor(&c->out[1], x->dtype, 3, sd);
    }
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"activation", ATTR_STRING}, {NULL, 0}};

const op_schema op_CausalConvWithState[] = {
    {"", "CausalConvWithState", 27, 2, 4, 1, 2, attrs, ccws_infer, 0},
    OP_END,
};
