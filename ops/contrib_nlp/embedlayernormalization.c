/* Schema of com.microsoft.EmbedLayerNormalization: BERT's embedding layer (word + position
 * (+ segment) embeddings, then LayerNorm) with the mask turned into per-batch lengths. */
#include "ops/contrib_nlp/contrib_nlp.h"

static onyx_status want(infer_ctx *c, int i, const char *name, int rank, int64_t d0, int64_t d1) {
    if (!cnlp_has(c, i)) return ONYX_OK;
    const type_info *t = c->in[i];
    if (t->rank < 0) return ONYX_OK;
    if (t->rank == rank && cnlp_agree(t->dims[0], d0) && (rank < 2 || cnlp_agree(t->dims[1], d1)))
        return ONYX_OK;
    char b[160];
    return onyx_error(ONYX_ERR_SHAPE, "%s has shape %s, expected [%lld%s%lld]", name,
                      shape_str(t->rank, t->dims, b, sizeof b), (long long)d0,
                      rank == 2 ? ", " : "", rank == 2 ? (long long)d1 : 0LL);
}

static onyx_status eln_infer(infer_ctx *c) {
    static const int ids[] = {0, 1, 7, 8};
    for (size_t i = 0; i < 4; i++)
        if (cnlp_has(c, ids[i]) || ids[i] == 0) TRY(infer_dtype_in(c, ids[i], DT_BIT(ONYX_INT32)));
    TRY(infer_dtype_in(c, 2, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16)));
    for (int i = 3; i < 7; i++) {
        if (i != 4) TRY(infer_need_tensor(c, i));
        TRY(cnlp_same_dtype(c, 2, i));
    }
    if (cnlp_has(c, 1) != cnlp_has(c, 4))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "segment_ids and segment_embedding go together");
    const type_info *x = c->in[0], *w = c->in[2];
    int64_t b = x->rank == 2 ? x->dims[0] : -1, s = x->rank == 2 ? x->dims[1] : -1;
    int64_t h = w->rank == 2 ? w->dims[1] : -1;
    TRY(want(c, 0, "input_ids", 2, b, s));
    TRY(want(c, 1, "segment_ids", 2, b, s));
    TRY(want(c, 2, "word_embedding", 2, -1, h));
    TRY(want(c, 3, "position_embedding", 2, -1, h));
    TRY(want(c, 4, "segment_embedding", 2, -1, h));
    TRY(want(c, 5, "gamma", 1, h, -1));
    TRY(want(c, 6, "beta", 1, h, -1));
    TRY(want(c, 7, "mask", 2, b, s));
    if (cnlp_has(c, 8) && c->in[8]->rank == 2 && c->in[8]->dims[0] == 1)
        TRY(want(c, 8, "position_ids", 2, 1, s));
    else
        TRY(want(c, 8, "position_ids", 2, b, s));
    int64_t y[3] = {b, s, h};
    type_set_tensor(&c->out[0], w->dtype, 3, y);
    if (c->n_out > 1) type_set_tensor(&c->out[1], ONYX_INT32, 1, y);
    if (c->n_out > 2) type_set_tensor(&c->out[2], w->dtype, 3, y);
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"epsilon", ATTR_FLOAT}, {"mask_index_type", ATTR_INT}, {NULL, 0}};

const op_schema op_MsEmbedLayerNormalization[] = {
    {CNLP_MS, "EmbedLayerNormalization", 1, 7, 9, 1, 3, attrs, eln_infer, 0},
    OP_END,
};
