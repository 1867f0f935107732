/* Schemas of com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization: layer
 * (or RMS) normalization over the last axis of input + skip (+ bias), also giving the statistics
 * and the sum itself. They share this file because they share every shape rule. */
#include "ops/contrib_nlp/contrib_nlp.h"

/* skip: the input's shape, or [1, S, H] / [S, H] broadcast over the batch */
static onyx_status check_skip(const type_info *x, const type_info *s) {
    if (x->rank < 0 || s->rank < 0) return ONYX_OK;
    bool ok = s->rank == x->rank || (x->rank == 3 && s->rank == 2);
    for (int i = 0; ok && i < s->rank; i++) {
        int64_t xd = x->dims[x->rank - s->rank + i], sd = s->dims[i];
        if (!cnlp_agree(xd, sd) && !(i == 0 && s->rank == 3 && sd == 1)) ok = false;
    }
    if (ok) return ONYX_OK;
    char a[160], b[160];
    return onyx_error(ONYX_ERR_SHAPE,
                      "skip has shape %s, expected the input's %s or that "
                      "without (or with 1 as) its batch dim",
                      shape_str(s->rank, s->dims, a, sizeof a),
                      shape_str(x->rank, x->dims, b, sizeof b));
}

static onyx_status skip_infer(infer_ctx *c, bool rms) {
    TRY(infer_dtype_in(c, 0, CNLP_TD));
    TRY(infer_need_tensor(c, 1));
    TRY(infer_need_tensor(c, 2));
    for (int i = 1; i < c->n_in; i++) TRY(cnlp_same_dtype(c, 0, i));
    const type_info *x = c->in[0];
    if (x->rank >= 0 && x->rank != 2 && x->rank != 3) {
        char b[160];
        return onyx_error(ONYX_ERR_SHAPE, "input has shape %s, expected rank 2 or 3",
                          shape_str(x->rank, x->dims, b, sizeof b));
    }
    TRY(check_skip(x, c->in[1]));
    int64_t h = x->rank > 0 ? x->dims[x->rank - 1] : -1;
    static const char *const ln_names[] = {"gamma", "beta", "bias"};
    static const char *const rms_names[] = {"gamma", "bias"};
    for (int i = 2; i < c->n_in; i++) {
        if (!cnlp_has(c, i)) continue;
        const char *name = rms ? rms_names[i - 2] : ln_names[i - 2];
        const type_info *p = c->in[i];
        if (p->rank >= 0 && (p->rank != 1 || !cnlp_agree(p->dims[0], h))) {
            char b[160];
            return onyx_error(ONYX_ERR_SHAPE, "%s has shape %s, expected [%lld] (the hidden size)",
                              name, shape_str(p->rank, p->dims, b, sizeof b), (long long)h);
        }
    }
    TRY(infer_same_as_input(c, 0, 0));
    for (int o = 1; o < 3 && o < c->n_out; o++) {
        int64_t d[3];
        for (int i = 0; i < x->rank; i++) d[i] = i == x->rank - 1 ? 1 : x->dims[i];
        type_set_tensor(&c->out[o], ONYX_FLOAT, x->rank, x->rank < 0 ? NULL : d);
    }
    if (c->n_out > 3) TRY(infer_same_as_input(c, 3, 0));
    return ONYX_OK;
}

static onyx_status sln_infer(infer_ctx *c) { return skip_infer(c, false); }
static onyx_status ssln_infer(infer_ctx *c) { return skip_infer(c, true); }

static const attr_spec attrs[] = {{"epsilon", ATTR_FLOAT}, {NULL, 0}};

const op_schema op_MsSkipLayerNormalization[] = {
    {CNLP_MS, "SkipLayerNormalization", 1, 3, 5, 1, 4, attrs, sln_infer, 0},
    OP_END,
};

const op_schema op_MsSkipSimplifiedLayerNormalization[] = {
    {CNLP_MS, "SkipSimplifiedLayerNormalization", 1, 3, 4, 1, 4, attrs, ssln_infer, 0},
    OP_END,
};
