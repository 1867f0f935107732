/* Schema of com.microsoft.MatMulNBits: A @ W^T where W [N, K] is stored block-quantized along K
 * in 2/4/8-bit codes with a scale (and optional zero point) per block, plus an optional bias. */
#include "ops/contrib_nlp/contrib_nlp.h"

onyx_status cnlp_want_numel(const type_info *t, const char *name, int64_t want) {
    if (t->rank < 0 || want < 0) return ONYX_OK;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0) return ONYX_OK;
        n *= t->dims[i];
    }
    if (n == want) return ONYX_OK;
    char b[160];
    return onyx_error(ONYX_ERR_SHAPE, "%s has shape %s (%lld elements), expected %lld", name,
                      shape_str(t->rank, t->dims, b, sizeof b), (long long)n, (long long)want);
}

static onyx_status nbits_infer(infer_ctx *c) {
    cnlp_nbits q;
    TRY(cnlp_nbits_of(c->node, &q));
    TRY(infer_dtype_in(c, 0, CNLP_T));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_UINT8)));
    TRY(infer_need_tensor(c, 2));
    TRY(cnlp_same_dtype(c, 0, 2));
    if (cnlp_has(c, 4))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input g_idx (deprecated) is not supported");
    const type_info *a = c->in[0];
    TRY(cnlp_want_numel(c->in[1], "B", q.n * q.k_blocks * q.blob));
    TRY(cnlp_want_numel(c->in[2], "scales", q.n * q.k_blocks));
    if (cnlp_has(c, 3)) {
        const type_info *z = c->in[3];
        TRY(infer_need_tensor(c, 3));
        if (z->dtype == ONYX_UINT8) {
            TRY(cnlp_want_numel(z, "zero_points", q.n * q.zp_bytes));
        } else {
            TRY(cnlp_same_dtype(c, 0, 3));
            TRY(cnlp_want_numel(z, "zero_points", q.n * q.k_blocks));
        }
    }
    if (cnlp_has(c, 5)) {
        TRY(cnlp_same_dtype(c, 0, 5));
        TRY(cnlp_want_numel(c->in[5], "bias", q.n));
    }
    if (a->rank < 0) {
        type_set_tensor(&c->out[0], a->dtype, -1, NULL);
        return ONYX_OK;
    }
    if (a->rank == 0) return onyx_error(ONYX_ERR_SHAPE, "A is a scalar, expected rank >= 1");
    if (!cnlp_agree(a->dims[a->rank - 1], q.k))
        return onyx_error(ONYX_ERR_SHAPE, "A's last dim is %lld, expected K = %lld",
                          (long long)a->dims[a->rank - 1], (long long)q.k);
    int64_t d[ONYX_MAX_RANK];
    for (int i = 0; i < a->rank; i++) d[i] = a->dims[i];
    d[a->rank - 1] = q.n;
    type_set_tensor(&c->out[0], a->dtype, a->rank, d);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"K", ATTR_INT},
                                  {"N", ATTR_INT},
                                  {"bits", ATTR_INT},
                                  {"block_size", ATTR_INT},
                                  {"accuracy_level", ATTR_INT},
                                  {"weight_prepacked", ATTR_INT},
                                  {NULL, 0}};

const op_schema op_MsMatMulNBits[] = {
    {CNLP_MS, "MatMulNBits", 1, 3, 6, 1, 1, attrs, nbits_infer, 0},
    OP_END,
};
