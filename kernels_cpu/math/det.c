/* CPU kernel of Det: LU factorization with partial pivoting of each matrix, in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/floatconv.h"
#include "kernels_cpu/cpu_kernels.h"

typedef struct det_state {
    int64_t m;       /* matrix order the scratch was sized for; -1 when unknown at prepare */
    double *scratch; /* m*m doubles */
} det_state;

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

onyx_status cpu_det_prepare(const kernel_prep *p, void **state) {
    det_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("Det state");
    s->m = -1;
    const type_info *t = p->in_type[0];
    if (t && t->rank >= 2 && t->dims[t->rank - 1] > 0 && t->dims[t->rank - 1] < 65536) {
        int64_t m = t->dims[t->rank - 1];
        s->scratch = malloc((size_t)(m * m) * sizeof(double));
        if (!s->scratch) {
            free(s);
            return onyx_oom("Det scratch");
        }
        s->m = m;
    }
    *state = s;
    return ONYX_OK;
}

void cpu_det_release(void *state) {
    det_state *s = state;
    if (!s) return;
    free(s->scratch);
    free(s);
}

onyx_status cpu_det_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    det_state *s = c->state;
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return onyx_error(ONYX_ERR_SHAPE, "input is not a stack of square matrices");
    int64_t m = x->dims[x->rank - 1];
    /* shapes unknown at prepare (or changed since) get scratch sized here */
    double *a = s && s->m == m ? s->scratch : NULL, *own = NULL;
    if (!a && m > 0) {
        size_t bytes;
        if ((uint64_t)m > SIZE_MAX / sizeof(double) / (uint64_t)m)
            return onyx_error(ONYX_ERR_NO_MEMORY, "matrix order %lld is too large", (long long)m);
        bytes = (size_t)m * (size_t)m * sizeof(double);
        a = own = malloc(bytes);
        if (!a) return onyx_oom("Det scratch");
    }
    for (int64_t b = 0; b < y->numel; b++) {
        for (int64_t i = 0; i < m * m; i++) a[i] = load(x, b * m * m + i);
        store(y, b, m == 0 ? 1.0 : lu_det(a, m));
    }
    free(own);
    return ONYX_OK;
}
