/* Inference shared by the ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum): inputs
 * R (scalar rate), T (scalar int64 step), then `groups` lists of n tensors each (X, G, ...);
 * outputs are the lists named by `out_groups`, each typed like its input list. */
#ifndef ONYX_OPS_OPTIMIZER_H
#define ONYX_OPS_OPTIMIZER_H

#include "ops/schema.h"

#define OPS_TRAINING_DOMAIN "ai.onnx.preview.training"

static inline onyx_status ops_optimizer_infer(infer_ctx *c, int groups, const int *out_groups,
                                              int n_out_groups) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE)));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    for (int i = 0; i < 2; i++)
        if (c->in[i]->rank > 0)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected a scalar", i,
                              c->in[i]->rank);
    int rest = c->n_in - 2;
    if (rest <= 0 || rest % groups != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "has %d tensor inputs after R and T, expected a positive multiple of %d",
                          rest, groups);
    int n = rest / groups;
    if (c->n_out != n * n_out_groups)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "has %d outputs, expected %d (%d per tensor)",
                          c->n_out, n * n_out_groups, n_out_groups);
    for (int i = 0; i < n; i++) {
        int x = 2 + i;
        TRY(infer_dtype_in(c, x, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE)));
        for (int g = 1; g < groups; g++) {
            int k = 2 + g * n + i;
            TRY(infer_dtype_in(c, k, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE)));
            const type_info *a = c->in[x], *b = c->in[k];
            if (a->rank >= 0 && b->rank >= 0) {
                bool same = a->rank == b->rank;
                for (int d = 0; same && d < a->rank; d++)
                    if (a->dims[d] >= 0 && b->dims[d] >= 0 && a->dims[d] != b->dims[d])
                        same = false;
                if (!same)
                    return onyx_error(ONYX_ERR_SHAPE,
                                      "input %d's shape differs from input %d's (tensor %d)", k, x,
                                      i);
            }
        }
        for (int o = 0; o < n_out_groups; o++)
            TRY(infer_same_as_input(c, o * n + i, 2 + out_groups[o] * n + i));
    }
    return ONYX_OK;
}

#endif
