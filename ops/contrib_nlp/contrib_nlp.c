/* The com.microsoft attention-family ops read from a node by their schemas (see contrib_nlp.h),
 * whose geometry every device's kernel then reads from the plan: every refusal of a form onyx does
 * not implement lives here, once; the sizes come from the rules of geometry/attention.h. */
#include "ops/contrib_nlp/contrib_nlp.h"

#include <math.h>
#include <string.h>

#include "ops/attention/attention_common.h"

/* dim i of t, -1 when t is absent or its rank unknown */
static int64_t dim(const type_info *t, int i) {
    return t && t->rank > i && i >= 0 ? t->dims[i] : -1;
}
static int64_t mul(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a * b; }
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

static onyx_status divisible(int64_t hidden, int64_t heads, const char *what) {
    if (hidden < 0 || hidden % heads == 0) return ONYX_OK;
    return onyx_error(ONYX_ERR_SHAPE, "%s %lld is not a multiple of num_heads %lld", what,
                      (long long)hidden, (long long)heads);
}

/* key_padding_mask / mask_index: int32 of rank 1 ([B] or [2B]), 2 ([B, T]) or 3 ([B, S, T]) */
static onyx_status mask_kind(const type_info *m, const char *name, bool allow_start,
                             geom_attention *d) {
    d->mask = GEOM_ATT_MASK_NONE;
    if (!m) return ONYX_OK;
    TRY(want_dtype(m, name, ONYX_INT32));
    char b[160];
    switch (m->rank) {
    case -1: d->mask = GEOM_ATT_MASK_UNKNOWN; return ONYX_OK; /* each run decides */
    case 1: {
        int64_t n = m->dims[0];
        d->mask = GEOM_ATT_MASK_END;
        if (n < 0 || d->batch < 0 || n == d->batch) return ONYX_OK;
        if (allow_start && n == 2 * d->batch) {
            d->mask = GEOM_ATT_MASK_END_START;
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
        d->mask = GEOM_ATT_MASK_2D;
        TRY(want_dim(m, name, 0, d->batch, "batch"));
        return want_dim(m, name, 1, d->total_len, "total sequence length");
    case 3:
        d->mask = GEOM_ATT_MASK_3D;
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

onyx_status cnlp_check_attn_bias(const type_info *t, const geom_attention *d) {
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

onyx_status cnlp_attention_dims(const graph_node *n, int n_in, const type_info *const *in,
                                geom_attention *d) {
    const type_info *mask = input(n_in, in, 3), *past = input(n_in, in, 4),
                    *ab = input(n_in, in, 5), *psl = input(n_in, in, 6);
    if (attr_int(n, "do_rotary", 0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "do_rotary=1 is not supported");
    if (attr_int(n, "past_present_share_buffer", 0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "past_present_share_buffer=1 is not supported");
    TRY(refuse_input(psl, "past_sequence_length", "shared past/present buffers"));
    const int64_t *qkv = NULL;
    size_t nq = attr_ints(n, "qkv_hidden_sizes", &qkv);
    geom_att_shape s[4];
    const geom_att_shape *shape[4];
    static const int shape_inputs[4] = {0, 1, 2, 4}; /* input, weights, bias, past */
    for (int i = 0; i < 4; i++) shape[i] = ops_att_shape(input(n_in, in, shape_inputs[i]), &s[i]);
    geom_msg m;
    GEOM_TRY(m, geom_attention_ms(shape[0], shape[1], shape[2], shape[3],
                                  attr_int(n, "num_heads", 0), qkv, nq, d, &m));
    if (past && ab)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "Attention takes past or attention_bias, not "
                                                  "both (as onnxruntime)");
    TRY(mask_kind(mask, "mask_index", true, d));
    return cnlp_check_attn_bias(ab, d);
}

onyx_status cnlp_mha_dims(const graph_node *n, int n_in, const type_info *const *in,
                          geom_attention *d) {
    const type_info *q = input(n_in, in, 0), *k = input(n_in, in, 1), *kpm = input(n_in, in, 4),
                    *ab = input(n_in, in, 5);
    TRY(refuse_input(input(n_in, in, 8), "past_sequence_length", "shared past/present buffers"));
    TRY(refuse_input(input(n_in, in, 9), "cache_indirection", "beam search"));
    if (q && q->rank == 5)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "packed QKV (a 5-D query) is not supported");
    if (k && k->rank == 5)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "packed KV (a 5-D key) is not supported");
    geom_att_shape s[6];
    const geom_att_shape *shape[6];
    static const int shape_inputs[6] = {0, 1, 2, 3, 6, 7}; /* query, key, value, bias, past */
    for (int i = 0; i < 6; i++) shape[i] = ops_att_shape(input(n_in, in, shape_inputs[i]), &s[i]);
    geom_msg m;
    GEOM_TRY(m, geom_attention_mha(shape[0], shape[1], shape[2], shape[3], shape[4], shape[5],
                                   attr_int(n, "num_heads", 0), d, &m));
    TRY(mask_kind(kpm, "key_padding_mask", false, d));
    return cnlp_check_attn_bias(ab, d);
}

onyx_status cnlp_gqa_kv_quant(const graph_node *n, cnlp_kv_quant *q) {
    const char *kt = attr_string(n, "k_quant_type", "NONE"), *vt = attr_string(n, "v_quant_type",
                                                                               "NONE");
    int64_t bits = attr_int(n, "kv_cache_bit_width", 0);
    if (strcmp(kt, vt) != 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "k_quant_type %s and v_quant_type %s differ "
                          "(onnxruntime's CPU kernel takes one kind for both)", kt, vt);
    bool none = !strcmp(kt, "NONE");
    if (!none && strcmp(kt, "PER_TENSOR") != 0 && strcmp(kt, "PER_CHANNEL") != 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "k_quant_type %s is not supported (NONE, "
                          "PER_TENSOR or PER_CHANNEL)", kt);
    if (none ? bits != 0 : bits != 4 && bits != 8)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "kv_cache_bit_width is %lld, expected %s",
                          (long long)bits, none ? "0 for a float cache" : "4 or 8");
    q->bits = (int)bits;
    q->per_channel = !strcmp(kt, "PER_CHANNEL");
    return ONYX_OK;
}

/* The quantized cache's inputs: past caches of int8 (or uint8 int4 pairs), float scales of one
 * value or kv_num_heads * head size; a float query (onnxruntime's kernel takes no other). */
static onyx_status gqa_quant_inputs(const cnlp_kv_quant *kq, const type_info *q,
                                    const type_info *pk, const type_info *pv,
                                    const type_info *ks, const type_info *vs,
                                    const geom_attention *d) {
    if (!kq->bits) {
        TRY(refuse_input(ks, "k_scale", "kv_cache_bit_width 0: the cache is float"));
        return refuse_input(vs, "v_scale", "kv_cache_bit_width 0: the cache is float");
    }
    if (!ks || !vs)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "a quantized KV cache needs k_scale and "
                                                  "v_scale");
    if (q && q->dtype != ONYX_UNDEFINED && q->dtype != ONYX_FLOAT)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "a quantized KV cache with a %s query is not "
                          "supported (float only, as onnxruntime)", onyx_dtype_name(q->dtype));
    if (kq->bits == 4 && d->head >= 0 && d->head % 2)
        return onyx_error(ONYX_ERR_SHAPE, "an int4 KV cache needs an even head size, not %lld",
                          (long long)d->head);
    onyx_dtype cache = kq->bits == 8 ? ONYX_INT8 : ONYX_UINT8;
    TRY(want_dtype(pk, "past_key", cache));
    TRY(want_dtype(pv, "past_value", cache));
    TRY(want_dtype(ks, "k_scale", ONYX_FLOAT));
    TRY(want_dtype(vs, "v_scale", ONYX_FLOAT));
    int64_t scales = kq->per_channel ? mul(d->kv_heads, d->head) : 1;
    TRY(cnlp_want_numel(ks, "k_scale", scales));
    return cnlp_want_numel(vs, "v_scale", scales);
}

onyx_status cnlp_gqa_dims(const graph_node *n, int n_in, const type_info *const *in, int64_t total,
                          geom_attention *d) {
    const type_info *q = input(n_in, in, 0), *pk = input(n_in, in, 3), *pv = input(n_in, in, 4),
                    *seqlens = input(n_in, in, 5), *ts = input(n_in, in, 6);
    TRY(refuse_input(input(n_in, in, 14), "q_norm_weight", "not implemented"));
    TRY(refuse_input(input(n_in, in, 15), "k_norm_weight", "not implemented"));
    const type_info *bias = input(n_in, in, 10), *sink = input(n_in, in, 11),
                    *ks = input(n_in, in, 12), *vs = input(n_in, in, 13);
    cnlp_kv_quant kq;
    TRY(cnlp_gqa_kv_quant(n, &kq));
    const type_info *cos = input(n_in, in, 7), *sin = input(n_in, in, 8), *pos = input(n_in, in, 9);
    bool rotary = attr_int(n, "do_rotary", 0) != 0;
    if (!rotary && (cos || sin || pos))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "cos_cache, sin_cache and position_ids need "
                                                  "do_rotary=1");
    if (rotary && (!cos || !sin))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "do_rotary=1 needs cos_cache and sin_cache");
    /* onnxruntime smooths at 1 only; another value would be a guess */
    int64_t smooth = attr_int(n, "smooth_softmax", -1);
    if (smooth < -1 || smooth > 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "smooth_softmax is %lld, expected -1, 0 or 1",
                          (long long)smooth);
    int64_t qk = attr_int(n, "qk_output", 0);
    if (qk < 0 || qk > 2)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "qk_output is %lld, expected 0 (none), 1 (the "
                          "scores before the softmax) or 2 (after)", (long long)qk);
    int64_t causal = attr_int(n, "causal", 1), window = attr_int(n, "local_window_size", -1);
    if (causal != 0 && causal != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "causal is %lld, expected 0 or 1",
                          (long long)causal);
    if (!causal && window != -1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "local_window_size needs causal=1");
    bool windowed = attr_int(n, "sliding_window_cache", 0) != 0;
    if (windowed && window <= 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "sliding_window_cache=1 needs local_window_size "
                                                  "> 0, not %lld",
                          (long long)window);
    /* a windowed cache's keys are rows of the window, not positions as the bias's columns */
    if (windowed && (bias || qk || kq.bits))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "sliding_window_cache=1 with %s is not supported",
                          bias ? "attention_bias" : qk ? "qk_output" : "a quantized KV cache");
    geom_att_shape s[5];
    const geom_att_shape *shape[5]; /* query, key, value, past_key, past_value */
    for (int i = 0; i < 5; i++) shape[i] = ops_att_shape(input(n_in, in, i), &s[i]);
    /* an int4 cache holds a head's columns in half as many bytes: the rule sees the columns */
    int64_t cols[2][4];
    for (int i = 3; i < 5 && kq.bits == 4; i++)
        if (shape[i] && shape[i]->rank == 4) {
            memcpy(cols[i - 3], shape[i]->dims, sizeof cols[0]);
            cols[i - 3][3] = mul(cols[i - 3][3], 2);
            s[i].dims = cols[i - 3];
        }
    geom_msg m;
    GEOM_TRY(m, geom_attention_gqa(shape[0], shape[1], shape[2], shape[3], shape[4],
                                   attr_int(n, "num_heads", 0), attr_int(n, "kv_num_heads", 0),
                                   total, windowed ? window : 0, d, &m));
    TRY(gqa_quant_inputs(&kq, q, pk, pv, ks, vs, d));
    if (q && q->dtype != ONYX_UNDEFINED) {
        if (!kq.bits) {
            TRY(want_dtype(pk, "past_key", q->dtype));
            TRY(want_dtype(pv, "past_value", q->dtype));
        }
        TRY(want_dtype(bias, "attention_bias", q->dtype));
        TRY(want_dtype(sink, "head_sink", q->dtype));
    }
    /* attention_bias [B or 1, N or 1, S, total_sequence_length], head_sink [N] */
    geom_attention over_total = *d;
    over_total.total_len = total;
    TRY(cnlp_check_attn_bias(bias, &over_total));
    TRY(want_rank(sink, "head_sink", 1, 1));
    TRY(want_dim(sink, "head_sink", 0, d->q_heads, "num_heads"));
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
    if (!seqlens || !ts)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "seqlens_k and total_sequence_length are "
                                                  "required");
    TRY(want_dtype(seqlens, "seqlens_k", ONYX_INT32));
    TRY(want_rank(seqlens, "seqlens_k", 1, 1));
    TRY(want_dim(seqlens, "seqlens_k", 0, d->batch, "batch"));
    TRY(want_dtype(ts, "total_sequence_length", ONYX_INT32));
    if (ts->rank > 1 || (ts->rank == 1 && ts->dims[0] >= 0 && ts->dims[0] != 1))
        return onyx_error(ONYX_ERR_SHAPE, "total_sequence_length must hold one value");
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
    geom_msg m;
    GEOM_TRY(m, geom_nbits_of(attr_int(n, "K", 0), attr_int(n, "N", 0), attr_int(n, "bits", 4),
                              attr_int(n, "block_size", 0), q, &m));
    int64_t level = attr_int(n, "accuracy_level", 0);
    if (level < 0 || level > 4)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "accuracy_level %lld is not one of 0 (unset), 1 "
                          "(float32), 2 (float16), 3 (bfloat16), 4 (int8)", (long long)level);
    if (attr_int(n, "weight_prepacked", 0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "weight_prepacked (a layout of onnxruntime's GPU "
                                                "kernels) is not supported");
    return ONYX_OK;
}
