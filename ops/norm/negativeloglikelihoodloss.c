/* Schemas of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: the loss of class scores
 * [N, C, d1, ...] against labels [N, d1, ...] with optional class weights, unreduced or summed or
 * averaged. They share this file because their inputs, labels and reductions are the same;
 * SoftmaxCrossEntropyLoss adds a log-softmax first (and may output it). */
#include <string.h>

#include "ops/shape_common.h"

#define LOSS_TYPES_12 (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static onyx_status loss_infer(infer_ctx *c, bool bf16) {
    dtype_mask m = LOSS_TYPES_12 | (bf16 ? DT_BIT(ONYX_BFLOAT16) : 0);
    TRY(infer_dtype_in(c, 0, m));
    TRY(infer_dtype_in(c, 1, OPS_DT_INDEX));
    if (c->n_in > 2 && c->in[2]) {
        TRY(infer_dtype_in(c, 2, m));
        if (c->in[0]->dtype != ONYX_UNDEFINED && c->in[2]->dtype != ONYX_UNDEFINED &&
            c->in[0]->dtype != c->in[2]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input 2 has type %s, expected %s like input 0",
                              onyx_dtype_name(c->in[2]->dtype), onyx_dtype_name(c->in[0]->dtype));
    }
    const char *red = attr_string(c->node, "reduction", "mean");
    bool none = strcmp(red, "none") == 0;
    if (!none && strcmp(red, "sum") != 0 && strcmp(red, "mean") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "attribute reduction is '%s', expected 'none', 'sum' or 'mean'", red);
    const type_info *x = c->in[0], *t = c->in[1];
    if (x->rank >= 0 && x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2 (N x C x ...)",
                          x->rank);
    if (x->rank >= 0 && t->rank >= 0) {
        if (t->rank != x->rank - 1)
            return onyx_error(ONYX_ERR_SHAPE, "input 1 (labels) has rank %d, expected %d", t->rank,
                              x->rank - 1);
        for (int d = 0; d < t->rank; d++) {
            int64_t xd = x->dims[d == 0 ? 0 : d + 1];
            if (xd >= 0 && t->dims[d] >= 0 && xd != t->dims[d])
                return onyx_error(ONYX_ERR_SHAPE, "input 1 (labels) dim %d is %lld, expected %lld",
                                  d, (long long)t->dims[d], (long long)xd);
        }
    }
    if (c->n_in > 2 && c->in[2] && c->in[2]->rank >= 0) {
        const type_info *w = c->in[2];
        if (w->rank != 1)
            return onyx_error(ONYX_ERR_SHAPE, "input 2 (weights) has rank %d, expected 1 ([C])",
                              w->rank);
        if (x->rank >= 0 && x->dims[1] >= 0 && w->dims[0] >= 0 && w->dims[0] != x->dims[1])
            return onyx_error(ONYX_ERR_SHAPE,
                              "input 2 (weights) has %lld elements, expected C = %lld",
                              (long long)w->dims[0], (long long)x->dims[1]);
    }
    if (none) {
        if (t->rank < 0) {
            type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        } else {
            int64_t dims[ONYX_MAX_RANK];
            for (int d = 0; d < t->rank; d++)
                dims[d] = t->dims[d] >= 0 || x->rank < 0 ? t->dims[d] : x->dims[d == 0 ? 0 : d + 1];
            type_set_tensor(&c->out[0], x->dtype, t->rank, dims);
        }
    } else {
        type_set_tensor(&c->out[0], x->dtype, 0, NULL);
    }
    if (c->n_out > 1) TRY(infer_same_as_input(c, 1, 0));
    return ONYX_OK;
}

static onyx_status nll_infer(infer_ctx *c) { return loss_infer(c, c->node->version >= 22); }
static onyx_status sce_infer(infer_ctx *c) { return loss_infer(c, c->node->version >= 13); }

static const attr_spec attrs[] = {
    {"ignore_index", ATTR_INT}, {"reduction", ATTR_STRING}, {NULL, 0}};

const op_schema op_NegativeLogLikelihoodLoss[] = {
    {"", "NegativeLogLikelihoodLoss", 12, 2, 3, 1, 1, attrs, nll_infer, 0},
    {"", "NegativeLogLikelihoodLoss", 13, 2, 3, 1, 1, attrs, nll_infer, 0},
    {"", "NegativeLogLikelihoodLoss", 22, 2, 3, 1, 1, attrs, nll_infer, 0},
    OP_END,
};

const op_schema op_SoftmaxCrossEntropyLoss[] = {
    {"", "SoftmaxCrossEntropyLoss", 12, 2, 3, 1, 2, attrs, sce_infer, 0},
    {"", "SoftmaxCrossEntropyLoss", 13, 2, 3, 1, 2, attrs, sce_infer, 0},
    OP_END,
};
