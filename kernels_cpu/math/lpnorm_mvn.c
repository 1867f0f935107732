/* CPU kernels of LpNormalization and MeanVarianceNormalization. Both are rare in models, so they
 * favour simplicity: every type goes through double, element access switches on the dtype. */
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "kernels_cpu/cpu_kernels.h"

static inline double ld(onyx_dtype d, const void *p, int64_t i) {
    switch (d) {
    case ONYX_FLOAT: return ((const float *)p)[i];
    case ONYX_DOUBLE: return ((const double *)p)[i];
    case ONYX_FLOAT16: return fp16_to_float(((const uint16_t *)p)[i]);
    default: return bf16_to_float(((const uint16_t *)p)[i]);
    }
}

static inline void st(onyx_dtype d, void *p, int64_t i, double v) {
    switch (d) {
    case ONYX_FLOAT: ((float *)p)[i] = (float)v; break;
    case ONYX_DOUBLE: ((double *)p)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)p)[i] = float_to_fp16((float)v); break;
    default: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
    }
}

static onyx_status need_float(const tensor *x) {
    if (!dtype_is_float(x->dtype))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    return ONYX_OK;
}

onyx_status cpu_lpnormalization(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    TRY(need_float(x));
    int64_t p = attr_int(c->node, "p", 2);
    int axis;
    TRY(kernel_axis(c->params, x->rank, &axis));
    if (p != 1 && p != 2)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute p is %lld, expected 1 or 2",
                          (long long)p);
    int64_t outer = 1, n = x->dims[axis], inner = 1;
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            int64_t base = o * n * inner + j;
            double s = 0;
            for (int64_t r = 0; r < n; r++) {
                double v = ld(x->dtype, x->data, base + r * inner);
                s += p == 1 ? fabs(v) : v * v;
            }
            double norm = p == 1 ? s : sqrt(s);
            /* a zero norm gives zeros rather than 0/0 */
            for (int64_t r = 0; r < n; r++) {
                int64_t i = base + r * inner;
                st(y->dtype, y->data, i, norm == 0 ? 0.0 : ld(x->dtype, x->data, i) / norm);
            }
        }
    return ONYX_OK;
}

onyx_status cpu_meanvariancenormalization(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    TRY(need_float(x));
    const geom_axis_set *axes;
    TRY(kernel_axes(c->params, x->rank, &axes));
    const bool *red = axes->mask;
    /* group index of an element = its position over the kept dims (row-major) */
    int64_t gstride[ONYX_MAX_RANK], groups = 1, count = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        gstride[i] = red[i] ? 0 : groups;
        if (red[i]) count *= x->dims[i];
        else groups *= x->dims[i];
    }
    if (x->numel == 0) return ONYX_OK;
    /* per-group statistics in the run's scratch */
    if ((uint64_t)groups > SIZE_MAX / (2 * sizeof(double)))
        return onyx_oom("MeanVarianceNormalization statistics");
    void *mem;
    TRY(kernel_scratch(c, (size_t)groups * 2 * sizeof(double), &mem));
    double *mean = mem;
    memset(mean, 0, (size_t)groups * 2 * sizeof *mean);
    double *var = mean + groups;
    for (int pass = 0; pass < 3; pass++) {
        int64_t idx[ONYX_MAX_RANK] = {0}, g = 0;
        for (int64_t i = 0; i < x->numel; i++) {
            double v = ld(x->dtype, x->data, i);
            if (pass == 0) mean[g] += v;
            else if (pass == 1) var[g] += (v - mean[g]) * (v - mean[g]);
            else st(y->dtype, y->data, i, (v - mean[g]) / (sqrt(var[g]) + 1e-9));
            for (int d = x->rank - 1; d >= 0; d--) {
                g += gstride[d];
                if (++idx[d] < x->dims[d]) break;
                g -= gstride[d] * x->dims[d];
                idx[d] = 0;
            }
        }
        for (int64_t k = 0; k < groups; k++) {
            if (pass == 0) mean[k] /= (double)count;
            else if (pass == 1) var[k] /= (double)count;
        }
    }
    return ONYX_OK;
}
