/* Schema of LinearAttention (v27): the linear / gated / delta / gated-delta recurrences over a
 * (B, H_kv, d_k, d_v) state, with 3-D packed query/key/value and GQA. */
#include <string.h>

#include "ops/schema.h"

#define LA_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))

static bool agree(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

static int64_t per_head(int64_t hidden, int64_t heads) { return hidden < 0 ? -1 : hidden / heads; }

static onyx_status la_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    const char *rule = attr_string(n, "update_rule", "gated_delta");
    bool gated = strcmp(rule, "gated") == 0 || strcmp(rule, "gated_delta") == 0;
    bool delta = strcmp(rule, "delta") == 0 || strcmp(rule, "gated_delta") == 0;
    if (!gated && !delta && strcmp(rule, "linear") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "update_rule is '%s', expected linear, gated, "
                          "delta or gated_delta", rule);
    int64_t hq = attr_int(n, "q_num_heads", 0), hkv = attr_int(n, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "q_num_heads %lld must be a positive multiple "
                          "of kv_num_heads %lld", (long long)hq, (long long)hkv);
    const type_info *in[6] = {0};
    for (int i = 0; i < c->n_in && i < 6; i++) in[i] = c->in[i];
    static const char *const names[6] = {"query", "key", "value", "past_state", "decay", "beta"};
    /* query, key and value are required: a model may still name them '' */
    for (int i = 0; i < 3; i++)
        if (!in[i])
            return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d (%s) is required but omitted",
                              i, names[i]);
    if (gated != (in[4] != NULL))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "update_rule '%s' %s the decay input", rule,
                          gated ? "needs" : "forbids");
    if (delta != (in[5] != NULL))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "update_rule '%s' %s the beta input", rule,
                          delta ? "needs" : "forbids");
    for (int i = 0; i < 6; i++) {
        if (!in[i]) continue;
        TRY(infer_dtype_in(c, i, LA_TYPES));
        if (i != 3 && in[i]->dtype != in[0]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "%s has type %s, expected query's %s", names[i],
                              onyx_dtype_name(in[i]->dtype), onyx_dtype_name(in[0]->dtype));
        int want = i == 3 ? 4 : 3;
        if (in[i]->rank >= 0 && in[i]->rank != want)
            return onyx_error(ONYX_ERR_SHAPE, "%s has rank %d, expected %d", names[i],
                              in[i]->rank, want);
    }
    const int64_t unk[4] = {-1, -1, -1, -1};
    const int64_t *q = in[0]->rank >= 0 ? in[0]->dims : unk,
                  *k = in[1]->rank >= 0 ? in[1]->dims : unk,
                  *v = in[2]->rank >= 0 ? in[2]->dims : unk;
    for (int a = 0; a < 2; a++)
        if (!agree(q[a], k[a]) || !agree(q[a], v[a]) || !agree(k[a], v[a]))
            return onyx_error(ONYX_ERR_SHAPE, "query, key and value disagree on dim %d (%lld, "
                              "%lld, %lld)", a, (long long)q[a], (long long)k[a], (long long)v[a]);
    if ((q[2] >= 0 && q[2] % hq) || (k[2] >= 0 && k[2] % hkv) || (v[2] >= 0 && v[2] % hkv))
        return onyx_error(ONYX_ERR_SHAPE, "hidden sizes %lld, %lld, %lld are not multiples of "
                          "the head counts %lld, %lld, %lld", (long long)q[2], (long long)k[2],
                          (long long)v[2], (long long)hq, (long long)hkv, (long long)hkv);
    int64_t dk = per_head(q[2], hq), dv = per_head(v[2], hkv);
    if (!agree(dk, per_head(k[2], hkv)))
        return onyx_error(ONYX_ERR_SHAPE, "query's head size %lld differs from key's %lld",
                          (long long)dk, (long long)per_head(k[2], hkv));
    if (dk < 0) dk = per_head(k[2], hkv);
    int64_t b = q[0] >= 0 ? q[0] : k[0] >= 0 ? k[0] : v[0];
    int64_t t = q[1] >= 0 ? q[1] : k[1] >= 0 ? k[1] : v[1];
    if (in[3] && in[3]->rank == 4) {
        const int64_t *p = in[3]->dims;
        if (!agree(p[0], b) || !agree(p[1], hkv) || !agree(p[2], dk) || !agree(p[3], dv))
            return onyx_error(ONYX_ERR_SHAPE, "past_state has shape [%lld,%lld,%lld,%lld], "
                              "expected [%lld,%lld,%lld,%lld]", (long long)p[0], (long long)p[1],
                              (long long)p[2], (long long)p[3], (long long)b, (long long)hkv,
                              (long long)dk, (long long)dv);
    }
    for (int i = 4; i < 6; i++) {
        if (!in[i] || in[i]->rank != 3) continue;
        const int64_t *g = in[i]->dims;
        bool last_ok = g[2] < 0 || (i == 4 ? g[2] == hkv || (dk >= 0 && g[2] == hkv * dk)
                                           : g[2] == hkv || g[2] == 1);
        if (!agree(g[0], b) || !agree(g[1], t) || !last_ok)
            return onyx_error(ONYX_ERR_SHAPE, "%s has shape [%lld,%lld,%lld], expected "
                              "[%lld,%lld,%s]", names[i], (long long)g[0], (long long)g[1],
                              (long long)g[2], (long long)b, (long long)t,
                              i == 4 ? "kv_num_heads or kv_num_heads*d_k" : "kv_num_heads or 1");
    }
    type_set_tensor(&c->out[0], in[0]->dtype, 3,
                    (const int64_t[]){b, t, dv < 0 ? -1 : hq * dv});
    if (c->n_out > 1)
        type_set_tensor(&c->out[1], in[3] ? in[3]->dtype : in[0]->dtype, 4,
                        (const int64_t[]){b, hkv, dk, dv});
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"chunk_size", ATTR_INT}, {"kv_num_heads", ATTR_INT}, {"q_num_heads", ATTR_INT},
    {"scale", ATTR_FLOAT},    {"update_rule", ATTR_STRING}, {NULL, 0}};

const op_schema op_LinearAttention[] = {
    {"", "LinearAttention", 27, 3, 6, 2, 2, attrs, la_infer, 0},
    OP_END,
};
