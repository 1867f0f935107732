/* Per-tensor scale and zero-point checks of the com.microsoft quantized ops, done the way
 * onnxruntime's kernels check them (a scalar or a vector of one element). */
#include "ops/contrib_quant/cq_infer.h"

/* A shape known to hold one element as onnxruntime accepts it: rank 0, or rank 1 of size 1. */
static onyx_status one_element(const type_info *t, int i, const char *name) {
    if (t->rank < 0) return ONYX_OK;
    if (t->rank == 0 || (t->rank == 1 && (t->dims[0] == 1 || t->dims[0] < 0))) return ONYX_OK;
    char buf[160];
    return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has shape %s, expected a scalar or a "
                      "1-element vector (per-tensor quantization)",
                      i, name, shape_str(t->rank, t->dims, buf, sizeof buf));
}

onyx_status cq_infer_scale(infer_ctx *c, int i, const char *name) {
    if (!cq_has(c, i))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d (%s) is required", i, name);
    TRY(infer_need_tensor(c, i));
    onyx_dtype d = c->in[i]->dtype;
    if (d != ONYX_UNDEFINED && d != ONYX_FLOAT)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has type %s, expected float", i, name,
                          onyx_dtype_name(d));
    return one_element(c->in[i], i, name);
}

onyx_status cq_infer_quantized(infer_ctx *c, int i, onyx_dtype t, const char *name) {
    if (!cq_has(c, i))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d (%s) is required", i, name);
    TRY(infer_need_tensor(c, i));
    onyx_dtype d = c->in[i]->dtype;
    if (d == ONYX_UNDEFINED) return ONYX_OK;
    if (!dtype_in(d, CQ_T8))
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has type %s, expected int8 or uint8", i,
                          name, onyx_dtype_name(d));
    if (t != ONYX_UNDEFINED && d != t)
        return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has type %s, expected %s", i, name,
                          onyx_dtype_name(d), onyx_dtype_name(t));
    return ONYX_OK;
}

onyx_status cq_infer_zero_point(infer_ctx *c, int i, onyx_dtype t, bool optional,
                                const char *name) {
    if (!cq_has(c, i)) {
        if (optional) return ONYX_OK;
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d (%s) is required", i, name);
    }
    TRY(cq_infer_quantized(c, i, t, name));
    return one_element(c->in[i], i, name);
}

onyx_status cq_infer_matmul(infer_ctx *c, int ia, int ib, onyx_dtype t) {
    const type_info *a = c->in[ia], *b = c->in[ib];
    if (a->rank < 0 || b->rank < 0) {
        type_set_tensor(&c->out[0], t, -1, NULL);
        return ONYX_OK;
    }
    if (a->rank == 0 || b->rank == 0)
        return onyx_error(ONYX_ERR_SHAPE, "input %d is a scalar, expected rank >= 1",
                          a->rank == 0 ? ia : ib);
    int64_t ka = a->dims[a->rank - 1], kb = b->dims[b->rank == 1 ? 0 : b->rank - 2];
    if (ka >= 0 && kb >= 0 && ka != kb)
        return onyx_error(ONYX_ERR_SHAPE, "inner dims %lld (input %d) and %lld (input %d) differ",
                          (long long)ka, ia, (long long)kb, ib);
    int ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
    int nb = ba > bb ? ba : bb;
    int64_t dims[ONYX_MAX_RANK];
    for (int i = 0; i < nb; i++) {
        int xa = i - (nb - ba), xb = i - (nb - bb);
        int64_t da = xa >= 0 ? a->dims[xa] : 1, db = xb >= 0 ? b->dims[xb] : 1;
        if (da >= 0 && db >= 0 && da != db && da != 1 && db != 1)
            return onyx_error(ONYX_ERR_SHAPE, "batch dim %d: %lld and %lld do not broadcast", i,
                              (long long)da, (long long)db);
        dims[i] = da == 1 ? db : db == 1 ? da : da < 0 ? db : da;
    }
    int r = nb;
    if (a->rank > 1) dims[r++] = a->dims[a->rank - 2];
    if (b->rank > 1) dims[r++] = b->dims[b->rank - 1];
    type_set_tensor(&c->out[0], t, r, dims);
    return ONYX_OK;
}
