/* Schema of com.microsoft QGemm: Gemm of 2-D 8-bit tensors plus an optional int32 C, requantized
 * to y_scale / y_zero_point, or float when y_zero_point is absent (b's parameters per column). */
#include "ops/contrib_quant/cq_infer.h"

/* b_scale / b_zero_point: one value, or N (per column), as a scalar or a vector. */
static onyx_status per_column(infer_ctx *c, int i, const char *name, int64_t n) {
    const type_info *t = c->in[i];
    if (t->rank < 0) return ONYX_OK;
    if (t->rank == 0) return ONYX_OK;
    if (t->rank == 1 && (t->dims[0] < 0 || t->dims[0] == 1 || n < 0 || t->dims[0] == n))
        return ONYX_OK;
    char buf[160];
    return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has shape %s, expected a scalar or a "
                      "vector of 1 or N = %lld values", i, name,
                      shape_str(t->rank, t->dims, buf, sizeof buf), (long long)n);
}

static onyx_status qgemm_infer(infer_ctx *c) {
    TRY(cq_infer_quantized(c, 0, ONYX_UNDEFINED, "A"));
    TRY(cq_infer_scale(c, 1, "a_scale"));
    TRY(cq_infer_zero_point(c, 2, c->in[0]->dtype, false, "a_zero_point"));
    TRY(cq_infer_quantized(c, 3, ONYX_UNDEFINED, "B"));
    for (int i = 4; i <= 5; i++)
        if (!cq_has(c, i))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d (%s) is required", i,
                              i == 4 ? "b_scale" : "b_zero_point");
    TRY(infer_dtype_in(c, 4, DT_BIT(ONYX_FLOAT)));
    TRY(cq_infer_quantized(c, 5, c->in[3]->dtype, "b_zero_point"));
    if (cq_has(c, 6)) TRY(infer_dtype_in(c, 6, DT_BIT(ONYX_INT32)));
    if (cq_has(c, 7)) TRY(cq_infer_scale(c, 7, "y_scale"));
    onyx_dtype yt = ONYX_FLOAT;
    if (cq_has(c, 8)) {
        TRY(cq_infer_zero_point(c, 8, ONYX_UNDEFINED, false, "y_zero_point"));
        if (!cq_has(c, 7))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "input 8 (y_zero_point) is given without "
                              "input 7 (y_scale)");
        yt = c->in[8]->dtype;
    }
    bool ta = attr_int(c->node, "transA", 0) != 0, tb = attr_int(c->node, "transB", 0) != 0;
    const type_info *a = c->in[0], *b = c->in[3];
    for (int i = 0; i <= 3; i += 3)
        if (c->in[i]->rank >= 0 && c->in[i]->rank != 2)
            return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has rank %d, expected 2", i,
                              i ? "B" : "A", c->in[i]->rank);
    bool a2 = a->rank == 2, b2 = b->rank == 2;
    int64_t m = a2 ? a->dims[ta ? 1 : 0] : -1, ka = a2 ? a->dims[ta ? 0 : 1] : -1;
    int64_t kb = b2 ? b->dims[tb ? 1 : 0] : -1, n = b2 ? b->dims[tb ? 0 : 1] : -1;
    if (ka >= 0 && kb >= 0 && ka != kb)
        return onyx_error(ONYX_ERR_SHAPE, "inner dims differ: %lld (A) and %lld (B)",
                          (long long)ka, (long long)kb);
    TRY(per_column(c, 4, "b_scale", n));
    TRY(per_column(c, 5, "b_zero_point", n));
    const type_info *bs = c->in[4], *bz = c->in[5];
    if (bs->rank >= 0 && bz->rank >= 0 && bs->rank == 1 && bz->rank == 1 && bs->dims[0] >= 0 &&
        bz->dims[0] >= 0 && bs->dims[0] != bz->dims[0])
        return onyx_error(ONYX_ERR_SHAPE, "b_scale has %lld values and b_zero_point %lld",
                          (long long)bs->dims[0], (long long)bz->dims[0]);
    if (cq_has(c, 6) && c->in[6]->rank >= 0) {
        /* C broadcasts to [M, N] as onnxruntime's Gemm reads it: (), (N), (1|M, N), (M, 1) */
        const type_info *ct = c->in[6];
        bool ok = ct->rank <= 2;
        if (ct->rank == 1) ok = ct->dims[0] < 0 || n < 0 || ct->dims[0] == 1 || ct->dims[0] == n;
        if (ct->rank == 2) {
            int64_t c0 = ct->dims[0], c1 = ct->dims[1];
            ok = (c0 < 0 || c0 == 1 || m < 0 || c0 == m) && (c1 < 0 || c1 == 1 || n < 0 || c1 == n);
        }
        if (!ok) {
            char buf[160];
            return onyx_error(ONYX_ERR_SHAPE, "input 6 (C) has shape %s, which does not "
                              "broadcast to [M, N] = [%lld, %lld]",
                              shape_str(ct->rank, ct->dims, buf, sizeof buf), (long long)m,
                              (long long)n);
        }
    }
    int64_t dims[2] = {m, n};
    type_set_tensor(&c->out[0], yt, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"alpha", ATTR_FLOAT}, {"transA", ATTR_INT}, {"transB", ATTR_INT}, {NULL, 0}};

const op_schema op_QGemm[] = {
    {"com.microsoft", "QGemm", 1, 6, 9, 1, 1, attrs, qgemm_infer, 0},
    OP_END,
};
