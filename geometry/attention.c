/* Attention geometry (geometry/attention.h): one rule per op's form, all on the shared helpers
 * below, so that inference, the CPU kernels and the CUDA plugin accept and refuse alike. */
#include "geometry/attention.h"

#include <string.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        onyx_status check_status_ = (call);                                                        \
        if (check_status_ != ONYX_OK) return check_status_;                                        \
    } while (0)

/* dim i of s, -1 when s is absent, its rank unknown or not above i */
static int64_t dim(const geom_att_shape *s, int i) {
    return s && s->rank > i && i >= 0 ? s->dims[i] : -1;
}

/* a and b agree unless both are known and differ */
static bool agree(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

/* Unknown (-1) in, unknown out; sums and products past int64 saturate, so that they match no
 * dim (and a sum that must be a dim is refused where it is made). */
static int64_t add(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}
static int64_t mul(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    return b != 0 && a > INT64_MAX / b ? INT64_MAX : a * b;
}
static int64_t quot(int64_t a, int64_t b) { return a < 0 || b <= 0 ? -1 : a / b; }

static onyx_status want_rank(const geom_att_shape *s, const char *name, int r0, int r1,
                             geom_msg *msg) {
    if (!s || s->rank < 0 || s->rank == r0 || s->rank == r1) return ONYX_OK;
    char b[160];
    geom_shape_str(s->rank, s->dims, b, sizeof b);
    if (r0 == r1)
        return geom_fail(msg, ONYX_ERR_SHAPE, "%s has shape %s, expected rank %d", name, b, r0);
    return geom_fail(msg, ONYX_ERR_SHAPE, "%s has shape %s, expected rank %d or %d", name, b, r0,
                     r1);
}

static onyx_status want_dim(const geom_att_shape *s, const char *name, int i, int64_t want,
                            const char *what, geom_msg *msg) {
    int64_t got = dim(s, i);
    if (agree(got, want)) return ONYX_OK;
    char b[160];
    return geom_fail(msg, ONYX_ERR_SHAPE, "%s has shape %s: dim %d is %lld, expected %lld (%s)",
                     name, geom_shape_str(s->rank, s->dims, b, sizeof b), i, (long long)got,
                     (long long)want, what);
}

/* a hidden size that num_heads must divide */
static onyx_status divisible(int64_t hidden, int64_t heads, const char *what, geom_msg *msg) {
    if (hidden < 0 || hidden % heads == 0) return ONYX_OK;
    return geom_fail(msg, ONYX_ERR_SHAPE, "%s %lld is not a multiple of num_heads %lld", what,
                     (long long)hidden, (long long)heads);
}

static onyx_status positive_heads(int64_t heads, const char *attr, geom_msg *msg) {
    if (heads > 0) return ONYX_OK;
    return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "attribute %s is %lld, expected > 0", attr,
                     (long long)heads);
}

/* total = past + kv, refused where it does not fit a dim */
static onyx_status total_of(geom_attention *d, geom_msg *msg) {
    d->total_len = add(d->past_len, d->kv_len);
    if (d->total_len == INT64_MAX)
        return geom_fail(msg, ONYX_ERR_SHAPE, "past length %lld and length %lld overflow",
                         (long long)d->past_len, (long long)d->kv_len);
    return ONYX_OK;
}

static void unknown(geom_attention *d, geom_att_form form) {
    memset(d, 0, sizeof *d);
    d->form = form;
    d->batch = d->q_heads = d->kv_heads = d->q_len = d->kv_len = -1;
    d->total_len = d->head = d->v_head = d->in_hidden = -1;
}

/* ---------------------------------------------------------------- ONNX Attention */

/* Splits a packed hidden size into heads; fails when it does not divide. */
static onyx_status split_hidden(const char *what, int64_t hidden, int64_t heads, int64_t *head,
                                geom_msg *msg) {
    if (hidden >= 0 && heads > 0 && hidden % heads != 0)
        return geom_fail(msg, ONYX_ERR_SHAPE, "%s hidden size %lld is not a multiple of its %lld "
                         "heads", what, (long long)hidden, (long long)heads);
    *head = quot(hidden, heads);
    return ONYX_OK;
}

/* past_key / past_value [B, kv_heads, past, head size], past equal for both */
static onyx_status onnx_past(const geom_att_shape *past_k, const geom_att_shape *past_v,
                             geom_attention *d, geom_msg *msg) {
    if ((past_k != NULL) != (past_v != NULL))
        return geom_fail(msg, ONYX_ERR_INVALID_MODEL,
                         "past_key and past_value must be given together");
    d->past_len = 0;
    if (!past_k) return ONYX_OK;
    const geom_att_shape *pk[2] = {past_k, past_v};
    int64_t heads[2] = {d->head, d->v_head};
    d->past_len = -1;
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "past_value" : "past_key";
        if (pk[i]->rank < 0) continue;
        if (pk[i]->rank != 4)
            return geom_fail(msg, ONYX_ERR_SHAPE, "%s has rank %d, expected 4", name, pk[i]->rank);
        const int64_t *p = pk[i]->dims;
        if (!agree(p[0], d->batch) || !agree(p[1], d->kv_heads) || !agree(p[3], heads[i]) ||
            !agree(p[2], d->past_len))
            return geom_fail(msg, ONYX_ERR_SHAPE, "%s has shape [%lld,%lld,%lld,%lld], expected "
                             "[%lld,%lld,past,%lld] (past equal for key and value)", name,
                             (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3],
                             (long long)d->batch, (long long)d->kv_heads, (long long)heads[i]);
        if (d->past_len < 0) d->past_len = p[2];
        if (i == 0 && d->head < 0) d->head = p[3];
        if (i == 1 && d->v_head < 0) d->v_head = p[3];
    }
    return ONYX_OK;
}

onyx_status geom_attention_onnx(const geom_att_shape *q, const geom_att_shape *k,
                                const geom_att_shape *v, const geom_att_shape *past_k,
                                const geom_att_shape *past_v, int64_t q_num_heads,
                                int64_t kv_num_heads, geom_attention *out, geom_msg *msg) {
    geom_attention d;
    unknown(&d, GEOM_ATT_ONNX);
    const geom_att_shape *qkv[3] = {q, k, v};
    static const char *const names[3] = {"Q", "K", "V"};
    int rank = -1;
    for (int i = 0; i < 3; i++) {
        int r = qkv[i]->rank;
        if (r < 0) continue;
        if (r != 3 && r != 4)
            return geom_fail(msg, ONYX_ERR_SHAPE, "%s has rank %d, expected 3 or 4", names[i], r);
        if (rank >= 0 && r != rank)
            return geom_fail(msg, ONYX_ERR_SHAPE, "Q, K and V have ranks %d, %d and %d, expected "
                             "one rank", q->rank, k->rank, v->rank);
        rank = r;
    }
    if (rank < 0) return geom_fail(msg, ONYX_ERR_SHAPE, "the ranks of Q, K and V are unknown");
    d.packed = rank == 3;
    if (d.packed) {
        if (q_num_heads <= 0 || kv_num_heads <= 0)
            return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "3-D inputs need q_num_heads and "
                             "kv_num_heads > 0, got %lld and %lld", (long long)q_num_heads,
                             (long long)kv_num_heads);
        d.q_heads = q_num_heads;
        d.kv_heads = kv_num_heads;
        d.q_len = dim(q, 1);
        d.kv_len = dim(k, 1);
        CHECK(split_hidden("Q", dim(q, 2), q_num_heads, &d.head, msg));
        int64_t khead = -1;
        CHECK(split_hidden("K", dim(k, 2), kv_num_heads, &khead, msg));
        if (!agree(d.head, khead))
            return geom_fail(msg, ONYX_ERR_SHAPE, "Q's head size %lld differs from K's %lld",
                             (long long)d.head, (long long)khead);
        if (d.head < 0) d.head = khead;
        CHECK(split_hidden("V", dim(v, 2), kv_num_heads, &d.v_head, msg));
        if (!agree(dim(k, 1), dim(v, 1)))
            return geom_fail(msg, ONYX_ERR_SHAPE, "K has %lld positions and V %lld, expected "
                             "equal", (long long)dim(k, 1), (long long)dim(v, 1));
        if (d.kv_len < 0) d.kv_len = dim(v, 1);
    } else {
        d.q_heads = dim(q, 1);
        d.kv_heads = dim(k, 1) >= 0 ? dim(k, 1) : dim(v, 1);
        d.q_len = dim(q, 2);
        d.kv_len = dim(k, 2) >= 0 ? dim(k, 2) : dim(v, 2);
        d.head = dim(q, 3) >= 0 ? dim(q, 3) : dim(k, 3);
        d.v_head = dim(v, 3);
        if (!agree(dim(k, 1), dim(v, 1)) || !agree(dim(k, 2), dim(v, 2)))
            return geom_fail(msg, ONYX_ERR_SHAPE, "K has %lld heads x %lld positions and V %lld x "
                             "%lld, expected equal", (long long)dim(k, 1), (long long)dim(k, 2),
                             (long long)dim(v, 1), (long long)dim(v, 2));
        if (!agree(dim(q, 3), dim(k, 3)))
            return geom_fail(msg, ONYX_ERR_SHAPE, "Q's head size %lld differs from K's %lld",
                             (long long)dim(q, 3), (long long)dim(k, 3));
    }
    d.batch = dim(q, 0) >= 0 ? dim(q, 0) : dim(k, 0) >= 0 ? dim(k, 0) : dim(v, 0);
    if (!agree(dim(q, 0), dim(k, 0)) || !agree(dim(q, 0), dim(v, 0)) ||
        !agree(dim(k, 0), dim(v, 0)))
        return geom_fail(msg, ONYX_ERR_SHAPE, "Q, K and V have batch sizes %lld, %lld and %lld, "
                         "expected equal", (long long)dim(q, 0), (long long)dim(k, 0),
                         (long long)dim(v, 0));
    if (d.q_heads == 0 || d.kv_heads == 0)
        return geom_fail(msg, ONYX_ERR_SHAPE, "Q has %lld heads and K/V %lld, expected at least "
                         "one", (long long)d.q_heads, (long long)d.kv_heads);
    if (d.q_heads > 0 && d.kv_heads > 0 && d.q_heads % d.kv_heads != 0)
        return geom_fail(msg, ONYX_ERR_SHAPE, "Q has %lld heads, not a multiple of K/V's %lld",
                         (long long)d.q_heads, (long long)d.kv_heads);
    CHECK(onnx_past(past_k, past_v, &d, msg));
    CHECK(total_of(&d, msg));
    *out = d;
    return ONYX_OK;
}

onyx_status geom_attention_mask(const geom_att_shape *mask, const geom_attention *d,
                                geom_msg *msg) {
    if (mask->rank < 0) return ONYX_OK;
    if (mask->rank < 1 || mask->rank > 4)
        return geom_fail(msg, ONYX_ERR_SHAPE, "attn_mask has rank %d, expected 1 to 4",
                         mask->rank);
    const int64_t want[4] = {d->batch, d->q_heads, d->q_len, d->total_len};
    int off = 4 - mask->rank;
    for (int i = 0; i < mask->rank; i++) {
        int64_t m = mask->dims[i], w = want[off + i];
        if (m < 0 || w < 0 || m == w) continue;
        if (off + i == 3) {
            /* shorter masks are padded with -inf (v24's rule; the reference does it for v23 too,
             * where a last dim of 1 broadcasts instead) */
            if (m > w)
                return geom_fail(msg, ONYX_ERR_SHAPE, "attn_mask's last dim is %lld, expected at "
                                 "most %lld (the total sequence length)", (long long)m,
                                 (long long)w);
        } else if (m != 1) {
            char buf[96];
            return geom_fail(msg, ONYX_ERR_SHAPE, "attn_mask %s does not broadcast to "
                             "[%lld,%lld,%lld,%lld]",
                             geom_shape_str(mask->rank, mask->dims, buf, sizeof buf),
                             (long long)want[0], (long long)want[1], (long long)want[2],
                             (long long)want[3]);
        }
    }
    return ONYX_OK;
}

/* ---------------------------------------------------------------- com.microsoft */

onyx_status geom_attention_ms(const geom_att_shape *x, const geom_att_shape *w,
                              const geom_att_shape *bias, const geom_att_shape *past,
                              int64_t heads, const int64_t *qkv_hidden_sizes, size_t n_qkv,
                              geom_attention *out, geom_msg *msg) {
    geom_attention d;
    unknown(&d, GEOM_ATT_MS);
    CHECK(positive_heads(heads, "num_heads", msg));
    CHECK(want_rank(x, "input", 3, 3, msg));
    CHECK(want_rank(w, "weights", 2, 2, msg));
    CHECK(want_rank(bias, "bias", 1, 1, msg));
    d.batch = dim(x, 0);
    d.q_len = d.kv_len = dim(x, 1);
    d.in_hidden = dim(x, 2);
    d.q_heads = d.kv_heads = heads;
    CHECK(want_dim(w, "weights", 0, d.in_hidden, "the input's hidden size", msg));
    if (d.in_hidden < 0) d.in_hidden = dim(w, 0);
    int64_t width = dim(w, 1) >= 0 ? dim(w, 1) : dim(bias, 0), hq, hk, hv;
    if (n_qkv) {
        if (n_qkv != 3 || qkv_hidden_sizes[0] <= 0 || qkv_hidden_sizes[1] <= 0 ||
            qkv_hidden_sizes[2] <= 0)
            return geom_fail(msg, ONYX_ERR_INVALID_MODEL,
                             "qkv_hidden_sizes must be 3 positive sizes");
        hq = qkv_hidden_sizes[0], hk = qkv_hidden_sizes[1], hv = qkv_hidden_sizes[2];
        int64_t sum = add(add(hq, hk), hv);
        if (width >= 0 && sum != width)
            return geom_fail(msg, ONYX_ERR_SHAPE, "qkv_hidden_sizes add up to %lld, but the "
                             "weights have %lld columns", (long long)sum, (long long)width);
    } else {
        if (width >= 0 && width % 3 != 0)
            return geom_fail(msg, ONYX_ERR_SHAPE, "weights have %lld columns, not 3 equal parts "
                             "(set qkv_hidden_sizes)", (long long)width);
        hq = hk = hv = width >= 0 ? width / 3 : -1;
    }
    if (hq >= 0 && hq != hk)
        return geom_fail(msg, ONYX_ERR_SHAPE, "Q and K hidden sizes differ (%lld, %lld)",
                         (long long)hq, (long long)hk);
    CHECK(want_dim(bias, "bias", 0, width, "the weights' columns", msg));
    CHECK(divisible(hq, heads, "Q hidden size", msg));
    CHECK(divisible(hv, heads, "V hidden size", msg));
    d.head = quot(hq, heads);
    d.v_head = quot(hv, heads);
    d.past_len = 0;
    if (past) {
        CHECK(want_rank(past, "past", 5, 5, msg));
        if (hk >= 0 && hv >= 0 && hk != hv)
            return geom_fail(msg, ONYX_ERR_SHAPE, "past needs equal K and V hidden sizes");
        CHECK(want_dim(past, "past", 0, 2, "key and value", msg));
        CHECK(want_dim(past, "past", 1, d.batch, "batch", msg));
        CHECK(want_dim(past, "past", 2, heads, "num_heads", msg));
        CHECK(want_dim(past, "past", 4, d.head, "head size", msg));
        d.past_len = dim(past, 3);
    }
    CHECK(total_of(&d, msg));
    *out = d;
    return ONYX_OK;
}

/* past_key and past_value [B, heads, past, head sizes] of MultiHeadAttention and
 * GroupQueryAttention, the past equal for both */
static onyx_status bnsh_past(const geom_att_shape *pk, const geom_att_shape *pv, int64_t heads,
                             const char *heads_name, geom_attention *d, geom_msg *msg) {
    d->past_len = 0;
    if (!pk && !pv) return ONYX_OK;
    if (!pk || !pv)
        return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "past_key and past_value go together");
    CHECK(want_rank(pk, "past_key", 4, 4, msg));
    CHECK(want_rank(pv, "past_value", 4, 4, msg));
    CHECK(want_dim(pk, "past_key", 0, d->batch, "batch", msg));
    CHECK(want_dim(pk, "past_key", 1, heads, heads_name, msg));
    CHECK(want_dim(pk, "past_key", 3, d->head, "head size", msg));
    CHECK(want_dim(pv, "past_value", 0, d->batch, "batch", msg));
    CHECK(want_dim(pv, "past_value", 1, heads, heads_name, msg));
    CHECK(want_dim(pv, "past_value", 3, d->v_head, "value head size", msg));
    d->past_len = dim(pk, 2) >= 0 ? dim(pk, 2) : dim(pv, 2);
    return want_dim(pv, "past_value", 2, d->past_len, "past_key's length", msg);
}

onyx_status geom_attention_mha(const geom_att_shape *q, const geom_att_shape *k,
                               const geom_att_shape *v, const geom_att_shape *bias,
                               const geom_att_shape *pk, const geom_att_shape *pv, int64_t heads,
                               geom_attention *out, geom_msg *msg) {
    geom_attention d;
    unknown(&d, GEOM_ATT_MHA);
    CHECK(positive_heads(heads, "num_heads", msg));
    if (!k || !v)
        return geom_fail(msg, ONYX_ERR_UNSUPPORTED, "key and value are required (packed QKV is "
                         "not supported)");
    CHECK(want_rank(q, "query", 3, 3, msg));
    CHECK(want_rank(k, "key", 3, 4, msg));
    CHECK(want_rank(v, "value", 3, 4, msg));
    if (k->rank >= 0 && v->rank >= 0 && k->rank != v->rank)
        return geom_fail(msg, ONYX_ERR_SHAPE, "key has rank %d but value rank %d", k->rank,
                         v->rank);
    d.batch = dim(q, 0);
    d.q_len = dim(q, 1);
    int64_t hq = dim(q, 2), hk, hv;
    CHECK(divisible(hq, heads, "query hidden size", msg));
    d.q_heads = d.kv_heads = heads;
    d.head = quot(hq, heads);
    d.kv_bnsh = k->rank == 4;
    if (d.kv_bnsh) {
        CHECK(want_dim(k, "key", 0, d.batch, "batch", msg));
        CHECK(want_dim(k, "key", 1, heads, "num_heads", msg));
        CHECK(want_dim(k, "key", 3, d.head, "head size", msg));
        CHECK(want_dim(v, "value", 0, d.batch, "batch", msg));
        CHECK(want_dim(v, "value", 1, heads, "num_heads", msg));
        d.kv_len = dim(k, 2) >= 0 ? dim(k, 2) : dim(v, 2);
        CHECK(want_dim(v, "value", 2, d.kv_len, "the key's length", msg));
        d.v_head = dim(v, 3);
        hk = mul(heads, d.head);
        hv = mul(heads, d.v_head);
        if (pk || pv)
            return geom_fail(msg, ONYX_ERR_SHAPE, "past_key/past_value go with a 3-D key, not a "
                             "4-D one");
    } else {
        CHECK(want_dim(k, "key", 0, d.batch, "batch", msg));
        CHECK(want_dim(v, "value", 0, d.batch, "batch", msg));
        d.kv_len = dim(k, 1) >= 0 ? dim(k, 1) : dim(v, 1);
        CHECK(want_dim(v, "value", 1, d.kv_len, "the key's length", msg));
        hk = dim(k, 2);
        hv = dim(v, 2);
        CHECK(want_dim(k, "key", 2, hq, "the query's hidden size", msg));
        CHECK(divisible(hv, heads, "value hidden size", msg));
        d.v_head = quot(hv, heads);
    }
    if (bias) {
        CHECK(want_rank(bias, "bias", 1, 1, msg));
        CHECK(want_dim(bias, "bias", 0, add(add(hq, hk), hv), "query + key + value hidden sizes",
                       msg));
    }
    CHECK(bnsh_past(pk, pv, heads, "num_heads", &d, msg));
    CHECK(total_of(&d, msg));
    *out = d;
    return ONYX_OK;
}

onyx_status geom_attention_gqa(const geom_att_shape *q, const geom_att_shape *k,
                               const geom_att_shape *v, const geom_att_shape *pk,
                               const geom_att_shape *pv, int64_t heads, int64_t kvh,
                               int64_t total, int64_t window_cache, geom_attention *out,
                               geom_msg *msg) {
    geom_attention d;
    unknown(&d, GEOM_ATT_GQA);
    CHECK(positive_heads(heads, "num_heads", msg));
    CHECK(positive_heads(kvh, "kv_num_heads", msg));
    if (heads % kvh != 0)
        return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "num_heads %lld is not a multiple of "
                         "kv_num_heads %lld", (long long)heads, (long long)kvh);
    d.q_heads = heads;
    d.kv_heads = kvh;
    CHECK(want_rank(q, "query", 3, 3, msg));
    d.batch = dim(q, 0);
    d.q_len = d.kv_len = dim(q, 1);
    int64_t w = dim(q, 2);
    d.qkv_packed = !k;
    if (d.qkv_packed) {
        if (v)
            return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "value without key: packed QKV takes "
                             "neither");
        /* kvh divides heads, so the sum stays within 3 * heads */
        int64_t all = heads > INT64_MAX / 3 ? INT64_MAX : heads + 2 * kvh;
        if (w >= 0 && w % all != 0)
            return geom_fail(msg, ONYX_ERR_SHAPE, "packed QKV width %lld is not a multiple of "
                             "num_heads + 2*kv_num_heads = %lld", (long long)w, (long long)all);
        d.head = quot(w, all);
    } else {
        if (!v) return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "key without value");
        CHECK(divisible(w, heads, "query hidden size", msg));
        d.head = quot(w, heads);
        CHECK(want_rank(k, "key", 3, 3, msg));
        CHECK(want_rank(v, "value", 3, 3, msg));
        int64_t kw = mul(kvh, d.head);
        CHECK(want_dim(k, "key", 0, d.batch, "batch", msg));
        CHECK(want_dim(k, "key", 1, d.q_len, "the query's length", msg));
        CHECK(want_dim(k, "key", 2, kw, "kv_num_heads * head size", msg));
        CHECK(want_dim(v, "value", 0, d.batch, "batch", msg));
        CHECK(want_dim(v, "value", 1, d.q_len, "the query's length", msg));
        CHECK(want_dim(v, "value", 2, kw, "kv_num_heads * head size", msg));
    }
    d.v_head = d.head;
    CHECK(bnsh_past(pk, pv, kvh, "kv_num_heads", &d, msg));
    if (window_cache > 0) {
        if (!pk)
            return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "sliding_window_cache=1 needs past_key "
                             "and past_value (the window-sized buffers)");
        if (d.past_len >= 0 && d.past_len < window_cache)
            return geom_fail(msg, ONYX_ERR_SHAPE, "sliding_window_cache=1: the cache's capacity "
                             "%lld is less than local_window_size %lld", (long long)d.past_len,
                             (long long)window_cache);
    }
    d.window_cache = window_cache > 0 ? window_cache : 0;
    return geom_attention_gqa_total(&d, total, out, msg);
}

onyx_status geom_attention_gqa_total(const geom_attention *plan, int64_t total,
                                     geom_attention *out, geom_msg *msg) {
    geom_attention d = *plan;
    d.total_len = -1;
    if (total >= 0) {
        if (d.q_len >= 0 && total < d.q_len)
            return geom_fail(msg, ONYX_ERR_SHAPE, "total_sequence_length %lld is less than the "
                             "sequence length %lld", (long long)total, (long long)d.q_len);
        d.total_len = d.past_len >= 0 && d.past_len > total ? d.past_len : total;
    }
    if (d.window_cache > 0) d.total_len = d.past_len; /* present keeps the past's capacity */
    *out = d;
    return ONYX_OK;
}

/* ---------------------------------------------------------------- for plans and kernels */

bool geom_attention_known(const geom_attention *d) {
    const int64_t sizes[] = {d->batch, d->q_heads, d->kv_heads, d->q_len,  d->kv_len,
                             d->past_len, d->head, d->v_head, d->rot, d->max_pos};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] < 0) return false;
    if (d->form != GEOM_ATT_GQA && d->total_len < 0) return false;
    if (d->form == GEOM_ATT_MS && d->in_hidden < 0) return false;
    return d->mask != GEOM_ATT_MASK_UNKNOWN;
}

int64_t geom_attention_query_numel(const geom_attention *d) {
    int64_t rows = mul(d->batch, d->q_len);
    if (d->form == GEOM_ATT_MS) return mul(rows, d->in_hidden);
    if (d->qkv_packed) return mul(rows, mul(add(d->q_heads, mul(2, d->kv_heads)), d->head));
    return mul(rows, mul(d->q_heads, d->head));
}

/* ---------------------------------------------------------------- a chain of products */

onyx_status geom_attention_chain(int rank, const int64_t *q, const int64_t *kt, const int64_t *v,
                                 const int64_t *y, geom_attention *out, geom_msg *msg) {
    if (rank != 3 && rank != 4)
        return geom_fail(msg, ONYX_ERR_SHAPE, "views of rank %d, expected 3 or 4", rank);
    geom_attention d;
    unknown(&d, GEOM_ATT_CHAIN);
    int r = rank;
    d.batch = r == 4 ? q[0] : 1;
    d.q_heads = d.kv_heads = q[r - 3];
    d.q_len = q[r - 2];
    d.head = q[r - 1];
    d.kv_len = d.total_len = kt[r - 1];
    d.v_head = v[r - 1];
    d.past_len = 0;
    for (int i = 0; i < r - 2; i++)
        if (kt[i] != q[i] || v[i] != q[i] || y[i] != q[i])
            return geom_fail(msg, ONYX_ERR_SHAPE, "the views' batch and head dims differ");
    if (kt[r - 2] != d.head || v[r - 2] != d.kv_len || y[r - 2] != d.q_len ||
        y[r - 1] != d.v_head)
        return geom_fail(msg, ONYX_ERR_SHAPE, "the views do not make an attention: Q [%lld, "
                         "%lld], K^T [%lld, %lld], V [%lld, %lld], output [%lld, %lld]",
                         (long long)q[r - 2], (long long)q[r - 1], (long long)kt[r - 2],
                         (long long)kt[r - 1], (long long)v[r - 2], (long long)v[r - 1],
                         (long long)y[r - 2], (long long)y[r - 1]);
    *out = d;
    return ONYX_OK;
}
