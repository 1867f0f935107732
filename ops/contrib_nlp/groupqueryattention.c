/* Schema of com.microsoft.GroupQueryAttention: causal attention where groups of query heads share
 * a key/value head, with per-batch lengths (seqlens_k) and a BNSH past/present key-value cache. */
#include "ops/contrib_nlp/contrib_nlp.h"

/* total_sequence_length's value when inference sees it, else -1 */
static int64_t total_value(const infer_ctx *c) {
    const tensor *t = c->n_in > 6 && c->in_value ? c->in_value[6] : NULL;
    if (!t || t->dtype != ONYX_INT32 || t->numel != 1) return -1;
    return ((const int32_t *)t->data)[0];
}

static onyx_status gqa_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CNLP_T));
    cnlp_kv_quant kq;
    TRY(cnlp_gqa_kv_quant(c->node, &kq));
    for (int i = 1; i < (kq.bits ? 3 : 5); i++) TRY(cnlp_same_dtype(c, 0, i));
    int64_t total = total_value(c);
    geom_attention d;
    TRY(cnlp_gqa_dims(c->node, c->n_in, c->in, total, &d));
    /* output_qk exactly when qk_output asks for it, as onnxruntime */
    bool qk_out = c->n_out > 3 && c->node->outputs[3] >= 0;
    if (qk_out != (attr_int(c->node, "qk_output", 0) != 0))
        return onyx_error(ONYX_ERR_INVALID_MODEL, qk_out ? "output output_qk needs qk_output 1 "
                                                           "(the scores) or 2 (the probabilities)"
                                                         : "qk_output is set but output output_qk "
                                                           "is absent");
    onyx_dtype t = c->in[0]->dtype;
    int64_t y[3] = {d.batch, d.q_len, d.head < 0 ? -1 : d.q_heads * d.head};
    type_set_tensor(&c->out[0], t, 3, y);
    /* the present caches: float as the query, or int8, or int4 pairs in half the bytes */
    onyx_dtype cache = !kq.bits ? t : kq.bits == 8 ? ONYX_INT8 : ONYX_UINT8;
    int64_t cols = kq.bits == 4 && d.head >= 0 ? d.head / 2 : d.head;
    for (int o = 1; o < 3 && o < c->n_out; o++) {
        int64_t p[4] = {d.batch, d.kv_heads, d.total_len, cols};
        type_set_tensor(&c->out[o], cache, 4, p);
    }
    if (qk_out) {
        int64_t qk[4] = {d.batch, d.q_heads, d.q_len, total};
        type_set_tensor(&c->out[3], t, 4, qk);
    }
    infer_set_attention(c, &d);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"num_heads", ATTR_INT},
                                  {"kv_num_heads", ATTR_INT},
                                  {"scale", ATTR_FLOAT},
                                  {"softcap", ATTR_FLOAT},
                                  {"local_window_size", ATTR_INT},
                                  {"causal", ATTR_INT},
                                  {"do_rotary", ATTR_INT},
                                  {"rotary_interleaved", ATTR_INT},
                                  {"smooth_softmax", ATTR_INT},
                                  {"kv_cache_bit_width", ATTR_INT},
                                  {"k_quant_type", ATTR_STRING},
                                  {"v_quant_type", ATTR_STRING},
                                  {"sliding_window_cache", ATTR_INT},
                                  {"qk_output", ATTR_INT},
                                  {"qk_norm_epsilon", ATTR_FLOAT},
                                  {NULL, 0}};

const op_schema op_MsGroupQueryAttention[] = {
    {CNLP_MS, "GroupQueryAttention", 1, 7, 16, 1, 4, attrs, gqa_infer, OP_GEOMETRY},
    OP_END,
};
