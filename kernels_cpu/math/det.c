/* CPU kernel of Det: LU factorization with partial pivoting of each matrix, in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/floatconv.h"
#include "kernels_cpu/cpu_kernels.h"

static double load(const tensor *t, int64_t i) {
    switch (t->dtype) {
    case ONYX_FLOAT: return ((const float *)t->data)[i];
    case ONYX_DOUBLE: return ((const double *)t->data)[i];
    case ONYX_FLOAT16: return fp16_to_float(((const uint16_t *)t->data)[i]);
    default: return bf16_to_float(((const uint16_t *)t->data)[i]);
    }
}

static void store(tensor *t, int64_t i, double v) {
    switch (t->dtype) {
    case ONYX_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case ONYX_DOUBLE: ((double *)t->data)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)t->data)[i] = floatconv_double_to_fp16(v); break;
    default: ((uint16_t *)t->data)[i] = floatconv_double_to_bf16(v); break;
    }
}

/* Determinant of the m*m row-major matrix a (destroyed). */
static double lu_det(double *a, int64_t m) {
    double det = 1.0;
    for (int64_t k = 0; k < m; k++) {
        int64_t piv = k;
        double best = fabs(a[k * m + k]);
        for (int64_t i = k + 1; i < m; i++)
            if (fabs(a[i * m + k]) > best) {
                best = fabs(a[i * m + k]);
                piv = i;
            }
        if (best == 0.0) return 0.0;
        if (piv != k) {
            for (int64_t j = 0; j < m; j++) {
                double t = a[k * m + j];
                a[k * m + j] = a[piv * m + j];
                a[piv * m + j] = t;
            }
            det = -det;
        }
        double d = a[k * m + k];
        det *= d;
        for (int64_t i = k + 1; i < m; i++) {
            double f = a[i * m + k] / d;
            for (int64_t j = k + 1; j < m; j++) a[i * m + j] -= f * a[k * m + j];
        }
    }
    return det;
}

onyx_status cpu_det_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return onyx_error(ONYX_ERR_SHAPE, "input is not a stack of square matrices");
    int64_t m = x->dims[x->rank - 1];
    /* the LU factorization works in the run's scratch, never shared between runs */
    if ((uint64_t)m > SIZE_MAX / sizeof(double) / ((uint64_t)m + 1))
        return onyx_error(ONYX_ERR_NO_MEMORY, "matrix order %lld is too large", (long long)m);
    void *mem;
    TRY(kernel_scratch(c, (size_t)m * (size_t)m * sizeof(double) + 1, &mem));
    double *a = mem;
    for (int64_t b = 0; b < y->numel; b++) {
        for (int64_t i = 0; i < m * m; i++) a[i] = load(x, b * m * m + i);
        store(y, b, m == 0 ? 1.0 : lu_det(a, m));
    }
    return ONYX_OK;
}
