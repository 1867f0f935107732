/* Schema of com.microsoft.RotaryEmbedding: rotates the first rotary_embedding_dim features of each
 * head by angles looked up in cos/sin caches at each token's position (non-interleaved halves or
 * interleaved pairs); input [B, S, H] with num_heads, or [B, N, S, D]. */
#include "ops/contrib_nlp/contrib_nlp.h"

static onyx_status rope_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, CNLP_T));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    TRY(infer_need_tensor(c, 2));
    TRY(infer_need_tensor(c, 3));
    TRY(cnlp_same_dtype(c, 0, 2));
    TRY(cnlp_same_dtype(c, 0, 3));
    cnlp_rope_dims d;
    TRY(cnlp_rope_dims_of(c->node, c->in[0], c->in[1], c->in[2], c->in[3], &d));
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {
    {"interleaved", ATTR_INT},        {"num_heads", ATTR_INT}, {"rotary_embedding_dim", ATTR_INT},
    {"is_packed_batching", ATTR_INT}, {"scale", ATTR_FLOAT},   {NULL, 0}};

const op_schema op_MsRotaryEmbedding[] = {
    {CNLP_MS, "RotaryEmbedding", 1, 4, 4, 1, 1, attrs, rope_infer, 0},
    OP_END,
};
