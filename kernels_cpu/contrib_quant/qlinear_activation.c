/* CPU kernels of com.microsoft QLinearSigmoid, QLinearLeakyRelu and QLinearSoftmax, and of onyx's
 * own LookupTable (a QDQ unit of one 8-bit tensor, its table computed at prepare).
 *
 * The activations go through a 256-entry table built as onnxruntime builds it (dequantize in
 * float, apply, quantize). Softmax follows onnxruntime's scheme rather than the exact function,
 * since its tables decide the roundings: scaled exps indexed by x - max(x), a float sum, and
 * round(exp * floor(1 / y_scale) / sum) + y_zero_point. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/contrib_quant/cq_kernel.h"

static void sigmoid_fn(float *v, int n, const void *ctx) {
    (void)ctx;
    for (int i = 0; i < n; i++) v[i] = (float)(1.0 / (1.0 + exp(-(double)v[i])));
}

static void leaky_fn(float *v, int n, const void *ctx) {
    float alpha = *(const float *)ctx;
    for (int i = 0; i < n; i++) v[i] = v[i] >= 0.0f ? v[i] : alpha * v[i];
}

static onyx_status lut_run(const kernel_call *c, cq_lut_fn fn, const void *ctx) {
    TRY(cq_need_q8(c, 0, ONYX_UNDEFINED, "X"));
    const tensor *x = kernel_input(c, 0);
    cq_param px, py;
    TRY(cq_param_get(c, 1, 2, x->dtype, "X", &px));
    TRY(cq_param_get(c, 3, 4, x->dtype, "Y", &py));
    uint8_t lut[256];
    cq_lut_build(lut, x->dtype, px, py, fn, ctx);
    cq_lut_apply(lut, x->data, kernel_output(c, 0)->data, x->numel);
    return ONYX_OK;
}

onyx_status cpu_qlinearsigmoid_run(const kernel_call *c) { return lut_run(c, sigmoid_fn, NULL); }

onyx_status cpu_qlinearleakyrelu_run(const kernel_call *c) {
    float alpha = attr_float(c->node, "alpha", 0.01f);
    return lut_run(c, leaky_fn, &alpha);
}

/* The table is a constant folded at prepare (core/rules/qdq_table.c): 256 bytes read as they are. */
onyx_status cpu_lookuptable_run(const kernel_call *c) {
    TRY(cq_need_q8(c, 0, ONYX_UNDEFINED, "X"));
    TRY(cq_need_q8(c, 1, ONYX_UNDEFINED, "T"));
    const tensor *x = kernel_input(c, 0), *t = kernel_input(c, 1);
    if (t->numel != 256)
        return onyx_error(ONYX_ERR_SHAPE, "input 1 (T) has %lld elements, expected 256",
                          (long long)t->numel);
    cq_lut_apply(t->data, x->data, kernel_output(c, 0)->data, x->numel);
    return ONYX_OK;
}

/* ---- QLinearSoftmax */

typedef struct qsm_job {
    onyx_dtype t;
    const uint8_t *x;
    uint8_t *y;
    int64_t d, inner;   /* the reduced length and the stride between its elements */
    float exps[256];    /* exps[255 + (x - max)] */
    float yscale;       /* floor(1 / y_scale) */
    int32_t zp, lo, hi;
} qsm_job;

/* Rows [b, e) of outer * inner rows, each d elements `inner` apart. */
static void qsm_rows(void *ctx, int64_t b, int64_t e) {
    const qsm_job *j = ctx;
    const int64_t d = j->d, inner = j->inner;
    for (int64_t r = b; r < e; r++) {
        int64_t base = (r / inner) * d * inner + r % inner;
        int32_t mx = INT32_MIN;
        for (int64_t k = 0; k < d; k++) {
            int32_t v = cq_get(j->t, j->x, base + k * inner);
            if (v > mx) mx = v;
        }
        /* the row's exps, summed in row order as onnxruntime does */
        const float *ex = j->exps + 255 - mx;
        float sum = 0;
        for (int64_t k = 0; k < d; k++) sum += ex[cq_get(j->t, j->x, base + k * inner)];
        for (int64_t k = 0; k < d; k++) {
            float v = ex[cq_get(j->t, j->x, base + k * inner)] * j->yscale / sum;
            v = v < 1e6f ? v : 1e6f; /* NaN and overflow go to the clamp's ends below */
            int32_t q = (int32_t)q8_round(v > 0 ? v : 0) + j->zp;
            q = q < j->lo ? j->lo : q > j->hi ? j->hi : q;
            j->y[base + k * inner] = (uint8_t)q;
        }
    }
}

onyx_status cpu_qlinearsoftmax_run(const kernel_call *c) {
    TRY(cq_need_q8(c, 0, ONYX_UNDEFINED, "X"));
    const tensor *x = kernel_input(c, 0);
    onyx_dtype t = x->dtype;
    cq_param px, py;
    TRY(cq_param_get(c, 1, 2, t, "X", &px));
    TRY(cq_param_get(c, 3, 4, t, "Y", &py));
    if (x->rank == 0) return onyx_error(ONYX_ERR_SHAPE, "input 0 (X) is a scalar");
    int64_t opset = attr_int(c->node, "opset", 13);
    int64_t axis = attr_int(c->node, "axis", opset < 13 ? 1 : -1);
    if (axis < -x->rank || axis >= x->rank)
        return onyx_error(ONYX_ERR_SHAPE, "axis %lld is out of range for rank %d",
                          (long long)axis, x->rank);
    int ax = (int)(axis < 0 ? axis + x->rank : axis);
    int64_t outer = 1, d = 1, inner = 1;
    for (int k = 0; k < ax; k++) outer *= x->dims[k];
    if (opset < 13) {
        for (int k = ax; k < x->rank; k++) d *= x->dims[k];
    } else {
        d = x->dims[ax];
        for (int k = ax + 1; k < x->rank; k++) inner *= x->dims[k];
    }
    if (x->numel == 0) return ONYX_OK;
    static qsm_job zero;
    qsm_job *j;
    TRY(kernel_scratch(c, sizeof *j, (void **)&j));
    *j = zero;
    j->t = t;
    j->x = x->data;
    j->y = kernel_output(c, 0)->data;
    j->d = d;
    j->inner = inner;
    j->zp = py.zp;
    j->lo = cq_lo(t);
    j->hi = cq_hi(t);
    j->yscale = floorf(1.0f / py.scale);
    /* exp((i - 255 + shift) * x_scale), the shift (in input steps) keeping a row's sum of up to
     * d terms below float's range with 5 nats to spare, as onnxruntime's table */
    double shift = log((double)(FLT_MAX / (float)d)) - 5.0;
    shift = (shift > 0 ? shift : 0) / (double)px.scale;
    for (int i = 0; i < 256; i++)
        j->exps[i] = (float)exp(((double)i - 255 + shift) * (double)px.scale);
    parallel_for(outer * inner, 4096 / (d + 1) + 1, qsm_rows, j);
    return ONYX_OK;
}
