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
#include "kernels_cpu/common/cpu_types.h"
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

/* Element k of a row at x whose elements are `inner` apart, widened. */
static inline int32_t qsm_at(const uint8_t *x, int64_t k, int64_t inner, bool s8) {
    return s8 ? (int32_t)(int8_t)x[k * inner] : (int32_t)x[k * inner];
}

/* One output from its exp e, the row's sum and y's parameters, as onnxruntime rounds it:
 * round(e * floor(1 / y_scale) / sum) + y_zero_point. A quotient under 2^-26 rounds to 0 whatever
 * it is, so its dividend goes to 0 first (p < tiny): quotients in float's subnormal range cost
 * the CPU a microcode assist each, which made the whole kernel 3x slower at input scales near
 * 0.5. */
static inline uint8_t qsm_out(float e, float yscale, float tiny, float sum, int32_t zp, int32_t lo,
                              int32_t hi) {
    float p = e * yscale;
    float f = (p >= tiny ? p : 0.0f) / sum;
    f = f < 1e6f ? f : 1e6f; /* NaN and overflow go to the clamp's ends below */
    int32_t q = (int32_t)q8_round(f > 0 ? f : 0) + zp;
    return (uint8_t)(q < lo ? lo : q > hi ? hi : q);
}

/* Outputs of a contiguous row's QSM_BLOCK elements from x to y, in one vector loop of a fixed
 * length. */
#define QSM_BLOCK 32
static inline __attribute__((always_inline)) void
qsm_block(const uint8_t *restrict x, uint8_t *restrict y, const float *ex, float yscale, float tiny,
          float sum, int32_t zp, int32_t lo, int32_t hi, bool s8) {
    CPU_SIMD for (int k = 0; k < QSM_BLOCK; k++)
        y[k] = qsm_out(ex[qsm_at(x, k, 1, s8)], yscale, tiny, sum, zp, lo, hi);
}

/* Rows [b, e) of outer * inner rows, each d elements `inner` apart: the row's maximum, its exps
 * summed in row order as onnxruntime does, then each output; contiguous rows (inner 1) in vector
 * loops. s8 is a constant in each caller below, so that each gets its own loops. */
static inline __attribute__((always_inline)) void qsm_rows_of(const qsm_job *j, int64_t b,
                                                             int64_t e, bool s8) {
    const int64_t d = j->d, inner = j->inner;
    const float yscale = j->yscale;
    const int32_t zp = j->zp, lo = j->lo, hi = j->hi;
    for (int64_t r = b; r < e; r++) {
        int64_t base = (r / inner) * d * inner + r % inner;
        const uint8_t *restrict x = j->x + base;
        uint8_t *restrict y = j->y + base;
        int32_t mx = INT32_MIN;
        if (inner == 1) {
            CPU_PRAGMA(omp simd reduction(max : mx))
            for (int64_t k = 0; k < d; k++) {
                int32_t v = qsm_at(x, k, 1, s8);
                mx = v > mx ? v : mx;
            }
        } else {
            for (int64_t k = 0; k < d; k++) {
                int32_t v = qsm_at(x, k, inner, s8);
                mx = v > mx ? v : mx;
            }
        }
        const float *ex = j->exps + 255 - mx;
        float sum = 0;
        for (int64_t k = 0; k < d; k++) sum += ex[qsm_at(x, k, inner, s8)];
        const float tiny = sum * 0x1p-26f;
        if (inner == 1) {
            /* blocks of QSM_BLOCK, the last one overlapping the one before (an output computed
             * twice is the same byte): a vector loop of variable length left rows of 49
             * (attention windows) with a scalar tail of 17, whose clamps branch on the data */
            if (d >= QSM_BLOCK) {
                for (int64_t k0 = 0;; k0 += QSM_BLOCK) {
                    if (k0 + QSM_BLOCK > d) k0 = d - QSM_BLOCK;
                    qsm_block(x + k0, y + k0, ex, yscale, tiny, sum, zp, lo, hi, s8);
                    if (k0 + QSM_BLOCK == d) break;
                }
            } else {
                uint8_t xb[QSM_BLOCK], yb[QSM_BLOCK];
                for (int64_t k = 0; k < QSM_BLOCK; k++) xb[k] = x[k < d ? k : 0];
                qsm_block(xb, yb, ex, yscale, tiny, sum, zp, lo, hi, s8);
                for (int64_t k = 0; k < d; k++) y[k] = yb[k];
            }
        } else {
            for (int64_t k = 0; k < d; k++)
                y[k * inner] = qsm_out(ex[qsm_at(x, k, inner, s8)], yscale, tiny, sum, zp, lo, hi);
        }
    }
}

CPU_CLONES static void qsm_rows_u8(void *ctx, int64_t b, int64_t e) {
    qsm_rows_of(ctx, b, e, false);
}

CPU_CLONES static void qsm_rows_s8(void *ctx, int64_t b, int64_t e) {
    qsm_rows_of(ctx, b, e, true);
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
    parallel_for(outer * inner, 4096 / (d + 1) + 1, t == ONYX_INT8 ? qsm_rows_s8 : qsm_rows_u8, j);
    return ONYX_OK;
}
