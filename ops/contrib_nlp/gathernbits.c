/* Schema of ai.onyx GatherNBits, onyx's own op (no model writes it; core/rules/tied_embedding.c
 * makes it of a tied int4 embedding): rows of a MatMulNBits weight dequantized, Y[i..., :] =
 * (code - zero point) * scale of row indices[i...] of B (column n of the product), in the scales'
 * type. Inputs B (uint8 [N, k_blocks, blob]), indices, scales, zero_points (optional, packed
 * uint8), and the attributes of the MatMulNBits that reads the same weight (accuracy_level
 * included: the kernel keeps the weight in the form that product keeps it in). */
#include "ops/contrib_nlp/contrib_nlp.h"

static onyx_status gather_nbits_infer(infer_ctx *c) {
    cnlp_nbits q;
    TRY(cnlp_nbits_of(c->node, &q));
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_UINT8)));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    TRY(infer_dtype_in(c, 2, CNLP_T));
    TRY(cnlp_want_numel(c->in[0], "B", q.n * q.k_blocks * q.blob));
    TRY(cnlp_want_numel(c->in[2], "scales", q.n * q.k_blocks));
    if (cnlp_has(c, 3)) {
        TRY(infer_dtype_in(c, 3, DT_BIT(ONYX_UINT8)));
        TRY(cnlp_want_numel(c->in[3], "zero_points", q.n * q.zp_bytes));
    }
    const type_info *idx = c->in[1];
    if (idx->rank < 0) {
        type_set_tensor(&c->out[0], c->in[2]->dtype, -1, NULL);
        return ONYX_OK;
    }
    if (idx->rank + 1 > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "output rank %d exceeds %d", idx->rank + 1,
                          ONYX_MAX_RANK);
    int64_t d[ONYX_MAX_RANK];
    for (int i = 0; i < idx->rank; i++) d[i] = idx->dims[i];
    d[idx->rank] = q.k;
    type_set_tensor(&c->out[0], c->in[2]->dtype, idx->rank + 1, d);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"K", ATTR_INT},
                                  {"N", ATTR_INT},
                                  {"bits", ATTR_INT},
                                  {"block_size", ATTR_INT},
                                  {"accuracy_level", ATTR_INT},
                                  {NULL, 0}};

const op_schema op_GatherNBits[] = {
    {"ai.onyx", "GatherNBits", 1, 3, 4, 1, 1, attrs, gather_nbits_infer, 0},
    OP_END,
};
