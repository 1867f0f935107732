/* Per-tensor scale and zero-point checks of the com.microsoft quantized ops, done the way
 * onnxruntime's kernels check them (a scalar or a vector of one element). */
#include "ops/contrib_quant/cq_infer.h"

#include "geometry/matmul.h"

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
    int r;
    int64_t dims[ONYX_MAX_RANK];
    geom_msg m;
    if (geom_matmul_dims(a->rank, a->dims, b->rank, b->dims, &r, dims, &m) != ONYX_OK)
        return onyx_error(ONYX_ERR_SHAPE, "inputs %d and %d: %s", ia, ib, m.text);
    type_set_tensor(&c->out[0], t, r, dims);
    return infer_set_matmul(c, a->rank, a->dims, b->rank, b->dims);
}
