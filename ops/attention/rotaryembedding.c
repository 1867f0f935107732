/* Schema of RotaryEmbedding (v23): rotates the first rotary_embedding_dim features of each head
 * by position-dependent angles whose cos/sin come from caches (indexed by position_ids or given
 * per batch and position). */
#include "ops/schema.h"

#define ROPE_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))

static bool agree(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

static onyx_status rope_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    TRY(infer_dtype_in(c, 0, ROPE_TYPES));
    const type_info *x = c->in[0];
    for (int i = 1; i < 3; i++) {
        TRY(infer_dtype_in(c, i, ROPE_TYPES));
        if (c->in[i]->dtype != x->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected the input's %s", i,
                              onyx_dtype_name(c->in[i]->dtype), onyx_dtype_name(x->dtype));
    }
    const type_info *pos = c->n_in > 3 ? c->in[3] : NULL;
    if (pos) TRY(infer_dtype_in(c, 3, DT_BIT(ONYX_INT64)));
    int64_t heads = attr_int(n, "num_heads", 0), rdim = attr_int(n, "rotary_embedding_dim", 0);
    if (heads < 0 || rdim < 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "num_heads %lld and rotary_embedding_dim %lld "
                          "must not be negative", (long long)heads, (long long)rdim);
    if (x->rank >= 0) {
        if (x->rank != 3 && x->rank != 4)
            return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected 3 or 4", x->rank);
        int64_t batch = x->dims[0], seq = x->dims[x->rank == 4 ? 2 : 1], head = -1;
        if (x->rank == 3) {
            if (heads == 0)
                return onyx_error(ONYX_ERR_INVALID_MODEL, "a 3-D input needs num_heads > 0");
            if (x->dims[2] >= 0 && x->dims[2] % heads != 0)
                return onyx_error(ONYX_ERR_SHAPE, "hidden size %lld is not a multiple of "
                                  "num_heads %lld", (long long)x->dims[2], (long long)heads);
            if (x->dims[2] >= 0) head = x->dims[2] / heads;
        } else {
            head = x->dims[3];
        }
        if (head >= 0) {
            int64_t r = rdim ? rdim : head;
            if (r > head || r % 2 != 0)
                return onyx_error(ONYX_ERR_SHAPE, "rotary dim %lld must be even and at most the "
                                  "head size %lld", (long long)r, (long long)head);
        }
        int64_t half = head >= 0 ? (rdim ? rdim : head) / 2 : rdim ? rdim / 2 : -1;
        if (pos && pos->rank >= 0 &&
            (pos->rank != 2 || !agree(pos->dims[0], batch) || !agree(pos->dims[1], seq)))
            return onyx_error(ONYX_ERR_SHAPE, "position_ids must have shape [%lld,%lld]",
                              (long long)batch, (long long)seq);
        for (int i = 1; i < 3; i++) {
            const type_info *cs = c->in[i];
            if (cs->rank < 0) continue;
            bool ok = pos ? cs->rank == 2 && agree(cs->dims[1], half)
                          : cs->rank == 3 && agree(cs->dims[0], batch) && agree(cs->dims[1], seq) &&
                                agree(cs->dims[2], half);
            if (!ok) {
                char buf[64];
                return onyx_error(ONYX_ERR_SHAPE, "%s has shape %s, expected %s with last dim "
                                  "%lld (rotary dim / 2)", i == 1 ? "cos_cache" : "sin_cache",
                                  shape_str(cs->rank, cs->dims, buf, sizeof buf),
                                  pos ? "[max_position, half]" : "[batch, seq, half]",
                                  (long long)half);
            }
        }
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {
    {"interleaved", ATTR_INT}, {"num_heads", ATTR_INT}, {"rotary_embedding_dim", ATTR_INT},
    {NULL, 0}};

const op_schema op_RotaryEmbedding[] = {
    {"", "RotaryEmbedding", 23, 3, 4, 1, 1, attrs, rope_infer, 0},
    OP_END,
};
