/* Attention geometry shared by the schemas and the CPU kernels (see attention_common.h). */
#include "ops/attention/attention_common.h"

/* a and b agree unless both are known and differ */
static bool dims_agree(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

static int64_t known_div(int64_t a, int64_t b) { return a < 0 || b <= 0 ? -1 : a / b; }

/* Splits a packed hidden size into heads; fails when it does not divide. */
static onyx_status split_hidden(const char *what, int64_t hidden, int64_t heads, int64_t *head) {
    if (hidden >= 0 && heads > 0 && hidden % heads != 0)
        return onyx_error(ONYX_ERR_SHAPE, "%s hidden size %lld is not a multiple of its %lld heads",
                          what, (long long)hidden, (long long)heads);
    *head = known_div(hidden, heads);
    return ONYX_OK;
}

onyx_status ops_attention_dims(const graph_node *n, const type_info *q, const type_info *k,
                               const type_info *v, const type_info *past_k,
                               const type_info *past_v, ops_att_dims *out) {
    ops_att_dims d = {0};
    const type_info *qkv[3] = {q, k, v};
    static const char *const names[3] = {"Q", "K", "V"};
    int rank = -1;
    for (int i = 0; i < 3; i++) {
        int r = qkv[i]->rank;
        if (r < 0) continue;
        if (r != 3 && r != 4)
            return onyx_error(ONYX_ERR_SHAPE, "%s has rank %d, expected 3 or 4", names[i], r);
        if (rank >= 0 && r != rank)
            return onyx_error(ONYX_ERR_SHAPE, "Q, K and V have ranks %d, %d and %d, expected "
                              "one rank", q->rank, k->rank, v->rank);
        rank = r;
    }
    if (rank < 0) return onyx_error(ONYX_ERR_SHAPE, "the ranks of Q, K and V are unknown");
    const int64_t *qd = q->rank >= 0 ? q->dims : NULL, *kd = k->rank >= 0 ? k->dims : NULL,
                  *vd = v->rank >= 0 ? v->dims : NULL;
#define DIM(p, i) ((p) ? (p)[i] : -1)
    d.packed = rank == 3;
    if (d.packed) {
        int64_t qh = attr_int(n, "q_num_heads", 0), kvh = attr_int(n, "kv_num_heads", 0);
        if (qh <= 0 || kvh <= 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "3-D inputs need q_num_heads and "
                              "kv_num_heads > 0, got %lld and %lld", (long long)qh, (long long)kvh);
        d.q_heads = qh;
        d.kv_heads = kvh;
        d.q_len = DIM(qd, 1);
        d.kv_len = DIM(kd, 1);
        TRY(split_hidden("Q", DIM(qd, 2), qh, &d.head));
        int64_t khead = -1;
        TRY(split_hidden("K", DIM(kd, 2), kvh, &khead));
        if (!dims_agree(d.head, khead))
            return onyx_error(ONYX_ERR_SHAPE, "Q's head size %lld differs from K's %lld",
                              (long long)d.head, (long long)khead);
        if (d.head < 0) d.head = khead;
        TRY(split_hidden("V", DIM(vd, 2), kvh, &d.v_head));
        if (!dims_agree(DIM(kd, 1), DIM(vd, 1)))
            return onyx_error(ONYX_ERR_SHAPE, "K has %lld positions and V %lld, expected equal",
                              (long long)DIM(kd, 1), (long long)DIM(vd, 1));
        if (d.kv_len < 0) d.kv_len = DIM(vd, 1);
    } else {
        d.q_heads = DIM(qd, 1);
        d.kv_heads = DIM(kd, 1) >= 0 ? DIM(kd, 1) : DIM(vd, 1);
        d.q_len = DIM(qd, 2);
        d.kv_len = DIM(kd, 2) >= 0 ? DIM(kd, 2) : DIM(vd, 2);
        d.head = DIM(qd, 3) >= 0 ? DIM(qd, 3) : DIM(kd, 3);
        d.v_head = DIM(vd, 3);
        if (!dims_agree(DIM(kd, 1), DIM(vd, 1)) || !dims_agree(DIM(kd, 2), DIM(vd, 2)))
            return onyx_error(ONYX_ERR_SHAPE, "K has %lld heads x %lld positions and V %lld x "
                              "%lld, expected equal", (long long)DIM(kd, 1), (long long)DIM(kd, 2),
                              (long long)DIM(vd, 1), (long long)DIM(vd, 2));
        if (!dims_agree(DIM(qd, 3), DIM(kd, 3)))
            return onyx_error(ONYX_ERR_SHAPE, "Q's head size %lld differs from K's %lld",
                              (long long)DIM(qd, 3), (long long)DIM(kd, 3));
    }
    d.batch = DIM(qd, 0) >= 0 ? DIM(qd, 0) : DIM(kd, 0) >= 0 ? DIM(kd, 0) : DIM(vd, 0);
    if (!dims_agree(DIM(qd, 0), DIM(kd, 0)) || !dims_agree(DIM(qd, 0), DIM(vd, 0)) ||
        !dims_agree(DIM(kd, 0), DIM(vd, 0)))
        return onyx_error(ONYX_ERR_SHAPE, "Q, K and V have batch sizes %lld, %lld and %lld, "
                          "expected equal", (long long)DIM(qd, 0), (long long)DIM(kd, 0),
                          (long long)DIM(vd, 0));
    if (d.q_heads == 0 || d.kv_heads == 0)
        return onyx_error(ONYX_ERR_SHAPE, "Q has %lld heads and K/V %lld, expected at least one",
                          (long long)d.q_heads, (long long)d.kv_heads);
    if (d.q_heads > 0 && d.kv_heads > 0 && d.q_heads % d.kv_heads != 0)
        return onyx_error(ONYX_ERR_SHAPE, "Q has %lld heads, not a multiple of K/V's %lld",
                          (long long)d.q_heads, (long long)d.kv_heads);

    if ((past_k != NULL) != (past_v != NULL))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "past_key and past_value must be given together");
    d.past_len = 0;
    if (past_k) {
        const type_info *pk[2] = {past_k, past_v};
        int64_t heads[2] = {d.head, d.v_head};
        d.past_len = -1;
        for (int i = 0; i < 2; i++) {
            const char *name = i ? "past_value" : "past_key";
            if (pk[i]->rank < 0) continue;
            if (pk[i]->rank != 4)
                return onyx_error(ONYX_ERR_SHAPE, "%s has rank %d, expected 4", name, pk[i]->rank);
            const int64_t *p = pk[i]->dims;
            if (!dims_agree(p[0], d.batch) || !dims_agree(p[1], d.kv_heads) ||
                !dims_agree(p[3], heads[i]) || !dims_agree(p[2], d.past_len))
                return onyx_error(ONYX_ERR_SHAPE, "%s has shape [%lld,%lld,%lld,%lld], expected "
                                  "[%lld,%lld,past,%lld] (past equal for key and value)", name,
                                  (long long)p[0], (long long)p[1], (long long)p[2],
                                  (long long)p[3], (long long)d.batch, (long long)d.kv_heads,
                                  (long long)heads[i]);
            if (d.past_len < 0) d.past_len = p[2];
            if (i == 0 && d.head < 0) d.head = p[3];
            if (i == 1 && d.v_head < 0) d.v_head = p[3];
        }
    }
    d.total_len = d.past_len < 0 || d.kv_len < 0 ? -1 : d.past_len + d.kv_len;
#undef DIM
    *out = d;
    return ONYX_OK;
}

onyx_status ops_attention_check_mask(const graph_node *n, const type_info *mask,
                                     const ops_att_dims *d) {
    (void)n; /* the version matters to the kernel only (v23 broadcasts a last dim of 1) */
    if (mask->rank < 0) return ONYX_OK;
    if (mask->rank < 1 || mask->rank > 4)
        return onyx_error(ONYX_ERR_SHAPE, "attn_mask has rank %d, expected 1 to 4", mask->rank);
    const int64_t want[4] = {d->batch, d->q_heads, d->q_len, d->total_len};
    int off = 4 - mask->rank;
    for (int i = 0; i < mask->rank; i++) {
        int64_t m = mask->dims[i], w = want[off + i];
        if (m < 0 || w < 0 || m == w) continue;
        if (off + i == 3) {
            /* shorter masks are padded with -inf (v24's rule; the reference does it for v23 too,
             * where a last dim of 1 broadcasts instead) */
            if (m > w)
                return onyx_error(ONYX_ERR_SHAPE, "attn_mask's last dim is %lld, expected at most "
                                  "%lld (the total sequence length)", (long long)m, (long long)w);
        } else if (m != 1) {
            char buf[96];
            return onyx_error(ONYX_ERR_SHAPE, "attn_mask %s does not broadcast to "
                              "[%lld,%lld,%lld,%lld]",
                              shape_str(mask->rank, mask->dims, buf, sizeof buf),
                              (long long)want[0], (long long)want[1], (long long)want[2],
                              (long long)want[3]);
        }
    }
    return ONYX_OK;
}
