/* Schema of Attention (v23; v24 adds nonpad_kv_seqlen, the per-batch count of valid keys; v25
 * the sliding window, left_window_size and right_window_size): scaled dot-product attention over
 * 3-D packed or 4-D inputs, with GQA, masks, a KV cache and the optional Q*K^T output. */
#include "ops/attention/attention_common.h"

static const type_info *opt_in(const infer_ctx *c, int i) { return i < c->n_in ? c->in[i] : NULL; }

static onyx_status attention_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    for (int i = 0; i < 3; i++) TRY(infer_dtype_in(c, i, OPS_ATT_FLOATS));
    if (c->in[1]->dtype != c->in[0]->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "K has type %s, expected Q's %s",
                          onyx_dtype_name(c->in[1]->dtype), onyx_dtype_name(c->in[0]->dtype));
    const type_info *mask = opt_in(c, 3), *pk = opt_in(c, 4), *pv = opt_in(c, 5),
                    *nonpad = opt_in(c, 6);
    if (mask)
        TRY(infer_dtype_in(c, 3, OPS_ATT_FLOATS | DT_INTS | DT_BIT(ONYX_BOOL)));
    if (pk) {
        TRY(infer_dtype_in(c, 4, OPS_ATT_FLOATS));
        if (pk->dtype != c->in[0]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "past_key has type %s, expected Q's %s",
                              onyx_dtype_name(pk->dtype), onyx_dtype_name(c->in[0]->dtype));
    }
    if (pv) {
        TRY(infer_dtype_in(c, 5, OPS_ATT_FLOATS));
        if (pv->dtype != c->in[2]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "past_value has type %s, expected V's %s",
                              onyx_dtype_name(pv->dtype), onyx_dtype_name(c->in[2]->dtype));
    }
    if (nonpad) TRY(infer_dtype_in(c, 6, DT_BIT(ONYX_INT64)));
    /* the causal and window offset is past_sequence_length with an internal cache and
     * nonpad_kv_seqlen - q_sequence_length with an external one: the two together have none
     * (onnx's reference and onnxruntime refuse them too) */
    if (nonpad && (pk || pv))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "nonpad_kv_seqlen cannot be combined with "
                          "past_key and past_value");
    if (n->version >= 25) {
        static const char *const sides[2] = {"left_window_size", "right_window_size"};
        for (int i = 0; i < 2; i++)
            if (attr_int(n, sides[i], -1) < -1)
                return onyx_error(ONYX_ERR_INVALID_MODEL, "%s is %lld, expected -1 (unbounded) "
                                  "or >= 0", sides[i], (long long)attr_int(n, sides[i], -1));
    }
    int64_t mode = attr_int(n, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "qk_matmul_output_mode is %lld, expected 0..3",
                          (long long)mode);
    if (node_attr(n, "softmax_precision")) {
        int64_t sp = attr_int(n, "softmax_precision", 0);
        if (sp < 0 || sp > 31 || !dtype_in((onyx_dtype)sp, OPS_ATT_FLOATS))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "softmax_precision is %lld, expected a "
                              "float type (1, 10, 11 or 16)", (long long)sp);
    }
    if (attr_float(n, "softcap", 0) < 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "softcap is %g, expected >= 0",
                          (double)attr_float(n, "softcap", 0));

    onyx_dtype qt = c->in[0]->dtype, vt = c->in[2]->dtype;
    bool ranks_known = c->in[0]->rank >= 0 || c->in[1]->rank >= 0 || c->in[2]->rank >= 0;
    if (!ranks_known) {
        type_set_tensor(&c->out[0], qt, -1, NULL);
        if (c->n_out > 1) type_set_tensor(&c->out[1], qt, 4, NULL);
        if (c->n_out > 2) type_set_tensor(&c->out[2], vt, 4, NULL);
        if (c->n_out > 3) type_set_tensor(&c->out[3], qt, 4, NULL);
        return ONYX_OK;
    }
    geom_attention d;
    TRY(ops_attention_dims(n, c->in[0], c->in[1], c->in[2], pk, pv, &d));
    /* v25 says the head counts go with 3-D inputs only (v23/v24 let 4-D ones ignore them) */
    if (n->version >= 25 && !d.packed &&
        (node_attr(n, "q_num_heads") || node_attr(n, "kv_num_heads")))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "q_num_heads and kv_num_heads must not be set "
                          "for 4-D inputs");
    if (mask) TRY(ops_attention_check_mask(mask, &d));
    if (nonpad && nonpad->rank >= 0 &&
        (nonpad->rank != 1 || (nonpad->dims[0] >= 0 && d.batch >= 0 && nonpad->dims[0] != d.batch)))
        return onyx_error(ONYX_ERR_SHAPE, "nonpad_kv_seqlen must have shape [%lld]",
                          (long long)d.batch);
    if (d.packed) {
        int64_t hidden = d.v_head < 0 ? -1 : d.q_heads * d.v_head;
        type_set_tensor(&c->out[0], qt, 3, (const int64_t[]){d.batch, d.q_len, hidden});
    } else {
        type_set_tensor(&c->out[0], qt, 4,
                        (const int64_t[]){d.batch, d.q_heads, d.q_len, d.v_head});
    }
    if (c->n_out > 1)
        type_set_tensor(&c->out[1], qt, 4,
                        (const int64_t[]){d.batch, d.kv_heads, d.total_len, d.head});
    if (c->n_out > 2)
        type_set_tensor(&c->out[2], vt, 4,
                        (const int64_t[]){d.batch, d.kv_heads, d.total_len, d.v_head});
    if (c->n_out > 3)
        type_set_tensor(&c->out[3], qt, 4,
                        (const int64_t[]){d.batch, d.q_heads, d.q_len, d.total_len});
    infer_set_attention(c, &d);
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"is_causal", ATTR_INT},      {"kv_num_heads", ATTR_INT},
    {"q_num_heads", ATTR_INT},    {"qk_matmul_output_mode", ATTR_INT},
    {"scale", ATTR_FLOAT},        {"softcap", ATTR_FLOAT},
    {"softmax_precision", ATTR_INT}, {NULL, 0},
};

static const attr_spec attrs25[] = {
    {"is_causal", ATTR_INT},         {"kv_num_heads", ATTR_INT},
    {"left_window_size", ATTR_INT},  {"q_num_heads", ATTR_INT},
    {"qk_matmul_output_mode", ATTR_INT}, {"right_window_size", ATTR_INT},
    {"scale", ATTR_FLOAT},           {"softcap", ATTR_FLOAT},
    {"softmax_precision", ATTR_INT}, {NULL, 0},
};

const op_schema op_Attention[] = {
    {"", "Attention", 23, 3, 6, 1, 4, attrs, attention_infer, OP_GEOMETRY},
    {"", "Attention", 24, 3, 7, 1, 4, attrs, attention_infer, OP_GEOMETRY},
    {"", "Attention", 25, 3, 7, 1, 4, attrs25, attention_infer, OP_GEOMETRY},
    OP_END,
};
