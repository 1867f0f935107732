/* Schema of com.microsoft.Attention: self-attention with the Q/K/V projections packed in one
 * weight matrix, an optional mask (lengths, 0/1 masks), past/present key-value state and an
 * additive attention bias. */
#include "ops/contrib_nlp/contrib_nlp.h"

static onyx_status att_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CNLP_T));
    static const int same[] = {1, 2, 4, 5};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) TRY(cnlp_same_dtype(c, 0, same[i]));
    geom_attention d;
    TRY(cnlp_attention_dims(c->node, c->n_in, c->in, &d));
    if (c->n_out > 1 && c->node->outputs[1] >= 0 && d.head >= 0 && d.v_head >= 0 &&
        d.head != d.v_head)
        return onyx_error(ONYX_ERR_SHAPE, "present needs equal Q/K and V head sizes (%lld, %lld)",
                          (long long)d.head, (long long)d.v_head);
    onyx_dtype t = c->in[0]->dtype;
    int64_t y[3] = {d.batch, d.q_len, d.v_head < 0 ? -1 : d.q_heads * d.v_head};
    type_set_tensor(&c->out[0], t, 3, y);
    if (c->n_out > 1) {
        int64_t p[5] = {2, d.batch, d.q_heads, d.total_len, d.head};
        type_set_tensor(&c->out[1], t, 5, p);
    }
    infer_set_attention(c, &d);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"do_rotary", ATTR_INT},
                                  {"mask_filter_value", ATTR_FLOAT},
                                  {"num_heads", ATTR_INT},
                                  {"past_present_share_buffer", ATTR_INT},
                                  {"qkv_hidden_sizes", ATTR_INTS},
                                  {"rotary_embedding_dim", ATTR_INT},
                                  {"scale", ATTR_FLOAT},
                                  {"unidirectional", ATTR_INT},
                                  {NULL, 0}};

const op_schema op_MsAttention[] = {
    {CNLP_MS, "Attention", 1, 2, 7, 1, 2, attrs, att_infer, OP_GEOMETRY},
    OP_END,
};
