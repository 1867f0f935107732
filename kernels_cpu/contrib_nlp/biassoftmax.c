/* CPU kernel of com.microsoft.BiasSoftmax: per row (the axes from `axis` on, flattened),
 * softmax(data + bias) with the bias row picked by numpy broadcasting over the leading axes
 * (which covers both is_inner_broadcast forms). float on the vector math, double on libm,
 * float16 through float. */
#include <math.h>

#include "core/parallel.h"
#include "kernels_cpu/common/vmath.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/cpu_kernels.h"

#define GRAIN 16384

typedef struct bsm_job {
    onyx_dtype t;
    const void *x, *bias;
    void *y;
    float *tmp;                                    /* float16: rows * cols floats */
    int64_t cols, lead;                            /* lead: leading (row) axes */
    int64_t xd[ONYX_MAX_RANK], bst[ONYX_MAX_RANK]; /* row axes of data, bias strides in rows */
} bsm_job;

static int64_t bias_row(const bsm_job *j, int64_t r) {
    int64_t o = 0;
    for (int64_t d = j->lead - 1; d >= 0; d--) {
        o += (r % j->xd[d]) * j->bst[d];
        r /= j->xd[d];
    }
    return o;
}

static void bsm_rows(void *ctx, int64_t r0, int64_t r1) {
    const bsm_job *j = ctx;
    const int64_t n = j->cols;
    const cpu_vmath *vm = cpu_vmath_get();
    for (int64_t r = r0; r < r1; r++) {
        int64_t br = bias_row(j, r);
        if (j->t == ONYX_DOUBLE) {
            const double *x = (const double *)j->x + r * n, *b = (const double *)j->bias + br * n;
            double *y = (double *)j->y + r * n, mx = -INFINITY, sum = 0;
            for (int64_t k = 0; k < n; k++) {
                y[k] = x[k] + b[k];
                mx = y[k] > mx ? y[k] : mx;
            }
            for (int64_t k = 0; k < n; k++) sum += y[k] = exp(y[k] - mx);
            for (int64_t k = 0; k < n; k++) y[k] /= sum;
            continue;
        }
        float *y = j->t == ONYX_FLOAT ? (float *)j->y + r * n : j->tmp + r * n;
        if (j->t == ONYX_FLOAT) {
            const float *x = (const float *)j->x + r * n, *b = (const float *)j->bias + br * n;
            CPU_SIMD for (int64_t k = 0; k < n; k++) y[k] = x[k] + b[k];
        } else {
            float bb[256];
            cnlp_load(j->x, j->t, r * n, y, n);
            for (int64_t k0 = 0; k0 < n; k0 += 256) {
                int64_t m = n - k0 < 256 ? n - k0 : 256;
                cnlp_load(j->bias, j->t, br * n + k0, bb, m);
                for (int64_t k = 0; k < m; k++) y[k0 + k] += bb[k];
            }
        }
        cpu_vm_softmax_row(vm, y, y, n);
        if (j->t != ONYX_FLOAT) cnlp_store(j->y, j->t, r * n, y, n);
    }
}

onyx_status cpu_cnlp_bias_softmax(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *b = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    if (b->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "bias has type %s, expected %s",
                          onyx_dtype_name(b->dtype), onyx_dtype_name(x->dtype));
    if (x->rank < 1) return onyx_error(ONYX_ERR_SHAPE, "data is a scalar, expected rank >= 1");
    int axis;
    TRY(kernel_axis(c->params, x->rank, &axis));
    bsm_job j = {
        .t = x->dtype, .x = x->data, .bias = b->data, .y = y->data, .cols = 1, .lead = axis};
    char s1[160], s2[160];
    if (b->rank > x->rank || b->rank < x->rank - axis) goto bad;
    for (int d = axis; d < x->rank; d++) {
        if (b->dims[d - (x->rank - b->rank)] != x->dims[d]) goto bad;
        j.cols *= x->dims[d];
    }
    int64_t st = 1;
    for (int d = axis - 1; d >= 0; d--) {
        int k = d - (x->rank - b->rank);
        int64_t bd = k >= 0 ? b->dims[k] : 1;
        if (bd != 1 && bd != x->dims[d]) goto bad;
        j.xd[d] = x->dims[d];
        j.bst[d] = bd == 1 ? 0 : st;
        st *= bd;
    }
    if (x->numel == 0) return ONYX_OK;
    if (x->dtype != ONYX_FLOAT && x->dtype != ONYX_DOUBLE)
        TRY(kernel_scratch(c, (size_t)x->numel * sizeof(float), (void **)&j.tmp));
    parallel_for(x->numel / j.cols, cnlp_grain(j.cols, GRAIN), bsm_rows, &j);
    return ONYX_OK;
bad:
    return onyx_error(ONYX_ERR_SHAPE, "bias %s does not broadcast over the rows of data %s",
                      shape_str(b->rank, b->dims, s1, sizeof s1),
                      shape_str(x->rank, x->dims, s2, sizeof s2));
}
