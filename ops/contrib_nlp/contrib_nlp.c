/* Geometry of the com.microsoft attention-family ops, shared by inference and the CPU kernels
 * (see contrib_nlp.h): every refusal of a form onyx does not implement lives here, once. */
#include "ops/contrib_nlp/contrib_nlp.h"

#include <math.h>
#include <string.h>

/* dim i of t, -1 when t is absent or its rank unknown */
static int64_t dim(const type_info *t, int i) {
    return t && t->rank > i && i >= 0 ? t->dims[i] : -1;
}
static int64_t mul(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a * b; }
static int64_t add(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a + b; }
static int64_t quot(int64_t a, int64_t b) { return a < 0 || b <= 0 ? -1 : a / b; }

static const type_info *input(int n_in, const type_info *const *in, int i) {
    return i < n_in ? in[i] : NULL;
}

onyx_status cnlp_same_dtype(infer_ctx *c, int ref, int i) {
    if (!cnlp_has(c, i)) return ONYX_OK;
    TRY(infer_need_tensor(c, i));
    onyx_dtype a = c->in[ref]->dtype, b = c->in[i]->dtype;
    if (a == ONYX_UNDEFINED || b == ONYX_UNDEFINED || a == b) return ONYX_OK;
    return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected input %d's %s", i,
                      onyx_dtype_name(b), ref, onyx_dtype_name(a));
}

static onyx_status want_rank(const type_info *t, const char *name, int r0, int r1) {
    if (!t || t->rank < 0 || t->rank == r0 || t->rank == r1) return ONYX_OK;
    char b[160];
    if (r0 == r1)
        return onyx_error(ONYX_ERR_SHAPE, "%s has shape %s, expected rank %d", name,
                          shape_str(t->rank, t->dims, b, sizeof b), r0);
    return onyx_error(ONYX_ERR_SHAPE, "%s has shape %s, expected rank %d or %d", name,
                      shape_str(t->rank, t->dims, b, sizeof b), r0, r1);
}

static onyx_status want_dim(const type_info *t, const char *name, int i, int64_t want,
                            const char *what) {
    int64_t got = dim(t, i);
    if (cnlp_agree(got, want)) return ONYX_OK;
    char b[160];
    return onyx_error(ONYX_ERR_SHAPE, "%s has shape %s: dim %d is %lld, expected %lld (%s)", name,
                      shape_str(t->rank, t->dims, b, sizeof b), i, (long long)got, (long long)want,
                      what);
}

static onyx_status want_dtype(const type_info *t, const char *name, onyx_dtype d) {
    if (!t || t->dtype == ONYX_UNDEFINED || t->dtype == d) return ONYX_OK;
    return onyx_error(ONYX_ERR_SHAPE, "%s has type %s, expected %s", name,
                      onyx_dtype_name(t->dtype), onyx_dtype_name(d));
}

static onyx_status refuse_input(const type_info *t, const char *name, const char *why) {
    if (!t) return ONYX_OK;
    return onyx_error(ONYX_ERR_UNSUPPORTED, "input %s is not supported (%s)", name, why);
}

static onyx_status positive_heads(const graph_node *n, const char *attr, int64_t *out) {
    *out = attr_int(n, attr, 0);
    if (*out <= 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute %s is %lld, expected > 0", attr,
                          (long long)*out);
    return ONYX_OK;
}

static onyx_status divisible(int64_t hidden, int64_t heads, const char *what) {
    if (hidden < 0 || hidden % heads == 0) return ONYX_OK;
    return onyx_error(ONYX_ERR_SHAPE, "%s %lld is not a multiple of num_heads %lld", what,
                      (long long)hidden, (long long)heads);
}

/* key_padding_mask / mask_index: int32 of rank 1 ([B] or [2B]), 2 ([B, T]) or 3 ([B, S, T]) */
static onyx_status mask_kind(const type_info *m, const char *name, bool allow_start,
                             cnlp_att_dims *d) {
    d->mask = CNLP_MASK_NONE;
    if (!m) return ONYX_OK;
    TRY(want_dtype(m, name, ONYX_INT32));
    char b[160];
    switch (m->rank) {
    case -1: d->mask = CNLP_MASK_2D; return ONYX_OK; /* decided at run time */
    case 1: {
        int64_t n = m->dims[0];
        d->mask = CNLP_MASK_END;
        if (n < 0 || d->batch < 0 || n == d->batch) return ONYX_OK;
        if (allow_start && n == 2 * d->batch) {
            d->mask = CNLP_MASK_END_START;
            return ONYX_OK;
        }
        if (n == 3 * d->batch + 2)
            return onyx_error(ONYX_ERR_UNSUPPORTED,
                              "%s of shape [3*batch+2] (the GPU's "
                              "cumulative sequence lengths) is not supported on the CPU",
                              name);
        return onyx_error(ONYX_ERR_SHAPE, "%s has shape [%lld], expected [%lld] (lengths)%s", name,
                          (long long)n, (long long)d->batch,
                          allow_start ? " or [2*batch] (ends, then starts)" : "");
    }
    case 2:
        d->mask = CNLP_MASK_2D;
        TRY(want_dim(m, name, 0, d->batch, "batch"));
        return want_dim(m, name, 1, d->total_len, "total sequence length");
    case 3:
        d->mask = CNLP_MASK_3D;
        TRY(want_dim(m, name, 0, d->batch, "batch"));
        TRY(want_dim(m, name, 1, d->q_len, "sequence length"));
        return want_dim(m, name, 2, d->total_len, "total sequence length");
    case 4:
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "%s of rank 4 (Megatron's [B, 1, max, max] "
                          "mask) is not supported on the CPU",
                          name);
    default:
        return onyx_error(ONYX_ERR_SHAPE, "%s has shape %s, expected rank 1, 2 or 3", name,
                          shape_str(m->rank, m->dims, b, sizeof b));
    }
}

onyx_status cnlp_check_attn_bias(const type_info *t, const cnlp_att_dims *d) {
    if (!t) return ONYX_OK;
    TRY(want_rank(t, "attention_bias", 4, 4));
    if (t->rank < 0) return ONYX_OK;
    int64_t b = t->dims[0], h = t->dims[1];
    char s[160];
    if ((b >= 0 && b != 1 && !cnlp_agree(b, d->batch)) ||
        (h >= 0 && h != 1 && !cnlp_agree(h, d->q_heads)))
        return onyx_error(ONYX_ERR_SHAPE,
                          "attention_bias has shape %s, expected [%lld or 1, "
                          "%lld or 1, %lld, %lld]",
                          shape_str(t->rank, t->dims, s, sizeof s), (long long)d->batch,
                          (long long)d->q_heads, (long long)d->q_len, (long long)d->total_len);
    TRY(want_dim(t, "attention_bias", 2, d->q_len, "sequence length"));
    return want_dim(t, "attention_bias", 3, d->total_len, "total sequence length");
}

float cnlp_att_scale(const graph_node *n, int64_t head) {
    float s = attr_float(n, "scale", 0.0f);
    if (s != 0.0f) return s;
    return head > 0 ? 1.0f / sqrtf((float)head) : 1.0f;
}

static void dims_init(cnlp_att_dims *d) {
    memset(d, 0, sizeof *d);
    d->batch = d->q_len = d->kv_len = d->total_len = d->in_hidden = -1;
    d->q_heads = d->kv_heads = d->head = d->v_head = -1;
}

onyx_status cnlp_attention_dims(const graph_node *n, int n_in, const type_info *const *in,
                                cnlp_att_dims *d) {
    dims_init(d);
    const type_info *x = input(n_in, in, 0), *w = input(n_in, in, 1), *bias = input(n_in, in, 2),
                    *mask = input(n_in, in, 3), *past = input(n_in, in, 4),
                    *ab = input(n_in, in, 5), *psl = input(n_in, in, 6);
    if (attr_int(n, "do_rotary", 0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "do_rotary=1 is not supported");
    if (attr_int(n, "past_present_share_buffer", 0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "past_present_share_buffer=1 is not supported");
    TRY(refuse_input(psl, "past_sequence_length", "shared past/present buffers"));
    int64_t heads;
    TRY(positive_heads(n, "num_heads", &heads));
    TRY(want_rank(x, "input", 3, 3));
    TRY(want_rank(w, "weights", 2, 2));
    TRY(want_rank(bias, "bias", 1, 1));
    d->batch = dim(x, 0);
    d->q_len = d->kv_len = dim(x, 1);
    d->in_hidden = dim(x, 2);
    d->q_heads = d->kv_heads = heads;
    TRY(want_dim(w, "weights", 0, d->in_hidden, "the input's hidden size"));
    int64_t width = dim(w, 1) >= 0 ? dim(w, 1) : dim(bias, 0), hq, hk, hv;
    const int64_t *qkv;
    size_t nq = attr_ints(n, "qkv_hidden_sizes", &qkv);
    if (nq) {
        if (nq != 3 || qkv[0] <= 0 || qkv[1] <= 0 || qkv[2] <= 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "qkv_hidden_sizes must be 3 positive sizes");
        hq = qkv[0], hk = qkv[1], hv = qkv[2];
        if (width >= 0 && hq + hk + hv != width)
            return onyx_error(ONYX_ERR_SHAPE,
                              "qkv_hidden_sizes add up to %lld, but the weights "
                              "have %lld columns",
                              (long long)(hq + hk + hv), (long long)width);
    } else {
        if (width >= 0 && width % 3 != 0)
            return onyx_error(ONYX_ERR_SHAPE,
                              "weights have %lld columns, not 3 equal parts "
                              "(set qkv_hidden_sizes)",
                              (long long)width);
        hq = hk = hv = width >= 0 ? width / 3 : -1;
    }
    if (hq >= 0 && hq != hk)
        return onyx_error(ONYX_ERR_SHAPE, "Q and K hidden sizes differ (%lld, %lld)", (long long)hq,
                          (long long)hk);
    TRY(want_dim(bias, "bias", 0, width, "the weights' columns"));
    TRY(divisible(hq, heads, "Q hidden size"));
    TRY(divisible(hv, heads, "V hidden size"));
    d->head = quot(hq, heads);
    d->v_head = quot(hv, heads);
    d->past_len = 0;
    if (past) {
        TRY(want_rank(past, "past", 5, 5));
        if (hk >= 0 && hv >= 0 && hk != hv)
            return onyx_error(ONYX_ERR_SHAPE, "past needs equal K and V hidden sizes");
        TRY(want_dim(past, "past", 0, 2, "key and value"));
        TRY(want_dim(past, "past", 1, d->batch, "batch"));
        TRY(want_dim(past, "past", 2, heads, "num_heads"));
        TRY(want_dim(past, "past", 4, d->head, "head size"));
        d->past_len = dim(past, 3);
    }
    d->total_len = add(d->past_len, d->kv_len);
    if (past && ab)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "Attention takes past or attention_bias, not "
                                                  "both (as onnxruntime)");
    TRY(mask_kind(mask, "mask_index", true, d));
    return cnlp_check_attn_bias(ab, d);
}

onyx_status cnlp_mha_dims(const graph_node *n, int n_in, const type_info *const *in,
                          cnlp_att_dims *d) {
    dims_init(d);
    const type_info *q = input(n_in, in, 0), *k = input(n_in, in, 1), *v = input(n_in, in, 2),
                    *bias = input(n_in, in, 3), *kpm = input(n_in, in, 4), *ab = input(n_in, in, 5),
                    *pk = input(n_in, in, 6), *pv = input(n_in, in, 7);
    TRY(refuse_input(input(n_in, in, 8), "past_sequence_length", "shared past/present buffers"));
    TRY(refuse_input(input(n_in, in, 9), "cache_indirection", "beam search"));
    int64_t heads;
    TRY(positive_heads(n, "num_heads", &heads));
    if (q && q->rank == 5)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "packed QKV (a 5-D query) is not supported");
    if (k && k->rank == 5)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "packed KV (a 5-D key) is not supported");
    if (!k || !v)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "key and value are required (packed QKV is not "
                                                "supported)");
    TRY(want_rank(q, "query", 3, 3));
    TRY(want_rank(k, "key", 3, 4));
    TRY(want_rank(v, "value", 3, 4));
    if (k->rank >= 0 && v->rank >= 0 && k->rank != v->rank)
        return onyx_error(ONYX_ERR_SHAPE, "key has rank %d but value rank %d", k->rank, v->rank);
    d->batch = dim(q, 0);
    d->q_len = dim(q, 1);
    int64_t hq = dim(q, 2);
    TRY(divisible(hq, heads, "query hidden size"));
    d->q_heads = d->kv_heads = heads;
    d->head = quot(hq, heads);
    d->kv_bnsh = k->rank == 4;
    int64_t hk, hv;
    if (d->kv_bnsh) {
        TRY(want_dim(k, "key", 0, d->batch, "batch"));
        TRY(want_dim(k, "key", 1, heads, "num_heads"));
        TRY(want_dim(k, "key", 3, d->head, "head size"));
        TRY(want_dim(v, "value", 0, d->batch, "batch"));
        TRY(want_dim(v, "value", 1, heads, "num_heads"));
        d->kv_len = dim(k, 2) >= 0 ? dim(k, 2) : dim(v, 2);
        TRY(want_dim(v, "value", 2, d->kv_len, "the key's length"));
        d->v_head = dim(v, 3);
        hk = mul(heads, d->head);
        hv = mul(heads, d->v_head);
        if (pk || pv)
            return onyx_error(ONYX_ERR_SHAPE, "past_key/past_value go with a 3-D key, not a "
                                              "4-D one");
    } else {
        TRY(want_dim(k, "key", 0, d->batch, "batch"));
        TRY(want_dim(v, "value", 0, d->batch, "batch"));
        d->kv_len = dim(k, 1) >= 0 ? dim(k, 1) : dim(v, 1);
        TRY(want_dim(v, "value", 1, d->kv_len, "the key's length"));
        hk = dim(k, 2);
        hv = dim(v, 2);
        TRY(want_dim(k, "key", 2, hq, "the query's hidden size"));
        TRY(divisible(hv, heads, "value hidden size"));
        d->v_head = quot(hv, heads);
    }
    if (bias) {
        TRY(want_rank(bias, "bias", 1, 1));
        int64_t all = add(add(hq, hk), hv);
        TRY(want_dim(bias, "bias", 0, all, "query + key + value hidden sizes"));
    }
    d->past_len = 0;
    if (pk || pv) {
        if (!pk || !pv)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "past_key and past_value go together");
        TRY(want_rank(pk, "past_key", 4, 4));
        TRY(want_rank(pv, "past_value", 4, 4));
        TRY(want_dim(pk, "past_key", 0, d->batch, "batch"));
        TRY(want_dim(pk, "past_key", 1, heads, "num_heads"));
        TRY(want_dim(pk, "past_key", 3, d->head, "head size"));
        TRY(want_dim(pv, "past_value", 0, d->batch, "batch"));
        TRY(want_dim(pv, "past_value", 1, heads, "num_heads"));
        TRY(want_dim(pv, "past_value", 3, d->v_head, "value head size"));
        d->past_len = dim(pk, 2) >= 0 ? dim(pk, 2) : dim(pv, 2);
        TRY(want_dim(pv, "past_value", 2, d->past_len, "past_key's length"));
    }
    d->total_len = add(d->past_len, d->kv_len);
    TRY(mask_kind(kpm, "key_padding_mask", false, d));
    return cnlp_check_attn_bias(ab, d);
}

onyx_status cnlp_gqa_dims(const graph_node *n, int n_in, const type_info *const *in, int64_t total,
                          cnlp_att_dims *d) {
    dims_init(d);
    const type_info *q = input(n_in, in, 0), *k = input(n_in, in, 1), *v = input(n_in, in, 2),
                    *pk = input(n_in, in, 3), *pv = input(n_in, in, 4),
                    *seqlens = input(n_in, in, 5), *ts = input(n_in, in, 6);
    static const char *const extra[] = {"attention_bias", "head_sink",     "k_scale",
                                        "v_scale",        "q_norm_weight", "k_norm_weight"};
    for (int i = 10; i < 16; i++)
        TRY(refuse_input(input(n_in, in, i), extra[i - 10], "not implemented"));
    const type_info *cos = input(n_in, in, 7), *sin = input(n_in, in, 8), *pos = input(n_in, in, 9);
    bool rotary = attr_int(n, "do_rotary", 0) != 0;
    if (!rotary && (cos || sin || pos))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "cos_cache, sin_cache and position_ids need "
                                                  "do_rotary=1");
    if (rotary && (!cos || !sin))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "do_rotary=1 needs cos_cache and sin_cache");
    if (attr_int(n, "smooth_softmax", -1) > 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "smooth_softmax is not supported");
    if (attr_int(n, "kv_cache_bit_width", 0) != 0 ||
        strcmp(attr_string(n, "k_quant_type", "NONE"), "NONE") != 0 ||
        strcmp(attr_string(n, "v_quant_type", "NONE"), "NONE") != 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "a quantized KV cache is not supported");
    if (attr_int(n, "qk_output", 0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "qk_output is not supported");
    int64_t causal = attr_int(n, "causal", 1), window = attr_int(n, "local_window_size", -1);
    if (causal != 0 && causal != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "causal is %lld, expected 0 or 1",
                          (long long)causal);
    if (!causal && window != -1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "local_window_size needs causal=1");
    d->windowed = attr_int(n, "sliding_window_cache", 0) != 0;
    if (d->windowed && window <= 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "sliding_window_cache=1 needs local_window_size "
                                                  "> 0, not %lld",
                          (long long)window);
    int64_t heads, kvh;
    TRY(positive_heads(n, "num_heads", &heads));
    TRY(positive_heads(n, "kv_num_heads", &kvh));
    if (heads % kvh != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "num_heads %lld is not a multiple of "
                          "kv_num_heads %lld",
                          (long long)heads, (long long)kvh);
    d->q_heads = heads;
    d->kv_heads = kvh;
    TRY(want_rank(q, "query", 3, 3));
    d->batch = dim(q, 0);
    d->q_len = d->kv_len = dim(q, 1);
    int64_t w = dim(q, 2);
    d->packed = !k;
    if (d->packed) {
        if (v)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "value without key: packed QKV takes "
                                                      "neither");
        if (w >= 0 && w % (heads + 2 * kvh) != 0)
            return onyx_error(ONYX_ERR_SHAPE,
                              "packed QKV width %lld is not a multiple of "
                              "num_heads + 2*kv_num_heads = %lld",
                              (long long)w, (long long)(heads + 2 * kvh));
        d->head = quot(w, heads + 2 * kvh);
    } else {
        if (!v) return onyx_error(ONYX_ERR_INVALID_MODEL, "key without value");
        TRY(divisible(w, heads, "query hidden size"));
        d->head = quot(w, heads);
        TRY(want_rank(k, "key", 3, 3));
        TRY(want_rank(v, "value", 3, 3));
        int64_t kw = mul(kvh, d->head);
        TRY(want_dim(k, "key", 0, d->batch, "batch"));
        TRY(want_dim(k, "key", 1, d->q_len, "the query's length"));
        TRY(want_dim(k, "key", 2, kw, "kv_num_heads * head size"));
        TRY(want_dim(v, "value", 0, d->batch, "batch"));
        TRY(want_dim(v, "value", 1, d->q_len, "the query's length"));
        TRY(want_dim(v, "value", 2, kw, "kv_num_heads * head size"));
    }
    d->v_head = d->head;
    if (rotary) {
        TRY(want_rank(cos, "cos_cache", 2, 2));
        TRY(want_rank(sin, "sin_cache", 2, 2));
        if (q && q->dtype != ONYX_UNDEFINED) {
            TRY(want_dtype(cos, "cos_cache", q->dtype));
            TRY(want_dtype(sin, "sin_cache", q->dtype));
        }
        d->max_pos = dim(cos, 0);
        d->rot = mul(dim(cos, 1), 2);
        TRY(want_dim(sin, "sin_cache", 0, d->max_pos, "cos_cache's rows"));
        TRY(want_dim(sin, "sin_cache", 1, dim(cos, 1), "cos_cache's columns"));
        if (d->rot >= 0 && d->head >= 0 && d->rot > d->head)
            return onyx_error(ONYX_ERR_SHAPE,
                              "cos_cache's last dim %lld exceeds half the head "
                              "size %lld",
                              (long long)(d->rot / 2), (long long)d->head);
        if (pos) {
            TRY(want_dtype(pos, "position_ids", ONYX_INT64));
            TRY(want_rank(pos, "position_ids", 2, 2));
            TRY(want_dim(pos, "position_ids", 0, d->batch, "batch"));
            TRY(want_dim(pos, "position_ids", 1, d->q_len, "sequence length"));
        }
    }
    d->past_len = 0;
    if (pk || pv) {
        if (!pk || !pv)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "past_key and past_value go together");
        const char *names[2] = {"past_key", "past_value"};
        const type_info *p[2] = {pk, pv};
        for (int i = 0; i < 2; i++) {
            TRY(want_rank(p[i], names[i], 4, 4));
            if (q && q->dtype != ONYX_UNDEFINED) TRY(want_dtype(p[i], names[i], q->dtype));
            TRY(want_dim(p[i], names[i], 0, d->batch, "batch"));
            TRY(want_dim(p[i], names[i], 1, kvh, "kv_num_heads"));
            TRY(want_dim(p[i], names[i], 3, d->head, "head size"));
        }
        d->past_len = dim(pk, 2) >= 0 ? dim(pk, 2) : dim(pv, 2);
        TRY(want_dim(pv, "past_value", 2, d->past_len, "past_key's length"));
    }
    if (d->windowed) {
        if (!pk)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "sliding_window_cache=1 needs past_key and "
                                                      "past_value (the window-sized buffers)");
        int64_t window = attr_int(n, "local_window_size", -1);
        if (d->past_len >= 0 && d->past_len < window)
            return onyx_error(ONYX_ERR_SHAPE,
                              "sliding_window_cache=1: the cache's capacity %lld is less than "
                              "local_window_size %lld",
                              (long long)d->past_len, (long long)window);
    }
    if (!seqlens || !ts)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "seqlens_k and total_sequence_length are "
                                                  "required");
    TRY(want_dtype(seqlens, "seqlens_k", ONYX_INT32));
    TRY(want_rank(seqlens, "seqlens_k", 1, 1));
    TRY(want_dim(seqlens, "seqlens_k", 0, d->batch, "batch"));
    TRY(want_dtype(ts, "total_sequence_length", ONYX_INT32));
    if (ts->rank > 1 || (ts->rank == 1 && ts->dims[0] >= 0 && ts->dims[0] != 1))
        return onyx_error(ONYX_ERR_SHAPE, "total_sequence_length must hold one value");
    if (total >= 0) {
        if (d->q_len >= 0 && total < d->q_len)
            return onyx_error(ONYX_ERR_SHAPE,
                              "total_sequence_length %lld is less than the "
                              "sequence length %lld",
                              (long long)total, (long long)d->q_len);
        d->total_len = d->past_len >= 0 && d->past_len > total ? d->past_len : total;
    }
    if (d->windowed) d->total_len = d->past_len; /* present keeps the past's capacity */
    return ONYX_OK;
}

onyx_status cnlp_rope_dims_of(const graph_node *n, const type_info *x, const type_info *pos,
                              const type_info *cos, const type_info *sin, cnlp_rope_dims *d) {
    memset(d, 0, sizeof *d);
    d->batch = d->seq = d->heads = d->head = d->rot = d->max_pos = -1;
    if (attr_int(n, "is_packed_batching", 0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "is_packed_batching=1 is not supported");
    int64_t heads = attr_int(n, "num_heads", 0), rot = attr_int(n, "rotary_embedding_dim", 0);
    if (heads < 0 || rot < 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "num_heads and rotary_embedding_dim must not "
                                                  "be negative");
    if (rot > 0 && heads == 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "rotary_embedding_dim needs num_heads");
    TRY(want_rank(x, "input", 3, 4));
    TRY(want_rank(cos, "cos_cache", 2, 2));
    TRY(want_rank(sin, "sin_cache", 2, 2));
    if (cos && sin && cos->rank == 2 && sin->rank == 2 &&
        (!cnlp_agree(cos->dims[0], sin->dims[0]) || !cnlp_agree(cos->dims[1], sin->dims[1])))
        return onyx_error(ONYX_ERR_SHAPE, "cos_cache and sin_cache have different shapes");
    int64_t half = dim(cos, 1) >= 0 ? dim(cos, 1) : dim(sin, 1);
    d->max_pos = dim(cos, 0) >= 0 ? dim(cos, 0) : dim(sin, 0);
    d->rot = rot > 0 ? rot : mul(half, 2);
    d->batch = dim(x, 0);
    if (x && x->rank == 4) {
        d->bnsh = true;
        d->heads = dim(x, 1);
        d->seq = dim(x, 2);
        d->head = dim(x, 3);
        if (heads > 0 && !cnlp_agree(d->heads, heads))
            return onyx_error(ONYX_ERR_SHAPE, "input has %lld heads, but num_heads is %lld",
                              (long long)d->heads, (long long)heads);
    } else {
        d->seq = dim(x, 1);
        int64_t hidden = dim(x, 2);
        if (heads > 0) {
            TRY(divisible(hidden, heads, "hidden size"));
            d->heads = heads;
            d->head = quot(hidden, heads);
        } else {
            d->head = d->rot;
            if (hidden >= 0 && d->head > 0 && hidden % d->head != 0)
                return onyx_error(ONYX_ERR_SHAPE,
                                  "hidden size %lld is not a multiple of the "
                                  "head size %lld (twice cos_cache's last dim)",
                                  (long long)hidden, (long long)d->head);
            d->heads = quot(hidden, d->head);
        }
    }
    if (d->rot >= 0 && d->rot % 2 != 0)
        return onyx_error(ONYX_ERR_SHAPE, "rotary dim %lld is odd", (long long)d->rot);
    if (d->rot >= 0 && d->head >= 0 && d->rot > d->head)
        return onyx_error(ONYX_ERR_SHAPE, "rotary dim %lld exceeds the head size %lld",
                          (long long)d->rot, (long long)d->head);
    if (rot > 0 && half >= 0 && half * 2 != rot)
        return onyx_error(ONYX_ERR_SHAPE,
                          "cos_cache's last dim is %lld, expected "
                          "rotary_embedding_dim / 2 = %lld",
                          (long long)half, (long long)(rot / 2));
    if (rot == 0 && half >= 0 && d->head >= 0 && half * 2 != d->head)
        return onyx_error(ONYX_ERR_SHAPE,
                          "cos_cache's last dim is %lld, expected head size / 2 "
                          "= %lld (or set rotary_embedding_dim)",
                          (long long)half, (long long)(d->head / 2));
    if (pos) {
        TRY(want_dtype(pos, "position_ids", ONYX_INT64));
        int64_t pn = -1;
        if (pos->rank == 0)
            pn = 1;
        else if (pos->rank == 1)
            pn = pos->dims[0];
        if (pn == 1) {
            d->pos_offset = true;
        } else if (pos->rank == 2) {
            TRY(want_dim(pos, "position_ids", 0, d->batch, "batch"));
            TRY(want_dim(pos, "position_ids", 1, d->seq, "sequence length"));
        } else if (pos->rank >= 0 && !(pos->rank == 1 && pn < 0)) {
            char b[160];
            return onyx_error(ONYX_ERR_SHAPE,
                              "position_ids has shape %s, expected [1] or "
                              "[batch, sequence]",
                              shape_str(pos->rank, pos->dims, b, sizeof b));
        } else {
            d->pos_offset = true;
        }
    }
    return ONYX_OK;
}

onyx_status cnlp_nbits_of(const graph_node *n, cnlp_nbits *q) {
    memset(q, 0, sizeof *q);
    q->k = attr_int(n, "K", 0);
    q->n = attr_int(n, "N", 0);
    q->bits = attr_int(n, "bits", 4);
    q->block = attr_int(n, "block_size", 0);
    if (q->k <= 0 || q->n <= 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "attributes K (%lld) and N (%lld) must be "
                          "positive",
                          (long long)q->k, (long long)q->n);
    if (q->bits != 2 && q->bits != 4 && q->bits != 8)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "bits=%lld is not supported (2, 4 or 8)",
                          (long long)q->bits);
    if (q->block < 16 || (q->block & (q->block - 1)) != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "block_size %lld is not a power of 2 >= 16",
                          (long long)q->block);
    /* bounds far past any model's, so that the sizes computed from them cannot overflow */
    if (q->k > INT32_MAX || q->n > INT32_MAX || q->block > (1 << 20))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "K (%lld), N (%lld) or block_size (%lld) is past "
                          "what onyx supports (2^31 - 1, 2^31 - 1, 2^20)",
                          (long long)q->k, (long long)q->n, (long long)q->block);
    int64_t level = attr_int(n, "accuracy_level", 0);
    if (level < 0 || level > 4)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "accuracy_level %lld is not one of 0 (unset), 1 "
                          "(float32), 2 (float16), 3 (bfloat16), 4 (int8)", (long long)level);
    if (attr_int(n, "weight_prepacked", 0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "weight_prepacked (a GPU layout) is not "
                                                "supported on the CPU");
    q->k_blocks = (q->k + q->block - 1) / q->block;
    q->blob = q->block * q->bits / 8;
    q->zp_bytes = (q->k_blocks * q->bits + 7) / 8;
    return ONYX_OK;
}
