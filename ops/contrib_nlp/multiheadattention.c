/* Schema of com.microsoft.MultiHeadAttention: attention over separate (already projected) query,
 * key and value, with an optional packed projection bias, key padding mask, attention bias and
 * past/present key-value state. */
#include "ops/contrib_nlp/contrib_nlp.h"

static onyx_status mha_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CNLP_T));
    static const int same[] = {1, 2, 3, 5, 6, 7};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) TRY(cnlp_same_dtype(c, 0, same[i]));
    if (c->n_out > 3 && c->node->outputs[3] >= 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "output qk is not supported");
    geom_attention d;
    TRY(cnlp_mha_dims(c->node, c->n_in, c->in, &d));
    onyx_dtype t = c->in[0]->dtype;
    int64_t y[3] = {d.batch, d.q_len, d.v_head < 0 ? -1 : d.q_heads * d.v_head};
    type_set_tensor(&c->out[0], t, 3, y);
    if (c->n_out > 1) {
        int64_t p[4] = {d.batch, d.q_heads, d.total_len, d.head};
        type_set_tensor(&c->out[1], t, 4, p);
    }
    if (c->n_out > 2) {
        int64_t p[4] = {d.batch, d.q_heads, d.total_len, d.v_head};
        type_set_tensor(&c->out[2], t, 4, p);
    }
    infer_set_attention(c, &d);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"num_heads", ATTR_INT},
                                  {"mask_filter_value", ATTR_FLOAT},
                                  {"scale", ATTR_FLOAT},
                                  {"unidirectional", ATTR_INT},
                                  {NULL, 0}};

const op_schema op_MsMultiHeadAttention[] = {
    {CNLP_MS, "MultiHeadAttention", 1, 1, 10, 1, 4, attrs, mha_infer, OP_GEOMETRY},
    OP_END,
};
