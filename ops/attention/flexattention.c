/* Schema of ai.onnx.preview FlexAttention (v1): 4-D scaled dot-product attention with optional
 * score_mod / prob_mod subgraphs applied to the whole (B, Hq, L, S) score and probability
 * tensors. */
#include "ops/attention/attention_common.h"

static onyx_status check_mod(const graph_node *n, const char *name) {
    const graph *g = attr_graph(n, name);
    if (!g) return ONYX_OK;
    if (g->n_inputs != 1 || g->n_outputs != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s has %d inputs and %d outputs, expected 1 "
                          "and 1", name, g->n_inputs, g->n_outputs);
    return ONYX_OK;
}

static onyx_status flex_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    for (int i = 0; i < 3; i++) {
        TRY(infer_dtype_in(c, i, OPS_ATT_FLOATS));
        if (c->in[i]->dtype != c->in[0]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected Q's %s", i,
                              onyx_dtype_name(c->in[i]->dtype), onyx_dtype_name(c->in[0]->dtype));
        if (c->in[i]->rank >= 0 && c->in[i]->rank != 4)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected 4", i,
                              c->in[i]->rank);
    }
    if (node_attr(n, "softmax_precision")) {
        int64_t sp = attr_int(n, "softmax_precision", 0);
        if (sp < 0 || sp > 31 || !dtype_in((onyx_dtype)sp, OPS_ATT_FLOATS))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "softmax_precision is %lld, expected a "
                              "float type (1, 10, 11 or 16)", (long long)sp);
    }
    TRY(check_mod(n, "score_mod"));
    TRY(check_mod(n, "prob_mod"));
    if (c->in[0]->rank < 0 && c->in[1]->rank < 0 && c->in[2]->rank < 0) {
        type_set_tensor(&c->out[0], c->in[0]->dtype, 4, NULL);
        return ONYX_OK;
    }
    geom_attention d;
    TRY(ops_attention_dims(n, c->in[0], c->in[1], c->in[2], NULL, NULL, &d));
    type_set_tensor(&c->out[0], c->in[0]->dtype, 4,
                    (const int64_t[]){d.batch, d.q_heads, d.q_len, d.v_head});
    infer_set_attention(c, &d);
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"prob_mod", ATTR_GRAPH}, {"scale", ATTR_FLOAT}, {"score_mod", ATTR_GRAPH},
    {"softmax_precision", ATTR_INT}, {NULL, 0}};

const op_schema op_FlexAttention[] = {
    {"ai.onnx.preview", "FlexAttention", 1, 3, 3, 1, 1, attrs, flex_infer, OP_GEOMETRY},
    OP_END,
};
