/* Schemas of com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul: 8-bit numpy matmul
 * scaled to float (plus an optional bias), DynamicQuantizeMatMul quantizing its float A itself.
 *
 * onnxruntime's optimizer makes them of MatMulInteger (+ DynamicQuantizeLinear) chains; b's
 * scale and zero point may be per column. */
#include "ops/contrib_quant/cq_infer.h"

/* b_scale / b_zero_point (input i): one value, N values (2-D B), or [..., 1, N] like B. */
static onyx_status b_param(infer_ctx *c, int i, const char *name) {
    const type_info *p = c->in[i], *b = c->in[1];
    if (p->rank <= 0 || b->rank < 0) return ONYX_OK;
    int64_t n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    bool one = p->rank == 1 && p->dims[0] == 1;
    bool cols = p->rank == 1 && (p->dims[0] < 0 || n < 0 || p->dims[0] == n);
    bool mats = p->rank == b->rank && p->rank >= 2 && p->dims[p->rank - 2] == 1;
    for (int d = 0; mats && d < p->rank; d++)
        if (d != p->rank - 2 && p->dims[d] >= 0 && b->dims[d] >= 0 && p->dims[d] != b->dims[d])
            mats = false;
    if (one || cols || mats) return ONYX_OK;
    char s1[160], s2[160];
    return onyx_error(ONYX_ERR_UNSUPPORTED, "input %d (%s) has shape %s; supported with B %s: "
                      "one value, N values or [..., 1, N] matching B",
                      i, name, shape_str(p->rank, p->dims, s1, sizeof s1),
                      shape_str(b->rank, b->dims, s2, sizeof s2));
}

static onyx_status bias_check(infer_ctx *c, int i) {
    if (!cq_has(c, i)) return ONYX_OK;
    TRY(infer_dtype_in(c, i, DT_BIT(ONYX_FLOAT)));
    const type_info *t = c->in[i], *b = c->in[1];
    int64_t n = b->rank >= 2 ? b->dims[b->rank - 1] : -1;
    if (t->rank >= 0 && (t->rank != 1 || (t->dims[0] >= 0 && n >= 0 && t->dims[0] != n))) {
        char s[160];
        return onyx_error(ONYX_ERR_SHAPE, "input %d (bias) has shape %s, expected [N] = [%lld]",
                          i, shape_str(t->rank, t->dims, s, sizeof s), (long long)n);
    }
    return ONYX_OK;
}

static onyx_status mmitf_infer(infer_ctx *c) {
    TRY(cq_infer_quantized(c, 0, ONYX_UNDEFINED, "A"));
    TRY(cq_infer_quantized(c, 1, ONYX_UNDEFINED, "B"));
    TRY(cq_infer_scale(c, 2, "a_scale"));
    if (!cq_has(c, 3))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input 3 (b_scale) is required");
    TRY(infer_dtype_in(c, 3, DT_BIT(ONYX_FLOAT)));
    TRY(b_param(c, 3, "b_scale"));
    TRY(cq_infer_zero_point(c, 4, c->in[0]->dtype, true, "a_zero_point"));
    if (cq_has(c, 5)) {
        TRY(cq_infer_quantized(c, 5, c->in[1]->dtype, "b_zero_point"));
        TRY(b_param(c, 5, "b_zero_point"));
    }
    TRY(bias_check(c, 6));
    return cq_infer_matmul(c, 0, 1, ONYX_FLOAT);
}

static onyx_status dqmm_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_FLOAT)));
    TRY(cq_infer_quantized(c, 1, ONYX_UNDEFINED, "B"));
    TRY(infer_dtype_in(c, 2, DT_BIT(ONYX_FLOAT)));
    TRY(b_param(c, 2, "b_scale"));
    if (cq_has(c, 3)) {
        TRY(cq_infer_quantized(c, 3, c->in[1]->dtype, "b_zero_point"));
        TRY(b_param(c, 3, "b_zero_point"));
    }
    TRY(bias_check(c, 4));
    return cq_infer_matmul(c, 0, 1, ONYX_FLOAT);
}

const op_schema op_MatMulIntegerToFloat[] = {
    {"com.microsoft", "MatMulIntegerToFloat", 1, 4, 7, 1, 1, NULL, mmitf_infer, OP_GEOMETRY},
    OP_END,
};

const op_schema op_DynamicQuantizeMatMul[] = {
    {"com.microsoft", "DynamicQuantizeMatMul", 1, 3, 5, 1, 1, NULL, dqmm_infer, OP_GEOMETRY},
    OP_END,
};
